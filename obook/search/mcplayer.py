"""The pure Monte-Carlo players (``algorithm=flat|pp|amaf|depth2``) behind the ``Player`` interface.

A search is a loop of *stages* (seed 003, Figure 2): in each stage every sample stream (a "slave",
with its own seeded generator) runs ``N`` samples in one jitted call from the current set of active
moves and returns its partial statistics; the partials are added in stream order, then progressive
pruning (``algorithm=pp``) updates the active set and checks the stop rules. ``MonteCarloPlayer``
runs the streams one after the other in this process; ``mcparallel.MasterSlavePlayer`` runs each in
its own process. Both add the same partials in the same order, so with the same seeds they reach
the same statistics and decisions bit for bit.

The move played is the active move with the best mean value (``value=score``: the mean score, the
seeds' choice; ``value=win``: the win rate), handed to ``decide`` for the pass and resign rules.
"""

from __future__ import annotations

import time

import numpy as np

from obook.go.board import PASS, SIZE, copy_board, new_board, play
from obook.go.position import Position
from obook.playout.policies import new_scratch, policy_code
from obook.rng import make_rng
from obook.search.config import SearchConfig
from obook.search.flat import board_candidates, root_candidates
from obook.search.montecarlo import (
    ALLOCATIONS,
    VALUES,
    moves_buffer,
    sample_all_moves_as_first,
    sample_depth2,
    sample_first_moves,
)
from obook.search.player import Player, cancelled, decide, resolve_seed, stream_seed
from obook.search.pruning import (
    CONTINUE,
    STOP_REASONS,
    SUM,
    SUM_SQ,
    WINS,
    N,
    new_stats,
    progressive_pruning,
    stop_reason,
)
from obook.search.result import MoveStats, SearchResult, pooled_score_mean, score_moments

TIMED_STAGE_SAMPLES = 512  # samples per stream and stage when the budget is in seconds


def stage_plan(playouts: int, stages: int, streams: int) -> list[int]:
    """Samples per stream in each stage: ``playouts`` split as evenly as possible over
    ``stages * streams`` (so every stream runs the same count in a stage)."""
    per_stream = -(-playouts // streams)
    base, extra = divmod(per_stream, stages)
    return [base + (1 if i < extra else 0) for i in range(stages) if base + (1 if i < extra else 0) > 0]


class SampleStream:
    """One slave's sampler: its generator, board copies and temperature statistics."""

    def __init__(self, config: SearchConfig, seed: int):
        self.config = config
        self.rng = make_rng(seed)
        self.policy = policy_code(config.policy)
        self.allocation = ALLOCATIONS[config.allocation]
        self.value_kind = VALUES[config.value]
        self.size = 0

    def reseed(self, seed: int) -> None:
        self.rng = make_rng(seed)

    def reset(self, board, komi: float, n_candidates: int) -> None:
        """Prepare for a search of ``board`` (the root; copied)."""
        size = int(board.scalars[SIZE])
        if size != self.size:
            self.size = size
            self.work = new_board(size)
            self.root = new_board(size)
            self.scratch = new_scratch(self.work)
            self.moves = moves_buffer(size)
            cells = self.work.color.shape[0]
            self.amaf = np.zeros((3, cells, 4))
            self.weights = np.ones((3, cells))
            self.first_seen = np.zeros(cells, np.int64)
            self.counters = np.zeros(1, np.int64)
        copy_board(self.root, board)
        self.komi = komi
        self.amaf[:] = 0.0
        self.order = np.zeros(max(n_candidates, 1), np.int64)
        self.done = 0

    def sample_first_moves(self, candidates: np.ndarray, active: np.ndarray, count: int, budget: int) -> np.ndarray:
        partial = new_stats(len(candidates))
        c = self.config
        sample_first_moves(self.root, self.work, candidates, len(candidates), active, self.order, self.allocation,
                           self.policy, self.rng, self.komi, self.scratch, count, self.value_kind, partial,
                           c.temperature, c.annealing, self.done, budget, self.amaf, self.weights, self.first_seen,
                           self.counters, self.moves)
        self.done += count
        return partial

    def sample_all_moves_as_first(self, count: int, budget: int) -> None:
        c = self.config
        sample_all_moves_as_first(self.root, self.policy, self.rng, self.komi, self.scratch, self.work, count,
                                  self.value_kind, c.temperature, c.annealing, self.done, budget, self.amaf,
                                  self.weights, self.first_seen, self.counters, self.moves)
        self.done += count


class MonteCarloPlayer(Player):
    """flat, pp and amaf over ``config.slaves`` sample streams run in this process; depth2."""

    def __init__(self, config: SearchConfig):
        self.config = config
        base = resolve_seed(config.seed)
        self.streams = [SampleStream(config, stream_seed(base, k)) for k in range(self.stream_count())]
        self.last_search: dict = {}

    def reseed(self, seed: int) -> None:
        """Stream ``k`` restarts from ``stream_seed(seed, k)``, as a player built with ``seed`` has it."""
        for k, stream in enumerate(self.streams):
            stream.reseed(stream_seed(seed, k))

    def stream_count(self) -> int:
        return max(self.config.slaves, self.config.processes) if self.config.algorithm in ("flat", "pp") else \
            self.config.slaves

    # --- the sample streams (overridden by the master/slave player) ---------------------------
    def start_streams(self, position: Position, candidates: np.ndarray) -> None:
        for stream in self.streams:
            stream.reset(position.board, position.komi, len(candidates))

    def run_stage(self, candidates: np.ndarray, active: np.ndarray, count: int, budget: int) -> list[np.ndarray]:
        return [stream.sample_first_moves(candidates, active, count, budget) for stream in self.streams]

    # --- searches -------------------------------------------------------------------------------
    def genmove(self, position, seconds=None, playouts=None, on_progress=None, progress_interval=0.5, cancel=None):
        budget = self.budget(seconds, playouts)
        seconds, playouts = budget.seconds, budget.playouts
        self.position = position
        if self.config.algorithm == "depth2":
            return self._depth2(position, seconds, playouts, on_progress, progress_interval, cancel)
        if self.config.algorithm == "amaf":
            return self._amaf(position, seconds, playouts, on_progress, progress_interval, cancel)
        return self._first_moves(position, seconds, playouts, on_progress, progress_interval, cancel)

    def _first_moves(self, position, seconds, playouts, on_progress, progress_interval, cancel) -> SearchResult:
        c = self.config
        candidates = np.array(root_candidates(position), np.int64)
        n = len(candidates)
        stats = new_stats(n)
        active = np.ones(n, np.int64)
        streams = self.stream_count()
        if seconds is None:
            plan = stage_plan(playouts, c.stages, streams)
            budget = sum(plan)
        else:
            plan, budget = [], 0
        self.start_streams(position, candidates)
        start = last_report = time.perf_counter()
        stage, reason, done = 0, CONTINUE, 0
        while True:
            if seconds is None:
                if stage >= len(plan):
                    break
                count = plan[stage]
            else:
                if time.perf_counter() - start >= seconds and done > 0:
                    break
                count = TIMED_STAGE_SAMPLES
            for partial in self.run_stage(candidates, active, count, budget):
                stats += partial
            done += count * streams
            stage += 1
            if c.algorithm == "pp" and n > 1:
                progressive_pruning(stats, n, active, c.rd, c.min_games, c.soft_pruning)
                reason = stop_reason(stats, n, active, c.rd, c.sigma_e, c.min_games)
                if reason != CONTINUE:
                    break
            now = time.perf_counter()
            if on_progress is not None and now - last_report >= progress_interval:
                on_progress(self._result(candidates, stats, active, done, now - start))
                last_report = now
            if cancelled(cancel):
                break
        self.last_search = {"stages": stage, "stop": STOP_REASONS[reason], "stats": stats.copy(),
                            "active": active.copy(), "candidates": candidates}
        return self._result(candidates, stats, active, done, time.perf_counter() - start)

    def _amaf(self, position, seconds, playouts, on_progress, progress_interval, cancel) -> SearchResult:
        candidates = np.array(root_candidates(position), np.int64)
        mover = position.to_move
        streams = self.streams
        for stream in streams:
            stream.reset(position.board, position.komi, len(candidates))
        plan = stage_plan(playouts, self.config.stages, len(streams)) if seconds is None else []
        budget = sum(plan)
        start = last_report = time.perf_counter()
        done = stage = 0
        while True:
            if seconds is None:
                if stage >= len(plan):
                    break
                count = plan[stage]
            elif time.perf_counter() - start >= seconds and done > 0:
                break
            else:
                count = TIMED_STAGE_SAMPLES
            for stream in streams:
                stream.sample_all_moves_as_first(count, budget)
            done += count * len(streams)
            stage += 1
            now = time.perf_counter()
            if on_progress is not None and now - last_report >= progress_interval:
                on_progress(self._amaf_result(candidates, mover, done, now - start))
                last_report = now
            if cancelled(cancel):
                break
        return self._amaf_result(candidates, mover, done, time.perf_counter() - start)

    def _amaf_result(self, candidates, mover, done, elapsed) -> SearchResult:
        table = sum(stream.amaf[mover] for stream in self.streams)
        stats = new_stats(len(candidates))
        for k, p in enumerate(candidates):
            if p != PASS:
                stats[k] = table[p]
        # A point the mover rarely played first has a mean from a handful of games: rank only the
        # moves seen in at least a tenth as many games as the most seen one.
        seen = stats[:, N] >= max(1.0, 0.1 * stats[:, N].max())
        active = seen.astype(np.int64)
        if not active.any():
            active[:] = 1
        self.last_search = {"stats": stats, "active": active, "candidates": candidates}
        return self._result(candidates, stats, active, done, elapsed)

    def _depth2(self, position, seconds, playouts, on_progress, progress_interval, cancel) -> SearchResult:
        stream = self.streams[0]
        candidates = np.array(root_candidates(position), np.int64)
        leaf_first, leaf_reply, owner = [], [], []
        child = new_board(position.size)
        for k, p in enumerate(candidates):
            copy_board(child, position.board)
            play(child, int(p))
            for q in board_candidates(child):
                leaf_first.append(int(p))
                leaf_reply.append(int(q))
                owner.append(k)
        first = np.array(leaf_first, np.int64)
        reply = np.array(leaf_reply, np.int64)
        owner = np.array(owner, np.int64)
        leaves = new_stats(len(first))
        stream.reset(position.board, position.komi, len(candidates))
        start = last_report = time.perf_counter()
        done, next_leaf = 0, 0
        chunk = max(len(first), 256)
        while (done < playouts) if seconds is None else (done == 0 or time.perf_counter() - start < seconds):
            count = min(chunk, playouts - done) if seconds is None else chunk
            next_leaf = sample_depth2(stream.root, stream.work, first, reply, len(first), stream.policy, stream.rng,
                                      position.komi, stream.scratch, count, next_leaf, VALUES[self.config.value],
                                      leaves)
            done += count
            now = time.perf_counter()
            if on_progress is not None and now - last_report >= progress_interval:
                on_progress(self._depth2_result(candidates, owner, first, reply, leaves, done, now - start))
                last_report = now
            if cancelled(cancel):
                break
        return self._depth2_result(candidates, owner, first, reply, leaves, done, time.perf_counter() - start)

    def _depth2_result(self, candidates, owner, first, reply, leaves, done, elapsed) -> SearchResult:
        """Each root move's value is the minimum over its replies of the leaf means (the opponent
        answers with the reply worst for us); moves with no sampled leaf are left out."""
        stats = new_stats(len(candidates))
        minimax = np.full(len(candidates), np.inf)
        for leaf in range(len(first)):
            k = owner[leaf]
            stats[k] += leaves[leaf]
            if leaves[leaf, N] > 0:
                minimax[k] = min(minimax[k], leaves[leaf, SUM] / leaves[leaf, N])
        active = np.isfinite(minimax).astype(np.int64)
        self.last_search = {"leaves": leaves, "leaf_first": first, "leaf_reply": reply, "minimax": minimax}
        return self._result(candidates, stats, active, done, elapsed, values=np.where(active > 0, minimax, 0.0))

    def _result(self, candidates, stats, active, done, elapsed, values=None) -> SearchResult:
        """With ``value=score`` a move's samples are its scores for the mover: their mean and spread
        are its ``score_mean``/``score_stdev`` too (depth2: over all its replies' samples); with
        ``value=win`` the samples keep no score and those stay None."""
        scored = self.config.value == "score"
        moves = []
        for k, p in enumerate(candidates):
            n = stats[k, N]
            mean = stats[k, SUM] / n if n else 0.0
            score_mean, score_stdev = (score_moments(float(stats[k, SUM]), float(stats[k, SUM_SQ]), float(n), 1.0)
                                       if scored else (None, None))
            moves.append(MoveStats(
                point=int(p), visits=int(n), winrate=stats[k, WINS] / n if n else 0.0,
                variance=max(stats[k, SUM_SQ] / n - mean * mean, 0.0) if n else 0.0, pv=[int(p)],
                value=float(values[k]) if values is not None else mean, pruned=not active[k],
                score_mean=score_mean, score_stdev=score_stdev,
            ))
        moves.sort(key=lambda s: (not s.pruned, s.visits > 0, s.value, s.visits), reverse=True)
        return decide(self.config, self.position, moves, done, elapsed, score_mean=pooled_score_mean(moves))


__all__ = ["MonteCarloPlayer", "SampleStream", "stage_plan"]
