"""The grid under faults, with the real Redis and PostgreSQL of this machine and real ``obook
worker`` processes: preempted workers, a broker that loses its queues, dropped database
connections, and a warm shutdown. Each build must end with exactly its target of finished games,
none in progress, statistics that ``obook verify`` recomputes exactly, and few searches lost."""

from __future__ import annotations

import random
import signal
import time
import uuid

import pytest

from tests.conftest import PG_SERVER, _service_missing
from tests.grid.gridharness import Grid, redis_client, restart_redis, wait_until

BOOK_OPTIONS = ("--size", "5", "--search", "playouts=20", "--seconds-per-move", "0", "--depth", "10")


@pytest.fixture(scope="module")
def redis_ready():
    try:
        redis_client().ping()
    except Exception as exc:  # noqa: BLE001 - any failure to reach the server
        _service_missing("Redis at 127.0.0.1:6379", exc)


@pytest.fixture
def grid(redis_ready, tmp_path):
    """A grid over a fresh PostgreSQL database (dropped at the end) and a queue of its own."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    from obook.store.migrate import upgrade

    admin = create_engine(PG_SERVER, isolation_level="AUTOCOMMIT")
    name = f"obook_grid_{uuid.uuid4().hex[:10]}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001
        admin.dispose()
        _service_missing(f"PostgreSQL at {PG_SERVER}", exc)
    url = make_url(PG_SERVER).set(database=name).render_as_string(hide_password=False)
    upgrade(url)
    grid = Grid(database_url=url, logs=tmp_path)
    try:
        yield grid
    finally:
        grid.stop_all()
        from obook.store.db import forget_stores

        forget_stores()
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def wait_for_driver(grid: Grid, timeout: float) -> None:
    try:
        grid.driver.wait(timeout)
    except Exception:
        raise AssertionError(f"the build did not finish in {timeout:.0f} s:\n{grid.logs_text()[-4000:]}") from None
    assert grid.driver.returncode == 0, grid.logs_text()[-4000:]


def test_preempted_workers(grid):
    """3 workers; every 4 finished games (every few seconds) a random one of those in a game is
    SIGKILLed (its whole process group, like a preempted machine) and a new one started."""
    target = 40
    for _ in range(3):
        grid.start_worker()
    grid.start_driver("preempt", target, "--size", "5", "--search", "playouts=100", "--seconds-per-move", "0",
                      "--depth", "10")
    wait_until(lambda: grid.finished("preempt") >= 1, 180, what="a first finished game")
    rng = random.Random(5)
    kills = 0
    for threshold in range(4, target - 3, 4):  # a kill every 4 finished games: every few seconds here
        while grid.finished("preempt") < threshold and grid.driver.poll() is None:
            time.sleep(0.1)
        deadline = time.monotonic() + 30
        while not (playing := grid.playing_workers()) and grid.driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not playing:
            break
        victim = rng.choice(playing)  # a worker in the middle of a game, as a preemption would find it
        grid.kill(victim)
        victim.wait(10)
        kills += 1
        grid.start_worker()
    wait_for_driver(grid, 300)
    lost = grid.check_build("preempt", target, max_lost=kills)
    print(f"{kills} workers killed in a game, {lost} searches lost")
    assert kills >= 6


def test_broker_restart_loses_nothing(grid):
    """Redis is restarted without persistence in the middle of the build: every queued message is
    gone, and the driver sends the games again from the store."""
    target = 12
    for _ in range(2):
        grid.start_worker()
    grid.start_driver("broker", target, *BOOK_OPTIONS)
    wait_until(lambda: grid.finished("broker") >= 3, 180, what="3 finished games")
    try:
        restart_redis()
    finally:
        redis_client().ping()
    wait_for_driver(grid, 240)
    grid.check_build("broker", target, max_lost=2)  # a slice may lose its move when its publish fails


def test_database_connections_dropped_and_driver_restarted(grid):
    """Every connection of the workers and the driver is terminated twice mid-build; in between,
    the driver is killed and started again (it keeps nothing but what the store holds)."""
    target = 12
    for _ in range(2):
        grid.start_worker()
    grid.start_driver("blip", target, *BOOK_OPTIONS)
    database = grid.database_url.rsplit("/", 1)[1]
    for threshold in (2, 5):
        wait_until(lambda: grid.finished("blip") >= threshold, 180, what=f"{threshold} finished games")
        terminated = 0
        deadline = time.time() + 20
        while not terminated and time.time() < deadline:  # a worker may hold no connection at this instant
            terminated = grid.sql("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                                  "WHERE datname = :db AND pid <> pg_backend_pid()", db=database)[0][0]
            if not terminated:
                time.sleep(0.05)
        assert terminated >= 1
        if threshold == 2:
            grid.kill(grid.driver)
            grid.driver.wait(10)
            grid.start_driver("blip", target, *BOOK_OPTIONS)
    wait_for_driver(grid, 240)
    grid.check_build("blip", target, max_lost=4)  # a search whose move could not be stored is lost


def test_warm_shutdown(grid):
    """SIGTERM to a worker in the middle of a game: it stores the move it is playing, hands the game
    on and exits within the soft-shutdown timeout; another worker finishes the build."""
    target = 6
    worker = grid.start_worker()
    grid.start_driver("warm", target, "--size", "5", "--search", "playouts=300", "--seconds-per-move", "0")
    wait_until(lambda: grid.sql("SELECT count(*) FROM workers WHERE game_id IS NOT NULL")[0][0] >= 1, 180,
               step=0.05, what="a worker in a game")
    stopped_at = time.monotonic()
    grid.kill(worker, signal.SIGTERM)
    worker.wait(grid.soft_shutdown_seconds + 10)
    took = time.monotonic() - stopped_at
    assert took <= grid.soft_shutdown_seconds, f"the worker took {took:.1f} s to stop"
    assert worker.returncode == 0
    assert grid.lost_searches("warm") == 0
    grid.start_worker()
    wait_for_driver(grid, 240)
    grid.check_build("warm", target, max_lost=0)
