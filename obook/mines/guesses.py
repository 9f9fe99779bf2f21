"""How the exact-probability solvers guess when no hidden cell is proved safe.

``greedy_choice`` clicks the least likely mine. ``lookahead_choice`` also weighs what the click will
show: for each of the near-safest cells and each count it can show, the count of ``obook.mines.frontier``
gives the chance of that count (a ratio of layout numbers) and the probabilities after it. Its progress
is the number of cells proved safe after it, capped at ``PROGRESS_CAP`` and divided by it (a win counts
as full progress), averaged over what the click can show (0 when it hits a mine). The score,
K * P(safe) + (1 - K) * progress, trades a little safety for guesses that are not followed by another
guess at once.
"""

from __future__ import annotations

import math

import numpy as np

from obook.mines.frontier import COUNT_OK, counted_probabilities, log_layouts
from obook.mines.game import UNKNOWN

TIE = 1e-9  # probabilities this close to the lowest count as equally low
SAFETY_WEIGHT = 0.7  # lookahead: K above
PROGRESS_CAP = 3  # lookahead: proved-safe cells after a click beyond this many count no more
NEAR_SAFEST = 0.3  # lookahead: cells whose probability is within this fraction above the lowest
LOOKAHEAD_CELLS = 12  # lookahead: at most this many of them, the likeliest safe first


def _by_probability_then_fewest_hidden(cells, obs, prob, deg, nbr) -> list[int]:
    key = [(float(prob[c]), int(np.count_nonzero(obs[nbr[c, : deg[c]]] == UNKNOWN)), int(c)) for c in cells]
    return [c for _, _, c in sorted(key)]


def greedy_choice(obs: np.ndarray, prob: np.ndarray, deg: np.ndarray, nbr: np.ndarray) -> int:
    """The greedy rule: the hidden cell least likely to hold a mine; among cells within ``TIE`` of the
    lowest probability, the one with the fewest hidden neighbours (a corner before an edge before the
    middle, a cell hugging the revealed area before one in the open: its count is likelier to be small,
    a zero opens an area), then the lowest index. A proved-safe cell (probability 0) always wins."""
    hidden = np.flatnonzero(obs == UNKNOWN)
    p = prob[hidden]
    near = hidden[p <= p.min() + TIE]
    if near.size == 1:
        return int(near[0])
    hidden_nbrs = [(int(np.count_nonzero(obs[nbr[c, : deg[c]]] == UNKNOWN)), int(c)) for c in near]
    return min(hidden_nbrs)[1]


def lookahead_choice(obs: np.ndarray, prob: np.ndarray, n_mines: int, nbr: np.ndarray, deg: np.ndarray,
                     fixed: np.ndarray | None = None) -> int:
    """The best-scoring of the ``LOOKAHEAD_CELLS`` near-safest cells (module docstring); ``fixed`` carries
    the mines proved earlier in the game. Falls back on ``greedy_choice`` when only one cell is near."""
    hidden = np.flatnonzero(obs == UNKNOWN)
    lowest = prob[hidden].min()
    near = hidden[prob[hidden] <= lowest * (1 + NEAR_SAFEST) + TIE]
    if near.size == 1:
        return int(near[0])
    status, log_total = log_layouts(obs, n_mines, nbr, deg, fixed)
    if status != COUNT_OK:
        return greedy_choice(obs, prob, deg, nbr)
    best_key, best_cell = None, -1
    for cell in _by_probability_then_fewest_hidden(near, obs, prob, deg, nbr)[:LOOKAHEAD_CELLS]:
        progress = 0.0
        child = obs.copy()
        for shown in range(deg[cell] + 1):
            child[cell] = shown
            status, after, log_child = counted_probabilities(child, n_mines, nbr, deg, fixed)
            if status != COUNT_OK:
                continue
            still_hidden = child == UNKNOWN
            if int(still_hidden.sum()) == n_mines:
                gained = 1.0
            else:
                gained = min(PROGRESS_CAP, int(np.count_nonzero(after[still_hidden] == 0.0))) / PROGRESS_CAP
            progress += math.exp(log_child - log_total) * gained
        key = (SAFETY_WEIGHT * (1.0 - prob[cell]) + (1.0 - SAFETY_WEIGHT) * progress, -prob[cell])
        if best_key is None or key > best_key:
            best_key, best_cell = key, cell
    return best_cell
