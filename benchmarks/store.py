"""Store overhead of issue 4: finishing a game, and looking a position up in a big book.

    python benchmarks/store.py --db sqlite:////tmp/bench.db --rows 10000000
    python benchmarks/store.py --db postgresql://postgres@127.0.0.1/test --rows 10000000

Creates a book ``bench-<n>`` in the given database (dropped afterwards unless ``--keep``), fills
its statistics with ``--rows`` synthetic rows (50 moves per position), then measures:

- finish: the transaction that closes a 60-move game and adds its depth-20 statistics (20 upserts),
  and separately the Python work before it (replaying 20 moves for their canonical keys);
- lookup: the indexed query of one position's 50 candidate moves, and the whole ``lookup()``
  (replay of the caller's moves, canonical key, query, translation back).

Prints one JSON object with medians and 99th percentiles in milliseconds.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

from sqlalchemy import delete, text, update

from obook.book.keys import opening_statistics
from obook.book.library import BookSettings, ensure_book, lookup, open_book_store
from obook.book.rules import MVBM
from obook.store.books import BOOKS
from obook.store.db import to_signed
from obook.store.games import GAMES, finish_game, get_game, top_up_games
from obook.store.stats import STATS, position_stats, stats_count


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def fill(store, book_id: int, rows: int, moves_per_position: int = 50) -> list[int]:
    """Synthetic statistics: rows/50 random positions with 50 moves each. Returns the keys."""
    rng = random.Random(1)
    positions = rows // moves_per_position
    keys = [rng.getrandbits(64) for _ in range(positions)]
    chunk = 20_000
    if not store.is_sqlite:
        raw = store.engine.raw_connection()
        try:
            with raw.cursor() as cursor:
                with cursor.copy("COPY book_stats (book_id, position_key, move, games, wins) FROM STDIN") as copy:
                    for key in keys:
                        signed = to_signed(key)
                        for m in range(moves_per_position):
                            g = rng.randint(1, 50)
                            copy.write_row((book_id, signed, 12 + m, g, rng.randint(0, g)))
            raw.commit()
        finally:
            raw.close()
        with store.engine.begin() as conn:
            conn.execute(text("ANALYZE book_stats"))
        return keys
    batch = []
    with store.write() as conn:
        for key in keys:
            signed = to_signed(key)
            for m in range(moves_per_position):
                g = rng.randint(1, 50)
                batch.append({"book_id": book_id, "position_key": signed, "move": 12 + m, "games": g,
                              "wins": rng.randint(0, g)})
            if len(batch) >= chunk:
                conn.execute(STATS.insert(), batch)
                batch = []
        if batch:
            conn.execute(STATS.insert(), batch)
    return keys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeats", type=int, default=2000)
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()

    store = open_book_store(args.db, create=True)
    name = f"bench-{args.rows}"
    book = ensure_book(store, name, BookSettings(size=9, algorithm=MVBM, depth=20))
    started = time.perf_counter()
    with store.read() as conn:
        have = stats_count(conn, book.id)
    keys = None
    if have < args.rows:
        with store.write() as conn:
            conn.execute(delete(STATS).where(STATS.c.book_id == book.id))
        keys = fill(store, book.id, args.rows)
    fill_seconds = time.perf_counter() - started
    if keys is None:
        rng = random.Random(1)
        keys = [rng.getrandbits(64) for _ in range(args.rows // 50)]

    rng = random.Random(2)
    query_ms = []
    for _ in range(args.repeats):
        key = rng.choice(keys)
        t0 = time.perf_counter()
        with store.read() as conn:
            found = position_stats(conn, book.id, key)
        query_ms.append((time.perf_counter() - t0) * 1000)
        assert len(found) == 50
    lookup_ms = []
    for i in range(min(args.repeats, 500)):
        t0 = time.perf_counter()
        lookup(store, book, "E5 G5 G4 C5" if i % 2 else "")
        lookup_ms.append((time.perf_counter() - t0) * 1000)

    game_moves = ("E5 G5 G4 C5 F6 F5 E6 G3 H4 H3 D3 C3 C2 B2 D2 B3 F4 J4 H5 G6 F7 H6 E4 D5 C6 B6 C7 D6 D7 B7 "
                  "B8 E7 F8 E8 E9 G8 F9 A8 C8 G7 H7 A6 A5 B5 A4 B4 A7 J7 J6 H8 D9 G9 H9 C4 D4 A3 J5 J8 A2 B1").split()
    assert len(game_moves) == 60
    replay_ms, finish_ms = [], []
    for i in range(min(args.repeats, 300)):
        with store.write() as conn:
            (game_id,) = top_up_games(conn, book.id, 10**9, [i + 1])
        with store.write() as conn:
            conn.execute(update(GAMES).where(GAMES.c.id == game_id).values(
                moves=" ".join(game_moves), n_moves=60))
            game = get_game(conn, game_id)
        t0 = time.perf_counter()
        stats = opening_statistics(9, 7.5, False, game.moves, "B" if i % 2 else "W", 20)
        t1 = time.perf_counter()
        with store.write() as conn:
            assert finish_game(conn, game, None, "B+1", "B", 1.0, stats)
        t2 = time.perf_counter()
        replay_ms.append((t1 - t0) * 1000)
        finish_ms.append((t2 - t1) * 1000)

    with store.read() as conn:
        rows = stats_count(conn, book.id)
    result = {
        "db": "sqlite" if store.is_sqlite else "postgresql",
        "stats_rows": rows,
        "fill_seconds": round(fill_seconds, 1),
        "position_query_ms": {"median": round(statistics.median(query_ms), 3), "p99": round(percentile(query_ms, 99), 3)},
        "lookup_ms": {"median": round(statistics.median(lookup_ms), 3), "p99": round(percentile(lookup_ms, 99), 3)},
        "finish_transaction_ms": {"median": round(statistics.median(finish_ms), 3),
                                  "p99": round(percentile(finish_ms, 99), 3)},
        "finish_replay_ms": {"median": round(statistics.median(replay_ms), 3)},
    }
    print(json.dumps(result))
    if not args.keep:
        with store.write() as conn:
            conn.execute(delete(BOOKS).where(BOOKS.c.id == book.id))


if __name__ == "__main__":
    main()
