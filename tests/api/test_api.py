"""The book service against real databases (SQLite and PostgreSQL, the ``store`` fixtures): books,
lookups with symmetries and transpositions, the bot's move, games, SGF, progress, health, limits,
the admin token and the lookup cache."""

from __future__ import annotations

import time
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient
from sgfmill import sgf

from api.app import create_app
from obook.book.keys import opening_statistics
from obook.book.library import BookSettings, ensure_book
from obook.book.selfplay import max_moves
from obook.config import Settings
from obook.store.games import append_move, insert_finished_game, list_games, top_up_games
from tests.helpers import claim_game
from obook.store.games import GAMES as GAMES_TABLE
from obook.store.stats import STATS as STATS_TABLE
from obook.store.models import SELFPLAY, utcnow
from sqlalchemy import func, select, update
from obook.store.workers import heartbeat

GAMES = [
    ("E5 G5 C5", "B"),
    ("E5 G5 D3", "W"),
    ("E5 C4", "B"),
    ("C3 D4", "W"),  # seen from G7 (rotated by 180 degrees), White's answer is F6
    ("C3 G7 E5 D5", "W"),  # reached again by E5 G7 C3: a transposition
]


def add_game(store, book, moves: str, winner: str | None) -> int:
    words = moves.split()
    stats = opening_statistics(book.size, book.komi, book.superko, words, winner, book.depth)
    with store.write() as conn:
        return insert_finished_game(conn, book.id, words, "m" * len(words), f"{winner}+R" if winner else "0",
                                      winner, None, SELFPLAY, None, stats)


@pytest.fixture
def book(store):
    book = ensure_book(store, "demo", BookSettings(size=9, komi=7.5, algorithm="mvbm"))
    for moves, winner in GAMES:
        add_game(store, book, moves, winner)
    return book


def make_client(store_url, **settings) -> TestClient:
    return TestClient(create_app(store_url, Settings(**{"api_cache_seconds": 0, **settings})))


@pytest.fixture
def client(store_url, book):
    with make_client(store_url) as client:
        yield client


def candidates(answer) -> dict[str, tuple[int, int]]:
    return {c["move"]: (c["games"], c["wins"]) for c in answer["candidates"]}


# ---- books -----------------------------------------------------------------------------------------


def test_books_lists_counts_and_pages(client, store):
    ensure_book(store, "another", BookSettings(size=7, komi=9, algorithm="mbm"))
    answer = client.get("/v1/books").json()
    assert answer["total"] == 2
    assert [b["name"] for b in answer["items"]] == ["another", "demo"]
    demo = answer["items"][1]
    assert (demo["size"], demo["komi"], demo["algorithm"]) == (9, 7.5, "mvbm")
    assert (demo["games_finished"], demo["games_in_progress"]) == (len(GAMES), 0)
    page = client.get("/v1/books", params={"limit": 1, "offset": 1}).json()
    assert [b["name"] for b in page["items"]] == ["demo"] and page["total"] == 2
    assert client.get("/v1/books", params={"limit": 201}).status_code == 422
    assert client.get("/v1/books", params={"offset": -1}).status_code == 422


@pytest.mark.parametrize("path, name, value", [("/v1/books", "offset", "+0.0"), ("/v1/books", "limit", "007"),
                                               ("/v1/progress", "offset", "+0.0"), ("/v1/progress", "games_limit", "0x2"),
                                               ("/v1/books/demo/export.sgf", "max_nodes", " 5"),
                                               ("/v1/books/demo/export.sgf", "depth", "1.")])
def test_an_integer_parameter_not_written_as_a_json_number_is_422_naming_it(client, path, name, value):
    """The schema says integer; pydantic alone reads "+0.0" as 0 (the fuzz test found it), while
    JSON Schema's integers include "2.0" and "2e0"."""
    answer = client.get(path, params={name: value})
    assert answer.status_code == 422
    assert name in answer.text and "JSON number" in answer.text
    for same in ("2", "2.0", "2e0"):
        assert client.get(path, params={name: same}).status_code == 200


# ---- lookups ---------------------------------------------------------------------------------------


def test_lookup_root_has_every_first_move(client):
    answer = client.get("/v1/books/demo/lookup").json()
    assert answer["in_book"] and answer["to_move"] == "B" and answer["move_number"] == 1
    assert candidates(answer) == {"E5": (3, 2), "C3": (2, 0)}  # C3's two games were both won by White
    assert answer["usage_move"] == "E5" and answer["coevolution_move"] == "E5"
    assert [(c["usage"], c["coevolution"]) for c in answer["candidates"]] == [(True, True), (False, False)]
    assert answer["candidates"][0]["winrate"] == pytest.approx(2 / 3)
    assert answer["candidates"][0]["share"] == 1.0  # E5 won every game Black won here
    assert answer["stones"] == [] and answer["games"] == 5


@pytest.mark.parametrize("moves", ["", "E5", "E5 G7 C3", "C3 D4 E5"])
def test_lookup_is_the_one_serialised_form_the_command_line_gives(client, store, book, moves):
    """The service and ``obook lookup --json`` serialise one lookup: the command line's form is the
    service's without the size, move number, total of games, per-candidate marks and stones."""
    from obook.book.library import lookup
    from obook.book.lookup import lookup_document

    answer = client.get("/v1/books/demo/lookup", params={"moves": moves}).json()
    found = lookup(store, book, moves)
    links = [c.pop("games_url") for c in answer["candidates"]]  # the service's links to its games lists
    assert all(link.startswith("/v1/books/demo/games?through=") for link in links)
    assert {k: v for k, v in answer.items() if k != "stones"} == lookup_document(found)
    brief = lookup_document(found, brief=True)
    assert list(brief) == ["book", "moves", "to_move", "in_book", "candidates", "usage_move", "coevolution_move"]
    assert brief == {k: answer[k] for k in brief if k != "candidates"} | {"candidates": [
        {k: c[k] for k in ("move", "games", "wins", "draws", "winrate", "share")} for c in answer["candidates"]]}


def test_lookup_answers_in_the_callers_orientation(client):
    after_g7 = client.get("/v1/books/demo/lookup", params={"moves": "G7"}).json()
    assert candidates(after_g7) == {"F6": (1, 1), "C3": (1, 1)}  # D4 and G7 of the stored C3 games, rotated
    assert after_g7["stones"] == [{"vertex": "G7", "color": "B", "move": 1}]
    after_e5 = client.get("/v1/books/demo/lookup", params={"moves": "E5"}).json()
    # E5 keeps all 8 symmetries: G5 is one move with C5, E3, E7, and C4 with its 7 images;
    # the book answers with one point of each
    found = candidates(after_e5)
    assert sorted(found.values()) == [(1, 0), (2, 1)]
    side = next(v for v, s in found.items() if s == (2, 1))
    corner = next(v for v, s in found.items() if s == (1, 0))
    assert side in {"G5", "C5", "E3", "E7"}
    assert corner in {"C4", "C6", "G4", "G6", "D3", "F3", "D7", "F7"}


def test_lookup_resolves_transpositions(client):
    direct = client.get("/v1/books/demo/lookup", params={"moves": "C3,G7,E5"}).json()
    transposed = client.get("/v1/books/demo/lookup", params={"moves": "E5 G7 C3"}).json()
    assert candidates(direct) == candidates(transposed)
    (answer,) = candidates(direct).items()  # D5, or E4: the position is symmetric about the diagonal
    assert answer in (("D5", (1, 1)), ("E4", (1, 1)))
    assert transposed["moves"] == ["E5", "G7", "C3"] and transposed["to_move"] == "W"
    assert [s["move"] for s in transposed["stones"]] == [1, 2, 3]


@pytest.mark.parametrize("moves", ["E5,G5", "e5 g5", "E5;g5", " e5 ,  G5 ", "E5\tg5"])
def test_lookup_accepts_every_move_spelling(client, moves):
    answer = client.get("/v1/books/demo/lookup", params={"moves": moves}).json()
    assert answer["moves"] == ["E5", "G5"]
    found = candidates(answer)  # the position is symmetric top-bottom: D3 is also D7
    assert found.get("C5") == (1, 1) and (found.get("D3") or found.get("D7")) == (1, 0) and len(found) == 2


def test_lookup_with_passes_and_out_of_book(client):
    answer = client.get("/v1/books/demo/lookup", params={"moves": "pass"}).json()
    assert answer == {**answer, "moves": ["pass"], "to_move": "W", "in_book": False, "candidates": [],
                      "usage_move": None, "coevolution_move": None, "games": 0}
    assert client.get("/v1/books/demo/lookup", params={"moves": "E5,PASS"}).json()["moves"] == ["E5", "pass"]


def test_uncached_lookups_on_the_event_loop_answer_as_the_threads_do(store_url, book):
    """Without the answer cache, a lookup of a statistical book on PostgreSQL runs on the event
    loop (compiled replay, one SELECT on the loop's own connections) once the book's row and
    generation are known; its answers are byte for byte the threads' (``_lookup_body``), whose
    path SQLite keeps."""
    questions = ["", "E5", "E5 G5", "C3", "G7", "E5 G7 C3", "C3 G7 E5", "e5 g5 c5", "E5 G5 pass"]
    with make_client(store_url, api_fresh_seconds=60) as client:
        service = client.app.state.service
        client.get("/v1/books/demo/lookup")  # reads the book and its generation (threads)
        answers = {}
        for moves in questions:
            answer = client.get("/v1/books/demo/lookup", params={"moves": moves})
            assert answer.status_code == 200
            answers[moves] = answer.content
        assert answer.headers["etag"] == client.get("/v1/books/demo/lookup").headers["etag"]
        if store_url.startswith("postgresql"):
            assert [pool.count for pool in service.async_reader._pools.values()] == [1]
        else:
            assert service.async_reader is None
        for moves in questions:
            _, _, body = service._lookup_body("demo", tuple(moves.split()), 1)
            assert answers[moves] == body
        bad = client.get("/v1/books/demo/lookup", params={"moves": "E5 E5"})  # the route's 422, from the loop's error
        assert bad.status_code == 422 and "move 2 (E5)" in bad.json()["detail"]


@pytest.mark.parametrize("moves, named, why", [
    ("E5,Z9", "Z9", "invalid vertex"),
    ("E5,E5", "E5", "occupied"),
    ("K5", "K5", "off a 9x9 board"),
    ("E5,G5,I3", "I3", "invalid vertex"),
    ("E5,,G5x", "G5x", "invalid vertex"),
])
def test_bad_moves_are_422_naming_the_move(client, moves, named, why):
    answer = client.get("/v1/books/demo/lookup", params={"moves": moves})
    assert answer.status_code == 422
    detail = answer.json()["detail"]
    assert named in detail and why in detail
    assert client.get("/v1/books/demo/move", params={"moves": moves}).status_code == 422


def test_suicide_and_ko_are_illegal(client):
    suicide = "B1 A2 C1 B2 pass C2 pass D1 A1"  # White stones around A1; Black A1 has no liberty
    answer = client.get("/v1/books/demo/lookup", params={"moves": suicide})
    assert answer.status_code == 422 and "move 9 (A1)" in answer.json()["detail"]
    assert "suicide" in answer.json()["detail"]


def test_too_many_moves_or_too_long_text_is_422(client):
    assert client.get("/v1/books/demo/lookup", params={"moves": ",".join(["pass"] * 800)}).status_code == 422
    assert client.get("/v1/books/demo/lookup", params={"moves": "E5 " * 2000}).status_code == 422


def test_unknown_book_is_404(client):
    for path in ("/v1/books/nope/lookup", "/v1/books/nope/move", "/v1/books/nope/games", "/v1/books/nope/export.sgf"):
        answer = client.get(path)
        assert answer.status_code == 404, path
        assert "no book named 'nope'" in answer.json()["detail"]
    assert client.get("/v1/books/with%20space/lookup").status_code == 422


# ---- the bot's move --------------------------------------------------------------------------------


def test_move_is_the_usage_rule(client):
    assert client.get("/v1/books/demo/move").json() == {
        "book": "demo", "moves": [], "to_move": "B", "in_book": True, "move": "E5", "usage_move": "E5",
        "coevolution_move": "E5", "games": 3, "wins": 2, "winrate": pytest.approx(2 / 3),
        "games_url": "/v1/books/demo/games?through=E5"}
    assert client.get("/v1/books/demo/move", params={"moves": "e5"}).json()["move"] in ("G5", "C5", "E3", "E7")


def test_move_out_of_book_is_an_ordinary_answer(client, store, book):
    """A bot asks until the book runs out: that is 200 with ``move: null``, not an error."""
    nothing = client.get("/v1/books/demo/move", params={"moves": "A1"})
    assert nothing.status_code == 200
    assert nothing.json() == {"book": "demo", "moves": ["A1"], "to_move": "W", "in_book": False, "move": None,
                              "usage_move": None, "coevolution_move": None, "games": 0, "wins": 0, "winrate": None,
                              "games_url": None}
    add_game(store, book, "A1 B1", "B")  # White's answer lost: games but no wins
    no_win = client.get("/v1/books/demo/move", params={"moves": "A1"})
    assert no_win.status_code == 200
    assert (no_win.json()["in_book"], no_win.json()["move"], no_win.json()["games"]) == (True, None, 0)
    assert client.get("/v1/books/demo/lookup", params={"moves": "A1"}).json()["in_book"] is True
    assert client.get("/v1/books/nope/move", params={"moves": "A1"}).status_code == 404
    assert client.get("/v1/books/demo/move", params={"moves": "A1 A1"}).status_code == 422


def test_openapi_names_the_two_choices_alike(client):
    schemas = client.get("/openapi.json").json()["components"]["schemas"]
    for name in ("LookupOut", "MoveOut"):
        fields = schemas[name]["properties"]
        assert {"usage_move", "coevolution_move", "in_book"} <= set(fields), name
        assert "usage rule" in fields["usage_move"]["description"]
        assert "coevolution rule" in fields["coevolution_move"]["description"]
    assert {"usage", "coevolution"} <= set(schemas["CandidateOut"]["properties"])
    move = client.get("/openapi.json").json()["paths"]["/v1/books/{book}/move"]["get"]
    assert set(move["responses"]) >= {"200", "404", "422"}
    assert "out of book" in move["description"].lower()


def test_min_games_filters_the_usage_rule(client):
    assert client.get("/v1/books/demo/move", params={"min_games": 3}).json()["move"] == "E5"
    few = client.get("/v1/books/demo/move", params={"min_games": 4})
    assert few.status_code == 200 and (few.json()["in_book"], few.json()["move"]) == (True, None)
    assert client.get("/v1/books/demo/move", params={"min_games": 0}).status_code == 422


# ---- games and SGF ---------------------------------------------------------------------------------


def test_game_as_json_and_sgf(client, store, book):
    with store.read() as conn:
        game = list_games(conn, book.id, newest_first=False)[0]
    answer = client.get(f"/v1/games/{game.id}").json()
    assert answer["moves"] == ["E5", "G5", "C5"] and answer["book"] == "demo" and answer["winner"] == "B"
    text = client.get(f"/v1/games/{game.id}.sgf")
    assert text.status_code == 200 and text.headers["content-type"].startswith("application/x-go-sgf")
    parsed = sgf.Sgf_game.from_bytes(text.content)
    assert parsed.get_size() == 9 and parsed.get_root().get("RE") == "B+R"
    assert [n.get_move() for n in parsed.get_main_sequence()[1:]] == [("b", (4, 4)), ("w", (4, 6)), ("b", (4, 2))]


def test_missing_or_bad_game_ids(client):
    assert client.get("/v1/games/999999").status_code == 404
    assert client.get("/v1/games/999999.sgf").status_code == 404
    assert client.get("/v1/games/0").status_code == 422
    assert client.get(f"/v1/games/{2**31}").status_code == 422
    assert client.get("/v1/games/abc").status_code == 422


def test_games_of_a_book_are_paged(client):
    answer = client.get("/v1/books/demo/games", params={"limit": 2}).json()
    assert answer["total"] == len(GAMES) and len(answer["items"]) == 2
    rest = client.get("/v1/books/demo/games", params={"limit": 200, "offset": 2}).json()
    assert len(rest["items"]) == len(GAMES) - 2
    assert client.get("/v1/books/demo/games", params={"status": "in_progress"}).json()["total"] == 0
    assert client.get("/v1/books/demo/games", params={"status": "bogus"}).status_code == 422


def test_keyset_pages_neither_skip_nor_repeat_while_games_change(client, store, book):
    """Offset pages go by last change, which a building book keeps changing: the ``after`` cursor
    goes by id, so games that change or arrive between two pages move nothing."""
    first = client.get("/v1/books/demo/games", params={"limit": 2, "after": 0}).json()
    assert first["after"] == 0 and first["next_after"] == first["items"][-1]["id"]
    ids = [g["id"] for g in first["items"]]
    add_game(store, book, "D4", "B")  # arrives between two pages: it is newer than the walk
    with store.write() as conn:  # and the oldest game changes: offset paging would now move it to the front
        oldest = conn.execute(select(func.min(GAMES_TABLE.c.id)).where(GAMES_TABLE.c.book_id == book.id)).scalar_one()
        conn.execute(GAMES_TABLE.update().where(GAMES_TABLE.c.id == oldest).values(updated_at=utcnow()))
    cursor = first["next_after"]
    while cursor is not None:
        page = client.get("/v1/books/demo/games", params={"limit": 2, "after": cursor}).json()
        ids += [g["id"] for g in page["items"]]
        cursor = page["next_after"]
    assert ids == sorted(ids, reverse=True) and len(ids) == len(set(ids)) == len(GAMES)
    assert client.get("/v1/books/demo/games", params={"after": -1}).status_code == 422
    assert client.get("/v1/books/demo/games", params={"limit": 200}).json()["next_after"] is None


def test_export_sgf_is_the_book_tree(client):
    answer = client.get("/v1/books/demo/export.sgf", params={"depth": 2})
    assert answer.status_code == 200
    root = sgf.Sgf_game.from_bytes(answer.content).get_root()
    assert sorted(child.get_move()[1] for child in root) == [(2, 2), (4, 4)]  # C3 and E5
    assert client.get("/v1/books/demo/export.sgf", params={"max_nodes": 0}).status_code == 422


def test_export_sgf_with_min_games_0_writes_every_move(client):
    every = client.get("/v1/books/demo/export.sgf", params={"min_games": 0})
    assert every.status_code == 200
    assert every.content == client.get("/v1/books/demo/export.sgf", params={"min_games": 1}).content
    assert client.get("/v1/books/demo/export.sgf", params={"min_games": -1}).status_code == 422


# ---- progress --------------------------------------------------------------------------------------


def test_progress_shows_games_in_flight_and_workers(client, store, book):
    with store.write() as conn:
        (game_id,) = top_up_games(conn, book.id, len(GAMES) + 1, [7])
        game = claim_game(conn, book.id, "host:1:build1:abc", 60, game_id)
        for vertex in ("E5", "G5", "F4"):
            game = append_move(conn, game, "host:1:build1:abc", vertex, "m", 60)
        heartbeat(conn, "host:1:build1:abc", host="host", pid=1, kind="local", book_id=book.id, game_id=game_id,
                    moves="E5 G5 F4")
        capped = conn.execute(select(GAMES_TABLE.c.id).where(GAMES_TABLE.c.book_id == book.id,
                                                              GAMES_TABLE.c.status == "finished")).first()[0]
        conn.execute(update(GAMES_TABLE).where(GAMES_TABLE.c.id == capped).values(n_moves=max_moves(9)))
    answer = client.get("/v1/progress").json()
    totals = answer["totals"]
    assert totals == {**totals, "books": 1, "games_finished": len(GAMES), "games_in_progress": 1, "live_workers": 1,
                      "games_last_hour": len(GAMES)}
    (demo,) = answer["books"]
    assert demo["games_per_hour"] == len(GAMES) and sum(p["games"] for p in demo["rate"]) == len(GAMES)
    assert demo["growth"][-1]["finished"] == len(GAMES)
    assert demo["games_at_move_cap"] == 1  # a game as long as the cap: a cycle, or nobody could finish it
    (playing,) = demo["in_flight"]
    assert playing["id"] == game_id and playing["moves"] == ["E5", "G5", "F4"] and playing["to_move"] == "W"
    assert {s["vertex"]: (s["color"], s["move"]) for s in playing["stones"]} == {
        "E5": ("B", 1), "G5": ("W", 2), "F4": ("B", 3)}
    (worker,) = answer["workers"]
    assert worker["book"] == "demo" and worker["game_id"] == game_id and worker["moves"] == ["E5", "G5", "F4"]
    assert client.get("/v1/progress", params={"games_limit": 0}).json()["books"][0]["in_flight"] == []
    assert client.get("/v1/progress", params={"games_limit": 21}).status_code == 422
    assert client.get("/v1/progress", params={"limit": 51}).status_code == 422


def test_an_expansion_whose_line_does_not_replay_does_not_fail_the_progress_page(client, store, book):
    """Issue 33: one running expansion whose stored moves do not replay turned all of /v1/progress
    into a 422; it is shown without stones instead."""
    import datetime as dt

    from obook.store.minimax import schedule_expansion
    from obook.store.models import Expansion

    minimax = ensure_book(store, "mm", BookSettings(size=9, algorithm="minimax", search="playouts=300",
                                                    seconds_per_move=0))
    with store.write() as conn:
        job = schedule_expansion(conn, minimax.id, 12345, 0, ["E5", "E5"], 0.0, 1)  # E5 twice: illegal
        conn.execute(update(Expansion.__table__).where(Expansion.__table__.c.id == job).values(
            lease_owner="host:1:build1:abc", lease_until=utcnow() + dt.timedelta(minutes=5)))
    answer = client.get("/v1/progress")
    assert answer.status_code == 200, answer.text
    mm = next(b for b in answer.json()["books"] if b["name"] == "mm")
    (running,) = mm["in_flight"]
    assert running["moves"] == ["E5", "E5"] and running["stones"] == [] and running["to_move"] == "B"


# ---- a search-valued (minimax) book: its unit is the expansion -------------------------------------

MINIMAX_EXPANSIONS = 4


@pytest.fixture
def minimax(store, compiled_engine):
    """A small minimax book (5x5, 300 playouts a search) after a few expansions."""
    from tests.book.test_minimax import expand, minimax_book

    book = minimax_book(store, name="mm", expansion="reach", play_playouts=30)
    expand(store, book, MINIMAX_EXPANSIONS)
    return book


def test_books_say_each_books_unit_of_work(client, store, book, minimax):
    from obook.book.kinds import book_kind

    book_kind(minimax).top_up(store, minimax, MINIMAX_EXPANSIONS + 1)  # the next one, scheduled
    with store.read() as conn:
        units = book_kind(minimax).counts(conn, minimax)
    items = {b["name"]: b for b in client.get("/v1/books").json()["items"]}
    mm, demo = items["mm"], items["demo"]
    assert (mm["kind"], mm["unit"], mm["units_done"]) == ("search-valued", "expansion", MINIMAX_EXPANSIONS)
    assert (mm["units_open"], mm["units_set_aside"]) == (units.open, 0) and units.open == 1
    assert mm["games_finished"] == 0 and mm["export_url"] == "/v1/books/mm/export.sgf"  # kept for old clients
    assert (demo["kind"], demo["unit"], demo["units_done"], demo["units_open"]) == ("self-play", "game", len(GAMES), 0)
    assert demo["units_done"] == demo["games_finished"] and demo["export_url"] == "/v1/books/demo/export.sgf"
    assert client.get(mm["export_url"]).text.startswith("(;")


def test_progress_counts_a_minimax_books_expansions_over_time(client, store, book, minimax):
    answer = client.get("/v1/progress").json()
    books = {b["name"]: b for b in answer["books"]}
    mm, demo = books["mm"], books["demo"]
    assert (mm["kind"], mm["unit"], mm["units_done"], mm["units_last_hour"]) == (
        "search-valued", "expansion", MINIMAX_EXPANSIONS, MINIMAX_EXPANSIONS)
    assert (mm["expansions_done"], mm["expansions_pending"]) == (mm["units_done"], mm["units_open"])
    assert sum(p["units"] for p in mm["unit_rate"]) == MINIMAX_EXPANSIONS and len(mm["unit_rate"]) == 12
    assert mm["unit_rate"][-1]["units"] == MINIMAX_EXPANSIONS  # all in the last five minutes
    assert mm["unit_growth"][0]["done"] == 0 and mm["unit_growth"][-1]["done"] == MINIMAX_EXPANSIONS
    assert mm["rate"] == [] and mm["growth"] == [] and mm["games_finished"] == 0  # it has no games
    assert answer["totals"]["expansions_done"] == MINIMAX_EXPANSIONS
    # a statistical book's unit series are its games' series
    assert (demo["kind"], demo["unit"], demo["units_done"]) == ("self-play", "game", len(GAMES))
    assert [(p["start"], p["games"]) for p in demo["rate"]] == [(p["start"], p["units"]) for p in demo["unit_rate"]]
    assert [(p["at"], p["finished"]) for p in demo["growth"]] == [(p["at"], p["done"]) for p in demo["unit_growth"]]
    assert demo["units_last_hour"] == demo["games_last_hour"] == len(GAMES)
    assert demo["expansions_done"] is None


def test_a_minimax_lookup_shows_the_positions_own_search(client, store, minimax):
    """Besides each book move's value, bounds, visits and prior: the best move outside the book
    with its bounds and visits, and the mean score and playouts of the position's own search."""
    from obook.book.minimax import own_bounds_of, stored_best_new
    from obook.book.library import lookup
    from obook.store.minimax import read_node

    for moves in ("", None):
        if moves is None:  # one move deeper: White to move, the stored (Black's) score turned around
            moves = client.get("/v1/books/mm/lookup").json()["candidates"][0]["move"]
        answer = client.get("/v1/books/mm/lookup", params={"moves": moves}).json()
        found = lookup(store, minimax, moves)
        with store.read() as conn:
            node = read_node(conn, minimax.id, found.position.canonical()[0])
        best = stored_best_new(node)
        own = own_bounds_of(best)
        assert answer["kind"] == "search-valued" and answer["playouts"] == node.playouts == 300
        assert answer["own_move"] == found.own_move and answer["own_visits"] == best.visits > 0
        assert (answer["own_lcb"], answer["own_value"], answer["own_ucb"]) == pytest.approx((own.lcb, own.value, own.ucb), abs=1e-6)
        assert answer["own_lcb"] <= answer["own_value"] <= answer["own_ucb"]
        black = answer["to_move"] == "B"
        assert answer["score_mean"] == pytest.approx(node.score_mean if black else -node.score_mean, abs=1e-3)
        assert [c["visits"] for c in answer["candidates"]] == [c.visits for c in found.candidates]
    assert "kind" not in client.get("/v1/books/demo/lookup").json()  # a statistical answer: the CLI's form


def test_progress_of_an_empty_store(store_url, store):
    with make_client(store_url) as client:
        answer = client.get("/v1/progress").json()
    assert answer["books"] == [] and answer["workers"] == [] and answer["totals"]["books"] == 0


# ---- health, admin, cache, pages -------------------------------------------------------------------


def test_healthz(client, tmp_path):
    answer = client.get("/healthz")
    assert answer.status_code == 200 and answer.json()["status"] == "ok"
    with make_client(f"sqlite:///{tmp_path / 'empty.db'}") as empty:
        sick = empty.get("/healthz")
        assert sick.status_code == 503 and "obook db upgrade" in sick.json()["detail"]
        assert empty.get("/v1/books").status_code == 503


def test_no_endpoint_changes_data_without_the_token(store_url, book):
    with make_client(store_url) as closed:
        assert closed.post("/v1/admin/cache/clear").status_code == 403
        assert closed.post("/v1/books").status_code == 405
        assert closed.delete("/v1/books/demo/lookup").status_code == 405
    with make_client(store_url, admin_token="s3cret") as client:
        assert client.post("/v1/admin/cache/clear").status_code == 401
        assert client.post("/v1/admin/cache/clear", headers={"Authorization": "Bearer nope"}).status_code == 401
        assert client.post("/v1/admin/cache/clear", headers={"Authorization": "Bearer s3cret"}).status_code == 200


def test_lookup_cache_keeps_answers_until_cleared(store_url, store, book):
    token = {"Authorization": "Bearer t"}
    with make_client(store_url, api_cache_seconds=600, api_fresh_seconds=3600, admin_token="t") as client:
        before = client.get("/v1/books/demo/lookup", params={"moves": "e5 g5"}).json()
        add_game(store, book, "E5 G5 C5", "B")
        assert client.get("/v1/books/demo/lookup", params={"moves": "E5,G5"}).json() == before  # same question
        assert client.post("/v1/admin/cache/clear", headers=token).json()["cleared"] >= 1
        after = client.get("/v1/books/demo/lookup", params={"moves": "E5,G5"}).json()
        assert candidates(after)["C5"] == (2, 2)


def test_cached_answers_follow_new_games(store_url, store, book):
    with make_client(store_url, api_cache_seconds=600, api_fresh_seconds=0) as client:
        assert candidates(client.get("/v1/books/demo/lookup", params={"moves": "E5 G5"}).json())["C5"] == (1, 1)
        assert client.get("/v1/books/demo/move", params={"moves": "E5 G5"}).json()["games"] == 1
        add_game(store, book, "E5 G5 C5", "B")
        assert candidates(client.get("/v1/books/demo/lookup", params={"moves": "E5 G5"}).json())["C5"] == (2, 2)
        assert client.get("/v1/books/demo/move", params={"moves": "E5 G5"}).json()["games"] == 2


def test_cached_answers_are_at_most_two_checks_behind_the_book(store_url, store, book):
    with make_client(store_url, api_cache_seconds=600, api_fresh_seconds=0.2) as client:
        assert candidates(client.get("/v1/books/demo/lookup", params={"moves": "E5 G5"}).json())["C5"] == (1, 1)
        add_game(store, book, "E5 G5 C5", "B")
        time.sleep(0.5)
        assert candidates(client.get("/v1/books/demo/lookup", params={"moves": "E5 G5"}).json())["C5"] == (2, 2)


def test_cached_answers_are_only_served_to_requests_the_route_accepts(store_url, book):
    with make_client(store_url, api_cache_seconds=600, api_fresh_seconds=3600) as client:
        first = client.get("/v1/books/demo/lookup?moves=E5")
        assert first.status_code == 200
        assert client.get("/v1/books/demo/lookup?moves=e5&min_games=1").json() == first.json()
        assert client.get("/v1/books/demo/lookup?moves=E5&min_games=0").status_code == 422
        assert client.get("/v1/books/demo/lookup?moves=E5&min_games=x").status_code == 422
        assert client.get("/v1/books/demo/lookup", params={"moves": "E5" + "," * 4000}).status_code == 422
        assert client.get("/v1/books/demo/lookup?moves=G5&moves=E5").json() == first.json()  # the last one counts
        assert client.get("/v1/books/demo/lookup?moves=E5&unknown=1").json() == first.json()
        assert client.get("/v1/books/de%20mo/lookup?moves=E5").status_code == 422


def test_dashboard_page_and_static_files(client):
    page = client.get("/dashboard")
    assert page.status_code == 200 and 'type="module"' in page.text
    for name in ("dashboard.js", "board.js", "charts.js", "dashboard.css"):
        assert client.get(f"/static/{name}").status_code == 200, name
    assert client.get("/", follow_redirects=False).headers["location"] == "/dashboard"
    assert "/v1/books/{book}/lookup" in client.get("/openapi.json").json()["paths"]


class LoadedFiles(HTMLParser):
    """The URLs a page makes the browser load: ``<script src>`` and ``<link href>``."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        wanted = {"script": "src", "link": "href"}.get(tag)
        value = dict(attrs).get(wanted) if wanted else None
        if value:
            self.urls.append(value)


@pytest.mark.parametrize("page, kinds", [("/docs", {"javascript", "css"}), ("/redoc", {"javascript"})])
def test_api_docs_load_only_files_the_service_serves(client, page, kinds):
    """Swagger UI (/docs) and ReDoc (/redoc) render without Internet access: every file they load
    is a local path that the service answers with the non-empty script or style sheet."""
    answer = client.get(page)
    assert answer.status_code == 200
    parser = LoadedFiles()
    parser.feed(answer.text)
    assert parser.urls
    assert "http://" not in answer.text and "https://" not in answer.text and "//" not in "".join(parser.urls)
    served = set()
    for url in parser.urls:
        assert url.startswith("/"), url
        loaded = client.get(url)
        assert loaded.status_code == 200 and len(loaded.content) > 1000, url
        served.add(next((k for k in ("javascript", "css") if k in loaded.headers["content-type"]), "other"))
    assert kinds <= served


@pytest.mark.parametrize("cache_seconds", [0, 600])  # 600: the second HEAD is answered by api/fastpath.py
def test_head_answers_as_get_without_a_body(store_url, store, book, cache_seconds):
    with store.read() as conn:
        game_id = list_games(conn, book.id, limit=1)[0].id
    paths = ["/v1/books", "/v1/books/demo/lookup?moves=E5", "/v1/books/demo/lookup?moves=E5", "/v1/books/demo/move",
             "/v1/books/demo/games", f"/v1/games/{game_id}", f"/v1/games/{game_id}.sgf", "/v1/books/demo/export.sgf",
             "/v1/progress", "/healthz", "/dashboard", "/static/dashboard.js", "/docs", "/openapi.json",
             "/v1/books/nope/lookup", "/v1/books/demo/lookup?moves=E5,E5"]
    with make_client(store_url, api_cache_seconds=cache_seconds) as client:
        for path in paths:
            got, head = client.get(path), client.head(path)
            assert head.status_code == got.status_code, path
            assert head.content == b"", path
            for name in ("content-length", "content-type", "etag", "cache-control"):
                assert head.headers.get(name) == got.headers.get(name), (path, name)
        tag = client.get("/v1/books/demo/lookup").headers["etag"]
        assert client.head("/v1/books/demo/lookup", headers={"If-None-Match": tag}).status_code == 304
        assert client.head("/v1/admin/cache/clear").status_code == 405  # a POST route stays POST only


def test_serve_refuses_a_database_without_schema(tmp_path, capsys):
    from obook.cli import main

    assert main(["serve", "--db", str(tmp_path / "none.db"), "--port", "0"]) == 2
    assert "obook db upgrade" in capsys.readouterr().err


# ---- HTTP caching and CORS -------------------------------------------------------------------------


@pytest.mark.parametrize("cache_seconds", [0, 600])  # 600: the second ask is answered by api/fastpath.py
def test_lookups_have_the_books_etag_and_answer_304_until_a_game_finishes(store_url, store, book, cache_seconds):
    with make_client(store_url, api_cache_seconds=cache_seconds, api_fresh_seconds=0.3) as client:
        first = client.get("/v1/books/demo/lookup", params={"moves": "E5"})
        tag = first.headers["etag"]
        assert first.status_code == 200 and tag.startswith('"b') and first.headers["cache-control"] == "public, no-cache"
        again = client.get("/v1/books/demo/lookup", params={"moves": "E5"}, headers={"If-None-Match": tag})
        assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == tag
        other = client.get("/v1/books/demo/lookup", params={"moves": "E5"}, headers={"If-None-Match": '"stale"'})
        assert other.status_code == 200 and other.json() == first.json()
        listed = client.get("/v1/books/demo/lookup", params={"moves": "E5"}, headers={"If-None-Match": f'"x", W/{tag}'})
        assert listed.status_code == 304
        move = client.get("/v1/books/demo/move", params={"moves": "E5"})
        assert move.headers["etag"] == tag
        assert client.get("/v1/books/demo/move", params={"moves": "E5"}, headers={"If-None-Match": tag}).status_code == 304
        assert (tag in str(client.app.state.service.answers._items)) == (cache_seconds > 0)
        add_game(store, book, "E5 G5 C5", "B")  # the book changes: so does its tag
        time.sleep(3.5)  # a cached answer is served until ten checks' time without one
        changed = client.get("/v1/books/demo/lookup", params={"moves": "E5"}, headers={"If-None-Match": tag})
        assert changed.status_code == 200 and changed.headers["etag"] != tag
        assert sorted(candidates(changed.json()).values()) == [(1, 0), (3, 1)]
    with make_client(store_url, api_cache_seconds=cache_seconds) as restarted:  # another process, the same tag
        assert restarted.get("/v1/books/demo/lookup").headers["etag"] == changed.headers["etag"]


def test_errors_carry_no_etag(client):
    assert "etag" not in client.get("/v1/books/nope/lookup").headers
    assert "etag" not in client.get("/v1/books/demo/lookup", params={"moves": "E5 E5"}).headers


def test_exports_and_games_answer_304(client, store, book):
    export = client.get("/v1/books/demo/export.sgf")
    tag = export.headers["etag"]
    assert export.status_code == 200 and export.headers["cache-control"] == "public, no-cache"
    assert tag == client.get("/v1/books/demo/lookup").headers["etag"]
    assert client.get("/v1/books/demo/export.sgf", headers={"If-None-Match": tag}).status_code == 304
    with store.read() as conn:
        game_id = list_games(conn, book.id, limit=1)[0].id
    record = client.get(f"/v1/games/{game_id}")
    assert record.headers["cache-control"] == "public, max-age=3600"  # a finished game does not change
    assert record.headers["vary"] == "Authorization"
    assert client.get(f"/v1/games/{game_id}", headers={"If-None-Match": record.headers["etag"]}).status_code == 304
    sgf_record = client.get(f"/v1/games/{game_id}.sgf")
    assert sgf_record.headers["etag"] != record.headers["etag"]
    assert client.get(f"/v1/games/{game_id}.sgf",
                      headers={"If-None-Match": sgf_record.headers["etag"]}).status_code == 304


def test_cors_is_off_unless_origins_are_configured(store_url, book):
    asked = {"Origin": "https://board.example", "Access-Control-Request-Method": "GET",
             "Access-Control-Request-Headers": "If-None-Match"}
    with make_client(store_url) as closed:
        answer = closed.get("/v1/books/demo/lookup", headers={"Origin": "https://board.example"})
        assert "access-control-allow-origin" not in answer.headers
        assert closed.options("/v1/books/demo/lookup", headers=asked).status_code == 405
    with make_client(store_url, cors_origins="https://board.example, https://other.example",
                     api_cache_seconds=600) as open_:
        for _ in range(2):  # the second answer comes from the lookup cache (api/fastpath.py)
            answer = open_.get("/v1/books/demo/lookup", headers={"Origin": "https://board.example"})
            assert answer.headers["access-control-allow-origin"] == "https://board.example"
            assert "etag" in answer.headers["access-control-expose-headers"].lower()
        preflight = open_.options("/v1/books/demo/lookup", headers=asked)
        assert preflight.status_code == 200 and "if-none-match" in preflight.headers["access-control-allow-headers"].lower()
        stranger = open_.get("/v1/books/demo/lookup", headers={"Origin": "https://evil.example"})
        assert "access-control-allow-origin" not in stranger.headers
        missing = open_.get("/v1/books/nope/lookup", headers={"Origin": "https://other.example"})
        assert missing.status_code == 404 and missing.headers["access-control-allow-origin"] == "https://other.example"


def test_each_candidate_has_a_95_interval_on_its_win_rate(client):
    from obook.stats import wilson_interval

    answer = client.get("/v1/books/demo/lookup", params={"moves": ""}).json()
    for c in answer["candidates"]:
        low, high = wilson_interval(c["wins"] + c["draws"] / 2, c["games"])
        assert c["winrate_ci95"] == [round(low, 6), round(high, 6)]
        assert low <= c["winrate"] <= high
    e5 = next(c for c in answer["candidates"] if c["move"] == "E5")
    assert e5["games"] == 3 and e5["winrate_ci95"][0] < 0.5 < e5["winrate_ci95"][1]  # 3 games say little


# ---- sample games and mean scores per candidate (issue 20, item 7) ------------------------------------


def games_behind(client, url: str, limit: int) -> list[dict]:
    """Every game a ``games_url`` lists, walked page by page with its ``after`` cursor."""
    games, after = [], 0
    while after is not None:
        page = client.get(f"{url}&limit={limit}&after={after}")
        assert page.status_code == 200, page.text
        body = page.json()
        assert body["total"] is None and len(body["items"]) <= limit
        games += body["items"]
        after = body["next_after"]
    return games


def through_by_brute_force(store, book, line: list[str]) -> set[int]:
    """Finished games whose first moves are ``line`` under one of the 8 symmetries."""
    from obook.go.symmetry import transform_point
    from obook.go.vertex import format_vertex, parse_vertex

    images = {tuple(format_vertex(transform_point(parse_vertex(v, 9), s, 9), 9) for v in line) for s in range(8)}
    with store.read() as conn:
        rows = list_games(conn, book.id, status="finished", limit=10_000)
    return {g.id for g in rows if tuple(g.moves[:len(line)]) in images}


@pytest.mark.parametrize("moves", ["", "E5", "G7", "E5 G5", "C3 G7 E5", "E5 G7 C3"])
def test_each_candidate_links_to_the_games_through_it(client, store, book, moves):
    """Following a candidate's ``games_url`` lists finished games that really pass through the
    move: replayed, each reaches the position after the moves and the candidate (or a symmetric
    copy: the same canonical key), and they are exactly the games whose record starts with that
    line or a symmetric image of it, paged without repeats."""
    from obook.book.keys import replay

    for extra in ("A1 B1", "E5 G5 C5 D5", "G5 E5"):  # more games, some through no candidate here
        add_game(store, book, extra, "W")
    answer = client.get("/v1/books/demo/lookup", params={"moves": moves}).json()
    assert answer["candidates"]
    for candidate in answer["candidates"]:
        line = answer["moves"] + [candidate["move"]]
        assert candidate["games_url"] == "/v1/books/demo/games?through=" + ",".join(line)
        key = replay(9, 7.5, False, line).canonical()[0]
        listed = games_behind(client, candidate["games_url"], limit=1)
        ids = [g["id"] for g in listed]
        assert len(ids) == len(set(ids)) == len(games_behind(client, candidate["games_url"], limit=200))
        for game in listed:
            assert game["status"] == "finished"
            assert replay(9, 7.5, False, game["moves"][:len(line)]).canonical()[0] == key
        assert set(ids) == through_by_brute_force(store, book, line)
        assert len(ids) <= candidate["games"]  # transpositions are counted in the book, not listed
    transposed = client.get("/v1/books/demo/lookup", params={"moves": "E5 G7 C3"}).json()["candidates"][0]
    assert transposed["games"] == 1 and games_behind(client, transposed["games_url"], 10) == []
    direct = client.get("/v1/books/demo/lookup", params={"moves": "C3 G7 E5"}).json()["candidates"][0]
    assert [g["moves"] for g in games_behind(client, direct["games_url"], 10)] == [["C3", "G7", "E5", "D5"]]


def test_games_through_a_line_refuses_what_it_cannot_bound(client):
    url = "/v1/books/demo/games"
    assert client.get(url, params={"through": "E5", "offset": 5}).status_code == 422
    assert client.get(url, params={"through": "E5", "status": "in_progress"}).status_code == 422
    assert client.get(url, params={"through": ""}).status_code == 422
    bad = client.get(url, params={"through": "E5 E5"})
    assert bad.status_code == 422 and "move 2 (E5)" in bad.json()["detail"]
    assert client.get(url, params={"through": "E5", "after": 999_999}).status_code == 422
    long = ",".join([f"{c}{r}" for r in range(1, 10) for c in "ABCDEFGHJ"][:70])  # 209 characters: beyond the index
    assert "games index" in client.get(url, params={"through": long}).json()["detail"]
    assert client.get(url, params={"through": "e5,PASS"}).status_code == 200


SCORED = [("E5 G5", "B+3.5", "B", 3.5), ("E5 C4", "W+2.5", "W", -2.5), ("E5 G5 C5", "B+R", "B", None)]


def add_scored_game(store, book, moves: str, result: str, winner: str, score: float | None) -> int:
    from obook.book.keys import opening_record

    words = moves.split()
    stats, scores = opening_record(book.size, book.komi, book.superko, words, winner, score, book.depth)
    with store.write() as conn:
        return insert_finished_game(conn, book.id, words, "m" * len(words), result, winner, score, SELFPLAY, None,
                                    stats, scores)


def test_candidates_show_the_movers_mean_final_score(store_url, store):
    """A statistical book's candidate has the mean final score, for the player making the move,
    of the games through it whose score is known (a resignation has none); the score is kept
    with the statistics at each finish (the self-play path too), checked and repaired by verify."""
    from obook.book.keys import opening_record
    from obook.book.verification import verify
    from obook.store.games import finish_game

    book = ensure_book(store, "scored", BookSettings(size=9, komi=7.5, algorithm="mvbm"))
    for moves, result, winner, score in SCORED:
        add_scored_game(store, book, moves, result, winner, score)
    with store.write() as conn:  # a self-play game finished by its player: "C3 D4", W+6.5
        top_up_games(conn, book.id, len(SCORED) + 1, [5])  # the finished self-play games count
        game = claim_game(conn, book.id, "me", 60)
        for vertex in ("C3", "D4"):
            game = append_move(conn, game, "me", vertex, "m", 60)
        stats, scores = opening_record(9, 7.5, False, game.moves, "W", -6.5, book.depth)
        assert finish_game(conn, game, "me", "W+6.5", "W", -6.5, stats, scores=scores)
    with make_client(store_url) as client:
        root = {c["move"]: c for c in client.get("/v1/books/scored/lookup").json()["candidates"]}
        assert root["E5"]["score_mean"] == pytest.approx((3.5 - 2.5) / 2)  # the resigned game has no score
        assert root["C3"]["score_mean"] == -6.5
        after = {c["move"]: c for c in client.get("/v1/books/scored/lookup", params={"moves": "E5"}).json()["candidates"]}
        side = next(c for c in after.values() if c["games"] == 2)  # G5: its two games, one scored
        corner = next(c for c in after.values() if c["games"] == 1)  # C4 (or an image)
        assert side["score_mean"] == -3.5 and corner["score_mean"] == 2.5  # White's side of B+3.5 and W+2.5
        reply = client.get("/v1/books/scored/lookup", params={"moves": "C3"}).json()["candidates"][0]
        assert reply["score_mean"] == 6.5
        fields = client.get("/openapi.json").json()["components"]["schemas"]["CandidateOut"]["properties"]
        assert "Statistical books" in fields["score_mean"]["description"]
    assert verify(store, book).clean
    with store.write() as conn:
        conn.execute(update(STATS_TABLE).where(STATS_TABLE.c.book_id == book.id).values(score_sum=0.0))
    broken = verify(store, book)
    assert broken.scores and not broken.missing and not broken.extra and not broken.clean
    verify(store, book, repair=True)
    assert verify(store, book).clean
    with make_client(store_url) as client:
        root = {c["move"]: c for c in client.get("/v1/books/scored/lookup").json()["candidates"]}
        assert root["E5"]["score_mean"] == pytest.approx(0.5)


def test_shutdown_closes_the_event_loops_connections(postgres_url):
    """The service's own connections are closed when the app shuts down (FastAPI's lifespan): the
    event loop's (AsyncStatsReader) and the statistics readers' pool."""
    from obook.book.library import open_book_store
    from obook.store.migrate import upgrade

    upgrade(postgres_url)
    store = open_book_store(postgres_url)
    book = ensure_book(store, "demo", BookSettings(size=9, komi=7.5, algorithm="mvbm"))
    add_game(store, book, "E5 G5", "B")
    with make_client(postgres_url, api_fresh_seconds=60) as client:
        service = client.app.state.service
        client.get("/v1/books/demo/lookup")  # the threads read the book
        assert client.get("/v1/books/demo/lookup", params={"moves": "E5"}).status_code == 200  # on the loop
        (pool,) = service.async_reader._pools.values()
        connections = [cursor.connection for cursor in pool.idle]  # the pool keeps a cursor of each
        assert connections and not any(c.closed for c in connections)
    assert all(c.closed for c in connections)
    assert not service.async_reader._pools
