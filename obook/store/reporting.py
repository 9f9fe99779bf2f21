"""Read-only figures for people watching a store: the service's book list, progress and charts.

Kept apart from ``games`` and ``stats`` (which the builders write through) so that reporting can grow without
touching the guarded statements. Every list is bounded by the caller's ``limit``; every count is
an index range count (``ix_games_book_status``, ``ix_games_book_finished``), never a scan of the
statistics table, so the progress page stays cheap however big the book grows.
"""

from __future__ import annotations

import asyncio
import collections
import datetime as dt
import weakref
from dataclasses import dataclass

from sqlalchemy import Connection, case, func, select

from obook.store.books import BOOKS, BookInfo, book_from_row
from obook.store.db import as_utc, db_time, to_signed
from obook.store.games import GAMES, GameRow, game_from_row
from obook.store.models import ABANDONED, FINISHED, IN_PROGRESS, SELFPLAY, SET_ASIDE, utcnow
from obook.store.stats import position_stats
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
    """Self-play games finished in ``[start, end)``."""

    start: dt.datetime
    end: dt.datetime
    games: int

    @property
    def per_hour(self) -> float:
        seconds = (self.end - self.start).total_seconds()
        return self.games * 3600.0 / seconds if seconds > 0 else 0.0


@dataclass(frozen=True)
class GrowthPoint:
    """Finished games (self-play and seeds) in the book at ``at``."""

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
    """Self-play games finished in each of ``buckets`` equal slices of the last ``span``, oldest first.
    One grouped query: the bucket of a game is computed here, from its finish time."""
    now = now or utcnow()
    start = now - span
    width = span / buckets
    games = [0] * buckets
    rows = conn.execute(select(GAMES.c.finished_at).where(
        GAMES.c.book_id == book_id, GAMES.c.status == FINISHED, GAMES.c.source == SELFPLAY,
        GAMES.c.finished_at >= start, GAMES.c.finished_at < now))
    for (finished_at,) in rows:
        index = int((as_utc(finished_at) - start) / width)
        games[min(max(index, 0), buckets - 1)] += 1
    return [RatePoint(start + i * width, start + (i + 1) * width, games[i]) for i in range(buckets)]


def growth_series(conn: Connection, book: BookInfo, points: int = 24, now: dt.datetime | None = None) -> list[GrowthPoint]:
    """Finished games at ``points`` evenly spaced instants from the book's creation (or its first
    finished game, if older: seeds keep their import time) to now, in one pass over the book's
    finished games (one ``SUM(CASE ...)`` per instant)."""
    now = now or utcnow()
    first = conn.execute(select(func.min(GAMES.c.finished_at)).where(
        GAMES.c.book_id == book.id, GAMES.c.status == FINISHED)).scalar_one_or_none()
    start = min(as_utc(first), book.created_at) if first is not None else book.created_at
    step = max(now - start, dt.timedelta(0)) / max(points - 1, 1)
    instants = [start + i * step for i in range(points - 1)] + [now]
    counts = conn.execute(select(*[
        func.coalesce(func.sum(case((GAMES.c.finished_at <= t, 1), else_=0)), 0) for t in instants
    ]).where(GAMES.c.book_id == book.id, GAMES.c.status == FINISHED)).one()
    return [GrowthPoint(t, int(n)) for t, n in zip(instants, counts)]


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


# The statistics of one position (``obook.store.stats.position_stats``) in psycopg's parameter style.
POSITION_STATS_SQL = ("SELECT move, games, wins, draws, scored, score_sum FROM book_stats "
                      "WHERE book_id = %s AND position_key = %s")


class StatsReader:
    """Point reads of a book's statistics for a service that answers many lookups a second.

    On PostgreSQL it keeps its own pool of autocommit connections without a liveness ping: a
    lookup is one ``SELECT`` by primary-key prefix, and the ``BEGIN``/``COMMIT`` and ping around it
    would triple its round trips. A connection the server dropped fails one request (503) and is
    replaced. On SQLite it reads through the store's engine.
    """

    def __init__(self, store, pool_size: int = 8):
        from sqlalchemy import create_engine

        self.store = store
        if store.is_sqlite:
            self.engine = store.engine
        else:
            self.engine = create_engine(store.url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=False,
                                        isolation_level="AUTOCOMMIT")

    def position_stats(self, book_id: int, key: int) -> list[tuple]:
        """``obook.store.stats.position_stats``; on PostgreSQL as one fixed SQL string on the pool's
        DBAPI connection: SQLAlchemy's statement building, compiled-cache key and result objects
        cost about three times the query itself (0.5 of 0.7 ms), the largest part of an uncached
        lookup once the replay is compiled (issue 20, item 9). psycopg prepares the statement on
        each connection after a few executions."""
        if self.store.is_sqlite:
            return self._read(position_stats, book_id, key)
        return self._read_raw(POSITION_STATS_SQL, (book_id, to_signed(key)))

    def _read_raw(self, sql: str, params: tuple):
        from sqlalchemy.exc import DBAPIError

        from obook.store.db import StoreError

        try:
            raw = self.engine.raw_connection()
        except (DBAPIError, OSError, self._operational) as exc:  # no connection could be made (the pool
            # passes on the driver's own error)
            why = exc.orig if isinstance(exc, DBAPIError) else exc
            raise StoreError(f"cannot reach the database {self.store.name}: {str(why).strip()[:200]}") from None
        try:
            with raw.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall()
        except Exception as exc:
            raw.invalidate()  # a dropped connection is not given back to the pool
            if isinstance(exc, (OSError, self._operational)):
                raise StoreError(f"cannot reach the database {self.store.name}: {str(exc).strip()[:200]}") from None
            raise
        finally:
            raw.close()

    @property
    def _operational(self):
        import psycopg

        return psycopg.OperationalError

    def _read(self, query, *args):
        from sqlalchemy.exc import DBAPIError

        from obook.store.db import StoreError

        try:
            with self.engine.connect() as conn:
                return query(conn, *args)
        except DBAPIError as exc:
            if exc.connection_invalidated or isinstance(exc.orig, OSError) or "connect" in str(exc.orig).lower():
                raise StoreError(f"cannot reach the database {self.store.name}: {str(exc.orig).strip()[:200]}") from None
            raise

    def finished_games(self, book_id: int) -> int:
        return self._read(count_games, book_id, FINISHED)

    def work_done(self, book_id: int) -> int:
        """What changes a book's answers: its finished games, or a minimax book's expansions done."""
        from obook.store.minimax import count_done

        return self._read(count_games, book_id, FINISHED) + self._read(count_done, book_id)

    def minimax_node(self, book_id: int, key: int):
        """A minimax book's node with its children's bounds (``obook.store.minimax.node_reader``)."""
        from obook.store.minimax import node_reader

        return self._read(lambda conn: node_reader(conn, book_id)(key))

    def dispose(self) -> None:
        if self.engine is not self.store.engine:
            self.engine.dispose()


def count_at_move_cap(conn: Connection, book_id: int, cap: int) -> int:
    """Finished self-play games of a book that reached ``cap`` moves: the cap ended them, not two
    passes or a resignation (a cycle the rules allowed, or a game nobody could finish)."""
    return conn.execute(select(func.count()).select_from(GAMES).where(
        GAMES.c.book_id == book_id, GAMES.c.status == FINISHED, GAMES.c.source == SELFPLAY,
        GAMES.c.n_moves >= cap)).scalar_one()


class AsyncStatsReader:
    """``StatsReader.position_stats`` for the service's event loop, on PostgreSQL: a small pool of
    psycopg ``AsyncConnection`` (autocommit, the statement prepared on each) per event loop.

    Why: an uncached lookup is a few tens of microseconds of compiled replay and one indexed
    ``SELECT``; handing it to a thread and back costs more than both (about 0.1 ms of CPU per hop
    here, and the GIL passed between the loop and the threads at each step), so the service reads
    the statistics on the loop itself (issue 20, item 9). Connections are made when first needed,
    at most ``pool_size`` per loop; one that fails is closed and the request fails (503)."""

    def __init__(self, store, pool_size: int = 4):
        from sqlalchemy.engine import make_url

        self.store = store
        self.pool_size = max(pool_size, 1)
        url = make_url(store.url)
        self.conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._pools: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopPool]" = weakref.WeakKeyDictionary()

    async def position_stats(self, book_id: int, key: int) -> list[tuple]:
        import psycopg

        from obook.store.db import StoreError

        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            pool = self._pools[loop] = _LoopPool(self.pool_size)
        try:
            conn = await pool.get(self._connect)
        except (OSError, psycopg.OperationalError) as exc:
            raise StoreError(f"cannot reach the database {self.store.name}: {str(exc).strip()[:200]}") from None
        try:
            cursor = await conn.execute(POSITION_STATS_SQL, (book_id, to_signed(key)), prepare=True)
            rows = await cursor.fetchall()
        except BaseException as exc:  # cancelled mid-query or failed: the connection's state is unknown
            pool.discard()
            await _close_quietly(conn)
            if isinstance(exc, (OSError, psycopg.OperationalError)):
                raise StoreError(f"cannot reach the database {self.store.name}: {str(exc).strip()[:200]}") from None
            raise
        pool.put(conn)
        return rows

    async def _connect(self):
        import psycopg

        return await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True, connect_timeout=10)

    async def close(self) -> None:
        """Close the running loop's connections (the service's shutdown)."""
        pool = self._pools.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            for conn in pool.idle:
                await _close_quietly(conn)
            pool.idle.clear()


async def _close_quietly(conn) -> None:
    try:
        await conn.close()
    except Exception:  # noqa: BLE001 - closing a broken connection
        pass


class _LoopPool:
    """Idle connections of one event loop, and the requests waiting for one."""

    def __init__(self, size: int):
        self.size = size
        self.count = 0  # connections made and not discarded
        self.idle: list = []
        self.waiters: collections.deque[asyncio.Future] = collections.deque()

    async def get(self, connect):
        while True:
            if self.idle:
                return self.idle.pop()
            if self.count < self.size:
                self.count += 1
                try:
                    return await connect()
                except BaseException:
                    self.count -= 1
                    self._wake(None)
                    raise
            waiter = asyncio.get_running_loop().create_future()
            self.waiters.append(waiter)
            try:
                conn = await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._pass_on(waiter.result())  # handed over as the request was cancelled
                raise
            if conn is not None:
                return conn  # None: a connection was discarded, make one

    def put(self, conn) -> None:
        self._pass_on(conn)

    def _pass_on(self, conn) -> None:
        """Give ``conn`` (or, for None, the right to make one) to a waiter, or keep it idle."""
        if not self._wake(conn) and conn is not None:
            self.idle.append(conn)

    def discard(self) -> None:
        self.count -= 1
        self._wake(None)

    def _wake(self, conn) -> bool:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(conn)
                return True
        return False
