"""Opening a store: one SQLAlchemy engine over SQLite (the embedded default) or PostgreSQL.

SQLite runs in WAL mode so that readers (lookups, the dashboard) never wait for the builder, and
every writing transaction starts with ``BEGIN IMMEDIATE``: SQLite's default deferred transaction
upgrades its lock at the first write and fails with "database is locked" when two processes race,
where an immediate one simply waits its turn (``busy_timeout``). PostgreSQL needs neither; its
guarded ``UPDATE``s and row locks do the same work.

Every PostgreSQL connection is opened with the same bounds (``postgres_connect_args``, the one place
they are set): a connect timeout, TCP keepalives and a TCP user timeout, so that a half-open
connection (a server restarted behind a NAT, a cable pulled) fails within about a minute instead of
the kernel's 15, and a statement timeout, so that no statement can hold a caller for ever.

Leases, heartbeats and the times a game's moves and finish are stored at are dated by the
database's clock (``db_time``), never by the machine's: a driver and workers whose clocks disagree
still agree on which lease has expired, and the book's rates count every worker's games.
"""

from __future__ import annotations

import datetime as dt
import logging
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from sqlalchemy import Connection, Engine, Interval, String, bindparam, create_engine, event, func, inspect, literal, text
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, InternalError, OperationalError

from obook.config import settings
from obook.errors import ObookError
from obook.store.faults import clock_offset
from obook.store.migrate import head_revision
from obook.store.urls import describe_url, normalise_url

log = logging.getLogger(__name__)


class StoreError(ObookError):
    """The database cannot be opened or is not at the schema this obook needs."""


def as_utc(value: dt.datetime | None) -> dt.datetime | None:
    """SQLite gives timestamps back without a zone; they were written in UTC."""
    if value is None or value.tzinfo is not None:
        return value
    return value.replace(tzinfo=dt.timezone.utc)


def to_signed(key: int) -> int:
    """A 64-bit key as SQL's signed BIGINT."""
    return key - (1 << 64) if key >= 1 << 63 else key


def to_unsigned(key: int) -> int:
    return key + (1 << 64) if key < 0 else key


def db_time(conn: Connection, offset_seconds: float = 0.0):
    """The database's clock plus ``offset_seconds``, as an SQL expression: what every lease and
    heartbeat is written and compared with. PostgreSQL: ``statement_timestamp()`` (the server's
    clock at the start of the statement); SQLite: the clock of the one machine the file lives on,
    formatted as SQLAlchemy stores its timestamps (microseconds), with the test clock offset of
    this process (``OBOOK_TEST_CLOCK_OFFSET``) since that clock is this process's."""
    if conn.dialect.name == "postgresql":
        return func.statement_timestamp() + literal(dt.timedelta(seconds=offset_seconds))
    shift = offset_seconds + clock_offset()
    return func.strftime("%Y-%m-%d %H:%M:%f000", "now", f"{shift:+.3f} seconds")


def db_time_at(dialect: str, name: str):
    """``db_time`` with its offset a bound parameter ``name`` (its value: ``db_time_offset``), for
    statements built once and run many times (a claim, a heartbeat): building a statement costs a
    grid worker more Python time than running it."""
    if dialect == "postgresql":
        return func.statement_timestamp() + bindparam(name, type_=Interval())
    return func.strftime("%Y-%m-%d %H:%M:%f000", "now", bindparam(name, type_=String()))


def db_time_offset(dialect: str, offset_seconds: float = 0.0):
    """The value of ``db_time_at``'s parameter for a clock ``offset_seconds`` ahead."""
    if dialect == "postgresql":
        return dt.timedelta(seconds=offset_seconds)
    return f"{offset_seconds + clock_offset():+.3f} seconds"


def synchronous_commit(conn: Connection) -> None:
    """Make the caller's transaction commit synchronously (wait for the disk) on PostgreSQL, whatever
    the session's ``synchronous_commit`` (grid workers set it off for their moves); SQLite's
    commits are as its ``synchronous`` pragma says."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SET LOCAL synchronous_commit TO on"))


def dialect_insert(conn: Connection | str):
    """The dialect's ``INSERT`` (both have ``ON CONFLICT``, which SQLAlchemy's generic one lacks), for
    a connection or a dialect's name (a statement built once per dialect)."""
    dialect = conn if isinstance(conn, str) else conn.dialect.name
    return postgresql.insert if dialect == "postgresql" else sqlite.insert


class Store:
    """A database holding books. ``read()`` and ``write()`` give a connection inside a transaction."""

    def __init__(self, url: str, pool_size: int = 5, pre_ping: bool = True, statement_timeout: float | None = None,
                 autocommit: bool = False):
        """``statement_timeout``: the server's, instead of ``OBOOK_DB_STATEMENT_TIMEOUT``;
        ``autocommit``: every statement its own transaction (a reader's, whose every round trip
        then is a statement: ``obook.store.readers.bounded_store``)."""
        self.url = normalise_url(url)
        self.is_sqlite = self.url.startswith("sqlite")
        try:
            if self.is_sqlite:
                self._check_sqlite_path()
                self.engine = _sqlite_engine(self.url, immediate=False)
                self.writer = _sqlite_engine(self.url, immediate=True)
            else:
                self.engine = create_engine(self.url, pool_pre_ping=pre_ping, pool_size=pool_size, max_overflow=pool_size,
                                            connect_args=postgres_connect_args(statement_timeout),
                                            **({"isolation_level": "AUTOCOMMIT"} if autocommit else {}))
                self.writer = self.engine
        except (ArgumentError, ImportError) as exc:
            raise StoreError(f"cannot use database URL {describe_url(self.url)!r}: {exc}") from None

    def _check_sqlite_path(self) -> None:
        database = make_url(self.url).database
        if database and database != ":memory:":
            parent = Path(database).expanduser().resolve().parent
            if not parent.is_dir():
                raise StoreError(f"cannot create the SQLite database {database}: directory {parent} does not exist")

    @property
    def name(self) -> str:
        return describe_url(self.url)

    @contextmanager
    def read(self) -> Iterator[Connection]:
        with self._connect(self.engine) as conn:
            yield conn

    @contextmanager
    def write(self) -> Iterator[Connection]:
        with self._connect(self.writer) as conn:
            yield conn

    @contextmanager
    def trial(self) -> Iterator[Connection]:
        """A write transaction that is rolled back at the end, whatever it did: what a change would
        do (its locks, its rules, its counts) with nothing written (``obook audit --revert --dry-run``)."""
        with self._connect(self.writer) as conn:
            yield conn
            conn.get_transaction().rollback()

    @contextmanager
    def snapshot(self) -> Iterator[Connection]:
        """A read-only transaction that sees one state of the database in all its statements,
        however many transactions commit meanwhile: PostgreSQL's REPEATABLE READ (its default,
        READ COMMITTED, takes a new snapshot at each statement); on SQLite in WAL mode every read
        transaction already does (from its first read on). For a comparison of two reads, e.g.
        the games with the statistics (``obook verify``) while a build finishes games."""
        if self.is_sqlite:
            with self.read() as conn:
                yield conn
            return
        with self._connect(self.engine.execution_options(isolation_level="REPEATABLE READ",
                                                         postgresql_readonly=True)) as conn:
            yield conn

    def confirm_durable(self) -> bool:
        """Wait until every transaction committed before this call is on disk; True once it is.
        PostgreSQL: a transaction that takes a transaction id (so that it writes a commit record)
        commits with ``synchronous_commit = on``; its commit waits for the WAL to be flushed up to
        its commit record, which lies after the commit record of every transaction committed
        before, asynchronous ones included (the WAL is flushed in order). SQLite (WAL mode,
        ``synchronous=NORMAL``): a full checkpoint, which syncs the WAL and copies it into the file."""
        if self.is_sqlite:
            raw = self.writer.raw_connection()
            try:
                busy, _, _ = raw.driver_connection.execute("PRAGMA wal_checkpoint(FULL)").fetchone()
            except sqlite3.OperationalError as exc:  # locked past busy_timeout: not yet, ask again
                log.warning("cannot checkpoint %s yet: %s", self.name, exc)
                return False
            finally:
                raw.close()
            return busy == 0
        with self.write() as conn:
            synchronous_commit(conn)
            on, xid = conn.execute(text("SELECT current_setting('synchronous_commit'), txid_current()")).one()
        return on == "on" and xid is not None

    @contextmanager
    def statements(self) -> Iterator[Connection]:
        """A connection on which each statement commits by itself: one round trip for a guarded
        single-statement write (BEGIN and COMMIT cost one more each on PostgreSQL). On SQLite, an
        ordinary writing transaction."""
        if self.is_sqlite:
            with self.write() as conn:
                yield conn
            return
        try:
            with self.writer.connect() as conn:
                yield conn.execution_options(isolation_level="AUTOCOMMIT")
        except OperationalError as exc:
            if _is_connection_error(exc):
                raise StoreError(f"cannot reach the database {self.name}: {_first_line(exc)}") from None
            raise

    @contextmanager
    def _connect(self, engine: Engine) -> Iterator[Connection]:
        try:
            with engine.begin() as conn:
                yield conn
        except (OperationalError, InternalError) as exc:  # psycopg: the idle-transaction timeout is an InternalError
            if _is_connection_error(exc):
                raise StoreError(f"cannot reach the database {self.name}: {_first_line(exc)}") from None
            raise

    def table_names(self) -> set[str]:
        try:
            with self.engine.connect() as conn:
                return set(inspect(conn).get_table_names())
        except OperationalError as exc:
            raise StoreError(f"cannot reach the database {self.name}: {_first_line(exc)}") from None

    def revision(self) -> str | None:
        """The Alembic revision the database is at (None: no schema yet)."""
        if "alembic_version" not in self.table_names():
            return None
        with self.read() as conn:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()

    def check_schema(self) -> None:
        """Refuse a database at another schema than this obook's: reading or writing it could lose data."""
        head = head_revision()
        current = self.revision()
        if current is None:
            raise StoreError(f"the database {self.name} has no obook schema: run `obook db upgrade`")
        if current != head:
            raise StoreError(
                f"the database {self.name} is at schema revision {current}, this obook needs {head}: "
                "run `obook db upgrade` (back it up first)"
            )

    def dispose(self, close: bool = True) -> None:
        """Drop the pooled connections; ``close=False`` in a forked child, whose inherited
        connections are the parent's to close (SQLAlchemy's ``Engine.dispose(close=False)``)."""
        self.engine.dispose(close=close)
        if self.writer is not self.engine:
            self.writer.dispose(close=close)


def postgres_connect_args(statement_timeout: float | None = None) -> dict:
    """The bounds of every PostgreSQL connection of obook (``OBOOK_DB_CONNECT_TIMEOUT``,
    ``OBOOK_DB_STATEMENT_TIMEOUT`` unless ``statement_timeout`` is given (the service's lookups: a
    point read), ``OBOOK_DB_IDLE_TRANSACTION_TIMEOUT``; libpq's own parameters in the URL still win). The last one is for a process frozen inside a transaction (SIGSTOP, a
    suspended machine: its kernel still answers keepalives): without it the row locks it holds
    (a game, the statistics rows of a finish) stall every other player until it wakes up; with
    it the server ends that session, the locks go, the frozen player's lease expires as a dead
    one's does, and when it wakes its commit fails."""
    s = settings()
    args: dict = {
        "connect_timeout": max(1, int(s.db_connect_timeout)),
        "keepalives": 1, "keepalives_idle": 30, "keepalives_interval": 10, "keepalives_count": 3,
        "tcp_user_timeout": 60_000,  # ms: unacknowledged data fails the connection after a minute
    }
    options = []
    statement_timeout = s.db_statement_timeout if statement_timeout is None else statement_timeout
    if statement_timeout > 0:
        options.append(f"-c statement_timeout={max(1, int(statement_timeout * 1000))}")
    if s.db_idle_transaction_timeout > 0:
        options.append(f"-c idle_in_transaction_session_timeout={int(s.db_idle_transaction_timeout * 1000)}")
    if options:
        args["options"] = " ".join(options)
    return args


def _sqlite_engine(url: str, immediate: bool) -> Engine:
    engine = create_engine(url, connect_args={"timeout": 60})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None  # SQLAlchemy emits BEGIN itself (below)
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA busy_timeout=60000")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine


TRANSIENT = ("connection", "connect to server", "unable to open", "terminating", "database is locked",
             "server closed", "statement timeout", "canceling statement", "ssl syscall", "timeout expired")


def _is_connection_error(exc: OperationalError) -> bool:
    """A failure of the database, not of the caller's statement: the connection dropped, the
    server restarts, a SQLite file stayed locked past ``busy_timeout``, a statement timed out.
    Raised as ``StoreError``; a caller retries it (a build, a driver) or hands its game on (a slice)."""
    message = str(exc.orig).lower() if exc.orig is not None else str(exc).lower()
    return any(word in message for word in TRANSIENT)


def _first_line(exc: Exception) -> str:
    message = str(getattr(exc, "orig", None) or exc).strip()
    return message.splitlines()[0] if message else type(exc).__name__


_STORES: dict[str, Store] = {}


def open_store(url: str | None = None, check: bool = True, pre_ping: bool = True) -> Store:
    """The store at ``url`` (default ``OBOOK_DATABASE_URL``), one engine per URL and process.
    ``pre_ping=False`` saves a round trip per transaction for a caller that handles a dropped
    connection itself (a grid worker hands its game on and retries)."""
    url = normalise_url(url or settings().database_url)
    store = _STORES.get(url)
    if store is None:
        store = _STORES[url] = Store(url, pre_ping=pre_ping)
    if check:
        store.check_schema()
    return store


def forget_stores(close: bool = True) -> None:
    """Drop every engine of this process: in tests, or after a fork with ``close=False`` (closing
    a connection inherited from the parent would end the parent's session too)."""
    for store in _STORES.values():
        store.dispose(close=close)
    _STORES.clear()
