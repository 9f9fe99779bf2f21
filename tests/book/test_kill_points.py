"""Kills at chosen points (issue 19, "Prove it"): ``OBOOK_TEST_KILL_AT=POINT:N`` makes a process
SIGKILL itself the N-th time it passes POINT. Each point of the embedded build is tried (both
workers die there), then the next build completes exactly its target, nothing counted twice, at
most one search repeated per kill, ``verify`` clean; a repair killed inside its transaction leaves
the statistics as they were; a grid slice killed between handing its lease to a token and
publishing the message leaves a game the driver sends again."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from sqlalchemy import create_engine, select, text, update

from obook.book.library import ensure_book, open_book_store
from obook.book.verification import verify
from obook.book.selfplay import SelfPlayer, start_games
from obook.grid.driver import Driver, DriverPlan
from obook.grid.slices import FINISHED, HANDED_ON, new_token, play_slice
from obook.store.books import get_book
from obook.store.db import forget_stores
from obook.store.games import get_game
from tests.helpers import claim_game
from obook.store.stats import STATS
from tests.book.test_book_cli import counts, obook
from tests.book.test_build_faults import BUILD
from tests.grid.test_grid_driver import RANDOM_BOOK, Outbox

POINTS = [("after_append", 3), ("before_finish_commit", 2), ("after_finish_commit", 2)]


def searches_repeated(url: str) -> int:
    """Searches counted (``games.searches``) beyond the mutation moves stored and the resignations."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT searches, origins, result FROM games")).all()
    finally:
        engine.dispose()
    return sum(s - o.count("m") - (1 if (r or "").endswith("+R") else 0) for s, o, r in rows)


def test_kills_at_each_point_of_the_embedded_build_then_a_killed_repair(store_url, compiled_engine):
    url = store_url
    target, kills, figures = 0, 0, []
    build = ["build", "--db", url, "--book", "k", "--workers", "2", "--quiet", *BUILD]
    for point, n in POINTS:
        target += 8
        killed = obook(*build, "--games", str(target), check=False,
                       env={**os.environ, "OBOOK_TEST_KILL_AT": f"{point}:{n}", "OBOOK_LEASE_SECONDS": "10"})
        died = len(re.findall(r"-9\b", killed.stderr.split("exit codes")[-1])) if killed.returncode else 0
        assert killed.returncode == 0 or died, killed.stderr[-2000:]
        kills += died
        obook(*build, "--games", str(target))  # the next build resumes and completes the target
        assert counts(url, "k") == {"finished": target}
        assert "statistics match the games" in obook("verify", "--db", url, "--book", "k").stdout
        figures.append(f"{point}:{n} {died} kills")
    repeated = searches_repeated(url)
    print(f"\n{target} games, {kills} kills ({', '.join(figures)}), {repeated} searches repeated")
    assert kills >= 4  # both workers died at least at two of the points
    assert 0 <= repeated <= kills

    forget_stores()
    store = open_book_store(url)
    with store.write() as conn:  # spoil one row, then kill the repair inside its transaction
        book = get_book(conn, "k")
        key, move = conn.execute(select(STATS.c.position_key, STATS.c.move).where(STATS.c.book_id == book.id)
                                 .limit(1)).one()
        conn.execute(update(STATS).where(STATS.c.book_id == book.id, STATS.c.position_key == key,
                                         STATS.c.move == move).values(games=STATS.c.games + 1))
    repair = obook("verify", "--db", url, "--book", "k", "--repair", check=False,
                   env={**os.environ, "OBOOK_TEST_KILL_AT": "repair:1"})
    assert repair.returncode == -9
    assert "1 wrong or missing rows, 0 extra rows" in obook("verify", "--db", url, "--book", "k", check=False).stdout
    obook("verify", "--db", url, "--book", "k", "--repair", check=False)
    assert "statistics match the games" in obook("verify", "--db", url, "--book", "k").stdout


def expansion_counts(url: str, book: str) -> dict[str, int]:
    from tests.book.test_build_faults import expansion_counts as tally

    return tally(url, book)


def test_kills_at_each_point_of_an_expansion_build(store_url, compiled_engine):
    """The same for a minimax book's expansions: both workers killed with a result staged and not
    applied, inside an apply (written, not committed) and right after it; the next build completes exactly its target, each
    expansion done once, and every stored bound is the back-up of the stored searches."""
    from tests.book.test_build_faults import MINIMAX_BUILD

    url = store_url
    target, kills = 0, 0
    build = ["build", "--db", url, "--book", "e", "--workers", "2", "--quiet", *MINIMAX_BUILD]
    for point, n in [("after_stage", 2), ("before_finish_commit", 2), ("after_finish_commit", 2)]:
        target += 6
        killed = obook(*build, "--games", str(target), check=False,
                       env={**os.environ, "OBOOK_TEST_KILL_AT": f"{point}:{n}", "OBOOK_LEASE_SECONDS": "10"})
        died = len(re.findall(r"-9\b", killed.stderr.split("exit codes")[-1])) if killed.returncode else 0
        assert killed.returncode == 0 or died, killed.stderr[-2000:]
        kills += died
        obook(*build, "--games", str(target))
        assert expansion_counts(url, "e") == {"done": target}
        verify = obook("verify", "--db", url, "--book", "e")
        assert "every backed-up value matches the stored searches" in verify.stdout, verify.stdout
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            repeated = conn.execute(text("SELECT coalesce(sum(attempts - 1), 0) FROM expansions")).scalar_one()
    finally:
        engine.dispose()
    print(f"\n{target} expansions, {kills} kills, {repeated} expansions repeated")
    assert kills >= 2
    assert 0 <= repeated <= kills  # a kill loses at most the expansion it was running


SLICE = """
import sys
from obook.book.library import open_book_store
from obook.book.selfplay import SelfPlayer
from obook.grid.slices import play_slice
from obook.store.books import get_book
url, game_id, token = sys.argv[1], int(sys.argv[2]), sys.argv[3]
store = open_book_store(url)
with store.read() as conn:
    book = get_book(conn, "h")
player = SelfPlayer(store, book, owner="h:1:celery:killed", kind="celery")
print(play_slice(player, game_id, token, 0.0, lambda g, t: print("sent", g, t)))
"""


def test_a_slice_killed_between_handing_its_lease_on_and_publishing(store):
    book = ensure_book(store, "h", RANDOM_BOOK)
    [game_id] = start_games(store, book, target=1)
    token = new_token()
    with store.write() as conn:
        assert claim_game(conn, book.id, token, 60, game_id) is not None
    died = subprocess.run([sys.executable, "-c", SLICE, store.url, str(game_id), token], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "OBOOK_TEST_KILL_AT": "after_hand_on:1"})
    assert died.returncode == -9 and "sent" not in died.stdout, died.stderr[-2000:]
    with store.read() as conn:
        game = get_game(conn, game_id)
    assert game.n_moves == 1 and game.lease_owner.startswith("q:") and game.lease_owner != token  # a lost message
    outbox = Outbox()
    driver = Driver(store, DriverPlan(book="h", target=1, stale_token_seconds=0.0), send=outbox, pending=lambda: "")
    assert driver.step().sent == [game_id]  # the broker has no message with that token: sent again
    player = SelfPlayer(store, book, owner="h:2:celery:alive", kind="celery")
    results = []
    while not results or results[-1] != FINISHED:
        results.append(play_slice(player, *outbox.sent[-1], 0.0, outbox))
        assert results[-1] in (HANDED_ON, FINISHED)
    assert driver.run(max_seconds=10).done
    assert verify(store, book).clean
