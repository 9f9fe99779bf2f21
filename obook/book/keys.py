"""What a book's statistics are keyed by, and the statistics one finished game contributes.

A position is keyed by its canonical Zobrist key (the smallest key over the 8 symmetries, with the
side to move and the ko point), so transpositions and symmetric positions share their statistics;
a move is stored in that canonical orientation and translated back to the caller's on lookup.
"""

from __future__ import annotations

from obook.errors import IllegalMoveError
from obook.go.board import BLACK, PASS
from obook.go.zobrist import KEY_VERSION
from obook.position import Position

RULES_VERSION = "area-ko-1"
ENGINE_VERSION = f"{RULES_VERSION}/{KEY_VERSION}"  # a book's keys are valid only under the same version

Stats = dict[tuple[int, int], tuple[int, int]]  # (canonical key, canonical move) -> (games, wins)


class BookGameError(IllegalMoveError):
    """A stored or submitted game that the rules reject."""


def replay(size: int, komi: float, superko: bool, moves: list[str] | tuple[str, ...]) -> Position:
    """The position after ``moves`` (alternating, Black first), with a clear error for a bad one."""
    position = Position(size=size, komi=komi, superko=superko)
    for number, vertex in enumerate(moves, start=1):
        try:
            position.play(vertex)
        except IllegalMoveError as exc:
            raise BookGameError(f"move {number} ({vertex}): {exc}") from None
    return position


def opening_statistics(size: int, komi: float, superko: bool, moves: list[str] | tuple[str, ...],
                       winner: str | None, depth: int) -> Stats:
    """Games and wins that a game adds: one game to each (position, move) of its first ``depth``
    moves, and a win where the player who moved won. A jigo (no winner) counts as a game only.
    A position met twice in one game counts once."""
    position = Position(size=size, komi=komi, superko=superko)
    stats: Stats = {}
    for number, vertex in enumerate(moves[:depth], start=1):
        key, symmetry = position.canonical()
        mover = "B" if position.to_move == BLACK else "W"
        try:
            point = position.point(vertex)
            position.play(point)
        except IllegalMoveError as exc:
            raise BookGameError(f"move {number} ({vertex}): {exc}") from None
        canonical_move = position.to_canonical(point, symmetry) if point != PASS else PASS
        stats.setdefault((key, canonical_move), (1, 1 if winner == mover else 0))
    return stats
