"""The service's read-only figures (``obook.store.reporting``), on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt

from sqlalchemy import update

from obook.book.library import BookSettings, ensure_book
from obook.store import reporting as r
from obook.store.books import BOOKS, get_book
from obook.store.games import GAMES, finish_game, get_game, insert_finished_game, top_up_games
from tests.helpers import claim_game
from obook.store.models import ABANDONED, FINISHED, IN_PROGRESS, utcnow
from obook.store.workers import WORKERS, heartbeat

NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.timezone.utc)


def new_book(store, name):
    return ensure_book(store, name, BookSettings(size=7, algorithm="mvbm", depth=10))


def seed_game(store, book, finished_at=None) -> int:
    with store.write() as conn:
        game_id = insert_finished_game(conn, book.id, ["D4"], "s", "B+1", "B", None, "seed", None, {})
        if finished_at is not None:
            conn.execute(update(GAMES).where(GAMES.c.id == game_id).values(finished_at=finished_at))
    return game_id


def selfplay_games(store, book, count: int, status: str = FINISHED, finished_at=()) -> list[int]:
    """``count`` self-play games closed with ``status`` (``finished_at``: their finish times)."""
    with store.write() as conn:
        ids = top_up_games(conn, book.id, count + 1000, list(range(1, count + 1)))
        for n, game_id in enumerate(ids):
            if status != IN_PROGRESS:
                assert finish_game(conn, get_game(conn, game_id), None, "B+1", "B", 1.0, {}, status=status)
            if n < len(finished_at):
                conn.execute(update(GAMES).where(GAMES.c.id == game_id).values(finished_at=finished_at[n]))
    return ids


def test_books_are_paged_by_name_with_their_games_by_status(store):
    for name in ("b", "c", "a"):
        new_book(store, name)
    with store.read() as conn:
        a = get_book(conn, "a")
    seed_game(store, a)
    selfplay_games(store, a, 1)
    selfplay_games(store, a, 2, status=IN_PROGRESS)
    selfplay_games(store, a, 1, status=ABANDONED)
    with store.read() as conn:
        assert r.count_books(conn) == 3
        first = r.books_with_counts(conn, limit=2)
        assert [c.book.name for c in first] == ["a", "b"]
        assert (first[0].finished, first[0].in_progress, first[0].abandoned) == (2, 2, 1)
        assert (first[1].finished, first[1].in_progress, first[1].abandoned) == (0, 0, 0)
        assert [c.book.name for c in r.books_with_counts(conn, limit=2, offset=2)] == ["c"]
        assert r.books_with_counts(conn, offset=3) == []
        assert r.count_games(conn, a.id) == 5
        assert r.count_games(conn, a.id, FINISHED) == 2
        assert r.count_games(conn, a.id, ABANDONED) == 1


def test_finished_since_counts_self_play_games_only(store):
    book, other = new_book(store, "a"), new_book(store, "b")
    selfplay_games(store, book, 2, finished_at=[NOW - dt.timedelta(minutes=30), NOW - dt.timedelta(hours=2)])
    seed_game(store, book, finished_at=NOW - dt.timedelta(minutes=10))
    selfplay_games(store, other, 1, finished_at=[NOW - dt.timedelta(minutes=5)])
    with store.read() as conn:
        assert r.finished_since(conn, NOW - dt.timedelta(hours=1)) == {book.id: 1, other.id: 1}
        assert r.finished_since(conn, NOW - dt.timedelta(hours=3)) == {book.id: 2, other.id: 1}
        assert r.finished_since(conn, NOW) == {}


def test_the_rate_series_puts_each_self_play_game_in_its_slice(store):
    book = new_book(store, "a")
    minutes = [59, 31, 29, 29, 1, 61]  # the last is before the span
    selfplay_games(store, book, len(minutes), finished_at=[NOW - dt.timedelta(minutes=m) for m in minutes])
    seed_game(store, book, finished_at=NOW - dt.timedelta(minutes=20))  # seeds are no self-play rate
    with store.read() as conn:
        series = r.rate_series(conn, book.id, span=dt.timedelta(hours=1), buckets=4, now=NOW)
    assert [p.start for p in series] == [NOW - dt.timedelta(minutes=60 - 15 * i) for i in range(4)]
    assert [p.end for p in series] == [NOW - dt.timedelta(minutes=45 - 15 * i) for i in range(4)]
    assert [p.units for p in series] == [1, 1, 2, 1]
    assert [p.per_hour for p in series] == [4.0, 4.0, 8.0, 4.0]
    assert r.RatePoint(NOW, NOW, 3).per_hour == 0.0


def test_the_growth_series_counts_finished_games_from_the_first(store):
    book = new_book(store, "a")
    with store.write() as conn:
        conn.execute(update(BOOKS).where(BOOKS.c.id == book.id).values(created_at=NOW - dt.timedelta(hours=10)))
        book = get_book(conn, "a")
    hours = [9.5, 5.5, 0.5]
    selfplay_games(store, book, len(hours), finished_at=[NOW - dt.timedelta(hours=h) for h in hours])
    selfplay_games(store, book, 1, status=IN_PROGRESS)
    with store.read() as conn:
        growth = r.growth_series(conn, book, points=11, now=NOW)
    assert [p.at for p in growth] == [NOW - dt.timedelta(hours=10 - i) for i in range(11)]
    assert [p.finished for p in growth] == [0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3]
    seed_game(store, book, finished_at=NOW - dt.timedelta(hours=12))  # imported seeds keep their time
    with store.read() as conn:
        growth = r.growth_series(conn, book, points=3, now=NOW)
    assert [(p.at, p.finished) for p in growth] == [(NOW - dt.timedelta(hours=12), 1),
                                                    (NOW - dt.timedelta(hours=6), 2), (NOW, 4)]


def test_a_book_without_finished_games_grows_from_its_creation(store):
    book = new_book(store, "a")
    with store.read() as conn:
        growth = r.growth_series(conn, book, points=2, now=book.created_at + dt.timedelta(hours=1))
    assert [(p.at, p.finished) for p in growth] == [(book.created_at, 0),
                                                    (book.created_at + dt.timedelta(hours=1), 0)]


def test_games_in_flight_are_the_held_ones_most_recently_moved_first(store):
    book = new_book(store, "a")
    ids = selfplay_games(store, book, 3, status=IN_PROGRESS)
    with store.write() as conn:
        for n, game_id in enumerate(ids[:2]):
            assert claim_game(conn, book.id, f"p{n}", 60, game_id) is not None
            conn.execute(update(GAMES).where(GAMES.c.id == game_id).values(updated_at=NOW + dt.timedelta(seconds=n)))
    with store.read() as conn:
        assert [g.id for g in r.in_flight_games(conn, book.id)] == [ids[1], ids[0]]
        assert [g.lease_owner for g in r.in_flight_games(conn, book.id, limit=1)] == ["p1"]
        assert r.count_in_flight(conn, book.id) == 2
        assert r.count_games(conn, book.id, IN_PROGRESS) == 3


def test_live_workers_and_book_names(store):
    a, b = new_book(store, "a"), new_book(store, "b")
    with store.write() as conn:
        heartbeat(conn, "h:1:local:x", kind="local")
        heartbeat(conn, "h:2:local:y", kind="local")
        conn.execute(update(WORKERS).where(WORKERS.c.id == "h:2:local:y").values(
            last_seen=utcnow() - dt.timedelta(minutes=5)))
    with store.read() as conn:
        assert r.count_live_workers(conn, within_seconds=60) == 1
        assert r.count_live_workers(conn, within_seconds=600) == 2
        assert r.book_names(conn, [a.id, b.id]) == {a.id: "a", b.id: "b"}
        assert r.book_names(conn, []) == {}


def test_games_the_move_cap_ended_are_counted(store):
    from obook.book.selfplay import games_at_move_cap
    from obook.book.selfplay import max_moves

    book = new_book(store, "capped")
    other = new_book(store, "other")
    cap = max_moves(book.size)
    ids = selfplay_games(store, book, 3)
    running = selfplay_games(store, book, 1, status=IN_PROGRESS)
    seed = seed_game(store, book)
    elsewhere = selfplay_games(store, other, 1)
    with store.write() as conn:
        for game_id, n in ((ids[0], cap), (ids[1], cap - 1), (running[0], cap), (seed, cap + 5), (elsewhere[0], cap)):
            conn.execute(update(GAMES).where(GAMES.c.id == game_id).values(n_moves=n))
    with store.read() as conn:
        assert r.count_at_move_cap(conn, book.id, cap) == 1  # not the one short, the running one, the seed
        assert r.count_at_move_cap(conn, book.id, cap - 1) == 2
    assert games_at_move_cap(store, book) == 1
