"""Issue 33: the driver's exit status says whether starting it again can help, so that compose's
restart policy does not start for ever a driver that stopped on purpose. Real ``obook grid run``
processes over this machine's PostgreSQL and Redis: 2 for bad input, 1 for giving up, 3 for units
set aside (an operator's turn), 0 at the target; with ``--wait-set-aside`` (compose's) the driver
does not exit on set-aside units but waits, unhealthy, and finishes them once they are put back."""

from __future__ import annotations

import time

from tests.grid.gridharness import wait_until
from tests.grid.test_grid_faults import grid, redis_ready  # noqa: F401 - fixtures

FAST_GAMES = ("--algorithm", "mvbm", "--size", "5", "--search", "algorithm=random", "--seconds-per-move", "0",
              "--depth", "8")
REASON = "PoisonedUnit: game 1 is poison"


def set_game_aside(grid) -> None:
    """The book's one game set aside, as after failing on two workers."""
    assert grid.sql("UPDATE games SET status = 'set_aside', failures = 3, failure = :reason, lease_owner = NULL, "
                    "lease_until = NULL RETURNING id", reason=REASON) == [(1,)]


def test_the_drivers_exit_status_says_whether_a_restart_can_help(grid):
    bad = grid.obook("grid", "run", "--book", "aside", "--target", "0")
    assert bad.returncode == 2 and "--target must be at least 1" in bad.stderr and "Traceback" not in bad.stderr
    gave_up = grid.obook("grid", "run", "--book", "aside", "--target", "1", *FAST_GAMES, "--max-seconds", "1")
    assert gave_up.returncode == 1 and "before the target" in gave_up.stderr, gave_up.stderr[-2000:]
    assert grid.counts("aside") == {"in_progress": 1}  # no worker: its one game waits

    set_game_aside(grid)
    stopped = grid.obook("grid", "run", "--book", "aside", "--target", "1")
    assert stopped.returncode == 3, stopped.stderr[-2000:]
    assert REASON in stopped.stderr and "obook verify --book aside --retry-set-aside" in stopped.stderr
    health = grid.obook("grid", "health", "--book", "aside")
    assert health.returncode == 1 and "NEEDS AN OPERATOR: 1 game(s) set aside" in health.stdout, health.stdout
    unknown = grid.obook("grid", "health", "--book", "nosuchbook")
    assert unknown.returncode == 2 and "nosuchbook" in unknown.stderr and "Traceback" not in unknown.stderr


def test_a_driver_told_to_wait_waits_for_the_operator_then_finishes(grid):
    """Compose's driver (``--wait-set-aside``): units set aside keep it running, unhealthy, with a
    log line saying what to do; once they are put back it takes them up and ends at the target."""
    assert grid.obook("grid", "run", "--book", "aside", "--target", "1", *FAST_GAMES, "--max-seconds", "1"
                      ).returncode == 1
    set_game_aside(grid)
    driver = grid.start_driver("aside", 1, "--wait-set-aside")
    log = grid.logs / "driver.log"
    wait_until(lambda: "waiting for an operator" in log.read_text(errors="replace"), 60, what="the waiting line")
    time.sleep(3)
    assert driver.poll() is None, grid.logs_text()[-3000:]
    assert grid.obook("grid", "health", "--book", "aside").returncode == 1

    back = grid.obook("verify", "--book", "aside", "--retry-set-aside")
    assert back.returncode == 0 and "1 set-aside game(s) put back to work" in back.stdout, back.stdout
    grid.start_worker()
    try:
        driver.wait(180)
    except Exception:
        raise AssertionError(f"the build did not end:\n{grid.logs_text()[-4000:]}") from None
    assert driver.returncode == 0, grid.logs_text()[-4000:]
    assert grid.counts("aside") == {"finished": 1}
    healthy = grid.obook("grid", "health", "--book", "aside")
    assert healthy.returncode == 0 and "book aside: healthy (1 games done, 0 open)" in healthy.stdout, healthy.stdout
