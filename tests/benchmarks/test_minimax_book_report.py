"""``benchmarks/minimax_book.py --report``: a series played with book options (``b025
[book_choice=search]``) is its own row, and shares the build figures of the book it played."""

from __future__ import annotations

import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from minimax_book import base_book, paired_gains, reached, report, series_name  # noqa: E402


def game(series, index, winner, a_color="B"):
    return {"kind": "game", "book": series, "checkpoint": 100, "playouts": 50, "game": index, "a_color": a_color,
            "winner": winner, "result": "B+R", "reason": "resignation", "moves_played": 30, "book_moves": 2,
            "left_at": 5, "sgf": None}


def test_a_series_with_book_options_shares_its_books_build():
    series = series_name("b1", "book_choice=search")
    assert series == "b1 [book_choice=search]" and base_book(series) == "b1" and base_book("b1") == "b1"
    rows = [{"kind": "build", "book": "b1", "checkpoint": 100, "done": 100, "seconds": 600, "playouts": 5_000_000},
            game("b1", 0, "A"), game("b1", 1, "B", "W"),
            game(series, 0, "A"), game(series, 1, "A", "W"), game(series, 2, None)]
    table = {row["book"]: row for row in report(rows)}
    assert set(table) == {"b1", series}
    plain, chosen = table["b1"], table[series]
    assert (plain["games"], plain["score"]) == (2, 0.5)
    assert (chosen["games"], chosen["score"]) == (3, pytest.approx(2.5 / 3))
    assert chosen["build_minutes"] == plain["build_minutes"] == 10.0
    assert chosen["playouts_millions"] == plain["playouts_millions"] == 5.0


def test_series_against_another_opponent_are_named_apart_and_only_the_books_shares_its_build():
    with_book = series_name("b1", "", "reward=score")
    baseline = series_name("b1", "", "reward=score", without_book=True)
    assert (with_book, baseline) == ("b1 vs reward=score", "b1 [no book] vs reward=score")
    assert series_name("b1", "book_choice=search", "reward=score") == "b1 [book_choice=search] vs reward=score"
    assert {base_book(with_book), base_book(baseline)} == {"b1"}
    rows = [{"kind": "build", "book": "b1", "checkpoint": 100, "done": 100, "seconds": 60, "playouts": 1_000_000},
            game(with_book, 0, "A"), game(baseline, 0, "B")]
    table = {row["book"]: row for row in report(rows)}
    assert table[with_book]["score"] == 1.0 and table[baseline]["score"] == 0.0
    assert table[with_book]["build_minutes"] == 1.0 and table[with_book]["playouts_millions"] == 1.0
    assert table[baseline]["build_minutes"] == 0.0 and table[baseline]["playouts_millions"] is None  # no book played


def test_series_on_the_same_opponent_seeds_are_compared_game_by_game():
    gnugo = "gtp:gnugo --mode gtp --level 10 --seed {game}"
    with_book, baseline = series_name("b1", "", gnugo), series_name("b1", "", gnugo, without_book=True)
    # Game 0 and 1 won by both, game 2 only with the book, game 3 lost by both; game 4 has no pair yet.
    rows = [game(with_book, i, w) for i, w in enumerate("AAABA")] + [game(baseline, i, w) for i, w in enumerate("AABB")]
    rows += [game(series_name("b1", "", "gtp:gnugo --mode gtp"), 0, "A"),  # no seeds: no pairs
             game(series_name("b1", "", "gtp:gnugo --mode gtp", without_book=True), 0, "B")]
    (gain,) = paired_gains(rows)
    assert (gain["book"], gain["games"]) == (with_book, 4)
    assert (gain["with_book"], gain["without_book"], gain["gain"]) == (0.75, 0.5, 0.25)
    low, high = gain["ci95"]
    # Differences 0, 0, 1, 0: sample variance 1/4, so the half-width is 1.96 * sqrt(1/4 / 4).
    assert (low, high) == (pytest.approx(0.25 - 0.49, abs=1e-3), pytest.approx(0.25 + 0.49, abs=1e-3))


def test_a_later_checkpoint_pairs_with_the_baseline_recorded_at_an_earlier_one():
    """The engine without the book plays the same games whatever the book's size: a series of the
    grown book pairs with the baseline played beside an earlier checkpoint, and a baseline at the
    book's own checkpoint, where there is one, is preferred."""
    gnugo = "gtp:gnugo --mode gtp --level 10 --seed {game}"
    with_book, baseline = series_name("b1", "", gnugo), series_name("b1", "", gnugo, without_book=True)
    rows = [dict(game(with_book, i, w), checkpoint=200) for i, w in enumerate("AAB")]
    rows += [dict(game(baseline, i, w), checkpoint=100) for i, w in enumerate("ABB")]
    (gain,) = paired_gains(rows)
    assert (gain["expansions"], gain["games"], gain["gain"]) == (200, 3, pytest.approx(1 / 3))
    rows += [dict(game(baseline, i, "A"), checkpoint=200) for i in range(2)]
    (gain,) = paired_gains(rows)
    assert (gain["games"], gain["without_book"], gain["gain"]) == (2, 1.0, 0.0)


def test_the_same_series_at_another_play_budget_is_a_row_of_its_own():
    """A book played at 1 s a move (more playouts) is not the same experiment as at 0.25 s: the
    report and the paired gains keep each P apart."""
    fast = [game("b1", i, "A") for i in range(3)]
    slow = [dict(game("b1", i, w), playouts=500) for i, w in enumerate("BB")]
    table = {(row["book"], row["playouts"]): row for row in report(fast + slow)}
    assert set(table) == {("b1", 50), ("b1", 500)}
    assert (table["b1", 50]["games"], table["b1", 50]["score"]) == (3, 1.0)
    assert (table["b1", 500]["games"], table["b1", 500]["score"]) == (2, 0.0)
    gnugo = "gtp:gnugo --mode gtp --level 10 --seed {game}"
    with_book, baseline = series_name("b1", "", gnugo), series_name("b1", "", gnugo, without_book=True)
    rows = [game(with_book, 0, "A"), game(baseline, 0, "B"), dict(game(with_book, 0, "B"), playouts=500),
            dict(game(baseline, 0, "B"), playouts=500)]
    gains = {g["playouts"]: g for g in paired_gains(rows)}
    assert gains[50]["gain"] == 1.0 and gains[500]["gain"] == 0.0


def test_a_build_stopped_on_its_way_counts_its_time_but_not_as_the_checkpoint():
    """A book grown over several runs (a build stopped at 130 of 200, then finished) reports both
    runs' time at 200, the finished run's playouts, and only the finished row reaches 200."""
    rows = [{"kind": "build", "book": "b1", "checkpoint": 100, "done": 100, "seconds": 600, "playouts": 5_000_000},
            {"kind": "build", "book": "b1", "checkpoint": 200, "done": 130, "seconds": 180, "playouts": 6_500_000}]
    assert reached(rows, "b1", 100) and not reached(rows, "b1", 200) and not reached(rows, "b2", 100)
    rows.append({"kind": "build", "book": "b1", "checkpoint": 200, "done": 200, "seconds": 420,
                 "playouts": 10_000_000})
    assert reached(rows, "b1", 200) and not reached(rows, "b1", 300)
    rows += [dict(game("b1", 0, "A"), checkpoint=c) for c in (100, 200)]
    table = {row["expansions"]: row for row in report(rows)}
    assert table[100]["build_minutes"] == 10.0 and table[100]["playouts_millions"] == 5.0
    assert table[200]["build_minutes"] == 20.0 and table[200]["playouts_millions"] == 10.0
