"""Parallel progressive pruning: the master/slave algorithm of seed 003, Figure 2, over processes.

The master (this process) holds the statistics and the pruning flags. Each of the ``k`` slaves is a
spawned process with its own sample stream (the same seed stream ``k`` would have in the sequential
player). In each of the ``s`` stages the master broadcasts the flags, every slave plays ``N`` random
games whose first moves are unpruned and sends back its partial sums (count, sum, sum of squares: the
mean and variance merge exactly by adding them), and the master adds them in slave order, prunes
and checks the stop rules. As the seed notes, the master waits for the last slave of each stage.

Everything except where the streams run is ``MonteCarloPlayer``'s, so for equal seeds, stages and
samples this player and ``MonteCarloPlayer(slaves=k)`` make the same decisions from the same sums.
"""

from __future__ import annotations

import multiprocessing as mp
from dataclasses import replace

import numpy as np

from obook.search.config import SearchConfig
from obook.search.mcplayer import MonteCarloPlayer, SampleStream
from obook.search.processes import SearchProcesses
from obook.search.player import resolve_seed, stream_seed


def _slave(connection, config: SearchConfig, seed: int) -> None:
    stream = SampleStream(config, seed)
    candidates = None
    while True:
        message = connection.recv()
        kind = message[0]
        if kind == "stop":
            break
        if kind == "reseed":
            stream.reseed(message[1])
            continue
        if kind == "position":
            _, board, komi, candidates = message
            stream.reset(board, komi, len(candidates))
            continue
        _, active, count, budget = message
        connection.send(stream.sample_first_moves(candidates, active, count, budget))


class MasterSlavePlayer(SearchProcesses, MonteCarloPlayer):
    """``algorithm=flat|pp`` with ``processes=k``: one slave process per sample stream."""

    def __init__(self, config: SearchConfig):
        self.config = config
        self.last_search = {}
        base = resolve_seed(config.seed)
        slave_config = replace(config, processes=1, slaves=1)
        context = mp.get_context("spawn")
        self.streams = []
        self.connections, self.processes = [], []
        for k in range(self.stream_count()):
            parent, child = context.Pipe()
            process = context.Process(target=_slave, args=(child, slave_config, stream_seed(base, k)), daemon=True)
            process.start()
            self.connections.append(parent)
            self.processes.append(process)

    def reseed(self, seed: int) -> None:
        for k, connection in enumerate(self.connections):
            connection.send(("reseed", stream_seed(seed, k)))

    def start_streams(self, position, candidates: np.ndarray) -> None:
        for connection in self.connections:
            connection.send(("position", position.board, position.komi, candidates))

    def run_stage(self, candidates, active, count, budget) -> list[np.ndarray]:
        for connection in self.connections:
            connection.send(("stage", active, count, budget))
        return [connection.recv() for connection in self.connections]
