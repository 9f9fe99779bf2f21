"""Monte-Carlo tree search (UCT, UCB1-tuned, RAVE) in numba.

One call of ``run_simulations`` runs a whole budget of simulations (select, expand, playout,
back-propagate) over the preallocated arrays of a ``Tree``; Python only configures it, calls it in
chunks (so a time budget can be checked and analysis reported) and reads the root's statistics.

Tree layout. Node 0 is unused; ``ROOT`` is stored in ``meta``. The children of a node are contiguous
(``first_child .. first_child + n_children``), all created when the node is expanded: one per legal
move that does not fill the mover's own eye, plus PASS. ``wins`` and ``visits`` of a node are from the
point of view of the player who made ``move``; AMAF statistics likewise.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

import numpy as np

from obook.go.board import (
    BLACK,
    N_EMPTY,
    PASS,
    PASSES,
    SIZE,
    TO_MOVE,
    area_score,
    copy_board,
    is_eye,
    is_legal,
    new_board,
    play,
    settled_area_score,
)
from obook.jit import hot
from obook.playout.policies import (
    POLICY_NAMES,
    max_playout_moves,
    select_move,
)
from obook.go.position import Position
from obook.rng import make_rng
from obook.search.config import SearchConfig
from obook.search.player import Player, decide, resolve_seed
from obook.search.priors import prior_for
from obook.search.shapes import shipped_shape_evidence
from obook.search.result import MoveStats, SearchResult

NO_NODE = -1
MAX_DEPTH = 1024

# meta slots
N_NODES = 0
ROOT = 1

# float parameter slots
P_EXPLORATION = 0
P_TUNED_C1 = 1
P_TUNED_C2 = 2
P_FPU = 3
P_RAVE_K = 4
P_RAVE_BIAS = 5
P_WIDEN_A = 6
P_WIDEN_B = 7
P_SCORE_WEIGHT = 8
P_KOMI = 9
P_PRIOR_EVEN = 10
P_PRIOR_WEIGHT = 11
N_FLOAT_PARAMS = 12

# integer parameter slots
I_SELECTION = 0  # 0 UCB1, 1 UCB1-tuned
I_RAVE = 1
I_RAVE_SCHEDULE = 2  # 0 alpha, 1 beta
I_EXPAND_THRESHOLD = 3
I_WIDENING = 4
I_REWARD = 5  # 0 win/loss, 1 score
I_POLICY = 6
I_PRIORS = 7
N_INT_PARAMS = 8


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
    meta: np.ndarray  # int64[2]: node count, root


class Scratch(NamedTuple):
    """Per-simulation working memory."""

    path: np.ndarray  # int32[MAX_DEPTH]: nodes from the root to the leaf
    seq: np.ndarray  # int32[L]: every move of the simulation (tree part, then playout)
    seq_color: np.ndarray  # int8[L]: who played it
    played_gen: np.ndarray  # int32[cells]: generation stamp of played_color
    played_color: np.ndarray  # int8[cells]: colour of the earliest later play at a point
    policy_scratch: np.ndarray  # int32[cells]: scratch of the playout policy
    counters: np.ndarray  # int64[1]: generation counter
    shape_evidence: np.ndarray  # float64[65536]: the priors' learned shape evidence (read only)


def new_tree(capacity: int) -> Tree:
    tree = Tree(
        move=np.zeros(capacity, np.int32),
        parent=np.zeros(capacity, np.int32),
        first_child=np.zeros(capacity, np.int32),
        n_children=np.zeros(capacity, np.int32),
        visits=np.zeros(capacity),
        wins=np.zeros(capacity),
        wins_sq=np.zeros(capacity),
        amaf_visits=np.zeros(capacity),
        amaf_wins=np.zeros(capacity),
        prior_visits=np.zeros(capacity),
        prior_wins=np.zeros(capacity),
        meta=np.zeros(2, np.int64),
    )
    reset_tree(tree)
    return tree


def new_search_scratch(size: int) -> Scratch:
    cells = (size + 2) ** 2
    length = MAX_DEPTH + max_playout_moves(size) + 8
    return Scratch(
        path=np.zeros(MAX_DEPTH + 1, np.int32),
        seq=np.zeros(length, np.int32),
        seq_color=np.zeros(length, np.int8),
        played_gen=np.zeros(cells, np.int32),
        played_color=np.zeros(cells, np.int8),
        policy_scratch=np.zeros(cells, np.int32),
        counters=np.zeros(1, np.int64),
        shape_evidence=shipped_shape_evidence(),
    )


@hot
def reset_tree(tree):
    """An empty tree whose root is node 1 (unexpanded)."""
    tree.meta[N_NODES] = 2
    tree.meta[ROOT] = 1
    _init_node(tree, 1, PASS, NO_NODE)


@hot(inline="always")
def _init_node(tree, node, move, parent):
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


@hot(inline="always")
def _set_prior(tree, node, b, p, c, fparams, shapes):
    visits, wins = prior_for(b, p, c, fparams[P_PRIOR_EVEN], fparams[P_PRIOR_WEIGHT], shapes)
    tree.prior_visits[node] = visits
    tree.prior_wins[node] = wins
    tree.visits[node] = visits
    tree.wins[node] = wins
    tree.wins_sq[node] = wins
    tree.amaf_visits[node] = visits
    tree.amaf_wins[node] = wins


@hot
def expand(tree, node, b, fparams, iparams, shapes):
    """Create the children of ``node``: legal non-eye moves of the side to move, and PASS, each
    with its prior (``obook/search/priors.py``) when priors are on.
    Returns False when the tree is full (the node then stays a leaf)."""
    c = b.scalars[TO_MOVE]
    n_empty = b.scalars[N_EMPTY]
    start = tree.meta[N_NODES]
    if start + n_empty + 1 > tree.move.shape[0]:
        return False
    priors = iparams[I_PRIORS] != 0
    k = start
    for i in range(n_empty):
        p = b.empties[i]
        if is_legal(b, p, c) and not is_eye(b, p, c):
            _init_node(tree, k, p, node)
            if priors:
                _set_prior(tree, k, b, p, c, fparams, shapes)
            k += 1
    _init_node(tree, k, PASS, node)
    if priors:
        _set_prior(tree, k, b, PASS, c, fparams, shapes)
    k += 1
    tree.first_child[node] = start
    tree.n_children[node] = k - start
    tree.meta[N_NODES] = k
    return True


@hot(inline="always")
def _rave_weight(tree, child, fparams, iparams):
    """Weight of the AMAF mean in the value of ``child`` (0: plain Monte-Carlo mean)."""
    n = tree.visits[child]
    if iparams[I_RAVE_SCHEDULE] == 0:
        alpha = min(1.0, n / fparams[P_RAVE_K])
        return 1.0 - alpha
    na = tree.amaf_visits[child]
    b = fparams[P_RAVE_BIAS]
    return na / (n + na + 4.0 * b * b * n * na + 1e-9)


@hot
def child_value(tree, child, log_parent, fparams, iparams):
    """The selection score of ``child``: (RAVE-mixed) mean plus the UCB exploration term."""
    n = tree.visits[child]
    rave = iparams[I_RAVE] != 0
    na = tree.amaf_visits[child]
    if n == 0.0:
        if rave and na > 0.0:
            return tree.amaf_wins[child] / na
        return fparams[P_FPU]
    mean = tree.wins[child] / n
    value = mean
    if rave and na > 0.0:
        beta = _rave_weight(tree, child, fparams, iparams)
        value = (1.0 - beta) * mean + beta * tree.amaf_wins[child] / na
    c = fparams[P_EXPLORATION]
    if c > 0.0:
        if iparams[I_SELECTION] == 0:
            value += c * math.sqrt(log_parent / n)
        else:
            var = max(tree.wins_sq[child] / n - mean * mean, 0.0)
            v = var + fparams[P_TUNED_C1] * math.sqrt(log_parent / n)
            value += c * math.sqrt(log_parent / n * min(v, fparams[P_TUNED_C2]))
    return value


@hot
def select_child(tree, node, fparams, iparams):
    first = tree.first_child[node]
    count = tree.n_children[node]
    if iparams[I_WIDENING] != 0:
        limit = int(fparams[P_WIDEN_A] + tree.visits[node] ** fparams[P_WIDEN_B])
        count = min(count, max(limit, 1))
    log_parent = math.log(max(tree.visits[node], 1.0))
    best = first
    best_value = -1e300
    for child in range(first, first + count):
        v = child_value(tree, child, log_parent, fparams, iparams)
        if v > best_value:
            best_value = v
            best = child
    return best


@hot
def _widening_order(tree, node):
    """Keep the children of ``node`` sorted by AMAF mean (then visits), best first, so progressive
    widening considers the most promising ones (insertion sort: the order changes little)."""
    first = tree.first_child[node]
    last = first + tree.n_children[node]
    for i in range(first + 1, last):
        j = i
        while j > first and _amaf_key(tree, j) > _amaf_key(tree, j - 1):
            _swap_nodes(tree, j, j - 1)
            j -= 1


@hot(inline="always")
def _amaf_key(tree, child):
    na = tree.amaf_visits[child]
    if na > 0.0:
        return tree.amaf_wins[child] / na + 1e-6 * tree.visits[child]
    return 0.5 + 1e-6 * tree.visits[child]


@hot
def _swap_nodes(tree, a, b):
    """Swap two sibling nodes (and re-point their children's parent links)."""
    for arr in (tree.move, tree.first_child, tree.n_children):
        t = arr[a]
        arr[a] = arr[b]
        arr[b] = t
    for farr in (tree.visits, tree.wins, tree.wins_sq, tree.amaf_visits, tree.amaf_wins,
                 tree.prior_visits, tree.prior_wins):
        u = farr[a]
        farr[a] = farr[b]
        farr[b] = u
    for x in (a, b):
        f = tree.first_child[x]
        if f != NO_NODE:
            for c in range(f, f + tree.n_children[x]):
                tree.parent[c] = x


@hot(inline="always")
def _reward_for_black(score, fparams, iparams):
    if score > 0:
        win = 1.0
    elif score < 0:
        win = 0.0
    else:
        win = 0.5
    if iparams[I_REWARD] == 0:
        return win
    w = fparams[P_SCORE_WEIGHT]
    return (1.0 - w) * win + w * (0.5 + 0.5 * math.tanh(score / 20.0))


@hot
def run_simulations(tree, root_board, work, fparams, iparams, rng, sc, count):
    """Run ``count`` simulations from the root; returns the number of playout moves made."""
    root = tree.meta[ROOT]
    komi = fparams[P_KOMI]
    policy = iparams[I_POLICY]
    threshold = iparams[I_EXPAND_THRESHOLD]
    rave = iparams[I_RAVE] != 0
    widening = iparams[I_WIDENING] != 0
    size = root_board.scalars[SIZE]
    cap = max_playout_moves(size)
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
                if not expand(tree, node, work, fparams, iparams, sc.shape_evidence):
                    break
            if widening and tree.visits[node] > 0.0:
                _widening_order(tree, node)
            child = select_child(tree, node, fparams, iparams)
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
            moves = 0
            passes = 0
            while passes < 2 and moves < cap:
                color = work.scalars[TO_MOVE]
                p = select_move(work, policy, rng, sc.policy_scratch)
                play(work, p)
                sc.seq[n_seq] = p
                sc.seq_color[n_seq] = color
                n_seq += 1
                moves += 1
                if p == PASS:
                    passes += 1
                else:
                    passes = 0
            total_moves += moves
            score = settled_area_score(work, komi) if passes >= 2 else area_score(work, komi)
        black_reward = _reward_for_black(score, fparams, iparams)
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
        # AMAF: credit every child of a path node whose move its player made first later on.
        if rave:
            sc.counters[0] += 1
            gen = np.int32(sc.counters[0])
            for i in range(n_seq - 1, -1, -1):
                p = sc.seq[i]
                if p != PASS:
                    sc.played_gen[p] = gen
                    sc.played_color[p] = sc.seq_color[i]
                if i < depth:
                    n = sc.path[i]
                    to_move = sc.seq_color[i]
                    r = black_reward if to_move == BLACK else 1.0 - black_reward
                    first = tree.first_child[n]
                    for child in range(first, first + tree.n_children[n]):
                        m = tree.move[child]
                        if m != PASS and sc.played_gen[m] == gen and sc.played_color[m] == to_move:
                            tree.amaf_visits[child] += 1.0
                            tree.amaf_wins[child] += r
    return total_moves


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


def pack_params(config: SearchConfig, komi: float) -> tuple[np.ndarray, np.ndarray]:
    f = np.zeros(N_FLOAT_PARAMS)
    f[P_EXPLORATION] = config.exploration
    f[P_TUNED_C1] = config.tuned_c1
    f[P_TUNED_C2] = config.tuned_c2
    f[P_FPU] = config.first_play_urgency
    f[P_RAVE_K] = config.rave_k
    f[P_RAVE_BIAS] = config.rave_bias
    f[P_WIDEN_A] = config.widening_a
    f[P_WIDEN_B] = config.widening_b
    f[P_SCORE_WEIGHT] = config.score_weight
    f[P_KOMI] = komi
    f[P_PRIOR_EVEN] = config.prior_even
    f[P_PRIOR_WEIGHT] = config.prior_weight
    i = np.zeros(N_INT_PARAMS, np.int64)
    i[I_SELECTION] = 0 if config.selection == "ucb1" else 1
    i[I_RAVE] = int(config.rave)
    i[I_RAVE_SCHEDULE] = 0 if config.rave_schedule == "alpha" else 1
    i[I_EXPAND_THRESHOLD] = config.expand_threshold
    i[I_WIDENING] = int(config.widening)
    i[I_REWARD] = 0 if config.reward == "win" else 1
    i[I_POLICY] = POLICY_NAMES[config.policy]
    i[I_PRIORS] = int(config.priors)
    return f, i


class MCTSPlayer(Player):
    """UCT with RAVE over one tree, reused between the moves of a game."""

    def __init__(self, config: SearchConfig):
        self.config = config
        self.rng = make_rng(resolve_seed(config.seed))
        self.tree = new_tree(config.max_nodes)
        self.spare = new_tree(config.max_nodes)
        self._size = None
        self._root_moves: list[tuple[int, int]] | None = None
        self._root_setup = None

    def new_game(self) -> None:
        reset_tree(self.tree)
        self._root_moves = None

    # ---- tree reuse -----------------------------------------------------------------------------

    def _prepare_root(self, position: Position) -> None:
        """Make the tree's root the current position, keeping the subtree of the moves played
        since the last search when possible."""
        setup = (position.size, position.komi, tuple(position.setup_black), tuple(position.setup_white), position.first_to_move)
        known = self._root_moves
        reusable = (
            self.config.reuse_tree
            and known is not None
            and setup == self._root_setup
            and len(position.moves) >= len(known)
            and position.moves[: len(known)] == known
        )
        if reusable:
            node = int(self.tree.meta[ROOT])
            for _, point in position.moves[len(known):]:
                child = self._child_with_move(node, point)
                if child == NO_NODE:
                    reusable = False
                    break
                node = child
        if reusable and node != int(self.tree.meta[ROOT]):
            compact_subtree(self.tree, self.spare, node)
            self.tree, self.spare = self.spare, self.tree
        elif not reusable:
            reset_tree(self.tree)
        self._root_moves = list(position.moves)
        self._root_setup = setup

    def _child_with_move(self, node: int, point: int) -> int:
        first = int(self.tree.first_child[node])
        if first == NO_NODE:
            return NO_NODE
        for child in range(first, first + int(self.tree.n_children[node])):
            if int(self.tree.move[child]) == point:
                return child
        return NO_NODE

    # ---- search ---------------------------------------------------------------------------------

    def genmove(self, position, seconds=None, playouts=None, on_progress=None, progress_interval=0.5):
        seconds, playouts = self.budget(seconds, playouts)
        self._prepare_root(position)
        fparams, iparams = pack_params(self.config, position.komi)
        work = new_board(position.size)
        sc = new_search_scratch(position.size)
        start = time.perf_counter()
        last_report = start
        done = 0
        chunk = 64
        while done < playouts:
            step = min(chunk, playouts - done)
            t0 = time.perf_counter()
            run_simulations(self.tree, position.board, work, fparams, iparams, self.rng, sc, step)
            done += step
            now = time.perf_counter()
            spent = now - t0
            if spent < 0.02:
                chunk = min(chunk * 2, 1 << 16)
            elif spent > 0.08 and chunk > 16:
                chunk //= 2
            if seconds is not None and now - start >= seconds:
                break
            if on_progress is not None and now - last_report >= progress_interval:
                on_progress(self.result(position, done, now - start))
                last_report = now
        return self.result(position, done, time.perf_counter() - start)

    def root_stats(self, position: Position) -> list[MoveStats]:
        tree = self.tree
        root = int(tree.meta[ROOT])
        first = int(tree.first_child[root])
        stats = []
        if first == NO_NODE:
            return stats
        for child in range(first, first + int(tree.n_children[root])):
            n = float(tree.visits[child] - tree.prior_visits[child])
            wins = float(tree.wins[child] - tree.prior_wins[child])
            mean = wins / n if n > 0 else 0.0
            var = max(float(tree.wins_sq[child] - tree.prior_wins[child]) / n - mean * mean, 0.0) if n > 0 else 0.0
            na = float(tree.amaf_visits[child] - tree.prior_visits[child])
            amaf_wins = float(tree.amaf_wins[child] - tree.prior_wins[child])
            stats.append(
                MoveStats(
                    point=int(tree.move[child]), visits=int(n), winrate=mean, variance=var,
                    amaf_visits=int(na), amaf_winrate=amaf_wins / na if na > 0 else 0.0,
                    pv=self.principal_variation(child),
                )
            )
        stats.sort(key=lambda s: (s.visits, s.winrate), reverse=True)
        return stats

    def principal_variation(self, node: int, min_visits: int = 2, limit: int = 30) -> list[int]:
        tree = self.tree
        pv = [int(tree.move[node])]
        while len(pv) < limit:
            first = int(tree.first_child[node])
            if first == NO_NODE:
                break
            count = int(tree.n_children[node])
            real = tree.visits[first : first + count] - tree.prior_visits[first : first + count]
            best = first + int(np.argmax(real))
            if real[best - first] < min_visits:
                break
            pv.append(int(tree.move[best]))
            node = best
        return pv

    def result(self, position: Position, done: int, elapsed: float) -> SearchResult:
        stats = self.root_stats(position)
        return decide(self.config, position, stats, done, elapsed, int(self.tree.meta[N_NODES]))


__all__ = ["MCTSPlayer", "Tree", "new_tree", "new_search_scratch", "run_simulations"]
