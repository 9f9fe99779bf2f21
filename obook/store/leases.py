"""A worker's hold on the units it works on (games, expansions): every write it makes to them, and
its heartbeat.

``Lease`` is one owner's name in the store (a build process, a grid worker's pool process, or a
grid token that carries a unit between two tasks) with the length of its leases, over one kind of
unit (``obook.store.jobs.JobTable``). Its writes are the guarded statements of
``obook.store.jobs``, so a duplicate or late caller changes nothing: claim takes only a free or
expired lease (or one handed to it), renew checks the owner, fail counts a failure once and sets
the unit aside at the limit. A write that finds the unit no longer ours raises ``LeaseLost`` and
writes nothing. ``GameLease`` adds a game's own writes (a move, the finish), ``ExpansionLease`` an
expansion's (its commit).

The worker's heartbeat (``workers`` row: who it is, which unit and moves it is on) is written here
only, in the transaction of the write it reports. A token is no worker: its lease has no heartbeat.

Failures are charged to the worker too (``obook.store.workers``): ``fail`` counts the unit's
failure with the worker's identity (``worker_id``) on the unit and on the worker's record, in one
transaction. A unit is set aside at ``OBOOK_MAX_GAME_FAILURES`` failures on ``min_workers``
different workers (``OBOOK_SET_ASIDE_WORKERS`` on the grid; 1 for an embedded build, whose
processes are one machine's); a worker with ``quarantine_after`` (the grid's:
``OBOOK_QUARANTINE_FAILURES``) that fails that many units in a row is quarantined (``quarantined``
says why); a unit finished, committed or handed on after a failure ends the worker's run of
failures.
"""

from __future__ import annotations

import math
import os
import socket
import time
import uuid
from typing import Callable, Generic, TypeVar

from sqlalchemy import Connection

from obook.config import settings
from obook.errors import ObookError
from obook.store import jobs
from obook.store.books import lock_book, try_lock_book
from obook.store.db import Store
from obook.store.faults import kill_point
from obook.store.games import GameRow, append_move, count_search, finish_game, get_game, record_slice
from obook.store.minimax import (BackUp, ExpansionRow, StagedResult, apply_staged, expansion_state, get_expansion,
                                 is_staged, stage_result)
from obook.store.models import ABANDONED, DONE
from obook.store.stats import ReadRows, rows_reader
from obook.store.workers import (charge_failure, credit_work, heartbeat, quarantine_reason, register_worker,
                                 remove_worker, worker_identity)

T = TypeVar("T")
Row = TypeVar("Row", GameRow, ExpansionRow)
BookPick = Callable[[ReadRows], T]  # reads statistics rows by canonical key -> a choice or None


class LeaseLost(ObookError):
    """Another worker took this unit (our lease expired); stop without writing."""


def new_worker_id(kind: str = "local") -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{kind}:{uuid.uuid4().hex[:8]}"


class Lease(Generic[Row]):
    """The leases of one owner on one kind of unit. ``kind`` names the worker in its heartbeat
    (``local``, ``celery``); ``None`` for a grid token, which has none. ``heartbeat_seconds``: least
    time between two heartbeats written with a unit's progress (a grid worker's moves come faster
    than anyone reads them)."""

    jobs: jobs.JobTable

    def __init__(self, store: Store, owner: str, lease_seconds: float, kind: str | None = "local",
                 engine_version: str = "", heartbeat_seconds: float = 0.0, worker_id: str | None = None,
                 min_workers: int = 1, quarantine_after: int | None = None):
        self.store = store
        self.owner = owner
        self.lease_seconds = lease_seconds
        self.kind = kind
        self.engine_version = engine_version
        self.heartbeat_seconds = heartbeat_seconds
        # the worker's identity (None for a token): this process's unless given (a grid pool
        # process is its ``obook worker``'s)
        self.worker_id = worker_id if worker_id is not None or kind is None else worker_identity(engine_version)
        self.min_workers = max(1, min_workers)
        self.quarantine_after = quarantine_after
        self.quarantined: str | None = None  # why this worker is quarantined (set by ``fail``, ``check_quarantine``)
        self._registered = False
        self._failed_since_work = False  # a failure since this process last worked a unit without error
        self._writing: tuple[int, int] | None = None  # (game, its moves) after this lease's last move stored
        self._last_beat = -math.inf  # the first progress is always reported

    def read(self, conn: Connection, unit_id: int) -> Row | None:
        raise NotImplementedError

    # ---- taking and giving back -----------------------------------------------------------------

    def claim(self, book_id: int, unit_id: int | None = None, handoff: str | None = None) -> Row | None:
        """Take a unit's lease: one nobody holds, or ``unit_id``; with ``handoff`` (a grid task's
        token) also when that token holds it, which is how a unit passes from task to task."""
        with self.store.write() as conn:
            taken = None
            if handoff is not None and unit_id is not None and jobs.pass_lease(
                    conn, self.jobs, unit_id, handoff, self.owner, self.lease_seconds):
                taken = unit_id
            if taken is None:
                taken = jobs.claim(conn, self.jobs, book_id, self.owner, self.lease_seconds, unit_id)
            unit = self.read(conn, taken) if taken is not None else None
            if unit is not None:
                self._register(conn)
                self._beat(conn, unit)
        return unit

    def take_over(self, unit_id: int, holder: str) -> bool:
        """Take the lease of an open unit from ``holder``; False when it no longer holds it."""
        with self.store.write() as conn:
            return jobs.pass_lease(conn, self.jobs, unit_id, holder, self.owner, self.lease_seconds)

    def hand_on(self, unit_id: int, successor: str) -> bool:
        """Give our lease of ``unit_id`` to ``successor`` (a grid token); False when it is not ours."""
        with self.store.write() as conn:
            if not jobs.pass_lease(conn, self.jobs, unit_id, self.owner, successor, self.lease_seconds):
                return False
            self._worked(conn, done=0)
            self._beat(conn)
        return True

    def release(self, unit: Row) -> None:
        with self.store.write() as conn:
            jobs.release(conn, self.jobs, unit.id, self.owner)
            self._beat(conn)

    def renew(self, unit: Row) -> None:
        """Keep the lease while working on ``unit``."""
        with self.store.write() as conn:
            if not jobs.renew(conn, self.jobs, unit.id, self.owner, self.lease_seconds):
                raise LeaseLost(f"{self.jobs.name} {unit.id}: lease lost while working on it")
            self._beat(conn, unit)

    def fail(self, unit_id: int, reason: str, max_failures: int | None = None) -> str | None:
        """Count a failed attempt at ``unit_id`` (an error that is neither a lost lease nor the
        database's) on the unit and on this worker, and give it back (tried again after a back-off,
        ``OBOOK_RETRY_SECONDS`` doubling); after ``max_failures`` (``OBOOK_MAX_GAME_FAILURES``) on
        ``min_workers`` different workers it is set aside. The unit's status now, or None when it
        was no longer ours. At ``quarantine_after`` failures in a row, ``quarantined`` says why."""
        s = settings()
        limit = max_failures if max_failures is not None else s.max_game_failures
        with self.store.write() as conn:
            status = jobs.record_failure(conn, self.jobs, unit_id, self.owner, reason, max(1, limit),
                                         worker_id=self.worker_id, min_workers=self.min_workers,
                                         retry_seconds=s.retry_seconds)
            if status is not None:
                if self.worker_id is not None:
                    self.quarantined = charge_failure(conn, self.worker_id, self.kind or "local",
                                                      f"{self.jobs.name} {unit_id}: {reason}", self.quarantine_after)
                    self._failed_since_work = True
                self._beat(conn)
        return status

    def check_quarantine(self) -> str | None:
        """Why this worker is quarantined (by this process or another of the same worker), or None."""
        if self.quarantined is None and self.worker_id is not None:
            with self.store.read() as conn:
                self.quarantined = quarantine_reason(conn, self.worker_id)
        return self.quarantined

    def _register(self, conn: Connection) -> None:
        if not self._registered and self.worker_id is not None:
            register_worker(conn, self.worker_id, self.kind or "local")
            self._registered = True

    def _worked(self, conn: Connection, done: int) -> None:
        """A unit finished (``done``) or a slice handed on without error: credited to the worker, whose
        run of failures ends (a hand-on writes only after a failure of this process)."""
        if self.worker_id is not None and (done or self._failed_since_work):
            credit_work(conn, self.worker_id, done)
            self._failed_since_work = False

    # ---- the worker ----------------------------------------------------------------------------

    def announce(self) -> None:
        """A heartbeat with no unit: the worker is up and idle."""
        with self.store.write() as conn:
            self._beat(conn)

    def leave(self) -> None:
        """Remove the worker's heartbeat row (it stops)."""
        with self.store.write() as conn:
            remove_worker(conn, self.owner)

    def _beat(self, conn: Connection, unit: Row | None = None) -> None:
        if self.kind is None:
            return
        where = ({"book_id": unit.book_id, "game_id": unit.id, "moves": " ".join(unit.moves)} if unit is not None
                 else {"game_id": None, "moves": ""})
        heartbeat(conn, self.owner, host=socket.gethostname(), pid=os.getpid(), kind=self.kind,
                  engine_version=self.engine_version, worker_id=self.worker_id, **where)

    def _beat_now(self, conn: Connection, unit: Row) -> None:
        """A heartbeat with ``unit``'s progress, at most every ``heartbeat_seconds``."""
        now = time.monotonic()
        if now - self._last_beat >= self.heartbeat_seconds:
            self._beat(conn, unit)
            self._last_beat = now


class GameLease(Lease[GameRow]):
    """A player's leases on self-play games, with a game's own writes: its moves and its finish."""

    jobs = jobs.GAME_JOBS

    def read(self, conn: Connection, unit_id: int) -> GameRow | None:
        return get_game(conn, unit_id)

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
        first = self.worker_id is not None and self._writing != (game.id, game.n_moves)
        # each statement is guarded on its own: no transaction needed, except for a slice's first move,
        # stored with its writer (game_slices) in one transaction
        with (self.store.write() if first else self.store.statements()) as conn:
            pick = next_pick(rows_reader(conn, game.book_id)) if next_pick is not None else None
            stored = append_move(conn, game, self.owner, vertex, origin, self.lease_seconds,
                                 count_search=next_pick is not None and pick is None)
            if stored is None:
                raise LeaseLost(f"game {game.id}: changed by another player before move {game.n_moves + 1}")
            if first:
                record_slice(conn, game.id, game.n_moves + 1, self.worker_id)
            self._writing = (game.id, game.n_moves + 1)
            self._beat_now(conn, stored)
        kill_point("after_append")
        return stored, pick

    # ---- the end --------------------------------------------------------------------------------

    def finish(self, game: GameRow, result: str, winner: str | None, score: float | None,
               stats: dict[tuple[int, int], tuple[int, int, int]],
               scores: dict[tuple[int, int], tuple[int, float]] | None = None) -> None:
        """Close ``game`` (as read) and add its statistics (and ``scores``), once: ``LeaseLost`` when
        it was already closed or is no longer ours."""
        with self.store.write() as conn:
            done = finish_game(conn, game, self.owner, result, winner, score, stats, scores=scores,
                               finished_by=self.worker_id)
            if done:
                self._worked(conn, done=1)
            self._beat(conn)
            kill_point("before_finish_commit")
        kill_point("after_finish_commit")
        if not done:
            raise LeaseLost(f"game {game.id}: finished or taken by another player")

    def abandon(self, game: GameRow) -> None:
        """Close ``game`` as abandoned (its stored moves are not a game): no statistics."""
        with self.store.write() as conn:
            finish_game(conn, game, self.owner, "illegal", None, None, {}, status=ABANDONED)



class ExpansionLease(Lease[ExpansionRow]):
    """A worker's leases on a minimax book's expansions, with an expansion's own write: its commit."""

    jobs = jobs.EXPANSION_JOBS

    def read(self, conn: Connection, unit_id: int) -> ExpansionRow | None:
        return get_expansion(conn, unit_id)

    def commit(self, job: ExpansionRow, result: StagedResult, back_up: BackUp) -> None:
        """Store ``job``'s result once: stage it while our lease holds (``stage_result``), and apply
        every staged result, ours and those other workers staged meanwhile, under the book's lock,
        with ``back_up`` (the book's) run once for them all (``apply_staged``). When the lock is
        free, both in one transaction; when another worker holds it, ours is staged in its own
        short transaction first, so that the holder may apply it, then we wait for the lock and
        apply what is left: the book's serial work is shared (group commit). When a result was staged before ours (its worker died
        before applying it), that one is applied. ``LeaseLost`` when the expansion is no longer ours
        and not done."""
        with self.store.write() as conn:
            staged = stage_result(conn, job, self.owner, result, worker_id=self.worker_id)
            if staged:
                self._worked(conn, done=1)
            self._beat(conn)  # idle from now on: written before the lock, which it need not wait for
            alone = try_lock_book(conn, job.book_id)  # nobody applies now: apply in this transaction
            if alone:
                done = self._apply(conn, job, staged, back_up)
        if not alone:
            kill_point("after_stage")
            done = self._await_apply(job, staged, back_up)
        kill_point("after_finish_commit")
        if not done:
            raise LeaseLost(f"expansion {job.id}: taken by another worker")

    def _await_apply(self, job: ExpansionRow, staged: bool, back_up: BackUp) -> bool:
        """Another worker held the book's lock when ours was staged: it, or the next holder, applies
        our result (whoever takes the lock after our result is committed applies it). Wait for the
        holder without queueing for the lock (a shared lock waits for it and lets every other waiter
        through at once) and stop if our result is gone from the staged ones (applied, or dropped:
        done tells); otherwise take the lock if it is free and apply everything staged, else wait
        for the one who took it. So the lock is held only by those who apply, not once by every
        worker, and a worker waits at most for two holders."""
        while True:
            with self.store.write() as conn:
                lock_book(conn, job.book_id, shared=True)
                done, waiting = expansion_state(conn, job.id)
                if not waiting:
                    return done
            with self.store.write() as conn:
                if try_lock_book(conn, job.book_id):
                    return self._apply(conn, job, staged, back_up)

    def _apply(self, conn: Connection, job: ExpansionRow, staged: bool, back_up: BackUp) -> bool:
        """Under the book's lock: apply every staged result; whether ``job`` is done by it (ours, or
        one staged before ours by a worker that died before applying it)."""
        waiting = not staged and is_staged(conn, job.id)
        apply_staged(conn, job.book_id, back_up, locked=True)
        done = staged or (waiting and self.read(conn, job.id).status == DONE)
        kill_point("before_finish_commit")
        return done
