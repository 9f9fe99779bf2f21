"""The MCTS player (UCT, UCB1-tuned, RAVE): Python configures the kernel, calls it in chunks (so a
time budget, a cancel token and analysis reports are checked between them), reuses the tree
between the moves of a game and reads the root's statistics.

The search itself: ``tree.py`` (the arrays), ``selection.py`` (the formulas), ``kernel.py`` (the
simulations).
"""

from __future__ import annotations

import time

import numpy as np

from obook.go.board import BLACK, new_board
from obook.go.position import Position
from obook.rng import make_rng
from obook.search.config import SearchConfig
from obook.search.dynkomi import DynamicKomi, effective_komi
from obook.search.flat import superko_allowed
from obook.search.kernel import expand_root, new_search_scratch, run_simulations
from obook.search.player import ROOT_MOVES, ROOT_PRIORS, Player, cancelled, decide, resolve_seed
from obook.search.result import MoveStats, SearchResult, score_moments
from obook.search.tree import N_NODES, NO_NODE, ROOT, compact_subtree, new_tree, reset_tree


# A timed search stops rather than run fewer simulations than this in its last chunk.
MIN_FINAL_CHUNK = 8
RESULT_RESERVE_CAP = 0.05  # seconds: one slow result (a first call, a page fault) does not eat the next move


def _simulations_until(remaining: float, done: int, elapsed: float) -> int:
    """How many simulations fit in ``remaining`` seconds at this search's rate so far, so that a
    timed search ends on its deadline instead of overrunning it by part of a chunk."""
    if remaining <= 0.0:
        return 0
    if elapsed <= 0.0:
        return done
    return int(done * remaining / elapsed)


class MCTSPlayer(Player):
    """UCT with RAVE over one tree, reused between the moves of a game."""

    root_controls = frozenset({ROOT_MOVES, ROOT_PRIORS})

    def __init__(self, config: SearchConfig):
        self.config = config
        self.rng = make_rng(resolve_seed(config.seed))
        self.tree = new_tree(config.max_nodes)
        self.spare = new_tree(config.max_nodes)
        self._size = None
        self._root_moves: list[tuple[int, int]] | None = None
        self._root_setup = None
        self._dynamic_komi: dict[int, DynamicKomi] = {}  # per colour (dynamic_komi=on)
        self._extra_komi = 0.0  # the extra komi the last search gave, for the player to move
        self._result_seconds = 0.0  # what reading the last search's result took: kept off the next deadline

    def new_game(self) -> None:
        reset_tree(self.tree)
        self._root_moves = None
        self._dynamic_komi = {}
        self._extra_komi = 0.0

    def reseed(self, seed: int) -> None:
        self.rng = make_rng(seed or 1)

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
        if position.moves:  # the root's move is the last one played (the move model's "move before")
            self.tree.move[int(self.tree.meta[ROOT])] = position.moves[-1][1]
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

    def genmove(self, position, seconds=None, playouts=None, on_progress=None, progress_interval=0.5, cancel=None,
                root_moves=None, root_priors=None):
        """``root_moves(point)``: whether the search may consider that first move (GTP analysis's
        allow/avoid; a minimax book's search of the moves outside the book; pass is always
        considered). The restriction stays in the tree: call ``new_game`` before a search without
        it. ``root_priors``: {point: (virtual visits, value for the player to move)} added to the
        root's children (a book's values as prior knowledge: its soft mode)."""
        called = time.perf_counter()
        budget = self.budget(seconds, playouts)
        self._prepare_root(position)
        self._extra_komi = self._next_extra_komi(position) if self.config.dynamic_komi else 0.0
        params = self.config.kernel_params(position.komi,
                                           effective_komi(position.komi, self._extra_komi, position.to_move))
        work = new_board(position.size)
        sc = new_search_scratch(position.size)
        if position.passes < 2:
            allowed, repeats = superko_allowed(position)
            if root_moves is not None:
                for point in np.flatnonzero(allowed):
                    allowed[point] = bool(root_moves(int(point)))
            if position.superko or repeats or root_moves is not None or root_priors:
                expand_root(self.tree, position.board, params, sc, allowed)
            if root_priors:
                self._add_root_priors(root_priors)
        start = time.perf_counter()
        # The move's seconds count from the call, less what reading the result took last time.
        deadline = None if budget.seconds is None else called + budget.seconds - self._result_seconds
        last_report = start
        done = 0
        chunk = 64
        while done < budget.playouts:
            step = min(chunk, budget.playouts - done)
            t0 = time.perf_counter()
            if deadline is not None and done:
                step = min(step, _simulations_until(deadline - t0, done, t0 - start))
                if step < MIN_FINAL_CHUNK:
                    break
            run_simulations(self.tree, position.board, work, params, self.rng, sc, step)
            done += step
            now = time.perf_counter()
            spent = now - t0
            if spent < 0.02:
                chunk = min(chunk * 2, 1 << 16)
            elif spent > 0.08 and chunk > 16:
                chunk //= 2
            if deadline is not None and now >= deadline:
                break
            if on_progress is not None and now - last_report >= progress_interval:
                on_progress(self.result(position, done, now - start))
                last_report = now
            if cancelled(cancel):
                break
        finish = time.perf_counter()
        result = self.result(position, done, finish - start)
        self._result_seconds = min(time.perf_counter() - finish, RESULT_RESERVE_CAP)
        return result

    def _next_extra_komi(self, position: Position) -> float:
        """The extra komi of this search (``obook/search/dynkomi.py``), from the player's win rate at
        the root as tree reuse left it. When the extra komi falls, the tree's statistics (counted
        with more komi than the search now uses) are dropped."""
        tree = self.tree
        root = int(tree.meta[ROOT])
        visits = _real_visits(tree, root)
        value = 1.0 - float(tree.wins[root] - tree.prior_wins[root]) / visits if visits > 0 else None
        state = self._dynamic_komi.setdefault(position.to_move, DynamicKomi())
        before = state.extra
        extra = state.update(value, visits, len(position.moves), position.size, position.to_move)
        if extra < before:
            self._root_moves = None  # nothing reusable: _prepare_root starts a new tree for this position
            self._prepare_root(position)
        return extra

    def _add_root_priors(self, priors: dict[int, tuple[float, float]]) -> None:
        tree = self.tree
        root = int(tree.meta[ROOT])
        first = int(tree.first_child[root])
        for child in range(first, first + int(tree.n_children[root])):
            prior = priors.get(int(tree.move[child]))
            if prior is None:
                continue
            visits, value = prior
            for array, amount in ((tree.prior_visits, visits), (tree.visits, visits), (tree.amaf_visits, visits),
                                  (tree.prior_wins, visits * value), (tree.wins, visits * value),
                                  (tree.wins_sq, visits * value), (tree.amaf_wins, visits * value)):
                array[child] += amount

    def root_stats(self, position: Position) -> list[MoveStats]:
        tree = self.tree
        root = int(tree.meta[ROOT])
        first = int(tree.first_child[root])
        stats = []
        if first == NO_NODE:
            return stats
        sign = _score_sign(position)
        for child in range(first, first + int(tree.n_children[root])):
            n = _real_visits(tree, child)
            wins = float(tree.wins[child] - tree.prior_wins[child])
            mean = wins / n if n > 0 else 0.0
            var = max(float(tree.wins_sq[child] - tree.prior_wins[child]) / n - mean * mean, 0.0) if n > 0 else 0.0
            score_mean, score_stdev = score_moments(float(tree.score_sum[child]), float(tree.score_sq[child]), n, sign)
            na = float(round(tree.amaf_visits[child] - tree.prior_visits[child]))
            amaf_wins = float(tree.amaf_wins[child] - tree.prior_wins[child])
            pv, pv_visits = self.principal_variation(child)
            stats.append(
                MoveStats(
                    point=int(tree.move[child]), visits=int(n), winrate=mean, variance=var,
                    amaf_visits=int(na), amaf_winrate=amaf_wins / na if na > 0 else 0.0,
                    pv=pv, prior=float(tree.prior_wins[child]),
                    score_mean=score_mean, score_stdev=score_stdev, pv_visits=pv_visits,
                )
            )
        stats.sort(key=lambda s: (s.visits, s.winrate), reverse=True)
        return stats

    def principal_variation(self, node: int, min_visits: int = 2, limit: int = 30) -> tuple[list[int], list[int]]:
        """The moves from ``node`` down its most visited children, and each one's visits (KataGo's
        ``pvVisits``)."""
        tree = self.tree
        pv = [int(tree.move[node])]
        pv_visits = [int(round(tree.visits[node] - tree.prior_visits[node]))]
        while len(pv) < limit:
            first = int(tree.first_child[node])
            if first == NO_NODE:
                break
            count = int(tree.n_children[node])
            real = np.round(tree.visits[first : first + count] - tree.prior_visits[first : first + count])
            best = first + int(np.argmax(real))
            if real[best - first] < min_visits:
                break
            pv.append(int(tree.move[best]))
            pv_visits.append(int(real[best - first]))
            node = best
        return pv, pv_visits

    def root_score(self, position: Position) -> float | None:
        """The mean final score of the simulations through the root (this search's and those kept
        by tree reuse), for the player to move."""
        tree = self.tree
        root = int(tree.meta[ROOT])
        return score_moments(float(tree.score_sum[root]), float(tree.score_sq[root]), _real_visits(tree, root),
                             _score_sign(position))[0]

    def result(self, position: Position, done: int, elapsed: float) -> SearchResult:
        stats = self.root_stats(position)
        # Win rates under an extra komi say nothing about losing the game: no resignation on them.
        config = self.config if not self._extra_komi else self.config.replace(resign_threshold=0.0)
        result = decide(config, position, stats, done, elapsed, int(self.tree.meta[N_NODES]),
                        score_mean=self.root_score(position))
        result.extra_komi = self._extra_komi
        return result


def _real_visits(tree, node: int) -> float:
    """The simulations through ``node``: its visits less the priors' virtual ones, a whole number
    (the difference of two fractional sums can fall just below it, and ``int`` would lose one)."""
    return float(round(tree.visits[node] - tree.prior_visits[node]))


def _score_sign(position: Position) -> float:
    """The tree counts scores from Black's view (``tree.py``); results give them for the player to move."""
    return 1.0 if position.to_move == BLACK else -1.0


__all__ = ["MCTSPlayer"]
