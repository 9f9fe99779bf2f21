"""Root parallelism: P processes grow independent trees of the same position with different seeds;
their root statistics are summed and the most visited move is played. The root's mean score is
that of the simulations through its moves, pooled over the processes (the one simulation that
expanded each worker's root is left out).

Workers are long-lived (each keeps its own tree between moves, so tree reuse still works) and are
driven in slices of the budget, which lets the parent report progress and stop on time.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from dataclasses import replace

from obook.go.position import Position
from obook.search.config import SearchConfig
from obook.search.mcts import MCTSPlayer
from obook.search.player import Player, cancelled, decide, resolve_seed, stream_seed
from obook.search.processes import SearchProcesses, position_from_state, position_state
from obook.search.result import MoveStats, SearchResult, pooled_score_mean, score_moments

SLICE_SECONDS = 0.25


def _worker(connection, config: SearchConfig) -> None:
    player = MCTSPlayer(config)
    position: Position | None = None
    while True:
        message = connection.recv()
        kind = message[0]
        if kind == "stop":
            break
        if kind == "new_game":
            player.new_game()
            continue
        if kind == "reseed":
            player.reseed(message[1])
            continue
        _, state, seconds, playouts = message
        if position is None or position_state(position) != state:
            position = position_from_state(state)
        result = player.genmove(position, seconds=seconds, playouts=playouts)
        connection.send(
            (
                result.playouts,
                [(s.point, s.visits, s.winrate, s.variance, s.amaf_visits, s.amaf_winrate, s.pv, s.score_mean,
                  s.score_stdev) for s in result.moves],
                result.nodes,
            )
        )


class RootParallelPlayer(SearchProcesses, Player):
    def __init__(self, config: SearchConfig):
        self.config = config
        base = resolve_seed(config.seed)
        context = mp.get_context("spawn")
        self.connections = []
        self.processes = []
        for k in range(config.processes):
            parent, child = context.Pipe()
            worker_config = replace(config, processes=1, seed=stream_seed(base, k))
            process = context.Process(target=_worker, args=(child, worker_config), daemon=True)
            process.start()
            self.connections.append(parent)
            self.processes.append(process)

    def new_game(self) -> None:
        for connection in self.connections:
            connection.send(("new_game",))

    def reseed(self, seed: int) -> None:
        """Worker ``k`` restarts from ``stream_seed(seed, k)``, as a player built with ``seed`` has it."""
        for k, connection in enumerate(self.connections):
            connection.send(("reseed", stream_seed(seed, k)))

    def genmove(self, position, seconds=None, playouts=None, on_progress=None, progress_interval=0.5, cancel=None):
        budget = self.budget(seconds, playouts)
        seconds, playouts = budget.seconds, budget.playouts
        state = position_state(position)
        start = time.perf_counter()
        workers = len(self.connections)
        merged: dict[int, list] = {}
        done = 0
        nodes = 0
        while True:
            elapsed = time.perf_counter() - start
            if seconds is not None:
                remaining = seconds - elapsed
                if remaining <= 0.005:
                    break
                slice_seconds, slice_playouts = min(SLICE_SECONDS, remaining), None
            else:
                remaining_playouts = playouts - done
                if remaining_playouts <= 0:
                    break
                per_worker = -(-remaining_playouts // workers)
                slice_seconds = None
                sliced = on_progress is not None or cancel is not None
                slice_playouts = min(per_worker, 5000) if sliced else per_worker
            for connection in self.connections:
                connection.send(("search", state, slice_seconds, slice_playouts))
            replies = [connection.recv() for connection in self.connections]
            # Each worker reports cumulative root statistics of its (reused) tree: keep the latest.
            merged = {}
            nodes = 0
            for worker_playouts, stats, worker_nodes in replies:
                done += worker_playouts
                nodes += worker_nodes
                for point, visits, winrate, variance, amaf_visits, amaf_winrate, pv, score_mean, score_stdev in stats:
                    entry = merged.setdefault(point, [0, 0.0, 0.0, 0, 0.0, pv, 0, 0, 0.0, 0.0])
                    entry[0] += visits
                    entry[1] += winrate * visits
                    entry[2] += (variance + winrate * winrate) * visits
                    entry[3] += amaf_visits
                    entry[4] += amaf_winrate * amaf_visits
                    if visits > entry[6]:
                        entry[5], entry[6] = pv, visits
                    if score_mean is not None:
                        entry[7] += visits
                        entry[8] += score_mean * visits
                        entry[9] += (score_stdev * score_stdev + score_mean * score_mean) * visits
            if on_progress is not None:
                on_progress(self._result(position, merged, done, time.perf_counter() - start, nodes))
            if cancelled(cancel):
                break
        return self._result(position, merged, done, time.perf_counter() - start, nodes)

    def _result(self, position: Position, merged: dict, done: int, elapsed: float, nodes: int) -> SearchResult:
        stats = []
        for point, (visits, wins, wins_sq, amaf_visits, amaf_wins, pv, _, scored, score_sum, score_sq) in merged.items():
            mean = wins / visits if visits else 0.0
            score_mean, score_stdev = score_moments(score_sum, score_sq, scored, 1.0)
            stats.append(
                MoveStats(
                    point=point, visits=visits, winrate=mean,
                    variance=max(wins_sq / visits - mean * mean, 0.0) if visits else 0.0,
                    amaf_visits=amaf_visits, amaf_winrate=amaf_wins / amaf_visits if amaf_visits else 0.0, pv=list(pv),
                    score_mean=score_mean, score_stdev=score_stdev,
                )
            )
        stats.sort(key=lambda s: (s.visits, s.winrate), reverse=True)
        return decide(self.config, position, stats, done, elapsed, nodes, score_mean=pooled_score_mean(stats))
