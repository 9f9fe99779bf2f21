"""The two ways obook compiles with numba.

``hot`` is for code in the inner loops (rules, playouts, search): cached, and compiled without
numba's reference counting. Numba counts references with atomic operations on every array that
crosses a non-inlined call, which costs tens of nanoseconds per call with a board of many arrays;
hot code never allocates, so it does not need the counts. Anything that allocates uses ``cold``.

``inline="always"`` on either asks LLVM to inline the function into its callers (numba's
``forceinline``), not numba's own IR-level inlining: that one types the callee's code again at every
call site, recursively through the callee's own inlined calls, and with the heavy policy inlined into
each specialisation of the playout loop it made the engine take ten minutes of CPU to compile (one
minute with LLVM's inlining, for the same speed: docs/benchmarks.md). Every function is compiled
once per signature and LLVM inlines the machine-level code where it is asked to.

Even without the counts a non-inlined call is dear when its arguments are tuples of arrays: numba
passes every array as seven words (a board is 16 arrays, 112 words; the ladder reader's scratch 147),
about 100 ns a call. A function called per child, per tree level or per playout move is therefore
inlined; a function called once per expansion, playout or search may stay a call
(docs/benchmarks.md, "Calls that pass a board").

Where compiled code is cached: under a folder named after a digest of the engine's sources, found by
``ContentCacheLocator`` at the module's place inside the package, so that any copy of the same
sources (another clone, a virtualenv, a Docker layer) loads what another compiled.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

import numba
from numba import njit
from numba.core import caching
from numba.core.caching import _CacheLocator


def _source_digest() -> str:
    """A digest of every source file of the package.

    Numba keys a cached function by its own file only, so after an edit to ``board.py`` the cached
    ``policies.playout`` would keep running the old rules. Caching under a directory named after
    the whole package's source makes any change start a fresh cache. (Data files are passed to
    the compiled code as arguments, never baked into it as constants, so they need not count.)"""
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


def cache_folder() -> Path:
    """The digest-named folder numba caches obook's compiled code in."""
    return Path(numba.config.CACHE_DIR)

_PACKAGE_ROOT = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=None)
def _file_digest(path: str, mtime: float, size: int) -> str:
    with open(path, "rb") as source:
        return hashlib.sha256(source.read()).hexdigest()


class ContentCacheLocator(_CacheLocator):
    """Where numba caches the compiled code of obook's functions: under the digest-named folder,
    at the module's path inside the package (``obook/playout``), with the file's content as its
    freshness stamp. Numba's own locators name the folder after the source file's absolute path
    (and older numba stamps it with the file's modification time), so a second clone, a different
    virtualenv or a Docker layer would compile everything again; with this locator any copy of the
    same sources finds the code compiled by another."""

    def __init__(self, py_func, py_file: Path):
        self._py_file = str(py_file)
        self._lineno = py_func.__code__.co_firstlineno
        relative = py_file.parent.relative_to(_PACKAGE_ROOT.parent)
        self._cache_path = os.path.join(numba.config.CACHE_DIR, *relative.parts)

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        st = os.stat(self._py_file)
        return _file_digest(self._py_file, st.st_mtime, st.st_size)

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        try:
            path = Path(py_file).resolve()
            path.relative_to(_PACKAGE_ROOT)
        except (OSError, ValueError):
            return None  # not obook's: numba's own locators decide
        if not path.is_file():
            return None
        locator = cls(py_func, path)
        try:
            locator.ensure_cache_path()
        except OSError:
            return None
        return locator


def _install_locator() -> None:
    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl")
    if ContentCacheLocator not in impl._locator_classes:
        impl._locator_classes.insert(0, ContentCacheLocator)


_install_locator()


def _llvm_inlining(options: dict) -> dict:
    """``inline="always"`` as LLVM's inlining (see the module docstring). ``forceinline`` is always
    given, as numba otherwise lets a function inherit it from the caller that first compiled it."""
    options = dict(options)
    if options.get("inline") == "always":
        del options["inline"]
        options["forceinline"] = True
    options.setdefault("forceinline", False)
    return options


def hot(fn=None, **options):
    """``@hot`` or ``@hot(inline="always")``: cached, no reference counting, must not allocate.

    Division follows IEEE (numpy's error model): numba's default checks every ``/``, ``//`` and
    ``%`` for a zero divisor so as to raise ZeroDivisionError, and that branch in a loop stops LLVM
    from vectorising it (the selection's loop over a node's children runs twice as fast without it:
    docs/benchmarks.md). Hot code guards its own divisors; a zero gives inf or nan, not an error."""
    decorator = njit(cache=True, _nrt=False, error_model="numpy", **_llvm_inlining(options))
    return decorator(fn) if fn is not None else decorator


def cold(fn=None, **options):
    """``@cold``: cached, ordinary numba (may allocate arrays)."""
    decorator = njit(cache=True, **_llvm_inlining(options))
    return decorator(fn) if fn is not None else decorator
