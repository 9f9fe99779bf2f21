"""Zobrist tables shared by every process.

The tables are generated from a fixed seed with splitmix64, so two machines (or two versions of
numpy) always agree on the keys; ``KEY_VERSION`` names the scheme so that a book built with other
keys can be refused instead of silently corrupted.
"""

from __future__ import annotations

import numpy as np

KEY_VERSION = "zobrist-splitmix64-v1"
MAX_SIZE = 19
MAX_WIDTH = MAX_SIZE + 2
MAX_POINTS = MAX_WIDTH * MAX_WIDTH

_MASK = (1 << 64) - 1


def _splitmix64(seed: int, count: int) -> np.ndarray:
    out = np.empty(count, dtype=np.uint64)
    state = seed & _MASK
    for i in range(count):
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        out[i] = z ^ (z >> 31)
    return out


_RAW = _splitmix64(0x0B00C, 3 * MAX_POINTS + 1)
#: STONE_KEYS[color, point] for color BLACK=1, WHITE=2; row 0 keys the ko point.
STONE_KEYS = _RAW[: 3 * MAX_POINTS].reshape(3, MAX_POINTS).copy()
#: XORed into a position key when White is to move.
WHITE_TO_MOVE_KEY = np.uint64(_RAW[3 * MAX_POINTS])
