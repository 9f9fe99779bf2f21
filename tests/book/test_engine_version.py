"""Issue 19 item 2: every command that computes a book's position keys refuses a book made by
another engine version (``obook.book.keys.ENGINE_VERSION``), with one message naming both versions:
a CLI error without a traceback, HTTP 409 from the service. Reading a book's games stays allowed."""

from __future__ import annotations

import sys

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from obook.book.keys import ENGINE_VERSION, EngineMismatch
from obook.book.player import BookPlayer
from obook.config import Settings
from obook.search.players import make_player
from obook.store.db import forget_stores
from tests.book.test_book_cli import run_cli
from tests.book.test_book_player import seeded_book, stale_book

OLD = "area-ko-0/zobrist-0"


@pytest.fixture
def url(tmp_path):
    forget_stores()
    url = f"sqlite:///{tmp_path / 'v.db'}"
    seeded_book(url)
    stale_book(url)
    yield url
    forget_stores()


def names_both_versions(text: str) -> bool:
    return (f"book 'stale' was made by engine version {OLD}; this obook is {ENGINE_VERSION}" in text
            and "Traceback" not in text)


@pytest.mark.parametrize("command", [
    ["verify"], ["verify", "--repair"], ["lookup", "E5"], ["export", "--sgf", "{tmp}/out.sgf"],
    ["seed", "{tmp}/one.sgf"],
])
def test_the_book_commands_refuse_a_book_of_another_engine_version(url, command, tmp_path, capsys):
    (tmp_path / "one.sgf").write_text("(;GM[1]SZ[9]KM[7.5]RE[B+3];B[ee];W[gc])")
    args = [word.replace("{tmp}", str(tmp_path)) for word in command]
    code, out, err = run_cli(capsys, *args[:1], "--db", url, "--book", "stale", *args[1:])
    assert code == 2, out + err
    assert names_both_versions(err), err
    assert not (tmp_path / "out.sgf").exists()
    code, out, err = run_cli(capsys, *args[:1], "--db", url, "--book", "p", *args[1:])
    assert code == 0, out + err  # the book of this version is served as before


def test_the_books_command_marks_a_book_of_another_engine_version(url, capsys):
    code, out, _ = run_cli(capsys, "books", "--db", url)
    assert code == 0
    [line] = [line for line in out.splitlines() if line.startswith("stale:")]
    assert f"engine version {OLD}, not this obook's {ENGINE_VERSION}" in line
    assert not any("engine version" in line for line in out.splitlines() if line.startswith("p:"))


def test_the_book_player_and_obook_gtp_refuse_it(url, capsys, monkeypatch):
    with pytest.raises(EngineMismatch, match=f"was made by engine version {OLD}; this obook is"):
        BookPlayer(make_player("algorithm=random"), url, "stale")
    monkeypatch.setattr(sys, "stdin", None)  # never read: the book is refused first
    code, out, err = run_cli(capsys, "gtp", "--book", "stale", "--book-db", url)
    assert code == 2 and names_both_versions(err), err


def test_the_service_answers_409_for_lookups_and_exports_and_lists_games(url):
    client = TestClient(create_app(url, Settings(api_cache_seconds=0)))
    for path in ("/v1/books/stale/lookup?moves=E5", "/v1/books/stale/move", "/v1/books/stale/export.sgf"):
        answer = client.get(path)
        assert answer.status_code == 409, (path, answer.text)
        assert names_both_versions(answer.json()["detail"])
    assert client.get("/v1/books/stale/games").status_code == 200
    assert client.get("/v1/books/p/lookup?moves=E5").status_code == 200
