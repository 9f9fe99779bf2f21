"""How often professionals play each 3x3 shape: learned move-shape statistics for the search's priors.

A shape is the 3x3 neighbourhood of an empty point as ``pattern_code`` writes it (2 bits per
neighbour), seen by the side to move: its own stones as BLACK, the opponent's as WHITE. The 8
symmetries of the square share one set of counts. For every move of a set of games, every empty
point where the mover could legally play (not filling an own eye) adds one to ``available`` of its
shape, and the point played adds one to ``chosen``. A shape's rate ``(chosen + m*p0) / (available + m)``
(shrunk towards the overall rate ``p0`` by ``m`` virtual samples) over ``p0`` is how much likelier
than an average point it is to be played, and ``log2`` of that, clipped to [-2, 3], is the evidence
the priors add (``obook/search/priors.py``).

The counts shipped in ``shape_counts.npz`` were learned by
``obook learn shapes ../shared/data/go9/aeb9x9 obook/search/shape_counts.npz`` from the 517
professional 9x9 games of ``../shared/data/go9/aeb9x9`` (only these counts are kept, not the games).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from obook.go.board import PASS, is_eye, is_legal
from obook.go.sgf import read_sgf
from obook.go.tactics import N_PATTERNS, mover_code, pattern_code

COUNTS_PATH = Path(__file__).with_name("shape_counts.npz")
SHRINK_SAMPLES = 20.0
EVIDENCE_RANGE = (-2.0, 3.0)


def _permuted(codes: np.ndarray, sign: int, shift: int) -> np.ndarray:
    """The codes under the symmetry taking neighbour i (clockwise from N) to (sign*i + shift) mod 8."""
    out = np.zeros_like(codes)
    for i in range(8):
        j = (sign * i + shift) % 8
        out |= ((codes >> (2 * i)) & 3) << (2 * j)
    return out


@lru_cache(maxsize=1)
def canonical_codes() -> np.ndarray:
    """``canonical_codes()[code]``: the smallest code among the 8 symmetric images of ``code``."""
    codes = np.arange(N_PATTERNS, dtype=np.int64)
    best = codes.copy()
    for sign in (1, -1):
        for shift in (0, 2, 4, 6):
            best = np.minimum(best, _permuted(codes, sign, shift))
    return best


def learn_shape_counts(paths) -> tuple[np.ndarray, np.ndarray]:
    """(chosen, available) per canonical code, from the main lines of the SGF files ``paths``."""
    canon = canonical_codes()
    chosen = np.zeros(N_PATTERNS, np.int64)
    available = np.zeros(N_PATTERNS, np.int64)
    for path in paths:
        record = read_sgf(path)
        game = record.position
        replay = game.copy()
        while replay.moves:
            replay.undo()
        for color, point in game.moves:
            if point != PASS and color == replay.to_move:
                board = replay.board
                if is_legal(board, point, color) and not is_eye(board, point, color):
                    for q in replay.points():
                        if board.color[q] == 0 and is_legal(board, q, color) and not is_eye(board, q, color):
                            available[canon[mover_code(int(pattern_code(board, q)), color)]] += 1
                    chosen[canon[mover_code(int(pattern_code(board, point)), color)]] += 1
            replay.play(point, color)
    return chosen, available


def shape_evidence(chosen: np.ndarray, available: np.ndarray) -> np.ndarray:
    """float64[65536]: the evidence of every code (by its canonical code) from the counts."""
    p0 = chosen.sum() / max(available.sum(), 1)
    rate = (chosen + SHRINK_SAMPLES * p0) / (available + SHRINK_SAMPLES)
    evidence = np.clip(np.log2(rate / p0), *EVIDENCE_RANGE)
    return evidence[canonical_codes()]


@lru_cache(maxsize=1)
def shipped_shape_evidence() -> np.ndarray:
    """The evidence table from the shipped counts (zeros, i.e. no shape knowledge, without them)."""
    if not COUNTS_PATH.exists():
        return np.zeros(N_PATTERNS)
    with np.load(COUNTS_PATH) as data:
        chosen = np.zeros(N_PATTERNS, np.int64)
        available = np.zeros(N_PATTERNS, np.int64)
        chosen[data["codes"]] = data["chosen"]
        available[data["codes"]] = data["available"]
    return shape_evidence(chosen, available)


def save_counts(path: str | Path, chosen: np.ndarray, available: np.ndarray) -> None:
    codes = np.nonzero(available)[0]
    np.savez_compressed(path, codes=codes.astype(np.int32), chosen=chosen[codes].astype(np.int32),
                        available=available[codes].astype(np.int32))


__all__ = ["canonical_codes", "learn_shape_counts", "shape_evidence", "shipped_shape_evidence"]
