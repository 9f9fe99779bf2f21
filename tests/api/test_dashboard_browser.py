"""End to end: a headless Chromium (Debian's, driven by Playwright) opens /dashboard while a small
embedded build runs, and sees a board with stones being drawn and then changing; it opens a small
minimax book's dashboard and sees the values and bounds the lookup gives, in expansions rather than
games; and it opens the API's documentation (/docs, /redoc) with every other host out of reach."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.conftest import REQUIRE_SERVICES

CHROMIUM = os.environ.get("OBOOK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
FIRST_STONES_SECONDS = 600  # the first build on a cold numba cache compiles the search for minutes
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = os.environ.get("OBOOK_DASHBOARD_SCREENSHOT")


def _missing(why: str):
    if REQUIRE_SERVICES:
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def chromium():
    if not Path(CHROMIUM).exists():
        _missing(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        _missing(f"Playwright is not installed: {exc}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, server: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.time() + seconds
    while time.time() < deadline:
        if server.poll() is not None:
            raise AssertionError(f"obook serve exited with status {server.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise AssertionError("obook serve did not become healthy")


def _stop(process: subprocess.Popen, sig=signal.SIGINT) -> None:
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def live_service(tmp_path, compiled_engine):
    """A store with a build playing games into it and ``obook serve`` reading it: the service URL."""
    from obook.store.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'live.db'}"
    upgrade(url)
    port = _free_port()
    obook = [sys.executable, "-m", "obook.cli"]
    # Their output goes to files: a pipe nobody reads fills up and stops the process writing to it.
    build_log, server_log = tmp_path / "build.log", tmp_path / "serve.log"
    with open(build_log, "wb") as build_out, open(server_log, "wb") as server_out:
        build = subprocess.Popen(obook + ["build", "--db", url, "--book", "live", "--algorithm", "mvbm", "--size", "9",
                                          "--games", "400", "--workers", "1", "--search", "playouts=30",
                                          "--seconds-per-move", "0", "--quiet"], cwd=ROOT, stdout=build_out, stderr=subprocess.STDOUT)
        server = subprocess.Popen(obook + ["serve", "--db", url, "--port", str(port), "--log-level", "warning"],
                                  cwd=ROOT, stdout=server_out, stderr=subprocess.STDOUT)
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", server)
        yield f"http://127.0.0.1:{port}", build, lambda: _tails(build_log, server_log)
    finally:
        _stop(build)
        _stop(server, signal.SIGTERM)


def _tails(*paths: Path) -> str:
    return "\n".join(f"--- {p.name}:\n{p.read_text(errors='replace')[-3000:]}" for p in paths)


def _live_boards(page) -> list[dict]:
    return page.eval_on_selector_all(
        "#live-boards svg.board",
        "boards => boards.map(b => ({game: b.dataset.game, moves: Number(b.dataset.moves),"
        " stones: b.querySelectorAll('circle.stone').length}))")


def test_dashboard_draws_the_games_being_played_and_follows_them(chromium, live_service):
    url, build, logs = live_service
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{url}/dashboard#book=live")

    def wait_for(condition, seconds: float, what: str) -> list[dict]:
        deadline = time.time() + seconds
        while time.time() < deadline:
            assert build.poll() is None, f"the build stopped with status {build.returncode}\n{logs()}"
            boards = _live_boards(page)
            if condition(boards):
                return boards
            page.wait_for_timeout(500)
        raise AssertionError(f"{what} within {seconds:.0f} s; the page shows {_live_boards(page)}, "
                             f"status {page.text_content('#status')!r}\n{logs()}")

    first = wait_for(lambda boards: any(b["stones"] for b in boards), FIRST_STONES_SECONDS,
                     "no board with stones was drawn")
    later = wait_for(lambda boards: boards and boards != first and any(b["stones"] for b in boards), 300,
                     "the boards did not change")
    assert later != first

    # the page's other parts are drawn from the same service
    page.wait_for_selector("#book-board svg.board", timeout=60_000)
    assert page.locator("#workers tr").count() >= 2  # header and at least one worker
    assert page.locator("#rate-chart svg").count() == 1 and page.locator("#growth-chart svg").count() == 1
    # a statistical book is shown in games: its header, its charts and its moves' columns
    assert page.text_content("#rate-title") == "Games per hour" and page.text_content("#live-title") == "Being explored now"
    assert page.locator("[data-fact='games finished']").count() == 1
    assert page.get_attribute("#book-export", "href") == "/v1/books/live/export.sgf"
    page.wait_for_selector("#book-candidates th", timeout=60_000)
    assert page.eval_on_selector_all("#book-candidates th", "ths => ths.map(th => th.textContent)") == [
        "move", "games", "wins", "win rate", "share of wins", ""]
    assert not errors, errors
    if SCREENSHOT:  # the README's picture: OBOOK_DASHBOARD_SCREENSHOT=docs/dashboard.png
        page.set_viewport_size({"width": 1280, "height": 900})
        page.wait_for_timeout(3000)
        page.screenshot(path=SCREENSHOT, full_page=True)
    page.close()


@pytest.fixture
def quiet_service(tmp_path):
    """``obook serve`` over an empty store: the service URL."""
    from obook.store.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'empty.db'}"
    upgrade(url)
    port = _free_port()
    with open(tmp_path / "serve.log", "wb") as server_out:
        server = subprocess.Popen([sys.executable, "-m", "obook.cli", "serve", "--db", url, "--port", str(port),
                                   "--log-level", "warning"], cwd=ROOT, stdout=server_out, stderr=subprocess.STDOUT)
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", server)
        yield f"http://127.0.0.1:{port}"
    finally:
        _stop(server, signal.SIGTERM)


REDOCLY_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"


def test_swagger_ui_and_redoc_render_without_internet(chromium, quiet_service):
    """/docs and /redoc draw the API from the package's files alone: the page is offline (every
    request to another host is refused) and still shows the routes."""
    page = chromium.new_page()
    elsewhere: list[str] = []
    errors: list[str] = []

    def only_this_service(route):
        if route.request.url.startswith(quiet_service + "/"):
            route.continue_()
        else:
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_this_service)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{quiet_service}/docs")
    page.wait_for_selector('.opblock-summary-path[data-path="/v1/books/{book}/lookup"]', timeout=60_000)
    assert "obook" in page.text_content(".swagger-ui .info .title")
    page.goto(f"{quiet_service}/redoc")
    page.wait_for_selector("h1", timeout=60_000)
    assert "obook" in page.text_content("h1")
    page.locator("h2", has_text="Lookup").first.wait_for(timeout=60_000)  # an operation of /v1/books/{book}/lookup
    # ReDoc's bundle asks for one picture elsewhere, the "API docs by Redocly" logo, and hides it when it fails
    assert [u for u in elsewhere if u != REDOCLY_LOGO] == [] and errors == [], (elsewhere, errors)
    for path in ("/docs", "/v1/books", "/v1/progress"):  # HEAD through uvicorn: headers, no body
        asked = urllib.request.Request(f"{quiet_service}{path}", method="HEAD")
        with urllib.request.urlopen(asked, timeout=10) as answer:
            assert answer.status == 200 and answer.read() == b"" and int(answer.headers["content-length"]) > 0
    page.close()


# ---- a search-valued (minimax) book ------------------------------------------------------------

MINIMAX_SCREENSHOT = os.environ.get("OBOOK_DASHBOARD_MINIMAX_SCREENSHOT")


def _get_json(url: str):
    import json

    with urllib.request.urlopen(url, timeout=30) as answer:
        return json.loads(answer.read())


@pytest.fixture
def minimax_service(tmp_path, compiled_engine):
    """A small minimax book (7x7, 300 playouts a search, a few expansions) with one expansion leased
    as if a worker were searching it, and ``obook serve`` over it: (service URL, that expansion's id)."""
    from obook.book.expansion import Expander
    from obook.book.library import open_book_store
    from obook.store.migrate import upgrade
    from tests.book.test_minimax import expand, minimax_book, take

    url = f"sqlite:///{tmp_path / 'minimax.db'}"
    upgrade(url)
    store = open_book_store(url)
    book = minimax_book(store, name="mm", size=7, expansion="reach", play_playouts=30)
    expand(store, book, 8)
    searching = take(Expander(store, book, owner="host:1:build1:abc", lease_seconds=3600))
    assert searching is not None
    port = _free_port()
    with open(tmp_path / "serve.log", "wb") as server_out:
        server = subprocess.Popen([sys.executable, "-m", "obook.cli", "serve", "--db", url, "--port", str(port),
                                   "--log-level", "warning"], cwd=ROOT, stdout=server_out, stderr=subprocess.STDOUT)
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", server)
        yield f"http://127.0.0.1:{port}", searching.id
    finally:
        _stop(server, signal.SIGTERM)


def _fixed(x: float) -> str:
    """``x.toFixed(1)`` as the page's JavaScript writes it: the exact binary value, ties away from zero."""
    from decimal import ROUND_HALF_UP, Decimal

    return str(Decimal(x + 0.0).quantize(Decimal("0.1"), ROUND_HALF_UP))


def _percent(x: float) -> str:
    return f"{_fixed(100 * x)}%"


def _signed(x: float | None) -> str:
    return "–" if x is None else f"{'+' if x >= 0 else ''}{_fixed(x)}"


def _shown_rows(page) -> list[dict]:
    return page.eval_on_selector_all(
        "#book-candidates tr[data-move]",
        "rows => rows.map(r => ({move: r.dataset.move, kind: r.dataset.kind,"
        " cells: [...r.querySelectorAll('td')].map(td => td.textContent)}))")


def _assert_panel_matches_the_lookup(page, url: str, moves: list[str]) -> dict:
    """The position's panel shows, for each book move and the best move outside the book, the
    value, bounds, visits, prior, backed-up score and mean score of the service's lookup."""
    found = _get_json(f"{url}/v1/books/mm/lookup?moves={','.join(moves)}")
    assert found["kind"] == "search-valued" and found["value"] is not None
    expected = [{"move": c["move"], "kind": "book",
                 "cells": [c["move"], _percent(c["value"]), _percent(c["lcb"]), _percent(c["ucb"]), str(c["visits"]),
                           _percent(c["prior"]), c["backed_up_result"], _signed(c["score_mean"]),
                           "the book plays it" if c["usage"] else ""]}
                for c in found["candidates"]]
    if found["own_move"]:
        expected.append({"move": found["own_move"], "kind": "outside",
                         "cells": [found["own_move"], _percent(found["own_value"]), _percent(found["own_lcb"]),
                                   _percent(found["own_ucb"]), str(found["own_visits"]), "", "", "",
                                   "best outside the book" + ("" if found["usage_move"] else " (the book plays it)")]})
    deadline = time.time() + 60
    while _shown_rows(page) != expected and time.time() < deadline:
        page.wait_for_timeout(250)
    assert _shown_rows(page) == expected
    summary = page.text_content("#book-summary")
    assert f"value {_percent(found['value'])} [{_percent(found['lcb'])}, {_percent(found['ucb'])}]" in summary
    assert f"mean score {_signed(found['score_mean'])}" in summary and f"{found['playouts']} playouts" in summary
    assert found["backed_up_result"] is not None and f"score {found['backed_up_result']} " in summary
    assert all(c["backed_up_result"] is not None for c in found["candidates"])
    shown_on_board = page.eval_on_selector_all("#book-board g.candidate", "gs => gs.map(g => g.dataset.move)")
    assert set(shown_on_board) == {c["move"] for c in found["candidates"]} | (
        {found["own_move"]} if found["own_move"] not in (None, "pass") else set())
    return found


def test_dashboard_shows_a_minimax_books_values_bounds_and_expansions(chromium, minimax_service):
    url, searching = minimax_service
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{url}/dashboard#book=mm")
    page.wait_for_selector("#book-candidates tr[data-kind=book]", timeout=60_000)

    root = _assert_panel_matches_the_lookup(page, url, [])
    assert root["candidates"], "the root was expanded"
    assert page.eval_on_selector_all("#book-candidates th", "ths => ths.map(th => th.textContent)") == [
        "move", "value", "lower", "upper", "visits", "prior", "score", "mean score", ""]

    # the header counts expansions, as /v1/books and /v1/progress do
    (listed,) = _get_json(f"{url}/v1/books")["items"]
    assert listed["unit"] == "expansion" and listed["units_done"] == 8 and listed["games_finished"] == 0
    page.wait_for_selector("[data-fact='expansions done']", timeout=30_000)
    assert page.text_content("[data-fact='expansions done'] b") == "8"
    assert page.text_content("[data-fact='open (scheduled)'] b") == str(listed["units_open"])
    assert page.text_content("[data-fact='being searched'] b") == "1"
    assert page.text_content("#live-title") == "Positions being searched now"
    page.wait_for_selector(f"#live-boards svg.board[data-game='{searching}']", timeout=30_000)
    assert page.text_content("#rate-title") == "Expansions per hour"
    assert page.text_content("#rate-now") == "(8 in the last hour)"
    assert page.text_content("#growth-now") == "(8 expansions done)"
    assert page.locator("#growth-chart path.line").count() == 1
    export = page.get_attribute("#book-export", "href")
    assert export == "/v1/books/mm/export.sgf"
    with urllib.request.urlopen(f"{url}{export}", timeout=60) as answer:
        assert answer.read().startswith(b"(;")

    # a click on the book's move goes one move deeper, and the panel follows
    first = root["usage_move"] or root["candidates"][0]["move"]
    page.click(f"#book-candidates tr[data-move='{first}']")
    page.wait_for_function(f"location.hash.includes('moves={first}')", timeout=30_000)
    _assert_panel_matches_the_lookup(page, url, [first])

    if MINIMAX_SCREENSHOT:  # OBOOK_DASHBOARD_MINIMAX_SCREENSHOT=docs/dashboard-minimax.png
        page.click("#book-path button")  # back to the root
        page.set_viewport_size({"width": 1280, "height": 900})
        page.wait_for_timeout(3000)
        page.screenshot(path=MINIMAX_SCREENSHOT, full_page=True)
    assert not errors, errors
    page.close()
