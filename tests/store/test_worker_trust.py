"""Issue 33, item 3 at the store: failures are charged to workers. A unit that fails on one worker
only is never set aside, however often (a broken worker cannot set healthy units aside); it is set
aside after failing on two different workers; a failed unit waits a back-off before anyone takes it
again; a worker that fails K units in a row is quarantined with its reason (its health check
fails); a unit worked without error ends the run; set-aside units can be put back. Games and
expansions alike (one protocol), on SQLite and PostgreSQL."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select, text

from obook.config import settings
from obook.store import jobs
from obook.store.models import SET_ASIDE
from obook.store.workers import RECORDS, parse_identity, quarantined_workers, worker_identity
from tests.store.test_faults import KINDS, book_with_units

BAD, GOOD = "site:hostb:11:1700000000:7/3", "site:hostg:22:1700000000:7/3"


@pytest.fixture
def retry_seconds(monkeypatch):
    """Failed units are retried at once unless a test says otherwise."""
    monkeypatch.setenv("OBOOK_RETRY_SECONDS", "0")
    settings.cache_clear()
    yield lambda seconds: (monkeypatch.setenv("OBOOK_RETRY_SECONDS", str(seconds)), settings.cache_clear())
    settings.cache_clear()


def grid_lease(store, unit, owner, worker_id, quarantine_after=None):
    return KINDS[unit][0](store, owner, 60, kind="celery", worker_id=worker_id, min_workers=2,
                          quarantine_after=quarantine_after)


def record(store, worker_id):
    with store.read() as conn:
        return conn.execute(select(RECORDS).where(RECORDS.c.id == worker_id)).one()._mapping


@pytest.mark.parametrize("unit", KINDS)
def test_a_unit_is_set_aside_only_after_failing_on_two_workers(store, unit, retry_seconds):
    book, (unit_id,) = book_with_units(store, unit=unit)
    table = KINDS[unit][0].jobs
    bad = grid_lease(store, unit, "hb:11:celery:a", BAD)
    for attempt in range(6):  # twice the limit, on one worker: still open
        assert bad.claim(book.id).id == unit_id
        assert bad.fail(unit_id, f"PoisonedUnit: attempt {attempt}", max_failures=3) == table.open
    good = grid_lease(store, unit, "hg:22:celery:b", GOOD)
    assert good.claim(book.id).id == unit_id
    assert good.fail(unit_id, "PoisonedUnit: on a second worker", max_failures=3) == SET_ASIDE
    with store.read() as conn:
        assert jobs.set_aside(conn, table, book.id) == [(unit_id, 7, "PoisonedUnit: on a second worker")]
        failed_by = conn.execute(select(table.table.c.failed_by).where(table.table.c.id == unit_id)).scalar_one()
    assert failed_by.split("\n") == [BAD, GOOD]
    assert (record(store, BAD)["failures"], record(store, GOOD)["failures"]) == (6, 1)

    # put back: open, its failures forgotten, taken up again
    from obook.book.library import retry_set_aside

    assert retry_set_aside(store, book) == [unit_id]
    assert retry_set_aside(store, book) == []
    with store.read() as conn:
        assert jobs.counts(conn, table, book.id) == jobs.UnitCounts(done=0, open=1, set_aside=0, leased=0)
    assert good.claim(book.id).id == unit_id
    assert good.fail(unit_id, "again", max_failures=3) == table.open  # counted from zero


@pytest.mark.parametrize("unit", KINDS)
def test_an_embedded_build_sets_aside_on_one_worker(store, unit, retry_seconds):
    """An embedded build's processes are one machine's (min_workers 1): the limit alone decides."""
    book, (unit_id,) = book_with_units(store, unit=unit)
    lease = KINDS[unit][0](store, "h:1:build0:a", 60)
    assert lease.worker_id == worker_identity("") and lease.min_workers == 1
    for attempt, status in enumerate((KINDS[unit][0].jobs.open, SET_ASIDE)):
        assert lease.claim(book.id).id == unit_id
        assert lease.fail(unit_id, f"bug {attempt}", max_failures=2) == status


@pytest.mark.parametrize("unit", KINDS)
def test_a_failed_unit_backs_off_before_it_is_tried_again(store, unit, retry_seconds):
    retry_seconds(30)
    book, (unit_id,) = book_with_units(store, unit=unit)
    table = KINDS[unit][0].jobs
    bad = grid_lease(store, unit, "hb:11:celery:a", BAD)
    good = grid_lease(store, unit, "hg:22:celery:b", GOOD)
    token = KINDS[unit][0](store, "q:1:x", 60, kind=None)
    waits = []
    for attempt in range(3):
        if attempt:  # the back-off over, as if its time had passed
            with store.write() as conn:
                conn.execute(text(f"UPDATE {table.table.name} SET lease_until = NULL WHERE id = :i"), {"i": unit_id})
        assert bad.claim(book.id).id == unit_id
        assert bad.fail(unit_id, "PoisonedUnit", max_failures=99) == table.open
        with store.read() as conn:
            ((owner, until),) = conn.execute(select(table.table.c.lease_owner, table.table.c.lease_until)
                                             .where(table.table.c.id == unit_id)).all()
            now = conn.execute(select(jobs.db_time(conn))).scalar_one()
            assert jobs.in_flight(conn, table, book.id) == [(unit_id, None, False)]  # the driver does not send it
        if isinstance(now, str):
            now = dt.datetime.fromisoformat(now[:26])
        waits.append(round((until.replace(tzinfo=None) - now.replace(tzinfo=None)).total_seconds()))
        assert owner is None
        assert good.claim(book.id) is None and token.claim(book.id, unit_id) is None  # nobody takes it meanwhile
    assert waits == [30, 60, 120]


@pytest.mark.parametrize("unit", KINDS)
def test_a_worker_failing_units_in_a_row_is_quarantined(store, unit, retry_seconds):
    from obook.grid.health import worker_health

    book, ids = book_with_units(store, 5, unit=unit)
    bad = grid_lease(store, unit, "hb:11:celery:a", BAD, quarantine_after=3)
    # two failures, then a slice worked without error (handed on): the run ends
    for unit_id in ids[:2]:
        assert bad.claim(book.id, unit_id).id == unit_id
        bad.fail(unit_id, "PoisonedUnit: x")
    assert bad.claim(book.id, ids[2]).id == ids[2] and bad.hand_on(ids[2], "q:1:t")
    assert record(store, BAD)["failures_in_row"] == 0 and bad.quarantined is None
    for n, unit_id in enumerate(ids[:3]):
        assert bad.claim(book.id, unit_id, handoff="q:1:t").id == unit_id
        bad.fail(unit_id, f"PoisonedUnit: {unit} {unit_id}")
        assert (bad.quarantined is None) == (n < 2)
    assert "3 units failed in a row" in bad.quarantined and f"{unit} {ids[2]}: PoisonedUnit" in bad.quarantined
    row = record(store, BAD)
    assert (row["failures"], row["failures_in_row"], row["quarantined_at"] is not None) == (5, 3, True)
    assert parse_identity(BAD) == {"site": "site", "host": "hostb", "pid": 11, "engine_version": "7/3"}
    with store.read() as conn:
        assert quarantined_workers(conn) == {BAD}
    # another process of the same worker learns it from the store
    other = grid_lease(store, unit, "hb:12:celery:c", BAD, quarantine_after=3)
    assert other.check_quarantine() == bad.quarantined
    health = worker_health(store, worker_id=BAD)
    assert not health.healthy and "QUARANTINED: 3 units failed in a row" in health.line()
    assert worker_health(store, host="hostb").worker_id == BAD
    good = grid_lease(store, unit, "hg:22:celery:b", GOOD, quarantine_after=3)
    assert good.claim(book.id, ids[3]).id == ids[3]
    assert worker_health(store, worker_id=GOOD).healthy
    from obook.errors import ObookError

    with pytest.raises(ObookError, match="no worker"):
        worker_health(store, worker_id="nobody")


def test_a_finished_game_credits_its_worker(store, retry_seconds):
    from obook.store.leases import GameLease

    book, (game_id, other_id) = book_with_units(store, 2, unit="game")
    lease = GameLease(store, "hb:11:celery:a", 60, kind="celery", worker_id=BAD, quarantine_after=3)
    assert lease.claim(book.id, other_id) is not None
    lease.fail(other_id, "PoisonedUnit")
    game = lease.claim(book.id, game_id)
    lease.finish(game, "B+R", "B", None, {})
    row = record(store, BAD)
    assert (row["units_done"], row["failures"], row["failures_in_row"]) == (1, 1, 0)
    with store.read() as conn:
        assert conn.execute(text("SELECT finished_by FROM games WHERE id = :i"), {"i": game_id}).scalar_one() == BAD
