"""What a book's statistics are keyed by, and the statistics one finished game contributes.

A position is keyed by its canonical Zobrist key (the smallest key over the 8 symmetries, with the
side to move and the ko point), so transpositions and symmetric positions share their statistics;
a move is stored in that canonical orientation and translated back to the caller's on lookup.
A position that is itself symmetric (the empty board, a mirrored opening) reaches its canonical key
by several symmetries; its move is stored as the smallest of its images under all of them, so that
C3 and G7 on the empty board are one move of the book.
"""

from __future__ import annotations

import numpy as np

from obook.errors import IllegalMoveError, ObookError
from obook.go.board import BLACK, PASS
from obook.go.symmetry import N_SYMMETRIES, symmetric_keys, symmetry_maps
from obook.go.vertex import format_vertex, parse_vertex
from obook.go.zobrist import KEY_VERSION
from obook.go.position import Position
from obook.search.provenance import describe_engine, engine_differences

RULES_VERSION = "area-ko-1"
ENGINE_VERSION = f"{RULES_VERSION}/{KEY_VERSION}"  # a book's keys are valid only under the same version

Stats = dict[tuple[int, int], tuple[int, int, int]]  # (canonical key, canonical move) -> (games, wins, draws)
# (canonical key, canonical move) -> (scored games, sum of the mover's final scores): the games of ``Stats``
# whose final score is known (two passes or the move cap, not a resignation)
Scores = dict[tuple[int, int], tuple[int, float]]

UNSCORED = "?"  # the outcome of a game whose moves count but whose result does not (see ``game_outcome``)
DRAW_RESULTS = frozenset({"0", "DRAW", "JIGO"})  # SGF RE values of a drawn game (obook writes "0")


def game_outcome(winner: str | None, result: str | None) -> str | None:
    """What a finished game's stored (winner, result) counts as in the statistics: "B" or "W" (a
    win), ``None`` (a draw: no winner and a draw result, "0", "Draw" or "Jigo"), or ``UNSCORED`` (no
    winner and no board result: a seed whose result was at another komi, lost on time or forfeit,
    void or unknown)."""
    if winner in ("B", "W"):
        return winner
    if result is not None and result.strip().upper() in DRAW_RESULTS:
        return None
    return UNSCORED


def depth_limit(depth: int) -> int | None:
    """A book's depth as a number of moves, ``None`` for 0: no cap (the seed's Algorithm 1 consults
    the population at every position of the game)."""
    return depth if depth > 0 else None


def within_depth(depth: int, moves_played: int) -> bool:
    """True while the book counts (and self-play consults) the move after ``moves_played`` moves."""
    return depth <= 0 or moves_played < depth


class EngineMismatch(ObookError):
    """The book was made by other rules or keys than this obook's: its statistics are keyed by
    other position keys (an upgrade that changed them)."""


def require_keys(book, use: str) -> None:
    """Refuse to ``use`` (compute position keys for) a ``BookInfo`` made by another engine version,
    naming both versions. Every use of a book's keys goes through here (``library.open_keyed_book``
    and self-play); reading a book's games does not need it."""
    if book.engine_version != ENGINE_VERSION:
        raise EngineMismatch(f"book {book.name!r} was made by engine version {book.engine_version}; this obook is "
                             f"{ENGINE_VERSION}, whose position keys do not match: refusing to {use} "
                             "(use the obook that made it, or build a new book)")


class EngineChanged(ObookError):
    """This obook's search differs from the one the book records: continuing would mix two engines'
    searches in one book."""


def require_engine(book, use: str) -> None:
    """Refuse to ``use`` a ``BookInfo`` (add games or expansions to it) with a search that differs
    from the one it records (``obook.search.provenance``), naming every difference. A build may
    adopt this obook's engine instead (``--allow-engine-change``); a worker never does."""
    differences = engine_differences(book.search, book.knowledge)
    if differences:
        raise EngineChanged(f"book {book.name!r}: refusing to {use} with this obook's engine: "
                            + "; ".join(differences[:5]) + (f"; and {len(differences) - 5} more" if len(differences) > 5 else "")
                            + " (build with --allow-engine-change to continue it with this engine, or build a new book)")


def engine_line(book) -> str:
    """The book's engine record in one line for people (the CLI, the SGF export, the service): its
    search, knowledge, whether this obook runs it, and the build settings beside the search."""
    return (describe_engine(book.search, book.knowledge) + (f"; seed salt {book.seed_salt}" if book.seed_salt else "")
            + (f"; opponents {book.opponents}" if book.opponents else "")
            + (f"; reply temperature {book.reply_temperature:g}"
               if book.expansion == "reach" and book.reply_temperature != 1.0 else ""))


class BookGameError(IllegalMoveError):
    """A stored or submitted game that the rules reject."""


def canonical_view(position: Position) -> tuple[int, list[int]]:
    """(canonical key, every symmetry that takes the position to it, smallest first)."""
    keys = np.zeros(N_SYMMETRIES, dtype=np.uint64)
    symmetric_keys(position.board, symmetry_maps(position.size), keys)
    best = keys.min()
    return int(best), [s for s in range(N_SYMMETRIES) if keys[s] == best]


def canonical_move(position: Position, point: int, symmetries: list[int]) -> int:
    """The book's name of ``point`` in ``position``: its smallest image under the symmetries that
    take the position to its canonical orientation."""
    if point == PASS:
        return PASS
    maps = symmetry_maps(position.size)
    return int(min(maps[s, point] for s in symmetries))


def record_images(size: int, moves: list[str] | tuple[str, ...]) -> list[str]:
    """The game records ("E5 G5", as the store writes moves) of ``moves`` (GTP vertices as
    ``format_vertex`` writes them) under each of the 8 symmetries, without repeats: a game that
    starts with any of them goes through the position these moves reach (or a symmetric copy)."""
    maps = symmetry_maps(size)
    points = [parse_vertex(v, size) for v in moves]
    images = {" ".join(format_vertex(p if p == PASS else int(maps[s, p]), size) for p in points)
              for s in range(N_SYMMETRIES)}
    return sorted(images)


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
    """Games, wins and draws that a game adds to each (position, move) of its first ``depth`` moves
    (all of them when ``depth`` is 0). ``winner`` is the game's outcome (``game_outcome``): "B" or
    "W" adds a game, and a win where the player who moved won; ``None``, a draw (jigo), adds a game
    and a draw for both players (half a win each in the rules); ``UNSCORED`` adds the moves with
    no game at all (rows of 0 games: the book knows the move, no result counts). A position met
    twice in one game counts once."""
    return opening_record(size, komi, superko, moves, winner, None, depth)[0]


def opening_record(size: int, komi: float, superko: bool, moves: list[str] | tuple[str, ...],
                   winner: str | None, score: float | None, depth: int) -> tuple[Stats, Scores]:
    """``opening_statistics`` and, when the game's final score is known (``score``: Black's area
    score less komi; ``None`` for a resignation, a loss on time, an unscored seed), the score each
    (position, move) adds for the player who made the move: one scored game and ``score`` (Black
    moved) or ``-score``. Lookups show its mean per move."""
    position = Position(size=size, komi=komi, superko=superko)
    stats: Stats = {}
    scores: Scores = {}
    counted = score is not None and winner != UNSCORED
    played = moves if depth <= 0 else moves[:depth]
    for number, vertex in enumerate(played, start=1):
        key, symmetries = canonical_view(position)
        mover = "B" if position.to_move == BLACK else "W"
        try:
            point = position.point(vertex)
            move = canonical_move(position, point, symmetries)
            position.play(point)
        except IllegalMoveError as exc:
            raise BookGameError(f"move {number} ({vertex}): {exc}") from None
        if (key, move) in stats:
            continue
        if winner == UNSCORED:
            stats[key, move] = (0, 0, 0)
        elif winner is None:
            stats[key, move] = (1, 0, 1)
        else:
            stats[key, move] = (1, 1 if winner == mover else 0, 0)
        if counted:
            scores[key, move] = (1, float(score) if mover == "B" else -float(score))
    return stats, scores
