"""The grid under faults, with the real Redis and PostgreSQL of this machine and real ``obook
worker`` processes: preempted workers, a broker that loses its queues, dropped database
connections, a warm shutdown, a frozen worker that wakes up as a zombie writer, and a killed pool
process. Each build must end with exactly its target of finished games,
none in progress, statistics that ``obook verify`` recomputes exactly, and few searches lost."""

from __future__ import annotations

import os
import random
import re
import signal
import time

import pytest

from tests.conftest import PG_SERVER, _service_missing, fresh_postgres_database
from tests.grid.gridharness import Grid, redis_client, restart_redis, wait_until

BOOK_OPTIONS = ("--size", "5", "--search", "playouts=20", "--seconds-per-move", "0", "--depth", "10")


@pytest.fixture(scope="module")
def redis_ready():
    try:
        redis_client().ping()
    except Exception as exc:  # noqa: BLE001 - any failure to reach the server
        _service_missing("Redis at 127.0.0.1:6379", exc)


def grid_over(server: str, tmp_path):
    """A grid over a fresh database of the PostgreSQL ``server`` (dropped at the end) and a queue of its own."""
    from obook.store.db import forget_stores
    from obook.store.migrate import upgrade

    with fresh_postgres_database(server, "obook_grid") as url:
        upgrade(url)
        grid = Grid(database_url=url, logs=tmp_path)
        try:
            yield grid
        finally:
            grid.stop_all()
            forget_stores()


@pytest.fixture
def grid(redis_ready, tmp_path):
    yield from grid_over(PG_SERVER, tmp_path)


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


def _children(pid: int) -> set[int]:
    try:
        return {int(c) for task in os.listdir(f"/proc/{pid}/task")
                for c in open(f"/proc/{pid}/task/{task}/children").read().split()}
    except FileNotFoundError:
        return set()


@pytest.mark.parametrize("point,group", [("after_append:4", True), ("before_finish_commit:1", False)])
def test_a_worker_frozen_past_its_lease_is_a_zombie_whose_writes_are_refused(grid, tmp_path, point, group):
    """A pool process of one worker stops itself (SIGSTOP) at ``point``, and with ``group`` the
    whole worker is frozen too (main process and pool, as a suspended machine). The driver resends
    its game once the lease expired, the other worker plays it on (the server ends the frozen
    transaction after OBOOK_DB_IDLE_TRANSACTION_TIMEOUT, so its locks go); resumed, the zombie's
    next write is refused, and the build ends with exactly its target, verify clean."""
    target = 10
    stop_file = tmp_path / "frozen.pid"
    idle = {"OBOOK_DB_IDLE_TRANSACTION_TIMEOUT": "3"}
    zombie = grid.start_worker(OBOOK_TEST_STOP_AT=f"{point}:{stop_file}", **idle)
    grid.start_driver("zombie", target, *BOOK_OPTIONS)
    # the other worker starts once the zombie plays: on a loaded machine it could otherwise finish
    # every game before the zombie's pool process reached its point
    wait_until(lambda: grid.sql("SELECT 1 FROM workers WHERE game_id IS NOT NULL"), 240, what="the first worker to play")
    grid.start_worker(**idle)
    pid = int(wait_until(lambda: stop_file.exists() and stop_file.read_text(), 240, what="a pool process to stop"))
    wait_until(lambda: open(f"/proc/{pid}/stat").read().split()[2] == "T", 10, what="the process to be stopped")
    assert os.getpgid(pid) == zombie.pid
    try:
        if group:
            os.killpg(zombie.pid, signal.SIGSTOP)
        ((owner, game_id, moves),) = grid.sql("SELECT id, game_id, moves FROM workers WHERE pid = :pid", pid=pid)
        frozen_at = time.monotonic()
        wait_until(lambda: grid.sql("SELECT 1 FROM games WHERE id = :g AND (status <> 'in_progress' OR "
                                    "n_moves > :n AND lease_owner <> :o)", g=game_id, n=len(moves.split()), o=owner),
                   120, what="another worker to play the frozen game on")
        finished_then = grid.finished("zombie")
        print(f"\nfrozen at {point} ({'the whole worker' if group else 'one pool process'}) for "
              f"{time.monotonic() - frozen_at:.1f} s; game {game_id} played on by another worker "
              f"({finished_then} games finished)")
    finally:
        if group:
            os.killpg(zombie.pid, signal.SIGCONT)
        else:
            os.kill(pid, signal.SIGCONT)
    wait_for_driver(grid, 240)
    grid.check_build("zombie", target, max_lost=1)  # the zombie's prepared search: counted, never stored
    log = (tmp_path / "worker1.log").read_text()
    if point.startswith("after_append"):
        assert re.search(rf"game {game_id}: (changed by another player|lease lost)", log), log[-3000:]
    else:
        assert "idle-in-transaction timeout" in log, log[-3000:]


def test_a_killed_pool_process_is_replaced_and_the_grid_goes_on(grid):
    """``obook worker --concurrency 2``: one pool process, found by its heartbeat's pid while it
    holds a game, is SIGKILLed (not the worker); twice. Celery starts a new one, the driver
    resends the dead process's game when its lease expires, the build reaches its target."""
    target = 12
    worker = grid.start_worker(concurrency=2)
    grid.start_driver("child", target, *BOOK_OPTIONS)
    killed = []
    for threshold in (2, 6):
        wait_until(lambda: grid.finished("child") >= threshold, 240, what=f"{threshold} finished games")
        victim = wait_until(lambda: next(iter(
            {pid for (pid,) in grid.sql("SELECT pid FROM workers WHERE game_id IS NOT NULL")}
            & _children(worker.pid) - set(killed)), None), 60, step=0.05, what="a pool process in a game")
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)
        assert worker.poll() is None  # the worker itself lives on
    wait_for_driver(grid, 240)
    assert worker.poll() is None
    pool = _children(worker.pid)
    assert len(pool) == 2 and not pool & set(killed), (pool, killed)
    lost = grid.check_build("child", target, max_lost=len(killed))
    print(f"\n{len(killed)} pool processes killed in a game, {lost} searches lost")
