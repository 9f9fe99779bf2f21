"""Issue 19 on the grid, with real ``obook worker`` and ``obook grid run`` processes over this
machine's PostgreSQL and Redis: a poison game is set aside after a bounded number of failures and
the build ends (item 5), and a driver whose clock runs 10 minutes ahead of the workers', or a worker
whose clock runs 10 minutes ahead or behind, costs no game resent and no search (item 6: leases are
decided by the database's clock, tokens aged by the driver's own)."""

from __future__ import annotations

import re

import pytest

from tests.grid.gridharness import wait_until
from tests.grid.test_grid_faults import BOOK_OPTIONS, grid, redis_ready  # noqa: F401 - fixtures

SLOWER_OPTIONS = ("--size", "7", "--search", "playouts=20", "--seconds-per-move", "0", "--depth", "10")  # games of seconds
TOKEN_OPTIONS = ("--size", "7", "--search", "playouts=100", "--seconds-per-move", "0", "--depth", "10")  # games of many 0.02 s slices
POISON = 2  # the id of the poison game: the databases are fresh, games are numbered from 1


def sent_and_created(grid) -> tuple[int, int]:
    text = (grid.logs / "driver.log").read_text(errors="replace")
    return (sum(int(n) for n in re.findall(r"sent (\d+)", text)),
            sum(int(n) for n in re.findall(r"created (\d+)", text)))


def test_a_poison_game_is_set_aside_and_the_build_ends(grid):
    """Two workers: a unit is set aside only after failing on two different workers (issue 33; one
    worker alone would keep it, backing off, as it might be the worker's fault)."""
    target = 4
    for _ in range(2):
        grid.start_worker(OBOOK_TEST_POISON_UNIT=f"game:{POISON}", OBOOK_MAX_GAME_FAILURES="3", OBOOK_RETRY_SECONDS="0.5")
    grid.start_driver("poison", target, *BOOK_OPTIONS)
    try:
        grid.driver.wait(240)
    except Exception:
        raise AssertionError(f"the build did not end:\n{grid.logs_text()[-4000:]}") from None
    log = grid.logs_text()
    assert grid.driver.returncode == 3, log[-4000:]  # set aside: an operator's turn (issue 33)
    assert "1 game(s) set aside" in log
    assert grid.counts("poison") == {"finished": target - 1, "set_aside": 1}
    ((failures, reason, owner, failed_by),) = grid.sql(
        "SELECT failures, failure, lease_owner, failed_by FROM games WHERE status = 'set_aside'")
    assert failures >= 3 and owner is None and len(set(failed_by.split("\n"))) == 2
    print(f"\npoison game {POISON}: {failures} failures, then set aside; {target - 1} games finished")
    assert "PoisonedUnit" in reason and f"game {POISON} is poison" in reason
    verify = grid.obook("verify", "--book", "poison")
    assert verify.returncode == 0, verify.stdout + verify.stderr  # its statistics were never counted
    assert f"game {POISON} set aside after {failures} failures: PoisonedUnit" in verify.stdout
    assert "statistics match the games" in verify.stdout

    from fastapi.testclient import TestClient

    from api.app import create_app

    with TestClient(create_app(grid.database_url)) as client:
        (book,) = client.get("/v1/progress").json()["books"]
    assert book["games_set_aside"] == 1 and book["games_finished"] == target - 1
    assert book["set_aside"][0]["id"] == POISON and "PoisonedUnit" in book["set_aside"][0]["reason"]

    # put back to work (the bug fixed): a worker without the hook finishes it, the driver reaches the target
    back = grid.obook("verify", "--book", "poison", "--retry-set-aside")
    assert back.returncode == 0 and f"1 set-aside game(s) put back to work ({POISON})" in back.stdout, back.stdout
    assert grid.counts("poison") == {"finished": target - 1, "in_progress": 1}
    for worker in grid.workers:
        grid.kill(worker)
    grid.start_worker()
    grid.start_driver("poison", target, *BOOK_OPTIONS)
    wait_until(lambda: grid.driver.poll() is not None, 240, what="the build to end")
    assert grid.driver.returncode == 0, grid.logs_text()[-3000:]
    assert grid.counts("poison") == {"finished": target}


def test_a_driver_clock_ten_minutes_ahead_resends_no_game(grid):
    target = 6
    grid.lease_seconds = 4.0  # far below the offset: the driver would take every lease by its clock
    grid.obook("db", "upgrade")
    for _ in range(2):
        grid.start_worker()
    # A lease that ends before any worker has started is rightly sent again: start the clock with them.
    wait_until(lambda: grid.sql("SELECT count(*) FROM workers")[0][0] >= 2, 180, what="both workers to announce")
    grid.start_driver("clock", target, *SLOWER_OPTIONS, env={"OBOOK_TEST_CLOCK_OFFSET": "600"})
    wait_until(lambda: grid.driver.poll() is not None, 240, what="the build to end")
    assert grid.driver.returncode == 0, grid.logs_text()[-4000:]
    sent, created = sent_and_created(grid)
    assert created == target
    assert sent == created, f"{sent - created} games resent:\n{grid.logs_text()[-3000:]}"  # each sent once
    assert "lease lost" not in grid.logs_text() and "changed by another player" not in grid.logs_text()
    lost = grid.check_build("clock", target, max_lost=0)
    print(f"\nclock +600 s on the driver: {created} games created, {sent} sends, {lost} searches lost")


@pytest.mark.parametrize("offset", [600, -600])
def test_a_worker_clock_ten_minutes_off_resends_no_game(grid, offset):
    """Slices of 0.02 s: every game passes through many tokens made by both workers, one of whose
    clocks is 10 minutes off (its tokens look 10 minutes old, or come from the future)."""
    target = 6
    grid.slice_seconds = 0.02
    grid.start_worker(OBOOK_TEST_CLOCK_OFFSET=str(offset))
    grid.start_worker()
    # A token that expires before any worker has loaded the engine is rightly sent again (CI saw it
    # on a slow machine): start the driver once both workers are up, as the test above does.
    wait_until(lambda: grid.sql("SELECT count(*) FROM workers")[0][0] >= 2, 180, what="both workers to announce")
    grid.start_driver("wclock", target, *TOKEN_OPTIONS)
    wait_until(lambda: grid.driver.poll() is not None, 240, what="the build to end")
    log = grid.logs_text()
    assert grid.driver.returncode == 0, log[-4000:]
    handed_on = len(re.findall(r"'handed-on'", (grid.logs / "worker1.log").read_text(errors="replace")))
    assert handed_on >= 5, log[-3000:]  # the worker with the clock off made tokens
    sent, created = sent_and_created(grid)
    assert created == target
    assert sent == created, f"{sent - created} games resent:\n{log[-3000:]}"
    assert "lease lost" not in log and "changed by another player" not in log
    lost = grid.check_build("wclock", target, max_lost=0)
    print(f"\nclock {offset:+d} s on one worker: {handed_on} of its slices handed on, {created} games, "
          f"{sent} sends, {lost} searches lost")
