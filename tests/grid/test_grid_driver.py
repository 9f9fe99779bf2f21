"""The grid's pieces without worker processes: the driver's decisions, slices handing a game on
through tokens, the engine-version refusal and the integrity check at the end of a game, the
compose file. The store is real (SQLite and PostgreSQL); the driver's ``send`` just records."""

from __future__ import annotations

import datetime as dt
import logging
import time
from pathlib import Path

import pytest
from sqlalchemy import select, update

from obook.book.library import BookSettings, ensure_book
from obook.book.verification import verify
from obook.book.selfplay import SelfPlayer, start_games
from obook.grid.driver import Driver, DriverPlan, FinishRate, wanted_in_flight
from obook.grid.slices import BUSY, FINISHED, HANDED_ON, new_token, play_slice
from obook.store.books import BOOKS
from obook.store.games import GAMES, game_counts, get_game
from tests.helpers import claim_game
from obook.store.models import utcnow
from obook.store.stats import stats_count
from obook.store.workers import heartbeat

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOOK = BookSettings(size=5, algorithm="mvbm", search="algorithm=random", seconds_per_move=0, depth=8)


class Outbox:
    """What the driver or a slice would publish: (game id, token) pairs, in order."""

    def __init__(self):
        self.sent: list[tuple[int, str]] = []

    def __call__(self, game_id: int, token: str) -> None:
        self.sent.append((game_id, token))

    def text(self) -> str:
        return " ".join(token for _, token in self.sent)


def lease_of(store, game_id):
    with store.read() as conn:
        game = get_game(conn, game_id)
    return game.lease_owner, game.lease_until


def test_wanted_in_flight_follows_the_live_workers():
    assert wanted_in_flight(0, 2) == 2
    assert wanted_in_flight(3, 2) == 5
    assert wanted_in_flight(40, 2) == 50
    assert wanted_in_flight(4, 2, units_per_second=100, gap_seconds=0.05) == 14  # the queue covers a step's gap
    assert wanted_in_flight(4, 2, units_per_second=1, gap_seconds=1.0) == 6


def test_the_finish_rate_is_read_over_a_moving_window():
    rate = FinishRate(window_seconds=10)
    assert rate.update(0, now=0.0) == 0.0
    assert rate.update(50, now=5.0) == 10.0
    assert rate.update(100, now=10.0) == 10.0
    assert rate.update(100, now=15.0) == 5.0  # 50 from 5 s to 15 s
    assert rate.update(100, now=25.0) == 0.0  # none in the last 10 s


MINIMAX_BOOK = BookSettings(size=5, komi=0.5, algorithm="minimax", search="playouts=50", seconds_per_move=0,
                            play_playouts=5)
UNIT_BOOKS = {"game": RANDOM_BOOK, "expansion": MINIMAX_BOOK}


def unit_lease(store, book, unit_id):
    """(owner, until) of a unit's lease, whatever its kind."""
    from obook.book.kinds import book_kind

    table = book_kind(book).jobs.table
    with store.read() as conn:
        return tuple(conn.execute(select(table.c.lease_owner, table.c.lease_until).where(table.c.id == unit_id)).one())


def first_unit(store, book):
    """One open unit of ``book``, nobody holding it (a game; a minimax book's first expansion)."""
    from obook.book.kinds import book_kind

    [unit_id] = book_kind(book).top_up(store, book, 1, 1)
    return unit_id


@pytest.mark.parametrize("unit", UNIT_BOOKS)
@pytest.mark.parametrize("offset", [-600.0, 600.0])
def test_a_token_is_aged_by_the_drivers_clock_not_by_the_time_written_in_it(store, monkeypatch, offset, unit):
    """A token made by a worker whose clock is 10 minutes behind (the token looks 10 minutes old) or
    ahead (it comes from the future), whose message the broker does not hold: the driver replaces
    it once it has seen it for ``stale_token_seconds`` itself; not at once (the worker may be
    between its hand-on and its publish), not only when its lease expires. The same for a game and
    an expansion."""
    from obook.book.kinds import book_kind

    book = ensure_book(store, "t", UNIT_BOOKS[unit])
    unit_id = first_unit(store, book)
    monkeypatch.setenv("OBOOK_TEST_CLOCK_OFFSET", str(offset))
    token = new_token()
    monkeypatch.delenv("OBOOK_TEST_CLOCK_OFFSET")
    assert book_kind(book).token_lease(store, token, 60).claim(book.id, unit_id) is not None
    outbox = Outbox()
    driver = Driver(store, DriverPlan(book="t", target=1, stale_token_seconds=0.5), send=outbox, pending=lambda: "")
    assert driver.step().sent == []  # first seen now: its message may be on its way
    time.sleep(0.3)
    assert driver.step().sent == []
    time.sleep(0.3)
    assert driver.step().sent == [unit_id]
    assert unit_lease(store, book, unit_id)[0] == outbox.sent[-1][1] != token


def test_driver_starts_games_sends_them_once_and_never_exceeds_the_target(store):
    book = ensure_book(store, "d", RANDOM_BOOK)
    outbox = Outbox()
    driver = Driver(store, DriverPlan(book="d", target=4, min_in_flight=2), send=outbox, pending=outbox.text)
    step = driver.step()
    assert len(step.created) == 2 and sorted(step.sent) == sorted(step.created)
    assert driver.step().sent == []  # their tokens are fresh and their messages are pending
    with store.write() as conn:  # live workers appear: more games, up to the target only
        for n in range(3):
            heartbeat(conn, f"h:{n}:celery:x", kind="celery")
    step = driver.step()
    assert len(step.created) == 2
    assert driver.step().created == []
    with store.read() as conn:
        assert game_counts(conn, book.id)[book.id] == {"in_progress": 4}


@pytest.mark.parametrize("unit", UNIT_BOOKS)
def test_driver_resends_expired_leases_and_lost_messages(store, unit, caplog):
    """Each resend says why in the driver's log: an operator reading it tells a lost message from
    a vanished worker."""
    from obook.book.kinds import book_kind

    caplog.set_level(logging.INFO, logger="obook.grid.driver")
    book = ensure_book(store, "r", UNIT_BOOKS[unit])
    target = 2 if unit == "game" else 1  # an empty minimax book has one expansion to schedule: its root's
    outbox = Outbox()
    driver = Driver(store, DriverPlan(book="r", target=target, stale_token_seconds=0.0), send=outbox,
                    pending=lambda: "")
    first = driver.step()
    assert len(first.sent) == target
    again = driver.step()  # the broker holds none of the messages: lost, sent again under new tokens
    assert sorted(again.sent) == sorted(first.sent)
    first_tokens = dict(outbox.sent[:target])
    for uid in first.sent:
        assert f"{unit} {uid} resent: its token {first_tokens[uid]} was seen" in caplog.text
        assert "the broker has no message for it" in caplog.text
    tokens = {uid: tok for uid, tok in outbox.sent[-target:]}
    assert all(unit_lease(store, book, uid)[0] == tok for uid, tok in tokens.items())

    driver = Driver(store, DriverPlan(book="r", target=target), send=outbox, pending=lambda: None)
    unit_id = first.sent[0]
    table = book_kind(book).jobs.table
    with store.write() as conn:  # a worker holds it, then vanishes: its lease expires
        conn.execute(update(table).where(table.c.id == unit_id).values(
            lease_owner="h:1:celery:dead", lease_until=utcnow() - dt.timedelta(seconds=1)))
    assert driver.step().sent == [unit_id]
    assert f"{unit} {unit_id} resent: its lease (h:1:celery:dead) expired" in caplog.text


@pytest.mark.parametrize("unit", UNIT_BOOKS)
def test_a_restarted_driver_resends_no_unit_a_live_worker_holds(store, unit):
    """Issue 33: the driver is killed while a worker works on a unit it sent (the worker took the
    token's lease: its message is consumed, the broker holds nothing); a new driver, which has seen
    no token, steps past ``stale_token_seconds`` and sends nothing, so the unit is claimed once. A
    unit whose token's message still waits in the broker is not sent again either. Only when the
    worker's lease expires (it vanished) is the unit sent again, once."""
    from obook.book.kinds import book_kind

    book = ensure_book(store, "k", UNIT_BOOKS[unit])
    kind = book_kind(book)
    outbox = Outbox()
    killed = Driver(store, DriverPlan(book="k", target=1), send=outbox, pending=outbox.text)
    [unit_id] = killed.step().sent
    [(_, token)] = outbox.sent
    worker = kind.worker(store, book, owner="h:1:celery:live", kind="celery", lease_seconds=60)
    assert worker.claim(unit_id, handoff=token) is not None  # the worker took the message
    del killed

    broker = {"text": ""}  # what the broker holds: nothing, the one message was consumed
    restarted = Driver(store, DriverPlan(book="k", target=1, stale_token_seconds=0.2), send=outbox,
                       pending=lambda: broker["text"])
    deadline = time.monotonic() + 0.6
    while time.monotonic() < deadline:
        step = restarted.step()
        assert step.sent == [] and step.created == [] and not step.done
        time.sleep(0.1)
    assert unit_lease(store, book, unit_id)[0] == "h:1:celery:live" and len(outbox.sent) == 1

    handed = new_token()  # the worker hands the unit on: its next message waits in the broker
    assert worker.lease.hand_on(unit_id, handed)
    broker["text"] = handed
    restarted = Driver(store, DriverPlan(book="k", target=1, stale_token_seconds=0.2), send=outbox,
                       pending=lambda: broker["text"])
    deadline = time.monotonic() + 0.6
    while time.monotonic() < deadline:
        assert restarted.step().sent == []
        time.sleep(0.1)
    assert unit_lease(store, book, unit_id)[0] == handed and len(outbox.sent) == 1

    table = kind.jobs.table
    with store.write() as conn:  # the worker that took the message vanished: its lease expires
        conn.execute(update(table).where(table.c.id == unit_id).values(
            lease_owner="h:1:celery:live", lease_until=utcnow() - dt.timedelta(seconds=1)))
    assert restarted.step().sent == [unit_id] and restarted.step().sent == []
    assert len(outbox.sent) == 2


def test_slices_hand_a_game_on_and_duplicates_do_nothing(store):
    book = ensure_book(store, "s", RANDOM_BOOK)
    [game_id] = start_games(store, book, target=1)
    one, two = (SelfPlayer(store, book, owner=f"h:{n}:celery:t", kind="celery") for n in (1, 2))
    outbox = Outbox()
    token = new_token()
    with store.write() as conn:
        assert claim_game(conn, book.id, token, 60, game_id) is not None
    assert play_slice(one, game_id, token, 0.0, outbox) == HANDED_ON
    assert play_slice(two, game_id, token, 0.0, outbox) == BUSY  # the same message delivered twice
    results = []
    while not results or results[-1] != FINISHED:
        _, token = outbox.sent[-1]
        results.append(play_slice([one, two][len(results) % 2], game_id, token, 0.0, outbox))
        assert results[-1] in (HANDED_ON, FINISHED)
    with store.read() as conn:
        game = get_game(conn, game_id)
    assert game.status == "finished" and game.lease_owner is None
    assert len(outbox.sent) == len(results)  # one hand-on per slice that did not finish, plus the first
    assert verify(store, book).clean


def test_a_worker_of_another_engine_version_refuses_the_book(store, caplog, monkeypatch):
    import workers.tasks as tasks
    from obook.config import settings

    book = ensure_book(store, "old", RANDOM_BOOK)
    [game_id] = start_games(store, book, target=1)
    with store.write() as conn:
        conn.execute(update(BOOKS).where(BOOKS.c.id == book.id).values(engine_version="area-ko-0/zobrist-0"))
    monkeypatch.setenv("OBOOK_DATABASE_URL", store.url)
    settings.cache_clear()
    monkeypatch.setitem(tasks._state, "players", {})
    try:
        with caplog.at_level(logging.ERROR, logger="obook.worker"):
            assert tasks.advance_unit.run("old", game_id, None) == "refused"
    finally:
        settings.cache_clear()
    assert "refuses unit" in caplog.text and "area-ko-0/zobrist-0" in caplog.text
    assert lease_of(store, game_id)[0] is None  # untouched


@pytest.mark.parametrize("moves, origins, why", [
    ("C3 C3 pass pass", "mmmm", "illegal stored game"),
    ("C3 D3 pass pass", "mm", "move origins"),
    ("C3 D3", "mm", "not over"),
])
def test_finishing_replays_the_game_and_rejects_a_bad_one(store, moves, origins, why, caplog):
    book = ensure_book(store, "bad", RANDOM_BOOK)
    [game_id] = start_games(store, book, target=1)
    with store.write() as conn:
        conn.execute(update(GAMES).where(GAMES.c.id == game_id).values(
            moves=moves, n_moves=len(moves.split()), origins=origins))
    player = SelfPlayer(store, book, owner="h:1:celery:t", kind="celery")
    held = player.claim(game_id)
    with caplog.at_level(logging.ERROR):
        assert player.finish(held.game, None) is True  # the stored moves are checked before any position is used
    assert why in caplog.text
    with store.read() as conn:
        assert get_game(conn, game_id).status == "abandoned"
        assert stats_count(conn, book.id) == 0


def test_compose_file_has_the_services_health_checks_and_settings():
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"postgres", "redis", "migrate", "api", "driver", "worker"} <= services.keys()
    for name in ("postgres", "redis", "api", "worker"):
        assert "healthcheck" in services[name], name
    for name in ("migrate", "api", "driver", "worker"):
        env = services[name]["environment"]
        assert "OBOOK_DATABASE_URL" in env, name
    assert "OBOOK_BROKER_URL" in services["worker"]["environment"]
    assert "container_name" not in services["worker"]  # it scales with --scale worker=N
    assert services["migrate"]["restart"] == "no"
    # exit 0: the target is reached and durable; set-aside units wait for an operator instead of exiting
    # (3), and a misconfigured driver (2) is not started again for ever (issue 33)
    assert services["driver"]["restart"] == "on-failure:5"
    assert "--wait-set-aside" in services["driver"]["command"]
    assert services["driver"]["healthcheck"]["test"][1:5] == ["obook", "grid", "health", "--book"]
    assert services["worker"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert (ROOT / "Dockerfile").exists()


def test_the_image_warms_up_with_a_command_that_exists():
    """The Dockerfile compiles the engine at build time with ``obook warm-up``; the command must
    exist (a renamed one would only fail at ``docker build``, which no test here can run)."""
    import re

    from obook.cli import build_parser

    commands = re.findall(r"&& obook ([\w-]+)", (ROOT / "Dockerfile").read_text())
    assert "warm-up" in commands
    choices = next(a for a in build_parser()._actions if a.dest == "command").choices
    for command in commands:
        assert command in choices, command


def test_the_grid_target_counts_self_play_games_only(store):
    """Issue 19 item 4: seed games are not part of ``--target-games``, as in ``obook build --games``:
    a book with 3 seed games and a target of 2 gets 2 self-play games."""
    from obook.book.keys import opening_record
    from obook.store.games import insert_finished_game
    from obook.store.models import SEED, SELFPLAY

    book = ensure_book(store, "seeded", RANDOM_BOOK)
    with store.write() as conn:
        for n, moves in enumerate((["C3", "D3"], ["C3", "C4"], ["B2", "D4"])):
            stats, scores = opening_record(5, book.komi, False, moves, "B", 1.0, book.depth)
            insert_finished_game(conn, book.id, moves, "ss", "B+1", "B", 1.0, SEED, f"seed{n}", stats, scores)
    outbox = Outbox()
    driver = Driver(store, DriverPlan(book="seeded", target=2), send=outbox, pending=outbox.text)
    player = SelfPlayer(store, book, owner="h:1:celery:t", kind="celery")
    for _ in range(200):
        step = driver.step()
        if step.done:
            break
        while outbox.sent:
            game_id, token = outbox.sent.pop()
            play_slice(player, game_id, token, 60.0, outbox)
    assert step.done and step.finished == 2
    with store.read() as conn:
        assert game_counts(conn, book.id, SELFPLAY)[book.id] == {"finished": 2}
        assert game_counts(conn, book.id, SEED)[book.id] == {"finished": 3}
    assert verify(store, book).clean
