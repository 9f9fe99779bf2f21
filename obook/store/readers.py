"""What the service reads for every lookup: a position's statistics, a minimax node, and the count
that tells whether a book changed.

Kept apart from the dashboard's figures (``reporting``, read a few times a second at most) because
these answer thousands of requests a second: they keep connections of their own and skip what
SQLAlchemy adds around a query (``StatsReader`` for the service's threads, ``AsyncStatsReader``
for its event loop).

Both bound every query by ``timeout`` (``OBOOK_API_DB_TIMEOUT``) twice over: the server's statement
timeout ends a slow query, and a deadline of the client's own ends the wait for a connection that
stopped answering (a server behind a NAT that forgot it, a frozen machine, whose kernel may still
acknowledge and answer keepalives): at the deadline the connection's socket is shut down, the
query fails at once, the connection is dropped and the lookup fails (503) with ``QueryTimeout``.
Without it such a lookup waited for ever, and the freshness check (``api.freshness``) held its
book's lock meanwhile (issue 33, item 5). A new connection is bounded by ``OBOOK_DB_CONNECT_TIMEOUT``
and has TCP keepalives (``obook.store.db.postgres_connect_args``).
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import socket
import threading
import time
import weakref
from contextlib import contextmanager

from sqlalchemy import create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from obook.store.books import get_book
from obook.store.db import Store, StoreError, postgres_connect_args, to_signed, to_unsigned
from obook.store.minimax import ChildBounds, NodeRow, last_change, node_reader
from obook.store.models import FINISHED
from obook.store.reporting import count_games
from obook.store.stats import position_stats

# The statistics of one position (``obook.store.stats.position_stats``) in psycopg's parameter style.
POSITION_STATS_SQL = ("SELECT move, games, wins, draws, scored, score_sum FROM book_stats "
                      "WHERE book_id = %s AND position_key = %s")
# A minimax node with its edges and their children's bounds, in one round trip and one row: the node's
# columns, then each column of its edges (and their children) as an array, all in one order (the
# aggregates of a group are fed its rows in turn); a node without edges has arrays of one NULL. A row
# per edge, the node's columns repeated, took an eighth more of the service's CPU (0.15 against
# 0.13 ms a query, binary results, one query at a time on uvloop).
MINIMAX_NODE_SQL = ("SELECT n.position_key, n.moves, n.policy, n.searched_edges, n.excluded_prior, n.play_policy, "
                    "n.value, n.lcb, n.ucb, n.playouts, n.spec, n.engine_version, n.score_mean, n.backed_up_score, "
                    "array_agg(e.move), array_agg(e.child_key), array_agg(e.prior), array_agg(c.value), "
                    "array_agg(c.lcb), array_agg(c.ucb), array_agg(c.own_visits), array_agg(c.score_mean), "
                    "array_agg(c.backed_up_score) "
                    "FROM minimax_nodes n "
                    "LEFT JOIN minimax_edges e ON e.book_id = n.book_id AND e.parent_key = n.position_key "
                    "LEFT JOIN minimax_nodes c ON c.book_id = e.book_id AND c.position_key = e.child_key "
                    "WHERE n.book_id = %s AND n.position_key = %s GROUP BY n.book_id, n.position_key")


class QueryTimeout(StoreError):
    """The database did not answer a lookup's query within the reader's timeout."""


def shut_down_socket(fileno: int) -> None:
    """End every wait on the connection with socket ``fileno`` (its reads see the end of the stream)
    without closing the descriptor, which its driver still owns."""
    try:
        sock = socket.socket(fileno=fileno)
    except OSError:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.detach()


class SocketDeadlines:
    """Deadlines of the queries running in threads: a watchdog thread shuts down the socket of a
    query not answered within ``seconds`` (``shut_down_socket``). One thread for every query of a
    reader: a timer thread per query would cost more than the query."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self._armed: dict[int, tuple[float, int]] = {}  # token -> (deadline, socket)
        self._fired: set[int] = set()
        self._tokens = itertools.count()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._closed = False
        self._thread: threading.Thread | None = None

    @contextmanager
    def bound(self, fileno: int, what: str):
        """Run the block with a deadline on the connection of socket ``fileno``; past it, the block
        fails with ``QueryTimeout`` naming ``what``."""
        token = self.arm(fileno)
        try:
            yield
        finally:
            if self.disarm(token):
                raise QueryTimeout(f"the database {what} did not answer within {self.seconds:g} s "
                                   "(OBOOK_API_DB_TIMEOUT)") from None

    def arm(self, fileno: int) -> int:
        """Start the deadline of a query on socket ``fileno``; its token for ``disarm``."""
        token = next(self._tokens)
        with self._lock:
            if not self._armed:
                self._wake.set()
            self._armed[token] = (time.monotonic() + self.seconds, fileno)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch, name="obook-read-deadlines", daemon=True)
                self._thread.start()
        return token

    def disarm(self, token: int) -> bool:
        """End a deadline; whether it had passed (the socket was shut down)."""
        with self._lock:
            self._armed.pop(token, None)
            fired = token in self._fired
            self._fired.discard(token)
        return fired

    def close(self) -> None:
        self._closed = True
        self._wake.set()

    def _watch(self) -> None:
        tick = min(0.1, self.seconds / 4)
        while not self._closed:
            with self._lock:
                idle = not self._armed
                if idle:
                    self._wake.clear()
                now = time.monotonic()
                for token, (deadline, fileno) in list(self._armed.items()):
                    if now >= deadline:
                        del self._armed[token]
                        self._fired.add(token)
                        shut_down_socket(fileno)  # under the lock: the block has not given the socket back
            if idle:
                self._wake.wait()
            else:
                time.sleep(tick)


def bounded_store(store: Store, timeout: float, pool_size: int = 5) -> Store:
    """A read-only twin of ``store`` whose every statement has ``timeout`` seconds, as the lookups'
    (``StatsReader``): the service's other pages (books, games, progress, exports) and its health
    check, which otherwise waited up to the TCP user timeout (a minute) on a connection that stopped
    answering, and as long as the kernel acknowledged. The server's statement timeout, and a
    deadline of the client's own on each statement (``SocketDeadlines``, armed and disarmed around
    every round trip by the engine's events). Its connections are in autocommit, so that no
    ``COMMIT`` waits outside a statement, and not pinged on checkout (a ping waits unbounded): one
    dropped fails its request (503) and is replaced. On SQLite: ``store`` itself."""
    if store.is_sqlite:
        return store
    bounded = Store(store.url, pool_size=pool_size, pre_ping=False, statement_timeout=timeout, autocommit=True)
    deadlines = SocketDeadlines(timeout)
    bounded.deadlines = deadlines

    @event.listens_for(bounded.engine, "before_cursor_execute")
    def _arm(conn, _cursor, _statement, _parameters, context, _executemany):
        context._obook_deadline = deadlines.arm(conn.connection.driver_connection.pgconn.socket)

    @event.listens_for(bounded.engine, "after_cursor_execute")
    def _disarm(_conn, _cursor, _statement, _parameters, context, _executemany):
        deadlines.disarm(context._obook_deadline)

    @event.listens_for(bounded.engine, "handle_error")
    def _timed_out(error):
        token = getattr(error.execution_context, "_obook_deadline", None)
        if token is not None and deadlines.disarm(token):
            error.is_disconnect = True  # the socket was shut down: the connection is not given back
            raise QueryTimeout(f"the database {store.name} did not answer within {timeout:g} s "
                               "(OBOOK_API_DB_TIMEOUT)") from None

    return bounded


class StatsReader:
    """Point reads of a book's statistics for a service that answers many lookups a second.

    On PostgreSQL it keeps its own pool of autocommit connections without a liveness ping: a
    lookup is one ``SELECT`` by primary-key prefix, and the ``BEGIN``/``COMMIT`` and ping around it
    would triple its round trips. A connection the server dropped fails one request (503) and is
    replaced. Every query has ``timeout`` seconds (``SocketDeadlines``, and the server's statement
    timeout). On SQLite it reads through the store's engine.
    """

    def __init__(self, store, pool_size: int = 8, timeout: float = 5.0):
        self.store = store
        self.deadlines = None
        if store.is_sqlite:
            self.engine = store.engine
        else:
            self.deadlines = SocketDeadlines(timeout)
            self.engine = create_engine(store.url, pool_size=pool_size, max_overflow=pool_size, pool_pre_ping=False,
                                        isolation_level="AUTOCOMMIT", pool_timeout=max(timeout, 1.0),
                                        connect_args=postgres_connect_args(statement_timeout=timeout))

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
        try:
            raw = self.engine.raw_connection()
        except (DBAPIError, OSError, self._operational) as exc:  # no connection could be made (the pool
            # passes on the driver's own error)
            why = exc.orig if isinstance(exc, DBAPIError) else exc
            raise StoreError(f"cannot reach the database {self.store.name}: {str(why).strip()[:200]}") from None
        try:
            with self.deadlines.bound(raw.driver_connection.pgconn.socket, self.store.name), raw.cursor() as cursor:
                cursor.execute(sql, params)
                return cursor.fetchall()
        except Exception as exc:
            raw.invalidate()  # a dropped connection is not given back to the pool
            if isinstance(exc, StoreError):
                raise
            if isinstance(exc, (OSError, self._operational)):
                raise StoreError(f"cannot reach the database {self.store.name}: {str(exc).strip()[:200]}") from None
            raise
        finally:
            raw.close()

    @property
    def _operational(self):
        import psycopg  # lazy: the PostgreSQL driver, only for a PostgreSQL store

        return psycopg.OperationalError

    def _read(self, query, *args):
        try:
            with self.engine.connect() as conn:
                if self.deadlines is None:
                    return query(conn, *args)
                try:
                    with self.deadlines.bound(conn.connection.driver_connection.pgconn.socket, self.store.name):
                        return query(conn, *args)
                except QueryTimeout:
                    conn.invalidate()
                    raise
        except DBAPIError as exc:
            if exc.connection_invalidated or isinstance(exc.orig, OSError) or "connect" in str(exc.orig).lower():
                raise StoreError(f"cannot reach the database {self.store.name}: {str(exc.orig).strip()[:200]}") from None
            raise

    def book(self, name: str):
        """The book's row (``obook.store.books.get_book``), within the lookups' timeout."""
        return self._read(get_book, name)

    def finished_games(self, book_id: int) -> int:
        return self._read(count_games, book_id, FINISHED)

    def changes(self, book_id: int) -> int:
        """A number that grows whenever the book's answers change: its finished games, plus a minimax
        book's last change (``obook.store.minimax.last_change``, one index probe where a count of its
        done expansions took 80-100 ms at 10^6, every ``OBOOK_API_FRESH_SECONDS``, and the lookups
        that came meanwhile waited for it in the threads)."""
        return self._read(lambda conn: count_games(conn, book_id, FINISHED) + last_change(conn, book_id))

    def minimax_node(self, book_id: int, key: int):
        """A minimax book's node with its children's bounds (``obook.store.minimax.node_reader``); on
        PostgreSQL in one fixed SQL string on the pool's DBAPI connection, as ``position_stats``
        (SQLAlchemy's two queries: five times its CPU, 0.74-0.79 against 0.13-0.15 ms in one thread)."""
        if self.store.is_sqlite:
            return self._read(lambda conn: node_reader(conn, book_id)(key))
        return _minimax_node(self._read_raw(MINIMAX_NODE_SQL, (book_id, to_signed(key))))

    def dispose(self) -> None:
        if self.deadlines is not None:
            self.deadlines.close()
        if self.engine is not self.store.engine:
            self.engine.dispose()


class AsyncStatsReader:
    """``StatsReader.position_stats`` for the service's event loop, on PostgreSQL: a small pool of
    psycopg ``AsyncConnection`` (autocommit, the statement prepared on each) per event loop.

    Why: an uncached lookup is a few tens of microseconds of compiled replay and one indexed
    ``SELECT``; handing it to a thread and back costs more than both (about 0.1 ms of CPU per hop
    here, and the GIL passed between the loop and the threads at each step), so the service reads
    the statistics on the loop itself (issue 20, item 9). Connections are made when first needed,
    at most ``pool_size`` per loop; one that fails is closed and the request fails (503), as does
    one that has not answered within ``timeout`` (its socket shut down by a timer of the loop).

    The pool keeps each connection as one binary cursor on it, reused by every query: a cursor made
    per query (``AsyncConnection.execute``) with text results took a third more CPU (a minimax node
    with its edges, one query at a time on uvloop: 0.16 against 0.12 ms a query)."""

    def __init__(self, store, pool_size: int = 4, timeout: float = 5.0):
        self.store = store
        self.pool_size = max(pool_size, 1)
        self.timeout = timeout
        url = make_url(store.url)
        self.conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._pools: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopPool]" = weakref.WeakKeyDictionary()

    async def position_stats(self, book_id: int, key: int) -> list[tuple]:
        return await self._fetch(POSITION_STATS_SQL, (book_id, to_signed(key)))

    async def minimax_node(self, book_id: int, key: int):
        """A minimax book's node and its children's bounds, as ``obook.store.minimax.node_reader``
        reads them (None: not in the book): one indexed ``SELECT`` on the loop's connections."""
        return _minimax_node(await self._fetch(MINIMAX_NODE_SQL, (book_id, to_signed(key))))

    async def _fetch(self, sql: str, params: tuple) -> list[tuple]:
        import psycopg  # lazy: the PostgreSQL driver, only for a PostgreSQL store

        loop = asyncio.get_running_loop()
        pool = self._pools.get(loop)
        if pool is None:
            pool = self._pools[loop] = _LoopPool(self.pool_size)
        try:
            cursor = await pool.get(self._connect)
        except (OSError, psycopg.OperationalError) as exc:
            raise StoreError(f"cannot reach the database {self.store.name}: {str(exc).strip()[:200]}") from None
        expired = []
        fileno = cursor.connection.pgconn.socket
        deadline = loop.call_later(self.timeout, lambda: (expired.append(True), shut_down_socket(fileno)))
        try:
            await cursor.execute(sql, params, prepare=True)
            rows = await cursor.fetchall()
        except BaseException as exc:  # cancelled mid-query or failed: the connection's state is unknown
            deadline.cancel()
            pool.discard()
            await _close_quietly(cursor)
            if expired and not isinstance(exc, asyncio.CancelledError):
                raise QueryTimeout(f"the database {self.store.name} did not answer within {self.timeout:g} s "
                                   "(OBOOK_API_DB_TIMEOUT)") from None
            if isinstance(exc, (OSError, psycopg.OperationalError)):
                raise StoreError(f"cannot reach the database {self.store.name}: {str(exc).strip()[:200]}") from None
            raise
        deadline.cancel()
        if expired:  # answered as the deadline shut the socket: the connection is gone
            pool.discard()
            await _close_quietly(cursor)
        else:
            pool.put(cursor)
        return rows

    async def _connect(self):
        """A new connection, as the binary cursor the pool keeps of it."""
        import psycopg  # lazy: the PostgreSQL driver, only for a PostgreSQL store

        conn = await psycopg.AsyncConnection.connect(self.conninfo, autocommit=True,
                                                     **postgres_connect_args(statement_timeout=self.timeout))
        return conn.cursor(binary=True)

    async def close(self) -> None:
        """Close the running loop's connections (the service's shutdown)."""
        pool = self._pools.pop(asyncio.get_running_loop(), None)
        if pool is not None:
            for cursor in pool.idle:
                await _close_quietly(cursor)
            pool.idle.clear()


def _minimax_node(rows: list[tuple]) -> tuple[NodeRow, dict[int, ChildBounds]] | None:
    """The node and its children's bounds from the row of ``MINIMAX_NODE_SQL`` (None: no row, the
    node is not in the book)."""
    if not rows:
        return None
    (position_key, moves, policy, searched_edges, excluded_prior, play_policy, value, lcb, ucb, playouts, spec,
     engine_version, score_mean, backed_up_score, *edges) = rows[0]
    node = NodeRow(to_unsigned(position_key), moves, policy, searched_edges, excluded_prior, play_policy, value,
                   lcb, ucb, playouts, spec, engine_version, score_mean, backed_up_score)
    children = {}
    for move, child, prior, c_value, c_lcb, c_ucb, c_visits, c_score, c_backed_up in zip(*edges):
        if move is None:
            continue  # no edges: the outer join's one row of NULLs
        node.edges[move] = (to_unsigned(child), prior)
        if c_value is not None:
            children[to_unsigned(child)] = ChildBounds(c_value, c_lcb, c_ucb, c_visits, c_score, c_backed_up)
    return node, children


async def _close_quietly(cursor) -> None:
    """Close a pooled cursor's connection."""
    try:
        await cursor.connection.close()
    except Exception:  # noqa: BLE001 - closing a broken connection
        pass


class _LoopPool:
    """Idle connections of one event loop (each as its cursor), and the requests waiting for one."""

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
