"""What the grid benchmarks share: a fresh PostgreSQL database, real ``obook worker`` and
``obook grid run`` processes on a Redis database and queue of their own, and rates read from the
store (moves stored, games finished) over a measured window."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

log = logging.getLogger("grid-bench")

PG_SERVER = os.environ.get("OBOOK_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("OBOOK_BENCH_REDIS", "redis://127.0.0.1:6379/12")
OBOOK = [sys.executable, "-m", "obook.cli"]


@contextmanager
def fresh_database():
    admin = create_engine(PG_SERVER, isolation_level="AUTOCOMMIT")
    name = f"obook_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    url = make_url(PG_SERVER).set(database=name).render_as_string(hide_password=False)
    try:
        from obook.store.migrate import upgrade

        upgrade(url)
        yield url
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


class GridRun:
    """Workers and a driver for one book; ``stop()`` ends them all."""

    def __init__(self, url: str, book: str, target: int, book_options: list[str], slice_seconds: float = 5.0):
        self.url = url
        self.book = book
        self.logs = Path(tempfile.mkdtemp(prefix="obook-grid-bench-"))
        self.env = {**os.environ, "OBOOK_DATABASE_URL": url, "OBOOK_BROKER_URL": REDIS_URL,
                    "OBOOK_QUEUE": f"bench_{uuid.uuid4().hex[:8]}", "OBOOK_SLICE_SECONDS": str(slice_seconds)}
        self.processes: list[subprocess.Popen] = []
        self.engine = create_engine(url)
        self.target = target
        self.book_options = book_options

    def start_workers(self, processes: int) -> None:
        out = open(self.logs / "worker.log", "a")
        self.processes.append(subprocess.Popen(
            [*OBOOK, "worker", "--concurrency", str(processes), "--loglevel", "WARNING"],
            env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True))

    def start_driver(self) -> None:
        out = open(self.logs / "driver.log", "a")
        self.processes.append(subprocess.Popen(
            [*OBOOK, "grid", "run", "--book", self.book, "--target-games", str(self.target), "--poll", "0.5",
             *self.book_options], env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True))

    def totals(self) -> tuple[int, int, int]:
        """(moves stored in every game of the book, finished games, searches started)."""
        with self.engine.connect() as conn:
            moves, finished, searches = conn.execute(text(
                "SELECT coalesce(sum(n_moves), 0), count(*) FILTER (WHERE status = 'finished'), "
                "coalesce(sum(searches), 0) FROM games")).one()
        return int(moves), int(finished), int(searches)

    def measure(self, warm_games: int, seconds: float) -> dict:
        """Rates over ``seconds`` once ``warm_games`` games have finished (the workers are warm)."""
        deadline = time.monotonic() + 600
        while self.totals()[1] < warm_games:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no warm-up after 600 s; logs in {self.logs}")
            time.sleep(0.5)
        moves0, games0, searches0 = self.totals()
        t0 = time.monotonic()
        time.sleep(seconds)
        moves1, games1, searches1 = self.totals()
        elapsed = time.monotonic() - t0
        with self.engine.connect() as conn:
            mean_moves = conn.execute(text("SELECT avg(n_moves) FROM games WHERE status = 'finished'")).scalar()
        return {"mean_moves_per_game": round(float(mean_moves or 0), 1),"seconds": round(elapsed, 1), "moves": moves1 - moves0, "games": games1 - games0,
                "moves_per_second": round((moves1 - moves0) / elapsed, 1),
                "searches_per_second": round((searches1 - searches0) / elapsed, 2),
                "games_per_second": round((games1 - games0) / elapsed, 2),
                "games_per_hour": round((games1 - games0) * 3600 / elapsed)}

    def stop(self) -> None:
        for p in self.processes:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(10)
        self.engine.dispose()
