"""Dead stones from playouts (``obook/playout/ownership.py``): statuses, seki, the score without the
dead, checked against GNU Go's ``final_status_list`` when it is installed."""

import numpy as np
import pytest

from obook.go.board import BLACK, WHITE
from obook.go.position import Position
from obook.playout.ownership import (
    ALIVE,
    DEAD,
    SEKI,
    area_without,
    board_strings,
    estimate_ownership,
    score_without_dead,
    stone_status,
)

# Two living walls, each with two areas; a white stone (B1) in Black's corner and a black one (F1)
# in White's are dead (GNU Go agrees: final_status_list dead is B1 F1, final_score W+7.5).
DEAD_STONES = """
    . . X O . . .
    . . X O . . .
    . . X O . . .
    . . X O . . .
    X X X O O O O
    . . X O . . .
    . O X O . X .
    """

# B1-B2 and A2-A3-B3-C3-C2 share their only liberties A1 and C1 (the GTP tests' seki).
SEKI_DIAGRAM = """
    . . . . .
    X X X X .
    O O O X .
    O X O X .
    . X . X .
    """


def vertices(position, stones):
    return sorted(position.vertex(p) for p in stones)


def test_clearly_dead_stones_are_dead_and_the_walls_alive():
    position = Position.from_ascii(DEAD_STONES, to_move="B", komi=0.5)
    status = stone_status(position, playouts=400, seed=3)
    dead = sorted(vertices(position, stones) for stones in status.stones(DEAD))
    assert dead == [["B1"], ["F1"]]
    alive = {(color, len(stones)) for color, stones, s in status.strings if s == ALIVE}
    assert alive == {(BLACK, 9), (WHITE, 10)}
    assert vertices(position, status.dead_points()) == ["B1", "F1"]


def test_score_without_dead_counts_their_points_for_the_owner():
    position = Position.from_ascii(DEAD_STONES, to_move="B", komi=0.5)
    status = stone_status(position, playouts=400, seed=3)
    # Black: 9 stones + 12 points of area (B1 taken off); White: 10 stones + 18 points (F1 taken off).
    assert area_without(position, status.dead_points()) == (21, 28)
    assert score_without_dead(position, status) == pytest.approx(21 - 28 - 0.5)
    assert area_without(position, set()) == (18, 23)  # with the dead on, their regions are nobody's


def test_ownership_is_a_mean_in_minus_one_one_with_the_right_signs():
    position = Position.from_ascii(DEAD_STONES, to_move="B", komi=0.5)
    owner = estimate_ownership(position, playouts=200, seed=1)
    assert owner.shape == position.board.color.shape
    assert np.all(np.abs(owner) <= 1.0)
    assert owner[position.point("A7")] > 0.8 and owner[position.point("G7")] < -0.8
    assert owner[position.point("B1")] > 0.5 and owner[position.point("F1")] < -0.5
    assert not estimate_ownership(position, playouts=0).any()
    again = estimate_ownership(position, playouts=200, seed=1)
    assert np.array_equal(owner, again)  # seeded


def test_a_simple_seki_is_seki_not_dead():
    position = Position.from_ascii(SEKI_DIAGRAM, to_move="B", komi=0.5)
    status = stone_status(position, playouts=200, seed=2)
    seki = sorted(vertices(position, stones) for stones in status.stones(SEKI))
    assert seki == [["A2", "A3", "B3", "C2", "C3"], ["B1", "B2"]]
    assert not status.stones(DEAD)
    assert len(board_strings(position)) == 3


@pytest.mark.gnugo
def test_dead_stones_agree_with_gnu_go(gnugo_path):
    from obook.gtp.client import GTPClient

    position = Position.from_ascii(DEAD_STONES, to_move="B", komi=0.5)
    status = stone_status(position, playouts=400, seed=3)
    with GTPClient([gnugo_path, "--mode", "gtp", "--chinese-rules", "--level", "0"]) as gnugo:
        gnugo.send(f"boardsize {position.size}")
        gnugo.send("clear_board")
        gnugo.send("komi 0.5")
        for color, name in ((BLACK, "black"), (WHITE, "white")):
            for p in position.stones(color):
                gnugo.send(f"play {name} {position.vertex(p)}")
        theirs = sorted(gnugo.send("final_status_list dead").split())
        score = gnugo.send("final_score")
    assert theirs == vertices(position, status.dead_points())
    assert score == "W+7.5" and score_without_dead(position, status) == -7.5
