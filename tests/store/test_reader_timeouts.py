"""Issue 33, item 5: the service's readers (``obook.store.readers``) against a PostgreSQL connection
that stops answering (``tests/blackhole.py``): a lookup fails with a ``StoreError`` naming the
timeout within ``OBOOK_API_DB_TIMEOUT`` (plus a new connection's ``OBOOK_DB_CONNECT_TIMEOUT``), and
the reader answers again once the server does."""

from __future__ import annotations

import asyncio
import time

import pytest
from sqlalchemy.engine import make_url

from obook.book.library import open_book_store
from obook.config import settings
from obook.store.db import StoreError
from obook.store.readers import AsyncStatsReader, StatsReader
from obook.store.stats import add_stats
from tests.blackhole import within
from tests.store.test_reporting import new_book

TIMEOUT = 1.0  # OBOOK_API_DB_TIMEOUT of these tests
KEY = (1 << 64) - 5


@pytest.fixture
def proxied(postgres_url, black_hole, monkeypatch):
    """(store through a proxy, the proxy, book id): the store's database behind a ``BlackHoleProxy``."""
    monkeypatch.setenv("OBOOK_DB_CONNECT_TIMEOUT", "2")
    settings.cache_clear()
    store = open_book_store(postgres_url, create=True)
    book = new_book(store, "a")
    with store.write() as conn:
        add_stats(conn, book.id, {(KEY, 3): (4, 1, 2), (7, 3): (2, 2, 0)})
    store.engine.dispose()
    url = make_url(postgres_url)
    proxy = black_hole(url.host, url.port)
    far = open_book_store(proxy.url_for(postgres_url))
    yield far, proxy, book.id
    far.dispose()
    settings.cache_clear()


def timed(call, *args):
    """(the StoreError ``call`` raised, seconds it took)."""
    start = time.monotonic()
    with pytest.raises(StoreError) as caught:
        call(*args)
    return caught.value, time.monotonic() - start


def test_the_threads_reader_gives_up_on_a_silent_server(proxied):
    store, proxy, book_id = proxied
    reader = StatsReader(store, pool_size=2, timeout=TIMEOUT)
    try:
        assert sorted(reader.position_stats(book_id, KEY)) == [(3, 4, 1, 2, 0, 0.0)]
        assert reader.changes(book_id) == 0
        proxy.black_hole()
        # a pooled connection, then a new one (its connect timeout); a raw read and a SQLAlchemy one
        for call, args in ((reader.position_stats, (book_id, KEY)), (reader.changes, (book_id,)),
                           (reader.minimax_node, (book_id, 7))):
            error, seconds = within(20, timed, call, *args)
            assert "did not answer" in str(error) or "cannot reach" in str(error), error
            assert seconds < TIMEOUT + 2 * 2 + 1.5, (call.__name__, seconds)
            print(f"\nthreads' reader, {call.__name__}: {type(error).__name__} after {seconds:.1f} s")
        proxy.forward()
        assert sorted(reader.position_stats(book_id, KEY)) == [(3, 4, 1, 2, 0, 0.0)]
        assert reader.changes(book_id) == 0
    finally:
        proxy.forward()
        reader.dispose()


def test_the_event_loop_reader_gives_up_on_a_silent_server(proxied):
    store, proxy, book_id = proxied
    reader = AsyncStatsReader(store, pool_size=2, timeout=TIMEOUT)

    async def read():
        assert sorted(await reader.position_stats(book_id, KEY)) == [(3, 4, 1, 2, 0, 0.0)]
        proxy.black_hole()
        pool = reader._pools[asyncio.get_running_loop()]
        for _ in range(2):  # the pooled connection, then a new one (its connect timeout)
            start = time.monotonic()
            with pytest.raises(StoreError, match="did not answer|cannot reach"):
                await reader.position_stats(book_id, KEY)
            assert time.monotonic() - start < TIMEOUT + 2 * 2 + 1.5
            print(f"\nevent loop's reader: StoreError after {time.monotonic() - start:.1f} s")
            assert pool.count == 0 and not pool.idle  # the silent connection was dropped
        proxy.forward()
        assert sorted(await reader.position_stats(book_id, KEY)) == [(3, 4, 1, 2, 0, 0.0)]
        await reader.close()

    within(30, asyncio.run, read())
