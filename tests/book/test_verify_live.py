"""Issue 19 item 1: ``obook verify`` and ``verify --repair`` on a book that an ``obook build`` is
finishing games of (two processes, 5x5 games of milliseconds: a finish every few milliseconds).

Plain verify compares one snapshot, so it never reports a difference that the build's finishes
made between its reads; a repair that finds something to replace recounts and replaces while
finishes wait (or counts the games that finished since its snapshot), so no finish is lost. Each
repair here has something to replace: the test spoils one statistics row before it."""

from __future__ import annotations

import subprocess
import sys
import time

from sqlalchemy import select, update

from obook.book.library import open_book_store
from obook.book.verification import recompute_stats, verify
from obook.store.books import get_book, lock_book
from obook.store.db import forget_stores
from obook.store.stats import STATS, all_stats
from tests.book.test_book_cli import counts, obook
from tests.book.test_build_faults import BUILD, finished


def _spoil_one_row(store, book_id: int) -> None:
    with store.write() as conn:
        key, move = conn.execute(select(STATS.c.position_key, STATS.c.move).where(STATS.c.book_id == book_id)
                                 .order_by(STATS.c.position_key, STATS.c.move).limit(1)).one()
        conn.execute(update(STATS).where(STATS.c.book_id == book_id, STATS.c.position_key == key, STATS.c.move == move)
                     .values(games=STATS.c.games + 1000))


def test_verify_and_repair_while_a_build_finishes_games(store_url, compiled_engine):
    target = 120
    build = subprocess.Popen([sys.executable, "-m", "obook.cli", "build", "--db", store_url, "--book", "live",
                              "--games", str(target), "--workers", "2", "--quiet", *BUILD],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    false_alarms = repairs = 0
    finishes_during_repairs = 0
    try:
        deadline = time.time() + 240
        while finished(store_url, "live") < 5 and build.poll() is None and time.time() < deadline:
            time.sleep(0.1)
        forget_stores()
        store = open_book_store(store_url)
        with store.read() as conn:
            book = get_book(conn, "live")
        while build.poll() is None and finished(store_url, "live") < target - 20:  # the last 20: no repair after
            plain = verify(store, book)
            false_alarms += not plain.clean
            _spoil_one_row(store, book.id)
            before = finished(store_url, "live")
            verify(store, book, repair=True)
            finishes_during_repairs += finished(store_url, "live") - before
            repairs += 1
        out, err = build.communicate(timeout=300)
    finally:
        if build.poll() is None:
            build.kill()
    assert build.returncode == 0, err[-3000:]
    assert counts(store_url, "live") == {"finished": target}
    forget_stores()
    store = open_book_store(store_url)
    expected, games, bad = recompute_stats(store, book)
    with store.read() as conn:
        stored = all_stats(conn, book.id)
    wrong = sum(1 for k in expected.keys() | stored.keys() if expected.get(k) != stored.get(k))
    print(f"\n{repairs} repairs and {repairs} plain verifies during the build, {finishes_during_repairs} games "
          f"finished during the repairs; {false_alarms} false differences, {wrong} statistics rows wrong after")
    assert repairs >= 3 and finishes_during_repairs > 0, "the build ended before the repairs raced it"
    assert games == target and not bad
    assert false_alarms == 0
    assert wrong == 0
    assert "statistics match the games" in obook("verify", "--db", store_url, "--book", "live").stdout


def test_verify_and_repair_while_a_build_expands_a_minimax_book(store_url, compiled_engine):
    """The same for expansions: a plain verify of a minimax book reads one snapshot under the
    book's lock, so it never reports a bound an expansion's commit was changing; a repair of a
    spoilt bound writes the back-up of the snapshot, which no commit can interleave with."""
    from sqlalchemy import update as sql_update

    from obook.book.verification import verify_minimax
    from obook.store.minimax import NODES
    from tests.book.test_build_faults import MINIMAX_BUILD
    from tests.book.test_kill_points import expansion_counts

    target = 80  # tiny searches: a longer build leaves the verifies time to race it (40 gave 2 on a fast day)
    build = subprocess.Popen([sys.executable, "-m", "obook.cli", "build", "--db", store_url, "--book", "mlive",
                              "--games", str(target), "--workers", "2", "--quiet", *MINIMAX_BUILD],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    checks = false_alarms = repaired = 0
    try:
        deadline = time.time() + 240
        while expansion_counts(store_url, "mlive").get("done", 0) < 3 and build.poll() is None \
                and time.time() < deadline:
            time.sleep(0.1)
        forget_stores()
        store = open_book_store(store_url)
        with store.read() as conn:
            book = get_book(conn, "mlive")
        while build.poll() is None and expansion_counts(store_url, "mlive").get("done", 0) < target - 5:
            false_alarms += not verify_minimax(store, book).clean
            with store.write() as conn:  # under the book's lock, as every writer of bounds: no deadlock with a commit
                lock_book(conn, book.id)
                conn.execute(sql_update(NODES).where(NODES.c.book_id == book.id).values(ucb=NODES.c.ucb + 1.0))
            result = verify_minimax(store, book, repair=True)
            repaired += result.repaired and bool(result.differences)
            checks += 1
        out, err = build.communicate(timeout=300)
    finally:
        if build.poll() is None:
            build.kill()
    assert build.returncode == 0, err[-3000:]
    print(f"\n{checks} verifies and repairs during the build, {false_alarms} false differences")
    assert checks >= 3, "the build ended before the verifies raced it"
    assert false_alarms == 0 and repaired >= 1  # (a commit between the spoiling and the repair may mend it first)
    assert expansion_counts(store_url, "mlive") == {"done": target}
    assert "every backed-up value matches the stored searches" in obook("verify", "--db", store_url, "--book",
                                                                         "mlive").stdout
