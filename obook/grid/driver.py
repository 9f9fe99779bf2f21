"""The driver of a grid build: keeps a book's games in play until it has its target of finished games.

It holds no state of its own (stop it, start it again, run it on another machine): every decision
is read from the store at each step.

- **How many games are in flight.** As many as there are live grid players (worker processes whose
  heartbeat is recent) plus a margin, so that a worker finishing a slice finds the next game waiting.
  No number of machines is configured: workers come and go and the count follows. Games are created
  with ``top_up_games``, which never lets finished plus in-progress games exceed the target.
- **Which games are sent.** An in-progress game whose lease is free or expired (its player vanished,
  or the message that carried its token was lost) is put under a fresh token and sent. A token the
  driver has seen on a game for a few seconds whose message the broker no longer has (neither
  waiting nor reserved by a worker) is replaced at once, so a broker restart costs seconds, not a
  lease. How long is measured by the driver's own monotonic clock from its first sight of the token,
  not from the time written in the token by the worker that made it: a worker whose clock runs
  minutes behind would make every token look old (and resent in the instant between its hand-on
  and its publish), one whose clock runs ahead would make them never old.
- **What it counts.** Self-play games only, as the embedded build does: seed games are not part of
  the target.
- **When it stops.** When the book has no game in progress and no more to create: ``target``
  finished games, or fewer when games were set aside (their play failed ``OBOOK_MAX_GAME_FAILURES``
  times: a poison game is not replaced). ``DriverStep.set_aside`` says how many.
- **A minimax book.** The unit of work is an expansion, not a game: the driver schedules the
  cheapest unscheduled nodes (``obook.book.expansion.schedule``) until as many are pending as it
  wants in flight, and sends every pending expansion whose lease is free or expired under a fresh
  token; it stops when ``target`` expansions are done. A duplicate delivery finds the expansion
  done or held by another token and does nothing.
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
import time
from dataclasses import dataclass, field
from typing import Callable

from obook.book.rules import MINIMAX
from obook.book.selfplay import start_games
from obook.grid.slices import TOKEN_PREFIX, new_token
from obook.store.books import get_book
from obook.store.db import Store, StoreError
from obook.store.games import game_counts, games_in_flight
from obook.store.leases import GameLease
from obook.store.models import FINISHED, IN_PROGRESS, SELFPLAY, SET_ASIDE
from obook.store.workers import live_workers

log = logging.getLogger(__name__)

GRID_KIND = "celery"  # workers.kind of grid players

Send = Callable[[int, str], None]  # (game id, token) -> publish a task
Pending = Callable[[], str | None]  # the text of every message the broker holds (None: unknown)


@dataclass
class DriverPlan:
    book: str
    target: int  # finished games the book should have
    token_seconds: float = 120.0  # how long a sent game waits for a worker before it is sent again
    min_in_flight: int = 2  # games in flight before any worker has been seen
    live_within: float = 60.0  # a worker seen this recently is counted as alive
    stale_token_seconds: float = 5.0  # a token seen this long whose message the broker lacks is lost
    poll: float = 1.0


@dataclass
class DriverStep:
    finished: int
    in_progress: int
    live_workers: int
    wanted_in_flight: int
    set_aside: int = 0
    created: list[int] = field(default_factory=list)
    sent: list[int] = field(default_factory=list)
    done: bool = False
    durable: bool = False  # done, and everything counted confirmed on disk (``Driver.run``)


def wanted_in_flight(live_workers: int, minimum: int) -> int:
    """Live players plus a margin of a quarter (at least two) waiting in the queue, so that a player
    finishing a game between two steps of the driver finds the next one waiting."""
    return max(minimum, live_workers + max(2, live_workers // 4))


class Driver:
    def __init__(self, store: Store, plan: DriverPlan, send: Send, pending: Pending = lambda: None):
        self.store = store
        self.plan = plan
        self.send = send
        self.pending = pending
        self.tokens_seen: dict[tuple[int, str], float] = {}  # (game, token) -> when this driver first saw it
        with store.read() as conn:
            self.book = get_book(conn, plan.book)

    def live_workers(self) -> int:
        with self.store.read() as conn:
            return sum(1 for w in live_workers(conn, self.plan.live_within) if w["kind"] == GRID_KIND)

    def step(self) -> DriverStep:
        book = self.book
        if book.algorithm == MINIMAX:
            return self.step_expansions()
        with self.store.read() as conn:
            counts = game_counts(conn, book.id, SELFPLAY).get(book.id, {})
        finished, in_progress, set_aside = counts.get(FINISHED, 0), counts.get(IN_PROGRESS, 0), counts.get(SET_ASIDE, 0)
        live = self.live_workers()
        wanted = wanted_in_flight(live, self.plan.min_in_flight)
        result = DriverStep(finished, in_progress, live, wanted, set_aside=set_aside)
        if finished + set_aside >= self.plan.target and in_progress == 0:
            result.done = True
            return result
        if in_progress < wanted and finished + in_progress + set_aside < self.plan.target:
            result.created = start_games(self.store, book, self.plan.target, wanted - in_progress)
        result.sent = self.resend()
        return result

    def step_expansions(self) -> DriverStep:
        """One step of a minimax book: ``finished`` counts expansions done, ``in_progress`` pending."""
        from obook.book.expansion import schedule
        from obook.store.minimax import expansion_counts, expansions_to_send, pass_expansion

        book = self.book
        with self.store.read() as conn:
            counts = expansion_counts(conn, book.id)
        done, pending = counts.get("done", 0), counts.get("pending", 0)
        live = self.live_workers()
        wanted = wanted_in_flight(live, self.plan.min_in_flight)
        result = DriverStep(done, pending, live, wanted)
        if done >= self.plan.target and pending == 0:
            result.done = True
            return result
        if pending < wanted:
            with self.store.write() as conn:
                result.created = schedule(conn, book, wanted - pending, self.plan.target)
        with self.store.read() as conn:
            waiting = expansions_to_send(conn, book.id)
        for job_id in waiting:
            token = new_token()
            with self.store.write() as conn:
                from obook.store.minimax import claim_expansion

                taken = claim_expansion(conn, book.id, token, self.plan.token_seconds, job_id) is not None
            if not taken:
                continue
            try:
                self.send(job_id, token)
            except Exception as exc:  # noqa: BLE001 - a broker failure: the token expires, the next step resends
                log.warning("cannot send expansion %d (%s); retrying when its token expires", job_id, exc)
                break
            result.sent.append(job_id)
        return result

    def resend(self) -> list[int]:
        """Send every in-progress game that nobody holds and whose message cannot be waiting."""
        with self.store.read() as conn:
            games = games_in_flight(conn, self.book.id)  # expired: by the database's clock
        pending: str | None | bool = False  # read from the broker when first needed
        sent = []
        now = time.monotonic()
        seen = self.tokens_seen = {(game_id, owner): self.tokens_seen.get((game_id, owner), now)
                                   for game_id, owner, expired in games if owner and owner.startswith(TOKEN_PREFIX)}
        for game_id, owner, expired in games:
            stale = False
            if not expired:
                if (game_id, owner) not in seen or now - seen[game_id, owner] < self.plan.stale_token_seconds:
                    continue  # a player holds it, or its message may still be on its way
                if pending is False:
                    pending = self.pending()
                stale = pending is not None and owner not in pending
                if not stale:
                    continue
            lease = GameLease(self.store, new_token(), self.plan.token_seconds, kind=None)  # a token: no heartbeat
            if expired:
                taken = lease.claim(self.book.id, game_id) is not None
            else:
                taken = lease.take_over(game_id, owner)
            if not taken:
                continue
            try:
                self.send(game_id, lease.owner)
            except Exception as exc:  # noqa: BLE001 - a broker failure: the token expires, the next step resends
                log.warning("cannot send game %d (%s); retrying when its token expires", game_id, exc)
                break
            sent.append(game_id)
        return sent

    def run(self, on_step: Callable[[DriverStep], None] | None = None, max_seconds: float | None = None) -> DriverStep:
        """Step until the book has its target, confirmed on disk (or ``max_seconds`` pass); store
        errors are waited out."""
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
            if step.done and step.durable:
                return step
            if max_seconds is not None and time.monotonic() - started > max_seconds:
                return step
            time.sleep(self.plan.poll)
