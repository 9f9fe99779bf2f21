"""The exact end game: when few layouts remain, the click that maximises the chance to win, by recursion.

Once the revealed counts leave only a few hundred consistent layouts (late in a game, or on a small
board), the guessing heuristics of ``obook.mines.guesses`` can be replaced by the exact optimum. The
layouts are listed (``list_layouts``: backtracking along the frontier, then the interior, in numba) with the
count every hidden cell would show in each; the value of a position is then, over the set S of layouts
still consistent and the cells already revealed:

- cells safe in every layout of S are revealed at once (free information, it can only help), S splitting by
  what they show;
- one layout left: won;
- otherwise the best guess c: the sum over the counts v it can show of |S(c shows v)| / |S| times the value
  after it.

A zero's flood reveal is not modelled: its neighbours are safe in every layout where it shows 0, so the next
step reveals them anyway. Cells whose columns agree on S are one candidate; a guess whose chance of being
safe cannot beat the best found is not explored; positions are memoised. The recursion gives up after
``ENDGAME_NODES`` positions (the caller then guesses heuristically).
"""

from __future__ import annotations

import math

import numpy as np

from obook.jit import cold
from obook.mines.frontier import COUNT_OK, MINE, frontier_constraints, log_layouts, no_fixed_cells, settle
from obook.mines.game import UNKNOWN

ENDGAME_LAYOUTS = 400  # at most this many consistent layouts for the exact end game
ENDGAME_NODES = 15_000  # positions the recursion may visit before it gives up
LIST_STEPS = 5_000_000  # backtracking steps ``list_layouts`` may take


@cold
def _backtrack(order, n_mines, cell_ncons, cell_cons, cons_target, cons_nvar, limit, max_steps):
    """Every assignment of mines to ``order`` (frontier cells first, breadth-first, then the interior)
    meeting every count and holding ``n_mines`` mines in all: ``(int8[L, h] with 1 for a mine, ok)``; an
    empty (0, h) array and ok False when there are more than ``limit`` or the steps run out."""
    h = order.size
    out = np.zeros((limit, h), np.int8)
    n_cons = cons_target.size
    placed = np.zeros(n_cons, np.int32)
    left = cons_nvar.copy()
    assign = np.full(h, -1, np.int8)
    found = 0
    steps = 0
    used = 0
    i = 0
    while i >= 0:
        steps += 1
        if steps > max_steps:
            return out[:0], False
        c = order[i]
        if assign[i] >= 0:  # undo this cell's value before trying the next one
            v = assign[i]
            used -= v
            for a in range(cell_ncons[c]):
                j = cell_cons[c, a]
                placed[j] -= v
                left[j] += 1
        nxt = assign[i] + 1
        if nxt > 1:
            assign[i] = -1
            i -= 1
            continue
        assign[i] = nxt
        used += nxt
        ok = used <= n_mines and used + (h - i - 1) >= n_mines
        for a in range(cell_ncons[c]):
            j = cell_cons[c, a]
            placed[j] += nxt
            left[j] -= 1
            if placed[j] > cons_target[j] or placed[j] + left[j] < cons_target[j]:
                ok = False
        if not ok:
            continue
        if i == h - 1:
            if found == limit:
                return out[:0], False
            for k in range(h):
                out[found, k] = assign[k]
            found += 1
            continue
        i += 1
    return out[:found], True


class Layouts:
    """The layouts consistent with a position: ``cells`` (the hidden cells no count settles), ``shows``
    int8[L, len(cells)] (the count each cell shows in each layout, -1 for a mine)."""

    def __init__(self, cells: np.ndarray, shows: np.ndarray):
        self.cells, self.shows = cells, shows


def list_layouts(obs: np.ndarray, n_mines: int, nbr: np.ndarray, deg: np.ndarray, fixed: np.ndarray | None = None,
                 limit: int = ENDGAME_LAYOUTS) -> Layouts | None:
    """Every layout consistent with ``obs`` (``fixed``: mines proved earlier), or None when there are more
    than ``limit`` (checked first by the count of ``obook.mines.frontier``, so listing is cheap)."""
    status, log_total = log_layouts(obs, n_mines, nbr, deg, fixed)
    if status != COUNT_OK or log_total > math.log(limit + 0.5):
        return None
    fixed = no_fixed_cells(obs.size) if fixed is None else fixed.copy()
    if not settle(obs, nbr, deg, fixed):
        return None
    hidden = obs == UNKNOWN
    mines_fixed = hidden & (fixed == MINE)
    (n_cons, cons_target, cons_nvar, _, cell_ncons, cell_cons, front, _, interior) = frontier_constraints(
        obs, nbr, deg, fixed)
    order = np.concatenate([front, interior]).astype(np.int32)
    left = n_mines - int(mines_fixed.sum())
    if order.size == 0:
        assign, ok = np.zeros((1 if left == 0 else 0, 0), np.int8), left == 0
    else:
        assign, ok = _backtrack(order, left, cell_ncons, cell_cons, cons_target[:n_cons].copy(),
                                cons_nvar[:n_cons].copy(), limit, LIST_STEPS)
    if not ok or assign.shape[0] == 0:
        return None
    cand = np.flatnonzero(hidden & (fixed != MINE))  # settled safe cells too: they show counts
    mines = np.zeros((assign.shape[0], obs.size), np.int8)
    mines[:, np.flatnonzero(mines_fixed)] = 1
    mines[:, order] = assign
    padded = np.concatenate([mines, np.zeros((mines.shape[0], 1), np.int8)], axis=1)
    idx = np.where(nbr[cand] >= 0, nbr[cand], obs.size)  # -1 slots read the zero column
    shows = padded[:, idx].sum(axis=2).astype(np.int8)
    shows[mines[:, cand] == 1] = -1
    return Layouts(cand, shows)


class _GaveUp(Exception):
    pass


class EndgameSolver:
    """Exact win probability of every guess over a ``Layouts`` (module docstring)."""

    def __init__(self, layouts: Layouts, max_nodes: int = ENDGAME_NODES):
        self.shows = layouts.shows
        self.cells = layouts.cells
        self.max_nodes = max_nodes
        self.nodes = 0
        self.memo: dict[tuple[bytes, bytes], float] = {}

    def best(self) -> tuple[int, float] | None:
        """``(cell, win probability)`` of the best click from the position itself (None when the
        recursion gave up). A cell safe in every layout is returned at once with the value after it."""
        rows = np.arange(self.shows.shape[0])
        revealed = np.zeros(self.shows.shape[1], bool)
        try:
            value, col = self._value(rows, revealed, want_move=True)
        except _GaveUp:
            return None
        return int(self.cells[col]), value

    def click_value(self, cell: int) -> float | None:
        """Exact chance to win after clicking ``cell`` (a board index) and playing optimally afterwards
        (None when the recursion gave up): how far another rule's guess falls short of ``best``."""
        col = int(np.flatnonzero(self.cells == cell)[0])
        rows = np.arange(self.shows.shape[0])
        now = np.zeros(self.shows.shape[1], bool)
        now[col] = True
        try:
            total = sum(g.size * self._value(g, now)[0] for g in self._split(rows, (col,)))
        except _GaveUp:
            return None
        return total / rows.size

    def _split(self, rows, cols):
        """Groups of ``rows`` by what ``cols`` show (rows where one of them is a mine left out)."""
        groups = [rows]
        for c in cols:
            finer = []
            for g in groups:
                shown = self.shows[g, c]
                for v in np.unique(shown):
                    if v >= 0:
                        finer.append(g[shown == v])
            groups = finer
        return groups

    def _value(self, rows, revealed, want_move=False):
        key = (rows.tobytes(), revealed.tobytes())
        if not want_move and key in self.memo:
            return self.memo[key], -1
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise _GaveUp
        sub = self.shows[rows]
        k = rows.size
        mine_somewhere = (sub < 0).any(axis=0)
        safe = ~mine_somewhere & ~revealed
        if safe.any():
            cols = np.flatnonzero(safe)
            now = revealed | safe
            total = sum(g.size * self._value(g, now)[0] for g in self._split(rows, cols))
            value = total / k
            self.memo[key] = value
            return value, int(cols[0])
        if k == 1:
            self.memo[key] = 1.0
            return 1.0, -1
        safe_count = (sub >= 0).sum(axis=0)
        seen = set()
        cands = []
        for c in np.flatnonzero(~revealed & (safe_count > 0)):
            col = sub[:, c].tobytes()
            if col in seen:
                continue
            seen.add(col)
            cands.append((-int(safe_count[c]), int(c)))
        cands.sort()
        best, best_col = -1.0, -1
        for neg_safe, c in cands:
            if -neg_safe / k <= best:
                break
            now = revealed.copy()
            now[c] = True
            groups = sorted(self._split(rows, (c,)), key=len, reverse=True)
            total, left = 0.0, -neg_safe
            for g in groups:
                if total + left <= best * k:  # even winning every remaining group would not beat the best
                    break
                total += g.size * self._value(g, now)[0]
                left -= g.size
            value = total / k
            if value > best:
                best, best_col = value, c
        self.memo[key] = best
        return best, best_col


def endgame_choice(obs: np.ndarray, n_mines: int, nbr: np.ndarray, deg: np.ndarray, fixed: np.ndarray | None = None,
                   limit: int | None = None, max_nodes: int | None = None) -> tuple[int, float] | None:
    """The click with the highest exact chance to win and that chance, or None when there are more than
    ``limit`` (default ``ENDGAME_LAYOUTS``) consistent layouts or the recursion needs more than ``max_nodes``
    (default ``ENDGAME_NODES``) positions."""
    limit = ENDGAME_LAYOUTS if limit is None else limit
    max_nodes = ENDGAME_NODES if max_nodes is None else max_nodes
    layouts = list_layouts(obs, n_mines, nbr, deg, fixed, limit)
    if layouts is None:
        return None
    return EndgameSolver(layouts, max_nodes).best()
