"""Issue 19, items 5 and 6 at the store: a game whose play keeps failing is set aside with its
reason (not replaced), and leases are decided by the database's clock, not the caller's, which also
dates the moves and finishes the book's rates are counted from."""

from __future__ import annotations

import pytest

from obook.book.library import BookSettings, ensure_book
from obook.store import jobs
from obook.store.games import get_game, top_up_games
from obook.store.leases import ExpansionLease, GameLease
from obook.store.minimax import schedule_expansion
from obook.store.models import SET_ASIDE
from obook.store.reporting import books_with_counts

# (the kind's lease, the book's algorithm): every test here runs over both kinds of leased unit
KINDS = {"game": (GameLease, "mvbm"), "expansion": (ExpansionLease, "minimax")}


def book_with_units(store, n=1, name="f", unit="game"):
    """A book with ``n`` open units of ``unit``'s kind, nobody holding them."""
    algorithm = KINDS[unit][1]
    book = ensure_book(store, name, BookSettings(size=7, depth=10, algorithm=algorithm))
    with store.write() as conn:
        if unit == "game":
            ids = top_up_games(conn, book.id, n, list(range(1, n + 1)))
        else:
            ids = [schedule_expansion(conn, book.id, key, 0, [], float(key), key) for key in range(1, n + 1)]
    return book, ids


def book_with_games(store, n=1, name="f"):
    return book_with_units(store, n, name, "game")


@pytest.mark.parametrize("unit", KINDS)
def test_a_unit_is_set_aside_after_its_failures_and_not_replaced(store, unit, monkeypatch, request):
    """One worker's processes (an embedded build's: min_workers 1). With no back-off (the back-off,
    and the grid's rule of two workers, are tests/store/test_worker_trust.py's)."""
    from obook.config import settings

    monkeypatch.setenv("OBOOK_RETRY_SECONDS", "0")
    settings.cache_clear()
    request.addfinalizer(settings.cache_clear)
    lease_type = KINDS[unit][0]
    book, (unit_id,) = book_with_units(store, unit=unit)
    table = lease_type.jobs
    lease = lease_type(store, "h:1:local:a", 60)
    for attempt in (1, 2):
        assert lease.claim(book.id).id == unit_id
        assert lease.fail(unit_id, f"ValueError: engine bug {attempt}", max_failures=3) == table.open
        with store.read() as conn:
            assert jobs.in_flight(conn, table, book.id) == [(unit_id, None, True)]  # given back at once
    other = lease_type(store, "h:2:local:b", 60)
    assert other.claim(book.id).id == unit_id
    assert lease.fail(unit_id, "not mine any more", max_failures=3) is None  # only the holder counts a failure
    assert other.fail(unit_id, "ValueError: engine bug 3", max_failures=3) == SET_ASIDE
    assert lease.claim(book.id) is None  # no longer worked on
    with store.write() as conn:
        assert jobs.set_aside(conn, table, book.id) == [(unit_id, 3, "ValueError: engine bug 3")]
        assert jobs.counts(conn, table, book.id) == jobs.UnitCounts(done=0, open=0, set_aside=1, leased=0)
        if unit == "game":
            assert top_up_games(conn, book.id, 1, [99]) == []  # nor replaced: the build ends
            (counts,) = books_with_counts(conn)
            assert (counts.finished, counts.in_progress, counts.set_aside) == (0, 0, 1)
    if unit == "expansion":
        from obook.book.kinds import book_kind

        assert book_kind(book).top_up(store, book, 1, 1) == []  # nor replaced: the build ends


@pytest.mark.parametrize("unit", KINDS)
@pytest.mark.parametrize("offset", [600.0, -600.0])
def test_leases_follow_the_database_clock_not_the_callers(postgres_url, monkeypatch, offset, unit):
    """A driver whose clock is 10 minutes off sees a worker's 60 s lease as held, not expired (or
    the other way round), because the lease is written and compared by PostgreSQL's clock."""
    from obook.book.library import open_book_store
    from obook.store.migrate import upgrade

    upgrade(postgres_url)
    store = open_book_store(postgres_url)
    lease_type = KINDS[unit][0]
    book, (held, free) = book_with_units(store, 2, unit=unit)
    worker = lease_type(store, "w:1:celery:a", 60, kind="celery")
    unit_row = worker.claim(book.id, held)
    assert unit_row.id == held
    monkeypatch.setenv("OBOOK_TEST_CLOCK_OFFSET", str(offset))  # the driver's clock from here on
    with store.read() as conn:
        flight = {unit_id: expired for unit_id, _owner, expired in jobs.in_flight(conn, lease_type.jobs, book.id)}
    assert flight == {held: False, free: True}
    thief = lease_type(store, "d:1:token", 60, kind=None)
    assert thief.claim(book.id, held) is None  # the driver cannot take it
    worker.renew(unit_row)  # and the worker still holds it
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
        assert rate_series(conn, book.id, now=server_now + dt.timedelta(seconds=1))[-1].units == 1


def test_progress_lists_a_set_aside_expansion(store_url):
    """``/v1/progress`` names a minimax book's expansions set aside, with their reasons, as it does
    a statistical book's games."""
    from fastapi.testclient import TestClient

    from api.app import create_app
    from obook.book.library import open_book_store

    store = open_book_store(store_url)
    book, (job_id,) = book_with_units(store, unit="expansion")
    lease = ExpansionLease(store, "h:1:local:a", 60)
    assert lease.claim(book.id).id == job_id
    assert lease.fail(job_id, "PoisonedUnit: expansion is poison", max_failures=1) == SET_ASIDE
    with TestClient(create_app(store_url)) as client:
        (shown,) = client.get("/v1/progress").json()["books"]
    assert shown["expansions_set_aside"] == 1 and shown["expansions_pending"] == 0
    assert shown["set_aside"] == [{"id": job_id, "failures": 1, "reason": "PoisonedUnit"}]  # anonymous: its type only
