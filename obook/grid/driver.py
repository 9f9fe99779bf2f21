"""The driver of a grid build: keeps a book's units of work (self-play games, or a minimax book's
expansions: ``obook.book.kinds``) in flight until the book has its target of units done.

It holds no state of its own (stop it, start it again, run it on another machine): every decision
is read from the store at each step, the same for every kind of unit.

- **How many units are in flight.** As many as there are live grid workers (worker processes whose
  heartbeat is recent) plus a margin, so that a worker finishing a slice finds the next unit waiting.
  No number of machines is configured: workers come and go and the count follows; a quarantined
  worker (``obook.store.workers``) is not counted. Units are created
  by the kind's ``top_up`` (new games; the next expansions to schedule), which never lets done plus
  open units exceed the target.
- **Which units are sent.** An open unit whose lease is free or expired (its worker vanished, or
  the message that carried its token was lost) is put under a fresh token and sent. A token the
  driver has seen on a unit for a few seconds whose message the broker no longer has (neither
  waiting nor reserved by a worker) is replaced at once, so a broker restart costs seconds, not a
  lease. How long is measured by the driver's own monotonic clock from its first sight of the token,
  not from the time written in the token by the worker that made it: a worker whose clock runs
  minutes behind would make every token look old (and resent in the instant between its hand-on
  and its publish), one whose clock runs ahead would make them never old.
- **What it counts.** Units of work: self-play games (seed games are not part of the target, as in
  the embedded build) or expansions.
- **When it stops.** When the book has no unit open and no more to create: ``target`` units done,
  or fewer when units were set aside (they failed ``OBOOK_MAX_GAME_FAILURES`` times: a poison unit
  is not replaced) or a minimax book has nothing left to expand. ``DriverStep.set_aside`` says how
  many were set aside.
- **Durable when it says done.** Workers commit moves asynchronously on PostgreSQL
  (``synchronous_commit = off``), but every finish commits synchronously (``finish_game``), and a
  finish is visible to the driver only once it is on disk. Before ``run`` reports done it also
  confirms that everything committed so far is on disk (``Store.confirm_durable``: a synchronous
  commit, whose WAL flush covers every earlier commit, a set-aside game's included), so a database
  crash right after "done" loses nothing the driver counted.
- **Whose clock.** Whether a lease has expired is asked of the database (its clock), so a driver
  whose clock runs ahead of a worker's does not take that worker's games; a token's age is the
  driver's own measure (above). No decision reads another machine's clock.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass, field
from typing import Callable

from obook.book.kinds import book_kind
from obook.grid.slices import TOKEN_PREFIX, new_token
from obook.store import jobs
from obook.store.books import get_book
from obook.store.db import Store, StoreError
from obook.store.workers import live_workers, quarantined_workers

log = logging.getLogger(__name__)

GRID_KIND = "celery"  # workers.kind of grid players

Send = Callable[[int, str], None]  # (unit id, token) -> publish a task
Pending = Callable[[], str | None]  # the text of every message the broker holds (None: unknown)


@dataclass
class DriverPlan:
    book: str
    target: int  # units done the book should have (finished self-play games, expansions)
    token_seconds: float = 120.0  # how long a sent unit waits for a worker before it is sent again
    min_in_flight: int = 2  # units in flight before any worker has been seen
    live_within: float = 60.0  # a worker seen this recently is counted as alive
    stale_token_seconds: float = 5.0  # a token seen this long whose message the broker lacks is lost
    poll: float = 1.0
    operator_poll: float = 5.0  # between two looks while units set aside wait for an operator


@dataclass
class DriverStep:
    finished: int  # units done
    in_progress: int  # units open
    live_workers: int
    wanted_in_flight: int
    set_aside: int = 0
    created: list[int] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)
    done: bool = False
    durable: bool = False  # done, and everything counted confirmed on disk (``Driver.run``)

    @property
    def needs_operator(self) -> bool:
        """Nothing left to do but units set aside, which only an operator can put back."""
        return self.done and self.set_aside > 0


def wanted_in_flight(live_workers: int, minimum: int, units_per_second: float = 0.0, gap_seconds: float = 0.0) -> int:
    """Live players plus a margin waiting in the queue, so that a player finishing a unit between
    two steps of the driver finds the next one waiting: a quarter of the players (at least two), or
    twice what the grid finishes in the time between two steps (``units_per_second`` measured,
    ``gap_seconds`` the poll and the step's own time), whichever is more. Short units (tiny searches,
    a fast grid) would otherwise drain the queue before the next step fills it."""
    margin = max(2, live_workers // 4, math.ceil(2 * units_per_second * gap_seconds))
    return max(minimum, live_workers + margin)


class FinishRate:
    """Units finished a second, from the done counts of the driver's steps (a moving window)."""

    def __init__(self, window_seconds: float = 30.0):
        self.window = window_seconds
        self.seen: list[tuple[float, int]] = []

    def update(self, done: int, now: float | None = None) -> float:
        now = time.monotonic() if now is None else now
        self.seen.append((now, done))
        while len(self.seen) > 2 and now - self.seen[1][0] >= self.window:
            self.seen.pop(0)
        (t0, d0), (t1, d1) = self.seen[0], self.seen[-1]
        return (d1 - d0) / (t1 - t0) if t1 > t0 else 0.0


class Driver:
    def __init__(self, store: Store, plan: DriverPlan, send: Send, pending: Pending = lambda: None):
        self.store = store
        self.plan = plan
        self.send = send
        self.pending = pending
        self.tokens_seen: dict[tuple[int, str], float] = {}  # (game, token) -> when this driver first saw it
        self.finish_rate = FinishRate()
        self.step_seconds = 0.0  # the last step's own time
        with store.read() as conn:
            self.book = get_book(conn, plan.book)
        self.kind = book_kind(self.book)

    def live_workers(self) -> int:
        """Grid worker processes heard from lately, those of quarantined workers not counted."""
        with self.store.read() as conn:
            quarantined = quarantined_workers(conn)
            return sum(1 for w in live_workers(conn, self.plan.live_within)
                       if w["kind"] == GRID_KIND and w["worker_id"] not in quarantined)

    def step(self) -> DriverStep:
        started = time.monotonic()
        try:
            return self._step()
        finally:
            self.step_seconds = time.monotonic() - started

    def _step(self) -> DriverStep:
        book, kind = self.book, self.kind
        with self.store.read() as conn:
            counts = kind.counts(conn, book)
        live = self.live_workers()
        wanted = wanted_in_flight(live, self.plan.min_in_flight, self.finish_rate.update(counts.done),
                                  self.plan.poll + self.step_seconds)
        result = DriverStep(counts.done, counts.open, live, wanted, set_aside=counts.set_aside)
        accounted = counts.done + counts.set_aside
        if accounted >= self.plan.target and counts.open == 0:
            result.done = True
            return result
        if counts.open < wanted and accounted + counts.open < self.plan.target:
            result.created = kind.top_up(self.store, book, self.plan.target, wanted - counts.open)
            if not result.created and counts.open == 0:  # nothing left to do (a minimax book fully expanded)
                result.done = True
                return result
        result.sent = self.resend()
        return result

    def resend(self) -> list[int]:
        """Send every open unit that nobody holds and whose message cannot be waiting."""
        with self.store.read() as conn:
            units = jobs.in_flight(conn, self.kind.jobs, self.book.id)  # expired: by the database's clock
        pending: str | None | bool = False  # read from the broker when first needed
        sent = []
        now = time.monotonic()
        seen = self.tokens_seen = {(unit_id, owner): self.tokens_seen.get((unit_id, owner), now)
                                   for unit_id, owner, expired in units if owner and owner.startswith(TOKEN_PREFIX)}
        for unit_id, owner, expired in units:
            stale = False
            if not expired:
                if (unit_id, owner) not in seen or now - seen[unit_id, owner] < self.plan.stale_token_seconds:
                    continue  # a worker holds it, or its message may still be on its way
                if pending is False:
                    pending = self.pending()
                stale = pending is not None and owner not in pending
                if not stale:
                    continue
            lease = self.kind.token_lease(self.store, new_token(), self.plan.token_seconds)
            if expired:
                taken = lease.claim(self.book.id, unit_id) is not None
            else:
                taken = lease.take_over(unit_id, owner)
            if not taken:
                continue
            try:
                self.send(unit_id, lease.owner)
            except Exception as exc:  # noqa: BLE001 - a broker failure: the token expires, the next step resends
                log.warning("cannot send %s %d (%s); retrying when its token expires", self.kind.unit, unit_id, exc)
                break
            if owner is not None:
                log.info("%s %d resent: %s", self.kind.unit, unit_id,
                         f"its lease ({owner}) expired" if expired else
                         f"its token {owner} was seen {now - seen[unit_id, owner]:.1f} s ago and the broker has no message for it")
            sent.append(unit_id)
        return sent

    def run(self, on_step: Callable[[DriverStep], None] | None = None, max_seconds: float | None = None,
            wait_on_set_aside: bool = False) -> DriverStep:
        """Step until the book has its target, confirmed on disk (or ``max_seconds`` pass); store
        errors are waited out. Units set aside end the run too, unless ``wait_on_set_aside``: then
        it waits for an operator to put them back (looking every ``operator_poll`` seconds) and
        goes on with them."""
        started = time.monotonic()
        while True:
            try:
                step = self.step()
                if step.done:
                    step.durable = self.store.confirm_durable()
            except StoreError as exc:
                log.warning("store unreachable, retrying: %s", exc)
                time.sleep(self.plan.poll)
                continue
            if on_step is not None:
                on_step(step)
            waiting = step.needs_operator and wait_on_set_aside
            if step.done and step.durable and not waiting:
                return step
            if max_seconds is not None and time.monotonic() - started > max_seconds:
                return step
            time.sleep(max(self.plan.poll, self.plan.operator_poll) if waiting else self.plan.poll)
