"""Issue 19, item 9: the compose file publishes neither PostgreSQL nor Redis and has no working
default password; the database roles it creates (deploy/postgres/roles.sql) give workers, the
driver and the service rows only: checked on this machine's PostgreSQL, where the application role
runs the store's writes but can neither change the schema nor run commands on the server."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from tests.conftest import PG_SERVER, _service_missing

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {"POSTGRES_PASSWORD", "OBOOK_DB_OWNER_PASSWORD", "OBOOK_DB_PASSWORD", "REDIS_PASSWORD"}


def test_compose_publishes_no_database_or_broker_and_needs_every_secret():
    source = (ROOT / "docker-compose.yml").read_text()
    services = yaml.safe_load(source)["services"]
    assert "ports" not in services["postgres"] and "ports" not in services["redis"]
    assert all(p.startswith("${OBOOK_API_BIND:-127.0.0.1}:") for p in services["api"]["ports"])
    assert "obook:obook" not in source and "POSTGRES_USER" not in source  # no superuser named obook
    required = set(re.findall(r"\$\{(\w+):\?", source))
    assert required == SECRETS
    for name in SECRETS:  # never with a default that works
        assert not re.search(r"\$\{" + name + r":?-", source), name
    assert services["redis"]["environment"]["REDIS_PASSWORD"].startswith("${REDIS_PASSWORD:?")
    for name in ("api", "driver", "worker"):
        env = services[name]["environment"]
        assert env["OBOOK_DATABASE_URL"].startswith("postgresql+psycopg://obook_app:"), name
        assert env["OBOOK_BROKER_URL"].startswith("redis://:${REDIS_PASSWORD:?"), name
    assert services["migrate"]["environment"]["OBOOK_DATABASE_URL"].startswith("postgresql+psycopg://obook_owner:")
    example = dict(line.split("=", 1) for line in (ROOT / ".env.example").read_text().splitlines()
                   if line and not line.startswith("#"))
    assert SECRETS <= example.keys() and all(example[name] == "" for name in SECRETS)
    assert "/.env" in (ROOT / ".gitignore").read_text().split()


def test_composes_redis_asks_for_the_password_and_shows_it_to_no_ps(tmp_path):
    """Issue 33: the password was an argument of redis-server, which ``ps`` shows every user of the
    host. Compose's own command, run here with this machine's redis-server on a free port."""
    if shutil.which("redis-server") is None or shutil.which("redis-cli") is None:
        pytest.skip("redis-server is not installed")
    import socket
    import time

    shell, flag, script = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["redis"]["command"]
    assert (shell, flag) == ("sh", "-c")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = (script.replace("$$", "$").replace("/tmp/redis.conf", str(tmp_path / "redis.conf"))
              + f" --port {port} --bind 127.0.0.1 --dir {tmp_path}")
    password = "s3cret-" + os.urandom(6).hex()
    server = subprocess.Popen([shell, flag, script], env={**os.environ, "REDIS_PASSWORD": password},
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        cli = ["redis-cli", "-p", str(port), "--no-auth-warning"]
        for _ in range(100):
            if subprocess.run([*cli, "-a", password, "ping"], capture_output=True, text=True).stdout.strip() == "PONG":
                break
            time.sleep(0.05)
        else:
            raise AssertionError("compose's redis command did not start")
        assert "NOAUTH" in subprocess.run([*cli, "ping"], capture_output=True, text=True).stdout
        shown = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
        assert "redis-server" in shown and password not in shown
        assert oct((tmp_path / "redis.conf").stat().st_mode & 0o777) == "0o600"
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture
def roles():
    """obook's roles and database made by deploy/postgres/roles.sql on this machine's server (random
    names), dropped at the end. Yields (owner URL, application URL)."""
    if shutil.which("psql") is None:
        pytest.skip("psql is not installed")
    server = make_url(PG_SERVER)
    admin = create_engine(PG_SERVER, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect():
            pass
    except Exception as exc:  # noqa: BLE001
        admin.dispose()
        _service_missing(f"PostgreSQL at {PG_SERVER}", exc)
    suffix = uuid.uuid4().hex[:8]
    owner, app, database = f"obook_owner_{suffix}", f"obook_app_{suffix}", f"obook_roles_{suffix}"
    psql = ["psql", "-h", server.host or "127.0.0.1", "-p", str(server.port or 5432), "-U", server.username or "postgres",
            "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-v", f"owner={owner}", "-v", "owner_password=o-secret",
            "-v", f"app={app}", "-v", "app_password=a-secret", "-v", f"database={database}",
            "-f", str(ROOT / "deploy/postgres/roles.sql")]
    try:
        done = subprocess.run(psql, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        url = server.set(database=database)
        yield (url.set(username=owner).render_as_string(hide_password=False),
               url.set(username=app).render_as_string(hide_password=False))
    finally:
        from obook.store.db import forget_stores

        forget_stores()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
            conn.execute(text(f'DROP ROLE IF EXISTS "{app}"'))
            conn.execute(text(f'DROP ROLE IF EXISTS "{owner}"'))
        admin.dispose()


def test_the_application_role_writes_rows_and_nothing_else(roles):
    from obook.book.library import BookSettings, ensure_book, open_book_store
    from obook.store.games import get_game, top_up_games
    from obook.store.leases import GameLease
    from obook.store.migrate import upgrade

    owner_url, app_url = roles
    upgrade(owner_url)  # `obook db upgrade` as the owner (the migrate service)
    store = open_book_store(app_url)  # what a worker, the driver and the service open
    book = ensure_book(store, "roles", BookSettings(size=5, depth=4))
    with store.write() as conn:
        (game_id,) = top_up_games(conn, book.id, 1, [3])
    lease = GameLease(store, "h:1:celery:a", 60, kind="celery")
    game = lease.claim(book.id)
    game, _ = lease.append(game, "C3", "m")
    lease.finish(game, "B+R", "B", None, {(1, 2): (1, 1, 0)})
    lease.leave()
    with store.read() as conn:
        assert get_game(conn, game_id).status == "finished"
    engine = create_engine(app_url)
    try:
        for statement in ("CREATE TABLE intruder (x int)", "DROP TABLE games", "ALTER TABLE games ADD COLUMN x int",
                          "COPY games TO PROGRAM 'true'", "SELECT pg_read_file('/etc/hostname')"):
            with pytest.raises(DBAPIError, match="InsufficientPrivilege"):
                with engine.begin() as conn:
                    conn.execute(text(statement))
    finally:
        engine.dispose()
