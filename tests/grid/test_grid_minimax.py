"""A minimax book on the grid (issue 16): expansions sent as tasks to real ``obook worker``
processes over this machine's Redis and PostgreSQL, workers SIGKILLed while they search and the
broker restarted. The build ends with exactly its target of expansions done, none pending, and
every backed-up value as ``obook verify`` recomputes it."""

from __future__ import annotations

import random
import time

from obook.book.budget import DEFAULT_PLAY_BUDGET, parse_play_budget
from tests.grid.gridharness import restart_redis, wait_until
from tests.grid.test_grid_faults import grid, redis_ready, wait_for_driver  # noqa: F401 - fixtures

MINIMAX = ("--algorithm", "minimax", "--size", "5", "--komi", "0.5", "--search", "playouts=3000",
           "--seconds-per-move", "0")


def expansions(grid, book: str) -> dict[str, int]:
    rows = grid.sql("SELECT e.status, count(*) FROM expansions e JOIN books b ON b.id = e.book_id "
                    "WHERE b.name = :book GROUP BY e.status", book=book)
    return {status: n for status, n in rows}


def check(grid, book: str, target: int) -> None:
    counts = expansions(grid, book)
    assert counts.get("done", 0) == target and counts.get("pending", 0) == 0, counts
    verify = grid.obook("verify", "--book", book)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert "every backed-up value matches the stored searches" in verify.stdout
    nodes, edges = grid.sql("SELECT (SELECT count(*) FROM minimax_nodes), (SELECT count(*) FROM minimax_edges)")[0]
    assert target - 2 <= edges <= target  # an expansion adds one edge (none when only a pass is left)
    assert nodes <= edges + 1


def test_minimax_book_with_preempted_workers_and_a_broker_restart(grid):
    target = 24
    for _ in range(2):
        grid.start_worker()
    grid.start_driver("mmgrid", target, *MINIMAX)
    wait_until(lambda: expansions(grid, "mmgrid").get("done", 0) >= 2, 240, what="a first expansion")
    rng = random.Random(3)
    kills = 0
    for threshold in (5, 9, 13):
        while expansions(grid, "mmgrid").get("done", 0) < threshold and grid.driver.poll() is None:
            time.sleep(0.1)
        deadline = time.monotonic() + 30
        while not (busy := grid.playing_workers()) and time.monotonic() < deadline:  # game_id: the expansion
            time.sleep(0.05)
        if not busy:
            break
        victim = rng.choice(busy)
        grid.kill(victim)
        victim.wait(10)
        kills += 1
        grid.start_worker()
    while expansions(grid, "mmgrid").get("done", 0) < 16 and grid.driver.poll() is None:
        time.sleep(0.1)
    restart_redis()
    wait_for_driver(grid, 400)
    assert kills >= 2
    check(grid, "mmgrid", target)


def test_the_driver_makes_a_new_book_as_obook_build_does(grid):
    """``obook grid run`` without ``--algorithm`` makes a minimax book for the play budget ``--for``
    names (P playouts a move, each node a search of 30 x P), as ``obook build`` does; an MVBM book
    given ``--for`` is an error naming it. (No worker: the driver gives up after a second.)"""
    ran = grid.obook("grid", "run", "--book", "bybudget", "--target", "3", "--size", "5", "--komi", "0.5",
                     "--for", "200", "--max-seconds", "1")
    assert ran.returncode == 1, ran.stderr[-2000:]
    [(algorithm, search, play_playouts)] = grid.sql("SELECT algorithm, search, play_playouts FROM books "
                                                    "WHERE name = 'bybudget'")
    assert algorithm == "minimax" and "playouts=6000" in search and play_playouts == 200
    refused = grid.obook("grid", "run", "--book", "selfplay", "--target", "3", "--algorithm", "mvbm", "--for", "0.25s")
    assert refused.returncode == 2 and "--for is the play budget of a minimax book" in refused.stderr
    assert "Traceback" not in refused.stderr
    # compose's variables left empty (docker-compose.yml's driver): as if not given
    empty = grid.obook("grid", "run", "--book", "selfplay", "--target", "3", "--size", "5", "--algorithm", "mvbm",
                       "--for", "", "--seconds-per-move", "", "--search", "", "--max-seconds", "1")
    assert empty.returncode == 1, empty.stderr[-2000:]
    assert grid.sql("SELECT algorithm, seconds_per_move FROM books WHERE name = 'selfplay'") == [("mvbm", 1.0)]
    # OBOOK_ALGORITHM left empty: the default algorithm, as without --algorithm; a wrong name is refused
    default = grid.obook("grid", "run", "--book", "emptyalgorithm", "--target", "3", "--size", "5", "--komi", "0.5",
                         "--algorithm", "", "--for", "200", "--max-seconds", "1")
    assert default.returncode == 1, default.stderr[-2000:]
    assert grid.sql("SELECT algorithm FROM books WHERE name = 'emptyalgorithm'") == [("minimax",)]
    # both left empty, compose's defaults: a minimax book for the default play budget (0.25 s a move)
    unset = grid.obook("grid", "run", "--book", "emptybudget", "--target", "3", "--size", "5", "--komi", "0.5",
                       "--algorithm", "", "--for", "", "--max-seconds", "1")
    assert unset.returncode == 1, unset.stderr[-2000:]
    [(algorithm, search, play_playouts)] = grid.sql("SELECT algorithm, search, play_playouts FROM books "
                                                    "WHERE name = 'emptybudget'")
    budget = parse_play_budget(DEFAULT_PLAY_BUDGET)
    assert algorithm == "minimax" and play_playouts == budget.play_playouts
    assert f"playouts={budget.search_playouts}" in search
    wrong = grid.obook("grid", "run", "--book", "wrong", "--target", "3", "--algorithm", "mvmb")
    assert wrong.returncode == 2 and "invalid choice: 'mvmb'" in wrong.stderr
