"""Progressive pruning (Bouzy & Helmstetter; seed 001 "Progressive pruning", seed 003 Figure 2).

The statistics of the root moves live in one ``float64[k, 4]`` array, a row per candidate move:
``N`` samples, ``SUM`` and ``SUM_SQ`` of their values, ``WINS`` (games the mover won, a draw counting
one half). Sums rather than means so that partial statistics from several sample streams (the
slaves of Figure 2) merge by adding rows, exactly and in any grouping.

The seeds' rules, with ``sigma`` the standard deviation of a move's *mean* (``sqrt(var / n)``: it
shrinks as samples come in, so that "after a sufficient number of random games" the intervals tighten
and ``sigma_e`` can be reached):

- left and right expected outcomes ``m_l = m - r_d * sigma`` and ``m_r = m + r_d * sigma``;
- move i is *statistically inferior* to move j when ``m_r(i) < m_l(j)``; it suffices to test against
  the active move with the best mean (Figure 2's ``GetMaxMuMove``), whose ``m_l`` is compared with
  every other move's ``m_r``;
- only moves with at least ``min_games`` samples are judged or used as the reference (seed 001: 100
  per move; seed 003: 6,400 samples over about 80 moves before pruning starts);
- hard pruning: a pruned move stays pruned; soft pruning: a pruned move whose ``m_r`` is no longer
  below the best active move's ``m_l`` becomes a candidate again (checked at every pruning step);
- the sampling stops when one move is left, or when the moves left are *statistically equal* (every
  one has ``sigma < sigma_e`` and none is inferior to another), or when the budget (the seed's
  maximal number of iterations) is spent.

Everything here is ``hot`` (no allocation) so the samplers can call it inside their loops and the
tests can call it on constructed statistics.
"""

from __future__ import annotations

import math

import numpy as np

from obook.jit import hot

N = 0
SUM = 1
SUM_SQ = 2
WINS = 3
N_STAT_COLUMNS = 4

CONTINUE = 0
STOP_ONE_LEFT = 1
STOP_EQUAL = 2
STOP_REASONS = {CONTINUE: "budget", STOP_ONE_LEFT: "one move left", STOP_EQUAL: "statistically equal"}


def new_stats(moves: int) -> np.ndarray:
    return np.zeros((moves, N_STAT_COLUMNS), np.float64)


@hot(inline="always")
def mean_of(stats, k):
    n = stats[k, N]
    return stats[k, SUM] / n if n > 0 else 0.0


@hot(inline="always")
def sigma_of(stats, k):
    """Standard deviation of move k's mean: sqrt(sample variance / n) (infinite with no samples)."""
    n = stats[k, N]
    if n <= 0:
        return math.inf
    mean = stats[k, SUM] / n
    var = stats[k, SUM_SQ] / n - mean * mean
    if var < 0.0:
        var = 0.0
    return math.sqrt(var / n)


@hot
def best_active_move(stats, n_moves, active, min_games):
    """The active move with the largest mean among those with at least ``min_games`` samples, or -1."""
    best = -1
    best_mean = -math.inf
    for k in range(n_moves):
        if active[k] and stats[k, N] >= min_games and stats[k, N] > 0:
            m = mean_of(stats, k)
            if m > best_mean:
                best, best_mean = k, m
    return best


@hot
def progressive_pruning(stats, n_moves, active, rd, min_games, soft):
    """One pruning step (Figure 2 of seed 003, with soft un-pruning of seed 001). Updates ``active``
    (1 candidate, 0 pruned) in place; returns how many moves are active afterwards."""
    best = best_active_move(stats, n_moves, active, min_games)
    if best >= 0:
        left = mean_of(stats, best) - rd * sigma_of(stats, best)
        for k in range(n_moves):
            if k == best or stats[k, N] < min_games or stats[k, N] <= 0:
                continue
            right = mean_of(stats, k) + rd * sigma_of(stats, k)
            if active[k] and right < left:
                active[k] = 0
            elif soft and not active[k] and right >= left:
                active[k] = 1
    count = 0
    for k in range(n_moves):
        if active[k]:
            count += 1
    return count


@hot
def statistically_equal(stats, n_moves, active, rd, sigma_e, min_games):
    """Every active move has ``min_games`` samples and ``sigma < sigma_e``, and none is inferior to
    another (equivalently: none is inferior to the best one)."""
    best = best_active_move(stats, n_moves, active, min_games)
    if best < 0:
        return False
    left = mean_of(stats, best) - rd * sigma_of(stats, best)
    for k in range(n_moves):
        if not active[k]:
            continue
        if stats[k, N] < min_games or stats[k, N] <= 0:
            return False
        sigma = sigma_of(stats, k)
        if sigma >= sigma_e:
            return False
        if mean_of(stats, k) + rd * sigma < left:
            return False
    return True


@hot
def stop_reason(stats, n_moves, active, rd, sigma_e, min_games):
    """CONTINUE, STOP_ONE_LEFT or STOP_EQUAL (the seed's stop rules other than the budget)."""
    count = 0
    for k in range(n_moves):
        if active[k]:
            count += 1
    if count <= 1:
        return STOP_ONE_LEFT
    if statistically_equal(stats, n_moves, active, rd, sigma_e, min_games):
        return STOP_EQUAL
    return CONTINUE
