"""Rules written as ASCII boards followed by the expected answer."""

import pytest

from obook.errors import IllegalMoveError
from obook.go import board as rules
from obook.go.board import BLACK, WHITE
from obook.go.position import Position


def test_single_stone_capture_and_liberties():
    p = Position.from_ascii(
        """
        . . . . .
        . . X . .
        . X O X .
        . . . . .
        . . . . .
        """
    )
    assert p.play("C2") == 1
    assert p.color_at("C3") == rules.EMPTY
    assert p.board.scalars[rules.CAPTURED_WHITE] == 1


def test_multi_string_capture_with_one_move():
    p = Position.from_ascii(
        """
        . . . . . . .
        . . . X . . .
        . . X O X . .
        . X O . O X .
        . . X O X . .
        . . . X . . .
        . . . . . . .
        """
    )
    # D4 takes the last liberty of four white strings at once.
    assert p.play("D4") == 4
    for v in ("D5", "C4", "E4", "D3"):
        assert p.color_at(v) == rules.EMPTY
    assert p.ko_point == rules.NO_POINT


def test_suicide_is_illegal_but_capturing_is_not():
    p = Position.from_ascii(
        """
        . X . . .
        X . . . .
        . . . . .
        . . . . .
        . . . . .
        """,
        to_move="W",
    )
    with pytest.raises(IllegalMoveError, match="suicide"):
        p.play("A5")
    assert p.legality("A5") == rules.SUICIDE
    # A multi-stone suicide too.
    q = Position.from_ascii(
        """
        O X . . .
        . X . . .
        X X . . .
        . . . . .
        . . . . .
        """,
        to_move="W",
    )
    assert q.legality("A4") == rules.SUICIDE
    # Filling its own last liberty is fine when it captures.
    r = Position.from_ascii(
        """
        . X O . .
        X O . . .
        O . . . .
        . . . . .
        . . . . .
        """,
        to_move="B",
    )
    assert r.legality("A5") == rules.SUICIDE
    assert r.play("A5", "W") == 2


def test_simple_ko_forbids_immediate_retake_only():
    p = Position.from_ascii(
        """
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
        """,
        to_move="B",
    )
    assert p.play("C4") == 1  # black takes the ko
    assert p.ko_point == p.point("B4")
    with pytest.raises(IllegalMoveError, match="ko"):
        p.play("B4")
    p.play("E1")  # white ko threat elsewhere
    p.play("E2")  # black answers
    assert p.play("B4") == 1  # white may retake now


def test_snapback():
    p = Position.from_ascii(
        """
        . . . . .
        . . . . .
        X X X X .
        O O O X .
        . . O X .
        """,
        to_move="B",
    )
    assert p.play("B1") == 0  # the throw-in, in atari
    assert p.play("A1") == 1  # white takes it...
    assert p.ko_point == rules.NO_POINT
    assert p.play("B1") == 5  # ...and black takes back five stones
    assert p.stones("W") == []


def test_game_ends_after_two_passes():
    p = Position(size=5)
    p.play("pass")
    assert not p.is_over
    p.play("C3")
    p.play("pass")
    p.play("pass")
    assert p.is_over


def test_pass_clears_ko():
    p = Position.from_ascii(
        """
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
        """,
        to_move="B",
    )
    p.play("C4")
    p.play("pass")
    p.play("pass")
    assert p.ko_point == rules.NO_POINT


def test_area_score_counts_stones_and_single_colour_regions():
    p = Position.from_ascii(
        """
        . X O . .
        . X O . .
        . X O . .
        . X O . .
        . X O . .
        """,
        komi=0.5,
    )
    assert p.area() == (10, 15)
    assert p.score() == -5.5
    assert p.result() == "W+5.5"


def test_area_score_region_touching_both_colours_is_neutral():
    p = Position.from_ascii(
        """
        X . O . .
        X . O . .
        X . O . .
        X . O . .
        X . O . .
        """,
        komi=0,
    )
    # Column B reaches both colours (dame); columns D-E reach only white.
    assert p.area() == (5, 15)


def test_empty_board_scores_no_area():
    p = Position(size=9, komi=7.5)
    assert p.area() == (0, 0)
    assert p.score() == -7.5


def test_seki_free_corner_cases_eyes_inside_groups_count():
    p = Position.from_ascii(
        """
        . X . X O
        X X X X O
        O O O O O
        . O . O .
        O . O . O
        """,
        komi=0,
    )
    black, white = p.area()
    assert black == 6 + 2
    assert white == 11 + 6


def test_illegal_inputs_have_clear_messages():
    p = Position(size=9)
    with pytest.raises(IllegalMoveError, match="invalid vertex 'I5'"):
        p.play("I5")
    with pytest.raises(IllegalMoveError, match="off a 9x9 board"):
        p.play("K5")
    with pytest.raises(IllegalMoveError, match="move 2 \\(E5\\).*occupied"):
        p.play_moves("E5,E5")
    with pytest.raises(IllegalMoveError, match="outside"):
        Position(size=25)


TRIPLE_KO = """
    . X O . . . X O .
    X O . O . X O . O
    . X O . . . X O .
    . . . . . . . . .
    . O X . . . . . .
    O X . X . . . . .
    . O X . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    """
TRIPLE_KO_CYCLE = ["C8", "C4", "H8", "B8", "B4", "G8"]


def test_triple_ko_cycle_is_legal_under_simple_ko():
    p = Position.from_ascii(TRIPLE_KO, to_move="B")
    start = p.stone_key
    for move in TRIPLE_KO_CYCLE:
        assert p.play(move) == 1
    assert p.stone_key == start


def test_positional_superko_refuses_the_move_that_closes_the_cycle():
    p = Position.from_ascii(TRIPLE_KO, to_move="B", superko=True)
    for move in TRIPLE_KO_CYCLE[:-1]:
        p.play(move)
    assert p.legality(TRIPLE_KO_CYCLE[-1]) == rules.SUPERKO
    with pytest.raises(IllegalMoveError, match="superko"):
        p.play(TRIPLE_KO_CYCLE[-1])
    assert p.is_legal("E5")


def test_a_diagram_with_a_dead_stone_is_refused():
    with pytest.raises(IllegalMoveError, match="no liberty"):
        Position.from_ascii(
            """
            . X . . .
            X O X . .
            . X . . .
            . . . . .
            . . . . .
            """
        )


def test_setup_stones_are_checked_after_both_colours_are_placed():
    with pytest.raises(IllegalMoveError, match="no liberty"):
        Position.from_ascii(
            """
            X O . . .
            O . . . .
            . . . . .
            . . . . .
            . . . . .
            """
        )


def test_with_to_move_gives_the_other_side_the_move_on_a_copy():
    p = Position.from_moves("E5 C3", size=9)
    assert p.with_to_move("B") is p
    white = p.with_to_move("W")
    assert white is not p and white.to_move == WHITE and p.to_move == BLACK
    assert white.moves == p.moves and white.stone_key == p.stone_key
    white.play("G7")  # White moves twice in a row, as GTP allows
    assert p.color_at("G7") == rules.EMPTY and white.to_move == BLACK


@pytest.mark.parametrize(
    "diagram, point, true_eye",
    [
        # Four black neighbours and no white diagonal: an eye either way.
        (". . . . .\n. X X X .\n. X . X .\n. X X X .\n. . . . .", "C3", True),
        # One white diagonal in the middle of the board: still a true eye.
        (". . . . .\n. O X . .\n. X . X .\n. . X . .\n. . . . .", "C3", True),
        # Two white diagonals: a false eye, which Black may have to fill to connect.
        (". . . . .\n. O X O .\n. X . X .\n. . X . .\n. . . . .", "C3", False),
        # On the edge one white diagonal is enough.
        (". . . . .\n. . . . .\n. . . . .\n. X X O .\n. X . X .", "C1", False),
        (". . . . .\n. . . . .\n. . . . .\n. X X X .\n. X . X .", "C1", True),
        # In the corner its one diagonal decides.
        (". . . . .\n. . . . .\n. . . . .\nX O . . .\n. X . . .", "A1", False),
        (". . . . .\n. . . . .\n. . . . .\nX X . . .\n. X . . .", "A1", True),
    ],
)
def test_true_eye_checks_the_diagonals(diagram, point, true_eye):
    position = Position.from_ascii(diagram)
    p = position.point(point)
    assert rules.is_eye(position.board, p, BLACK)  # the seeds' rule calls every case an eye
    assert rules.is_true_eye(position.board, p, BLACK) == true_eye
    assert not rules.is_true_eye(position.board, p, WHITE)


def test_true_eye_is_no_eye_when_a_neighbour_is_in_atari():
    position = Position.from_ascii(". . O . .\n. O X O .\n. X . X .\n. . X . .\n. . . . .")
    assert not rules.is_eye(position.board, position.point("C3"), BLACK)  # C4 must be saved there
    assert not rules.is_true_eye(position.board, position.point("C3"), BLACK)
