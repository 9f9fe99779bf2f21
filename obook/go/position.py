"""The Python face of the rules: a game position that everything above the engine uses.

``Position`` wraps a numba ``Board`` and keeps the move list, so it can undo (by replay), check
moves with a clear reason, list legal moves, score, draw itself and give its canonical key. Hot
loops never go through this class; they take ``position.board`` and call the jitted functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from obook.errors import IllegalMoveError
from obook.go import board as rules
from obook.go.board import BLACK, EMPTY, PASS, WHITE, Board
from obook.go.symmetry import canonical_key, transform_point, untransform_point
from obook.go.vertex import (
    COLUMNS,
    col_row,
    format_vertex,
    parse_vertex,
    point_of,
    split_moves,
)

COLOR_NAMES = {BLACK: "B", WHITE: "W"}
_REASONS = {
    rules.OCCUPIED: "the point is occupied",
    rules.SUICIDE: "suicide",
    rules.KO: "it retakes a ko",
    rules.SUPERKO: "it repeats an earlier position (positional superko)",
    rules.OFF_BOARD: "off the board",
}


def parse_color(text: str | int) -> int:
    if text in (BLACK, WHITE):
        return int(text)
    word = str(text).strip().lower()
    if word in ("b", "black"):
        return BLACK
    if word in ("w", "white"):
        return WHITE
    raise IllegalMoveError(f"invalid color {text!r}: expected B, W, black or white")


@dataclass
class Position:
    """A game in progress: rules options, setup stones (handicap or a diagram) and the moves.

    ``superko`` forbids any move that recreates an earlier position (positional superko); simple ko
    is always enforced.
    """

    size: int = 9
    komi: float = 7.5
    superko: bool = False
    setup_black: list[int] = field(default_factory=list)
    setup_white: list[int] = field(default_factory=list)
    first_to_move: int = BLACK
    moves: list[tuple[int, int]] = field(default_factory=list)  # (color, point)
    board: Board = field(init=False, repr=False)

    def __post_init__(self) -> None:
        try:
            self.board = rules.new_board(self.size)
        except ValueError as exc:
            raise IllegalMoveError(str(exc)) from None
        for points, color in ((self.setup_black, BLACK), (self.setup_white, WHITE)):
            for p in points:
                if p == PASS or not self._on_board(p) or self.board.color[p] != EMPTY:
                    raise IllegalMoveError(f"invalid setup stone at point {p}")
            rules.place_setup_stones(self.board, np.array(points, np.int64), color)
        for p in self.setup_black + self.setup_white:
            if self.board.color[p] == EMPTY or self.board.lib_count[self.board.root[p]] == 0:
                raise IllegalMoveError(f"setup stone {format_vertex(p, self.size)} has no liberty")
        self.board.scalars[rules.TO_MOVE] = self.first_to_move
        replay, self.moves = self.moves, []
        for color, point in replay:
            self.play(point, color)

    # ---- construction -------------------------------------------------------------------------

    @classmethod
    def from_moves(cls, moves: str | list[str], size: int = 9, komi: float = 7.5, superko: bool = False) -> "Position":
        position = cls(size=size, komi=komi, superko=superko)
        position.play_moves(moves)
        return position

    @classmethod
    def from_ascii(cls, diagram: str, to_move: str = "B", komi: float = 7.5, superko: bool = False) -> "Position":
        """A position from a diagram: one line per row from the top, ``X``/``#`` black, ``O`` white,
        ``.``/``+`` empty; row numbers and column-letter lines around it are ignored."""
        rows = []
        for line in diagram.strip("\n").splitlines():
            body = line.strip()
            tokens = body.upper().split()
            if not body or tokens == list(COLUMNS[: len(tokens)]):
                continue
            rows.append([ch for ch in body if ch in "XO#.+"])
        size = len(rows)
        if size == 0 or any(len(r) != size for r in rows):
            raise IllegalMoveError("the diagram is not a square board")
        black, white = [], []
        for i, cells in enumerate(rows):
            row = size - 1 - i
            for col, ch in enumerate(cells):
                if ch in "X#":
                    black.append(point_of(col, row, size))
                elif ch == "O":
                    white.append(point_of(col, row, size))
        return cls(size=size, komi=komi, superko=superko, setup_black=black, setup_white=white,
                   first_to_move=parse_color(to_move))

    def _rebuilt(self, moves: list[tuple[int, int]]) -> "Position":
        return Position(size=self.size, komi=self.komi, superko=self.superko, setup_black=list(self.setup_black),
                        setup_white=list(self.setup_white), first_to_move=self.first_to_move, moves=list(moves))

    def copy(self) -> "Position":
        return self._rebuilt(self.moves)

    def with_to_move(self, color: str | int) -> "Position":
        """This position with ``color`` to move: itself when ``color`` is to move already, else a
        copy (GTP may ask for a move of either colour). The moves do not say who is to move in such
        a copy: replaying them (``copy``, ``undo``) gives the usual side to move again."""
        c = parse_color(color)
        if self.to_move == c:
            return self
        other = self.copy()
        other.board.scalars[rules.TO_MOVE] = c
        return other

    def place_handicap(self, points: list[int]) -> None:
        """Black stones before the first move; White then moves first."""
        if self.moves or self.setup_black or self.setup_white:
            raise IllegalMoveError("handicap stones can only be placed on an empty board")
        if len(set(points)) != len(points):
            raise IllegalMoveError("handicap stones must be on distinct points")
        fresh = Position(size=self.size, komi=self.komi, superko=self.superko, setup_black=list(points),
                         first_to_move=WHITE)
        self.setup_black, self.first_to_move, self.board = fresh.setup_black, WHITE, fresh.board

    # ---- moves ----------------------------------------------------------------------------------

    @property
    def to_move(self) -> int:
        return int(self.board.scalars[rules.TO_MOVE])

    @property
    def ko_point(self) -> int:
        return int(self.board.scalars[rules.KO_POINT])

    @property
    def passes(self) -> int:
        return int(self.board.scalars[rules.PASSES])

    @property
    def is_over(self) -> bool:
        """Two consecutive passes end the game."""
        return self.passes >= 2

    def point(self, move: str | int) -> int:
        return move if isinstance(move, (int, np.integer)) else parse_vertex(move, self.size)

    def legality(self, move: str | int, color: str | int | None = None) -> int:
        """``rules.LEGAL`` or the reason code for ``color`` (default: side to move) at ``move``."""
        point = self.point(move)
        c = self.to_move if color is None else parse_color(color)
        if point == PASS:
            return rules.LEGAL
        if not self._on_board(point):
            return rules.OFF_BOARD
        if self.superko:
            return int(rules.superko_legality(self.board, point, c))
        return int(rules.simple_legality(self.board, point, c))

    def is_legal(self, move: str | int, color: str | int | None = None) -> bool:
        return self.legality(move, color) == rules.LEGAL

    def play(self, move: str | int, color: str | int | None = None) -> int:
        """Play ``move`` (a vertex or a point) for ``color`` (default: side to move; out-of-turn
        moves are allowed, as GTP does). Returns the stones captured; raises ``IllegalMoveError``."""
        point = self.point(move)
        c = self.to_move if color is None else parse_color(color)
        reason = self.legality(point, c)
        if reason != rules.LEGAL:
            name = format_vertex(point, self.size) if self._on_board(point) else str(move)
            raise IllegalMoveError(f"illegal move {COLOR_NAMES[c]} {name}: {_REASONS[reason]}")
        self.board.scalars[rules.TO_MOVE] = c
        captured = int(rules.play(self.board, point))
        self.moves.append((c, point))
        return captured

    def play_moves(self, moves: str | list[str]) -> None:
        """Play a list of vertices for alternating colours ("E5,G5", "e5 g5" or a list)."""
        for index, word in enumerate(split_moves(moves), start=1):
            try:
                self.play(word)
            except IllegalMoveError as exc:
                raise IllegalMoveError(f"move {index} ({word}): {exc}") from None

    def undo(self) -> None:
        """Take back the last move (by replaying the others)."""
        if not self.moves:
            raise IllegalMoveError("there is no move to undo")
        rebuilt = self._rebuilt(self.moves[:-1])
        self.board, self.moves = rebuilt.board, rebuilt.moves

    def legal_moves(self, color: str | int | None = None, include_pass: bool = False) -> list[int]:
        c = self.to_move if color is None else parse_color(color)
        points = [p for p in self.points() if self.board.color[p] == EMPTY and self.legality(p, c) == rules.LEGAL]
        return points + [PASS] if include_pass else points

    def legal_vertices(self, color: str | int | None = None) -> list[str]:
        return [format_vertex(p, self.size) for p in self.legal_moves(color)]

    def points(self) -> list[int]:
        return [point_of(x, y, self.size) for y in range(self.size) for x in range(self.size)]

    def _on_board(self, point: int) -> bool:
        col, row = col_row(point, self.size)
        return 0 <= col < self.size and 0 <= row < self.size

    # ---- evaluation -----------------------------------------------------------------------------

    def area(self) -> tuple[int, int]:
        """(Black's area, White's area) under Chinese rules: stones plus regions reaching one colour."""
        black, white = rules.area_counts(self.board)
        return int(black), int(white)

    def score(self) -> float:
        """Black's area minus White's minus komi; positive means Black wins."""
        black, white = self.area()
        return black - white - self.komi

    def result(self) -> str:
        """The SGF/GTP result string: "B+3.5", "W+0.5" or "0" for a draw."""
        score = self.score()
        if score > 0:
            return f"B+{score:g}"
        if score < 0:
            return f"W+{-score:g}"
        return "0"

    def color_at(self, move: str | int) -> int:
        return int(self.board.color[self.point(move)])

    def stones(self, color: str | int) -> list[int]:
        c = parse_color(color)
        return [p for p in self.points() if self.board.color[p] == c]

    # ---- keys -----------------------------------------------------------------------------------

    @property
    def stone_key(self) -> int:
        return int(self.board.hash[0])

    @property
    def key(self) -> int:
        """Key of the game state in this orientation: stones, side to move, ko point."""
        return int(rules.position_key(self.board))

    def canonical(self) -> tuple[int, int]:
        """(canonical key, symmetry taking this position to its canonical orientation)."""
        return canonical_key(self.board)

    def to_canonical(self, point: int, symmetry: int) -> int:
        return transform_point(point, symmetry, self.size)

    def from_canonical(self, point: int, symmetry: int) -> int:
        return untransform_point(point, symmetry, self.size)

    # ---- display --------------------------------------------------------------------------------

    def vertex(self, point: int) -> str:
        return format_vertex(point, self.size)

    def to_ascii(self, coordinates: bool = True) -> str:
        """The board as text (X black, O white, . empty, + star point), row 1 at the bottom."""
        letters = " ".join(COLUMNS[: self.size])
        stars = _star_points(self.size) if coordinates else set()
        lines = [f"   {letters}"] if coordinates else []
        for row in range(self.size - 1, -1, -1):
            cells = []
            for col in range(self.size):
                c = self.board.color[point_of(col, row, self.size)]
                cells.append("X" if c == BLACK else "O" if c == WHITE else "+" if (col, row) in stars else ".")
            text = " ".join(cells)
            lines.append(f"{row + 1:2d} {text} {row + 1}" if coordinates else text)
        if coordinates:
            lines.append(f"   {letters}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_ascii()


def _star_points(size: int) -> set[tuple[int, int]]:
    if size < 7:
        return set()
    edge = 2 if size < 13 else 3
    far = size - 1 - edge
    points = {(edge, edge), (edge, far), (far, edge), (far, far)}
    if size % 2 == 1:
        mid = size // 2
        points.add((mid, mid))
        if size >= 13:
            points |= {(edge, mid), (far, mid), (mid, edge), (mid, far)}
    return points
