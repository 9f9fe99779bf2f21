"""The player contract: what GTP, the match runner and the book call to get a move.

A player searches one game at a time. ``genmove(position)`` returns a ``SearchResult`` for the side
to move; the budget is the configuration's (playouts, or seconds when set) unless the call gives
one. ``on_progress`` (for GTP ``analyze``) is called with partial results while the search runs.
"""

from __future__ import annotations

import os
import time
from typing import Callable

import numpy as np

from obook.go.board import BLACK, PASS
from obook.go.position import Position
from obook.rng import make_rng
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

    def reseed(self, seed: int) -> None:
        """Restart the random numbers from ``seed`` (the book seeds each move of a game, so a resumed
        game makes the same choices as an uninterrupted one under a playout budget)."""
        if hasattr(self, "rng"):
            self.rng = make_rng(seed or 1)

    def budget(self, seconds: float | None, playouts: int | None) -> tuple[float | None, int]:
        """(seconds or None, playouts): a time budget when one is given, else the playouts."""
        if seconds is None and playouts is None:
            if self.config.seconds > 0:
                return self.config.seconds, 10**12
            return None, self.config.playouts
        return seconds, playouts if playouts is not None else 10**12


class RandomPlayer(Player):
    """A uniformly random legal move that does not fill one's own eye, with no playouts: the
    zero-think mutation player that measures what the grid costs around the search."""

    def __init__(self, config: SearchConfig):
        import random

        self.config = config
        self.rng = random.Random(resolve_seed(config.seed))

    def reseed(self, seed: int) -> None:
        import random

        self.rng = random.Random(seed)

    def genmove(self, position, seconds=None, playouts=None, on_progress=None, progress_interval=0.5):
        from obook.go.board import is_eye
        from obook.search.flat import candidate_moves

        start = time.perf_counter()
        out = np.zeros(position.board.color.shape[0] + 1, np.int64)
        n = int(candidate_moves(position.board, out)) - 1  # legal non-eye moves under simple ko, then PASS
        candidates = [int(p) for p in out[:n]]
        if position.superko:  # positional superko forbids more than the board knows
            mover = position.to_move
            candidates = [p for p in position.legal_moves() if not is_eye(position.board, p, mover)]
        move = self.rng.choice(candidates) if candidates else PASS
        return SearchResult(move=move, resign=False, winrate=0.5, playouts=0, seconds=time.perf_counter() - start,
                            moves=[MoveStats(point=move, visits=1, winrate=0.5, variance=0.0, pv=[move])], pv=[move])


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


__all__ = ["Player", "RandomPlayer", "decide", "PASS"]
