"""SGF game records in and out, through sgfmill.

Reading turns the main line of a record into a ``Position`` (``read_sgf``: the file's first game;
``read_sgf_collection``: every game of a collection file, one with several game trees): board size, komi, handicap and setup
stones (``AB``/``AW``/``AE`` in the nodes before the first move), the player to move (``PL``) and the
moves, optionally only the first N of them. Every problem a file can have (not SGF, not Go, a size
obook cannot play, a coordinate off the board, a move the rules forbid, setup stones in the middle of
the game) is an ``SgfError`` naming the file and, for moves, the move number.

Writing produces FF[4] with Chinese (area) rules, the moves, komi, players, result and optional
comments, so that GoGui, Sabaki and the match runner's readers agree on what was played.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from pathlib import Path

from sgfmill import sgf, sgf_grammar

from obook import __version__
from obook.errors import IllegalMoveError, ObookError
from obook.go import board as rules
from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import Position
from obook.go.vertex import col_row, point_of

MAX_SGF_SIZE = 19
_SGF_COLORS = {"b": BLACK, "w": WHITE}
_COLOR_LETTERS = {BLACK: "b", WHITE: "w"}


class SgfError(ObookError):
    """An SGF file that cannot be read or replayed."""


@dataclass
class SgfRecord:
    """What a record holds besides the position: who played, the result, how long the game is."""

    position: Position
    black: str = ""
    white: str = ""
    result: str = ""
    rules: str = ""  # RU as written ("Chinese", "Japanese", ...; "" when absent)
    has_komi: bool = True  # False: no KM in the file (the position has the caller's default komi)
    handicap: int = 0
    total_moves: int = 0  # moves in the file's main line (the position may hold fewer)
    comments: dict[int, str] = field(default_factory=dict)  # move number (0: root) -> comment


def read_sgf(
    source: str | Path | bytes,
    moves: int | None = None,
    superko: bool = False,
    default_komi: float = 0.0,
) -> SgfRecord:
    """Read a record (a path, or the file's bytes) and replay its first ``moves`` moves (all when
    ``None``; more than the game has means all). ``default_komi`` applies when the file has no KM.
    A collection file gives its first game (``read_sgf_collection`` reads them all)."""
    data, name = _source_bytes(source)
    if moves is not None and moves < 0:
        raise SgfError(f"{name}: the number of moves to load must not be negative (got {moves})")
    try:
        game = sgf.Sgf_game.from_bytes(data)
    except ValueError as exc:
        raise SgfError(f"{name}: not a valid SGF file ({exc or 'parse error'})") from None
    return _record(game, name, moves, superko, default_komi)


def read_sgf_collection(source: str | Path | bytes, superko: bool = False,
                        default_komi: float = 0.0) -> list[SgfRecord]:
    """Every game of a file (an SGF collection holds several game trees), each replayed in full.
    An error in any game names the file and, in a collection, the game's number."""
    data, name = _source_bytes(source)
    try:
        trees = sgf_grammar.parse_sgf_collection(data)
    except ValueError as exc:
        raise SgfError(f"{name}: not a valid SGF file ({exc or 'parse error'})") from None
    records = []
    for number, tree in enumerate(trees, start=1):
        where = name if len(trees) == 1 else f"{name} (game {number} of {len(trees)})"
        try:
            game = sgf.Sgf_game.from_coarse_game_tree(tree)
        except ValueError as exc:
            raise SgfError(f"{where}: not a valid SGF game ({exc or 'parse error'})") from None
        records.append(_record(game, where, None, superko, default_komi))
    return records


def _source_bytes(source: str | Path | bytes) -> tuple[bytes, str]:
    if isinstance(source, bytes):
        return source, "SGF data"
    path = Path(source)
    try:
        return path.read_bytes(), str(path)
    except OSError as exc:
        raise SgfError(f"cannot read {path}: {exc.strerror or exc}") from None


def _record(game: sgf.Sgf_game, name: str, moves: int | None, superko: bool, default_komi: float) -> SgfRecord:
    root = game.get_root()
    if root.has_property("GM") and root.get_raw("GM").strip() != b"1":
        raise SgfError(f"{name}: not a Go record (GM[{root.get_raw('GM').decode(errors='replace')}])")
    size = game.get_size()
    if not 2 <= size <= MAX_SGF_SIZE:
        raise SgfError(f"{name}: board size {size} is not supported (2 to {MAX_SGF_SIZE})")
    komi = default_komi
    if root.has_property("KM"):
        try:
            komi = float(game.get_komi())
        except ValueError:
            raw = root.get_raw("KM").decode(errors="replace")
            raise SgfError(f"{name}: komi KM[{raw}] is not a number") from None
    try:
        handicap = game.get_handicap() or 0
    except ValueError:
        raise SgfError(f"{name}: handicap HA[{root.get_raw('HA').decode(errors='replace')}] is not a number") from None

    try:
        sequence = game.get_main_sequence()
    except ValueError as exc:
        raise SgfError(f"{name}: {exc}") from None
    black_setup: set[int] = set()
    white_setup: set[int] = set()
    first_to_move = WHITE if handicap >= 2 else BLACK
    played: list[tuple[int, int]] = []
    comments: dict[int, str] = {}
    for node in sequence:
        move_number = len(played)
        try:
            color_letter, move = node.get_move()
            has_setup = node.has_setup_stones()
            setup = node.get_setup_stones() if has_setup else None
            player = node.get("PL") if node.has_property("PL") else None
            comment = node.get("C") if node.has_property("C") else None
        except ValueError as exc:
            where = f"after move {move_number}" if move_number else "in the setup"
            raise SgfError(f"{name}: malformed property {where} ({exc or 'bad value'})") from None
        if comment:
            comments[move_number + (1 if color_letter else 0)] = comment
        if has_setup:
            if played:
                raise SgfError(f"{name}: setup stones (AB/AW/AE) after move {move_number} are not supported")
            black_points, white_points, empty_points = (
                {_point(rc, size) for rc in stones} for stones in setup
            )
            black_setup = (black_setup - white_points - empty_points) | black_points
            white_setup = (white_setup - black_points - empty_points) | white_points
        if player is not None and not played:
            first_to_move = _SGF_COLORS[player]
        if color_letter is None:
            continue
        played.append((_SGF_COLORS[color_letter], PASS if move is None else _point(move, size)))

    try:
        position = Position(size=size, komi=komi, superko=superko, setup_black=sorted(black_setup),
                            setup_white=sorted(white_setup), first_to_move=first_to_move)
    except IllegalMoveError as exc:
        raise SgfError(f"{name}: bad setup position: {exc}") from None
    for point in sorted(black_setup | white_setup):
        if rules.real_liberties(position.board, position.board.root[point]) == 0:
            raise SgfError(f"{name}: bad setup position: the stone at {position.vertex(point)} has no liberty")
    limit = len(played) if moves is None else min(moves, len(played))
    for number, (color, point) in enumerate(played[:limit], start=1):
        try:
            position.play(point, color)
        except IllegalMoveError as exc:
            raise SgfError(f"{name}: move {number}: {exc}") from None
    return SgfRecord(
        position=position,
        black=_text(game, "b"),
        white=_text(game, "w"),
        result=root.get("RE") if root.has_property("RE") else "",
        rules=_property_text(root, "RU"),
        has_komi=root.has_property("KM"),
        handicap=handicap,
        total_moves=len(played),
        comments=comments,
    )


def load_position(source: str | Path | bytes, moves: int | None = None, superko: bool = False,
                  default_komi: float = 0.0) -> Position:
    return read_sgf(source, moves=moves, superko=superko, default_komi=default_komi).position


def game_to_sgf(
    position: Position,
    black: str = "",
    white: str = "",
    result: str | None = None,
    comments: dict[int, str] | None = None,
    game_comment: str = "",
    date: str | None = None,
    event: str = "",
) -> str:
    """The game of ``position`` (setup stones and moves) as SGF text. ``comments`` maps a move
    number (1 = first move) to the comment written on that move's node; ``result`` is an SGF result
    such as ``"B+3.5"``, ``"W+R"`` or ``"B+F"`` (omitted when ``None``)."""
    game = sgf.Sgf_game(position.size)
    root = game.get_root()
    root.set("KM", float(position.komi))
    root.set("RU", "Chinese")
    root.set("AP", ("obook", _version()))
    root.set("DT", date or _dt.date.today().isoformat())
    for key, value in (("PB", black), ("PW", white), ("EV", event), ("GC", game_comment)):
        if value:
            root.set(key, value)
    if result:
        root.set("RE", result)
    if position.setup_black or position.setup_white:
        root.set_setup_stones(
            [_row_col(p, position.size) for p in position.setup_black],
            [_row_col(p, position.size) for p in position.setup_white],
        )
        if position.setup_black and not position.setup_white and position.first_to_move == WHITE:
            root.set("HA", len(position.setup_black))
    if position.first_to_move == WHITE:
        root.set("PL", "w")
    comments = comments or {}
    if comments.get(0):
        root.set("C", comments[0])
    for number, (color, point) in enumerate(position.moves, start=1):
        node = game.extend_main_sequence()
        letter = _COLOR_LETTERS[color]
        if point == PASS:
            node.set_raw(letter.upper(), b"")
        else:
            node.set_move(letter, _row_col(point, position.size))
        if comments.get(number):
            node.set("C", comments[number])
    return game.serialise().decode("utf-8")


def save_sgf(path: str | Path, position: Position, **fields) -> Path:
    """Write ``game_to_sgf(position, **fields)`` to ``path`` (its folder must exist)."""
    target = Path(path)
    try:
        target.write_text(game_to_sgf(position, **fields), encoding="utf-8")
    except OSError as exc:
        raise SgfError(f"cannot write {target}: {exc.strerror or exc}") from None
    return target


def _point(row_col: tuple[int, int], size: int) -> int:
    row, col = row_col
    return point_of(col, row, size)


def _row_col(point: int, size: int) -> tuple[int, int]:
    col, row = col_row(point, size)
    if not (0 <= col < size and 0 <= row < size):
        raise ValueError(f"point {point} is not on a {size}x{size} board")
    return row, col


def _property_text(node, key: str) -> str:
    try:
        return node.get(key).strip() if node.has_property(key) else ""
    except ValueError:
        return ""


def _text(game: sgf.Sgf_game, color: str) -> str:
    try:
        return game.get_player_name(color) or ""
    except ValueError:
        return ""


def _version() -> str:
    return __version__


__all__ = ["SgfError", "SgfRecord", "game_to_sgf", "load_position", "read_sgf", "read_sgf_collection", "save_sgf"]
