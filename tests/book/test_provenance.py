"""Issue 32 item 1: a book records the engine that built it (every search option, defaults included,
and a digest of the learned knowledge its searches read); a build refuses to continue a book whose
engine differs from this obook's unless told to, a worker never continues one, and the commands,
the API and the export show the record. Item 7: a minimax book's seed salt makes two builds differ."""

from __future__ import annotations

import dataclasses

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from obook.book.expansion import Expander, expansion_seed
from obook.book.keys import EngineChanged
from obook.book.library import BookSettings, ensure_book, open_book_store
from obook.book.selfplay import SelfPlayer
from obook.search.config import SearchConfig
from obook.search.provenance import engine_differences, knowledge_digest
from obook.store.books import get_book, set_book_engine
from obook.store.db import forget_stores
from tests.book.test_book_cli import run_cli

OTHER_KNOWLEDGE = "sha256:0123456789abcdef"  # a refitted move model


@pytest.fixture
def store(tmp_path):
    forget_stores()
    store = open_book_store(f"sqlite:///{tmp_path / 'p.db'}", create=True)
    yield store
    forget_stores()


def new_book(store, name="p", **settings):
    settings.setdefault("algorithm", "mvbm")
    settings.setdefault("search", "playouts=300")
    return ensure_book(store, name, BookSettings(size=7, seconds_per_move=0, **settings))


def record(store, book, search: str, knowledge: str | None):
    """What an older obook or another model would have recorded."""
    with store.write() as conn:
        set_book_engine(conn, book.id, search, knowledge)
        return get_book(conn, book.name)


def test_a_new_book_records_every_search_option_and_the_knowledge_digest(store):
    book = new_book(store)
    recorded = dict(item.split("=") for item in book.search.split(","))
    assert set(recorded) == {f.name for f in dataclasses.fields(SearchConfig)}  # defaults included
    assert recorded["playouts"] == "300" and recorded["ladders"] == "on"
    assert SearchConfig.from_spec(book.search) == SearchConfig(playouts=300)
    assert book.knowledge == knowledge_digest() and book.knowledge.startswith("sha256:")
    assert engine_differences(book.search, book.knowledge) == []
    again = new_book(store)  # the same search, written another way, continues the book
    assert again.id == book.id


def test_a_spec_names_the_same_search_when_read_back():
    config = SearchConfig(exploration=0.123456789, tuned_c1=2 ** 0.5, rave_k=3000.0)
    assert SearchConfig.from_spec(config.to_full_spec()) == config
    assert SearchConfig.from_spec(config.to_spec()) == config  # not cut to six digits


def test_a_build_refuses_a_book_of_other_knowledge_unless_told(store):
    book = record(store, new_book(store), new_book(store).search, OTHER_KNOWLEDGE)
    with pytest.raises(EngineChanged, match="move model or shape counts differ") as refused:
        new_book(store)
    assert OTHER_KNOWLEDGE in str(refused.value) and "--allow-engine-change" in str(refused.value)
    adopted = ensure_book(store, "p", BookSettings(size=7, algorithm="mvbm", seconds_per_move=0),
                          allow_engine_change=True)
    assert adopted.id == book.id and adopted.knowledge == knowledge_digest()
    assert new_book(store).id == book.id  # the record is this engine's now


def test_a_book_from_before_the_record_is_refused_then_adopted_in_full(store):
    book = record(store, new_book(store), "playouts=300", None)  # a short spec, no digest
    with pytest.raises(EngineChanged, match="records no engine"):
        new_book(store)
    adopted = ensure_book(store, "p", BookSettings(size=7, algorithm="mvbm", seconds_per_move=0),
                          allow_engine_change=True)
    assert adopted.id == book.id and SearchConfig.from_spec(adopted.search) == SearchConfig(playouts=300)
    assert "ladders=on" in adopted.search and engine_differences(adopted.search, adopted.knowledge) == []


def test_an_option_new_since_the_book_was_made_is_a_difference(store):
    book = new_book(store)
    without_ladders = ",".join(item for item in book.search.split(",") if not item.startswith("ladders="))
    differences = engine_differences(without_ladders, book.knowledge)
    assert differences == ["search option ladders is new since the book was made (this obook would use ladders=True)"]
    assert engine_differences(book.search + ",no_such_option=1", book.knowledge)[0].startswith(
        "its search is not this obook's: unknown search option 'no_such_option'")


def test_workers_never_continue_a_book_of_another_engine(store):
    games = record(store, new_book(store), new_book(store).search, OTHER_KNOWLEDGE)
    with pytest.raises(EngineChanged, match="refusing to add games to it"):
        SelfPlayer(store, games)
    minimax = new_book(store, name="m", algorithm="minimax")
    minimax = record(store, minimax, minimax.search, OTHER_KNOWLEDGE)
    with pytest.raises(EngineChanged, match="refusing to expand it"):
        Expander(store, minimax)


def test_the_cli_the_api_and_the_export_show_the_record(store, tmp_path, capsys):
    book = new_book(store, name="m", algorithm="minimax", seed_salt=7)
    record(store, new_book(store, name="old"), "playouts=300", None)
    code, out, err = run_cli(capsys, "books", "--db", store.url)
    assert code == 0, err
    lines = out.splitlines()
    assert any(line.startswith("m:") for line in lines)
    assert (f"  search playouts=300; knowledge {book.knowledge}; this obook's engine; seed salt 7; "
            "reply temperature 0.5") in lines
    assert ("  search playouts=300; knowledge not recorded; not this obook's engine (the book records no engine "
            "(it was made before obook recorded the full search and its knowledge))") in lines
    code, out, err = run_cli(capsys, "lookup", "--db", store.url, "--book", "old", "--json")
    assert code == 0, err
    assert '"knowledge": null' in out and "records no engine" in out
    code, out, err = run_cli(capsys, "export", "--db", store.url, "--book", "m", "--sgf", str(tmp_path / "m.sgf"))
    assert code == 0, err
    assert (f"Engine: search playouts=300; knowledge {book.knowledge}; this obook's engine; seed salt 7; "
            "reply temperature 0.5.") in (
        tmp_path / "m.sgf").read_text()
    with TestClient(create_app(store.url)) as client:
        books = {b["name"]: b for b in client.get("/v1/books").json()["items"]}
    assert books["m"]["knowledge"] == knowledge_digest() and books["m"]["seed_salt"] == 7
    assert books["old"]["knowledge"] is None and "not this obook's engine" in books["old"]["engine"]


def test_a_seed_salt_changes_every_expansions_seed_and_none_keeps_them():
    assert expansion_seed(12345, 0, None, salt=0) == expansion_seed(12345, 0, None)
    seeds = {expansion_seed(12345, 0, None, salt) for salt in range(50)}
    assert len(seeds) == 50
    with pytest.raises(Exception, match="seed salt"):
        BookSettings(size=7, algorithm="minimax", seed_salt=-1).validated()
    with pytest.raises(Exception, match="option of a minimax book"):
        BookSettings(size=7, algorithm="mvbm", seed_salt=3).validated()
