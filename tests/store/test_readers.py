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


def test_minimax_nodes_are_read_as_the_store_reads_them(store):
    """A minimax node with its edges and children's bounds, from the threads' reader and (on
    PostgreSQL) the event loop's, as ``obook.store.minimax.node_reader`` reads it: a node with edges
    (one to a child not stored), one without, keys above 2**63, and a key not in the book."""
    import asyncio

    from obook.store.db import to_signed
    from obook.store.minimax import EDGES, NODES, node_reader

    book = new_book(store, "m")
    root, child, leaf, missing = (1 << 64) - 3, 5, (1 << 63) + 9, (1 << 64) - 11

    def node(key, moves, value, score=None):
        return dict(book_id=book.id, position_key=to_signed(key), moves=moves, own_value=0.3, own_error=0.05,
                    own_visits=40, best_new=12, policy="30:60:0.52 12:40:0.3", play_policy="30:0.6 12:0.4",
                    score_mean=score, value=value, lcb=value - 0.1, ucb=value + 0.1, playouts=100)

    with store.write() as conn:
        conn.execute(NODES.insert(), [node(root, "", 0.52, 1.5), node(child, "D4", 0.48), node(leaf, "D4 E5", 0.4)])
        conn.execute(EDGES.insert(), [dict(book_id=book.id, parent_key=to_signed(root), move=30,
                                           child_key=to_signed(child), prior=0.6),
                                      dict(book_id=book.id, parent_key=to_signed(root), move=12,
                                           child_key=to_signed(missing), prior=0.4),
                                      dict(book_id=book.id, parent_key=to_signed(child), move=20,
                                           child_key=to_signed(leaf), prior=1.0)])
    keys = [root, child, leaf, missing]
    with store.read() as conn:
        read = node_reader(conn, book.id)
        expected = [read(key) for key in keys]
    assert expected[0][0].edges == {30: (child, 0.6), 12: (missing, 0.4)} and set(expected[0][1]) == {child}
    assert expected[2][0].edges == {} and expected[2][1] == {} and expected[3] is None
    reader = StatsReader(store, pool_size=1)
    try:
        assert [reader.minimax_node(book.id, key) for key in keys] == expected
    finally:
        reader.dispose()
    if not store.is_sqlite:
        loop_reader = AsyncStatsReader(store, pool_size=1)

        async def read_all():
            try:
                return [await loop_reader.minimax_node(book.id, key) for key in keys]
            finally:
                await loop_reader.close()

        assert asyncio.run(read_all()) == expected
