"""A whole move list replayed in one compiled call: the service's lookup without Python per move.

Why: a lookup that misses the caches replays the caller's moves, checks each, lists the legal
moves of the last position, computes its canonical key (8 symmetric Zobrist keys) and finds which
move put each stone on the board. Through ``Position`` that is a few numba calls per move and one
per point for the legal moves, each with the dispatcher's and Python's overhead: about 2.5 ms of
Python for a 20-move 9x9 lookup (issue 20, item 9). ``replay_points`` does all of it in one call
of a few microseconds, on a board kept per thread (``ReplayBoards``) so that nothing is allocated.

It plays by the same functions as ``Position`` (``obook.go.board``'s ``simple_legality``,
``superko_legality`` and ``play``) and keys by ``symmetric_keys``' formula, so its keys are exactly
``obook.book.keys.canonical_view``'s (tests/go/test_replay.py checks every prefix of random games).
"""

from __future__ import annotations

import threading

import numpy as np

from obook.go.board import (EMPTY, LEGAL, PASS, TO_MOVE, Board, clear_board, new_board, play, simple_legality,
                            superko_legality)
from obook.go.symmetry import N_SYMMETRIES, canonical_from_keys, symmetric_keys, symmetry_maps
from obook.jit import hot

NO_ERROR = -1  # ``replay_points``' answer when every move was legal


@hot(inline="always")
def _canonical(b, maps, scratch):
    """(smallest of the 8 symmetric keys, the smallest symmetry giving it): ``symmetric_keys``
    followed by ``canonical_from_keys``, in ``scratch`` (uint64[8])."""
    symmetric_keys(b, maps, scratch)
    return canonical_from_keys(scratch)


@hot
def replay_points(b, size, superko, maps, points, every_prefix, keys, symmetries, placed, legal, scratch):
    """Replay ``points`` (PASS or on-board points, alternating colours from Black) on ``b``,
    cleared first, checking each move under simple ko or, with ``superko``, positional superko.

    Writes the canonical key and symmetry of the position before move ``i`` into ``keys[i]`` and
    ``symmetries[i]`` for every ``i`` when ``every_prefix`` (else only of the last position reached,
    at its index), into ``placed[p]`` the number (from 1) of the move that put the stone now on ``p``
    (0: none), and into ``legal[p]`` 1 for every point the side to move may play in the last
    position. Returns (index of the first illegal move or ``NO_ERROR``, the rules' reason for it);
    with an illegal move the last position is the one before it."""
    clear_board(b, size)
    w = size + 2
    for p in range(w * w):
        placed[p] = 0
        legal[p] = 0
    n = points.shape[0]
    error = NO_ERROR
    reason = LEGAL
    done = n
    for i in range(n):
        if every_prefix:
            key, s = _canonical(b, maps, scratch)
            keys[i] = key
            symmetries[i] = s
        p = points[i]
        if p != PASS:
            c = b.scalars[TO_MOVE]
            verdict = superko_legality(b, p, c) if superko else simple_legality(b, p, c)
            if verdict != LEGAL:
                error = i
                reason = verdict
                done = i
                break
            placed[p] = i + 1
        play(b, p)
    key, s = _canonical(b, maps, scratch)
    keys[done] = key
    symmetries[done] = s
    c = b.scalars[TO_MOVE]
    for p in range(w * w):
        if b.color[p] == EMPTY:
            verdict = superko_legality(b, p, c) if superko else simple_legality(b, p, c)
            if verdict == LEGAL:
                legal[p] = 1
    return error, reason


class Replay:
    """What ``replay_points`` found, copied out of the thread's board."""

    __slots__ = ("size", "error", "reason", "keys", "symmetries", "color", "placed", "legal", "to_move")

    def __init__(self, size, error, reason, keys, symmetries, color, placed, legal, to_move):
        self.size = size
        self.error = error  # index of the first illegal move, or NO_ERROR
        self.reason = reason  # obook.go.board's reason code for it
        self.keys = keys  # uint64[n + 1]: canonical key before move i (see every_prefix)
        self.symmetries = symmetries  # int64[n + 1]
        self.color = color  # int8[cells] of the last position
        self.placed = placed  # int32[cells]: move number of the stone on each point
        self.legal = legal  # uint8[cells]: legal for the side to move
        self.to_move = to_move

    @property
    def length(self) -> int:
        """Moves replayed (all of them, or those before the illegal one)."""
        return len(self.keys) - 1 if self.error == NO_ERROR else self.error


class ReplayBoards:
    """One board per thread and size, reused by every replay: allocating a board (16 arrays, with
    a 32 kB superko history) would cost more than replaying a short opening."""

    def __init__(self) -> None:
        self._local = threading.local()

    def board(self, size: int) -> Board:
        boards = self._local.__dict__.setdefault("boards", {})
        board = boards.get(size)
        if board is None:
            board = boards[size] = new_board(size)
        return board

    def replay(self, size: int, superko: bool, points: np.ndarray, every_prefix: bool = False) -> Replay:
        b = self.board(size)
        cells = (size + 2) ** 2
        n = len(points)
        keys = np.zeros(n + 1, np.uint64)
        symmetries = np.zeros(n + 1, np.int64)
        placed = np.empty(cells, np.int32)
        legal = np.empty(cells, np.uint8)
        scratch = np.empty(N_SYMMETRIES, np.uint64)
        error, reason = replay_points(b, size, superko, symmetry_maps(size), points, every_prefix, keys, symmetries,
                                      placed, legal, scratch)
        error = int(error)
        if error != NO_ERROR:
            keys, symmetries = keys[: error + 1], symmetries[: error + 1]
        return Replay(size, error, int(reason), keys, symmetries, b.color.copy(), placed, legal,
                      int(b.scalars[TO_MOVE]))


BOARDS = ReplayBoards()


def replay(size: int, superko: bool, points, every_prefix: bool = False) -> Replay:
    """Replay ``points`` (a sequence of ints: PASS or padded-board points) on this thread's board."""
    return BOARDS.replay(size, superko, np.asarray(points, dtype=np.int64).reshape(-1), every_prefix)
