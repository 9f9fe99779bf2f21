"""End to end: a headless Chromium (Debian's, driven by Playwright) opens /dashboard while a small
embedded build runs, and sees a board with stones being drawn and then changing; and it opens the
API's documentation (/docs, /redoc) with every other host out of reach."""

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
