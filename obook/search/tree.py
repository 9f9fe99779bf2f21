"""The MCTS tree: flat preallocated arrays, one entry per node (the layout of mctx and pgx).

Node 0 is unused; the root is ``meta[ROOT]``. The children of a node are contiguous
(``first_child .. first_child + n_children``), all created when the node is expanded
(``obook/search/kernel.py``). ``wins`` and ``visits`` of a node are from the point of view of the
player who made ``move``; AMAF statistics likewise. ``score_sum`` and ``score_sq`` are the sum and sum
of squares of the final area score (komi included) of the real simulations through the node, always
from Black's point of view (positive: Black ahead), whoever made ``move``: one perspective makes the
back-up one addition per node and a reader flips the sign for White. Priors add no score, so their
count is ``visits - prior_visits``. Between the moves of a game ``compact_subtree`` keeps the subtree
of the moves played (tree reuse).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from obook.go.board import PASS
from obook.jit import hot

NO_NODE = -1

# meta slots
N_NODES = 0
ROOT = 1


class Tree(NamedTuple):
    """Search tree as flat arrays of capacity M (nodes)."""

    move: np.ndarray  # int32[M]: point that led to the node (PASS for a pass)
    parent: np.ndarray  # int32[M]: parent node, NO_NODE at the root
    first_child: np.ndarray  # int32[M]: first child, NO_NODE while unexpanded
    n_children: np.ndarray  # int32[M]: number of children (0 while unexpanded)
    visits: np.ndarray  # float64[M]: simulations through the node
    wins: np.ndarray  # float64[M]: sum of rewards for the player who made `move`
    wins_sq: np.ndarray  # float64[M]: sum of squared rewards (variance for UCB1-tuned)
    amaf_visits: np.ndarray  # float64[M]: AMAF simulations in which `move` was played later
    amaf_wins: np.ndarray  # float64[M]: their rewards for the player who made `move`
    prior_visits: np.ndarray  # float64[M]: virtual simulations of the prior, included in `visits`
    prior_wins: np.ndarray  # float64[M]: their virtual wins, included in `wins`
    score_sum: np.ndarray  # float64[M]: sum of the final scores (Black's view, komi included) of real simulations
    score_sq: np.ndarray  # float64[M]: sum of their squares (the score's spread)
    meta: np.ndarray  # int64[2]: node count, root


_NODE_DTYPES = {"move": np.int32, "parent": np.int32, "first_child": np.int32, "n_children": np.int32,
                "visits": np.float64, "wins": np.float64, "wins_sq": np.float64, "amaf_visits": np.float64,
                "amaf_wins": np.float64, "prior_visits": np.float64, "prior_wins": np.float64,
                "score_sum": np.float64, "score_sq": np.float64}
NODE_BYTES = sum(np.dtype(t).itemsize for t in _NODE_DTYPES.values())  # 88: what max_nodes costs a node


def new_tree(capacity: int) -> Tree:
    tree = Tree(**{name: np.zeros(capacity, dtype) for name, dtype in _NODE_DTYPES.items()},
                meta=np.zeros(2, np.int64))
    reset_tree(tree)
    return tree


@hot
def reset_tree(tree):
    """An empty tree whose root is node 1 (unexpanded)."""
    tree.meta[N_NODES] = 2
    tree.meta[ROOT] = 1
    init_node(tree, 1, PASS, NO_NODE)


@hot(inline="always")
def init_node(tree, node, move, parent):
    tree.move[node] = move
    tree.parent[node] = parent
    tree.first_child[node] = NO_NODE
    tree.n_children[node] = 0
    tree.visits[node] = 0.0
    tree.wins[node] = 0.0
    tree.wins_sq[node] = 0.0
    tree.amaf_visits[node] = 0.0
    tree.amaf_wins[node] = 0.0
    tree.prior_visits[node] = 0.0
    tree.prior_wins[node] = 0.0
    tree.score_sum[node] = 0.0
    tree.score_sq[node] = 0.0


@hot
def swap_siblings(tree, a, b):
    """Swap two sibling nodes (and re-point their children's parent links)."""
    for arr in (tree.move, tree.first_child, tree.n_children):
        t = arr[a]
        arr[a] = arr[b]
        arr[b] = t
    for farr in (tree.visits, tree.wins, tree.wins_sq, tree.amaf_visits, tree.amaf_wins,
                 tree.prior_visits, tree.prior_wins, tree.score_sum, tree.score_sq):
        u = farr[a]
        farr[a] = farr[b]
        farr[b] = u
    for x in (a, b):
        f = tree.first_child[x]
        if f != NO_NODE:
            for c in range(f, f + tree.n_children[x]):
                tree.parent[c] = x


@hot
def compact_subtree(src, dst, new_root):
    """Copy the subtree of ``src`` under ``new_root`` into ``dst`` (breadth first, children kept
    contiguous); ``dst``'s root is node 1. Returns the number of nodes copied."""
    dst.meta[N_NODES] = 2
    dst.meta[ROOT] = 1
    _copy_node(src, new_root, dst, 1, NO_NODE)
    head = 1
    tail = 2
    while head < tail:
        d = head
        head += 1
        s_first = dst.first_child[d]  # still holds src's first child, fixed below
        count = dst.n_children[d]
        if count == 0 or s_first == NO_NODE:
            dst.first_child[d] = NO_NODE
            dst.n_children[d] = 0
            continue
        if tail + count > dst.move.shape[0]:
            dst.first_child[d] = NO_NODE
            dst.n_children[d] = 0
            continue
        dst.first_child[d] = tail
        for k in range(count):
            _copy_node(src, s_first + k, dst, tail + k, d)
        tail += count
    dst.meta[N_NODES] = tail
    return tail - 1


@hot(inline="always")
def _copy_node(src, s, dst, d, parent):
    dst.move[d] = src.move[s]
    dst.parent[d] = parent
    dst.first_child[d] = src.first_child[s]
    dst.n_children[d] = src.n_children[s]
    dst.visits[d] = src.visits[s]
    dst.wins[d] = src.wins[s]
    dst.wins_sq[d] = src.wins_sq[s]
    dst.amaf_visits[d] = src.amaf_visits[s]
    dst.amaf_wins[d] = src.amaf_wins[s]
    dst.prior_visits[d] = src.prior_visits[s]
    dst.prior_wins[d] = src.prior_wins[s]
    dst.score_sum[d] = src.score_sum[s]
    dst.score_sq[d] = src.score_sq[s]
