"""The kinds of book, as strategies behind one interface: what a book's algorithm changes, and the one
place that tests the algorithm's name.

A *statistical* book (MBM, MVBM, Beta: the seeds' coevolution) grows by self-play games and answers
from the statistics of its finished games; a *search-valued* book (minimax) grows by expansions
and answers from values backed up over its DAG of searched positions. Everything else is shared:
both kinds' units of work are leased through one protocol (``obook.store.jobs``, ``Lease``), run by
one worker loop (``obook.book.build.run_worker``), one grid task and one driver. Those ask the
book's ``BookKind`` for what differs:

- ``lease_type``: how a unit is held (its ``jobs``: where its units live); ``unit``: what one is
  called ("game", "expansion");
- ``worker``: a worker of one owner over one book: ``claim`` a unit (``Held``), ``advance`` it
  (True: it is done), ``release`` it, and its ``lease``;
- ``top_up``: create up to ``count`` units while the book is short of ``target`` (games, or the
  next expansions to schedule);
- ``counts``: the book's units by state;
- ``lookup``/``document``: the book's answer in a position and its serialised form;
- ``verify``, ``export``: the kind's own checks and SGF.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Connection

from obook.book.expansion import Expander, schedule
from obook.book.rules import ALGORITHMS, BETA, MBM, MINIMAX, MVBM, is_sampling
from obook.book.selfplay import SelfPlayer, start_games
from obook.store import jobs
from obook.store.books import BookInfo
from obook.store.db import Store
from obook.store.jobs import UnitCounts
from obook.store.leases import ExpansionLease, GameLease


class Held(Protocol):
    """A unit a worker holds the lease of."""

    @property
    def id(self) -> int: ...


class UnitWorker(Protocol):
    """What the worker loop, a grid slice and the tests ask of a worker, whatever the kind."""

    lease: object  # obook.store.leases.Lease

    def claim(self, unit_id: int | None = None, handoff: str | None = None) -> Held | None: ...

    def advance(self, held: Held, more: bool = False) -> bool: ...

    def release(self, held: Held) -> None: ...


class BookKind:
    name: str  # what the CLI and the documents call the algorithm's family
    unit: str
    lease_type: type  # GameLease, ExpansionLease: the lease a worker or a grid token holds a unit by

    @property
    def jobs(self) -> jobs.JobTable:
        return self.lease_type.jobs

    def worker(self, store: Store, book: BookInfo, owner: str | None = None, kind: str = "local",
               lease_seconds: float | None = None, seconds: float | None = None,
               heartbeat_seconds: float = 0.0) -> UnitWorker:
        raise NotImplementedError

    def top_up(self, store: Store, book: BookInfo, target: int, count: int = 1) -> list[int]:
        raise NotImplementedError

    def counts(self, conn: Connection, book: BookInfo) -> UnitCounts:
        return jobs.counts(conn, self.jobs, book.id)

    def token_lease(self, store: Store, token: str, seconds: float):
        """A grid token's lease on this kind's units (no heartbeat: a token is no worker)."""
        return self.lease_type(store, token, seconds, kind=None)

    def rule(self, book: BookInfo) -> str:
        """The book's rule in a few words (``obook books``, the SGF header)."""
        raise NotImplementedError


@dataclass(frozen=True)
class SelfPlayKind(BookKind):
    """MBM, MVBM, Beta: the population of self-play games is the book."""

    name: str = "self-play"
    unit: str = "game"
    lease_type: type = GameLease

    def worker(self, store, book, owner=None, kind="local", lease_seconds=None, seconds=None, heartbeat_seconds=0.0):
        return SelfPlayer(store, book, owner=owner, lease_seconds=lease_seconds, seconds=seconds, kind=kind,
                          heartbeat_seconds=heartbeat_seconds)

    def top_up(self, store, book, target, count=1):
        return start_games(store, book, target, count)

    def rule(self, book):
        if is_sampling(book):
            return "BETA sampling"
        return f"{book.algorithm.upper()} threshold {book.threshold:g}"


@dataclass(frozen=True)
class MinimaxKind(BookKind):
    """The search-valued book: expansions of searched positions, values backed up by minimax."""

    name: str = "search-valued"
    unit: str = "expansion"
    lease_type: type = ExpansionLease

    def worker(self, store, book, owner=None, kind="local", lease_seconds=None, seconds=None, heartbeat_seconds=0.0):
        return Expander(store, book, owner=owner, lease_seconds=lease_seconds, kind=kind,
                        heartbeat_seconds=heartbeat_seconds)

    def top_up(self, store, book, target, count=1):
        with store.write() as conn:
            return schedule(conn, book, count, target)

    def rule(self, book):
        return "MINIMAX search values"


SELF_PLAY = SelfPlayKind()
SEARCH_VALUED = MinimaxKind()
_KINDS = {MBM: SELF_PLAY, MVBM: SELF_PLAY, BETA: SELF_PLAY, MINIMAX: SEARCH_VALUED}
assert set(_KINDS) == set(ALGORITHMS)


def book_kind(book: BookInfo | str) -> BookKind:
    """The kind of ``book`` (or of an algorithm's name)."""
    return _KINDS[book if isinstance(book, str) else book.algorithm]


def is_search_valued(book: BookInfo | str) -> bool:
    return book_kind(book) is SEARCH_VALUED

