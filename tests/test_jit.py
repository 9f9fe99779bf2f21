"""The numba cache of ``obook/jit.py``: keyed by the sources' content, not by where they are or when
they were written, and never serving code compiled from other sources."""

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import obook
from obook.jit import cold, hot

PACKAGE = Path(obook.__file__).resolve().parent

# Load (or compile) one jitted function and report numba's own account of it.
PROBE = (
    "import json, numpy as np; from obook.rng import seed_rng; "
    "seed_rng(np.zeros(1, np.uint64), np.uint64(5)); s = seed_rng.stats; "
    "print(json.dumps({'hits': sum(s.cache_hits.values()), 'misses': sum(s.cache_misses.values()), "
    "'path': s.cache_path}))"
)


def copy_package(where: Path, mtime: float) -> Path:
    shutil.copytree(PACKAGE, where / "obook", ignore=shutil.ignore_patterns("__pycache__"))
    for path in (where / "obook").rglob("*"):
        os.utime(path, (mtime, mtime))
    return where


def probe(checkout: Path, cache: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(checkout), OBOOK_NUMBA_CACHE=str(cache))
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=checkout, env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_copy_of_the_sources_elsewhere_loads_what_another_compiled(tmp_path):
    cache = tmp_path / "cache"
    first = probe(copy_package(tmp_path / "first", 1_600_000_000), cache)
    assert (first["hits"], first["misses"]) == (0, 1)
    # Another clone: another path, other modification times, the same content.
    second = probe(copy_package(tmp_path / "second", 1_700_000_000), cache)
    assert (second["hits"], second["misses"]) == (1, 0)
    assert second["path"] == first["path"]


def test_edited_engine_sources_do_not_load_code_compiled_from_the_old_ones(tmp_path):
    cache = tmp_path / "cache"
    probe(copy_package(tmp_path / "first", 1_600_000_000), cache)
    edited = copy_package(tmp_path / "second", 1_600_000_000)
    board = edited / "obook" / "go" / "board.py"
    board.write_text(board.read_text() + "\n# an edit\n")
    os.utime(board, (1_600_000_000, 1_600_000_000))
    again = probe(edited, cache)
    assert (again["hits"], again["misses"]) == (0, 1)


def _hot_ratio(a, b):
    return a / b


def _cold_ratio(a, b):
    return a / b


def test_hot_code_divides_by_zero_as_ieee_does_instead_of_raising():
    assert hot(_hot_ratio)(1.0, 0.0) == math.inf
    assert math.isnan(hot(_hot_ratio)(0.0, 0.0))
    with pytest.raises(ZeroDivisionError):
        cold(_cold_ratio)(1.0, 0.0)  # code that may allocate keeps Python's semantics
