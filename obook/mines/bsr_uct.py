"""BSR-UCT (Alg. 2 of the seed paper): UCT over observation histories, with the hidden layout sampled.

Start reading at ``run_simulations``: one jitted call runs a batch of simulations over preallocated tree
arrays; ``BsrUct`` owns the arrays, handles budgets in simulations or seconds, and ``play_game`` plays whole
games with it.

A tree node is an observation (what the player has seen), keyed by a Zobrist hash of its revealed counts;
an edge is a hidden cell to reveal; the children of an edge are the different observations its reveal can
produce. One simulation descends with the UCT rule of the paper,
    Q(s, a) + c * sqrt(log(1 + n(s)) / (1 + n(s, a))),      Q starts at 0,
draws a layout ``z`` consistent with the node (the pluggable sampler) and reveals the chosen cell in ``z``.
A new observation becomes a leaf; a playout from there (uniform as in the paper, or ``safe-first``) ends
the game and its score is backed up. The move played is the root edge simulated most often.

Two belief modes:
- ``node`` (the paper): a fresh layout is drawn at every tree node from that node's observation; a
  Metropolis sampler runs n(s) steps there (Alg. 3 and 4). The playout keeps the last layout drawn, which
  is a draw from the leaf's belief too, because the leaf's observation was generated from it.
- ``root``: one layout per simulation, drawn at the root and followed to the end. For a consistent sampler
  the observations met along the way have exactly the same law as in ``node`` mode (Bayes: given the
  observations so far, the root draw is a draw from the current belief), at a fraction of the cost. The
  exact sampler always runs in this mode: its enumeration is done once per move.

Before the first click no sampler is needed: the game itself places the mines after the click, outside its
3x3 block, and so does every simulation.

Tree arrays (``tree`` tuple, capacity ``max_nodes`` nodes and ``max_edges`` edges):
    0 node_edge_start[max_nodes]  first edge of the node      1 node_edge_count[max_nodes]
    2 node_visits[max_nodes]      n(s): simulations through s  3 node_hash[max_nodes]  observation key
    4 node_next[max_nodes]        next sibling under the same edge (NO_NODE ends the list)
    5 edge_cell[max_edges]        cell revealed by the edge    6 edge_n[max_edges]  n(s, a)
    7 edge_q[max_edges]           mean final score             8 edge_child[max_edges]  first child
    9 counts[2]                   nodes and edges in use
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit

import obook.jit  # noqa: F401  (sets numba's source-keyed cache directory)
from obook.errors import ObookError
from obook.mines.game import (
    PLAYING,
    UNKNOWN,
    WON,
    MinesGame,
    neighbour_table,
    place_mines,
    reveal,
)
from obook.mines.samplers import (
    DEFAULT_MAX_STEPS,
    DEFAULT_MAX_TRIES,
    DEFAULT_RESERVOIR,
    EXACT,
    EXACT_INCONSISTENT,
    EXACT_SAMPLED,
    EXACT_TOO_BIG,
    draw_layout,
    empty_exact,
    exact_prepare,
    exact_probabilities,
    make_work,
    sampler_kind,
)
from obook.stats import wilson_interval

NO_NODE = -1  # end of a sibling list / edge without children
ROOT = 0  # the root node index
UNIFORM, SAFE_FIRST = 0, 1  # playout policies
POLICIES = {"uniform": UNIFORM, "safe-first": SAFE_FIRST}
BELIEF_MODES = ("node", "root")
REWARDS = ("score", "win")  # backed-up value: final score (the paper) or 1 for a solved board
SAMPLER_FAILED = -1  # run_simulations result when the rejection sampler gave up
ZOBRIST_SEED = 20110101  # fixed so that observation keys are stable across runs
PLAYER_MAX_TRIES = 2_000_000  # rejection draws per position before a player falls back (about 1 s)
MAX_EDGES = 1 << 22  # tree edge capacity cap (about 100 MB); a full tree stops expanding, searches go on


def policy_kind(name: str) -> int:
    try:
        return POLICIES[name]
    except KeyError:
        raise ObookError(f"unknown playout policy {name!r}; choose one of {', '.join(POLICIES)}") from None


def zobrist_table(n: int) -> np.ndarray:
    """Random 64-bit keys per (cell, shown count); an observation's key is the XOR over its revealed cells."""
    rng = np.random.default_rng(ZOBRIST_SEED)
    return rng.integers(0, 2**63 - 1, size=(n, 9), dtype=np.int64).astype(np.uint64)


def make_tree(max_nodes: int, max_edges: int) -> tuple:
    return (
        np.zeros(max_nodes, np.int64),
        np.zeros(max_nodes, np.int32),
        np.zeros(max_nodes, np.int64),
        np.zeros(max_nodes, np.uint64),
        np.full(max_nodes, NO_NODE, np.int32),
        np.zeros(max_edges, np.int32),
        np.zeros(max_edges, np.int64),
        np.zeros(max_edges, np.float64),
        np.full(max_edges, NO_NODE, np.int32),
        np.zeros(2, np.int64),
    )


def make_scratch(n: int) -> tuple:
    """Search scratch: w_obs, z, reveal output, edge path, node path, known mines, queued, worklist,
    safe flags, safe stack, candidates, placement scratch."""
    return (
        np.zeros(n, np.int8),
        np.zeros(n, np.uint8),
        np.zeros(n, np.int32),
        np.zeros(n + 2, np.int64),
        np.zeros(n + 2, np.int32),
        np.zeros(n, np.uint8),
        np.zeros(n, np.uint8),
        np.zeros(n, np.int32),
        np.zeros(n, np.uint8),
        np.zeros(n, np.int32),
        np.zeros(n, np.int32),
        np.zeros(n, np.int32),
    )


@njit(cache=True)
def observation_hash(obs, zob):
    h = np.uint64(0)
    for c in range(obs.size):
        if obs[c] != UNKNOWN:
            h ^= zob[c, obs[c]]
    return h


@njit(cache=True)
def _new_node(tree, obs, h, allowed):
    """Append a node for observation ``obs`` with one edge per hidden allowed cell; NO_NODE when full."""
    edge_start, edge_count, visits, hashes, nxt = tree[0], tree[1], tree[2], tree[3], tree[4]
    edge_cell, edge_n, edge_q, edge_child, counts = tree[5], tree[6], tree[7], tree[8], tree[9]
    node = counts[0]
    e0 = counts[1]
    if node >= edge_start.size:
        return NO_NODE
    m = 0
    for c in range(obs.size):
        if obs[c] == UNKNOWN and allowed[c]:
            m += 1
    if e0 + m > edge_cell.size:
        return NO_NODE
    e = e0
    for c in range(obs.size):
        if obs[c] == UNKNOWN and allowed[c]:
            edge_cell[e] = c
            edge_n[e] = 0
            edge_q[e] = 0.0
            edge_child[e] = NO_NODE
            e += 1
    edge_start[node] = e0
    edge_count[node] = m
    visits[node] = 0
    hashes[node] = h
    nxt[node] = NO_NODE
    counts[0] = node + 1
    counts[1] = e
    return node


@njit(cache=True)
def init_tree(tree, root_obs, zob, root_allowed):
    """Reset the tree to a single root for ``root_obs``, its edges limited to ``root_allowed`` cells."""
    tree[9][0] = 0
    tree[9][1] = 0
    return _new_node(tree, root_obs, observation_hash(root_obs, zob), root_allowed)


@njit(cache=True)
def _select(tree, node, c_uct):
    start, count, visits = tree[0][node], tree[1][node], tree[2][node]
    edge_n, edge_q = tree[6], tree[7]
    if count == 0:
        return -1
    lnv = math.log(1.0 + visits)
    offset = np.random.randint(count)
    best = -np.inf
    best_e = -1
    for i in range(count):
        e = start + (i + offset) % count
        v = edge_q[e] + c_uct * math.sqrt(lnv / (1.0 + edge_n[e]))
        if v > best:
            best = v
            best_e = e
    return best_e


@njit(cache=True)
def _first_click(w_obs, z, n_mines, cell, nbr, deg, out, place_work):
    place_mines(z, n_mines, cell, nbr, deg, place_work)
    return reveal(w_obs, z, cell, nbr, deg, out)


@njit(cache=True)
def _playout_uniform(w_obs, z, revealed, safe_total, n_mines, nbr, deg, sw):
    out, cand, place_work = sw[2], sw[10], sw[11]
    n = w_obs.size
    if revealed == 0:
        revealed += _first_click(w_obs, z, n_mines, np.random.randint(n), nbr, deg, out, place_work)
    m = 0
    for c in range(n):
        if w_obs[c] == UNKNOWN:
            cand[m] = c
            m += 1
    while revealed < safe_total and m > 0:
        i = np.random.randint(m)
        c = cand[i]
        m -= 1
        cand[i] = cand[m]
        if w_obs[c] != UNKNOWN:
            continue
        if z[c]:
            break
        revealed += reveal(w_obs, z, c, nbr, deg, out)
    return revealed


@njit(cache=True)
def _push(c, wl, n_wl, queued):
    if not queued[c]:
        queued[c] = 1
        wl[n_wl] = c
        n_wl += 1
    return n_wl


@njit(cache=True)
def _playout_safe_first(w_obs, z, revealed, safe_total, n_mines, nbr, deg, sw):
    """Playout that first reveals cells proven safe by single-count deduction, else a uniform hidden cell
    not proven to be a mine. Deductions use only ``w_obs``, never ``z``."""
    out, known, queued, wl = sw[2], sw[5], sw[6], sw[7]
    safe_flag, safe, cand, place_work = sw[8], sw[9], sw[10], sw[11]
    n = w_obs.size
    if revealed == 0:
        revealed += _first_click(w_obs, z, n_mines, np.random.randint(n), nbr, deg, out, place_work)
    known[:] = 0
    queued[:] = 0
    safe_flag[:] = 0
    n_wl = 0
    n_safe = 0
    m = 0
    for c in range(n):
        if w_obs[c] == UNKNOWN:
            cand[m] = c
            m += 1
        else:
            n_wl = _push(c, wl, n_wl, queued)
    while revealed < safe_total:
        while n_wl > 0:
            n_wl -= 1
            c = wl[n_wl]
            queued[c] = 0
            free = 0
            flagged = 0
            for k in range(deg[c]):
                d = nbr[c, k]
                if w_obs[d] == UNKNOWN:
                    if known[d]:
                        flagged += 1
                    else:
                        free += 1
            if free == 0:
                continue
            if w_obs[c] == flagged:
                for k in range(deg[c]):
                    d = nbr[c, k]
                    if w_obs[d] == UNKNOWN and not known[d] and not safe_flag[d]:
                        safe_flag[d] = 1
                        safe[n_safe] = d
                        n_safe += 1
            elif w_obs[c] - flagged == free:
                for k in range(deg[c]):
                    d = nbr[c, k]
                    if w_obs[d] == UNKNOWN and not known[d]:
                        known[d] = 1
                        for k2 in range(deg[d]):
                            e = nbr[d, k2]
                            if w_obs[e] != UNKNOWN:
                                n_wl = _push(e, wl, n_wl, queued)
        c = -1
        if n_safe > 0:
            n_safe -= 1
            c = safe[n_safe]
            if w_obs[c] != UNKNOWN:
                continue
        else:
            while m > 0:
                i = np.random.randint(m)
                x = cand[i]
                m -= 1
                cand[i] = cand[m]
                if w_obs[x] == UNKNOWN and not known[x]:
                    c = x
                    break
            if c < 0:
                break
        if z[c]:
            break
        k = reveal(w_obs, z, c, nbr, deg, out)
        revealed += k
        for i in range(k):
            x = out[i]
            n_wl = _push(x, wl, n_wl, queued)
            for k2 in range(deg[x]):
                e = nbr[x, k2]
                if w_obs[e] != UNKNOWN:
                    n_wl = _push(e, wl, n_wl, queued)
    return revealed


@njit(cache=True)
def run_simulations(root_obs, n_mines, nbr, deg, zob, tree, sw, work, ex, kind, policy, root_mode, c_uct,
                    win_reward, n_sims, max_tries, seed):
    """Run ``n_sims`` BSR-UCT simulations from the tree's root; return how many ran (SAMPLER_FAILED when
    the rejection sampler gave up). The reward is the final score (the paper) or, with ``win_reward``,
    1 for a solved board and 0 otherwise. Everything a simulation touches is preallocated."""
    np.random.seed(seed)
    visits, hashes, nxt = tree[2], tree[3], tree[4]
    edge_cell, edge_n, edge_q, edge_child = tree[5], tree[6], tree[7], tree[8]
    w_obs, z, out, path, path_nodes, place_work = sw[0], sw[1], sw[2], sw[3], sw[4], sw[11]
    n = root_obs.size
    safe_total = n - n_mines
    root_revealed = 0
    for c in range(n):
        if root_obs[c] != UNKNOWN:
            root_revealed += 1
    all_cells = np.ones(n, np.uint8)
    for sim in range(n_sims):
        w_obs[:] = root_obs
        revealed = root_revealed
        h = hashes[ROOT]
        node = ROOT
        depth = 0
        path_nodes[0] = ROOT
        n_path = 1
        reward = -1.0
        if root_mode and root_revealed > 0:
            trials = max(visits[ROOT], 1)
            if draw_layout(kind, w_obs, n_mines, nbr, deg, work, ex, z, trials, max_tries) == SAMPLER_FAILED:
                return SAMPLER_FAILED
        while visits[node] > 0:
            e = _select(tree, node, c_uct)
            if e < 0:
                break
            a = edge_cell[e]
            path[depth] = e
            depth += 1
            if revealed == 0:
                place_mines(z, n_mines, a, nbr, deg, place_work)
            elif not root_mode:
                trials = max(visits[node], 1)
                if draw_layout(kind, w_obs, n_mines, nbr, deg, work, ex, z, trials, max_tries) == SAMPLER_FAILED:
                    return SAMPLER_FAILED
            if z[a]:
                reward = 0.0 if win_reward else revealed / safe_total
                break
            k = reveal(w_obs, z, a, nbr, deg, out)
            for i in range(k):
                h ^= zob[out[i], w_obs[out[i]]]
            revealed += k
            if revealed >= safe_total:
                reward = 1.0
                break
            child = edge_child[e]
            while child != NO_NODE and hashes[child] != h:
                child = nxt[child]
            if child == NO_NODE:
                child = _new_node(tree, w_obs, h, all_cells)
                if child != NO_NODE:
                    nxt[child] = edge_child[e]
                    edge_child[e] = child
                    path_nodes[n_path] = child
                    n_path += 1
                break
            node = child
            path_nodes[n_path] = node
            n_path += 1
        if reward < 0.0:
            if depth == 0 and revealed > 0 and not root_mode:
                trials = max(visits[node], 1)
                if draw_layout(kind, w_obs, n_mines, nbr, deg, work, ex, z, trials, max_tries) == SAMPLER_FAILED:
                    return SAMPLER_FAILED
            if policy == UNIFORM:
                final = _playout_uniform(w_obs, z, revealed, safe_total, n_mines, nbr, deg, sw)
            else:
                final = _playout_safe_first(w_obs, z, revealed, safe_total, n_mines, nbr, deg, sw)
            if win_reward:
                reward = 1.0 if final >= safe_total else 0.0
            else:
                reward = min(final, safe_total) / safe_total
        for i in range(depth):
            e = path[i]
            edge_n[e] += 1
            edge_q[e] += (reward - edge_q[e]) / edge_n[e]
        for i in range(n_path):
            visits[path_nodes[i]] += 1
    return n_sims


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
        self.p, self.q, self.n_mines = p, q, n_mines
        self.n = p * q
        self.kind = sampler_kind(sampler)
        self.policy = policy_kind(policy)
        self.root_mode = belief == "root" or self.kind == EXACT
        self.c_uct = float(c_uct)
        if reward not in REWARDS:
            raise ObookError(f"unknown reward {reward!r}; choose score (the paper) or win")
        self.win_reward = reward == "win"
        self.max_tries = int(max_tries)
        self.reservoir, self.max_steps = int(reservoir), int(max_steps)
        self.nbr, self.deg = neighbour_table(p, q)
        self.zob = zobrist_table(self.n)
        self.sw = make_scratch(self.n)
        self.work = make_work(self.n, n_mines)
        self.tree = make_tree(1, 1)

    def _ensure_capacity(self, nodes: int) -> None:
        edges = min(nodes * self.n, max(MAX_EDGES, 4 * self.n))
        if self.tree[0].size < nodes or self.tree[5].size < edges:
            self.tree = make_tree(max(nodes, self.tree[0].size), max(edges, self.tree[5].size))

    def _grow(self) -> None:
        """Double the tree, keeping its contents, so a timed search keeps expanding."""
        old = self.tree
        new = make_tree(2 * old[0].size, min(2 * old[5].size, MAX_EDGES))
        for a, b in zip(old[:9], new[:9]):
            b[: a.size] = a
        new[9][:] = old[9]
        self.tree = new

    def prepare(self, obs: np.ndarray, seed: int = 0) -> tuple | None:
        """Exact tables for ``obs``, or None when the enumeration is too long or nothing is revealed."""
        if not (obs != UNKNOWN).any():
            return None
        ex = exact_prepare(obs, self.n_mines, self.nbr, self.deg, self.reservoir, self.max_steps, seed)
        if ex[0] == EXACT_INCONSISTENT:
            raise ObookError(f"no layout of {self.n_mines} mines is consistent with the revealed counts")
        return None if ex[0] == EXACT_TOO_BIG else ex

    def search(self, obs: np.ndarray, sims: int | None = None, seconds: float | None = None, seed: int = 0,
               allowed: np.ndarray | None = None, ex: tuple | None = None) -> SearchResult:
        """Search from observation ``obs`` for ``sims`` simulations or ``seconds`` of wall time."""
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
        if self.kind == EXACT and (obs != UNKNOWN).any():
            ex = ex if ex is not None else self.prepare(obs, seed)
            if ex is None:
                raise ObookError("exact sampler: the frontier is too large to enumerate")
        else:
            ex = empty_exact()
        self.work[7][0] = 0
        self._ensure_capacity((sims + 1) if sims is not None else 1 << 14)
        init_tree(self.tree, obs, self.zob, allowed)
        t0 = time.perf_counter()
        done = 0
        ss = np.random.SeedSequence(seed)
        if sims is not None:
            done = self._run(obs, ex, sims, int(ss.generate_state(1)[0]))
        else:
            batch, k = 1, 0
            while True:
                if time.perf_counter() - t0 >= seconds and done > 0:
                    break
                if self.tree[9][0] + batch >= self.tree[0].size:
                    self._grow()
                tb = time.perf_counter()
                done += self._run(obs, ex, batch, int(np.random.SeedSequence([seed, k]).generate_state(1)[0]))
                k += 1
                per_sim = (time.perf_counter() - tb) / batch
                left = seconds - (time.perf_counter() - t0)
                # a simulation costs more as the tree grows (Metropolis runs n(s) steps), hence the margins
                batch = int(max(1, min(4 * batch, done, left / (3 * per_sim)))) if per_sim > 0 else 2 * batch
        elapsed = time.perf_counter() - t0
        tree = self.tree
        s, m = tree[0][ROOT], tree[1][ROOT]
        cells = tree[5][s : s + m].copy()
        visits = tree[6][s : s + m].copy()
        values = tree[7][s : s + m].copy()
        best = int(np.argmax(visits + values / 2))  # most simulated; values in [0, 1] only break ties
        return SearchResult(int(cells[best]), cells, visits, values, done, elapsed, int(tree[9][0]))

    def _run(self, obs, ex, n_sims, seed) -> int:
        done = run_simulations(obs, self.n_mines, self.nbr, self.deg, self.zob, self.tree, self.sw, self.work,
                               ex, self.kind, self.policy, self.root_mode, self.c_uct, self.win_reward, n_sims,
                               self.max_tries, seed)
        if done == SAMPLER_FAILED:
            raise SamplerGaveUp(
                f"rejection sampler gave up after {self.max_tries} layouts; the board is too large for it "
                "(use --sampler exact)"
            )
        return done


# ---------------------------------------------------------------- playing games


@dataclass
class PlayerConfig:
    """How the player chooses moves.

    ``max_tries``: layouts the rejection sampler draws before giving up on a position (the move is then
    searched with the exact sampler and counted as a fallback).
    ``first``: ``search`` (let BSR-UCT choose the first click), ``center``, ``corner`` or a cell index.
    ``shortcut``: reveal a cell the exact belief proves safe without searching (never loses value: the
    cell must be revealed sooner or later and its count only adds information). ``candidates``: when > 0,
    the root considers only that many cells least likely to hold a mine (exact belief). ``reward``:
    ``score`` (the paper) or ``win``.
    """

    sampler: str = "rejection"
    policy: str = "uniform"
    belief: str = "node"
    sims: int | None = 1000
    seconds: float | None = None
    c_uct: float = 1.0
    first: str | int = "search"
    shortcut: bool = False
    candidates: int = 0
    reward: str = "score"
    max_tries: int = PLAYER_MAX_TRIES


@dataclass
class GameRecord:
    """One finished game."""

    seed: int
    score: float
    won: bool
    moves: int
    searches: int
    simulations: int
    think_seconds: float
    first_cell: int
    clicks: list[int] = field(default_factory=list)
    fallback_searches: int = 0
    reservoir_moves: int = 0


def first_click_cell(first: str | int, p: int, q: int) -> int | None:
    """The fixed first click named by ``first``, or None when the search should choose it."""
    if isinstance(first, int):
        if not 0 <= first < p * q:
            raise ObookError(f"first click {first} is off the {p}x{q} board")
        return first
    if first == "search":
        return None
    if first == "center":
        return (p // 2) * q + q // 2
    if first == "corner":
        return 0
    raise ObookError(f"first click {first!r}: use search, center, corner or ROW,COL")


class Player:
    """Plays Mines with BSR-UCT under a ``PlayerConfig``."""

    def __init__(self, p: int, q: int, n_mines: int, config: PlayerConfig):
        self.p, self.q, self.n_mines, self.config = p, q, n_mines, config
        if (config.sims is None) == (config.seconds is None):
            raise ObookError("give exactly one budget: --sims or --seconds")
        self.engine = BsrUct(p, q, n_mines, config.sampler, config.policy, config.belief, config.c_uct,
                             config.reward, config.max_tries)
        self.fixed_first = first_click_cell(config.first, p, q)
        self._fallbacks: dict[str, BsrUct] = {}
        self.fallbacks = 0  # moves of the current game searched with a fallback sampler
        self.reservoir_moves = 0  # moves of the current game whose exact draws came from a reservoir

    def choose(self, game: MinesGame, seed: int) -> tuple[int, SearchResult | None]:
        """The next click for ``game`` and the search behind it (None when no search was needed).

        When the exact enumeration is too long (huge frontiers on expert boards) the move is searched
        with Metropolis with inheritance instead; when rejection gives up (a position whose consistent
        layouts are too rare to hit) it is searched with the exact sampler. ``self.fallbacks`` counts both.
        """
        cfg = self.config
        obs = game.obs
        if game.revealed == 0 and self.fixed_first is not None:
            return self.fixed_first, None
        ex = None
        allowed = None
        engine = self.engine
        if game.revealed > 0 and (cfg.shortcut or cfg.candidates > 0 or engine.kind == EXACT):
            ex = engine.prepare(obs, seed)
            if ex is not None:
                self.reservoir_moves += ex[0] == EXACT_SAMPLED
            if ex is not None and (cfg.shortcut or cfg.candidates > 0):
                prob = exact_probabilities(ex, self.n_mines, game.n)
                hidden = np.flatnonzero(obs == UNKNOWN)
                if cfg.shortcut:
                    sure = hidden[prob[hidden] <= 1e-12]
                    if sure.size:
                        return int(sure[0]), None
                if cfg.candidates > 0 and hidden.size > cfg.candidates:
                    rng = np.random.default_rng(seed)
                    order = hidden[np.lexsort((rng.random(hidden.size), np.round(prob[hidden], 12)))]
                    allowed = np.zeros(game.n, np.uint8)
                    allowed[order[: cfg.candidates]] = 1
            if ex is None and engine.kind == EXACT:
                engine = self._fallback("metropolis-inherit")
        try:
            result = engine.search(obs, cfg.sims, cfg.seconds, seed, allowed, ex if engine is self.engine else None)
        except SamplerGaveUp:
            result = self._fallback("exact").search(obs, cfg.sims, cfg.seconds, seed, allowed)
        return result.cell, result

    def _fallback(self, sampler: str) -> BsrUct:
        self.fallbacks += 1
        if sampler not in self._fallbacks:
            cfg = self.config
            self._fallbacks[sampler] = BsrUct(self.p, self.q, self.n_mines, sampler, cfg.policy, "root", cfg.c_uct,
                                              cfg.reward)
        return self._fallbacks[sampler]

    def play(self, seed: int) -> GameRecord:
        """Play one game whose layout and search randomness come from ``seed``."""
        game = MinesGame(self.p, self.q, self.n_mines, seed=seed)
        searches = sims = 0
        self.fallbacks = self.reservoir_moves = 0
        think = 0.0
        first = -1
        move = 0
        while game.status == PLAYING:
            t0 = time.perf_counter()
            cell, result = self.choose(game, int(np.random.SeedSequence([seed, move, 7]).generate_state(1)[0]))
            think += time.perf_counter() - t0
            if result is not None:
                searches += 1
                sims += result.simulations
            if first < 0:
                first = cell
            game.click(cell)
            move += 1
        return GameRecord(seed, game.score, game.status == WON, move, searches, sims, think, first,
                          list(game.clicks), self.fallbacks, self.reservoir_moves)


def summarise(records: list[GameRecord]) -> dict:
    """Mean score, win rate with its 95% interval, think time per move and per game."""
    g = len(records)
    wins = sum(r.won for r in records)
    moves = sum(r.moves for r in records)
    think = sum(r.think_seconds for r in records)
    lo, hi = wilson_interval(wins, g)
    scores = np.array([r.score for r in records]) if records else np.zeros(0)
    firsts: dict[int, int] = {}
    for r in records:
        firsts[r.first_cell] = firsts.get(r.first_cell, 0) + 1
    return {
        "games": g,
        "wins": wins,
        "win_rate": wins / g if g else 0.0,
        "win_rate_ci95": [lo, hi],
        "mean_score": float(scores.mean()) if g else 0.0,
        "mean_score_se": float(scores.std(ddof=1) / math.sqrt(g)) if g > 1 else 0.0,
        "moves": moves,
        "searches": sum(r.searches for r in records),
        "simulations": sum(r.simulations for r in records),
        "seconds_per_move": think / moves if moves else 0.0,
        "seconds_per_game": think / g if g else 0.0,
        "first_clicks": {str(k): v for k, v in sorted(firsts.items())},
        "fallback_searches": sum(r.fallback_searches for r in records),
        "reservoir_moves": sum(r.reservoir_moves for r in records),
    }


def play_games(p: int, q: int, n_mines: int, config: PlayerConfig, games: int, seed: int = 0,
               player: Player | None = None) -> list[GameRecord]:
    """Play ``games`` games with seeds ``seed, seed+1, ...`` (so runs are reproducible and comparable)."""
    if games < 1:
        raise ObookError(f"number of games {games} must be at least 1")
    player = player or Player(p, q, n_mines, config)
    return [player.play(seed + i) for i in range(games)]


__all__ = [
    "BsrUct",
    "GameRecord",
    "Player",
    "PlayerConfig",
    "SamplerGaveUp",
    "SearchResult",
    "play_games",
    "summarise",
    "wilson_interval",
]
