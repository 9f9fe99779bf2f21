"""Schema migrations on data: 0005 adds draws to the statistics of an existing store, on SQLite
and PostgreSQL."""

from __future__ import annotations

import logging

from sqlalchemy import create_engine, text

from obook.book.keys import ENGINE_VERSION, opening_statistics
from obook.book.library import open_book_store
from obook.book.verification import verify
from obook.store.books import get_book
from obook.store.db import forget_stores, to_signed
from obook.store.migrate import head_revision, upgrade
from obook.store.urls import normalise_url


def upgraded(engine, url: str, caplog, name: str):
    """Upgrade the store the test filled at an older revision to the head, with the migration's
    warnings in ``caplog``: (the store, the book ``name``)."""
    engine.dispose()
    forget_stores()
    with caplog.at_level(logging.WARNING):
        upgrade(url)
    store = open_book_store(url)
    with store.read() as conn:
        return store, get_book(conn, name)


def test_0005_adds_draws_and_names_the_books_to_recount(empty_store_url, caplog):
    upgrade(empty_store_url, "0004")
    engine = create_engine(normalise_url(empty_store_url))
    moves = ["E5", "C5"]
    old_stats = {k: (g, w) for k, (g, w, _) in opening_statistics(9, 7.0, False, moves, "B", 20).items()}
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO books (id, name, size, komi, rules, algorithm, threshold, search, seconds_per_move, depth, "
            "engine_version, created_at, widening) VALUES (1, 'seven', 9, 7.0, 'chinese', 'mvbm', 0.1, '', 0, 20, "
            ":version, CURRENT_TIMESTAMP, 0)"), {"version": ENGINE_VERSION})
        for game_id, (result, winner) in enumerate([("0", None), ("B+R", "B")], start=1):
            conn.execute(text(
                "INSERT INTO games (id, book_id, moves, n_moves, origins, status, result, winner, source, seed, "
                "created_at, updated_at, searches) VALUES (:id, 1, 'E5 C5', 2, 'ss', 'finished', :result, :winner, "
                "'seed', 0, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 0)"), {"id": game_id, "result": result, "winner": winner})
        for (key, move), (g, w) in old_stats.items():  # as 0004 counted them: the jigo is a game without a win
            conn.execute(text("INSERT INTO book_stats (book_id, position_key, move, games, wins) "
                              "VALUES (1, :key, :move, :games, :wins)"),
                         {"key": to_signed(key), "move": move, "games": g + 1, "wins": w})
    store, book = upgraded(engine, empty_store_url, caplog, "seven")
    assert "book 'seven' has 1 drawn games" in caplog.text and "--repair" in caplog.text
    assert store.revision() == head_revision()
    before = verify(store, book)
    assert len(before.missing) == 2 and {v for _, _, v in before.missing} == {(2, 1, 1), (2, 0, 1)}
    verify(store, book, repair=True)
    assert verify(store, book).clean


def test_0011_adds_scores_and_names_the_books_to_recount(empty_store_url, caplog):
    """0011 adds each row's scored games and score sum as 0 (they need the games replayed): it
    names the books with scored games, and ``verify --repair`` recounts them."""
    upgrade(empty_store_url, "0010")
    engine = create_engine(normalise_url(empty_store_url))
    stats = opening_statistics(9, 7.5, False, ["E5", "C5"], "B", 20)
    with engine.begin() as conn:
        conn.execute(text(
            "INSERT INTO books (id, name, size, komi, rules, algorithm, threshold, search, seconds_per_move, depth, "
            "engine_version, created_at, widening, expansion, play_playouts) VALUES (1, 'scored', 9, 7.5, 'chinese', "
            "'mvbm', 0.1, '', 0, 20, :version, CURRENT_TIMESTAMP, 0, 'cost', 0)"), {"version": ENGINE_VERSION})
        conn.execute(text(
            "INSERT INTO games (id, book_id, moves, n_moves, origins, status, result, winner, score, source, seed, "
            "created_at, updated_at, searches, failures) VALUES (1, 1, 'E5 C5', 2, 'mm', 'finished', 'B+4.5', 'B', "
            "4.5, 'selfplay', 0, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, 0, 0)"))
        for (key, move), (g, w, d) in stats.items():
            conn.execute(text("INSERT INTO book_stats (book_id, position_key, move, games, wins, draws) "
                              "VALUES (1, :key, :move, :games, :wins, :draws)"),
                         {"key": to_signed(key), "move": move, "games": g, "wins": w, "draws": d})
    store, book = upgraded(engine, empty_store_url, caplog, "scored")
    assert "book 'scored' has 1 finished games with a final score" in caplog.text and "--repair" in caplog.text
    before = verify(store, book)
    assert not before.missing and not before.extra
    assert sorted((counted, stored) for _, _, counted, stored in before.scores) == [((1, -4.5), (0, 0.0)),
                                                                                  ((1, 4.5), (0, 0.0))]
    verify(store, book, repair=True)
    assert verify(store, book).clean


def test_offline_migrations_write_the_whole_schema_as_sql(capsys):
    """Issue 33: `alembic upgrade head --sql` (migrations as SQL for a DBA to run) stopped at 0005
    and 0011, which read data to name the books to recount: offline there is none to read. And the
    indexes of 0008 and 0011 are built without blocking writes (CONCURRENTLY) on PostgreSQL."""
    from alembic import command

    from obook.store.migrate import alembic_config

    command.upgrade(alembic_config("postgresql+psycopg://postgres@127.0.0.1/none"), "head", sql=True)
    script = capsys.readouterr().out
    assert "ALTER TABLE book_stats ADD COLUMN draws" in script  # 0005
    for index in ("ix_games_book_updated", "ix_games_book_record"):  # 0008, 0011: beside a live grid, on PostgreSQL
        assert f"CREATE INDEX CONCURRENTLY {index}" in script
    assert f"UPDATE alembic_version SET version_num='{head_revision()}'" in script
