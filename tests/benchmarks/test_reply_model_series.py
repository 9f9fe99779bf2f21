"""``benchmarks/reply_model.py`` reads a book's recorded series by name: the games against the plain
engine (what the opponent model is of) apart from those against another opponent (``--opponent
gnugo``: how well the model predicts an engine it never saw), never the series without the book."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from minimax_book import base_book, series_opponent  # noqa: E402
from reply_model import book_series  # noqa: E402


def series_parts(name: str) -> tuple[str, str]:
    return base_book(name), series_opponent(name)

GNUGO = "gtp:/usr/games/gnugo --mode gtp --level 10 --chinese-rules --seed {game}"


def test_a_series_name_splits_into_its_book_and_its_opponent():
    assert series_parts("b025t2") == ("b025t2", "")
    assert series_parts("b025t2 [book_warm=on]") == ("b025t2", "")
    assert series_parts(f"b025t2 [book_warm=on] vs {GNUGO}") == ("b025t2", GNUGO)
    assert series_parts(f"b025 vs {GNUGO}") == ("b025", GNUGO)
    assert series_parts("b025t2 [no book] vs reward=score") == ("b025t2", "reward=score")


def test_the_plain_engine_series_and_an_opponent_series_are_read_apart():
    names = ["b025t2", "b025t2 [book_warm=on]", f"b025t2 [book_warm=on] vs {GNUGO}", f"b025t2 [no book] vs {GNUGO}",
             "b025t2 [no book]", "b025t2 vs reward=score", "b025 [book_warm=on]"]
    assert [n for n in names if book_series(n, "b025t2")] == ["b025t2", "b025t2 [book_warm=on]"]
    assert [n for n in names if book_series(n, "b025t2", "gnugo")] == [f"b025t2 [book_warm=on] vs {GNUGO}"]
    assert [n for n in names if book_series(n, "b025t2", "reward")] == ["b025t2 vs reward=score"]
