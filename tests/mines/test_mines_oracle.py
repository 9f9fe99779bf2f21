"""The expectimax oracle, the ground truth of the search tests, on a position solved by hand."""

import pytest

from obook.mines.game import position_from_ascii
from obook.mines.oracle import Oracle


def test_oracle_values_a_hand_solved_position():
    # one mine hides in the last column; a count only ever says "1", so it is a coin toss: win 1/2
    p, q, _, obs = position_from_ascii("o o x\no o .")
    win = Oracle(p, q, 1, "win")
    layouts = win.consistent_layouts(obs)
    assert len(layouts) == 2
    assert win.value(obs, layouts) == pytest.approx(0.5)
    score = Oracle(p, q, 1, "score")
    assert score.value(obs, layouts) == pytest.approx(0.5 * 1 + 0.5 * 4 / 5)
