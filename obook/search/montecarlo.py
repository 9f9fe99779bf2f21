"""The seeds' pure Monte-Carlo family in numba: one-ply first-move averaging, all-moves-as-first
(GOBBLE) with temperature and annealing, and depth-2 minimax over playout means.

Every sampler runs a whole batch of playouts in one jitted call and never allocates: the caller
(``obook/search/mcplayer.py``) owns the arrays. A sample's *value* is, from the root mover's point of
view, either the final score (area minus komi, the seeds' "expected score") or the win (1, 0, 1/2
for a draw); statistics are rows of ``[N, SUM, SUM_SQ, WINS]`` (see ``pruning.py``).

- ``sample_first_moves``: the one-ply model. Each sample plays a first move among the *active*
  candidates, either round-robin (Bouzy's one-ply search, every move equally often) or uniformly at
  random (seed 003's simplification: "let move i be the first move in that random game"), then a
  playout; the value is credited to that first move.
- ``sample_all_moves_as_first``: GOBBLE (Bruegmann; seed 001). Playouts start at the root and every
  point a colour played first in the game (before the other colour played there) is credited with
  that game's value for that colour.
- Temperature (seed 001, Bouzy 2004): with ``K > 0`` the playouts choose each move with probability
  proportional to ``exp(K * v)``, where ``v`` is the move's current all-moves-as-first value for the
  colour to play (the mean score divided by the number of points, so ``v`` is in [-1, 1]; or the
  win rate), ``v = 0`` (score) or 1/2 (win) for a point never seen. Annealing raises ``K`` linearly
  from 0 to its value over the budget ("increases K from 0 to 5 over time"). ``K = 0`` is the plain
  policy.
- ``sample_depth2``: every (move, reply) leaf gets playouts round-robin; the caller takes the
  minimum over replies of the leaf means (depth-i enhancement with i = 2).

A game that the root move (and reply) end with two passes is scored as it stands, not played on.
"""

from __future__ import annotations

import math

import numpy as np

from obook.go.board import (
    BLACK,
    PASS,
    PASSES,
    SIZE,
    TO_MOVE,
    area_score,
    copy_board,
    play,
)
from obook.jit import hot
from obook.playout.policies import playout, playout_score, run_playout
from obook.rng import rand_below
from obook.search.pruning import N, SUM, SUM_SQ, WINS

ROUND_ROBIN = 0
RANDOM_FIRST = 1
ALLOCATIONS = {"roundrobin": ROUND_ROBIN, "random": RANDOM_FIRST}

VALUE_SCORE = 0
VALUE_WIN = 1
VALUES = {"score": VALUE_SCORE, "win": VALUE_WIN}


def moves_buffer(size: int) -> np.ndarray:
    """Room for the moves of one playout (the playout cap plus the root's first moves)."""
    return np.zeros(3 * size * size + 32, np.int32)


@hot(inline="always")
def _win(score, mover):
    mover_score = score if mover == BLACK else -score
    if mover_score > 0:
        return 1.0
    if mover_score < 0:
        return 0.0
    return 0.5


@hot(inline="always")
def _value(score, mover, value_kind):
    if value_kind == VALUE_SCORE:
        return score if mover == BLACK else -score
    return _win(score, mover)


@hot(inline="always")
def _add_sample(stats, k, value, win):
    stats[k, N] += 1.0
    stats[k, SUM] += value
    stats[k, SUM_SQ] += value * value
    stats[k, WINS] += win


@hot
def set_temperature_weights(amaf, weights, temperature, value_kind, points):
    """``weights[c, p] = exp(K * v_c(p))`` from the all-moves-as-first statistics ``amaf[c, p]``."""
    neutral = 0.0 if value_kind == VALUE_SCORE else 0.5
    scale = 1.0 / points if value_kind == VALUE_SCORE else 1.0
    for c in range(1, 3):
        for p in range(weights.shape[1]):
            n = amaf[c, p, N]
            v = amaf[c, p, SUM] / n * scale if n > 0 else neutral
            weights[c, p] = math.exp(temperature * v)


@hot(inline="always")
def _credit_first_plays(amaf, first_seen, generation, moves, n_moves, first_color, score, value_kind):
    """All-moves-as-first: each point is credited once, to the colour that played there first, with
    the game's value for that colour (seed 001: "modify the statistics only for the player who played
    first"). ``moves`` alternate colours starting with ``first_color``."""
    c = first_color
    for i in range(n_moves):
        p = moves[i]
        if p != PASS and first_seen[p] != generation:
            first_seen[p] = generation
            v = _value(score, c, value_kind)
            _add_sample_3(amaf, c, p, v, _win(score, c))
        c = 3 - c


@hot(inline="always")
def _add_sample_3(amaf, c, p, value, win):
    amaf[c, p, N] += 1.0
    amaf[c, p, SUM] += value
    amaf[c, p, SUM_SQ] += value * value
    amaf[c, p, WINS] += win


@hot
def sample_first_moves(root, work, candidates, n_candidates, active, order, allocation, policy, rng, komi, scratch,
                       count, value_kind, stats, temperature, anneal, done, budget, amaf, weights, first_seen,
                       counters, moves):
    """``count`` one-ply samples over the active candidates into ``stats`` (see the module docstring).

    ``order`` is scratch for the active indices; ``done``/``budget`` place this batch in the whole
    search for annealing; ``counters[0]`` numbers the playouts for ``first_seen``. The temperature
    statistics ``amaf`` are kept only when the temperature is positive."""
    mover = root.scalars[TO_MOVE]
    n_active = 0
    for k in range(n_candidates):
        if active[k]:
            order[n_active] = k
            n_active += 1
    if n_active == 0:
        return 0
    points = root.scalars[SIZE] * root.scalars[SIZE]
    for i in range(count):
        if allocation == ROUND_ROBIN:
            k = order[(done + i) % n_active]
        else:
            k = order[rand_below(rng, n_active)]
        t = temperature
        if anneal and budget > 0:
            t = temperature * min(1.0, (done + i) / budget)
        copy_board(work, root)
        play(work, candidates[k])
        if work.scalars[PASSES] >= 2:
            score = area_score(work, komi)
        elif t > 0.0:
            set_temperature_weights(amaf, weights, t, value_kind, points)
            moves[0] = candidates[k]
            _, n_moves, two_passes = run_playout(work, policy, rng, scratch, moves, None, 1, weights, t)
            score = playout_score(work, komi, two_passes)
            counters[0] += 1
            _credit_first_plays(amaf, first_seen, counters[0], moves, n_moves, mover, score, value_kind)
        else:
            score, _ = playout(work, policy, rng, komi, scratch)
        _add_sample(stats, k, _value(score, mover, value_kind), _win(score, mover))
    return count


@hot
def sample_all_moves_as_first(root, policy, rng, komi, scratch, work, count, value_kind, temperature, anneal, done,
                              budget, amaf, weights, first_seen, counters, moves):
    """``count`` GOBBLE playouts from the root into ``amaf[colour, point]`` (see the module docstring)."""
    mover = root.scalars[TO_MOVE]
    points = root.scalars[SIZE] * root.scalars[SIZE]
    for i in range(count):
        t = temperature
        if anneal and budget > 0:
            t = temperature * min(1.0, (done + i) / budget)
        if t > 0.0:
            set_temperature_weights(amaf, weights, t, value_kind, points)
        copy_board(work, root)
        _, n_moves, two_passes = run_playout(work, policy, rng, scratch, moves, None, 0, weights, t)
        score = playout_score(work, komi, two_passes)
        counters[0] += 1
        _credit_first_plays(amaf, first_seen, counters[0], moves, n_moves, mover, score, value_kind)
    return count


@hot
def sample_depth2(root, work, leaf_first, leaf_reply, n_leaves, policy, rng, komi, scratch, count, start, value_kind,
                  stats):
    """``count`` playouts spread round-robin over the (move, reply) leaves, from leaf ``start`` on;
    values are the root mover's. Returns the next leaf index."""
    mover = root.scalars[TO_MOVE]
    k = start
    for _ in range(count):
        copy_board(work, root)
        play(work, leaf_first[k])
        play(work, leaf_reply[k])
        if work.scalars[PASSES] >= 2:
            score = area_score(work, komi)
        else:
            score, _ = playout(work, policy, rng, komi, scratch)
        _add_sample(stats, k, _value(score, mover, value_kind), _win(score, mover))
        k += 1
        if k == n_leaves:
            k = 0
    return k

