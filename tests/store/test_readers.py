"""What the service reads for every lookup (``obook.store.readers``), on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from obook.store.db import Store, StoreError
from obook.store.readers import AsyncStatsReader, StatsReader
from obook.store.stats import add_stats, position_stats
from tests.store.test_reporting import new_book, seed_game


def test_the_stats_reader_reads_what_the_store_has(store):
    book = new_book(store, "a")
    key = (1 << 64) - 5  # above 2**63: stored as a negative BIGINT
    with store.write() as conn:
        add_stats(conn, book.id, {(key, 3): (4, 1, 2), (key, -1): (1, 0, 0), (7, 3): (2, 2, 0)})
    seed_game(store, book)
    reader = StatsReader(store, pool_size=2)
    try:
        # (move, games, wins, draws, scored games, score sum): no score was added
        assert sorted(reader.position_stats(book.id, key)) == [(-1, 1, 0, 0, 0, 0.0), (3, 4, 1, 2, 0, 0.0)]
        with store.read() as conn:
            assert sorted(reader.position_stats(book.id, key)) == sorted(position_stats(conn, book.id, key))
        assert reader.position_stats(book.id, 8) == []
        assert reader.finished_games(book.id) == 1
        assert (reader.engine is store.engine) == store.is_sqlite
    finally:
        reader.dispose()


def test_the_stats_reader_names_an_unreachable_server():
    store = Store("postgresql+psycopg://postgres@127.0.0.1:9/nothing")
    reader = StatsReader(store, pool_size=1)
    try:
        with pytest.raises(StoreError, match="cannot reach the database"):
            reader.position_stats(1, 5)
    finally:
        reader.dispose()
        store.engine.dispose()


def test_the_async_stats_reader_reads_what_the_sync_one_does(postgres_url):
    """The service's event-loop reader (``AsyncStatsReader``): the same rows as the threads' reader,
    with more concurrent requests than connections (they wait for one), and its connections kept."""
    import asyncio

    from obook.book.library import open_book_store

    store = open_book_store(postgres_url, create=True)
    book = new_book(store, "a")
    key = (1 << 64) - 5
    with store.write() as conn:
        add_stats(conn, book.id, {(key, 3): (4, 1, 2), (key, -1): (1, 0, 0), (7, 3): (2, 2, 0)},
                  scores={(key, 3): (2, 5.5)})
    reader = AsyncStatsReader(store, pool_size=2)
    sync = StatsReader(store, pool_size=1)

    async def read_many():
        keys = [key, 7, 8] * 10
        found = await asyncio.gather(*(reader.position_stats(book.id, k) for k in keys))
        pool = reader._pools[asyncio.get_running_loop()]
        assert pool.count == 2 and len(pool.idle) == 2
        await reader.close()
        return keys, found

    try:
        keys, found = asyncio.run(read_many())
        for k, rows in zip(keys, found):
            assert sorted(rows) == sorted(sync.position_stats(book.id, k))
        # (move, games, wins, draws, scored games, score sum)
        assert sorted(found[0]) == [(-1, 1, 0, 0, 0, 0.0), (3, 4, 1, 2, 2, 5.5)] and found[2] == []
    finally:
        sync.dispose()
        store.engine.dispose()


def test_the_async_stats_reader_names_an_unreachable_server():
    import asyncio

    reader = AsyncStatsReader(Store("postgresql+psycopg://postgres@127.0.0.1:9/nothing"), pool_size=1)

    async def read():
        with pytest.raises(StoreError, match="cannot reach the database"):
            await reader.position_stats(1, 5)
        assert reader._pools[asyncio.get_running_loop()].count == 0  # a failed connection is not counted

    asyncio.run(read())
