"""Issue 33, items 2 and 4: least privilege and backups, on this machine's PostgreSQL server.

``obook db roles`` makes four roles of a random prefix (roles are the whole server's: parallel test
sessions must not share them) and hands a fresh database to the migrator, which upgrades the schema
and grants the tables (``obook db grant``). Then each role is tried: the service reads and writes
nothing, a worker writes rows but cannot delete a book, change the schema or touch
``alembic_version``; an ``obook build`` of each kind runs as the worker alone and the service's
lookups answer what the owner's do. Last, ``deploy/backup.sh`` (compose's backup service) dumps
the database as the backup role, the dump is restored into a new database (README, "Backups and
restore"), ``obook verify`` is clean there and the lookups answer the same."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from obook.store.roles import TABLE_GRANTS, RoleNames
from tests.conftest import fresh_postgres_database
from tests.grid.test_grid_faults import redis_ready  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[2]
MBM_BUILD = ["--algorithm", "mbm", "--size", "7", "--search", "playouts=48", "--seconds-per-move", "0", "--depth", "12",
             "--games", "3"]
MINIMAX_BUILD = ["--algorithm", "minimax", "--size", "5", "--komi", "0.5", "--search", "playouts=50",
                 "--play-playouts", "5", "--seconds-per-move", "0", "--games", "4"]
DENIED = "InsufficientPrivilege"


@dataclass
class Deployment:
    names: RoleNames
    admin_url: str  # a superuser's, on the server's `postgres` database
    database: str

    def url(self, role: str, database: str | None = None) -> str:
        return (make_url(self.admin_url).set(username=role, database=database or self.database)
                .render_as_string(hide_password=False))


def obook(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "obook.cli", *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


def drop_roles(admin_url: str, names: RoleNames) -> None:
    engine = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            for role in names.all().values():
                conn.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
    finally:
        engine.dispose()


@pytest.fixture(scope="module")
def deployment():
    """A fresh database of the tests' fixtures taken over by ``obook db roles`` (roles of a random
    prefix, with passwords), upgraded by the migrator and granted by it; the roles dropped after
    the database."""
    names = RoleNames(f"obook_t{uuid.uuid4().hex[:8]}")
    admin_url = None
    try:
        with fresh_postgres_database(prefix="obook_roles") as url:
            admin_url = make_url(url).set(database="postgres").render_as_string(hide_password=False)
            database = make_url(url).database
            passwords = {f"OBOOK_{kind.upper()}_PASSWORD": f"{kind}-secret" for kind in names.all()}
            made = obook("db", "roles", "--db", admin_url, "--database", database, "--roles", names.prefix,
                         env=passwords)
            assert made.returncode == 0, made.stderr
            assert f"database {database}: owned by {names.migrator}" in made.stdout
            found = Deployment(names, admin_url, database)
            migrator = found.url(names.migrator)
            upgraded = obook("db", "upgrade", "--db", migrator)
            assert upgraded.returncode == 0, upgraded.stderr
            granted = obook("db", "grant", "--db", migrator, "--roles", names.prefix)
            assert granted.returncode == 0, granted.stderr
            assert f"{len(TABLE_GRANTS)} tables granted" in granted.stdout
            yield found
    finally:
        from obook.store.db import forget_stores

        forget_stores()
        if admin_url:
            drop_roles(admin_url, names)


def refused(url: str, statement: str) -> bool:
    """Whether PostgreSQL refuses ``statement`` to the role of ``url`` for want of a privilege
    (SQLSTATE 42501; any other error fails the test; a statement that runs is rolled back)."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            with conn.begin() as transaction:
                try:
                    conn.execute(text(statement))
                except DBAPIError as exc:
                    if type(exc.orig).__name__ == DENIED:
                        return True
                    raise
                transaction.rollback()
                return False
    finally:
        engine.dispose()


def first_column(table: str) -> str:
    from obook.store.models import Base

    return "version_num" if table == "alembic_version" else next(iter(Base.metadata.tables[table].columns)).name


# ---- the roles and their rights -------------------------------------------------------------------------


def test_the_migrator_owns_the_upgraded_schema_and_the_roles_have_no_other_power(deployment):
    from obook.store.migrate import head_revision

    names = deployment.names
    engine = create_engine(deployment.admin_url)
    try:
        with engine.connect() as conn:
            attributes = conn.execute(text(
                "SELECT rolname, rolcanlogin, rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls, "
                "rolpassword IS NOT NULL FROM pg_authid WHERE rolname LIKE :p ORDER BY rolname"),
                {"p": names.prefix + "\\_%"}).all()
            owner = conn.execute(text("SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = :d"),
                                 {"d": deployment.database}).scalar_one()
    finally:
        engine.dispose()
    assert sorted(a[0] for a in attributes) == sorted(names.all().values())
    assert all(a[1:] == (True, False, False, False, False, False, True) for a in attributes), attributes
    assert owner == names.migrator
    migrator = create_engine(deployment.url(names.migrator))
    try:
        with migrator.connect() as conn:
            assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one() == head_revision()
            owners = set(conn.execute(text("SELECT tableowner FROM pg_tables WHERE schemaname = 'public'")).scalars())
            tables = set(conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).scalars())
    finally:
        migrator.dispose()
    assert owners == {names.migrator}
    assert tables == set(TABLE_GRANTS), "every table of the schema has its grants, and no rule is stale"


def test_the_service_reads_what_it_serves_and_writes_nothing(deployment):
    service = deployment.url(deployment.names.service)
    for table, (reads, _) in TABLE_GRANTS.items():
        assert refused(service, f"SELECT * FROM {table} LIMIT 1") == (not reads), table
        column = first_column(table)
        for statement in (f"INSERT INTO {table} DEFAULT VALUES", f"UPDATE {table} SET {column} = {column}",
                          f"DELETE FROM {table}", f"TRUNCATE {table}"):
            assert refused(service, statement), statement
    assert refused(service, "SELECT nextval('games_id_seq')")
    for statement in ("CREATE TABLE intruder (x int)", "DROP TABLE games", "CREATE TEMP TABLE t (x int)"):
        assert refused(service, statement), statement


def test_a_worker_writes_rows_but_cannot_delete_a_book_change_the_schema_or_the_revision(deployment):
    worker = deployment.url(deployment.names.worker)
    for table, (_, writes) in TABLE_GRANTS.items():  # what it may do (the builds below do it for real)
        column = first_column(table)
        assert refused(worker, f"UPDATE {table} SET {column} = {column}") == ("UPDATE" not in writes), table
    assert not refused(worker, "DELETE FROM workers")  # a worker's heartbeat, when it leaves
    assert not refused(worker, "DELETE FROM expansion_results")  # staged results, once applied
    assert not refused(worker, "SELECT nextval('games_id_seq')")
    for table in ("books", "games", "book_stats", "game_slices", "worker_records", "minimax_nodes", "minimax_edges",
                  "expansions", "alembic_version"):
        assert refused(worker, f"DELETE FROM {table}"), table
        assert refused(worker, f"TRUNCATE {table}"), table
    for statement in ("UPDATE alembic_version SET version_num = 'x'", "INSERT INTO alembic_version VALUES ('x')",
                      "ALTER TABLE games ADD COLUMN x int", "ALTER TABLE books DROP CONSTRAINT books_pkey",
                      "DROP TABLE minimax_nodes", "CREATE TABLE intruder (x int)", "CREATE INDEX i ON games (status)",
                      "COPY games TO PROGRAM 'true'", "SELECT pg_read_file('/etc/hostname')",
                      "CREATE TEMP TABLE t (x int)"):
        assert refused(worker, statement), statement


def test_grant_refuses_a_table_without_a_rule_and_anyone_but_the_owner(deployment, capsys):
    """A migration that adds a table without saying who may use it stops ``obook db grant`` (the
    migrate service fails, naming it); until then only the backup role reads it (default
    privileges). Neither a worker nor the service can grant."""
    from obook.cli import main

    names = deployment.names
    migrator = deployment.url(names.migrator)
    engine = create_engine(migrator)
    try:
        with engine.begin() as conn:
            conn.execute(text("CREATE TABLE newcomer (x int)"))
        assert main(["db", "grant", "--db", migrator, "--roles", names.prefix]) == 2
        assert "newcomer have no grants in obook/store/roles.py" in capsys.readouterr().err
        assert not refused(deployment.url(names.backup), "SELECT * FROM newcomer")
        assert refused(deployment.url(names.service), "SELECT * FROM newcomer")
        assert refused(deployment.url(names.worker), "INSERT INTO newcomer VALUES (1)")
    finally:
        with engine.begin() as conn:
            conn.execute(text("DROP TABLE newcomer"))
        engine.dispose()
    for role in (names.worker, names.service):
        assert main(["db", "grant", "--db", deployment.url(role), "--roles", names.prefix]) == 2
        assert f"{role} does not own the tables" in capsys.readouterr().err
    assert main(["db", "roles", "--db", deployment.url(names.migrator), "--roles", names.prefix]) == 2
    assert "obook: error: `obook db roles`" in capsys.readouterr().err
    assert main(["db", "grant", "--db", migrator, "--roles", "Bad-Name"]) == 2
    assert "role prefix 'Bad-Name'" in capsys.readouterr().err
    assert main(["db", "grant", "--db", migrator, "--roles", "obook_nobody"]) == 2
    assert "no role obook_nobody_migrator" in capsys.readouterr().err
    assert main(["db", "roles", "--db", "sqlite:///obook.db"]) == 2
    assert "database roles are PostgreSQL's" in capsys.readouterr().err


def test_roles_is_idempotent(deployment, capsys):
    from obook.cli import main

    names = deployment.names
    for _ in range(2):
        assert main(["db", "roles", "--db", deployment.admin_url, "--database", deployment.database,
                     "--roles", names.prefix]) == 0
        out = capsys.readouterr().out
        assert f"role {names.worker}: updated" in out and f"{len(TABLE_GRANTS)} tables granted" in out
    assert refused(deployment.url(names.worker), "DELETE FROM books")
    assert not refused(deployment.url(names.worker), "DELETE FROM workers")


def test_roles_takes_over_a_database_whose_tables_another_role_owns():
    """A store upgraded by a superuser (or by the roles of an older deployment): ``obook db roles``
    hands every table and sequence to the migrator, which can then upgrade and grant alone."""
    from obook.store.migrate import upgrade
    from obook.store.roles import ensure_roles

    names = RoleNames(f"obook_t{uuid.uuid4().hex[:8]}")
    admin_url = None
    try:
        with fresh_postgres_database(prefix="obook_roles") as url:
            upgrade(url)
            admin_url = make_url(url).set(database="postgres").render_as_string(hide_password=False)
            database = make_url(url).database
            done = ensure_roles(admin_url, database, names)
            assert f"{len(TABLE_GRANTS)} tables handed to {names.migrator}" in done
            engine = create_engine(url)
            try:
                with engine.connect() as conn:
                    owners = set(conn.execute(text(
                        "SELECT pg_get_userbyid(c.relowner) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'S', 'i')")).scalars())
            finally:
                engine.dispose()
            assert owners == {names.migrator}  # tables, their sequences and indexes
            migrator = make_url(url).set(username=names.migrator).render_as_string(hide_password=False)
            assert obook("db", "grant", "--db", migrator, "--roles", names.prefix).returncode == 0
            worker = make_url(url).set(username=names.worker).render_as_string(hide_password=False)
            assert refused(worker, "DELETE FROM books") and not refused(worker, "DELETE FROM workers")
    finally:
        if admin_url:
            drop_roles(admin_url, names)


# ---- a build as the worker, lookups as the service --------------------------------------------------------


@pytest.fixture(scope="module")
def built(deployment, compiled_engine):
    """An MVBM and a minimax book, each built by ``obook build`` logged in as the worker alone."""
    worker = deployment.url(deployment.names.worker)
    for book, options in (("plain", MBM_BUILD), ("mm", MINIMAX_BUILD)):
        done = obook("build", "--db", worker, "--book", book, "--workers", "1", "--quiet", *options)
        assert done.returncode == 0, done.stderr[-3000:]
    return deployment


def lookups(url: str, book: str) -> list[dict]:
    """``obook lookup --json`` (in this process) at the root and after each of its candidates."""
    import contextlib
    import io

    from obook.cli import main
    from obook.store.db import forget_stores

    def lookup(moves: str) -> dict:
        forget_stores()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["lookup", "--db", url, "--book", book, moves, "--json"]) == 0
        return json.loads(out.getvalue())

    root = lookup("")
    return [root, *(lookup(c["move"]) for c in root["candidates"])]


def test_books_built_as_the_worker_verify_clean(built):
    migrator = built.url(built.names.migrator)
    for book in ("plain", "mm"):
        checked = obook("verify", "--db", migrator, "--book", book)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    engine = create_engine(migrator)
    try:
        with engine.connect() as conn:
            finished = conn.execute(text("SELECT count(*) FROM games g JOIN books b ON b.id = g.book_id "
                                         "WHERE b.name = 'plain' AND g.status = 'finished'")).scalar_one()
            expanded = conn.execute(text("SELECT expansions_done FROM books WHERE name = 'mm'")).scalar_one()
            staged = conn.execute(text("SELECT count(*) FROM expansion_results")).scalar_one()
    finally:
        engine.dispose()
    assert finished >= 3 and expanded >= 4
    assert staged == 0, "the worker deleted the staged results it applied"


def test_the_service_answers_lookups_as_the_owner_does(built):
    from fastapi.testclient import TestClient

    from api.app import create_app
    from obook.config import Settings

    names = built.names
    service, migrator = built.url(names.service), built.url(names.migrator)
    for book in ("plain", "mm"):
        seen = lookups(service, book)
        assert seen == lookups(migrator, book) and seen[0]["candidates"], book
        exported = obook("export", "--db", service, "--book", book, "--sgf", "-")
        assert exported.returncode == 0 and exported.stdout.startswith("(;"), exported.stderr
    checked = obook("verify", "--db", service, "--book", "plain")  # one snapshot, no lock: the service will do
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # a minimax book's verify locks the book against commits (a writer's right): refused, plainly
    locked = obook("verify", "--db", service, "--book", "mm")
    assert locked.returncode == 2 and "Traceback" not in locked.stderr, locked.stderr
    assert "the database refused this role: permission denied for table books" in locked.stderr
    settings = Settings(api_cache_seconds=0)
    paths = ["/healthz", "/v1/books", "/v1/books/plain/lookup", "/v1/books/mm/lookup", "/v1/books/plain/move",
             "/v1/books/plain/games", "/v1/books/plain/export.sgf", "/v1/books/mm/export.sgf", "/v1/progress",
             "/v1/progress?book=mm"]
    answers = {}
    for role, url in (("service", service), ("owner", migrator)):
        with TestClient(create_app(url, settings)) as client:
            for path in paths:
                got = client.get(path)
                assert got.status_code == 200, (role, path, got.text)
                answers[role, path] = got.content if path.endswith(".sgf") else {
                    k: v for k, v in got.json().items() if k not in ("now", "checked_at", "elapsed_ms")}
            game = client.get("/v1/books/plain/games").json()["items"][0]["id"]
            assert client.get(f"/v1/games/{game}").status_code == 200
            assert client.get(f"/v1/games/{game}.sgf").status_code == 200
    for path in paths:
        if path not in ("/healthz", "/v1/progress", "/v1/progress?book=mm"):
            assert answers["service", path] == answers["owner", path], path


def test_the_grid_runs_as_the_worker(built, redis_ready, tmp_path):
    """``obook grid run`` and ``obook worker`` (Celery) logged in as the worker build a book of each
    kind to its target; ``obook grid health`` answers as it too."""
    from tests.grid.gridharness import Grid
    from tests.grid.test_grid_faults import wait_for_driver

    grid = Grid(database_url=built.url(built.names.worker), logs=tmp_path)
    try:
        grid.start_worker()
        grid.start_driver("gridplain", 2, "--size", "5", "--search", "playouts=100", "--seconds-per-move", "0",
                          "--depth", "10")
        wait_for_driver(grid, 300)
        grid.check_build("gridplain", 2, max_lost=4)
        grid.start_driver("gridmm", 4, *MINIMAX_BUILD[:-2])
        wait_for_driver(grid, 300)
        checked = grid.obook("verify", "--book", "gridmm")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        health = grid.obook("grid", "health")
        assert health.returncode == 0, health.stdout + health.stderr
    finally:
        grid.stop_all()
    assert "InsufficientPrivilege" not in grid.logs_text() and "permission denied" not in grid.logs_text()
    assert grid.sql("SELECT expansions_done FROM books WHERE name = 'gridmm'") == [(4,)]


# ---- backups: compose's dump, restored into a new database -------------------------------------------------


def test_a_backup_restores_into_a_new_database_that_verifies_and_answers_the_same(built, tmp_path):
    """``deploy/backup.sh once`` as the backup role (what compose's service runs at each interval),
    then the README's restore: ``obook db roles`` makes the new database, ``pg_restore`` as the
    migrator, ``obook db grant``; ``obook verify`` is clean there and the lookups answer the same."""
    missing = [tool for tool in ("pg_dump", "pg_restore") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed (apt-get install postgresql-client)")
    names = built.names
    server = make_url(built.admin_url)
    libpq = {"PGHOST": server.host or "127.0.0.1", "PGPORT": str(server.port or 5432)}
    backups = tmp_path / "backups"
    backups.mkdir()
    old = [backups / f"obook-{built.database}-2000010{d}T000000Z.dump" for d in (1, 2)]
    for path in old:
        path.write_bytes(b"an older dump")
    dumped = subprocess.run(["sh", str(ROOT / "deploy/backup.sh"), "once"], capture_output=True, text=True,
                            timeout=300, env={**os.environ, **libpq, "PGUSER": names.backup, "PGDATABASE": built.database,
                                              "OBOOK_BACKUP_DIR": str(backups), "OBOOK_BACKUP_KEEP": "2"})
    assert dumped.returncode == 0, dumped.stderr
    kept = sorted(p.name for p in backups.iterdir())
    assert len(kept) == 2 and kept[0] == old[1].name, kept  # the newest two: the older of the two is gone
    dump = backups / kept[1]
    assert dump.read_bytes()[:5] == b"PGDMP" and oct(dump.stat().st_mode & 0o777) == "0o600"

    restored = f"{built.database}_restored"
    try:
        made = obook("db", "roles", "--db", built.admin_url, "--database", restored, "--roles", names.prefix)
        assert made.returncode == 0 and f"database {restored}: created" in made.stdout, made.stderr
        loaded = subprocess.run(["pg_restore", "--no-owner", "--no-privileges", "--exit-on-error", "-U", names.migrator,
                                 "-d", restored, str(dump)], capture_output=True, text=True, timeout=300,
                                env={**os.environ, **libpq})
        assert loaded.returncode == 0, loaded.stderr
        migrator = built.url(names.migrator, restored)
        granted = obook("db", "grant", "--db", migrator, "--roles", names.prefix)
        assert granted.returncode == 0, granted.stderr
        for book in ("plain", "mm"):
            checked = obook("verify", "--db", migrator, "--book", book)
            assert checked.returncode == 0, checked.stdout + checked.stderr
            assert lookups(built.url(names.service, restored), book) == lookups(built.url(names.service), book)
        worker = built.url(names.worker, restored)  # the restored database takes up the build where it was
        more = obook("build", "--db", worker, "--book", "plain", "--workers", "1", "--quiet",
                     *MBM_BUILD[:-1], "4")
        assert more.returncode == 0, more.stderr[-3000:]
    finally:
        from obook.store.db import forget_stores

        forget_stores()
        engine = create_engine(built.admin_url, isolation_level="AUTOCOMMIT")
        with engine.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{restored}" WITH (FORCE)'))
        engine.dispose()


def test_the_backup_loop_dumps_at_once_and_stops_at_a_sigterm(deployment, tmp_path):
    """Compose's form (no argument): a dump at once, then it sleeps the interval; ``docker compose
    stop`` (SIGTERM to the script, PID 1 of its container) ends it at once, leaving no partial dump
    nor a sleeping child."""
    import signal
    import time

    if shutil.which("pg_dump") is None:
        pytest.skip("pg_dump not installed (apt-get install postgresql-client)")
    server = make_url(deployment.admin_url)
    backups = tmp_path / "backups"
    loop = subprocess.Popen(["sh", str(ROOT / "deploy/backup.sh")], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, "PGHOST": server.host or "127.0.0.1",
                                            "PGPORT": str(server.port or 5432), "PGUSER": deployment.names.backup,
                                            "PGDATABASE": deployment.database, "OBOOK_BACKUP_DIR": str(backups),
                                            "OBOOK_BACKUP_INTERVAL": "3600"}, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not list(backups.glob("obook-*.dump")) and time.monotonic() < deadline and loop.poll() is None:
            time.sleep(0.1)
        assert len(list(backups.glob("obook-*.dump"))) == 1, loop.stderr.read() if loop.poll() is not None else ""
        time.sleep(0.3)  # into its sleep
        loop.send_signal(signal.SIGTERM)
        assert loop.wait(10) == 143
        listed = subprocess.run(["ps", "-o", "pid=,stat=,args=", "-s", str(loop.pid)], capture_output=True,
                                text=True).stdout.splitlines()
        alive = [line for line in listed if line.split()[1][0] != "Z"]  # the killed sleep may await its reaper
        assert alive == [], f"processes left running in its session: {alive}"
        assert not list(backups.glob(".*.partial"))
    finally:
        try:
            os.killpg(loop.pid, signal.SIGKILL)  # the script, or what it left behind
        except ProcessLookupError:
            pass
        loop.wait(10)
