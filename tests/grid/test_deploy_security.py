"""Issue 19, item 9 and issue 33, item 2: the compose file publishes neither PostgreSQL nor Redis,
has no working default password, and gives each container the one role and the secrets it needs:
the API the read-only service role and no Redis password, the driver and workers the worker role
and the broker, the schema owner's password to the migration alone, the superuser's to the roles
step alone. What each role can do is tried on the real server in tests/store/test_roles.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {"POSTGRES_PASSWORD", "OBOOK_MIGRATOR_PASSWORD", "OBOOK_SERVICE_PASSWORD", "OBOOK_WORKER_PASSWORD",
           "OBOOK_BACKUP_PASSWORD", "REDIS_PASSWORD"}
# which services may see each secret (in their environment, after compose's YAML merges)
HOLDERS = {"POSTGRES_PASSWORD": {"postgres", "roles"},
           "OBOOK_MIGRATOR_PASSWORD": {"roles", "migrate"},
           "OBOOK_SERVICE_PASSWORD": {"roles", "api"},
           "OBOOK_WORKER_PASSWORD": {"roles", "driver", "worker"},
           "OBOOK_BACKUP_PASSWORD": {"roles", "backup"},
           "REDIS_PASSWORD": {"redis", "driver", "worker"},
           "OBOOK_ADMIN_TOKEN": {"api"}}


def test_compose_publishes_no_database_or_broker_and_needs_every_secret():
    source = (ROOT / "docker-compose.yml").read_text()
    services = yaml.safe_load(source)["services"]
    assert "ports" not in services["postgres"] and "ports" not in services["redis"]
    assert all(p.startswith("${OBOOK_API_BIND:-127.0.0.1}:") for p in services["api"]["ports"])
    assert "obook:obook" not in source and "POSTGRES_USER" not in source  # no superuser named obook
    required = set(re.findall(r"\$\{(\w+):\?", source))
    assert required == SECRETS  # the admin token may be empty (its endpoints are then closed)
    for name in SECRETS:  # never with a default that works
        assert not re.search(r"\$\{" + name + r":?-", source), name
    assert services["redis"]["environment"]["REDIS_PASSWORD"].startswith("${REDIS_PASSWORD:?")
    for name in ("driver", "worker"):
        env = services[name]["environment"]
        assert env["OBOOK_DATABASE_URL"].startswith("postgresql+psycopg://obook_worker:"), name
        assert env["OBOOK_BROKER_URL"].startswith("redis://:${REDIS_PASSWORD:?"), name
    api = services["api"]["environment"]
    assert api["OBOOK_DATABASE_URL"].startswith("postgresql+psycopg://obook_service:")
    assert "OBOOK_BROKER_URL" not in api  # the service never talks to Redis (nothing in api/ imports it)
    assert services["migrate"]["environment"]["OBOOK_DATABASE_URL"].startswith("postgresql+psycopg://obook_migrator:")
    assert services["migrate"]["command"] == ["sh", "-c", "obook db upgrade && obook db grant"]
    assert services["migrate"]["depends_on"]["roles"]["condition"] == "service_completed_successfully"
    assert services["roles"]["command"] == ["obook", "db", "roles", "--database", "obook"]
    assert services["roles"]["environment"]["OBOOK_DATABASE_URL"].startswith("postgresql+psycopg://postgres:")
    for secret, holders in HOLDERS.items():
        seen = {name for name, service in services.items()
                if "${" + secret + ":" in yaml.safe_dump(service.get("environment", {}))}
        assert seen == holders, (secret, seen)
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


def test_composes_backup_service_runs_the_tested_script_as_the_backup_role():
    """The script tests/store/test_roles.py runs against a real server is the one compose mounts."""
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    backup = services["backup"]
    assert backup["entrypoint"] == ["sh", "/obook/backup.sh"]
    assert "./deploy/backup.sh:/obook/backup.sh:ro" in backup["volumes"]
    assert any(v.startswith("backups:") for v in backup["volumes"])
    env = backup["environment"]
    assert (env["PGUSER"], env["PGDATABASE"], env["PGHOST"]) == ("obook_backup", "obook", "postgres")
    assert backup["depends_on"]["migrate"]["condition"] == "service_completed_successfully"  # granted first
    assert "backups" in yaml.safe_load((ROOT / "docker-compose.yml").read_text())["volumes"]


def test_the_remote_worker_compose_holds_only_the_workers_secrets():
    """``docker-compose.worker.yml`` (issue 34, item 9): workers on another machine from the pushed
    image, with the worker role's database URL and the broker's, and nothing else secret; the same
    command, stop grace and health check as the main file's workers, so both behave alike."""
    remote = yaml.safe_load((ROOT / "docker-compose.worker.yml").read_text())["services"]
    assert list(remote) == ["worker"]
    worker, local = remote["worker"], yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["worker"]
    assert worker["image"].startswith("${OBOOK_IMAGE:?") and "build" not in worker
    env = worker["environment"]
    assert env["OBOOK_DATABASE_URL"].startswith("${OBOOK_DATABASE_URL:?") and "obook_worker" in env["OBOOK_DATABASE_URL"]
    assert env["OBOOK_BROKER_URL"].startswith("${OBOOK_BROKER_URL:?")
    source = yaml.safe_dump(worker)
    for secret in SECRETS - {"REDIS_PASSWORD", "OBOOK_WORKER_PASSWORD"} | {"OBOOK_ADMIN_TOKEN"}:
        assert secret not in source, secret
    for key in ("command", "stop_signal", "stop_grace_period", "healthcheck", "restart"):
        assert worker[key] == local[key], key
    example = dict(line.split("=", 1) for line in (ROOT / ".env.worker.example").read_text().splitlines()
                   if line and not line.startswith("#"))
    assert example == {"OBOOK_IMAGE": "", "OBOOK_DATABASE_URL": "", "OBOOK_BROKER_URL": ""}
    assert "/.env.worker" in (ROOT / ".gitignore").read_text().split()
