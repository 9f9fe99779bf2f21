"""A book's statistics: games, wins and draws per (canonical position key, canonical move), and the
scored games among them with the sum of the mover's final scores, a pure function of the finished
games (a draw is half a win for both players; the rules add it). They are added with ``INSERT .. ON CONFLICT DO UPDATE`` in key order (no
deadlocks between two finishing games on PostgreSQL), under the book's lock in share mode: a repair
(``replace_stats``, under the lock in exclusive mode) never interleaves with an addition, so a game
finishing during a repair is either in its recount or adds its statistics after it."""

from __future__ import annotations

from typing import Callable, Sequence

from sqlalchemy import Connection, delete, func, select

from obook.store.books import lock_book
from obook.store.db import dialect_insert, to_signed, to_unsigned
from obook.store.models import BookStat

STATS = BookStat.__table__

# (canonical move, games, wins, draws, scored games, sum of the mover's scores) of one canonical position
# (the rules read the first four; rows of four are accepted where no score is known)
Rows = Sequence[tuple]
ReadRows = Callable[[int], Rows]  # canonical key -> its rows

_UPSERTS: dict[str, object] = {}


def _stats_upsert(conn: Connection):
    """``INSERT .. ON CONFLICT DO UPDATE`` adding games, wins and draws, built once per dialect so that
    SQLAlchemy compiles it once (a multi-row VALUES statement would be compiled at every call)."""
    name = conn.dialect.name
    statement = _UPSERTS.get(name)
    if statement is None:
        insert = dialect_insert(conn)(STATS)
        statement = _UPSERTS[name] = insert.on_conflict_do_update(
            index_elements=[STATS.c.book_id, STATS.c.position_key, STATS.c.move],
            set_={"games": STATS.c.games + insert.excluded.games, "wins": STATS.c.wins + insert.excluded.wins,
                  "draws": STATS.c.draws + insert.excluded.draws, "scored": STATS.c.scored + insert.excluded.scored,
                  "score_sum": STATS.c.score_sum + insert.excluded.score_sum},
        )
    return statement


def add_stats(conn: Connection, book_id: int, stats: dict[tuple[int, int], tuple[int, int, int]],
              scores: dict[tuple[int, int], tuple[int, float]] | None = None) -> None:
    """Add (games, wins, draws) to each (position key, move), with its (scored games, score sum)
    from ``scores`` (``obook.book.keys.opening_record``), in key order, under the book's lock in
    share mode (see the module's docstring)."""
    if not stats:
        return
    lock_book(conn, book_id, shared=True)
    scores = scores or {}
    rows = []
    for (key, move), (g, w, d) in stats.items():
        scored, total = scores.get((key, move), (0, 0.0))
        rows.append({"book_id": book_id, "position_key": to_signed(key), "move": move, "games": g, "wins": w,
                     "draws": d, "scored": scored, "score_sum": total})
    rows.sort(key=lambda r: (r["position_key"], r["move"]))
    conn.execute(_stats_upsert(conn), rows)


def position_stats(conn: Connection, book_id: int, key: int) -> list[tuple]:
    """(canonical move, games, wins, draws, scored games, score sum) of every move recorded in the
    canonical position ``key``."""
    rows = conn.execute(select(STATS.c.move, STATS.c.games, STATS.c.wins, STATS.c.draws, STATS.c.scored,
                               STATS.c.score_sum).where(
        STATS.c.book_id == book_id, STATS.c.position_key == to_signed(key)))
    return [tuple(row) for row in rows]


def rows_reader(conn: Connection, book_id: int) -> ReadRows:
    """``position_stats`` of one book in the caller's transaction, as the book's lookup reads them."""
    return lambda key: position_stats(conn, book_id, key)


def all_stats(conn: Connection, book_id: int) -> dict[tuple[int, int], tuple[int, int, int]]:
    rows = conn.execute(select(STATS.c.position_key, STATS.c.move, STATS.c.games, STATS.c.wins, STATS.c.draws).where(
        STATS.c.book_id == book_id))
    return {(to_unsigned(k), m): (g, w, d) for k, m, g, w, d in rows}


def all_scores(conn: Connection, book_id: int) -> dict[tuple[int, int], tuple[int, float]]:
    """(scored games, score sum) of every row of a book that has a scored game."""
    rows = conn.execute(select(STATS.c.position_key, STATS.c.move, STATS.c.scored, STATS.c.score_sum).where(
        STATS.c.book_id == book_id, STATS.c.scored != 0))
    return {(to_unsigned(k), m): (n, total) for k, m, n, total in rows}


def replace_stats(conn: Connection, book_id: int, stats: dict[tuple[int, int], tuple[int, int, int]],
                  scores: dict[tuple[int, int], tuple[int, float]] | None = None) -> None:
    """Replace a book's statistics by ``stats`` and ``scores``; the caller holds the book's lock
    (``lock_book``) from before it read what they were computed from."""
    conn.execute(delete(STATS).where(STATS.c.book_id == book_id))
    add_stats(conn, book_id, stats, scores)


def stats_count(conn: Connection, book_id: int) -> int:
    return conn.execute(select(func.count()).select_from(STATS).where(STATS.c.book_id == book_id)).scalar_one()
