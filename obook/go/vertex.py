"""GTP vertices ("E5", "pass") and points of the padded board.

Columns are the letters A..T without I; row 1 is the bottom line, as in GTP and SGF viewers.
"""

from __future__ import annotations

import re

from obook.errors import IllegalMoveError
from obook.go.board import PASS

COLUMNS = "ABCDEFGHJKLMNOPQRST"
_VERTEX = re.compile(r"^([A-HJ-Ta-hj-t])(\d{1,2})$")
_SEPARATORS = re.compile(r"[\s,;]+")


def point_of(col: int, row: int, size: int) -> int:
    """The padded-board point of 0-based column ``col`` and row ``row`` (row 0 at the bottom)."""
    return (row + 1) * (size + 2) + (col + 1)


def col_row(point: int, size: int) -> tuple[int, int]:
    width = size + 2
    return point % width - 1, point // width - 1


def parse_vertex(text: str, size: int) -> int:
    """A point, or ``PASS``, from a GTP vertex; raise ``IllegalMoveError`` naming what is wrong."""
    word = text.strip()
    if word.lower() == "pass":
        return PASS
    match = _VERTEX.match(word)
    if not match:
        raise IllegalMoveError(f"invalid vertex {text!r}: expected a letter A-T (no I) and a row number, or 'pass'")
    col = COLUMNS.index(match.group(1).upper())
    row = int(match.group(2)) - 1
    if col >= size or not 0 <= row < size:
        raise IllegalMoveError(f"invalid vertex {text!r}: off a {size}x{size} board")
    return point_of(col, row, size)


def format_vertex(point: int, size: int) -> str:
    if point == PASS:
        return "pass"
    col, row = col_row(point, size)
    if not (0 <= col < size and 0 <= row < size):
        raise ValueError(f"point {point} is not on a {size}x{size} board")
    return f"{COLUMNS[col]}{row + 1}"


def split_moves(text: str | list[str] | tuple[str, ...]) -> list[str]:
    """Accept "E5,G5", "e5 g5" or a list of vertices; empty text is no moves."""
    if isinstance(text, (list, tuple)):
        return [str(word) for word in text if str(word).strip()]
    return [word for word in _SEPARATORS.split(text.strip()) if word]
