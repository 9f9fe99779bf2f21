"""Playout policies and the playout loop, all in numba.

Contract of a policy: ``select_move(board, policy, rng)`` returns a point that is legal for the side
to move under simple ko and is not one of its own eyes (``is_eye``), or ``PASS`` when no such move
exists. It may reorder ``board.empties`` (an unordered set) and mark scratch cells, nothing else.
New policies get a new constant below and a branch in ``select_move``; the loop never changes.

- ``LIGHT``: uniform among legal non-eye moves (Bouzy & Helmstetter's and the seed's BASIC).
  Sampling is without replacement from the empty points until a valid one appears, which is exactly
  uniform and touches only as many points as needed.
- ``ATARI50``: the seed's atari-50 (Yoshimoto et al.): if N1 capturing moves exist they share 50% of
  the probability (50/N1 % each) and the N2 other valid moves share the other 50% (all of it goes to
  captures when N2 = 0).
- ``HEAVY``: MoGo-style local answers (save-atari, 3x3 shapes, captures, no big self-atari); see
  ``heavy.py``.
"""

from __future__ import annotations

import numpy as np

from obook.go.board import (
    KO_POINT,
    N_EMPTY,
    PASS,
    SIZE,
    TO_MOVE,
    _next_mark,
    _u,
    area_score,
    atari_liberty,
    compact_atari,
    copy_board,
    is_valid_move,
    play,
    settled_area_score,
)
from obook.jit import hot
from obook.playout.heavy import heavy_move
from obook.rng import advance, below, rand_below, rand_float

LIGHT = 0
ATARI50 = 1
HEAVY = 2
POLICY_NAMES = {"light": LIGHT, "atari50": ATARI50, "heavy": HEAVY}


@hot(inline="always")
def _uniform_valid_move(b, c, rng, excluded_gen):
    """Uniform among legal non-eye moves of ``c`` whose mark is not ``excluded_gen`` (0: none)."""
    k = b.scalars[N_EMPTY]
    empties = b.empties
    index = b.empty_index
    x = rng[0]
    while k > 0:
        x = advance(x)
        i = below(x, k)
        p = empties[_u(i)]
        if (excluded_gen < 0 or b.mark[_u(p)] != excluded_gen) and is_valid_move(b, p, c):
            rng[0] = x
            return p
        k -= 1
        last = empties[_u(k)]
        empties[_u(i)] = last
        index[_u(last)] = i
        empties[_u(k)] = p
        index[_u(p)] = k
    rng[0] = x
    return PASS


@hot(inline="always")
def _capture_moves(b, c, out):
    """Write the distinct legal capturing moves of ``c`` to ``out``; return how many. Each is marked
    with the returned generation so that the uniform part can exclude them."""
    opp = 3 - c
    n_opp = compact_atari(b, opp)
    gen = _next_mark(b)
    ko = b.scalars[KO_POINT]
    n = 0
    for i in range(n_opp):
        lib = atari_liberty(b, b.atari[i])
        if b.mark[lib] != gen and lib != ko:
            b.mark[lib] = gen
            out[n] = lib
            n += 1
    return n, gen


@hot(inline="always")
def select_move(b, policy, rng, scratch):
    """A move for the side to move under ``policy`` (see the module contract)."""
    c = b.scalars[TO_MOVE]
    if policy == ATARI50:
        n1, gen = _capture_moves(b, c, scratch)
        if n1 > 0:
            if rand_float(rng) < 0.5:
                return scratch[rand_below(rng, n1)]
            p = _uniform_valid_move(b, c, rng, gen)
            if p == PASS:
                return scratch[rand_below(rng, n1)]
            return p
        return _uniform_valid_move(b, c, rng, np.int32(-1))
    if policy == HEAVY:
        return heavy_move(b, rng, scratch)
    return _uniform_valid_move(b, c, rng, np.int32(-1))


@hot
def max_playout_moves(size):
    """A cap that only cycles (triple ko and the like) can reach."""
    return 3 * size * size + 20


@hot
def playout(b, policy, rng, komi, scratch):
    """Play ``b`` to the end (two passes) under ``policy``; return (score for Black, moves played).

    The score is the area score minus komi; a game cut by the move cap is scored as it stands."""
    limit = max_playout_moves(b.scalars[SIZE])
    moves = 0
    passes = 0
    while passes < 2 and moves < limit:
        p = select_move(b, policy, rng, scratch)
        play(b, p)
        moves += 1
        if p == PASS:
            passes += 1
        else:
            passes = 0
    if passes < 2:
        return area_score(b, komi), moves
    return settled_area_score(b, komi), moves


def new_scratch(board) -> np.ndarray:
    """Scratch space a policy needs for one board (capture lists and the like)."""
    return np.zeros(board.color.shape[0], np.int32)


@hot
def playout_batch(start, work, policy, rng, komi, scratch, count):
    """Run ``count`` playouts from ``start`` (copied into ``work`` each time), all in one call.

    Returns (Black wins, total moves, sum of scores): the benchmark's and the pure Monte-Carlo
    players' inner loop."""
    wins = 0
    moves = 0
    total = 0.0
    for _ in range(count):
        copy_board(work, start)
        score, m = playout(work, policy, rng, komi, scratch)
        moves += m
        total += score
        if score > 0:
            wins += 1
    return wins, moves, total
