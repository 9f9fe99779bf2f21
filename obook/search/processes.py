"""Searching in child processes: what every multi-process player shares (root parallelism in
``parallel.py``, the pure Monte-Carlo master/slave in ``mcparallel.py``): a position sent as a
picklable state, and stopping the processes when the player closes."""

from __future__ import annotations

from obook.go.position import Position


def stop_processes(connections, processes, timeout: float = 5.0) -> None:
    """Ask each search process to stop, wait for it, and terminate the ones that do not."""
    for connection in connections:
        try:
            connection.send(("stop",))
        except (BrokenPipeError, OSError):
            pass
    for process in processes:
        process.join(timeout=timeout)
        if process.is_alive():
            process.terminate()


class SearchProcesses:
    """What a player that searches in child processes does at the end: stop them (``connections``
    and ``processes`` are the player's pipes and processes)."""

    connections: list
    processes: list

    def close(self) -> None:
        stop_processes(self.connections, self.processes)
        self.connections, self.processes = [], []

    def __del__(self):
        if getattr(self, "processes", None):
            self.close()


def position_state(position: Position) -> tuple:
    return (
        position.size, position.komi, position.superko, tuple(position.setup_black), tuple(position.setup_white),
        position.first_to_move, tuple(position.moves),
    )


def position_from_state(state: tuple) -> Position:
    size, komi, superko, black, white, first, moves = state
    return Position(size=size, komi=komi, superko=superko, setup_black=list(black), setup_white=list(white),
                    first_to_move=first, moves=list(moves))
