"""The store and self-play of one individual, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time

import pytest
from sgfmill import sgf

from obook.book.keys import opening_record, opening_statistics
from obook.book.kinds import book_kind
from obook.book.library import BookSettings, ensure_book, lookup, open_book_store
from obook.book.verification import verify
from obook.book.selfplay import SelfPlayer
from obook.errors import ObookError
from sqlalchemy import update
from obook.store.books import find_book
from obook.store.db import StoreError, forget_stores
from obook.store.games import append_move, finish_game, get_game, insert_finished_game, top_up_games
from tests.helpers import claim_game
from obook.store.leases import LeaseLost
from obook.store.models import FINISHED
from obook.store.stats import STATS, all_stats

FAST = "playouts=64,resign_threshold=0"


def new_book(store, name="b", size=7, algorithm="mvbm", depth=10, search=FAST):
    return ensure_book(store, name, BookSettings(size=size, komi=7.5, algorithm=algorithm, depth=depth, search=search,
                                                 seconds_per_move=0))


def add_game(store, book, moves, winner):
    stats = opening_statistics(book.size, book.komi, book.superko, moves, winner, book.depth)
    with store.write() as conn:
        return insert_finished_game(conn, book.id, moves, "s" * len(moves), f"{winner}+1", winner, None, "seed",
                                      None, stats)


def test_schema_is_created_and_checked(empty_store_url):
    with pytest.raises(StoreError, match="no obook schema|no book database at .*: the file does not exist"):
        open_book_store(empty_store_url)
    from obook.store.migrate import head_revision

    store = open_book_store(empty_store_url, create=True)
    assert store.revision() == head_revision()


def test_an_older_schema_is_refused_and_nothing_written(empty_store_url):
    from obook.store.migrate import upgrade

    upgrade(empty_store_url, "0001")
    forget_stores()
    from obook.store.migrate import head_revision

    with pytest.raises(StoreError, match=f"revision 0001, this obook needs {head_revision()}"):
        open_book_store(empty_store_url, create=True)
    store = open_book_store.__globals__["open_store"](empty_store_url, check=False)
    assert store.revision() == "0001"


def test_book_settings_are_kept_and_checked(store):
    book = new_book(store)
    assert (book.threshold, book.algorithm, book.size) == (0.1, "mvbm", 7)
    assert ensure_book(store, "b", BookSettings(size=7, algorithm="mvbm"), explicit={"size"}).id == book.id
    with pytest.raises(ObookError, match="size=7, not 9"):
        ensure_book(store, "b", BookSettings(size=9, algorithm="mvbm"), explicit={"size"})
    mbm = ensure_book(store, "m", BookSettings(size=9, algorithm="mbm"))
    assert mbm.threshold == 0.5
    with pytest.raises(ObookError, match="book name"):
        ensure_book(store, "bad name", BookSettings())
    for name in ("a/b", "a?b", "50%", "a#b", "tab\x01"):  # unreachable by the service's URLs (issue 33)
        with pytest.raises(ObookError, match="path segment"):
            ensure_book(store, name, BookSettings())
    with store.read() as conn:
        assert find_book(conn, "a/b") is None


def test_lookup_merges_symmetries_and_translates_back(store):
    book = new_book(store, size=9)
    add_game(store, book, ["C3", "D7", "E5"], "B")
    add_game(store, book, ["G7", "F3", "E5"], "W")
    add_game(store, book, ["C7", "D3"], "W")
    root = lookup(store, book, "")
    assert len(root.candidates) == 1  # C3, G7 and C7 are one move of the empty board
    first = root.candidates[0]
    assert (first.games, first.wins) == (3, 1)
    after = lookup(store, book, "G7")
    answers = {c.vertex: (c.games, c.wins) for c in after.candidates}
    # D7 after C3, F3 after G7 and D3 after C7 are one answer
    assert len(answers) == 1 and list(answers.values()) == [(3, 2)]
    assert set(answers) <= {"F3", "C6"}
    assert after.usage is not None and after.usage.vertex in answers
    assert lookup(store, book, "E5").in_book is False
    with pytest.raises(ObookError, match="move 2"):
        lookup(store, book, "E5 E5")


def test_claims_are_exclusive_and_leases_expire(store):
    book = new_book(store)
    add_game(store, book, ["D4", "C3"], "B")  # a seed game does not count toward the self-play target
    with store.write() as conn:
        ids = top_up_games(conn, book.id, 2, [11, 12, 13])
    assert len(ids) == 2
    with store.write() as conn:
        assert top_up_games(conn, book.id, 2, [14]) == []
        a = claim_game(conn, book.id, "a", 0.5)
        b = claim_game(conn, book.id, "b", 0.5)
        assert claim_game(conn, book.id, "c", 0.5) is None
    assert {a.id, b.id} == set(ids)
    time.sleep(0.7)
    with store.write() as conn:
        c = claim_game(conn, book.id, "c", 30)
    assert c is not None
    with store.write() as conn:
        assert append_move(conn, c, "a", "D4", "m", 30) is None  # not a's any more
        stored = append_move(conn, c, "c", "D4", "m", 30)
        assert stored is not None and stored.moves == ("D4",)
        assert append_move(conn, c, "c", "E5", "m", 30) is None  # stale: the game has a move now


def test_a_game_is_finished_and_counted_once(store):
    book = new_book(store)
    with store.write() as conn:
        (game_id,) = top_up_games(conn, book.id, 1, [5])
        game = claim_game(conn, book.id, "me", 60)
        for vertex in ("D4", "C3", "E5"):
            game = append_move(conn, game, "me", vertex, "m", 60)
    stats, scores = opening_record(book.size, book.komi, False, game.moves, "B", 3.0, book.depth)
    outcomes = []

    def finish():
        with store.write() as conn:
            outcomes.append(finish_game(conn, game, "me", "B+3", "B", 3.0, stats, scores=scores))

    threads = [threading.Thread(target=finish) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == [False, False, False, True]
    with store.read() as conn:
        assert get_game(conn, game_id).status == FINISHED
        assert sum(g for g, _, _ in all_stats(conn, book.id).values()) == 3
    assert verify(store, book).clean


def test_selfplay_resumes_after_an_interruption(store):
    book = new_book(store)
    with store.write() as conn:
        (game_id,) = top_up_games(conn, book.id, 1, [2024])
    first = SelfPlayer(store, book, owner="first", lease_seconds=0.5)
    held = first.claim()
    for _ in range(5):
        assert not first.advance(held)
    game = held.game
    # "first" dies here; nobody else may play the game until its lease runs out
    second = SelfPlayer(store, book, owner="second", lease_seconds=30)
    assert second.claim() is None
    time.sleep(0.7)
    resumed = second.claim()
    assert resumed.game.id == game_id and resumed.game.moves == game.moves and resumed.position is None
    with pytest.raises(LeaseLost):
        first.advance(held)
    assert held.game == game and held.position is None  # a failed move leaves nothing to reuse
    assert second.play(resumed)
    with store.read() as conn:
        done = get_game(conn, game_id)
    assert done.status == FINISHED and done.moves[:5] == game.moves and done.winner in ("B", "W")
    assert verify(store, book).clean


def test_the_same_seed_replays_the_same_moves(store):
    book = new_book(store)
    with store.write() as conn:
        ids = top_up_games(conn, book.id, 2, [77, 77])
    player = SelfPlayer(store, book, owner="p", lease_seconds=30)
    games = []
    for game_id in ids:
        held = player.claim(game_id)
        player.player.new_game()
        for _ in range(6):
            finished = player.advance(held)
            if finished:
                break
        games.append(held.game.moves)
        if not finished:
            player.release(held)
    assert len(games[0]) >= 3
    assert games[0] == games[1]


@pytest.mark.parametrize("algorithm, white_origin", [("mbm", "m"), ("mvbm", "b")])
def test_book_moves_follow_the_threshold(store, algorithm, white_origin):
    book = new_book(store, algorithm=algorithm, size=9)
    for _ in range(3):
        add_game(store, book, ["E5", "C5"], "B")
    add_game(store, book, ["E5", "G5"], "W")  # G5 is C5 mirrored: White's answer won 1 of 4
    with store.write() as conn:
        top_up_games(conn, book.id, 10, [1])
    player = SelfPlayer(store, book, owner="p", lease_seconds=30)
    held = player.claim()
    player.advance(held)
    assert held.game.moves == ("E5",) and held.game.origins == "b"  # 75% beats both thresholds
    player.advance(held)
    assert held.game.origins == "b" + white_origin  # 25%: MBM mutates, MVBM plays it
    if white_origin == "b":
        assert held.game.moves[1] in ("C5", "G5", "E3", "E7")


def test_verify_finds_and_repairs_tampering(store):
    book = new_book(store)
    add_game(store, book, ["D4", "C3", "E5"], "W")
    assert verify(store, book).clean
    with store.write() as conn:
        conn.execute(update(STATS).where(STATS.c.book_id == book.id).values(wins=STATS.c.wins + 1))
    result = verify(store, book)
    assert not result.clean and len(result.missing) == 3
    verify(store, book, repair=True)
    assert verify(store, book).clean


def test_export_is_a_game_tree_sgfmill_reads(store):
    book = new_book(store, size=9)
    add_game(store, book, ["E5", "C5", "G5"], "B")
    add_game(store, book, ["E5", "C5", "D3"], "W")
    add_game(store, book, ["E5", "G3"], "B")
    data, nodes = book_kind(book).export(store, book)
    game = sgf.Sgf_game.from_bytes(data)
    root = game.get_root()
    (first,) = root
    assert first.get_move() == ("b", (4, 4))
    assert "games 3, wins 2" in first.get("C")
    assert first.get_raw("SBKV") == b"66.7"
    replies = [child.get_move()[1] for child in first]
    assert len(replies) == 2 and len(first[0]) == 2  # the most played reply first, with its two answers
    assert nodes == 5
    _, filtered = book_kind(book).export(store, book, min_games=2)
    assert filtered == 2
