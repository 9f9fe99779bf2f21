"""A tiny seedable generator (xorshift64*) usable inside jitted code.

Its whole state is one ``uint64[1]`` array owned by the caller, so every search, playout and game
is reproducible from its seed and nothing is shared between processes by accident.
"""

from __future__ import annotations

import numpy as np

from obook.jit import hot

_MULT = np.uint64(2685821657736338717)
_S12 = np.uint64(12)
_S25 = np.uint64(25)
_S27 = np.uint64(27)
_S32 = np.uint64(32)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S31 = np.uint64(31)


def make_rng(seed: int) -> np.ndarray:
    """A generator state from any integer seed (seed 0 is fine: it is mixed first)."""
    state = np.zeros(1, np.uint64)
    seed_rng(state, np.uint64(seed & 0xFFFFFFFFFFFFFFFF))
    return state


@hot
def seed_rng(state, seed):
    z = np.uint64(seed) + _GOLDEN
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    z = z ^ (z >> _S31)
    if z == np.uint64(0):
        z = _GOLDEN
    state[0] = z


@hot(inline="always")
def advance(x):
    """The state after ``x``. A loop that draws many numbers keeps the state in a local with this
    and ``below`` and stores it back once: a store and reload per draw is on the critical path."""
    x ^= x >> _S12
    x ^= x << _S25
    x ^= x >> _S27
    return x


@hot(inline="always")
def below(x, n):
    """What ``rand_below`` returns when the state has just become ``x``."""
    return np.int64((((x * _MULT) >> _S32) * np.uint64(n)) >> _S32)


@hot(inline="always")
def next_u64(state):
    x = advance(state[0])
    state[0] = x
    return x * _MULT


@hot(inline="always")
def rand_below(state, n):
    """Uniform integer in [0, n) for 0 < n < 2**32 (Lemire's multiply-shift)."""
    return np.int64(((next_u64(state) >> _S32) * np.uint64(n)) >> _S32)


@hot(inline="always")
def rand_float(state):
    """Uniform float in [0, 1)."""
    return np.float64(next_u64(state) >> np.uint64(11)) * (1.0 / 9007199254740992.0)
