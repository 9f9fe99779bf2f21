"""Games and their leases, each a guarded statement so that a duplicate or late caller (a
redelivered task, a worker that lost its lease, a second builder) changes nothing it should not.

- a game is a unit of leased work (``obook.store.jobs``: claim, renew, hand on, fail, set aside);
  appending a move checks the owner and the number of moves already stored;
- finishing flips ``in_progress`` to ``finished`` with a guarded ``UPDATE`` and adds the game's
  statistics in the same transaction, so a game is counted once or not at all; that transaction
  commits synchronously even where moves do not (a grid worker on PostgreSQL).

``obook.store.leases.GameLease`` is how a player uses these statements and those of the jobs.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import Connection, func, literal, literal_column, select, tuple_, update

from obook.store.books import lock_book
from obook.store.db import as_utc, db_time, dialect_insert, synchronous_commit, to_signed
from obook.store.models import FINISHED, IN_PROGRESS, SELFPLAY, SET_ASIDE, Game, GameSlice, utcnow
from obook.store.stats import add_stats

GAMES = Game.__table__
SLICES = GameSlice.__table__

# ``ix_games_book_record`` indexes this many first characters of a finished game's moves (about 50
# moves on 19x19, 65 on 9x9: a whole record would exceed PostgreSQL's index entry limit); a ``through``
# line must be shorter, so that it is decided by the index alone
RECORD_INDEX_CHARS = 200


def record_start(dialect: str):
    """The indexed expression of ``ix_games_book_record``: the first ``RECORD_INDEX_CHARS``
    characters of the moves, compared byte by byte (collation "C" on PostgreSQL, SQLite's default),
    so that a line's games are one range of the index."""
    start = func.substr(GAMES.c.moves, literal_column("1"), literal_column(str(RECORD_INDEX_CHARS)))
    return start.collate("C") if dialect == "postgresql" else start


@dataclass(frozen=True)
class GameRow:
    id: int
    book_id: int
    moves: tuple[str, ...]
    origins: str
    status: str
    result: str | None
    winner: str | None
    score: float | None
    source: str
    seed: int
    lease_owner: str | None
    lease_until: dt.datetime | None
    created_at: dt.datetime
    updated_at: dt.datetime
    finished_at: dt.datetime | None

    @property
    def n_moves(self) -> int:
        return len(self.moves)


def game_from_row(row) -> GameRow:
    m = row._mapping
    return GameRow(id=m["id"], book_id=m["book_id"], moves=tuple(m["moves"].split()), origins=m["origins"],
                   status=m["status"], result=m["result"], winner=m["winner"], score=m["score"], source=m["source"],
                   seed=m["seed"], lease_owner=m["lease_owner"], lease_until=as_utc(m["lease_until"]),
                   created_at=as_utc(m["created_at"]), updated_at=as_utc(m["updated_at"]),
                   finished_at=as_utc(m["finished_at"]))



def game_counts(conn: Connection, book_id: int | None = None, source: str | None = None) -> dict[int, dict[str, int]]:
    """{book id: {status: number of games}}, of one source (self-play, seed) or all."""
    query = select(GAMES.c.book_id, GAMES.c.status, func.count()).group_by(GAMES.c.book_id, GAMES.c.status)
    if book_id is not None:
        query = query.where(GAMES.c.book_id == book_id)
    if source is not None:
        query = query.where(GAMES.c.source == source)
    counts: dict[int, dict[str, int]] = {}
    for bid, status, n in conn.execute(query):
        counts.setdefault(bid, {})[status] = n
    return counts


def top_up_games(conn: Connection, book_id: int, target: int, seeds: list[int]) -> list[int]:
    """Create self-play games until finished + in-progress + set-aside self-play games reach
    ``target`` (seed games do not count; a game set aside is not replaced, so that a bug that
    poisons every game ends the build instead of feeding it for ever); returns the new ids. Safe
    against concurrent callers: the count and the inserts happen under the book's lock."""
    lock_book(conn, book_id)
    counts = game_counts(conn, book_id, SELFPLAY).get(book_id, {})
    missing = target - counts.get(FINISHED, 0) - counts.get(IN_PROGRESS, 0) - counts.get(SET_ASIDE, 0)
    created = []
    now = utcnow()
    for seed in seeds[: max(missing, 0)]:
        created.append(conn.execute(GAMES.insert().values(
            book_id=book_id, moves="", n_moves=0, origins="", status=IN_PROGRESS, source=SELFPLAY,
            seed=to_signed(seed), created_at=now, updated_at=now)).inserted_primary_key[0])
    return created


def get_game(conn: Connection, game_id: int) -> GameRow | None:
    row = conn.execute(select(GAMES).where(GAMES.c.id == game_id)).one_or_none()
    return game_from_row(row) if row is not None else None


def count_search(conn: Connection, game_id: int, owner: str) -> bool:
    """One more mutation search started on ``game_id`` by ``owner`` (committed before the search
    starts). False, with nothing counted, when ``owner`` no longer holds the game: a player that
    was frozen past its lease learns it here, before it spends a search."""
    result = conn.execute(update(GAMES).where(
        GAMES.c.id == game_id, GAMES.c.lease_owner == owner, GAMES.c.status == IN_PROGRESS,
    ).values(searches=GAMES.c.searches + 1))
    return result.rowcount == 1


def append_move(conn: Connection, game: GameRow, owner: str, vertex: str, origin: str,
                lease_seconds: float, count_search: bool = False) -> GameRow | None:
    """Store one more move of ``game`` (as it was read) and renew the lease; ``count_search``: the
    player starts a search for the next move at once (see ``count_search``). ``None`` when the game
    changed meanwhile (another player holds it, or the move is already stored): the caller stops."""
    moves = game.moves + (vertex,)
    counted = {"searches": GAMES.c.searches + 1} if count_search else {}
    updated = conn.execute(update(GAMES).where(
        GAMES.c.id == game.id, GAMES.c.status == IN_PROGRESS, GAMES.c.n_moves == game.n_moves,
        GAMES.c.lease_owner == owner,
    ).values(moves=" ".join(moves), n_moves=len(moves), origins=game.origins + origin, updated_at=db_time(conn),
             lease_until=db_time(conn, lease_seconds), **counted).returning(GAMES.c.updated_at)).scalar_one_or_none()
    if updated is None:
        return None
    return GameRow(**{**game.__dict__, "moves": moves, "origins": game.origins + origin, "updated_at": as_utc(updated)})


def record_slice(conn: Connection, game_id: int, first_move: int, worker_id: str) -> None:
    """``worker_id`` writes ``game_id``'s moves from ``first_move`` (1-based) on (``game_slices``); a
    move number written again (a slice lost with its worker) is the new writer's."""
    conn.execute(dialect_insert(conn)(SLICES).values(game_id=game_id, first_move=first_move, worker_id=worker_id,
                                                     written_at=db_time(conn)).on_conflict_do_update(
        index_elements=[SLICES.c.game_id, SLICES.c.first_move],
        set_={"worker_id": worker_id, "written_at": db_time(conn)}))


def finish_game(conn: Connection, game: GameRow, owner: str | None, result: str, winner: str | None,
                score: float | None, stats: dict[tuple[int, int], tuple[int, int, int]],
                status: str = FINISHED, scores: dict[tuple[int, int], tuple[int, float]] | None = None,
                finished_by: str | None = None) -> bool:
    """Close ``game`` (as read, with exactly its moves) and add its statistics (``scores``: its
    final score per position, ``obook.book.keys.opening_record``), in the caller's
    transaction, which commits synchronously (``synchronous_commit``: a grid worker's moves do not
    wait for the disk, its finishes do). False, with nothing written, when the game was already
    closed or has changed."""
    synchronous_commit(conn)
    guard = [GAMES.c.id == game.id, GAMES.c.status == IN_PROGRESS, GAMES.c.n_moves == game.n_moves]
    if owner is not None:
        guard.append(GAMES.c.lease_owner == owner)
    now = db_time(conn)  # not the caller's clock: a worker's clock minutes off would misdate the book's rates
    done = conn.execute(update(GAMES).where(*guard).values(
        status=status, result=result, winner=winner, score=score, finished_at=now, updated_at=now,
        lease_owner=None, lease_until=None, finished_by=finished_by))
    if done.rowcount != 1:
        return False
    if status == FINISHED:
        add_stats(conn, game.book_id, stats, scores)
    return True


def insert_finished_game(conn: Connection, book_id: int, moves: list[str], origins: str, result: str,
                         winner: str | None, score: float | None, source: str, fingerprint: str | None,
                         stats: dict[tuple[int, int], tuple[int, int, int]],
                         scores: dict[tuple[int, int], tuple[int, float]] | None = None) -> int | None:
    """A game that arrives finished (a seed): row and statistics together; ``None`` when a game with
    the same fingerprint is already in the book."""
    if fingerprint is not None:
        exists = conn.execute(select(GAMES.c.id).where(GAMES.c.book_id == book_id,
                                                       GAMES.c.fingerprint == fingerprint)).first()
        if exists is not None:
            return None
    now = utcnow()
    game_id = conn.execute(GAMES.insert().values(
        book_id=book_id, moves=" ".join(moves), n_moves=len(moves), origins=origins, status=FINISHED, result=result,
        winner=winner, score=score, source=source, seed=0, fingerprint=fingerprint, created_at=now, updated_at=now,
        finished_at=now)).inserted_primary_key[0]
    add_stats(conn, book_id, stats, scores)
    return game_id


def list_games(conn: Connection, book_id: int, status: str | None = None, limit: int = 100, offset: int = 0,
               newest_first: bool = True, before_id: int | None = None) -> list[GameRow]:
    """A page of a book's games, most recently changed first (walking ``ix_games_book_updated``
    backwards: a deep page costs its offset, not a sort of the book) or in id order; with
    ``before_id`` the games of lower id, highest first (``before_id=0``: the first such page): a
    page that no change or new game can shift."""
    query = select(GAMES).where(GAMES.c.book_id == book_id)
    if status is not None:
        query = query.where(GAMES.c.status == status)
    if before_id is not None:
        if before_id > 0:
            query = query.where(GAMES.c.id < before_id)
        return [game_from_row(r) for r in conn.execute(query.order_by(GAMES.c.id.desc()).limit(limit).offset(offset))]
    order = GAMES.c.updated_at.desc() if newest_first else GAMES.c.id
    return [game_from_row(r) for r in conn.execute(query.order_by(order, GAMES.c.id.desc()).limit(limit).offset(offset))]


def games_through(conn: Connection, book_id: int, records: list[str], limit: int,
                  after: int = 0) -> list[GameRow] | None:
    """A page of the book's finished games whose moves start with one of ``records`` (move
    sequences "E5 G5" of one length, each shorter than ``RECORD_INDEX_CHARS``), ordered by their
    first ``RECORD_INDEX_CHARS`` characters then id, after the game ``after`` (0: from the first).

    Each record is one range of ``ix_games_book_record`` ("E5 G5" up to "E5 G5!": the game "E5 G5"
    and every "E5 G5 ...", not "E5 G51"), walked in the index's order from the cursor: a page reads
    at most ``limit`` rows per record, however many games the book has. ``None`` when ``after`` is
    not a finished game of the book."""
    start = record_start(conn.dialect.name)
    cursor = None
    if after:
        cursor = conn.execute(select(start, GAMES.c.id).where(
            GAMES.c.id == after, GAMES.c.book_id == book_id, GAMES.c.status == FINISHED)).first()
        if cursor is None:
            return None
    found: list[GameRow] = []
    for record in sorted(set(records)):
        low, high = record, record + "!"  # "!" is the first character after the space between moves
        if cursor is not None and cursor[0] >= high:
            continue
        query = select(GAMES).where(GAMES.c.book_id == book_id, GAMES.c.status == FINISHED, start >= low,
                                    start < high)
        if cursor is not None and cursor[0] >= low:
            query = query.where(tuple_(start, GAMES.c.id) > tuple_(literal(cursor[0]), literal(cursor[1])))
        rows = conn.execute(query.order_by(start, GAMES.c.id).limit(limit - len(found)))
        found += [game_from_row(r) for r in rows]
        if len(found) >= limit:
            break
    return found


def finished_games(conn: Connection, book_id: int, batch: int = 2000):
    """(id, moves, winner, result, score) of every finished game of a book, in id order, fetched in
    batches (for verify and export)."""
    last = 0
    while True:
        rows = conn.execute(select(GAMES.c.id, GAMES.c.moves, GAMES.c.winner, GAMES.c.result, GAMES.c.score).where(
            GAMES.c.book_id == book_id, GAMES.c.status == FINISHED, GAMES.c.id > last,
        ).order_by(GAMES.c.id).limit(batch)).all()
        if not rows:
            return
        yield from rows
        last = rows[-1][0]
