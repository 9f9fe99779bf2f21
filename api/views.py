"""From obook's objects to the service's response bodies (no SQL here beyond ``progress``, which
reads everything the dashboard shows in one transaction)."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
from urllib.parse import quote

import numpy as np

from api.schemas import (
    BookOut,
    BookProgress,
    GameOut,
    GrowthPointOut,
    InFlightGame,
    LookupOut,
    MoveOut,
    ProgressOut,
    RatePointOut,
    SetAsideGame,
    Stone,
    Totals,
    UnitGrowthPointOut,
    UnitRatePointOut,
    WorkerOut,
)
from obook.book.keys import BookGameError, engine_line, replay
from obook.book.kinds import book_kind
from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import Position
from obook.store import reporting as r
from obook.store.books import BookInfo
from obook.store.db import Store
from obook.store.jobs import UnitCounts
from obook.store.games import RECORD_INDEX_CHARS, GameRow, game_counts
from obook.store.models import FINISHED, IN_PROGRESS, utcnow
from obook.store.workers import live_workers


def color_name(color: int) -> str:
    return "B" if color == BLACK else "W"


def stones(position: Position) -> list[Stone]:
    """The stones on the board, each with the number of the move that put it there."""
    placed: dict[int, int] = {}
    for number, (_, point) in enumerate(position.moves, start=1):
        if point != PASS:
            placed[point] = number
    out = []
    board = position.board.color
    for color in (BLACK, WHITE):
        for point in np.flatnonzero(board == color).tolist():  # border cells hold neither colour
            out.append(Stone(vertex=position.vertex(point), color=color_name(color), move=placed.get(point, 0)))
    out.sort(key=lambda s: s.move)
    return out


def lookup_out(document: dict, board: list[Stone] | list[dict]) -> LookupOut:
    """A lookup document in the common form (``BookKind.answer_document``) as the service's answer.
    The candidates go in as dicts, validated with the answer in one call (as the stones:
    ``api.service.stone_dicts``) rather than a ``CandidateOut`` each (65 -> 53 us with a minimax
    book's document, six candidates on average)."""
    add_games_urls(document)
    return LookupOut(**document, stones=board)


def add_games_urls(document: dict) -> None:
    """Give each candidate of a lookup document the games list of the line through it (``through``:
    the moves so far and the candidate), unless the line is longer than the games index covers. A
    candidate no game went through (a minimax book's) has no games list."""
    line = ",".join(document["moves"])
    base = f"/v1/books/{quote(document['book'], safe='')}/games?through={line}{',' if line else ''}"
    for candidate in document["candidates"]:
        if not candidate["games"]:
            continue
        fits = len(line) + bool(line) + len(candidate["move"]) < RECORD_INDEX_CHARS
        candidate["games_url"] = base + candidate["move"] if fits else None


def move_out(found: LookupOut) -> MoveOut:
    """A bot's answer from the lookup document: the usage rule's move and its figures."""
    chosen = next((c for c in found.candidates if c.usage), None)
    return MoveOut(book=found.book, moves=found.moves, to_move=found.to_move, in_book=found.in_book,
                   move=found.usage_move, usage_move=found.usage_move, coevolution_move=found.coevolution_move,
                   games=chosen.games if chosen else 0, wins=chosen.wins if chosen else 0,
                   winrate=chosen.winrate if chosen else None, games_url=chosen.games_url if chosen else None)


def export_url(book: BookInfo) -> str:
    return f"/v1/books/{quote(book.name, safe='')}/export.sgf"


def book_out(counts: r.BookCounts, units: UnitCounts) -> BookOut:
    """A book as ``/v1/books`` lists it (``units``: its units of work by state, ``BookKind.unit_counts``)."""
    b = counts.book
    kind = book_kind(b)
    return BookOut(name=b.name, size=b.size, komi=b.komi, rules=b.rules, algorithm=b.algorithm,
                   threshold=b.threshold, depth=b.depth, search=b.search, seconds_per_move=b.seconds_per_move,
                   engine_version=b.engine_version, knowledge=b.knowledge,
                   engine=engine_line(b), seed_salt=b.seed_salt,
                   created_at=b.created_at, games_finished=counts.finished,
                   games_in_progress=counts.in_progress, games_abandoned=counts.abandoned,
                   kind=kind.name, unit=kind.unit, units_done=units.done, units_open=units.open,
                   units_set_aside=units.set_aside, export_url=export_url(b))


def game_out(game: GameRow, book: str) -> GameOut:
    return GameOut(id=game.id, book=book, status=game.status, moves=list(game.moves), n_moves=game.n_moves,
                   origins=game.origins, result=game.result, winner=game.winner, score=game.score,
                   source=game.source, lease_owner=game.lease_owner, lease_until=game.lease_until,
                   created_at=game.created_at, updated_at=game.updated_at, finished_at=game.finished_at)


def unit_in_flight(unit_id: int, moves: list[str], n_moves: int, owner, updated_at, book: BookInfo) -> InFlightGame:
    """A unit someone works on now (a game or an expansion), shown as its position. A stored line
    that no longer replays is shown without stones, not allowed to fail the whole progress page."""
    try:
        position = replay(book.size, book.komi, book.superko, moves)
        board, to_move = stones(position), color_name(position.to_move)
    except BookGameError:
        board, to_move = [], "B" if len(moves) % 2 == 0 else "W"
    return InFlightGame(id=unit_id, moves=moves, n_moves=n_moves, to_move=to_move, lease_owner=owner,
                        updated_at=updated_at, stones=board)


def book_progress(c: r.BookCounts, built, games_last_hour: int) -> BookProgress:
    """One book's build on the progress page (``built``: ``BookKind.progress``), in its own unit; a
    statistical book's series also fill the older game fields (``rate``, ``growth``)."""
    book, units, kind = c.book, built.units, book_kind(c.book)
    unit_rate = [UnitRatePointOut(start=p.start, end=p.end, units=p.units, per_hour=round(p.per_hour, 3))
                 for p in built.rate]
    unit_growth = [UnitGrowthPointOut(at=p.at, done=p.finished) for p in built.growth]
    games = built.games_series
    return BookProgress(
        name=book.name, size=book.size, algorithm=book.algorithm, games_finished=c.finished,
        games_in_progress=c.in_progress, games_last_hour=games_last_hour, games_per_hour=float(games_last_hour),
        rate=[RatePointOut(start=p.start, end=p.end, games=p.units, per_hour=p.per_hour) for p in unit_rate]
        if games else [],
        growth=[GrowthPointOut(at=p.at, finished=p.done) for p in unit_growth] if games else [],
        in_flight=[unit_in_flight(u.id, u.moves, u.n_moves, u.owner, u.updated_at, book) for u in built.in_flight],
        in_flight_total=built.in_flight_total,
        games_set_aside=c.set_aside,
        set_aside=[SetAsideGame(id=i, failures=n, reason=why) for i, n, why in built.set_aside],
        games_at_move_cap=built.at_move_cap,
        expansions_done=None if games else units.done,
        expansions_pending=None if games else units.open,
        expansions_set_aside=None if games else units.set_aside,
        kind=kind.name, unit=kind.unit, units_done=units.done, units_open=units.open,
        units_set_aside=units.set_aside, units_last_hour=sum(p.units for p in unit_rate),
        unit_rate=unit_rate, unit_growth=unit_growth, export_url=export_url(book))


def progress(store: Store, limit: int, offset: int, games_limit: int, workers_limit: int,
             worker_seconds: float = 60.0) -> ProgressOut:
    now = utcnow()
    hour_ago = now - dt.timedelta(hours=1)
    with store.read() as conn:
        total_books = r.count_books(conn)
        page = r.books_with_counts(conn, limit, offset)
        counts = game_counts(conn)
        last_hour_all = r.finished_since(conn, hour_ago)
        expansions = r.expansions_done(conn)
        books = [(c, book_kind(c.book).progress(conn, c, now, games_limit)) for c in page]
        workers = live_workers(conn, worker_seconds, workers_limit)
        live = r.count_live_workers(conn, worker_seconds)
        names = r.book_names(conn, sorted({w["book_id"] for w in workers if w["book_id"] is not None}))
    last_hour_total = sum(last_hour_all.values())
    totals = Totals(books=total_books,
                    games_finished=sum(v.get(FINISHED, 0) for v in counts.values()),
                    games_in_progress=sum(v.get(IN_PROGRESS, 0) for v in counts.values()),
                    games_last_hour=last_hour_total, games_per_hour=float(last_hour_total), live_workers=live,
                    expansions_done=expansions)
    out_books = [book_progress(c, built, last_hour_all.get(c.book.id, 0)) for c, built in books]
    out_workers = [WorkerOut(id=w["id"], host=w["host"], pid=w["pid"], kind=w["kind"],
                             book=names.get(w["book_id"]) if w["book_id"] is not None else None,
                             game_id=w["game_id"], moves=w["moves"].split(), started_at=w["started_at"],
                             last_seen=w["last_seen"]) for w in workers]
    return ProgressOut(total=total_books, limit=limit, offset=offset, generated_at=now, totals=totals,
                       books=out_books, workers=out_workers)


# ---- what anonymous clients see ----------------------------------------------------------------


def pseudonym(owner: str | None, key: bytes) -> str | None:
    """A lease owner or worker name as anonymous clients see it: its kind (``celery``, ``build1``,
    ``token``) and a keyed digest, so that the dashboard can still tell players apart and match a
    game to its worker, but nobody learns a host, a pid or a grid token (with which a task injected
    into the broker could take the game)."""
    if owner is None:
        return None
    parts = owner.split(":")
    kind = "token" if owner.startswith("q:") else (parts[2] if len(parts) >= 3 else "player")
    return f"{kind}:{hmac.new(key, owner.encode(), hashlib.sha256).hexdigest()[:12]}"


def redact_game(game: GameOut, key: bytes) -> GameOut:
    return game.model_copy(update={"lease_owner": pseudonym(game.lease_owner, key)})


def public_reason(reason: str | None) -> str | None:
    """A failure as anonymous clients see it: the error's type only. Its message may hold SQL, a
    host, a lease owner or a path (the admin token shows it whole)."""
    if reason is None:
        return None
    kind = reason.split(":", 1)[0].strip()
    return kind if kind.isidentifier() else "error"


def redact_progress(out: ProgressOut, key: bytes) -> ProgressOut:
    books = [b.model_copy(update={
        "in_flight": [g.model_copy(update={"lease_owner": pseudonym(g.lease_owner, key)}) for g in b.in_flight],
        "set_aside": [a.model_copy(update={"reason": public_reason(a.reason)}) for a in b.set_aside],
    }) for b in out.books]
    workers = [w.model_copy(update={"id": pseudonym(w.id, key), "host": None, "pid": None}) for w in out.workers]
    return out.model_copy(update={"books": books, "workers": workers})
