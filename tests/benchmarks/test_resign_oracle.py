"""``benchmarks/resign_oracle.py`` picks the games engine A resigned, by the game's number (A is
Black in even games) and the result, whoever the players' names say they are."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from resign_oracle import resigned_by_a  # noqa: E402

from obook.go.position import Position  # noqa: E402
from obook.go.sgf import save_sgf  # noqa: E402


def test_only_games_lost_by_engine_a_resigning_are_replayed(tmp_path):
    results = {1: "W+R", 2: "B+R", 3: "B+R", 4: "W+3.5", 5: "B+12.5"}  # file number -> result
    (tmp_path / "from-0000").mkdir()
    for number, result in results.items():
        position = Position.from_moves(["E5", "D4", "C3"][: number % 3 + 1])
        save_sgf(tmp_path / "from-0000" / f"game-{number:04d}.sgf", position, black="x", white="y", result=result)
    picked = resigned_by_a(tmp_path)
    # game 1 (index 0): A Black resigned; game 2 (index 1): A White resigned; game 3: A Black won by resignation.
    assert sorted(picked) == [0, 1]
    assert picked[0] == tuple(Position.from_moves(["E5", "D4"]).moves)
    assert picked[1] == tuple(Position.from_moves(["E5", "D4", "C3"]).moves)
