"""The Mines game: a p x q board, N hidden mines, score = safe cells revealed / (pq - N).

Rules follow the seed paper in its Gnomine variant: the mines are placed *after* the first click, outside
the clicked cell and its 8-neighbourhood, so the first click always shows a zero and opens an area.
Revealing a safe cell shows the number of mines around it; a zero reveals its neighbours in turn.

Layout of the state, shared with the samplers and the search:
    cells       index ``row * q + col``; ``n = p * q``
    nbr[n, 8]   neighbour cells of each cell, the first ``deg[c]`` entries valid
    obs[n]      int8, ``UNKNOWN`` or the count (0..8) shown by a revealed cell: all the player sees
    mines[n]    uint8, 1 where a mine is: the hidden part, absent before the first click
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from obook.errors import ObookError
from obook.jit import hot
from obook.rng import rand_below

UNKNOWN = -1  # obs value of a cell not yet revealed
PLAYING, WON, LOST = 0, 1, 2  # game status
STATUS_NAMES = {PLAYING: "playing", WON: "won", LOST: "lost"}

STANDARD_BOARDS = {
    "beginner": (9, 9, 10),
    "intermediate": (16, 16, 40),
    "expert": (16, 30, 99),
}


def neighbour_table(p: int, q: int) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(nbr, deg)``; a fixed table keeps every jitted loop free of bounds checks on the grid."""
    n = p * q
    nbr = np.full((n, 8), -1, dtype=np.int32)
    deg = np.zeros(n, dtype=np.int32)
    for r in range(p):
        for c in range(q):
            cell = r * q + c
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    if (dr or dc) and 0 <= r + dr < p and 0 <= c + dc < q:
                        nbr[cell, deg[cell]] = (r + dr) * q + c + dc
                        deg[cell] += 1
    return nbr, deg


def max_mines(p: int, q: int) -> int:
    """Most mines a board can hold when any first click must leave a 3x3 block (clipped at edges) free."""
    return p * q - min(3, p) * min(3, q)


def check_board(p: int, q: int, n_mines: int) -> None:
    """Raise ``ObookError`` when a board cannot be played under the first-click rule."""
    if p < 1 or q < 1:
        raise ObookError(f"board size {p}x{q}: both sides must be at least 1")
    if p * q > 4096:
        raise ObookError(f"board size {p}x{q}: at most 4096 cells are supported")
    if n_mines < 1:
        raise ObookError(f"{n_mines} mines: there must be at least one mine")
    if n_mines > max_mines(p, q):
        raise ObookError(
            f"{n_mines} mines do not fit on a {p}x{q} board: the first click and its neighbours must stay "
            f"free, so at most {max_mines(p, q)} mines fit"
        )


def parse_size(text: str) -> tuple[int, int]:
    """Parse ``"ROWSxCOLS"`` (e.g. ``4x4``, ``16x30``) or a standard board name into (rows, cols)."""
    if text in STANDARD_BOARDS:
        return STANDARD_BOARDS[text][:2]
    m = re.fullmatch(r"\s*(\d+)\s*[xX]\s*(\d+)\s*", text)
    if not m:
        raise ObookError(f"board size {text!r}: expected ROWSxCOLS such as 4x4 or 16x30")
    return int(m.group(1)), int(m.group(2))


def parse_cell(text: str, p: int, q: int) -> int:
    """Parse ``"ROW,COL"`` (0-based) into a cell index, checking that it is on the board."""
    m = re.fullmatch(r"\s*(\d+)\s*,\s*(\d+)\s*", text)
    if not m:
        raise ObookError(f"cell {text!r}: expected ROW,COL such as 1,2 (0-based)")
    r, c = int(m.group(1)), int(m.group(2))
    if not (0 <= r < p and 0 <= c < q):
        raise ObookError(f"cell {text!r} is off the {p}x{q} board")
    return r * q + c


@hot(inline="always")
def copy_cells(dst, src, n):
    """``dst[:n] = src[:n]`` without allocating (numba copies a possibly overlapping source first)."""
    for i in range(n):
        dst[i] = src[i]


@hot
def place_mines(mines, n_mines, first, nbr, deg, work, rng):
    """Place ``n_mines`` uniformly outside ``first`` and its neighbours (the Gnomine first-click rule).

    ``work`` is an int32 scratch array of length n so that simulations allocate nothing; ``rng`` is an
    ``obook.rng`` state.
    """
    n = mines.size
    mines[:] = 0
    mines[first] = 1
    for k in range(deg[first]):
        mines[nbr[first, k]] = 1
    m = 0
    for c in range(n):
        if mines[c] == 0:
            work[m] = c
            m += 1
    mines[:] = 0
    for i in range(n_mines):
        j = i + rand_below(rng, m - i)
        t = work[i]
        work[i] = work[j]
        work[j] = t
        mines[work[i]] = 1


@hot
def count_around(mines, cell, nbr, deg):
    """Number of mines among the neighbours of ``cell``."""
    s = 0
    for k in range(deg[cell]):
        s += mines[nbr[cell, k]]
    return s


@hot
def reveal(obs, mines, cell, nbr, deg, out_cells):
    """Reveal ``cell`` on ``obs`` given the layout ``mines``; return the number of cells newly shown.

    Returns -1 without touching ``obs`` when ``cell`` holds a mine. A zero opens its neighbours (flood fill);
    the newly revealed cells are written to ``out_cells`` (length n), which doubles as the flood stack.
    """
    if mines[cell]:
        return -1
    if obs[cell] != UNKNOWN:
        return 0
    obs[cell] = count_around(mines, cell, nbr, deg)
    out_cells[0] = cell
    n_out = 1
    head = 0
    while head < n_out:
        c = out_cells[head]
        head += 1
        if obs[c] != 0:
            continue
        for k in range(deg[c]):
            d = nbr[c, k]
            if obs[d] == UNKNOWN and mines[d] == 0:
                obs[d] = count_around(mines, d, nbr, deg)
                out_cells[n_out] = d
                n_out += 1
    return n_out


@dataclass
class MinesGame:
    """One game: the hidden layout, what the player sees, and the score so far.

    The layout is drawn from ``seed`` at the first click, so a game is replayed exactly from its seed and
    its clicks.
    """

    p: int
    q: int
    n_mines: int
    seed: int | None = None
    mines: np.ndarray | None = None
    obs: np.ndarray = field(init=False)
    revealed: int = 0
    status: int = PLAYING
    clicks: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_board(self.p, self.q, self.n_mines)
        self.nbr, self.deg = neighbour_table(self.p, self.q)
        self.obs = np.full(self.p * self.q, UNKNOWN, dtype=np.int8)
        self._out = np.zeros(self.p * self.q, dtype=np.int32)
        if self.mines is not None:
            self.mines = np.ascontiguousarray(self.mines, dtype=np.uint8)
            if self.mines.shape != (self.p * self.q,) or int(self.mines.sum()) != self.n_mines:
                raise ObookError(f"mine layout must have {self.p * self.q} cells with {self.n_mines} mines")

    @property
    def n(self) -> int:
        return self.p * self.q

    @property
    def safe_cells(self) -> int:
        return self.n - self.n_mines

    @property
    def score(self) -> float:
        """Safe cells revealed / (pq - N); 1 means solved."""
        return self.revealed / self.safe_cells

    def click(self, cell: int) -> int:
        """Reveal ``cell``; return the number of cells shown (-1 on a mine). Places the mines on the first click."""
        if self.status != PLAYING:
            raise ObookError(f"the game is over ({STATUS_NAMES[self.status]}); no more clicks")
        if not 0 <= cell < self.n:
            raise ObookError(f"cell {cell} is off the {self.p}x{self.q} board")
        if self.obs[cell] != UNKNOWN:
            raise ObookError(f"cell {divmod(cell, self.q)} is already revealed")
        if self.mines is None:
            self.mines = first_click_layout(self.p, self.q, self.n_mines, cell, self.nbr, self.deg, self.seed)
        self.clicks.append(cell)
        shown = reveal(self.obs, self.mines, cell, self.nbr, self.deg, self._out)
        if shown < 0:
            self.status = LOST
        else:
            self.revealed += shown
            if self.revealed == self.safe_cells:
                self.status = WON
        return shown

    def render(self, probabilities: np.ndarray | None = None, show_mines: bool = False) -> str:
        """ASCII board: counts for revealed cells, ``#`` hidden, ``*`` mines (when shown or lost).

        With ``probabilities`` each hidden cell shows its mine probability in percent, ``%`` marking it apart
        from the counts.
        """
        width = 5 if probabilities is not None else 2
        lines = ["   " + "".join(f"{c:>{width}}" for c in range(self.q))]
        for r in range(self.p):
            row = []
            for c in range(self.q):
                cell = r * self.q + c
                if self.obs[cell] != UNKNOWN:
                    s = "." if self.obs[cell] == 0 else str(int(self.obs[cell]))
                elif self.mines is not None and self.mines[cell] and (show_mines or self.status == LOST):
                    s = "*"
                elif probabilities is not None:
                    s = f"{100 * probabilities[cell]:.0f}%"
                else:
                    s = "#"
                row.append(f"{s:>{width}}")
            lines.append(f"{r:>3}" + "".join(row))
        return "\n".join(lines)


def first_click_layout(p, q, n_mines, first, nbr, deg, seed) -> np.ndarray:
    """The layout of a game with this seed and first click: uniform outside the first click's 3x3 block."""
    rng = np.random.default_rng(seed)
    banned = {first, *nbr[first, : deg[first]].tolist()}
    free = np.array([c for c in range(p * q) if c not in banned], dtype=np.int64)
    mines = np.zeros(p * q, dtype=np.uint8)
    mines[rng.choice(free, size=n_mines, replace=False)] = 1
    return mines


def position_from_ascii(text: str) -> tuple[int, int, np.ndarray, np.ndarray]:
    """Build ``(p, q, mines, obs)`` from rows of ``x`` (hidden mine), ``.`` (hidden safe), ``o`` (revealed).

    Revealed cells get their true counts, so tests can write positions as pictures.
    """
    rows = [line.split() for line in text.strip().splitlines()]
    p, q = len(rows), len(rows[0])
    if any(len(r) != q for r in rows):
        raise ObookError("ASCII position: every row needs the same number of cells")
    nbr, deg = neighbour_table(p, q)
    mines = np.zeros(p * q, dtype=np.uint8)
    obs = np.full(p * q, UNKNOWN, dtype=np.int8)
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch not in "x.o":
                raise ObookError(f"ASCII position: unknown cell {ch!r} (use x . o)")
            mines[r * q + c] = ch == "x"
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch == "o":
                obs[r * q + c] = count_around(mines, r * q + c, nbr, deg)
    return p, q, mines, obs
