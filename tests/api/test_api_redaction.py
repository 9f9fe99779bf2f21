"""Issue 19, item 10: anonymous clients see no database URL or host, no worker host name or pid and
no lease owner's real name (a grid token would let a task injected into the broker take the game);
the admin token shows them. Against the real stores (SQLite and PostgreSQL)."""

from __future__ import annotations

import json

from obook.store.games import append_move, top_up_games
from tests.helpers import claim_game
from obook.store.workers import heartbeat
from tests.api.test_api import GAMES, book, make_client  # noqa: F401 - fixtures

OWNER = "secret-host.example:987654321:build1:abc"
TOKEN_OWNER = "q:1764100000000:deadbeef"
ADMIN = {"Authorization": "Bearer s3cret"}


def playing(store, book):
    with store.write() as conn:
        first, second = top_up_games(conn, book.id, len(GAMES) + 2, [7, 8])
        game = claim_game(conn, book.id, OWNER, 60, first)
        append_move(conn, game, OWNER, "E5", "m", 60)
        claim_game(conn, book.id, TOKEN_OWNER, 60, second)
        heartbeat(conn, OWNER, host="secret-host.example", pid=987654321, kind="local", book_id=book.id, game_id=first,
                  moves="E5")
    return first, second


def test_progress_and_games_hide_hosts_pids_and_owners_from_anonymous_clients(store_url, store, book):
    first, second = playing(store, book)
    with make_client(store_url, admin_token="s3cret") as client:
        anonymous = client.get("/v1/progress")
        games = client.get("/v1/books/demo/games", params={"status": "in_progress"})
        one = client.get(f"/v1/games/{second}")
        admin = client.get("/v1/progress", headers=ADMIN).json()
        wrong = client.get("/v1/progress", headers={"Authorization": "Bearer nope"}).text
        admin_game = client.get(f"/v1/games/{second}", headers=ADMIN).json()
    for text in (anonymous.text, games.text, one.text, wrong):
        assert "secret-host" not in text and "987654321" not in text and "deadbeef" not in text and "q:1764" not in text
    progress = anonymous.json()
    (worker,) = progress["workers"]
    assert (worker["host"], worker["pid"]) == (None, None)
    in_flight = {g["id"]: g["lease_owner"] for g in progress["books"][0]["in_flight"]}
    assert worker["id"] == in_flight[first] and worker["id"].startswith("build1:")  # the dashboard still matches them
    assert in_flight[second].startswith("token:")
    assert {g["id"] for g in games.json()["items"]} == {first, second}
    (real,) = admin["workers"]
    assert (real["id"], real["host"], real["pid"]) == (OWNER, "secret-host.example", 987654321)
    assert admin_game["lease_owner"] == TOKEN_OWNER


def test_set_aside_reasons_show_anonymous_clients_the_error_type_only(store_url, store, book):
    """Issue 33: a set-aside game's reason (up to 2,000 characters, possibly SQL or a lease owner)
    went whole to anonymous /v1/progress."""
    from sqlalchemy import update

    from obook.store.games import GAMES as GAMES_TABLE

    reason = f"OperationalError: (psycopg) connection to secret-host.example failed; owner {OWNER}"
    with store.write() as conn:
        (game,) = top_up_games(conn, book.id, len(GAMES) + 1, [9])
        conn.execute(update(GAMES_TABLE).where(GAMES_TABLE.c.id == game).values(status="set_aside", failures=3,
                                                                                failure=reason))
    with make_client(store_url, admin_token="s3cret") as client:
        anonymous = client.get("/v1/progress")
        admin = client.get("/v1/progress", headers=ADMIN).json()
    assert "secret-host" not in anonymous.text and "987654321" not in anonymous.text
    (aside,) = anonymous.json()["books"][0]["set_aside"]
    assert (aside["id"], aside["failures"], aside["reason"]) == (game, 3, "OperationalError")
    assert admin["books"][0]["set_aside"][0]["reason"] == reason


def test_health_and_503_answers_name_the_database_only_to_the_admin(store_url, book):
    with make_client(store_url, admin_token="s3cret") as client:
        assert client.get("/healthz").json() == {"status": "ok", "database": None,
                                                 "schema_revision": client.get("/healthz").json()["schema_revision"],
                                                 "detail": None}
        assert client.get("/healthz", headers=ADMIN).json()["database"]
    unreachable = "postgresql+psycopg://obook:pw@db-secret.internal.example:5432/obook?connect_timeout=2"
    with make_client(unreachable, admin_token="s3cret") as client:
        answers = [client.get("/healthz"), client.get("/v1/books"), client.get("/v1/books/demo/lookup"),
                   client.get("/v1/progress")]
        admin = client.get("/healthz", headers=ADMIN)
    for answer in answers:
        assert answer.status_code == 503, answer.text
        assert "db-secret" not in answer.text and "5432" not in answer.text and "obook:" not in answer.text
        assert json.loads(answer.text)["detail"]  # still says what is wrong
    assert admin.status_code == 503 and "db-secret.internal.example" in admin.json()["detail"]
    assert "pw" not in admin.json()["detail"].replace("psycopg", "")  # never the password, even to the admin
