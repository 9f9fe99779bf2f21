"""Issue 19 item 3: grid workers commit their moves without waiting for the disk
(``synchronous_commit = off`` on their PostgreSQL connections), but the transaction that finishes a
game and adds its statistics waits for it, and so does the driver before it reports a book done.

Read back inside the transactions themselves on a connection set up as a worker's: what a crash of
the server would keep cannot be observed without crashing it, but which commits wait for the WAL
flush can (a commit waits when ``synchronous_commit`` is on at commit time and the transaction has
an id, i.e. wrote something)."""

from __future__ import annotations

from sqlalchemy import event, text

from obook.book.library import BookSettings, ensure_book, open_book_store
from obook.grid.driver import Driver, DriverPlan
from obook.store.games import finish_game, get_game, top_up_games
from obook.store.migrate import upgrade


def worker_store(url: str):
    """The store as a grid worker opens it on PostgreSQL: every connection ``synchronous_commit = off``."""
    import workers.tasks as tasks

    store = open_book_store(url)
    event.listen(store.engine, "connect", tasks._asynchronous_commit)
    store.engine.dispose()
    return store


def setting(conn) -> str:
    return conn.execute(text("SHOW synchronous_commit")).scalar_one()


def test_the_finish_transaction_waits_for_the_disk_and_moves_do_not(postgres_url):
    upgrade(postgres_url)
    store = worker_store(postgres_url)
    book = ensure_book(store, "d", BookSettings(size=5, algorithm="mvbm", depth=4))
    with store.write() as conn:
        [game_id] = top_up_games(conn, book.id, 1, [7])
    with store.write() as conn:
        assert setting(conn) == "off"  # a move's transaction: asynchronous
        game = get_game(conn, game_id)
        assert finish_game(conn, game, None, "B+1", "B", 1.0, {(1, 2): (1, 1, 0)})
        assert setting(conn) == "on"  # the finish commits synchronously
    with store.write() as conn:
        assert setting(conn) == "off"  # SET LOCAL: only that transaction
        assert not finish_game(conn, game, None, "B+1", "B", 1.0, {})  # already finished: nothing written


def test_the_driver_confirms_durability_before_it_reports_done(store_url):
    """A done step has passed ``Store.confirm_durable``: on PostgreSQL a transaction with an id
    committed with ``synchronous_commit = on`` (its WAL flush covers every commit before it), on
    SQLite a full checkpoint of the WAL."""
    store = worker_store(store_url) if store_url.startswith("postgresql") else open_book_store(store_url)
    book = ensure_book(store, "done", BookSettings(size=5, algorithm="mvbm", depth=4))
    with store.write() as conn:
        [game_id] = top_up_games(conn, book.id, 1, [7])
        finish_game(conn, get_game(conn, game_id), None, "B+1", "B", 1.0, {})
    driver = Driver(store, DriverPlan(book="done", target=1, poll=0.01), send=lambda *_: None)
    assert driver.step().done and not driver.step().durable  # a step alone confirms nothing
    final = driver.run(max_seconds=10)
    assert final.done and final.durable
    assert store.confirm_durable()
