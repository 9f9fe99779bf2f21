"""Issue 19, "Prove it": the PostgreSQL server restarts (``pg_ctlcluster ... stop``/``start``, then
``restart``: a fast shutdown terminates every session) in the middle of a grid build (real
``obook worker`` and ``obook grid run`` processes over this machine's Redis) and of an embedded
build (``obook build``, 2 processes). Each restart is of the tests' own cluster
(``restartable_postgres``), never of the shared one. Nothing may die: the build completes exactly
its target, nothing counted twice (``obook verify`` clean), no game charged with a failure (a
restart is the store's fault, not the game's), at most one search repeated per game a player
held at the restart."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.book.test_book_cli import counts, obook
from tests.book.test_build_faults import finished, sql
from tests.book.test_kill_points import searches_repeated
from tests.conftest import fresh_postgres_database
from tests.grid.gridharness import wait_until
from tests.grid.test_grid_faults import grid_over, redis_ready, wait_for_driver  # noqa: F401 - fixture

RESTARTS = (3.0, 0.0)  # seconds the server stays down: 3 s of refused connections, then an immediate restart
PLAYERS = 2
# Games of a few seconds on a quiet machine: at 200 playouts 10 games took about 2 s in all, and the
# build could end between the two restarts.
OPTIONS = ("--algorithm", "mvbm", "--size", "7", "--search", "playouts=2000", "--seconds-per-move", "0",
           "--depth", "10")
THRESHOLDS = (2, 5)  # finished games before each restart


@pytest.fixture
def restart_grid(redis_ready, restartable_postgres, tmp_path):  # noqa: F811 - redis_ready is the fixture
    yield from grid_over(restartable_postgres.url, tmp_path)


def restart_after(server, build, done, threshold: int, down_seconds: float, held) -> int:
    """Restart the server once ``done()`` reaches ``threshold`` finished games and a player holds a
    game, while the ``build`` process runs; returns how many games players held just before."""
    wait_until(lambda: done() >= threshold or build.poll() is not None, 180, what=f"{threshold} finished games")
    playing = wait_until(lambda: held() or build.poll() is not None, 30, step=0.05, what="a player in a game")
    assert build.poll() is None, f"the build ended (status {build.returncode}) before {threshold} finished games"
    before = server.started_at()
    server.restart(down_seconds)
    assert server.started_at() > before
    return playing


def test_the_grid_survives_postgresql_restarts(restart_grid, restartable_postgres):
    grid, target = restart_grid, 10
    for _ in range(PLAYERS):
        grid.start_worker()
    grid.start_driver("restart", target, *OPTIONS)
    held = [restart_after(restartable_postgres, grid.driver, lambda: grid.finished("restart"), threshold, down,
                          lambda: grid.sql("SELECT count(*) FROM games WHERE status = 'in_progress' "
                                           "AND lease_owner NOT LIKE 'q:%'")[0][0])
            for threshold, down in zip(THRESHOLDS, RESTARTS)]
    wait_for_driver(grid, 240)
    lost = grid.check_build("restart", target, max_lost=PLAYERS * len(RESTARTS))
    assert grid.sql("SELECT coalesce(sum(failures), 0) FROM games")[0][0] == 0
    log = grid.logs_text()
    assert "store unreachable" in log or "store error" in log, log[-4000:]  # the restarts were felt
    print(f"\n{target} games, {len(RESTARTS)} restarts with {held} games held by players, {lost} searches repeated")


def test_the_embedded_build_survives_postgresql_restarts(restartable_postgres, compiled_engine, tmp_path):
    """Without ``--quiet``: the parent reads the progress from the store every half second too."""
    target = 10
    with fresh_postgres_database(restartable_postgres.url, "obook_restart") as url:
        obook("db", "upgrade", "--db", url)
        log = tmp_path / "build.log"
        with open(log, "w") as err:
            build = subprocess.Popen([sys.executable, "-m", "obook.cli", "build", "--db", url, "--book", "r",
                                      "--games", str(target), "--workers", str(PLAYERS), *OPTIONS],
                                     stdout=subprocess.DEVNULL, stderr=err, text=True)
        try:
            held = [restart_after(restartable_postgres, build, lambda: finished(url, "r"), threshold, down,
                                  lambda: sql(url, "SELECT count(*) FROM workers WHERE game_id IS NOT NULL")[0][0])
                    for threshold, down in zip(THRESHOLDS, RESTARTS)]
            build.wait(240)
        finally:
            if build.poll() is None:
                build.kill()
        stderr = log.read_text(errors="replace")
        assert build.returncode == 0, stderr[-3000:]
        assert "store error" in stderr, stderr[-3000:]  # the restarts were felt, and waited out
        assert counts(url, "r") == {"finished": target}
        assert "statistics match the games" in obook("verify", "--db", url, "--book", "r").stdout
        assert sql(url, "SELECT coalesce(sum(failures), 0) FROM games")[0][0] == 0
        repeated = searches_repeated(url)
        print(f"\n{target} games, {len(RESTARTS)} restarts with {held} games held by players, "
              f"{repeated} searches repeated")
        assert 0 <= repeated <= PLAYERS * len(RESTARTS)



def test_an_expansion_build_survives_postgresql_restarts(restartable_postgres, compiled_engine):
    """The same for a minimax book's expansions: the restarts are waited out, no expansion is
    charged with a failure, each is done once, and the stored bounds verify."""
    from tests.book.test_kill_points import expansion_counts

    target = 24
    # expansions of about a second on 9x9 (at 3,000 playouts a build of 16 ended between the restarts)
    options = ("--algorithm", "minimax", "--size", "9", "--search", "playouts=30000", "--play-playouts", "30",
               "--seconds-per-move", "0")
    with fresh_postgres_database(restartable_postgres.url, "obook_restart_minimax") as url:
        obook("db", "upgrade", "--db", url)
        build = subprocess.Popen([sys.executable, "-m", "obook.cli", "build", "--db", url, "--book", "m",
                                  "--games", str(target), "--workers", str(PLAYERS), "--quiet", *options],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            held = [restart_after(restartable_postgres, build,
                                  lambda: expansion_counts(url, "m").get("done", 0), threshold, down,
                                  lambda: sql(url, "SELECT count(*) FROM workers WHERE game_id IS NOT NULL")[0][0])
                    for threshold, down in zip(THRESHOLDS, RESTARTS)]
            _, stderr = build.communicate(timeout=300)
        finally:
            if build.poll() is None:
                build.kill()
        assert build.returncode == 0, stderr[-3000:]
        assert "store error" in stderr, stderr[-3000:]
        assert expansion_counts(url, "m") == {"done": target}
        assert "every backed-up value matches" in obook("verify", "--db", url, "--book", "m").stdout
        failures, repeated = sql(url, "SELECT coalesce(sum(failures), 0), coalesce(sum(attempts - 1), 0) "
                                      "FROM expansions")[0]
        print(f"\n{target} expansions, {len(RESTARTS)} restarts with {held} held, {repeated} repeated")
        assert failures == 0
        assert 0 <= repeated <= PLAYERS * len(RESTARTS)
