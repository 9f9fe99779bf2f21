"""The two ways obook compiles with numba.

``hot`` is for code in the inner loops (rules, playouts, search): cached, and compiled without
numba's reference counting. Numba counts references with atomic operations on every array that
crosses a non-inlined call, which costs tens of nanoseconds per call with a board of many arrays;
hot code never allocates, so it does not need the counts. Anything that allocates uses ``cold``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba
from numba import njit


def _source_digest() -> str:
    """A digest of every source file of the package.

    Numba keys a cached function by its own file only, so after an edit to ``board.py`` the cached
    ``policies.playout`` would keep running the old rules. Caching under a directory named after
    the whole package's source makes any change start a fresh cache."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        text = path.read_bytes()
        if _holds_compiled_code(path, text):
            digest.update(str(path.relative_to(root)).encode())
            digest.update(text)
    return digest.hexdigest()[:16]


def _holds_compiled_code(path: Path, text: bytes) -> bool:
    """Modules with jitted functions, and the Zobrist tables they bake in; editing a front end
    (GTP, CLI, the book) must not throw away minutes of compiled engine."""
    return (path.name == "zobrist.py" or b"obook.jit import" in text or b"from numba" in text
            or b"import numba" in text)


def _cache_dir() -> Path:
    base = os.environ.get("OBOOK_NUMBA_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "obook", "numba"
    )
    return Path(base) / _source_digest()


numba.config.CACHE_DIR = str(_cache_dir())


def hot(fn=None, **options):
    """``@hot`` or ``@hot(inline="always")``: cached, no reference counting, must not allocate."""
    decorator = njit(cache=True, _nrt=False, **options)
    return decorator(fn) if fn is not None else decorator


def cold(fn=None, **options):
    """``@cold``: cached, ordinary numba (may allocate arrays)."""
    decorator = njit(cache=True, **options)
    return decorator(fn) if fn is not None else decorator
