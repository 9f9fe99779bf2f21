"""Issue 33, item 4: what a build reported done survives a crash of the PostgreSQL server at once
after (``pg_ctlcluster ... stop -m immediate``: no checkpoint, the server recovers from its WAL at
the next start), on the tests' own cluster (``restartable_postgres``). An embedded build of each
kind of book, and a grid build (whose workers commit their moves without waiting for the disk) once
its driver exits 0: every game or expansion it counted is still there, and ``obook verify`` is clean."""

from __future__ import annotations

import pytest

from tests.book.test_book_cli import counts, obook
from tests.book.test_build_faults import sql
from tests.book.test_kill_points import expansion_counts
from tests.conftest import fresh_postgres_database
from tests.grid.test_grid_faults import grid_over, redis_ready, wait_for_driver  # noqa: F401 - fixture

BOOKS = {
    # a few fast games of 5x5
    "statistical": (6, ("--algorithm", "mvbm", "--size", "5", "--search", "playouts=50", "--seconds-per-move", "0",
                        "--depth", "8")),
    # a few expansions with tiny searches
    "minimax": (6, ("--algorithm", "minimax", "--size", "5", "--search", "playouts=50", "--play-playouts", "20",
                    "--seconds-per-move", "0")),
}


def done_units(url: str, kind: str) -> int:
    return counts(url, "c").get("finished", 0) if kind == "statistical" else expansion_counts(url, "c").get("done", 0)


@pytest.mark.parametrize("kind", BOOKS)
def test_what_a_build_reported_done_survives_an_immediate_stop(restartable_postgres, compiled_engine, kind):
    target, options = BOOKS[kind]
    with fresh_postgres_database(restartable_postgres.url, "obook_crash") as url:
        obook("db", "upgrade", "--db", url)
        built = obook("build", "--db", url, "--book", "c", "--games", str(target), "--workers", "2", "--quiet",
                      *options)
        assert built.returncode == 0, built.stderr[-3000:]
        before = done_units(url, kind)  # what the server answers before the crash: it may be in memory only
        started = restartable_postgres.started_at()
        restartable_postgres.crash()
        assert restartable_postgres.started_at() > started
        after = done_units(url, kind)
        assert before == after == target, (before, after, built.stdout[-2000:])
        verified = obook("verify", "--db", url, "--book", "c").stdout
        assert ("statistics match the games" if kind == "statistical" else "every backed-up value matches") in verified
        if kind == "statistical":  # every finished game's statistics are there: each game counted once
            assert sql(url, "SELECT count(*) FROM games WHERE status = 'finished'")[0][0] == target


@pytest.fixture
def crash_grid(redis_ready, restartable_postgres, tmp_path):  # noqa: F811 - redis_ready is the fixture
    yield from grid_over(restartable_postgres.url, tmp_path)


def test_what_the_grid_driver_reported_done_survives_an_immediate_stop(crash_grid, restartable_postgres):
    grid, target = crash_grid, 6
    grid.start_worker(concurrency=2)
    grid.start_driver("c", target, *BOOKS["statistical"][1])
    wait_for_driver(grid, 240)  # exit 0: target reached, confirmed on disk (Store.confirm_durable)
    grid.stop_all()
    before = grid.finished("c")
    started = restartable_postgres.started_at()
    restartable_postgres.crash()
    assert restartable_postgres.started_at() > started
    assert before == grid.finished("c") == target
    grid.check_build("c", target, max_lost=0)
