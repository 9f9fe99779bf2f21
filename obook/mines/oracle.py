"""Exact optimal play on tiny boards, by exhaustive expectimax over the consistent layouts.

The ground truth the search is tested against, and the source of the exact figures quoted in
``docs/mines.md`` (for instance: on 4x4 with 6 mines a central first click is a forced win, a corner one
wins at most 49.1% of the games). Plain Python: it enumerates every layout, so keep boards tiny.
"""

from __future__ import annotations

import itertools

import numpy as np

from obook.mines.game import UNKNOWN, neighbour_table, reveal

OBJECTIVES = ("score", "win")


class Oracle:
    """Optimal expected final score (``objective="score"``) or win probability (``"win"``)."""

    def __init__(self, p: int, q: int, n_mines: int, objective: str = "score"):
        if objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {OBJECTIVES}")
        self.p, self.q, self.n_mines, self.objective = p, q, n_mines, objective
        self.nbr, self.deg = neighbour_table(p, q)
        self.safe = p * q - n_mines
        self._out = np.zeros(p * q, np.int32)
        self._memo: dict[bytes, float] = {}

    def first_click_layouts(self, first: int) -> list[np.ndarray]:
        """Every layout the first-click rule can produce after clicking ``first`` (all equally likely)."""
        block = {first, *self.nbr[first, : self.deg[first]].tolist()}
        free = [c for c in range(self.p * self.q) if c not in block]
        return [self._layout(comb) for comb in itertools.combinations(free, self.n_mines)]

    def consistent_layouts(self, obs: np.ndarray) -> list[np.ndarray]:
        """Every layout with no mine on a revealed cell that matches every revealed count."""
        hidden = np.flatnonzero(obs == UNKNOWN)
        shown = [(c, int(obs[c])) for c in np.flatnonzero(obs != UNKNOWN)]
        layouts = []
        for comb in itertools.combinations(hidden, self.n_mines):
            z = self._layout(comb)
            if all(int(z[self.nbr[c, : self.deg[c]]].sum()) == t for c, t in shown):
                layouts.append(z)
        return layouts

    def first_click_value(self, first: int) -> float:
        """Value of opening with ``first`` on the empty board, then playing optimally."""
        return self.action_value(np.full(self.p * self.q, UNKNOWN, np.int8), self.first_click_layouts(first), first)

    def value(self, obs: np.ndarray, layouts: list[np.ndarray]) -> float:
        """Value of the position ``obs`` (whose belief is uniform on ``layouts``) under optimal play."""
        key = obs.tobytes()
        if key not in self._memo:
            if int((obs != UNKNOWN).sum()) >= self.safe:
                self._memo[key] = 1.0
            else:
                self._memo[key] = max(self.action_value(obs, layouts, a) for a in np.flatnonzero(obs == UNKNOWN))
        return self._memo[key]

    def action_value(self, obs: np.ndarray, layouts: list[np.ndarray], cell: int) -> float:
        """Value of revealing ``cell`` in ``obs``, then playing optimally."""
        revealed = int((obs != UNKNOWN).sum())
        lost = 0.0 if self.objective == "win" else revealed / self.safe
        total = 0.0
        groups: dict[bytes, tuple[np.ndarray, list[np.ndarray]]] = {}
        for z in layouts:
            if z[cell]:
                total += lost
                continue
            o = obs.copy()
            reveal(o, z, cell, self.nbr, self.deg, self._out)
            groups.setdefault(o.tobytes(), (o, []))[1].append(z)
        for o, zs in groups.values():
            total += len(zs) * self.value(o, zs)
        return total / len(layouts)

    def _layout(self, comb) -> np.ndarray:
        z = np.zeros(self.p * self.q, np.uint8)
        z[list(comb)] = 1
        return z
