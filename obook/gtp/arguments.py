"""GTP command arguments read into values, each with the ``? syntax error`` message a controller
understands, and the one argument that is geometry: where the fixed handicap stones go."""

from __future__ import annotations

import math

from obook.errors import IllegalMoveError
from obook.go.position import parse_color
from obook.go.vertex import parse_vertex, point_of
from obook.gtp.protocol import GTPCommandError


def expect_arguments(args: list[str], count: int, usage: str) -> None:
    if len(args) != count:
        got = "no arguments" if not args else f"{len(args)} argument{'s' if len(args) > 1 else ''}"
        raise GTPCommandError(f"syntax error: expected '{usage}', got {got}")


def color_argument(word: str) -> int:
    try:
        return parse_color(word)
    except IllegalMoveError:
        raise GTPCommandError(f"syntax error: invalid color {word!r}") from None


def vertex_argument(word: str, size: int) -> int:
    try:
        return parse_vertex(word, size)
    except IllegalMoveError as exc:
        raise GTPCommandError(f"syntax error: {exc}") from None


def integer_argument(word: str, what: str) -> int:
    try:
        return int(word)
    except ValueError:
        raise GTPCommandError(f"syntax error: {what} must be an integer, got {word!r}") from None


def seconds_argument(word: str) -> float:
    try:
        value = float(word)
    except ValueError:
        raise GTPCommandError(f"syntax error: a time must be a number of seconds, got {word!r}") from None
    if value < 0 or math.isnan(value):
        raise GTPCommandError(f"a time must not be negative, got {word!r}")
    return value


def is_number(word: str) -> bool:
    try:
        float(word)
        return True
    except ValueError:
        return False


def centiseconds_argument(word: str) -> float:
    """An interval given in centiseconds, in seconds (at least 0.01)."""
    try:
        value = float(word)
    except ValueError:
        raise GTPCommandError(f"syntax error: interval must be a number of centiseconds, got {word!r}") from None
    if value < 0:
        raise GTPCommandError("interval must not be negative")
    return max(value / 100.0, 0.01)


def fixed_handicap_points(size: int, count: int) -> list[int]:
    """The GTP fixed handicap placement (GTP 2, section 4.1.1): corners on the third line (fourth
    from 13x13 on), then the sides' midpoints and the centre on odd boards; 2 to 9 stones on odd
    boards of size 7 and more (4 at most on 7x7), 2 to 4 on even boards of size 8 and more."""
    if size < 7:
        raise GTPCommandError(f"fixed handicap is not defined on a {size}x{size} board")
    if size % 2 == 0 or size == 7:
        limit = 4
    else:
        limit = 9
    if not 2 <= count <= limit:
        raise GTPCommandError(f"invalid number of handicap stones {count} for a {size}x{size} board (2 to {limit})")
    edge = 2 if size < 13 else 3
    far = size - 1 - edge
    mid = size // 2
    corners = [(edge, edge), (far, far), (edge, far), (far, edge)]  # D4 Q16 D16 Q4 on 19x19
    sides = [(edge, mid), (far, mid)]
    top_bottom = [(mid, edge), (mid, far)]
    centre = [(mid, mid)]
    layouts = {
        2: corners[:2],
        3: corners[:3],
        4: corners,
        5: corners + centre,
        6: corners + sides,
        7: corners + sides + centre,
        8: corners + sides + top_bottom,
        9: corners + sides + top_bottom + centre,
    }
    return [point_of(col, row, size) for col, row in layouts[count]]
