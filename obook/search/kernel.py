"""The MCTS kernel in numba: ``run_simulations`` runs a whole batch of simulations (select,
expand, playout, back-propagate the reward and the final score, AMAF) over the preallocated arrays
of a ``Tree`` (``obook/search/tree.py``) with the options of a ``KernelParams``
(``obook/search/config.py``).

Expansion creates one child per legal move under simple ko that does not fill the mover's own eye
(``is_true_eye``: false eyes are filled; ``is_eye`` with ``tree_eyes=simple``), plus PASS, each
with its prior (``obook/search/priors.py``) when priors are on. Positional superko
is known at the root only (``expand_root``: the player drops the root's children that superko
forbids); deeper nodes ignore it, as Fuego does: a repetition inside the tree is rare and only
makes the estimate there slightly wrong.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from obook.go.board import (
    BLACK,
    N_EMPTY,
    NO_POINT,
    PASS,
    PASSES,
    TO_MOVE,
    area_score,
    copy_board,
    is_eye,
    is_legal,
    is_true_eye,
    play,
)
from obook.go.ladder import LadderScratch, ladder_units, new_ladder_scratch
from obook.jit import hot
from obook.playout.policies import max_playout_moves, playout_score, run_playout
from obook.search.movemodel import FEATURES_LEN, log_strength, shipped_log_gamma
from obook.search.priors import model_prior, prior_for
from obook.search.selection import select_child, widening_order
from obook.search.shapes import shipped_shape_evidence
from obook.search.tree import N_NODES, ROOT, init_node, swap_siblings

MAX_DEPTH = 1024


class Scratch(NamedTuple):
    """Per-simulation working memory."""

    path: np.ndarray  # int32[MAX_DEPTH]: nodes from the root to the leaf
    seq: np.ndarray  # int32[L]: every move of the simulation (tree part, then playout)
    seq_color: np.ndarray  # int8[L]: who played it
    played_stamp: np.ndarray  # int64[cells]: 4 * simulation number + colour of the earliest later play at a point
    policy_scratch: np.ndarray  # int32[cells]: scratch of the playout policy
    amaf_children: np.ndarray  # int32[cells]: the children of a path node that the AMAF update credits
    child_values: np.ndarray  # float64[cells]: the selection values of a node's children
    counters: np.ndarray  # int64[1]: simulations run with this scratch (the generation in played_stamp)
    shape_evidence: np.ndarray  # float64[65536]: the priors' learned shape evidence (read only)
    move_log_gamma: np.ndarray  # float64[TABLE_SIZE]: the move model's log-strengths (read only)
    features: np.ndarray  # int64[FEATURES_LEN]: scratch of the move model
    ladder: LadderScratch  # the ladder reader's board and stack (``ladders``)


def new_search_scratch(size: int) -> Scratch:
    cells = (size + 2) ** 2
    length = MAX_DEPTH + max_playout_moves(size) + 8
    return Scratch(
        path=np.zeros(MAX_DEPTH + 1, np.int32),
        seq=np.zeros(length, np.int32),
        seq_color=np.zeros(length, np.int8),
        played_stamp=np.zeros(cells, np.int64),
        policy_scratch=np.zeros(cells, np.int32),
        amaf_children=np.zeros(cells, np.int32),
        child_values=np.zeros(cells, np.float64),
        counters=np.zeros(1, np.int64),
        shape_evidence=shipped_shape_evidence(),
        move_log_gamma=shipped_log_gamma(),
        features=np.zeros(FEATURES_LEN, np.int64),
        ladder=new_ladder_scratch(size),
    )


@hot(inline="always")
def _set_prior(tree, node, b, p, c, params, shapes, ladder):
    visits, wins = prior_for(b, p, c, params.prior_even, params.prior_weight, shapes, ladder)
    _store_prior(tree, node, visits, wins)


@hot(inline="always")
def _store_prior(tree, node, visits, wins):
    tree.prior_visits[node] = visits
    tree.prior_wins[node] = wins
    tree.visits[node] = visits
    tree.wins[node] = wins
    tree.wins_sq[node] = wins
    tree.amaf_visits[node] = visits
    tree.amaf_wins[node] = wins


@hot
def _set_model_priors(tree, node, b, c, params, sc, start, end):
    """The priors of the children ``start:end`` of ``node`` from the move model (``prior_model``):
    each child's probability among its siblings. The move before the last is the parent's move
    (unknown at the root: none). With ``ladders`` each child's ladder verdict is added."""
    parent = tree.parent[node]
    before_last = tree.move[parent] if parent >= 0 else NO_POINT
    top = -1e300
    for k in range(start, end):
        m = tree.move[k]
        s = log_strength(b, m, c, before_last, sc.move_log_gamma, sc.features)
        tree.prior_wins[k] = s  # held here (then its exponential) until the sum is known
        tree.prior_visits[k] = ladder_units(b, m, c, sc.ladder) if params.ladders and m != PASS else 0
        top = max(top, s)
    total = 0.0
    for k in range(start, end):
        e = math.exp(tree.prior_wins[k] - top)
        tree.prior_wins[k] = e
        total += e
    for k in range(start, end):
        probability = tree.prior_wins[k] / total
        visits, wins = model_prior(probability, end - start, params.prior_even, params.prior_weight,
                                   tree.prior_visits[k])
        _store_prior(tree, k, visits, wins)


@hot
def expand(tree, node, b, params, sc):
    """Create the children of ``node`` (see the module docstring).
    Returns False when the tree is full (the node then stays a leaf)."""
    c = b.scalars[TO_MOVE]
    n_empty = b.scalars[N_EMPTY]
    start = tree.meta[N_NODES]
    if start + n_empty + 1 > tree.move.shape[0]:
        return False
    priors = params.priors and not params.prior_model
    ladders = params.ladders
    shapes = sc.shape_evidence
    true_eyes = params.true_eyes
    k = start
    for i in range(n_empty):
        p = b.empties[i]
        if is_legal(b, p, c) and not (is_true_eye(b, p, c) if true_eyes else is_eye(b, p, c)):
            init_node(tree, k, p, node)
            if priors:
                _set_prior(tree, k, b, p, c, params, shapes, ladder_units(b, p, c, sc.ladder) if ladders else 0)
            k += 1
    init_node(tree, k, PASS, node)
    if priors:
        _set_prior(tree, k, b, PASS, c, params, shapes, 0)
    k += 1
    if params.priors and params.prior_model:
        _set_model_priors(tree, node, b, c, params, sc, start, k)
    tree.first_child[node] = start
    tree.n_children[node] = k - start
    tree.meta[N_NODES] = k
    return True


@hot
def expand_root(tree, root_board, params, sc, allowed):
    """Expand the root if it is not yet, then keep only its children whose move ``allowed[move]``
    permits (PASS always): how the player applies positional superko, which ``expand`` does not
    know, to the root (a reused subtree's root was expanded as a deeper node). Siblings keep their
    order."""
    root = tree.meta[ROOT]
    if tree.n_children[root] == 0:
        expand(tree, root, root_board, params, sc)
    first = tree.first_child[root]
    k = first
    for child in range(first, first + tree.n_children[root]):
        m = tree.move[child]
        if m == PASS or allowed[m]:
            if child != k:
                swap_siblings(tree, k, child)
            k += 1
    tree.n_children[root] = k - first


@hot(inline="always")
def reward_for_black(score, params):
    """1 for a Black win, 0 for a loss, 1/2 for a draw; with ``score_reward``
    ``(1 - w) * win + w * (1 + tanh(score / 20)) / 2``."""
    if score > 0:
        win = 1.0
    elif score < 0:
        win = 0.0
    else:
        win = 0.5
    if not params.score_reward:
        return win
    w = params.score_weight
    return (1.0 - w) * win + w * (0.5 + 0.5 * math.tanh(score / 20.0))


@hot(inline="always")
def _credit_amaf(tree, node, stamp, reward, played_stamp, credited):
    """Add an AMAF visit and ``reward`` to each child of ``node`` whose point ``played_stamp``
    marks with ``stamp`` (played first, later in this simulation, by the player to move at
    ``node``). The children to credit are gathered first into ``credited`` without a branch (each
    child is stored, the count moves on only for a hit): a branch on whether the point was played
    goes either way at random and is often mispredicted, and writing every child's statistics
    dirties the tree's cache lines for the many children not played (``docs/benchmarks.md``).
    PASS reads point 0 (``NO_POINT``, a border point, never stamped)."""
    first = tree.first_child[node]
    count = 0
    for child in range(first, first + tree.n_children[node]):
        m = tree.move[child]
        credited[count] = child
        count += played_stamp[m if m != PASS else NO_POINT] == stamp
    for k in range(count):
        child = credited[k]
        tree.amaf_visits[child] += 1.0
        tree.amaf_wins[child] += reward


@hot
def run_simulations(tree, root_board, work, params, rng, sc, count):
    """Run ``count`` simulations from the root; returns the number of playout moves made."""
    root = tree.meta[ROOT]
    komi = params.komi
    policy = params.policy
    threshold = params.expand_threshold
    rave = params.rave
    widening = params.widening
    total_moves = 0
    for _ in range(count):
        copy_board(work, root_board)
        node = root
        depth = 0
        sc.path[0] = node
        n_seq = 0
        finished = work.scalars[PASSES] >= 2
        # Selection and expansion.
        while not finished and depth < MAX_DEPTH:
            if tree.n_children[node] == 0:
                if node != root and tree.visits[node] - tree.prior_visits[node] < threshold:
                    break
                if not expand(tree, node, work, params, sc):
                    break
            if widening and tree.visits[node] > 0.0:
                widening_order(tree, node)
            child = select_child(tree, node, params, sc.child_values)
            p = tree.move[child]
            sc.seq[n_seq] = p
            sc.seq_color[n_seq] = work.scalars[TO_MOVE]
            n_seq += 1
            play(work, p)
            node = child
            depth += 1
            sc.path[depth] = node
            finished = work.scalars[PASSES] >= 2
        # Simulation.
        if finished:
            score = area_score(work, komi)
        else:
            moves, n_seq, two_passes = run_playout(work, policy, rng, sc.policy_scratch, sc.seq, sc.seq_color, n_seq,
                                                   None, 0.0)
            total_moves += moves
            score = playout_score(work, komi, two_passes)
        black_reward = reward_for_black(score, params)
        score += params.score_shift
        score_sq = score * score
        # Back-propagation along the path.
        for d in range(depth, -1, -1):
            n = sc.path[d]
            if d > 0:
                mover = sc.seq_color[d - 1]
            else:
                mover = 3 - root_board.scalars[TO_MOVE]
            r = black_reward if mover == BLACK else 1.0 - black_reward
            tree.visits[n] += 1.0
            tree.wins[n] += r
            tree.wins_sq[n] += r * r
            tree.score_sum[n] += score
            tree.score_sq[n] += score_sq
        # AMAF: credit every child of a path node whose move its player made first later on.
        if rave:
            sc.counters[0] += 1
            gen = sc.counters[0]
            for i in range(n_seq - 1, -1, -1):
                p = sc.seq[i]
                to_move = sc.seq_color[i]
                stamp = 4 * gen + to_move
                if p != PASS:
                    sc.played_stamp[p] = stamp
                if i < depth:
                    r = black_reward if to_move == BLACK else 1.0 - black_reward
                    _credit_amaf(tree, sc.path[i], stamp, r, sc.played_stamp, sc.amaf_children)
    return total_moves
