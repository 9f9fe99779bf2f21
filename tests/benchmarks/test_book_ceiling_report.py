"""``benchmarks/book_ceiling.py``'s table: a cell per budget, deep moves, factor and opponent, so that
the ceiling against GNU Go is never pooled with the ceiling against the plain engine."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from book_ceiling import pair_with_books, report  # noqa: E402

GNUGO = "gtp:/usr/games/gnugo --mode gtp --level 10 --chinese-rules --seed {game}"


def game(winner: str, color: str = "B", opponent: str | None = None, moves: int = 6) -> dict:
    row = {"playouts": 5000, "moves": moves, "factor": 30.0, "game": 0, "a_color": color, "winner": winner,
           "seconds": {"A": 2.0, "B": 1.0}}
    return {**row, "opponent": opponent} if opponent is not None else row


def test_games_against_another_opponent_form_a_cell_of_their_own():
    rows = [game("A"), game("B", "W"),  # written before opponents were recorded: the plain engine
            game("A", opponent=GNUGO), game("A", "W", opponent=GNUGO), game("B", opponent=GNUGO),
            game("A", opponent=GNUGO, moves=0)]
    table = report(rows)
    assert [(r.get("opponent", ""), r["moves"], r["games"]) for r in table] == [("", 6, 2), (GNUGO, 0, 1), (GNUGO, 6, 3)]
    plain, baseline, deep = table
    assert plain["a_score"] == 0.5 and "opponent" not in plain
    assert deep["a_score"] == round(2 / 3, 4) and deep["a_as_black"] == 0.5 and deep["a_as_white"] == 1.0
    assert baseline["a_score"] == 1.0


def test_a_deep_cell_against_a_seeded_opponent_reports_its_gain_paired_on_the_seeds():
    deep = [dict(game("A", opponent=GNUGO), game=i) for i in range(4)] + [dict(game("B", opponent=GNUGO), game=4)]
    plain = [dict(game(w, opponent=GNUGO, moves=0), game=i) for i, w in enumerate("ABBA")]  # no game 4
    table = {r["moves"]: r for r in report(deep + plain)}
    assert table[6]["paired_games"] == 4 and table[6]["paired_gain"] == 0.5
    low, high = table[6]["paired_ci95"]
    assert low < 0.5 < high
    assert "paired_gain" not in table[0]
    unseeded = [game("A", opponent="gtp:gnugo --mode gtp"), game("A", opponent="gtp:gnugo --mode gtp", moves=0)]
    assert all("paired_gain" not in r for r in report(unseeded))


def test_a_gtp_opponent_is_named_in_a_legend_by_its_program_and_level():
    from book_ceiling import opponent_label

    assert opponent_label(GNUGO) == "gnugo level 10"
    assert opponent_label("gtp:/opt/pachi/pachi -t =16000") == "pachi"


def book_game(series: str, index: int, winner: str, color: str = "B") -> dict:
    return {"kind": "game", "book": series, "checkpoint": 3500, "playouts": 5000, "game": index,
            "a_color": color, "winner": winner}


def test_a_book_series_pairs_with_the_cells_that_met_its_seeded_opponent_on_the_same_games():
    cells = ([dict(game(w, opponent=GNUGO, moves=0), game=i) for i, w in enumerate("ABBA")]
             + [dict(game("A", opponent=GNUGO, moves=6), game=i) for i in range(4)]
             + [dict(game("A", moves=6), game=i) for i in range(4)])  # against the plain engine: never paired
    book = [book_game(f"b1 vs {GNUGO}", i, w) for i, w in enumerate("AAAB")]
    book.append(book_game(f"b1 vs {GNUGO}", 4, "A"))  # the cells have no game 4
    book.append({"kind": "build", "book": "b1", "checkpoint": 3500})
    unseeded = [book_game("b1 vs gtp:/usr/games/gnugo --level 10", i, "A") for i in range(4)]
    pairs = {p["moves"]: p for p in pair_with_books(cells, book + unseeded)}
    assert set(pairs) == {0, 6}
    assert pairs[0]["book"] == f"b1 vs {GNUGO}" and pairs[0]["expansions"] == 3500
    assert pairs[0]["paired_games"] == 4 and pairs[0]["paired_gain"] == 0.25
    assert pairs[6]["paired_gain"] == -0.25


def test_a_game_whose_colours_differ_between_the_two_is_not_paired():
    cell = [dict(game("A", opponent=GNUGO, moves=0), game=0), dict(game("B", "W", opponent=GNUGO, moves=0), game=1)]
    book = [book_game(f"b1 vs {GNUGO}", 0, "A"), book_game(f"b1 vs {GNUGO}", 1, "A")]  # game 1 as Black
    [pair] = pair_with_books(cell, book)
    assert pair["paired_games"] == 1 and pair["paired_gain"] == 0.0
