"""Ladder reading: working ladders, ladders broken by a stone in their path, ladders along the edge,
and the ataris that start them."""

import numpy as np

from obook.go.board import BLACK, NO_POINT, WHITE, recompute_hash
from obook.go.ladder import atari_ladders, escape_is_laddered, ladder_units, new_ladder_scratch, read_ladder
from obook.go.position import Position

# White D4 is in atari (liberty E4); extending there leaves two liberties, E3 and F4, and the chase
# runs down to the right and reaches the edge: the ladder works.
LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . X X . . . .
    . . X O . . . . .
    . . . X . . . . .
    . . . . . . . . .
    . . . . . . . . .
    """

# The same with a white stone at G2 in the ladder's path: the chased string joins it and escapes.
BROKEN = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . X X . . . .
    . . X O . . . . .
    . . . X . . . . .
    . . . . . . O . .
    . . . . . . . . .
    """

# White C1 on the first line is in atari (liberty D1); running along the edge does not help.
EDGE = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . X . . . . . .
    . X O . . . . . .
    """

# The same with a white stone at F2: the string running along the edge reaches it.
EDGE_BROKEN = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . X . . O . . .
    . X O . . . . . .
    """


def defender_caught(diagram: str, stone: str) -> bool:
    """With White (the string's owner) to move, does the chase capture the string at ``stone``?"""
    position = Position.from_ascii(diagram, to_move="W")
    sc = new_ladder_scratch(position.size)
    return bool(read_ladder(position.board, NO_POINT, WHITE, position.point(stone), WHITE, sc, 200))


def escape_caught(diagram: str, escape: str) -> bool:
    position = Position.from_ascii(diagram, to_move="W")
    return bool(escape_is_laddered(position.board, position.point(escape), WHITE, new_ladder_scratch(position.size)))


def test_a_working_ladder_captures_the_string():
    assert defender_caught(LADDER, "D4")
    assert escape_caught(LADDER, "E4")


def test_a_ladder_breaker_in_the_path_saves_the_string():
    assert not defender_caught(BROKEN, "D4")
    assert not escape_caught(BROKEN, "E4")


def test_edge_ladders_are_read_both_ways():
    assert defender_caught(EDGE, "C1")
    assert escape_caught(EDGE, "D1")
    assert not defender_caught(EDGE_BROKEN, "C1")
    assert not escape_caught(EDGE_BROKEN, "D1")


def test_a_string_that_can_capture_an_attacker_escapes():
    # Black C2 and B1 are in atari next to White C1: White takes one instead of running.
    counter = """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . O . . . . . .
        . O X . . . . . .
        . X O . . . . . .
        """
    assert not defender_caught(counter, "C1")


def test_an_atari_that_starts_a_working_ladder_is_found():
    # White D4 has two liberties, D3 and E4. Black D3 drives it into the ladder above; Black E4
    # lets it out through D3 with three liberties.
    position = Position.from_ascii(
        """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . X X . . . .
        . . X O . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        """, to_move="B")
    sc = new_ladder_scratch(position.size)
    d4 = position.point("D4")
    assert atari_ladders(position.board, position.point("D3"), BLACK, d4, sc)
    assert not atari_ladders(position.board, position.point("E4"), BLACK, d4, sc)
    assert ladder_units(position.board, position.point("D3"), BLACK, sc) == 1
    assert ladder_units(position.board, position.point("E4"), BLACK, sc) == 0
    assert ladder_units(position.board, position.point("J9"), BLACK, sc) == 0


def test_reading_leaves_the_position_alone():
    position = Position.from_ascii(LADDER, to_move="W")
    before = {name: np.array(getattr(position.board, name)) for name in position.board._fields}
    sc = new_ladder_scratch(position.size)
    assert ladder_units(position.board, position.point("E4"), WHITE, sc) == -1
    for name, array in before.items():
        assert np.array_equal(array, getattr(position.board, name)), name
    assert recompute_hash(position.board) == position.board.hash[0]
