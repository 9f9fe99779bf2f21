import os
import shutil
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

GNUGO = os.environ.get("OBOOK_GNUGO", "/usr/games/gnugo")
SHARED = Path(os.environ.get("OBOOK_SHARED") or Path(__file__).resolve().parents[1].parent / "shared")


# Tests that stop or share what the whole machine has (its Redis, restarted under grid builds; the
# tests' own PostgreSQL cluster; the server's cluster-wide roles), and whose leases and deadlines are
# sized for a machine that runs them alone: ``make test`` runs the others on two xdist workers, then
# these one after another (``-m machine_services``).
SERIAL_TESTS = ("tests/grid/", "tests/store/test_server_restart.py", "tests/store/test_crash_after_done.py",
                "tests/store/test_roles.py")


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SERIAL_TESTS):
            item.add_marker(pytest.mark.machine_services)


@pytest.fixture(scope="session")
def gnugo_path():
    if not (Path(GNUGO).exists() or shutil.which(GNUGO)):
        pytest.skip("GNU Go 3.8 is not installed (apt-get install gnugo)")
    return GNUGO


@pytest.fixture(scope="session")
def compiled_engine():
    """The engine compiled into the numba cache before a test starts ``obook build`` processes, so
    that their deadlines measure play, not minutes of a cold compile (the build's own warm-up then
    loads what this one wrote)."""
    from obook.book.selfplay import warm_up

    warm_up()


@pytest.fixture(scope="session")
def shared_dir():
    if not SHARED.is_dir():
        pytest.skip("../shared is absent")
    return SHARED


# ---- stores: every store test runs on SQLite and on the PostgreSQL server of this machine -----------

PG_SERVER = os.environ.get("OBOOK_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REQUIRE_SERVICES = os.environ.get("OBOOK_REQUIRE_SERVICES") == "1"  # .ci/run: fail instead of skipping


def _service_missing(what: str, exc: Exception):
    if REQUIRE_SERVICES:
        pytest.fail(f"{what} is not reachable: {exc}")
    pytest.skip(f"{what} is not reachable: {exc}")


@contextmanager
def fresh_postgres_database(server: str = PG_SERVER, prefix: str = "obook_test"):
    """The URL of a new database on the PostgreSQL ``server`` (a URL), dropped on exit with every
    engine of this process; a server out of reach skips the test (fails under OBOOK_REQUIRE_SERVICES)."""
    import uuid

    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin = create_engine(server, isolation_level="AUTOCOMMIT", pool_pre_ping=True)  # the server may have restarted
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001 - any failure to reach the server
        admin.dispose()
        _service_missing(f"PostgreSQL at {server}", exc)
    try:
        yield make_url(server).set(database=name).render_as_string(hide_password=False)
    finally:
        from obook.store.db import forget_stores

        forget_stores()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def postgres_database():
    """A fresh PostgreSQL database for this test session (dropped at the end)."""
    with fresh_postgres_database() as url:
        yield url


# ---- a PostgreSQL cluster of the tests' own, which a test may stop and start -------------------------

RESTART_CLUSTER = "obooktest"
RESTART_PORT = 5439  # when the cluster does not exist yet; an existing one keeps its port
PG_TOOLS = ("pg_lsclusters", "pg_createcluster", "pg_ctlcluster")


@dataclass
class RestartableServer:
    """Debian's PostgreSQL cluster ``VERSION obooktest`` (trust authentication on 127.0.0.1), of the
    tests alone: a test restarts it under a running build, which the machine's ``main`` cluster,
    shared with every other test and program, must never be."""

    version: str
    port: int

    @property
    def url(self) -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def ctl(self, action: str, *options: str) -> None:
        done = subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", *options, self.version, RESTART_CLUSTER,
                               action],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctlcluster {self.version} {RESTART_CLUSTER} {action}: "
                               f"{(done.stderr or done.stdout).strip()}")
        if action in ("start", "restart"):
            self.wait_ready()

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until the server accepts connections: after an immediate stop it replays its WAL first
        ("the database system is starting up"), which pg_ctlcluster may not wait for on a busy machine."""
        import psycopg

        deadline = time.monotonic() + timeout
        while True:
            try:
                psycopg.connect(host="127.0.0.1", port=self.port, user="postgres", dbname="postgres",
                                connect_timeout=5).close()
                return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def restart(self, down_seconds: float = 0.0) -> None:
        """A fast shutdown (every session is terminated, open transactions rolled back), then up
        again: at once (``pg_ctlcluster restart``), or after ``down_seconds`` of refused connections."""
        if not down_seconds:
            self.ctl("restart")
            return
        self.ctl("stop")
        try:
            time.sleep(down_seconds)
        finally:
            self.ctl("start")

    def crash(self) -> None:
        """An immediate shutdown (``-m immediate``: no checkpoint, what a power cut or a killed
        server leaves, recovered from the WAL at the next start), then up again."""
        self.ctl("stop", "--mode=immediate")
        self.ctl("start")

    def started_at(self):
        """When the server last started (``pg_postmaster_start_time``): a restart changes it."""
        from sqlalchemy import create_engine, text

        engine = create_engine(self.url)
        try:
            with engine.connect() as conn:
                return conn.execute(text("SELECT pg_postmaster_start_time()")).scalar_one()
        finally:
            engine.dispose()


def _clusters() -> list[list[str]]:
    """``pg_lsclusters`` rows: version, name, port, status, ..."""
    listed = subprocess.run(["pg_lsclusters", "--no-header"], capture_output=True, text=True, timeout=60, check=True)
    return [line.split() for line in listed.stdout.splitlines() if line.strip()]


def _postgres_version() -> str:
    """The newest PostgreSQL version installed, as Debian's tools name it (``pg_lsclusters``, else
    the folders of /etc/postgresql)."""
    versions = {row[0] for row in _clusters()} or {p.name for p in Path("/etc/postgresql").glob("*") if p.is_dir()}
    if not versions:
        raise RuntimeError("no PostgreSQL version in pg_lsclusters or /etc/postgresql")
    return max(versions, key=lambda v: [int(part) for part in v.split(".") if part.isdigit()])


def _start_restartable_server() -> tuple[RestartableServer, bool]:
    """The tests' cluster, created on first use (kept for the next session), started if it was
    not; and whether this call started it."""
    row = next((r for r in _clusters() if r[1] == RESTART_CLUSTER), None)
    if row is None:
        version = _postgres_version()
        created = subprocess.run(["pg_createcluster", version, RESTART_CLUSTER, "--port", str(RESTART_PORT),
                                  "--start-conf", "manual", "-o", "shared_buffers=16MB", "-o", "max_connections=60",
                                  "--", "--auth=trust"], capture_output=True, text=True, timeout=300)
        if created.returncode != 0:
            raise RuntimeError(f"pg_createcluster {version} {RESTART_CLUSTER}: {(created.stderr or created.stdout).strip()}")
        row = next(r for r in _clusters() if r[1] == RESTART_CLUSTER)
    server = RestartableServer(version=row[0], port=int(row[2]))
    started = not row[3].startswith("online")
    if started:
        server.ctl("start")
    server.started_at()  # reachable, with trust authentication
    return server, started


@pytest.fixture(scope="session")
def restartable_postgres():
    """The tests' own PostgreSQL cluster (``RestartableServer``), which a test may restart. Needs root
    and Debian's cluster tools (skipped without them); with them, any failure to create, start or
    reach it fails under OBOOK_REQUIRE_SERVICES and skips otherwise. Stopped at the end of the
    session if this session started it."""
    if os.geteuid() != 0:
        pytest.skip("a PostgreSQL cluster of the tests' own needs root (pg_createcluster, pg_ctlcluster)")
    missing = [tool for tool in PG_TOOLS if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"Debian's PostgreSQL cluster tools are absent ({', '.join(missing)}: apt-get install postgresql)")
    try:
        server, started = _start_restartable_server()
    except Exception as exc:  # noqa: BLE001 - the tools are there, the cluster is not usable
        _service_missing(f"the tests' PostgreSQL cluster {RESTART_CLUSTER}", exc)
    yield server
    if started:
        try:
            server.ctl("stop")
        except Exception:  # noqa: BLE001 - a test may have left it down; nothing to stop then
            pass


def _empty_postgres(url: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_store_url(request, tmp_path):
    """The URL of an empty database (no schema) of each kind."""
    from obook.store.db import forget_stores

    forget_stores()
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'book.db'}"
    else:
        url = request.getfixturevalue("postgres_database")
        _empty_postgres(url)
        yield url
    forget_stores()


@pytest.fixture
def store_url(empty_store_url):
    """An upgraded database of each kind."""
    from obook.store.migrate import upgrade

    upgrade(empty_store_url)
    return empty_store_url


@pytest.fixture
def store(store_url):
    from obook.book.library import open_book_store

    return open_book_store(store_url)


@pytest.fixture
def postgres_url(postgres_database):
    """The session's PostgreSQL database, emptied (no schema)."""
    from obook.store.db import forget_stores

    forget_stores()
    _empty_postgres(postgres_database)
    yield postgres_database
    forget_stores()


# ---- connections that stop answering (tests/blackhole.py) ---------------------------------------------


@pytest.fixture
def black_hole():
    """A factory of ``BlackHoleProxy`` in front of ``host:port``; every proxy is closed at the end
    (which also ends any wait a failing test left hanging on one)."""
    from tests.blackhole import BlackHoleProxy

    proxies = []

    def make(host: str, port: int) -> BlackHoleProxy:
        proxies.append(BlackHoleProxy(host, port))
        return proxies[-1]

    yield make
    for proxy in proxies:
        proxy.close()
