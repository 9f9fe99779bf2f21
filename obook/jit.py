"""The two ways obook compiles with numba.

``hot`` is for code in the inner loops (rules, playouts, search): cached, and compiled without
numba's reference counting. Numba counts references with atomic operations on every array that
crosses a non-inlined call, which costs tens of nanoseconds per call with a board of many arrays;
hot code never allocates, so it does not need the counts. Anything that allocates uses ``cold``.
"""

from __future__ import annotations

from numba import njit


def hot(fn=None, **options):
    """``@hot`` or ``@hot(inline="always")``: cached, no reference counting, must not allocate."""
    decorator = njit(cache=True, _nrt=False, **options)
    return decorator(fn) if fn is not None else decorator


def cold(fn=None, **options):
    """``@cold``: cached, ordinary numba (may allocate arrays)."""
    decorator = njit(cache=True, **options)
    return decorator(fn) if fn is not None else decorator
