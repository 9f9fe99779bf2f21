import os
import shutil
from pathlib import Path

import pytest

GNUGO = os.environ.get("OBOOK_GNUGO", "/usr/games/gnugo")
SHARED = Path(__file__).resolve().parents[1].parent / "shared"


@pytest.fixture(scope="session")
def gnugo_path():
    if not (Path(GNUGO).exists() or shutil.which(GNUGO)):
        pytest.skip("GNU Go 3.8 is not installed (apt-get install gnugo)")
    return GNUGO


@pytest.fixture(scope="session")
def shared_dir():
    if not SHARED.is_dir():
        pytest.skip("../shared is absent")
    return SHARED
