"""Draws, depth 0, Beta sampling in self-play, and seeding that respects each record's komi and
result, on SQLite and PostgreSQL."""

from __future__ import annotations

import random

import pytest
from sqlalchemy import select, update

from obook.book.keys import UNSCORED, opening_statistics
from obook.book.library import BookSettings, ensure_book, lookup
from obook.book.verification import verify
from obook.book.selfplay import Outcome, SelfPlayer
from obook.book.sgfio import ACCEPT, MOVES_ONLY, KomiMismatch, classify_result, result_score, seed_book
from obook.errors import ObookError
from obook.go.position import Position
from obook.store.games import GAMES, game_counts, insert_finished_game, top_up_games
from obook.store.stats import STATS, all_stats
from tests.helpers import random_game_moves

FAST = "playouts=64,resign_threshold=0"


def new_book(store, name="b", size=9, komi=7.5, algorithm="mvbm", depth=10):
    return ensure_book(store, name, BookSettings(size=size, komi=komi, algorithm=algorithm, depth=depth, search=FAST,
                                                 seconds_per_move=0))


def add_game(store, book, moves, winner, result=None):
    outcome = winner if result != "?" else UNSCORED
    stats = opening_statistics(book.size, book.komi, book.superko, moves, outcome, book.depth)
    result = result or (f"{winner}+1" if winner else "0")
    with store.write() as conn:
        return insert_finished_game(conn, book.id, moves, "s" * len(moves), result, winner, None, "seed", None, stats)


def sgf(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


# ---- draws ------------------------------------------------------------------------------------------


def test_a_draw_is_stored_and_counted_half_for_both(store):
    book = new_book(store, komi=7.0)
    add_game(store, book, ["E5", "C5"], None)  # jigo at komi 7
    add_game(store, book, ["E5", "C5"], "B")
    root = lookup(store, book, "").candidates[0]
    assert (root.games, root.wins, root.draws, root.winrate) == (2, 1, 1, 0.75)
    reply = lookup(store, book, "E5").candidates[0]
    assert (reply.games, reply.wins, reply.draws, reply.winrate) == (2, 0, 1, 0.25)
    assert verify(store, book).clean
    with store.write() as conn:
        conn.execute(update(STATS).where(STATS.c.book_id == book.id).values(draws=0))
    broken = verify(store, book)
    assert len(broken.missing) == 2 and all(value[2] == 1 for _, _, value in broken.missing)
    verify(store, book, repair=True)
    assert verify(store, book).clean


def test_selfplay_counts_a_jigo_as_a_draw(store):
    """A self-play game whose area score is exactly komi is stored as "0" and counted as a draw."""
    book = new_book(store, size=5, komi=0.0, depth=0)
    player = SelfPlayer(store, book, owner="p", lease_seconds=30)
    with store.write() as conn:
        (game_id,) = top_up_games(conn, book.id, 1, [1])
    held = player.claim(game_id)
    for _ in range(2):
        held.game, _ = player.lease.append(held.game, "pass", "m")
    player.finish(held.game, Position.from_moves(["pass", "pass"], size=5, komi=0.0), Outcome("0", None, 0.0))
    with store.read() as conn:
        row = conn.execute(select(GAMES.c.result, GAMES.c.winner).where(GAMES.c.id == game_id)).one()
        assert tuple(row) == ("0", None)
        assert sorted(all_stats(conn, book.id).values()) == [(1, 0, 1), (1, 0, 1)]
    assert verify(store, book).clean


# ---- depth 0 ----------------------------------------------------------------------------------------


def test_depth_zero_keeps_statistics_of_every_move_and_selfplay_consults_them(store):
    book = new_book(store, name="deep", size=7, depth=0)
    assert book.depth == 0
    position = Position(size=7)
    moves = [position.vertex(p) for p in random_game_moves(position, random.Random(4), 40)]
    assert len(moves) == 40
    add_game(store, book, moves, "B")
    with store.read() as conn:
        assert len(all_stats(conn, book.id)) == 40
    late = Position.from_moves(moves[:34], size=7)  # Black to play move 35
    player = SelfPlayer(store, book, owner="p", lease_seconds=30)
    with store.read() as conn:
        from obook.store.stats import rows_reader

        pick = player.book_pick(late, rows_reader(conn, book.id))
    assert pick is not None and pick.vertex == moves[34]  # Black's move of a won game, far past 20 plies
    assert verify(store, book).clean
    with pytest.raises(ObookError, match="0 for no cap"):
        ensure_book(store, "neg", BookSettings(algorithm="mvbm", depth=-1))


# ---- Beta sampling in self-play ---------------------------------------------------------------------


def test_a_beta_book_samples_reproducibly_from_the_game_seed(store):
    book = new_book(store, name="beta", algorithm="beta")
    assert (book.algorithm, book.threshold) == ("beta", 0.0)
    with pytest.raises(ObookError, match="no threshold"):
        ensure_book(store, "beta2", BookSettings(algorithm="beta", threshold=0.1))
    for winner in ("B", "B", "W"):
        add_game(store, book, ["E5", "C5"], winner)
    player = SelfPlayer(store, book, owner="p", lease_seconds=30)
    empty = Position(size=9)
    from obook.store.stats import rows_reader

    with store.read() as conn:
        rows = rows_reader(conn, book.id)
        picks = [player.book_pick(empty, rows, seed) for seed in range(60)]
        again = [player.book_pick(empty, rows, seed) for seed in range(60)]
    assert [p.vertex if p else None for p in picks] == [p.vertex if p else None for p in again]
    played = sum(p is not None for p in picks)
    assert 10 < played < 50  # one move: the new-move arm is that move's twin, about half the time
    with store.write() as conn:
        top_up_games(conn, book.id, 1, [7])
    held = player.claim()
    player.advance(held)
    assert held.game.origins in ("b", "m")


# ---- seeding ----------------------------------------------------------------------------------------


def test_results_are_read_as_the_record_says():
    assert classify_result("B+R") == ("win", "B") and classify_result("W+Resign") == ("win", "W")
    assert classify_result("B+3.5") == ("win", "B") and classify_result("W+") == ("win", "W")
    for draw in ("0", "Draw", "Jigo"):
        assert classify_result(draw) == ("draw", None)
    for not_board in ("B+T", "W+Time", "B+F", "W+Forfeit"):
        assert classify_result(not_board)[0] == "not-board"
    assert classify_result("Void")[0] == classify_result("?")[0] == classify_result("")[0] == "none"
    assert classify_result("B+many")[0] == "unknown"


def test_a_result_at_another_komi_is_refused_with_nothing_written(store, tmp_path):
    book = new_book(store)
    right = sgf(tmp_path, "right.sgf", "(;GM[1]SZ[9]KM[7.5]RE[B+R];B[ee];W[gc])")
    wrong = sgf(tmp_path, "wrong.sgf", "(;GM[1]SZ[9]KM[6.5]RU[Japanese]RE[W+2.5];B[ee];W[ed])")
    with pytest.raises(KomiMismatch) as refused:
        seed_book(store, book, [right, wrong])
    message = str(refused.value)
    assert "wrong.sgf" in message and "komi 6.5" in message and "book komi 7.5" in message
    assert "--moves-only" in message and "--accept-komi" in message
    with store.read() as conn:
        assert game_counts(conn, book.id) == {} and all_stats(conn, book.id) == {}
    no_komi = sgf(tmp_path, "nokm.sgf", "(;GM[1]SZ[9]RE[B+R];B[ee])")
    with pytest.raises(KomiMismatch, match="no komi"):
        seed_book(store, book, [no_komi])


def test_moves_only_keeps_the_moves_without_the_result(store, tmp_path):
    book = new_book(store)
    right = sgf(tmp_path, "right.sgf", "(;GM[1]SZ[9]KM[7.5]RE[B+R];B[ee];W[gc])")
    wrong = sgf(tmp_path, "wrong.sgf", "(;GM[1]SZ[9]KM[6.5]RU[Japanese]RE[W+2.5];B[ee];W[ed])")
    report = seed_book(store, book, [right, wrong], MOVES_ONLY)
    assert len(report.scored) == 1 and len(report.unscored) == 1
    (why,) = [w for _, w in report.unscored]
    assert "komi 6.5" in why and "moves only" in why
    entry = [e for e in report.entries if e.file == str(wrong)][0]
    assert (entry.komi, entry.rules) == (6.5, "Japanese")
    root = lookup(store, book, "").candidates[0]
    assert (root.games, root.wins) == (1, 1)  # only the game at komi 7.5 counts
    assert root.score_mean is None  # and it was resigned: no score
    answers = {c.vertex: (c.games, c.wins) for c in lookup(store, book, "E5").candidates}
    assert sorted(answers.values()) == [(0, 0), (1, 0)]  # the unscored answer is known, with no game
    unscored_id = [e.game_id for e in report.entries if e.status == "unscored"][0]
    with store.read() as conn:
        stored = conn.execute(select(GAMES.c.result, GAMES.c.winner).where(GAMES.c.id == unscored_id)).one()
    assert tuple(stored) == ("?", None)
    assert verify(store, book).clean


def test_accept_komi_counts_the_results_as_they_are(store, tmp_path):
    book = new_book(store, komi=7.0)
    wrong = sgf(tmp_path, "wrong.sgf", "(;GM[1]SZ[9]KM[6.5]RE[W+2.5];B[ee];W[cc])")
    drawn = sgf(tmp_path, "drawn.sgf", "(;GM[1]SZ[9]KM[7]RE[Draw];B[ee];W[gc])")
    report = seed_book(store, book, [wrong, drawn], ACCEPT)
    assert len(report.scored) == 2 and "accepted" in report.entries[0].why
    root = lookup(store, book, "").candidates[0]
    assert (root.games, root.wins, root.draws) == (2, 0, 1)
    assert root.score_mean == (-2.5 + 0) / 2  # Black's scores stated by W+2.5 and the draw
    assert verify(store, book).clean


def test_every_game_of_a_collection_is_seeded_and_non_board_results_are_unscored(store, tmp_path):
    book = new_book(store)
    collection = sgf(tmp_path, "many.sgf", "(;GM[1]SZ[9]KM[7.5]RE[B+R];B[ee];W[gc])"
                                           "(;GM[1]SZ[9]KM[7.5]RE[W+T];B[ee];W[cc])"
                                           "(;GM[1]SZ[9]KM[7.5]RE[B+F];B[ee];W[ce])"
                                           "(;GM[1]SZ[9]KM[7.5]RE[Void];B[ee];W[cg])"
                                           "(;GM[1]SZ[9]KM[6.5]RE[?];B[ee];W[gg])"
                                           "(;GM[1]SZ[9]KM[7.5]RE[0];B[ee];W[eg])"
                                           "(;GM[1]SZ[9]KM[7.5]AB[cc]RE[B+R];W[ee])")
    report = seed_book(store, book, [collection])
    assert len(report.entries) == 7
    assert len(report.scored) == 2  # B+R and the draw
    unscored = dict(report.unscored)
    assert len(unscored) == 4
    assert "time" in unscored[f"{collection} (game 2 of 7)"] and "forfeit" in unscored[f"{collection} (game 3 of 7)"]
    assert "no result" in unscored[f"{collection} (game 4 of 7)"]
    assert report.skipped == [(f"{collection} (game 7 of 7)", "has setup or handicap stones")]
    with store.read() as conn:
        rows = conn.execute(select(GAMES.c.result, GAMES.c.winner).where(GAMES.c.book_id == book.id)
                            .order_by(GAMES.c.id)).all()
    assert [tuple(r) for r in rows] == [("B+R", "B"), ("W+T", None), ("B+F", None), ("Void", None), ("?", None),
                                        ("0", None)]
    root = lookup(store, book, "").candidates[0]
    assert (root.games, root.wins, root.draws) == (2, 1, 1)
    assert verify(store, book).clean
    again = seed_book(store, book, [collection])
    assert len(again.duplicates) == 6 and not again.added


@pytest.mark.parametrize("result, score", [("B+3.5", 3.5), ("W+2", -2.0), ("w+0.5", -0.5), ("0", 0.0), ("Jigo", 0.0),
                                           ("B+R", None), ("W+Resign", None), ("B+T", None), ("W+F", None),
                                           ("Void", None), ("?", None), ("", None), ("B+", None)])
def test_the_score_a_result_states_for_black(result, score):
    assert result_score(result) == score
