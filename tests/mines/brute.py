"""Brute force for the Mines tests: every layout consistent with a small observation, enumerated."""

import itertools

import numpy as np

from obook.mines.game import UNKNOWN, neighbour_table


def consistent_layouts(obs, n_mines, p, q):
    """All layouts of ``n_mines`` on hidden cells matching every revealed count (vectorised brute force)."""
    nbr, deg = neighbour_table(p, q)
    n = p * q
    hidden = np.flatnonzero(obs == UNKNOWN)
    combos = np.array(list(itertools.combinations(hidden, n_mines)))
    z = np.zeros((len(combos), n), np.uint8)
    z[np.arange(len(combos))[:, None], combos] = 1
    shown = np.flatnonzero(obs != UNKNOWN)
    adj = np.zeros((n, shown.size), np.int32)
    for j, c in enumerate(shown):
        adj[nbr[c, : deg[c]], j] = 1
    ok = ((z.astype(np.int32) @ adj) == obs[shown].astype(np.int32)).all(axis=1)
    return z[ok]


def frontier_mask(obs, p, q):
    nbr, deg = neighbour_table(p, q)
    front = np.zeros(p * q, bool)
    for c in np.flatnonzero(obs != UNKNOWN):
        for d in nbr[c, : deg[c]]:
            front[d] |= obs[d] == UNKNOWN
    return front
