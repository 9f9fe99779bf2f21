"""GTP arguments read into values, with the syntax errors a controller is shown."""

import math

import pytest

from obook.go.board import BLACK, PASS, WHITE
from obook.go.vertex import format_vertex
from obook.gtp.arguments import (
    centiseconds_argument,
    color_argument,
    expect_arguments,
    fixed_handicap_points,
    integer_argument,
    is_number,
    seconds_argument,
    vertex_argument,
)
from obook.gtp.protocol import GTPCommandError


def test_argument_count():
    expect_arguments(["b", "e5"], 2, "play COLOR VERTEX")
    with pytest.raises(GTPCommandError, match="expected 'play COLOR VERTEX', got no arguments"):
        expect_arguments([], 2, "play COLOR VERTEX")
    with pytest.raises(GTPCommandError, match="got 1 argument$"):
        expect_arguments(["b"], 2, "play COLOR VERTEX")
    with pytest.raises(GTPCommandError, match="got 3 arguments$"):
        expect_arguments(["b", "e5", "x"], 2, "play COLOR VERTEX")


def test_colours_and_vertices():
    assert [color_argument(w) for w in ("b", "B", "black", "White", "w")] == [BLACK, BLACK, BLACK, WHITE, WHITE]
    with pytest.raises(GTPCommandError, match="syntax error: invalid color 'red'"):
        color_argument("red")
    assert format_vertex(vertex_argument("e5", 9), 9) == "E5"
    assert vertex_argument("PASS", 9) == PASS
    with pytest.raises(GTPCommandError, match="syntax error: .*off a 9x9 board"):
        vertex_argument("j10", 9)
    with pytest.raises(GTPCommandError, match="syntax error: .*invalid vertex"):
        vertex_argument("i5", 9)  # GTP has no column I


def test_numbers():
    assert integer_argument("19", "board size") == 19
    with pytest.raises(GTPCommandError, match="board size must be an integer, got '9.5'"):
        integer_argument("9.5", "board size")
    assert seconds_argument("0") == 0.0 and seconds_argument("2.5") == 2.5
    with pytest.raises(GTPCommandError, match="number of seconds"):
        seconds_argument("soon")
    for word in ("-1", "nan"):
        with pytest.raises(GTPCommandError, match="must not be negative"):
            seconds_argument(word)
    assert is_number("10") and is_number("0.5") and not is_number("maxmoves")
    assert centiseconds_argument("50") == 0.5
    assert centiseconds_argument("0") == 0.01  # never a busy loop
    with pytest.raises(GTPCommandError, match="must not be negative"):
        centiseconds_argument("-10")
    with pytest.raises(GTPCommandError, match="centiseconds"):
        centiseconds_argument("often")
    assert math.isclose(centiseconds_argument("250"), 2.5)


def vertices(size, count):
    return [format_vertex(p, size) for p in fixed_handicap_points(size, count)]


def test_fixed_handicap_geometry():
    assert vertices(19, 9) == ["D4", "Q16", "D16", "Q4", "D10", "Q10", "K4", "K16", "K10"]
    assert vertices(19, 5)[-1] == "K10" and vertices(19, 6)[-2:] == ["D10", "Q10"]
    assert vertices(13, 4) == ["D4", "K10", "D10", "K4"]  # fourth line from 13x13 on
    assert vertices(9, 3) == ["C3", "G7", "C7"]  # third line below
    assert vertices(7, 4) == ["C3", "E5", "C5", "E3"]
    assert vertices(10, 4) == ["C3", "H8", "C8", "H3"]


@pytest.mark.parametrize("size, count, message", [
    (5, 2, "not defined on a 5x5 board"),
    (7, 5, "2 to 4"),
    (8, 5, "2 to 4"),
    (9, 10, "2 to 9"),
    (19, 1, "2 to 9"),
])
def test_fixed_handicap_limits(size, count, message):
    with pytest.raises(GTPCommandError, match=message):
        fixed_handicap_points(size, count)
