"""The player contract: what GTP, the match runner and the book call to get a move.

A player searches one game at a time. ``genmove(position)`` returns a ``SearchResult`` for the side
to move; the budget is the configuration's (playouts, or seconds when set) unless the call gives
one (``MoveBudget``, the one answer to "how long may this move think"; under a game clock GTP's
``GameClock.move_budget`` gives it). ``on_progress`` (for GTP ``analyze``, the book's lease) is
called with partial results while the search runs and only reports; ``cancel`` (a
``CancelToken``) stops the search, which then returns its best result so far.

Some players can also steer the root of their search: ``root_controls`` names the extra ``genmove``
keywords a player takes (``ROOT_MOVES``, ``ROOT_PRIORS``), so that callers ask the player instead of
testing its class; a player without a tree root takes none.
"""

from __future__ import annotations

import os
import random
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable

from obook.go.board import BLACK, PASS
from obook.go.position import Position
from obook.search.config import SearchConfig
from obook.search.flat import root_candidates
from obook.search.result import MoveStats, SearchResult

Progress = Callable[[SearchResult], None]
UNLIMITED_PLAYOUTS = 10**12  # the playouts of a search that only the clock stops
# genmove(..., root_moves=permits): permits(point) says whether the search may consider that first move
ROOT_MOVES = "root_moves"
# genmove(..., root_priors={point: (virtual visits, value for the mover)}): prior knowledge at the root
ROOT_PRIORS = "root_priors"


def resolve_seed(seed: int) -> int:
    return seed if seed else int.from_bytes(os.urandom(8), "little")


def stream_seed(base: int, k: int) -> int:
    """The seed of the ``k``-th random stream of a player seeded with ``base`` (a root-parallel
    worker, a pure Monte-Carlo sample stream; the same in this process and in a child process)."""
    return (base + 7919 * (k + 1)) % (1 << 63) or 1


class CancelToken:
    """Asks a running search to stop: ``genmove(..., cancel=token)`` checks it between chunks of
    simulations and returns the best result found so far. Safe to set from another thread;
    ``event`` lets a token share an event the caller already has (GTP's interrupt). Time is not
    its business: a move's seconds are its ``MoveBudget``'s."""

    def __init__(self, event: threading.Event | None = None):
        self._event = event if event is not None else threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


def cancelled(cancel: CancelToken | None) -> bool:
    return cancel is not None and cancel.cancelled


@dataclass(frozen=True)
class MoveBudget:
    """What one move's search may spend: it stops at ``seconds`` (None: no time limit) or after
    ``playouts`` simulations, whichever comes first. The pure Monte-Carlo players plan their stages
    by one of the two: by the seconds when there are any."""

    seconds: float | None
    playouts: int

    @classmethod
    def resolve(cls, config: SearchConfig, seconds: float | None = None,
                playouts: int | None = None) -> "MoveBudget":
        """The budget of a call: what it gives (seconds and/or playouts), else the configuration's
        (its seconds when set, else its playouts)."""
        if seconds is None and playouts is None:
            if config.seconds > 0:
                return cls(config.seconds, UNLIMITED_PLAYOUTS)
            return cls(None, config.playouts)
        return cls(seconds, playouts if playouts is not None else UNLIMITED_PLAYOUTS)

    @classmethod
    def for_clock(cls, config: SearchConfig, think_seconds: float | None) -> "MoveBudget":
        """The budget under a game clock (GTP): the clock's seconds for this move, capped by the
        configured playouts when the configuration counts playouts; the configuration's budget
        when the clock sets no limit (``think_seconds`` None)."""
        if think_seconds is None:
            return cls.resolve(config)
        return cls.resolve(config, think_seconds, config.playouts if config.seconds == 0 else None)


class Player(ABC):
    """Interface of every search player."""

    config: SearchConfig
    # The genmove keywords beyond the interface that this player takes (module docstring).
    root_controls: frozenset[str] = frozenset()

    def new_game(self) -> None:
        """Forget everything about the previous game (trees, caches)."""

    def opening_book(self):
        """The book this player plays from (``obook.book.player.BookPlayer``: its record of book
        moves, shown by GTP), or None: a plain search plays no book."""
        return None

    @abstractmethod
    def genmove(
        self,
        position: Position,
        seconds: float | None = None,
        playouts: int | None = None,
        on_progress: Progress | None = None,
        progress_interval: float = 0.5,
        cancel: CancelToken | None = None,
    ) -> SearchResult:
        """The move for the side to move of ``position`` (see the module docstring)."""

    def close(self) -> None:
        """Release processes or memory the player holds."""

    @abstractmethod
    def reseed(self, seed: int) -> None:
        """Restart every random stream of the player from ``seed`` (the book seeds each move of a
        game, so a resumed game makes the same choices as an uninterrupted one under a playout
        budget)."""

    def budget(self, seconds: float | None, playouts: int | None) -> MoveBudget:
        return MoveBudget.resolve(self.config, seconds, playouts)


class RandomPlayer(Player):
    """A uniformly random legal move that does not fill one's own eye, with no playouts: the
    zero-think mutation player that measures what the grid costs around the search."""

    def __init__(self, config: SearchConfig):
        self.config = config
        self.rng = random.Random(resolve_seed(config.seed))

    def reseed(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def genmove(self, position, seconds=None, playouts=None, on_progress=None, progress_interval=0.5, cancel=None):
        start = time.perf_counter()
        candidates = [p for p in root_candidates(position) if p != PASS]
        move = self.rng.choice(candidates) if candidates else PASS
        return SearchResult(move=move, resign=False, winrate=0.5, playouts=0, seconds=time.perf_counter() - start,
                            moves=[MoveStats(point=move, visits=1, winrate=0.5, variance=0.0, pv=[move])], pv=[move])


def decide(config: SearchConfig, position: Position, stats: list[MoveStats], playouts: int, seconds: float,
           nodes: int = 0, score_mean: float | None = None) -> SearchResult:
    """The move from root statistics sorted best first: the most visited move, except that a player
    whose opponent has just passed passes too when the position as it stands wins (so won games end
    cleanly), and resigns below the configured win rate once the estimate rests on 100 visits.
    ``score_mean`` is the root's mean score, passed through to the result."""
    if not stats:
        return SearchResult(move=PASS, resign=False, winrate=0.5, playouts=playouts, seconds=seconds, moves=[],
                            pv=[PASS], nodes=nodes, score_mean=score_mean)
    best = stats[0]
    move, winrate, pv = best.point, best.winrate, best.pv
    if config.pass_when_won and position.passes == 1 and move != PASS:
        mover_score = position.score() if position.to_move == BLACK else -position.score()
        if mover_score > 0:
            move, pv = PASS, [PASS]
            winrate = next((s.winrate for s in stats if s.point == PASS), winrate)
    resign = config.resign_threshold > 0 and best.visits >= 100 and best.winrate < config.resign_threshold
    return SearchResult(move=move, resign=resign, winrate=winrate, playouts=playouts, seconds=seconds, moves=stats,
                        pv=pv, nodes=nodes, score_mean=score_mean)


__all__ = ["ROOT_MOVES", "ROOT_PRIORS", "CancelToken", "MoveBudget", "Player", "RandomPlayer", "decide", "PASS"]
