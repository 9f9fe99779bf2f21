"""BSR-UCT for one decision: ``BsrUct`` owns the kernel's arrays, reuses them move after move, checks
the budget (simulations or seconds) and reads the chosen cell off the root.

The kernel (``obook.mines.kernel``) runs the simulations; ``obook.mines.player`` plays whole games.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from obook.errors import ObookError
from obook.mines.game import UNKNOWN, neighbour_table
from obook.mines.kernel import (
    ROOT,
    SAMPLER_FAILED,
    Settings,
    Tree,
    init_tree,
    make_scratch,
    make_tree,
    run_simulations,
)
from obook.mines.playouts import policy_kind
from obook.mines.samplers import (
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TRIES,
    DEFAULT_RESERVOIR,
    EXACT,
    EXACT_INCONSISTENT,
    EXACT_TOO_BIG,
    ExactTables,
    empty_exact,
    exact_prepare,
    make_work,
    sampler_kind,
)
from obook.rng import make_rng

BELIEF_MODES = ("node", "root")
REWARDS = ("score", "win")  # backed-up value: final score (the paper) or 1 for a solved board
ZOBRIST_SEED = 20110101  # fixed so that observation keys are stable across runs
MAX_EDGES = 1 << 22  # tree edge capacity cap (about 100 MB); a full tree stops expanding, searches go on


def zobrist_table(n: int) -> np.ndarray:
    """Random 64-bit keys per (cell, shown count); an observation's key is the XOR over its revealed cells."""
    rng = np.random.default_rng(ZOBRIST_SEED)
    return rng.integers(0, 2**63 - 1, size=(n, 9), dtype=np.int64).astype(np.uint64)


class SamplerGaveUp(ObookError):
    """The rejection sampler drew ``max_tries`` layouts without a consistent one."""


@dataclass
class SearchResult:
    """Outcome of one search: the chosen cell and the root statistics (per root edge)."""

    cell: int
    cells: np.ndarray
    visits: np.ndarray
    values: np.ndarray
    simulations: int
    seconds: float
    nodes: int


class BsrUct:
    """BSR-UCT for one board size: owns the tree and scratch arrays and reuses them move after move.

    ``sampler`` is one of ``rejection``, ``metropolis``, ``metropolis-inherit``, ``exact``; ``policy`` one of
    ``uniform``, ``safe-first``; ``belief`` ``node`` (resample at every node, the paper) or ``root``.
    """

    def __init__(self, p: int, q: int, n_mines: int, sampler: str = "rejection", policy: str = "uniform",
                 belief: str = "node", c_uct: float = 1.0, reward: str = "score",
                 max_tries: int = DEFAULT_MAX_TRIES,
                 reservoir: int = DEFAULT_RESERVOIR, max_steps: int = DEFAULT_MAX_STEPS):
        if belief not in BELIEF_MODES:
            raise ObookError(f"unknown belief mode {belief!r}; choose node or root")
        if not c_uct >= 0:
            raise ObookError(f"exploration constant {c_uct} must be >= 0")
        if reward not in REWARDS:
            raise ObookError(f"unknown reward {reward!r}; choose score (the paper) or win")
        self.p, self.q, self.n_mines = p, q, n_mines
        self.n = p * q
        kind = sampler_kind(sampler)
        self.settings = Settings(
            n_mines=int(n_mines),
            sampler=kind,
            policy=policy_kind(policy),
            root_belief=belief == "root" or kind == EXACT,
            c_uct=float(c_uct),
            win_reward=reward == "win",
            max_tries=int(max_tries),
        )
        self.reservoir, self.max_steps = int(reservoir), int(max_steps)
        self.nbr, self.deg = neighbour_table(p, q)
        self.zob = zobrist_table(self.n)
        self.scratch = make_scratch(self.n)
        self.work = make_work(self.n, n_mines)
        self.tree = make_tree(1, 1)

    @property
    def exact(self) -> bool:
        """Whether the belief is the exact sampler's, whose tables are prepared once per move."""
        return self.settings.sampler == EXACT

    def _ensure_capacity(self, nodes: int) -> None:
        edges = min(nodes * self.n, max(MAX_EDGES, 4 * self.n))
        if self.tree.edge_start.size < nodes or self.tree.edge_cell.size < edges:
            self.tree = make_tree(max(nodes, self.tree.edge_start.size), max(edges, self.tree.edge_cell.size))

    def _grow(self) -> None:
        """Double the tree, keeping its contents, so a timed search keeps expanding."""
        old = self.tree
        new = make_tree(2 * old.edge_start.size, min(2 * old.edge_cell.size, MAX_EDGES))
        for name in Tree._fields:
            a = getattr(old, name)
            getattr(new, name)[: a.size] = a
        self.tree = new

    def prepare(self, obs: np.ndarray, seed: int = 0) -> ExactTables | None:
        """Exact tables for ``obs``, or None when the enumeration is too long or nothing is revealed."""
        if not (obs != UNKNOWN).any():
            return None
        ex = exact_prepare(obs, self.n_mines, self.nbr, self.deg, self.reservoir, self.max_steps, make_rng(seed))
        if ex.status == EXACT_INCONSISTENT:
            raise ObookError(f"no layout of {self.n_mines} mines is consistent with the revealed counts")
        return None if ex.status == EXACT_TOO_BIG else ex

    def search(self, obs: np.ndarray, sims: int | None = None, seconds: float | None = None, seed: int = 0,
               allowed: np.ndarray | None = None, ex: ExactTables | None = None) -> SearchResult:
        """Search from observation ``obs`` for ``sims`` simulations or ``seconds`` of wall time.

        The search's random numbers come from one ``obook.rng`` state seeded from ``seed``."""
        obs = np.ascontiguousarray(obs, dtype=np.int8)
        if (sims is None) == (seconds is None):
            raise ObookError("give exactly one budget: a number of simulations or a number of seconds")
        if sims is not None and sims < 1:
            raise ObookError(f"simulation budget {sims} must be at least 1")
        if seconds is not None and not seconds > 0:
            raise ObookError(f"time budget {seconds} must be positive")
        if int((obs == UNKNOWN).sum()) <= self.n_mines:
            raise ObookError("the position is already solved: no hidden safe cell is left")
        allowed = np.ones(self.n, np.uint8) if allowed is None else np.ascontiguousarray(allowed, np.uint8)
        if not (allowed.astype(bool) & (obs == UNKNOWN)).any():
            raise ObookError("no hidden cell is allowed at the root")
        if self.exact and (obs != UNKNOWN).any():
            ex = ex if ex is not None else self.prepare(obs, seed)
            if ex is None:
                raise ObookError("exact sampler: the frontier is too large to enumerate")
        else:
            ex = empty_exact()
        self.work.has_chain[0] = 0
        self._ensure_capacity((sims + 1) if sims is not None else 1 << 14)
        init_tree(self.tree, obs, self.zob, allowed)
        # derived, not ``seed`` itself: ``prepare`` drew the exact tables' reservoirs from ``seed``
        rng = make_rng(int(np.random.SeedSequence(seed).generate_state(1)[0]))
        t0 = time.perf_counter()
        done = 0
        if sims is not None:
            done = self._run(obs, ex, sims, rng)
        else:
            batch = 1
            while True:
                if time.perf_counter() - t0 >= seconds and done > 0:
                    break
                if self.tree.nodes_used[0] + batch >= self.tree.edge_start.size:
                    self._grow()
                tb = time.perf_counter()
                done += self._run(obs, ex, batch, rng)
                per_sim = (time.perf_counter() - tb) / batch
                left = seconds - (time.perf_counter() - t0)
                # a simulation costs more as the tree grows (Metropolis runs n(s) steps), hence the margins
                batch = int(max(1, min(4 * batch, done, left / (3 * per_sim)))) if per_sim > 0 else 2 * batch
        elapsed = time.perf_counter() - t0
        tree = self.tree
        s, m = tree.edge_start[ROOT], tree.edge_count[ROOT]
        cells = tree.edge_cell[s : s + m].copy()
        visits = tree.edge_visits[s : s + m].copy()
        values = tree.edge_value[s : s + m].copy()
        best = int(np.argmax(visits + values / 2))  # most simulated; values in [0, 1] only break ties
        return SearchResult(int(cells[best]), cells, visits, values, done, elapsed, int(tree.nodes_used[0]))

    def _run(self, obs, ex, n_sims, rng) -> int:
        done = run_simulations(obs, self.nbr, self.deg, self.zob, self.settings, self.tree, self.scratch,
                               self.work, ex, n_sims, rng)
        if done == SAMPLER_FAILED:
            raise SamplerGaveUp(
                f"rejection sampler gave up after {self.settings.max_tries} layouts; the board is too large "
                "for it (use --sampler exact)"
            )
        return done
