"""Ladder reading: working ladders, ladders broken by a stone in their path, ladders along the edge,
and the ataris that start them."""

import random

import numpy as np

from obook.go.board import BLACK, NO_POINT, PASS, WHITE, WIDTH, in_atari, is_eye, recompute_hash
from obook.go.ladder import (
    LADDER_BUDGET,
    atari_ladders,
    escape_is_laddered,
    ladder_units,
    new_ladder_scratch,
    read_ladder,
)
from obook.go.position import Position
from obook.go.tactics import string_liberties

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


def full_read_units(b, p, c, sc) -> int:
    """``ladder_units`` as it was before its shortcuts: every escape and every atari of a two-liberty
    string read out by ``read_ladder``."""
    w = int(b.scalars[WIDTH])
    escape = starts = done = False
    read = None
    for q in (p - w, p - 1, p + 1, p + w):
        v, r = int(b.color[q]), int(b.root[q])
        if v == c and not done and in_atari(b, r):
            escape, done = bool(read_ladder(b, p, c, p, c, sc, LADDER_BUDGET)), True
        elif v == 3 - c and not starts and r != read and not in_atari(b, r):
            read = r
            if string_liberties(b, r, sc.libs) == 2:
                starts = bool(read_ladder(b, p, c, q, 3 - c, sc, LADDER_BUDGET))
    return int(starts) - int(escape)


def test_the_shortcuts_give_the_full_reading_s_verdict_on_random_positions():
    rng = random.Random(3)
    verdicts = {-1: 0, 0: 0, 1: 0}
    for game in range(40):
        size = (7, 9, 11)[game % 3]
        position = Position(size=size, komi=7.5)
        for _ in range(rng.randrange(10, size * size)):
            moves = [m for m in position.legal_moves() if not is_eye(position.board, m, position.to_move)]
            if not moves:
                break
            position.play(rng.choice(moves))
        sc = new_ladder_scratch(size)
        b, c = position.board, position.to_move
        for p in position.legal_moves():
            if p == PASS:
                continue
            units = int(ladder_units(b, p, c, sc))
            assert units == full_read_units(b, p, c, sc), (position.vertex(p), game)
            verdicts[units] += 1
    assert verdicts[-1] > 0 and verdicts[1] > 0  # the positions hold working ladders both ways
