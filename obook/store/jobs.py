"""The one protocol of leased work: a unit (a self-play game, a minimax book's expansion) is done by
whoever holds its lease, each step a guarded statement so that a duplicate or late caller (a
redelivered task, a worker that lost its lease, a second builder) changes nothing it should not.

A unit is *open* (waiting, or worked on by its lease's owner) until it is *done*, or *set aside*
after failing ``max_failures`` times (an error that is neither a lost lease nor the database's:
an engine bug, a poison unit), with the reason of its last failure. Its lease moves so:

- ``claim``: an open unit whose lease is free or expired (or already ours), the first by the
  kind's order, or the one asked for;
- ``renew``: the owner keeps it while it works; ``pass_lease``: from its owner to a successor
  (a grid task's token and back, which is how a unit travels between tasks); ``release``: give
  it back untouched;
- ``record_failure``: count a failure and the worker it failed on (``failed_by``), free the lease
  and keep the unit from everyone for a back-off (``retry_seconds``, doubling with each failure:
  nobody's lease until then), and set it aside at the limit, which on the grid also needs failures
  on ``min_workers`` different workers, so that one broken worker cannot set healthy units aside;
  ``retry_set_aside`` puts set-aside units back;
- the kind's own write that closes it (``finish_game``, ``stage_result``) is guarded by the
  owner in the same way.

Leases are dated and compared by the database's clock (``db_time``), so machines whose clocks
disagree still agree on which lease has expired. ``obook.store.leases.Lease`` is how a worker
uses these statements; ``JobTable`` names the two tables that hold units.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from sqlalchemy import Column, Connection, Table, and_, bindparam, case, func, or_, select, update

from obook.store.db import db_time, db_time_at, db_time_offset
from obook.store.models import (DONE, FINISHED, IN_PROGRESS, PENDING, SELFPLAY, SET_ASIDE, Book, Expansion, Game)


@dataclass(frozen=True)
class JobTable:
    """Where one kind of unit lives: its table, its open and done statuses, the order in which free
    units are taken, and the rows it counts (``scope``: a book's seed games are no work)."""

    name: str  # "game", "expansion": how messages and the poison hook name a unit
    table: Table
    open: str
    done: str
    order: tuple[Column, ...]
    scope: tuple = ()  # extra conditions on the rows that are units
    counts_claims: bool = False  # a claim adds one to ``attempts``
    done_count: Column | None = None  # a column of ``books`` that counts the book's units done (None: count them)
    done_at: Column | None = None  # when a unit was done (the progress page's rate and growth charts)

    def in_book(self, book_id: int) -> list:
        return [self.table.c.book_id == book_id, *self.scope]


_GAMES = Game.__table__
_EXPANSIONS = Expansion.__table__
GAME_JOBS = JobTable("game", _GAMES, IN_PROGRESS, FINISHED, (_GAMES.c.id,), scope=(_GAMES.c.source == SELFPLAY,),
                     done_at=_GAMES.c.finished_at)
_BOOKS = Book.__table__
EXPANSION_JOBS = JobTable("expansion", _EXPANSIONS, PENDING, DONE, (_EXPANSIONS.c.cost, _EXPANSIONS.c.id),
                          counts_claims=True, done_count=_BOOKS.c.expansions_done, done_at=_EXPANSIONS.c.done_at)
JOB_TABLES = (GAME_JOBS, EXPANSION_JOBS)


@dataclass(frozen=True)
class UnitCounts:
    """A book's units by state (``leased``: open units whose lease is current)."""

    done: int = 0
    open: int = 0
    set_aside: int = 0
    leased: int = 0


def claim(conn: Connection, jobs: JobTable, book_id: int, owner: str, lease_seconds: float,
          unit_id: int | None = None) -> int | None:
    """Take the lease of an open unit nobody holds (or whose lease expired), first in the kind's
    order, or of ``unit_id``. The unit's id, or None when there is none to take."""
    dialect = conn.dialect.name
    taken = conn.execute(_claim_statement(jobs.name, dialect, unit_id is not None), {
        "book": book_id, "unit": unit_id, "owner": owner, "now": db_time_offset(dialect),
        "until": db_time_offset(dialect, lease_seconds)}).first()
    return taken[0] if taken is not None else None


@functools.cache
def _claim_statement(kind: str, dialect: str, by_id: bool):
    """``claim``'s statement for one kind of unit and dialect, built once (parameters: book, unit,
    owner, now and until, the offsets of ``db_time_at``)."""
    jobs = next(j for j in JOB_TABLES if j.name == kind)
    t = jobs.table
    free = and_(t.c.status == jobs.open, or_(t.c.lease_until.is_(None), t.c.lease_until < db_time_at(dialect, "now"),
                                             t.c.lease_owner == bindparam("owner")))
    in_book = [t.c.book_id == bindparam("book"), *jobs.scope]
    if by_id:
        pick = select(t.c.id).where(t.c.id == bindparam("unit"), *in_book, free)
    else:
        pick = select(t.c.id).where(*in_book, free).order_by(*jobs.order).limit(1)
    if dialect == "postgresql":  # claimers running at once take different units, without waiting
        pick = pick.with_for_update(skip_locked=True)
    claimed = {"attempts": t.c.attempts + 1} if jobs.counts_claims else {}
    return update(t).where(t.c.id == pick.scalar_subquery(), free).values(
        lease_owner=bindparam("owner"), lease_until=db_time_at(dialect, "until"), **claimed).returning(t.c.id)


def renew(conn: Connection, jobs: JobTable, unit_id: int, owner: str, lease_seconds: float) -> bool:
    t = jobs.table
    result = conn.execute(update(t).where(t.c.id == unit_id, t.c.lease_owner == owner, t.c.status == jobs.open)
                          .values(lease_until=db_time(conn, lease_seconds)))
    return result.rowcount == 1


def pass_lease(conn: Connection, jobs: JobTable, unit_id: int, owner: str, successor: str,
               lease_seconds: float) -> bool:
    """Hand the lease of an open unit from ``owner`` to ``successor`` (a grid task token, or the
    worker that received the token). False when ``owner`` no longer holds it."""
    t = jobs.table
    result = conn.execute(update(t).where(t.c.id == unit_id, t.c.lease_owner == owner, t.c.status == jobs.open)
                          .values(lease_owner=successor, lease_until=db_time(conn, lease_seconds)))
    return result.rowcount == 1


def release(conn: Connection, jobs: JobTable, unit_id: int, owner: str) -> None:
    t = jobs.table
    conn.execute(update(t).where(t.c.id == unit_id, t.c.lease_owner == owner).values(
        lease_owner=None, lease_until=None))


RETRY_LONGEST = 300.0  # the longest back-off of a failed unit, seconds


def record_failure(conn: Connection, jobs: JobTable, unit_id: int, owner: str, reason: str,
                   max_failures: int, worker_id: str | None = None, min_workers: int = 1,
                   retry_seconds: float = 0.0) -> str | None:
    """Count one failed attempt at ``unit_id`` (held by ``owner``, a process of worker
    ``worker_id``) and free its lease; it is tried again after ``retry_seconds`` times 2 to the
    failures before this one (at most ``RETRY_LONGEST``): until then its lease is nobody's. At
    ``max_failures`` failures on at least ``min_workers`` different workers (``failed_by``) the unit
    is set aside with ``reason``. The unit's status now (open or set aside); None when ``owner`` no
    longer held it (nothing written)."""
    t = jobs.table
    mine = [t.c.id == unit_id, t.c.lease_owner == owner, t.c.status == jobs.open]
    pick = select(t.c.failures, t.c.failed_by).where(*mine)
    if conn.dialect.name == "postgresql":
        pick = pick.with_for_update()
    row = conn.execute(pick).first()
    if row is None:
        return None
    failures = row.failures + 1
    failed_by = [w for w in row.failed_by.split("\n") if w]
    if worker_id and worker_id not in failed_by:
        failed_by.append(worker_id)
    aside = failures >= max_failures and len(failed_by) >= min_workers
    wait = min(retry_seconds * 2 ** (failures - 1), RETRY_LONGEST) if retry_seconds > 0 else 0.0
    result = conn.execute(update(t).where(*mine).values(
        failures=failures, failure=reason[:2000], failed_by="\n".join(failed_by[-20:]), lease_owner=None,
        lease_until=db_time(conn, wait) if wait > 0 and not aside else None,
        status=SET_ASIDE if aside else t.c.status,
        **({"updated_at": db_time(conn)} if "updated_at" in t.c else {})))
    if result.rowcount != 1:
        return None
    return SET_ASIDE if aside else jobs.open


def retry_set_aside(conn: Connection, jobs: JobTable, book_id: int, unit_ids: list[int] | None = None) -> list[int]:
    """Put a book's set-aside units (or those of ``unit_ids``) back to work: open, their failures
    and the workers they failed on forgotten (the last reason is kept for reference). Their ids."""
    t = jobs.table
    where = [*jobs.in_book(book_id), t.c.status == SET_ASIDE]
    if unit_ids is not None:
        where.append(t.c.id.in_(unit_ids))
    ids = [r[0] for r in conn.execute(select(t.c.id).where(*where).order_by(t.c.id))]
    if ids:
        conn.execute(update(t).where(t.c.id.in_(ids), t.c.status == SET_ASIDE).values(
            status=jobs.open, failures=0, failed_by="", lease_owner=None, lease_until=None))
    return ids


def in_flight(conn: Connection, jobs: JobTable, book_id: int) -> list[tuple[int, str | None, bool]]:
    """(id, lease owner, whether its lease is free or expired by the database's clock) of every
    open unit of a book, in the kind's order: what a driver may have to send. A failed unit's
    back-off (no owner, a lease until its retry) is not expired until then."""
    t = jobs.table
    expired = case((or_(t.c.lease_until.is_(None), t.c.lease_until < db_time(conn)), True), else_=False)
    rows = conn.execute(select(t.c.id, t.c.lease_owner, expired).where(
        *jobs.in_book(book_id), t.c.status == jobs.open).order_by(*jobs.order))
    return [(i, o, bool(e)) for i, o, e in rows]


def held(conn: Connection, jobs: JobTable) -> list[tuple[int, str]]:
    """(unit id, owner) of every open unit someone holds, in every book."""
    t = jobs.table
    return [tuple(r) for r in conn.execute(select(t.c.id, t.c.lease_owner).where(
        t.c.status == jobs.open, t.c.lease_owner.is_not(None)))]


def set_aside(conn: Connection, jobs: JobTable, book_id: int, limit: int = 100) -> list[tuple[int, int, str | None]]:
    """(id, failures, reason) of a book's units set aside, newest first."""
    t = jobs.table
    return [tuple(r) for r in conn.execute(select(t.c.id, t.c.failures, t.c.failure).where(
        *jobs.in_book(book_id), t.c.status == SET_ASIDE).order_by(t.c.id.desc()).limit(limit))]


def counts(conn: Connection, jobs: JobTable, book_id: int) -> UnitCounts:
    """A book's units by state. With a ``done_count``, the open and set-aside units are counted
    (``(book_id, status)`` index: a read of those only) and the done ones read from the book's row."""
    t = jobs.table
    if jobs.done_count is None:
        by_status = dict(conn.execute(select(t.c.status, func.count()).where(*jobs.in_book(book_id))
                                      .group_by(t.c.status)).all())
    else:
        by_status = dict(conn.execute(select(t.c.status, func.count()).where(
            *jobs.in_book(book_id), t.c.status.in_([jobs.open, SET_ASIDE])).group_by(t.c.status)).all())
        by_status[jobs.done] = conn.execute(select(jobs.done_count).where(
            jobs.done_count.table.c.id == book_id)).scalar_one_or_none() or 0
    leased = conn.execute(select(func.count()).select_from(t).where(
        *jobs.in_book(book_id), t.c.status == jobs.open, t.c.lease_owner.is_not(None),
        t.c.lease_until >= db_time(conn))).scalar_one()
    return UnitCounts(by_status.get(jobs.done, 0), by_status.get(jobs.open, 0), by_status.get(SET_ASIDE, 0), leased)


def running(conn: Connection, jobs: JobTable, book_id: int, limit: int) -> list[int]:
    """Open units whose lease is current (someone works on them now), newest lease first."""
    t = jobs.table
    return [r[0] for r in conn.execute(select(t.c.id).where(
        *jobs.in_book(book_id), t.c.status == jobs.open, t.c.lease_until >= db_time(conn))
        .order_by(t.c.lease_until.desc(), t.c.id).limit(limit))]
