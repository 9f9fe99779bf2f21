"""Read-only figures for people watching a store: the service's book list, progress and charts.

Kept apart from ``games`` and ``stats`` (which the builders write through) so that reporting can grow without
touching the guarded statements. Every list is bounded by the caller's ``limit``; every count is
an index range count (``ix_games_book_status``, ``ix_games_book_finished``), never a scan of the
statistics table, so the progress page stays cheap however big the book grows.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import Connection, case, func, select

from obook.store.books import BOOKS, BookInfo, book_from_row
from obook.store.db import as_utc, db_time
from obook.store.games import GAMES, GameRow, game_from_row
from obook.store.jobs import GAME_JOBS, JobTable
from obook.store.models import ABANDONED, FINISHED, IN_PROGRESS, SELFPLAY, SET_ASIDE, utcnow
from obook.store.workers import WORKERS


@dataclass(frozen=True)
class BookCounts:
    book: BookInfo
    finished: int
    in_progress: int
    abandoned: int
    set_aside: int = 0  # games whose play failed OBOOK_MAX_GAME_FAILURES times


@dataclass(frozen=True)
class RatePoint:
    """Units of work (self-play games, expansions) done in ``[start, end)``."""

    start: dt.datetime
    end: dt.datetime
    units: int

    @property
    def per_hour(self) -> float:
        seconds = (self.end - self.start).total_seconds()
        return self.units * 3600.0 / seconds if seconds > 0 else 0.0


@dataclass(frozen=True)
class GrowthPoint:
    """The book's size at ``at``: its finished games (self-play and seeds), or its expansions done."""

    at: dt.datetime
    finished: int


def count_books(conn: Connection) -> int:
    return conn.execute(select(func.count()).select_from(BOOKS)).scalar_one()


def books_with_counts(conn: Connection, limit: int = 100, offset: int = 0) -> list[BookCounts]:
    """A page of books (by name) with their games by status."""
    books = [book_from_row(r) for r in conn.execute(select(BOOKS).order_by(BOOKS.c.name).limit(limit).offset(offset))]
    if not books:
        return []
    counts: dict[int, dict[str, int]] = {}
    query = (select(GAMES.c.book_id, GAMES.c.status, func.count())
             .where(GAMES.c.book_id.in_([b.id for b in books]))
             .group_by(GAMES.c.book_id, GAMES.c.status))
    for book_id, status, n in conn.execute(query):
        counts.setdefault(book_id, {})[status] = n
    return [BookCounts(b, counts.get(b.id, {}).get(FINISHED, 0), counts.get(b.id, {}).get(IN_PROGRESS, 0),
                       counts.get(b.id, {}).get(ABANDONED, 0), counts.get(b.id, {}).get(SET_ASIDE, 0)) for b in books]


def finished_since(conn: Connection, since: dt.datetime) -> dict[int, int]:
    """{book id: self-play games finished since ``since``} for every book that finished any."""
    rows = conn.execute(select(GAMES.c.book_id, func.count()).where(
        GAMES.c.status == FINISHED, GAMES.c.source == SELFPLAY, GAMES.c.finished_at >= since,
    ).group_by(GAMES.c.book_id))
    return {book_id: n for book_id, n in rows}


def rate_series(conn: Connection, book_id: int, span: dt.timedelta = dt.timedelta(hours=1), buckets: int = 12,
                now: dt.datetime | None = None) -> list[RatePoint]:
    """Self-play games finished in each of ``buckets`` equal slices of the last ``span``, oldest first."""
    return unit_rate_series(conn, GAME_JOBS, book_id, span, buckets, now)


def unit_rate_series(conn: Connection, jobs: JobTable, book_id: int, span: dt.timedelta = dt.timedelta(hours=1),
                     buckets: int = 12, now: dt.datetime | None = None) -> list[RatePoint]:
    """The book's units of ``jobs`` (self-play games, expansions) done in each of ``buckets`` equal
    slices of the last ``span``, oldest first. One query: the bucket of a unit is computed here,
    from the time it was done."""
    now = now or utcnow()
    start = now - span
    width = span / buckets
    done = [0] * buckets
    when = jobs.done_at
    rows = conn.execute(select(when).where(*jobs.in_book(book_id), jobs.table.c.status == jobs.done,
                                           when >= start, when < now))
    for (done_at,) in rows:
        index = int((as_utc(done_at) - start) / width)
        done[min(max(index, 0), buckets - 1)] += 1
    return [RatePoint(start + i * width, start + (i + 1) * width, done[i]) for i in range(buckets)]


def growth_series(conn: Connection, book: BookInfo, points: int = 24, now: dt.datetime | None = None) -> list[GrowthPoint]:
    """Finished games (seeds included: they are in the book) over the book's life."""
    return unit_growth_series(conn, GAME_JOBS, book, points, now)


def unit_growth_series(conn: Connection, jobs: JobTable, book: BookInfo, points: int = 24,
                       now: dt.datetime | None = None) -> list[GrowthPoint]:
    """The book's done rows of ``jobs`` (finished games, seeds included; expansions done) at
    ``points`` evenly spaced instants from the book's creation (or its first done row, if older:
    seeds keep their import time) to now, in one pass over them (one ``SUM(CASE ...)`` per instant)."""
    now = now or utcnow()
    when = jobs.done_at
    done = (jobs.table.c.book_id == book.id, jobs.table.c.status == jobs.done)
    first = conn.execute(select(func.min(when)).where(*done)).scalar_one_or_none()
    start = min(as_utc(first), book.created_at) if first is not None else book.created_at
    step = max(now - start, dt.timedelta(0)) / max(points - 1, 1)
    instants = [start + i * step for i in range(points - 1)] + [now]
    counts = conn.execute(select(*[
        func.coalesce(func.sum(case((when <= t, 1), else_=0)), 0) for t in instants
    ]).where(*done)).one()
    return [GrowthPoint(t, int(n)) for t, n in zip(instants, counts)]


def expansions_done(conn: Connection) -> int:
    """Expansions done in every book (each book's counter, ``books.expansions_done``)."""
    return int(conn.execute(select(func.coalesce(func.sum(BOOKS.c.expansions_done), 0))).scalar_one())


def in_flight_games(conn: Connection, book_id: int, limit: int = 20) -> list[GameRow]:
    """The in-progress games someone holds the lease of, most recently moved first."""
    rows = conn.execute(select(GAMES).where(
        GAMES.c.book_id == book_id, GAMES.c.status == IN_PROGRESS, GAMES.c.lease_owner.is_not(None),
    ).order_by(GAMES.c.updated_at.desc(), GAMES.c.id.desc()).limit(limit))
    return [game_from_row(r) for r in rows]


def count_in_flight(conn: Connection, book_id: int) -> int:
    return conn.execute(select(func.count()).select_from(GAMES).where(
        GAMES.c.book_id == book_id, GAMES.c.status == IN_PROGRESS, GAMES.c.lease_owner.is_not(None))).scalar_one()


def count_games(conn: Connection, book_id: int, status: str | None = None) -> int:
    query = select(func.count()).select_from(GAMES).where(GAMES.c.book_id == book_id)
    if status is not None:
        query = query.where(GAMES.c.status == status)
    return conn.execute(query).scalar_one()


def count_live_workers(conn: Connection, within_seconds: float = 60.0) -> int:
    since = db_time(conn, -within_seconds)  # heartbeats are dated by the database's clock
    return conn.execute(select(func.count()).select_from(WORKERS).where(WORKERS.c.last_seen >= since)).scalar_one()


def book_names(conn: Connection, ids: list[int]) -> dict[int, str]:
    if not ids:
        return {}
    return dict(conn.execute(select(BOOKS.c.id, BOOKS.c.name).where(BOOKS.c.id.in_(ids))).all())


def count_at_move_cap(conn: Connection, book_id: int, cap: int) -> int:
    """Finished self-play games of a book that reached ``cap`` moves: the cap ended them, not two
    passes or a resignation (a cycle the rules allowed, or a game nobody could finish)."""
    return conn.execute(select(func.count()).select_from(GAMES).where(
        GAMES.c.book_id == book_id, GAMES.c.status == FINISHED, GAMES.c.source == SELFPLAY,
        GAMES.c.n_moves >= cap)).scalar_one()
