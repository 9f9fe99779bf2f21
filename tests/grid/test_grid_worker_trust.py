"""Issue 33, item 3 on the grid, with real ``obook worker`` and ``obook grid run`` processes over
this machine's PostgreSQL and Redis: a worker that fails every unit it takes (the test hook
``OBOOK_TEST_FAIL_ALL``), beside a good one. Its failures are charged to it: after
``OBOOK_QUARANTINE_FAILURES`` in a row it quarantines itself (says why in its log, takes no more
work, its health check fails), the units it failed back off and go to the good worker, and none is
set aside (a unit is set aside only after failing on two different workers). The build reaches its
target. Before issue 33: target 10 -> 2 games finished, 8 set aside, and the build "ended". Games
and expansions alike."""

from __future__ import annotations

import pytest

from tests.grid.gridharness import wait_until
from tests.grid.test_grid_faults import BOOK_OPTIONS, grid, redis_ready  # noqa: F401 - fixtures
from tests.grid.test_grid_minimax import check as check_minimax
from tests.grid.test_grid_minimax import expansions

MINIMAX = ("--algorithm", "minimax", "--size", "5", "--komi", "0.5", "--search", "playouts=300",
           "--seconds-per-move", "0")
TRUST = {"OBOOK_QUARANTINE_FAILURES": "3", "OBOOK_RETRY_SECONDS": "1"}


@pytest.mark.parametrize("unit", ["game", "expansion"])
def test_a_worker_that_fails_everything_beside_a_good_one(grid, unit):
    target = 10
    book = f"trust_{unit}"
    bad = grid.start_worker(OBOOK_TEST_FAIL_ALL="1", **TRUST)
    grid.start_driver(book, target, *(BOOK_OPTIONS if unit == "game" else MINIMAX), env=TRUST)
    # the bad worker alone first, so that it takes units (and fails them) before the good one starts
    wait_until(lambda: grid.sql("SELECT coalesce(sum(failures), 0) FROM worker_records")[0][0] >= 1, 240,
               what="the bad worker's first failure")
    grid.start_worker(**TRUST)
    wait_until(lambda: grid.driver.poll() is not None, 400, what="the build to end")
    log = grid.logs_text()
    assert grid.driver.returncode == 0, log[-4000:]
    if unit == "game":
        assert grid.counts(book) == {"finished": target}
        grid.check_build(book, target, max_lost=0)
        failed = grid.sql("SELECT coalesce(sum(failures), 0), count(*) FILTER (WHERE failures > 0) FROM games")[0]
    else:
        assert expansions(grid, book) == {"done": target}
        check_minimax(grid, book, target)
        failed = grid.sql("SELECT coalesce(sum(failures), 0), count(*) FILTER (WHERE failures > 0) FROM expansions")[0]
    records = {r[0]: r[1:] for r in grid.sql(
        "SELECT id, units_done, failures, failures_in_row, quarantined_at IS NOT NULL, quarantine_reason "
        "FROM worker_records")}
    (bad_id,) = [i for i, r in records.items() if r[1] > 0]
    (good_id,) = [i for i, r in records.items() if r[1] == 0]
    assert records[bad_id][:4] == (0, 3, 3, True), records
    assert "3 units failed in a row (OBOOK_QUARANTINE_FAILURES=3)" in records[bad_id][4]
    assert records[good_id][0] == target and not records[good_id][3]
    assert f"worker {bad_id} is quarantined and takes no more work" in (grid.logs / "worker1.log").read_text()
    assert bad.poll() is None  # alive, quarantined: it says so, its health check fails
    health = grid.obook("grid", "health", "--worker", bad_id)
    assert health.returncode == 1 and "QUARANTINED" in health.stdout, health.stdout + health.stderr
    assert grid.obook("grid", "health", "--worker", good_id).returncode == 0
    done_by = "finished_by" if unit == "game" else "done_by"
    table = "games" if unit == "game" else "expansions"
    assert grid.sql(f"SELECT DISTINCT {done_by} FROM {table} WHERE status IN ('finished', 'done')") == [(good_id,)]
    if unit == "game":  # every slice of moves is the good worker's: the bad one failed before writing any
        assert grid.sql("SELECT DISTINCT worker_id FROM game_slices") == [(good_id,)]
    else:
        assert grid.sql("SELECT DISTINCT searched_by FROM minimax_nodes") == [(good_id,)]
    print(f"\n{unit}s: a worker failing every unit beside a good one, target {target}: {target} done, 0 set aside; "
          f"the bad worker failed {records[bad_id][1]} units ({failed[0]} failures on {failed[1]} units), "
          f"then quarantined itself")
