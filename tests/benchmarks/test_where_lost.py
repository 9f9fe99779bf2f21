"""``benchmarks/where_lost.py`` reads the games obook lost, values obook's positions, and finds each
game's turn: the obook move after which the deeper search's win rate fell most."""

import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from where_lost import _value_positions, lost_games, report  # noqa: E402

from obook.go.position import Position  # noqa: E402
from obook.go.sgf import save_sgf  # noqa: E402


def test_only_games_obook_lost_are_read_whichever_colour_it_had(tmp_path):
    position = Position.from_moves(["E5", "D4", "C3", "F6"])
    games = {"a.sgf": ("obook 0.1", "GNU Go", "W+R"), "b.sgf": ("GNU Go", "obook 0.1", "B+3.5"),
             "c.sgf": ("obook 0.1", "GNU Go", "B+0.5"), "d.sgf": ("GNU Go", "obook 0.1", "W+R")}
    for name, (black, white, result) in games.items():
        save_sgf(tmp_path / name, position, black=black, white=white, result=result)
    assert [(p.name, colour) for p, colour in lost_games(tmp_path)] == [("a.sgf", "B"), ("b.sgf", "W")]


def test_obooks_positions_are_valued_and_the_largest_fall_is_the_turn(tmp_path, capsys):
    save_sgf(tmp_path / "g.sgf", Position.from_moves(["E5", "D4", "C3", "F6", "G7"]), black="obook", white="x",
             result="W+R")
    rows = _value_positions((str(tmp_path / "g.sgf"), "B", 300))
    assert [r["move_number"] for r in rows] == [1, 3, 5]  # Black's moves only
    assert [r["played"] for r in rows] == ["E5", "C3", "G7"]
    assert all(0.0 <= r["winrate"] <= 1.0 for r in rows)
    rows = [dict(r, winrate=w) for r, w in zip(rows, (0.6, 0.9, 0.2))]
    report(rows)
    out = capsys.readouterr().out
    assert "move 3 C3, win rate 0.90 -> 0.20 by move 5" in out
    assert json.dumps(rows)  # rows are what --out stores
