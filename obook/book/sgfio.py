"""SGF in and out of a book (sgfmill): seed games as individuals, the book as one game tree (a statistical
book's or a minimax book's: which one a book takes is its kind's choice, ``BookKind.export``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from sgfmill import sgf

from obook.book.keys import UNSCORED, engine_line, game_outcome, opening_record
from obook.book.lookup import book_lookup, minimax_lookup, score_as_result
from obook.book.rules import self_play_rule
from obook.errors import ObookError
from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import Position
from obook.go.sgf import SgfError, SgfRecord, read_sgf_collection
from obook.store.books import BookInfo
from obook.store.db import Store
from obook.store.games import insert_finished_game
from obook.store.minimax import node_reader
from obook.store.models import SEED
from obook.store.stats import rows_reader

SEED_ORIGIN = "s"

REFUSE, MOVES_ONLY, ACCEPT = "refuse", "moves-only", "accept"  # what to do with a result at another komi
WIN, DRAW, NOT_BOARD, NO_RESULT, UNKNOWN = "win", "draw", "not-board", "none", "unknown"  # kinds of RE value
UNSCORED_RESULT = "?"  # the stored result of a seed whose result does not count at the book's komi


def classify_result(result: str) -> tuple[str, str | None]:
    """(kind, winner) of an SGF RE value. Board results: "B+R", "W+Resign", "B+3.5", "W+" are a
    ``WIN`` for that colour; "0", "Draw", "Jigo" a ``DRAW``. Not board results: "B+T"/"B+Time"
    (time), "W+F"/"W+Forfeit" (forfeit) are ``NOT_BOARD``; "Void", "?" and no RE are ``NO_RESULT``;
    anything else is ``UNKNOWN``."""
    text = result.strip().upper()
    if text in ("0", "DRAW", "JIGO"):
        return DRAW, None
    if text in ("", "?", "VOID"):
        return NO_RESULT, None
    if len(text) >= 2 and text[0] in "BW" and text[1] == "+":
        margin = text[2:].strip()
        if margin in ("", "R", "RESIGN"):
            return WIN, text[0]
        if margin in ("T", "TIME", "F", "FORFEIT"):
            return NOT_BOARD, text[0]
        try:
            if float(margin) > 0:
                return WIN, text[0]
        except ValueError:
            pass
    return UNKNOWN, None


def result_score(result: str) -> float | None:
    """Black's final score (less komi) that a board result states: "B+3.5" 3.5, "W+2" -2, a draw
    0; ``None`` for a win by resignation, on time or by forfeit, or no result."""
    kind, winner = classify_result(result)
    if kind == DRAW:
        return 0.0
    if kind != WIN:
        return None
    try:
        margin = float(result.strip()[2:])
    except ValueError:
        return None
    return margin if winner == "B" else -margin


@dataclass
class SeedGame:
    path: str  # the file; in a collection, with the game's number
    moves: list[str]
    winner: str | None  # as stored: "B", "W", or None (a draw when ``result`` is "0", else unscored)
    result: str  # as stored
    komi: float | None  # the record's komi (None: no KM)
    rules: str = ""  # the record's RU
    scored: bool = True
    why: str = ""  # why it is unscored, or what was accepted


@dataclass
class SeedEntry:
    file: str
    game: str  # the file, or "file (game n of m)"
    status: str  # "added", "unscored" (added without a result), "duplicate", "skipped"
    why: str = ""
    game_id: int | None = None
    komi: float | None = None
    rules: str = ""


@dataclass
class SeedReport:
    entries: list[SeedEntry] = field(default_factory=list)

    def _of(self, *statuses: str) -> list[SeedEntry]:
        return [e for e in self.entries if e.status in statuses]

    @property
    def added(self) -> list[int]:
        """Ids of the games added, with or without a result."""
        return [e.game_id for e in self._of("added", "unscored")]

    @property
    def scored(self) -> list[int]:
        return [e.game_id for e in self._of("added")]

    @property
    def unscored(self) -> list[tuple[str, str]]:
        return [(e.game, e.why) for e in self._of("unscored")]

    @property
    def duplicates(self) -> list[str]:
        return [e.game for e in self._of("duplicate")]

    @property
    def skipped(self) -> list[tuple[str, str]]:
        return [(e.game, e.why) for e in self._of("skipped")]

    def by_file(self) -> dict[str, list[SeedEntry]]:
        files: dict[str, list[SeedEntry]] = {}
        for e in self.entries:
            files.setdefault(e.file, []).append(e)
        return files


class KomiMismatch(ObookError):
    """Seed games whose result was reached at another komi than the book's."""


def _komi_text(komi: float | None) -> str:
    return "no komi (KM)" if komi is None else f"komi {komi:g}"


def read_seeds(path: Path, book: BookInfo, komi_policy: str = REFUSE) -> list[SeedGame | tuple[str, str]]:
    """The games of one file (every game of a collection): each a ``SeedGame``, or (game, why) when it
    cannot be one. Other board sizes and unreadable files are errors; a result at another komi is
    kept as a ``SeedGame`` whose ``why`` starts with "komi" under ``REFUSE`` (``seed_book`` refuses)."""
    try:
        records = read_sgf_collection(path, superko=book.superko)
    except SgfError as exc:
        raise ObookError(str(exc)) from None
    out: list[SeedGame | tuple[str, str]] = []
    for number, record in enumerate(records, start=1):
        name = str(path) if len(records) == 1 else f"{path} (game {number} of {len(records)})"
        out.append(_seed_of(record, name, book, komi_policy))
    return out


def _seed_of(record: SgfRecord, name: str, book: BookInfo, komi_policy: str) -> SeedGame | tuple[str, str]:
    position = record.position
    if position.size != book.size:
        raise ObookError(f"{name}: board size {position.size}, but book {book.name!r} is {book.size}x{book.size}")
    if position.setup_black or position.setup_white:
        return name, "has setup or handicap stones"
    if not position.moves:
        return name, "no moves"
    expected = BLACK
    for number, (color, _) in enumerate(position.moves, start=1):
        if color != expected:
            return name, f"move {number} is out of turn"
        expected = WHITE if expected == BLACK else BLACK
    moves = [position.vertex(p) for _, p in position.moves]
    komi = position.komi if record.has_komi else None
    result = record.result.strip()
    kind, winner = classify_result(result)
    if kind == NOT_BOARD:
        how = "time" if result.upper()[2:].startswith("T") else "forfeit"
        return SeedGame(name, moves, None, result[:20], komi, record.rules, False,
                        f"RE[{result}] is a win on {how}, not a board result")
    if kind in (NO_RESULT, UNKNOWN):
        why = "no result" if not result else (f"RE[{result}] is no result" if kind == NO_RESULT
                                               else f"RE[{result}] is not a result obook reads")
        return SeedGame(name, moves, None, result[:20] or UNSCORED_RESULT, komi, record.rules, False, why)
    stored = "0" if kind == DRAW else result[:20]
    if komi == book.komi:
        return SeedGame(name, moves, winner, stored, komi, record.rules)
    at = f"RE[{result}] at {_komi_text(komi)}, book komi {book.komi:g}"
    if komi_policy == ACCEPT:
        return SeedGame(name, moves, winner, stored, komi, record.rules, True, f"{at}: accepted (--accept-komi)")
    if komi_policy == MOVES_ONLY:
        return SeedGame(name, moves, None, UNSCORED_RESULT, komi, record.rules, False,
                        f"{at}: moves only (--moves-only)")
    return SeedGame(name, moves, winner, stored, komi, record.rules, True, f"komi: {at}")


def seed_book(store: Store, book: BookInfo, paths: list[Path], komi_policy: str = REFUSE) -> SeedReport:
    """Add SGF games (every game of each file) as finished individuals of source "seed". Every file
    is read and checked before anything is written; then all the games go in one transaction. A
    game already in the book (same moves) is not added twice.

    A game counts its result only when the result is a board result (a win by resignation or by
    points, or a draw) reached at the book's komi. A result at another komi (or with no KM) is
    refused, nothing written (``KomiMismatch`` names the files and both komis), unless
    ``komi_policy`` is ``MOVES_ONLY`` (those games are added as unscored seeds: their moves, no
    result) or ``ACCEPT`` (their results count as they are). A win on time or by forfeit, a void or
    unknown result, or none, is added unscored and reported."""
    if komi_policy not in (REFUSE, MOVES_ONLY, ACCEPT):
        raise ObookError(f"komi policy {komi_policy!r}: choose {REFUSE}, {MOVES_ONLY} or {ACCEPT}")
    report = SeedReport()
    games: list[tuple[str, SeedGame]] = []
    for path in paths:
        for seed in read_seeds(Path(path), book, komi_policy):
            if isinstance(seed, tuple):
                report.entries.append(SeedEntry(str(path), seed[0], "skipped", seed[1]))
            else:
                games.append((str(path), seed))
    refused = [g for _, g in games if g.why.startswith("komi: ")]
    if refused:
        shown = "; ".join(f"{g.path}: {g.why[len('komi: '):]}" for g in refused[:3])
        more = f"; and {len(refused) - 3} more" if len(refused) > 3 else ""
        raise KomiMismatch(f"{len(refused)} game(s) have a result at another komi than book {book.name!r}: {shown}{more}. "
                           "Nothing was added: --moves-only adds their moves without the result, "
                           "--accept-komi counts the results as they are")
    with store.write() as conn:
        for file, game in games:
            outcome = game_outcome(game.winner, game.result) if game.scored else UNSCORED
            score = result_score(game.result) if game.scored else None
            stats, scores = opening_record(book.size, book.komi, book.superko, game.moves, outcome, score, book.depth)
            fingerprint = hashlib.sha256(f"{book.size}|{' '.join(game.moves)}".encode()).hexdigest()
            game_id = insert_finished_game(conn, book.id, game.moves, SEED_ORIGIN * len(game.moves), game.result,
                                           game.winner, score, SEED, fingerprint, stats, scores)
            status = "duplicate" if game_id is None else ("added" if game.scored else "unscored")
            report.entries.append(SeedEntry(file, game.path, status, game.why, game_id, game.komi, game.rules))
    return report


# ---- export ----------------------------------------------------------------------------------------


def _sgf_point(point: int, size: int) -> tuple[int, int] | None:
    if point == PASS:
        return None
    width = size + 2
    return point // width - 1, point % width - 1


def _book_tree(book: BookInfo, header: str, moves_of, depth: int | None, max_nodes: int) -> tuple[bytes, int]:
    """The SGF game tree of a book, written depth first from the empty board: ``moves_of(position,
    mover)`` lists a position's book moves as (point, comment, Black's win rate), in the order to
    write them; ``depth`` (None or 0: none) and ``max_nodes`` bound the tree."""
    game = sgf.Sgf_game(book.size)
    root = game.get_root()
    root.set("KM", float(book.komi))
    root.set("RU", "Chinese")
    root.set("GN", f"obook {book.name}")
    root.set("C", header)
    nodes = 0
    stack = [(root, Position(size=book.size, komi=book.komi, superko=book.superko))]
    while stack and nodes < max_nodes:
        parent, position = stack.pop()
        if depth and len(position.moves) >= depth:
            continue
        mover = "b" if position.to_move == BLACK else "w"
        children = []
        for point, comment, black_rate in moves_of(position, mover):
            if nodes >= max_nodes:
                break
            node = parent.new_child()
            node.set_move(mover, _sgf_point(point, book.size))
            node.set("C", comment)
            node.set_raw("SBKV", f"{100 * black_rate:.1f}".encode())
            nodes += 1
            child = position.copy()
            child.play(point)
            children.append((node, child))
        stack.extend(reversed(children))
    return game.serialise(), nodes


def statistical_export_depth(book: BookInfo, depth: int | None) -> int:
    """The depth a statistical book's export reaches: ``depth`` within the book's own (0: no cap;
    ``max_nodes`` bounds the tree)."""
    if depth is None or depth <= 0:
        return book.depth
    return min(depth, book.depth) if book.depth > 0 else depth


def export_statistical_book(store: Store, book: BookInfo, min_games: int = 1, depth: int | None = None,
                            max_nodes: int = 100_000) -> tuple[bytes, int]:
    """A statistical book as one SGF game tree: each node a book move, most played first, with
    games, wins and win rate in a comment and Sabaki's SBKV (Black's winning chance in percent).
    Returns the SGF and the number of move nodes. (Every book's export: ``BookKind.export``.)"""
    depth = statistical_export_depth(book, depth)
    rule = self_play_rule(book).summary(book)
    header = (f"obook opening book {book.name!r}: {book.algorithm.upper()} ({rule}), "
              f"depth {book.depth or 'unlimited'}, komi {book.komi:g}. Each move: games, wins (and draws) "
              f"of its player, win rate (a draw counts half). Engine: {engine_line(book)}.")
    with store.read() as conn:
        rows = rows_reader(conn, book.id)

        def moves_of(position, mover):
            for c in book_lookup(book, position, rows).candidates:
                if c.games < min_games:
                    continue
                drawn = f", draws {c.draws}" if c.draws else ""
                yield (c.point, f"games {c.games}, wins {c.wins}{drawn}, win rate {100 * c.winrate:.1f}% for "
                                f"{'Black' if mover == 'b' else 'White'}",
                       c.winrate if mover == "b" else 1.0 - c.winrate)

        return _book_tree(book, header, moves_of, depth, max_nodes)


def export_minimax_book(store: Store, book: BookInfo, depth: int | None = None,
                        max_nodes: int = 100_000) -> tuple[bytes, int]:
    """A minimax book as one SGF game tree: each node a book move, best lower bound first, with its
    minimax value and bounds in a comment and SBKV (Black's win percent by the minimax value); the
    move playing from the book takes is marked. A transposition is written under every path."""
    header = (f"obook opening book {book.name!r}: MINIMAX (search values backed up by minimax), komi "
              f"{book.komi:g}. Each move: its minimax value for its player with the 95% bounds, its prior, its score "
              "backed up with the value (as a result, B+3.5), the mean final score of its search for its player. "
              f"Engine: {engine_line(book)}.")
    with store.read() as conn:
        read = node_reader(conn, book.id)

        def moves_of(position, mover):
            found = minimax_lookup(book, position, read)
            for c in found.candidates:
                played = " (the book plays it)" if found.usage is not None and c.point == found.usage.point else ""
                backed_up = score_as_result(c.backed_up_score, mover == "b")
                score = f", score {backed_up}" if backed_up is not None else ""
                score += f", mean score {c.score_mean:+.1f}" if c.score_mean is not None else ""
                yield (c.point, f"minimax {100 * c.value:.1f}% [{100 * c.lcb:.1f}, {100 * c.ucb:.1f}] for "
                                f"{'Black' if mover == 'b' else 'White'}, prior {100 * c.prior:.1f}%{score}{played}",
                       c.value if mover == "b" else 1.0 - c.value)

        return _book_tree(book, header, moves_of, depth, max_nodes)
