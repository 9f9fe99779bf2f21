"""SGF in and out of a book (sgfmill): seed games as individuals, the book as one game tree."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from sgfmill import sgf

from obook.book.keys import opening_statistics
from obook.book.lookup import book_lookup
from obook.errors import ObookError
from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import Position
from obook.go.sgf import SgfError, read_sgf
from obook.store.books import BookInfo
from obook.store.db import Store
from obook.store.games import insert_finished_game
from obook.store.models import SEED
from obook.store.stats import rows_reader

SEED_ORIGIN = "s"


@dataclass
class SeedGame:
    path: str
    moves: list[str]
    winner: str | None
    result: str
    komi: float


@dataclass
class SeedReport:
    added: list[int] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, why)


def winner_of(result: str) -> tuple[str | None, bool]:
    """(winner, known?) from an SGF RE value: "B+R" -> ("B", True), "0"/"Draw" -> (None, True)."""
    text = result.strip().upper()
    if text.startswith("B+"):
        return "B", True
    if text.startswith("W+"):
        return "W", True
    if text in ("0", "DRAW", "JIGO"):
        return None, True
    return None, False


def read_seed(path: Path, book: BookInfo) -> SeedGame | str:
    """A seed game, or the reason it cannot be one (other board sizes are errors, not reasons)."""
    try:
        record = read_sgf(path, superko=book.superko)
    except SgfError as exc:
        raise ObookError(str(exc)) from None
    position = record.position
    if position.size != book.size:
        raise ObookError(f"{path}: board size {position.size}, but book {book.name!r} is {book.size}x{book.size}")
    if position.setup_black or position.setup_white:
        return "has setup or handicap stones"
    winner, known = winner_of(record.result)
    if not known:
        return f"no usable result (RE[{record.result}])" if record.result else "no result"
    if not position.moves:
        return "no moves"
    expected = BLACK
    for number, (color, _) in enumerate(position.moves, start=1):
        if color != expected:
            return f"move {number} is out of turn"
        expected = WHITE if expected == BLACK else BLACK
    moves = [position.vertex(p) for _, p in position.moves]
    return SeedGame(str(path), moves, winner, record.result, position.komi)


def seed_book(store: Store, book: BookInfo, paths: list[Path]) -> SeedReport:
    """Add SGF games as finished individuals of source "seed". Every file is read and checked before
    anything is written; then all the games go in one transaction. A game already in the book
    (same moves) is not added twice."""
    report = SeedReport()
    games: list[SeedGame] = []
    for path in paths:
        seed = read_seed(Path(path), book)
        if isinstance(seed, str):
            report.skipped.append((str(path), seed))
        else:
            games.append(seed)
    with store.write() as conn:
        for game in games:
            stats = opening_statistics(book.size, book.komi, book.superko, game.moves, game.winner, book.depth)
            fingerprint = hashlib.sha256(f"{book.size}|{' '.join(game.moves)}".encode()).hexdigest()
            game_id = insert_finished_game(conn, book.id, game.moves, SEED_ORIGIN * len(game.moves), game.result,
                                             game.winner, None, SEED, fingerprint, stats)
            if game_id is None:
                report.duplicates.append(game.path)
            else:
                report.added.append(game_id)
    return report


# ---- export ----------------------------------------------------------------------------------------


def _sgf_point(point: int, size: int) -> tuple[int, int] | None:
    if point == PASS:
        return None
    width = size + 2
    return point // width - 1, point % width - 1


def export_book(store: Store, book: BookInfo, min_games: int = 1, depth: int | None = None,
                max_nodes: int = 100_000) -> tuple[bytes, int]:
    """The book as one SGF game tree: each node a book move, most played first, with games, wins
    and win rate in a comment and Sabaki's SBKV (Black's winning chance in percent). Returns the
    SGF and the number of move nodes."""
    depth = book.depth if depth is None else min(depth, book.depth)
    game = sgf.Sgf_game(book.size)
    root = game.get_root()
    root.set("KM", float(book.komi))
    root.set("RU", "Chinese")
    root.set("GN", f"obook {book.name}")
    root.set("C", f"obook opening book {book.name!r}: {book.algorithm.upper()} (threshold {book.threshold:g}), "
                  f"depth {book.depth}, komi {book.komi:g}. Each move: games, wins of its player, win rate.")
    nodes = 0
    with store.read() as conn:
        rows = rows_reader(conn, book.id)
        stack = [(root, Position(size=book.size, komi=book.komi, superko=book.superko))]
        while stack and nodes < max_nodes:
            parent, position = stack.pop()
            if len(position.moves) >= depth:
                continue
            mover = "b" if position.to_move == BLACK else "w"
            children = []
            for c in book_lookup(book, position, rows).candidates:
                if c.games < min_games or nodes >= max_nodes:
                    continue
                node = parent.new_child()
                node.set_move(mover, _sgf_point(c.point, book.size))
                black_rate = c.winrate if mover == "b" else 1.0 - c.winrate
                node.set("C", f"games {c.games}, wins {c.wins}, win rate {100 * c.winrate:.1f}% for "
                              f"{'Black' if mover == 'b' else 'White'}")
                node.set_raw("SBKV", f"{100 * black_rate:.1f}".encode())
                nodes += 1
                child = position.copy()
                child.play(c.point)
                children.append((node, child))
            stack.extend(reversed(children))
    return game.serialise(), nodes
