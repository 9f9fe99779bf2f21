"""``GameLease``: a player's writes to its games and its heartbeat, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import socket

import pytest
from sqlalchemy import select

from obook.book.library import BookSettings, ensure_book
from obook.store.games import GAMES, get_game, top_up_games
from obook.store.leases import GameLease, LeaseLost
from obook.store.models import ABANDONED, FINISHED
from obook.store.stats import all_stats
from obook.store.workers import WORKERS, live_workers


def new_game(store, name="a"):
    book = ensure_book(store, name, BookSettings(size=7, algorithm="mvbm", depth=10))
    with store.write() as conn:
        (game_id,) = top_up_games(conn, book.id, 1, [5])
    return book, game_id


def worker_row(store, owner):
    with store.read() as conn:
        return conn.execute(select(WORKERS).where(WORKERS.c.id == owner)).one_or_none()


def test_the_heartbeat_follows_the_game_a_worker_holds(store):
    book, game_id = new_game(store)
    lease = GameLease(store, "h:1:local:a", 60, kind="local", engine_version="v1")
    lease.announce()
    row = worker_row(store, "h:1:local:a")
    assert (row.host, row.pid, row.kind, row.engine_version, row.game_id, row.moves) == (
        socket.gethostname(), os.getpid(), "local", "v1", None, "")
    game = lease.claim(book.id)
    assert game.id == game_id and game.lease_owner == "h:1:local:a"
    assert (worker_row(store, lease.owner).book_id, worker_row(store, lease.owner).game_id) == (book.id, game_id)
    game, _ = lease.append(game, "D4", "m")
    game, _ = lease.append(game, "C3", "m")
    assert worker_row(store, lease.owner).moves == "D4 C3"
    lease.release(game)
    row = worker_row(store, lease.owner)
    assert (row.game_id, row.moves, row.book_id) == (None, "", book.id)  # idle, last book kept
    lease.leave()
    assert worker_row(store, lease.owner) is None


def test_moves_between_heartbeats_are_not_reported_within_the_least_interval(store):
    book, _ = new_game(store)
    lease = GameLease(store, "h:1:celery:a", 60, kind="celery", heartbeat_seconds=3600)
    game = lease.claim(book.id)
    game, _ = lease.append(game, "D4", "m")  # the first move's heartbeat is written
    game, _ = lease.append(game, "C3", "m")
    assert worker_row(store, lease.owner).moves == "D4"
    lease.renew(game)  # renewing while thinking always reports
    assert worker_row(store, lease.owner).moves == "D4 C3"


def test_a_token_holds_leases_without_a_heartbeat(store):
    book, game_id = new_game(store)
    token = GameLease(store, "q:1:aa", 60, kind=None)
    assert token.claim(book.id, game_id) is not None
    worker = GameLease(store, "h:1:celery:a", 60, kind="celery")
    assert worker.claim(book.id, game_id) is None  # the token holds it
    assert worker.claim(book.id, game_id, handoff="q:1:aa").lease_owner == "h:1:celery:a"
    assert worker.hand_on(game_id, "q:2:bb")
    assert not worker.hand_on(game_id, "q:3:cc")  # no longer ours
    assert GameLease(store, "q:3:cc", 60, kind=None).take_over(game_id, "q:2:bb")
    with store.read() as conn:
        assert [w["id"] for w in live_workers(conn)] == ["h:1:celery:a"]
        assert get_game(conn, game_id).lease_owner == "q:3:cc"


def test_a_lost_lease_writes_nothing_and_a_game_finishes_once(store):
    book, game_id = new_game(store)
    first = GameLease(store, "h:1:local:a", 60)
    game = first.claim(book.id)
    game, pick = first.append(game, "D4", "m", next_pick=lambda rows: None)  # the next search is counted
    assert pick is None
    thief = GameLease(store, "h:2:local:b", 60)
    assert thief.claim(book.id, game_id) is None  # first holds it
    stolen = thief.claim(book.id, game_id, handoff="h:1:local:a")  # as if first's lease had been handed on
    assert stolen.lease_owner == "h:2:local:b"
    with pytest.raises(LeaseLost):
        first.append(game, "C3", "m")
    with pytest.raises(LeaseLost):
        first.renew(game)
    with pytest.raises(LeaseLost):
        first.finish(game, "B+1", "B", 1.0, {(7, 3): (1, 1, 0)})
    thief.finish(stolen, "B+1", "B", 1.0, {(7, 3): (1, 1, 0)})
    with pytest.raises(LeaseLost):
        thief.finish(stolen, "B+1", "B", 1.0, {(7, 3): (1, 1, 0)})
    with store.read() as conn:
        done = get_game(conn, game_id)
        assert (done.status, done.moves, done.lease_owner) == (FINISHED, ("D4",), None)
        assert all_stats(conn, book.id) == {(7, 3): (1, 1, 0)}


def test_the_book_pick_or_the_count_of_a_search(store):
    book, game_id = new_game(store)
    lease = GameLease(store, "h:1:local:a", 60)
    game = lease.claim(book.id)
    asked = []
    assert lease.start_move(game, lambda rows: asked.append(rows(12345)) or "book move") == "book move"
    assert lease.start_move(game, lambda rows: None) is None
    game, pick = lease.append(game, "D4", "m", next_pick=lambda rows: None)
    game, pick = lease.append(game, "C3", "b", next_pick=lambda rows: "book move")
    assert pick == "book move" and asked == [[]]
    with store.read() as conn:
        searches = conn.execute(select(GAMES.c.searches).where(GAMES.c.id == game_id)).scalar_one()
    assert searches == 2  # one search before D4, one prepared with it; none for the book move
    lease.abandon(game)
    with store.read() as conn:
        assert get_game(conn, game_id).status == ABANDONED
