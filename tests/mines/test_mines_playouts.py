"""The playout policies against exactly computed outcomes."""

import itertools

import numpy as np
from scipy import stats

from obook.mines.game import UNKNOWN, neighbour_table, position_from_ascii, reveal
from obook.mines.kernel import make_scratch
from obook.mines.playouts import playout_safe_first, playout_uniform
from obook.rng import make_rng


def test_safe_first_playout_solves_what_deduction_solves_and_uniform_does_not():
    p, q, mines, obs = position_from_ascii("o o o o o\n. . x . .")
    nbr, deg = neighbour_table(p, q)
    scratch = make_scratch(p * q)
    revealed = int((obs != UNKNOWN).sum())
    safe_total = p * q - 1
    rng = make_rng(8)
    finals_safe, finals_uniform = [], []
    for _ in range(300):
        finals_safe.append(playout_safe_first(obs.copy(), mines, revealed, safe_total, 1, nbr, deg, scratch, rng))
        finals_uniform.append(playout_uniform(obs.copy(), mines, revealed, safe_total, 1, nbr, deg, scratch, rng))
    assert all(f == safe_total for f in finals_safe)
    wins = sum(f == safe_total for f in finals_uniform)
    assert stats.binomtest(wins, 300, uniform_win_probability(obs, mines, nbr, deg)).pvalue > 1e-3
    assert wins < 300


def uniform_win_probability(obs, mines, nbr, deg):
    """Clicking hidden cells in a uniformly random order (skipping those already shown): P(win)."""
    hidden = np.flatnonzero(obs == UNKNOWN)
    out = np.zeros(obs.size, np.int32)
    wins = total = 0
    for order in itertools.permutations(hidden):
        o = obs.copy()
        won = True
        for c in order:
            if o[c] != UNKNOWN:
                continue
            if reveal(o, mines, c, nbr, deg, out) < 0:
                won = int((o == UNKNOWN).sum()) == int(mines.sum())
                break
        wins += won
        total += 1
    return wins / total
