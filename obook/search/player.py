"""Players: what GTP, the match runner and the book call to get a move.

A player searches one game at a time. ``genmove(position)`` returns a ``SearchResult`` for the side
to move; the budget is the configuration's (playouts, or seconds when set) unless the call gives
one. ``on_progress`` (for GTP ``analyze``) is called with partial results while the search runs.
"""

from __future__ import annotations

import os
from typing import Callable

from obook.go.board import BLACK, PASS
from obook.position import Position
from obook.search.config import SearchConfig
from obook.search.result import MoveStats, SearchResult

Progress = Callable[[SearchResult], None]


def resolve_seed(seed: int) -> int:
    return seed if seed else int.from_bytes(os.urandom(8), "little")


class Player:
    """Interface of every search player."""

    config: SearchConfig

    def new_game(self) -> None:
        """Forget everything about the previous game (trees, caches)."""

    def genmove(
        self,
        position: Position,
        seconds: float | None = None,
        playouts: int | None = None,
        on_progress: Progress | None = None,
        progress_interval: float = 0.5,
    ) -> SearchResult:
        raise NotImplementedError

    def close(self) -> None:
        """Release processes or memory the player holds."""

    def budget(self, seconds: float | None, playouts: int | None) -> tuple[float | None, int]:
        """(seconds or None, playouts): a time budget when one is given, else the playouts."""
        if seconds is None and playouts is None:
            if self.config.seconds > 0:
                return self.config.seconds, 10**12
            return None, self.config.playouts
        return seconds, playouts if playouts is not None else 10**12


def decide(config: SearchConfig, position: Position, stats: list[MoveStats], playouts: int, seconds: float,
           nodes: int = 0) -> SearchResult:
    """The move from root statistics sorted best first: the most visited move, except that a player
    whose opponent has just passed passes too when the position as it stands wins (so won games end
    cleanly), and resigns below the configured win rate once the estimate rests on 100 visits."""
    if not stats:
        return SearchResult(move=PASS, resign=False, winrate=0.5, playouts=playouts, seconds=seconds, moves=[],
                            pv=[PASS], nodes=nodes)
    best = stats[0]
    move, winrate, pv = best.point, best.winrate, best.pv
    if config.pass_when_won and position.passes == 1 and move != PASS:
        mover_score = position.score() if position.to_move == BLACK else -position.score()
        if mover_score > 0:
            move, pv = PASS, [PASS]
            winrate = next((s.winrate for s in stats if s.point == PASS), winrate)
    resign = config.resign_threshold > 0 and best.visits >= 100 and best.winrate < config.resign_threshold
    return SearchResult(move=move, resign=resign, winrate=winrate, playouts=playouts, seconds=seconds, moves=stats,
                        pv=pv, nodes=nodes)


def make_player(config: SearchConfig | str | None = None) -> Player:
    """The player a configuration describes (a ``SearchConfig`` or a spec string)."""
    if not isinstance(config, SearchConfig):
        config = SearchConfig.from_spec(config)
    if config.algorithm in ("flat", "pp", "amaf", "depth2"):
        if config.processes > 1:
            from obook.search.mcparallel import MasterSlavePlayer

            return MasterSlavePlayer(config)
        from obook.search.mcplayer import MonteCarloPlayer

        return MonteCarloPlayer(config)
    if config.processes > 1:
        from obook.search.parallel import RootParallelPlayer

        return RootParallelPlayer(config)
    from obook.search.mcts import MCTSPlayer

    return MCTSPlayer(config)


__all__ = ["Player", "decide", "make_player", "PASS"]
