"""Real grid processes for the grid tests: a fresh PostgreSQL database, a Redis database number and
queue of this test session, ``obook worker`` and ``obook grid run`` subprocesses, and the checks
every build must pass (exact target, nothing in progress, statistics verified, lost searches)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from sqlalchemy import create_engine, text

OBOOK = [sys.executable, "-m", "obook.cli"]
REDIS_URL = os.environ.get("OBOOK_TEST_REDIS", "redis://127.0.0.1:6379/13")
REDIS_START = ["redis-server", "--daemonize", "yes", "--bind", "127.0.0.1", "-::1", "--port", "6379", "--save", "",
               "--appendonly", "no", "--dir", "/var/lib/redis", "--logfile", "/var/log/redis/ci.log"]


def redis_client(url: str = REDIS_URL):
    import redis

    return redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=2)


def wait_until(predicate, timeout: float, step: float = 0.2, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@dataclass
class Grid:
    database_url: str
    logs: Path
    queue: str = field(default_factory=lambda: f"obook_test_{uuid.uuid4().hex[:8]}")
    broker_url: str = REDIS_URL
    lease_seconds: float = 4.0
    slice_seconds: float = 1.0
    soft_shutdown_seconds: float = 20.0
    workers: list[subprocess.Popen] = field(default_factory=list)
    driver: subprocess.Popen | None = None
    started: int = 0

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "OBOOK_DATABASE_URL": self.database_url, "OBOOK_BROKER_URL": self.broker_url,
                "OBOOK_QUEUE": self.queue, "OBOOK_LEASE_SECONDS": str(self.lease_seconds),
                "OBOOK_SLICE_SECONDS": str(self.slice_seconds),
                "OBOOK_SOFT_SHUTDOWN_SECONDS": str(self.soft_shutdown_seconds)}

    def obook(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([*OBOOK, *args], env=self.env, capture_output=True, text=True, timeout=timeout)

    def start_worker(self, concurrency: int = 1, **env: str) -> subprocess.Popen:
        """``env``: more environment variables of this worker only (test hooks)."""
        self.started += 1
        log = open(self.logs / f"worker{self.started}.log", "w")
        worker = subprocess.Popen([*OBOOK, "worker", "--concurrency", str(concurrency), "--loglevel", "INFO",
                                   "--name", f"w{self.started}-{self.queue}@%h"],
                                  env={**self.env, **env}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self.workers.append(worker)
        return worker

    def kill(self, worker: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
        """SIGKILL: the whole process group, as a preempted machine; other signals: the main process."""
        if sig == signal.SIGKILL:
            os.killpg(worker.pid, sig)
        else:
            worker.send_signal(sig)

    def alive_workers(self) -> list[subprocess.Popen]:
        return [w for w in self.workers if w.poll() is None]

    def playing_workers(self) -> list[subprocess.Popen]:
        """Live workers one of whose processes holds a game now (by the heartbeat's pid)."""
        pids = {pid for (pid,) in self.sql("SELECT pid FROM workers WHERE game_id IS NOT NULL")}
        groups = set()
        for pid in pids:
            try:
                groups.add(os.getpgid(pid))
            except ProcessLookupError:
                pass
        return [w for w in self.alive_workers() if w.pid in groups]

    def start_driver(self, book: str, target: int, *book_options: str, env: dict | None = None) -> subprocess.Popen:
        """``obook grid run``; a book whose options name no algorithm is a self-play (MVBM) book of
        games, as the fault tests measure (a new book's default is minimax)."""
        if "--algorithm" not in book_options:
            book_options = ("--algorithm", "mvbm", *book_options)
        log = open(self.logs / "driver.log", "a")
        self.driver = subprocess.Popen([*OBOOK, "grid", "run", "--book", book, "--target-games", str(target),
                                        "--poll", "0.5", *book_options],
                                       env={**self.env, **(env or {})}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        return self.driver

    def stop_all(self) -> None:
        for process in [*self.workers, self.driver]:
            if process is not None and process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait(10)
        try:
            client = redis_client(self.broker_url)
            client.delete(self.queue)
        except Exception:  # noqa: BLE001 - Redis may be the thing a test broke
            pass

    # ---- the store, read directly ---------------------------------------------------------------

    def sql(self, query: str, **params):
        engine = create_engine(self.database_url)
        try:
            with engine.begin() as conn:
                return conn.execute(text(query), params).all()
        finally:
            engine.dispose()

    def counts(self, book: str) -> dict[str, int]:
        rows = self.sql("SELECT g.status, count(*) FROM games g JOIN books b ON b.id = g.book_id "
                        "WHERE b.name = :book GROUP BY g.status", book=book)
        return {status: n for status, n in rows}

    def finished(self, book: str) -> int:
        return self.counts(book).get("finished", 0)

    def lost_searches(self, book: str) -> int:
        """Mutation searches started whose move was never stored: searches started, less the stored
        search moves, less the searches that ended in a resignation."""
        rows = self.sql("SELECT g.searches, g.origins, g.result FROM games g JOIN books b ON b.id = g.book_id "
                        "WHERE b.name = :book", book=book)
        return sum(s - o.count("m") - (1 if (r or "").endswith("+R") else 0) for s, o, r in rows)

    def check_build(self, book: str, target: int, max_lost: int) -> int:
        counts = self.counts(book)
        assert counts.get("finished", 0) == target, counts
        assert counts.get("in_progress", 0) == 0, counts
        assert counts.get("abandoned", 0) == 0, counts
        verify = self.obook("verify", "--book", book)
        assert verify.returncode == 0, verify.stdout + verify.stderr
        assert f"{target} finished games" in verify.stdout and "statistics match the games" in verify.stdout
        lost = self.lost_searches(book)
        assert 0 <= lost <= max_lost, f"{lost} searches lost, at most {max_lost} allowed"
        return lost

    def logs_text(self) -> str:
        return "\n".join(p.read_text(errors="replace") for p in sorted(self.logs.glob("*.log")))


def restart_redis() -> None:
    """Stop the machine's Redis without saving (its queues are lost) and start it again."""
    subprocess.run(["redis-cli", "-h", "127.0.0.1", "shutdown", "nosave"], capture_output=True, timeout=20)
    wait_until(lambda: subprocess.run(["redis-cli", "-h", "127.0.0.1", "ping"], capture_output=True).returncode != 0,
               20, what="Redis to stop")
    subprocess.run(REDIS_START, check=True, capture_output=True, timeout=20)
    wait_until(lambda: subprocess.run(["redis-cli", "-h", "127.0.0.1", "ping"], capture_output=True,
                                      text=True).stdout.strip() == "PONG", 20, what="Redis to start")


class PrivateRedis:
    """A Redis server of one run's own (no persistence, on a free port), a child of this process:
    a run that restarts its broker again and again must not restart the machine's, which other
    tests and programs share. ``restart`` SIGKILLs it (every queued message is lost, as a crashed
    broker without persistence) and starts it again on the same port."""

    def __init__(self, logs: Path):
        import socket

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.logs = logs
        self.process: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.process = subprocess.Popen(["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                                         "--appendonly", "no", "--dir", str(self.logs),
                                         "--logfile", str(self.logs / "redis.log")],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        wait_until(self.ping, 20, step=0.05, what=f"Redis on port {self.port} to start")

    def ping(self) -> bool:
        try:
            return bool(redis_client(self.url).ping())
        except Exception:  # noqa: BLE001 - not up yet
            return False

    def restart(self) -> None:
        self.stop()
        self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(20)
