"""Issue 19, items 5 and 6 at the store: a game whose play keeps failing is set aside with its
reason (not replaced), and leases are decided by the database's clock, not the caller's, which also
dates the moves and finishes the book's rates are counted from."""

from __future__ import annotations

import pytest

from obook.book.library import BookSettings, ensure_book
from obook.store.games import games_in_flight, get_game, set_aside_games, top_up_games
from obook.store.leases import GameLease
from obook.store.models import IN_PROGRESS, SET_ASIDE
from obook.store.reporting import books_with_counts


def book_with_games(store, n=1, name="f"):
    book = ensure_book(store, name, BookSettings(size=7, depth=10))
    with store.write() as conn:
        ids = top_up_games(conn, book.id, n, list(range(1, n + 1)))
    return book, ids


def test_a_game_is_set_aside_after_its_failures_and_not_replaced(store):
    book, (game_id,) = book_with_games(store)
    lease = GameLease(store, "h:1:local:a", 60)
    for attempt in (1, 2):
        assert lease.claim(book.id).id == game_id
        assert lease.fail(game_id, f"ValueError: engine bug {attempt}", max_failures=3) == IN_PROGRESS
        with store.read() as conn:
            game = get_game(conn, game_id)
        assert game.lease_owner is None  # given back at once: played again without waiting for the lease
    other = GameLease(store, "h:2:local:b", 60)
    assert other.claim(book.id).id == game_id
    assert lease.fail(game_id, "not mine any more", max_failures=3) is None  # only the holder counts a failure
    assert other.fail(game_id, "ValueError: engine bug 3", max_failures=3) == SET_ASIDE
    assert lease.claim(book.id) is None  # no longer played
    with store.write() as conn:
        assert top_up_games(conn, book.id, 1, [99]) == []  # nor replaced: the build ends
        assert set_aside_games(conn, book.id) == [(game_id, 3, "ValueError: engine bug 3")]
        (counts,) = books_with_counts(conn)
    assert (counts.finished, counts.in_progress, counts.set_aside) == (0, 0, 1)


@pytest.mark.parametrize("offset", [600.0, -600.0])
def test_leases_follow_the_database_clock_not_the_callers(postgres_url, monkeypatch, offset):
    """A driver whose clock is 10 minutes off sees a worker's 60 s lease as held, not expired (or
    the other way round), because the lease is written and compared by PostgreSQL's clock."""
    from obook.book.library import open_book_store
    from obook.store.migrate import upgrade

    upgrade(postgres_url)
    store = open_book_store(postgres_url)
    book, (held, free) = book_with_games(store, 2)
    worker = GameLease(store, "w:1:celery:a", 60, kind="celery")
    assert worker.claim(book.id, held).id == held
    monkeypatch.setenv("OBOOK_TEST_CLOCK_OFFSET", str(offset))  # the driver's clock from here on
    with store.read() as conn:
        flight = {game_id: expired for game_id, _owner, expired in games_in_flight(conn, book.id)}
    assert flight == {held: False, free: True}
    thief = GameLease(store, "d:1:token", 60, kind=None)
    assert thief.claim(book.id, held) is None  # the driver cannot take it
    worker.renew(get_game_row(store, held))  # and the worker still holds it
    from obook.store.workers import live_workers

    with store.read() as conn:
        assert [w["id"] for w in live_workers(conn, 30)] == ["w:1:celery:a"]  # its heartbeat is recent


def get_game_row(store, game_id):
    with store.read() as conn:
        return get_game(conn, game_id)


def test_moves_and_finishes_are_dated_by_the_database_clock(postgres_url, monkeypatch):
    """A worker whose clock runs 10 minutes ahead finishes a game: the game is dated by the server,
    so the book's last-hour counts and its rate series (read with the server's time) include it."""
    import datetime as dt

    from sqlalchemy import text

    from obook.store.games import append_move, finish_game
    from obook.store.migrate import upgrade
    from obook.store.reporting import finished_since, rate_series

    upgrade(postgres_url)
    from obook.book.library import open_book_store

    store = open_book_store(postgres_url)
    book, (game_id,) = book_with_games(store)
    monkeypatch.setenv("OBOOK_TEST_CLOCK_OFFSET", "600")  # the worker's clock from here on
    lease = GameLease(store, "w:1:celery:a", 60, kind="celery")
    game = lease.claim(book.id, game_id)
    with store.write() as conn:
        game = append_move(conn, game, lease.owner, "D4", "m", 60)
        moved_at = game.updated_at
        assert finish_game(conn, game, lease.owner, "B+1", "B", 1.0, {})
    monkeypatch.delenv("OBOOK_TEST_CLOCK_OFFSET")
    with store.read() as conn:
        server_now = conn.execute(text("SELECT now()")).scalar_one()
        game = get_game(conn, game_id)
        assert abs(moved_at - server_now) < dt.timedelta(seconds=30)
        assert abs(game.finished_at - server_now) < dt.timedelta(seconds=30)
        assert abs(game.updated_at - server_now) < dt.timedelta(seconds=30)
        assert finished_since(conn, server_now - dt.timedelta(hours=1)) == {book.id: 1}
        assert rate_series(conn, book.id, now=server_now + dt.timedelta(seconds=1))[-1].games == 1
