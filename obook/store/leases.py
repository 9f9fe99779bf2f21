"""A player's hold on the games it plays: every write a player makes to a game, and its heartbeat.

``GameLease`` is one owner's name in the store (a build process, a grid worker's pool process, or a
grid token that carries a game between two tasks) with the length of its leases. Its writes are the
guarded statements of ``obook.store.games``, so a duplicate or late caller changes nothing: claim
takes only a free or expired lease (or one handed to it), renew and append check the owner and the
moves already stored, finish closes a game once. A write that finds the game no longer ours raises
``LeaseLost`` and writes nothing.

The worker's heartbeat (``workers`` row: who it is, which game and moves it is on) is written here
only, in the transaction of the write it reports. A token is no worker: its lease has no heartbeat.
"""

from __future__ import annotations

import math
import os
import socket
import time
import uuid
from typing import Callable, TypeVar

from sqlalchemy import Connection

from obook.errors import ObookError
from obook.store.db import Store
from obook.store.faults import kill_point
from obook.store.games import (
    GameRow,
    append_move,
    claim_game,
    count_search,
    finish_game,
    get_game,
    pass_lease,
    record_failure,
    release_lease,
    renew_lease,
)
from obook.store.models import ABANDONED
from obook.store.stats import ReadRows, rows_reader
from obook.store.workers import heartbeat, remove_worker

T = TypeVar("T")
BookPick = Callable[[ReadRows], T]  # reads statistics rows by canonical key -> a choice or None


class LeaseLost(ObookError):
    """Another player took this game (our lease expired); stop without writing."""


def new_worker_id(kind: str = "local") -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{kind}:{uuid.uuid4().hex[:8]}"


class GameLease:
    """The leases of one owner. ``kind`` names the worker in its heartbeat (``local``, ``celery``);
    ``None`` for a grid token, which has none. ``heartbeat_seconds``: least time between two
    heartbeats written with a move (a grid worker's moves come faster than anyone reads them)."""

    def __init__(self, store: Store, owner: str, lease_seconds: float, kind: str | None = "local",
                 engine_version: str = "", heartbeat_seconds: float = 0.0):
        self.store = store
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.kind = kind
        self.engine_version = engine_version
        self.heartbeat_seconds = heartbeat_seconds
        self._last_beat = -math.inf  # the first move is always reported

    # ---- taking and giving back -----------------------------------------------------------------

    def claim(self, book_id: int, game_id: int | None = None, handoff: str | None = None) -> GameRow | None:
        """Take a game's lease: one nobody holds, or ``game_id``; with ``handoff`` (a grid task's
        token) also when that token holds it, which is how a game passes from task to task."""
        with self.store.write() as conn:
            game = None
            if handoff is not None and game_id is not None and pass_lease(
                    conn, game_id, handoff, self.owner, self.lease_seconds):
                game = get_game(conn, game_id)
            if game is None:
                game = claim_game(conn, book_id, self.owner, self.lease_seconds, game_id)
            if game is not None:
                self._beat(conn, game)
        return game

    def take_over(self, game_id: int, holder: str) -> bool:
        """Take the lease of an in-progress game from ``holder``; False when it no longer holds it."""
        with self.store.write() as conn:
            return pass_lease(conn, game_id, holder, self.owner, self.lease_seconds)

    def hand_on(self, game_id: int, successor: str) -> bool:
        """Give our lease of ``game_id`` to ``successor`` (a grid token); False when it is not ours."""
        with self.store.write() as conn:
            if not pass_lease(conn, game_id, self.owner, successor, self.lease_seconds):
                return False
            self._beat(conn)
        return True

    def release(self, game: GameRow) -> None:
        with self.store.write() as conn:
            release_lease(conn, game.id, self.owner)
            self._beat(conn)

    # ---- playing --------------------------------------------------------------------------------

    def renew(self, game: GameRow) -> None:
        """Keep the lease while thinking about ``game``'s next move."""
        with self.store.write() as conn:
            if not renew_lease(conn, game.id, self.owner, self.lease_seconds):
                raise LeaseLost(f"game {game.id}: lease lost while thinking")
            self._beat(conn, game)

    def start_move(self, game: GameRow, book_pick: BookPick) -> T | None:
        """One transaction: the book's choice of the next move (``book_pick`` reads the statistics it
        needs through the function it is given) or, when it has none, the count of the search that
        is about to start (``games.searches``, committed before the search starts); ``LeaseLost``
        when the game is no longer ours."""
        with self.store.write() as conn:
            pick = book_pick(rows_reader(conn, game.book_id))
            if pick is None and not count_search(conn, game.id, self.owner):
                raise LeaseLost(f"game {game.id}: lease lost before the search of move {game.n_moves + 1}")
        return pick

    def append(self, game: GameRow, vertex: str, origin: str,
               next_pick: BookPick | None = None) -> tuple[GameRow, T | None]:
        """Store one more move of ``game`` (as it was read) and renew the lease. With ``next_pick``
        the same round trip prepares the next move as ``start_move`` does: (game as stored now, the
        book's next move or None when its search is counted)."""
        with self.store.statements() as conn:  # each statement is guarded on its own: no transaction needed
            pick = next_pick(rows_reader(conn, game.book_id)) if next_pick is not None else None
            stored = append_move(conn, game, self.owner, vertex, origin, self.lease_seconds,
                                 count_search=next_pick is not None and pick is None)
            if stored is None:
                raise LeaseLost(f"game {game.id}: changed by another player before move {game.n_moves + 1}")
            now = time.monotonic()
            if now - self._last_beat >= self.heartbeat_seconds:
                self._beat(conn, stored)
                self._last_beat = now
        kill_point("after_append")
        return stored, pick

    # ---- the end --------------------------------------------------------------------------------

    def finish(self, game: GameRow, result: str, winner: str | None, score: float | None,
               stats: dict[tuple[int, int], tuple[int, int, int]],
               scores: dict[tuple[int, int], tuple[int, float]] | None = None) -> None:
        """Close ``game`` (as read) and add its statistics (and ``scores``), once: ``LeaseLost`` when
        it was already closed or is no longer ours."""
        with self.store.write() as conn:
            done = finish_game(conn, game, self.owner, result, winner, score, stats, scores=scores)
            self._beat(conn)
            kill_point("before_finish_commit")
        kill_point("after_finish_commit")
        if not done:
            raise LeaseLost(f"game {game.id}: finished or taken by another player")

    def fail(self, game_id: int, reason: str, max_failures: int | None = None) -> str | None:
        """Count a failed attempt at playing ``game_id`` (an error that is neither a lost lease nor
        the database's) and give the game back; after ``max_failures`` (``OBOOK_MAX_GAME_FAILURES``)
        it is set aside. The game's status now, or None when it was no longer ours."""
        from obook.config import settings

        limit = max_failures if max_failures is not None else settings().max_game_failures
        with self.store.write() as conn:
            status = record_failure(conn, game_id, self.owner, reason, max(1, limit))
            if status is not None:
                self._beat(conn)
        return status

    def abandon(self, game: GameRow) -> None:
        """Close ``game`` as abandoned (its stored moves are not a game): no statistics."""
        with self.store.write() as conn:
            finish_game(conn, game, self.owner, "illegal", None, None, {}, status=ABANDONED)

    # ---- the worker ----------------------------------------------------------------------------

    def announce(self) -> None:
        """A heartbeat with no game: the worker is up and idle."""
        with self.store.write() as conn:
            self._beat(conn)

    def leave(self) -> None:
        """Remove the worker's heartbeat row (it stops)."""
        with self.store.write() as conn:
            remove_worker(conn, self.owner)

    def _beat(self, conn: Connection, game: GameRow | None = None) -> None:
        if self.kind is None:
            return
        where = ({"book_id": game.book_id, "game_id": game.id, "moves": " ".join(game.moves)} if game is not None
                 else {"game_id": None, "moves": ""})
        heartbeat(conn, self.owner, host=socket.gethostname(), pid=os.getpid(), kind=self.kind,
                  engine_version=self.engine_version, **where)
