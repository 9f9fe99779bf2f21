"""The BSR-UCT kernel (Alg. 2 of the seed paper): the tree arrays and the jitted simulations over them.

Start reading at ``run_simulations``: one call runs a batch of simulations over a preallocated ``Tree``;
``obook.mines.engine`` drives it for one decision.

A tree node is an observation (what the player has seen), keyed by a Zobrist hash of its revealed counts;
an edge is a hidden cell to reveal; the children of an edge are the different observations its reveal can
produce. One simulation descends with the UCT rule of the paper,
    Q(s, a) + c * sqrt(log(1 + n(s)) / (1 + n(s, a))),      Q starts at 0,
draws a layout ``z`` consistent with the node (the pluggable sampler) and reveals the chosen cell in ``z``.
A new observation becomes a leaf; a playout from there (``obook.mines.playouts``) ends the game and its
reward is backed up.

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
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from obook.jit import hot
from obook.mines.game import UNKNOWN, copy_cells, place_mines, reveal
from obook.mines.playouts import playout
from obook.mines.samplers import draw_layout
from obook.rng import rand_below

NO_NODE = -1  # end of a sibling list / edge without children
ROOT = 0  # the root node index
SAMPLER_FAILED = -1  # run_simulations result when the rejection sampler gave up


class Tree(NamedTuple):
    """The search tree as flat arrays of capacity M nodes and E edges; a node's edges are contiguous."""

    edge_start: np.ndarray  # int64[M]: first edge of the node
    edge_count: np.ndarray  # int32[M]: its number of edges (hidden cells allowed there)
    visits: np.ndarray  # int64[M]: n(s), simulations through the node
    key: np.ndarray  # uint64[M]: Zobrist hash of the node's observation
    next_sibling: np.ndarray  # int32[M]: next child of the same edge (NO_NODE ends the list)
    edge_cell: np.ndarray  # int32[E]: cell the edge reveals
    edge_visits: np.ndarray  # int64[E]: n(s, a)
    edge_value: np.ndarray  # float64[E]: Q(s, a), the mean reward backed up through the edge
    edge_child: np.ndarray  # int32[E]: first observation the edge led to (NO_NODE before any)
    nodes_used: np.ndarray  # int64[1]: nodes in use
    edges_used: np.ndarray  # int64[1]: edges in use


class Scratch(NamedTuple):
    """Per-simulation working memory for a board of n cells (shared by the kernel and the playouts)."""

    obs: np.ndarray  # int8[n]: the observation along the simulation
    layout: np.ndarray  # uint8[n]: the layout drawn (1 = mine)
    shown: np.ndarray  # int32[n]: cells shown by the last reveal, also its flood stack
    edge_path: np.ndarray  # int64[n+2]: edges from the root to the leaf
    node_path: np.ndarray  # int32[n+2]: nodes from the root to the leaf
    known_mine: np.ndarray  # uint8[n]: safe-first playout: cells proven to hold a mine
    queued: np.ndarray  # uint8[n]: safe-first playout: 1 while a cell is on the worklist
    worklist: np.ndarray  # int32[n]: safe-first playout: revealed cells whose count to re-examine
    proven_safe: np.ndarray  # uint8[n]: safe-first playout: cells proven safe (on the safe stack or played)
    safe_stack: np.ndarray  # int32[n]: safe-first playout: proven safe cells left to reveal
    candidates: np.ndarray  # int32[n]: playouts: hidden cells not yet tried, drawn without replacement
    place_work: np.ndarray  # int32[n]: scratch of place_mines
    all_cells: np.ndarray  # uint8[n]: all ones: every hidden cell is an edge of a node below the root


class Settings(NamedTuple):
    """What a search does, fixed for an engine (built by ``BsrUct``)."""

    n_mines: int  # mines on the board
    sampler: int  # REJECTION, METROPOLIS, METROPOLIS_INHERIT or EXACT (obook.mines.samplers)
    policy: int  # UNIFORM or SAFE_FIRST (obook.mines.playouts)
    root_belief: bool  # one layout per simulation drawn at the root (else one per node, the paper)
    c_uct: float  # exploration constant c
    win_reward: bool  # reward 1 for a solved board, else 0 (else the final score, the paper)
    max_tries: int  # rejection draws per layout before the sampler gives up


def make_tree(max_nodes: int, max_edges: int) -> Tree:
    return Tree(
        edge_start=np.zeros(max_nodes, np.int64),
        edge_count=np.zeros(max_nodes, np.int32),
        visits=np.zeros(max_nodes, np.int64),
        key=np.zeros(max_nodes, np.uint64),
        next_sibling=np.full(max_nodes, NO_NODE, np.int32),
        edge_cell=np.zeros(max_edges, np.int32),
        edge_visits=np.zeros(max_edges, np.int64),
        edge_value=np.zeros(max_edges, np.float64),
        edge_child=np.full(max_edges, NO_NODE, np.int32),
        nodes_used=np.zeros(1, np.int64),
        edges_used=np.zeros(1, np.int64),
    )


def make_scratch(n: int) -> Scratch:
    return Scratch(
        obs=np.zeros(n, np.int8),
        layout=np.zeros(n, np.uint8),
        shown=np.zeros(n, np.int32),
        edge_path=np.zeros(n + 2, np.int64),
        node_path=np.zeros(n + 2, np.int32),
        known_mine=np.zeros(n, np.uint8),
        queued=np.zeros(n, np.uint8),
        worklist=np.zeros(n, np.int32),
        proven_safe=np.zeros(n, np.uint8),
        safe_stack=np.zeros(n, np.int32),
        candidates=np.zeros(n, np.int32),
        place_work=np.zeros(n, np.int32),
        all_cells=np.ones(n, np.uint8),
    )


@hot
def observation_hash(obs, zob):
    h = np.uint64(0)
    for c in range(obs.size):
        if obs[c] != UNKNOWN:
            h ^= zob[c, obs[c]]
    return h


@hot
def _new_node(tree, obs, h, allowed):
    """Append a node for observation ``obs`` with one edge per hidden allowed cell; NO_NODE when full."""
    node = tree.nodes_used[0]
    e0 = tree.edges_used[0]
    if node >= tree.edge_start.size:
        return NO_NODE
    m = 0
    for c in range(obs.size):
        if obs[c] == UNKNOWN and allowed[c]:
            m += 1
    if e0 + m > tree.edge_cell.size:
        return NO_NODE
    e = e0
    for c in range(obs.size):
        if obs[c] == UNKNOWN and allowed[c]:
            tree.edge_cell[e] = c
            tree.edge_visits[e] = 0
            tree.edge_value[e] = 0.0
            tree.edge_child[e] = NO_NODE
            e += 1
    tree.edge_start[node] = e0
    tree.edge_count[node] = m
    tree.visits[node] = 0
    tree.key[node] = h
    tree.next_sibling[node] = NO_NODE
    tree.nodes_used[0] = node + 1
    tree.edges_used[0] = e
    return node


@hot
def init_tree(tree, root_obs, zob, root_allowed):
    """Reset the tree to a single root for ``root_obs``, its edges limited to ``root_allowed`` cells."""
    tree.nodes_used[0] = 0
    tree.edges_used[0] = 0
    return _new_node(tree, root_obs, observation_hash(root_obs, zob), root_allowed)


@hot
def _select(tree, node, c_uct, rng):
    """The UCT edge of ``node`` (ties to the first met from a random offset), -1 without edges."""
    start, count, visits = tree.edge_start[node], tree.edge_count[node], tree.visits[node]
    if count == 0:
        return -1
    lnv = math.log(1.0 + visits)
    offset = rand_below(rng, count)
    best = -np.inf
    best_e = -1
    for i in range(count):
        e = start + (i + offset) % count
        v = tree.edge_value[e] + c_uct * math.sqrt(lnv / (1.0 + tree.edge_visits[e]))
        if v > best:
            best = v
            best_e = e
    return best_e


@hot
def run_simulations(root_obs, nbr, deg, zob, settings, tree, scratch, work, ex, n_sims, rng):
    """Run ``n_sims`` BSR-UCT simulations from the tree's root; return how many ran (SAMPLER_FAILED when
    the rejection sampler gave up). ``work`` and ``ex`` are the sampler's scratch and exact tables
    (``obook.mines.samplers``), ``rng`` an ``obook.rng`` state. Everything a simulation touches is
    preallocated."""
    n_mines, kind, root_mode = settings.n_mines, settings.sampler, settings.root_belief
    max_tries, win_reward = settings.max_tries, settings.win_reward
    visits, keys, next_sibling = tree.visits, tree.key, tree.next_sibling
    edge_cell, edge_visits, edge_value, edge_child = tree.edge_cell, tree.edge_visits, tree.edge_value, tree.edge_child
    w_obs, z, out = scratch.obs, scratch.layout, scratch.shown
    path, path_nodes = scratch.edge_path, scratch.node_path
    n = root_obs.size
    safe_total = n - n_mines
    root_revealed = 0
    for c in range(n):
        if root_obs[c] != UNKNOWN:
            root_revealed += 1
    for sim in range(n_sims):
        copy_cells(w_obs, root_obs, n)
        revealed = root_revealed
        h = keys[ROOT]
        node = ROOT
        depth = 0
        path_nodes[0] = ROOT
        n_path = 1
        reward = -1.0
        if root_mode and root_revealed > 0:
            trials = max(visits[ROOT], 1)
            if draw_layout(kind, w_obs, n_mines, nbr, deg, work, ex, z, trials, max_tries, rng) == SAMPLER_FAILED:
                return SAMPLER_FAILED
        while visits[node] > 0:
            e = _select(tree, node, settings.c_uct, rng)
            if e < 0:
                break
            a = edge_cell[e]
            path[depth] = e
            depth += 1
            if revealed == 0:
                place_mines(z, n_mines, a, nbr, deg, scratch.place_work, rng)
            elif not root_mode:
                trials = max(visits[node], 1)
                if draw_layout(kind, w_obs, n_mines, nbr, deg, work, ex, z, trials, max_tries, rng) == SAMPLER_FAILED:
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
            while child != NO_NODE and keys[child] != h:
                child = next_sibling[child]
            if child == NO_NODE:
                child = _new_node(tree, w_obs, h, scratch.all_cells)
                if child != NO_NODE:
                    next_sibling[child] = edge_child[e]
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
                if draw_layout(kind, w_obs, n_mines, nbr, deg, work, ex, z, trials, max_tries, rng) == SAMPLER_FAILED:
                    return SAMPLER_FAILED
            final = playout(settings.policy, w_obs, z, revealed, safe_total, n_mines, nbr, deg, scratch, rng)
            if win_reward:
                reward = 1.0 if final >= safe_total else 0.0
            else:
                reward = min(final, safe_total) / safe_total
        for i in range(depth):
            e = path[i]
            edge_visits[e] += 1
            edge_value[e] += (reward - edge_value[e]) / edge_visits[e]
        for i in range(n_path):
            visits[path_nodes[i]] += 1
    return n_sims
