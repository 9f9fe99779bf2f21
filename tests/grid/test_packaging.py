"""Issue 20, items 10 and 11: the grid as Celery users and compose users run it, and the engine-only
install. The compose file is parsed and checked (Docker does not run here); Celery's ``-A workers``
is run for real against the test Redis."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import yaml

from tests.conftest import _service_missing

ROOT = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("OBOOK_TEST_REDIS", "redis://127.0.0.1:6379/13")


def compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_worker_concurrency_comes_from_the_environment_and_secrets_stay_in_dot_env():
    services = compose()["services"]
    for name in ("api", "driver", "worker", "migrate"):
        env = services[name]["environment"]
        assert env["OBOOK_WORKER_CONCURRENCY"] == "${OBOOK_WORKER_CONCURRENCY:-1}", name
        assert services[name]["env_file"] == [{"path": "./obook.env", "required": False}], name
    for name in ("postgres", "redis"):
        assert "env_file" not in services[name]  # nor do the database and the broker get obook's settings
    assert "--concurrency" not in " ".join(services["worker"]["command"])
    health = " ".join(services["worker"]["healthcheck"]["test"])
    assert "celery -A workers inspect ping" in health
    assert "/obook.env" in (ROOT / ".gitignore").read_text().split()
    example = (ROOT / "obook.env.example").read_text()
    assert "PASSWORD" not in example and "TOKEN" not in example


def worker_args(**given):
    defaults = {"concurrency": None, "pool": "prefork", "loglevel": "INFO"}
    return argparse.Namespace(**{**defaults, **given})


def test_obook_worker_concurrency(monkeypatch):
    from obook.config import Settings
    from obook.errors import ObookError
    from workers.command import worker_argv

    def concurrency(argv):
        return int(argv[argv.index("--concurrency") + 1])

    assert concurrency(worker_argv(worker_args(), Settings(), "w@h")) == (os.cpu_count() or 1)
    monkeypatch.setenv("OBOOK_WORKER_CONCURRENCY", "3")
    argv = worker_argv(worker_args(), Settings(), "w@h")
    assert concurrency(argv) == 3 and argv[argv.index("-A") + 1] == "workers"
    assert concurrency(worker_argv(worker_args(concurrency=2), Settings(), "w@h")) == 2
    with pytest.raises(ObookError, match="--concurrency must be at least 1"):
        worker_argv(worker_args(concurrency=-1), Settings(), "w@h")


def test_importing_workers_does_not_load_celery():
    code = "import sys, workers, workers.command; print('celery' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.stdout.strip() == "False", done.stderr


def test_celery_dash_a_workers_runs_a_worker_that_answers_ping():
    """``celery -A workers worker`` as Celery users type it, and the compose health check's ping."""
    import redis

    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=2).ping()
    except Exception as exc:  # noqa: BLE001
        _service_missing(f"Redis at {REDIS_URL}", exc)
    queue = f"packaging-{uuid.uuid4().hex[:8]}"
    name = f"{queue}@test"
    env = {**os.environ, "OBOOK_BROKER_URL": REDIS_URL, "OBOOK_QUEUE": queue}
    celery = [sys.executable, "-m", "celery", "-A", "workers"]
    worker = subprocess.Popen(celery + ["worker", "-P", "solo", "-Q", queue, "-n", name, "--without-gossip",
                                        "--without-mingle", "--loglevel", "INFO"],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 90
        answered = None
        while time.monotonic() < deadline and worker.poll() is None:
            ping = subprocess.run(celery + ["inspect", "ping", "-d", name, "--timeout", "3"], cwd=ROOT, env=env,
                                  capture_output=True, text=True, timeout=60)
            if ping.returncode == 0:
                answered = ping.stdout
                break
            time.sleep(1)
        assert answered is not None and "pong" in answered, worker.poll()
    finally:
        worker.terminate()
        try:
            output = worker.communicate(timeout=60)[0]
        except subprocess.TimeoutExpired:
            worker.kill()
            output = worker.communicate()[0]
    assert "workers.tasks" in output or "obook" in output


BLOCK_EXTRAS = '''
import importlib.abc, sys
class Missing(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {"fastapi", "starlette", "uvicorn", "celery", "kombu", "redis", "psycopg"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Missing())
'''


def run_without_extras(tmp_path, *args, stdin=""):
    """``obook ARGS`` in a Python where the grid's and the service's packages cannot be imported."""
    (tmp_path / "sitecustomize.py").write_text(BLOCK_EXTRAS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "obook.cli", *args], input=stdin, capture_output=True, text=True,
                          env=env, timeout=300, cwd=tmp_path)


def test_the_engine_runs_without_the_grid_and_service_stack(tmp_path):
    done = run_without_extras(tmp_path, "gtp", "--config", "algorithm=flat,playouts=100,seed=3",
                              stdin="1 name\n2 genmove b\n3 quit\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("=1 obook\n\n=2 ") and "=3" in done.stdout
    served = run_without_extras(tmp_path, "serve", "--db", f"sqlite:///{tmp_path / 'x.db'}")
    assert served.returncode == 2 and "pip install 'obook[service]'" in served.stderr
    assert "in a clone of the repository: pip install -e '.[service]'" in served.stderr
    assert "Traceback" not in served.stderr
    worker = run_without_extras(tmp_path, "worker", "--concurrency", "1")
    assert worker.returncode == 2 and "pip install 'obook[grid]'" in worker.stderr
    assert "pip install -e '.[grid]'" in worker.stderr


def test_core_dependencies_are_the_engines_and_the_licence_matches():
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    for package in ("celery", "fastapi", "uvicorn", "psycopg"):
        assert package not in core, package
    extras = project["optional-dependencies"]
    assert {"grid", "service", "all", "postgres"} <= extras.keys()
    assert any(d.startswith("celery[redis]>=5.5") for d in extras["grid"])  # worker_soft_shutdown_timeout
    assert set(extras["grid"]) | set(extras["service"]) == set(extras["all"])
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License")
    assert "'.[all,test]'" in (ROOT / "Makefile").read_text()
    pins = [line for line in (ROOT / "constraints.txt").read_text().splitlines() if line and line[0] != "#"]
    assert pins and all("==" in line for line in pins)
    assert {line.split("==")[0].lower() for line in pins} >= {"numba", "numpy", "celery", "fastapi", "sqlalchemy"}
    dockerfile = (ROOT / "Dockerfile").read_text()  # the image installs the same pinned versions
    assert "constraints.txt" in next(line for line in dockerfile.splitlines() if line.startswith("COPY pyproject.toml"))
    assert "pip install -c constraints.txt '.[all]'" in dockerfile
