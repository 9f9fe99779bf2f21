"""End to end: a headless Chromium (Debian's, driven by Playwright) opens /dashboard while a small
embedded build runs, and sees a board with stones being drawn and then changing."""

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
ROOT = Path(__file__).resolve().parents[1]


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
def live_service(tmp_path):
    """A store with a build playing games into it and ``obook serve`` reading it: the service URL."""
    from obook.store.migrate import upgrade

    url = f"sqlite:///{tmp_path / 'live.db'}"
    upgrade(url)
    port = _free_port()
    obook = [sys.executable, "-m", "obook.cli"]
    build = subprocess.Popen(obook + ["build", "--db", url, "--book", "live", "--size", "9", "--games", "400",
                                      "--workers", "1", "--search", "playouts=30", "--seconds-per-move", "0",
                                      "--quiet"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    server = subprocess.Popen(obook + ["serve", "--db", url, "--port", str(port), "--log-level", "warning"],
                              cwd=ROOT, stderr=subprocess.PIPE)
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", server)
        yield f"http://127.0.0.1:{port}", build
    finally:
        _stop(build)
        _stop(server, signal.SIGTERM)


def _live_boards(page) -> list[dict]:
    return page.eval_on_selector_all(
        "#live-boards svg.board",
        "boards => boards.map(b => ({game: b.dataset.game, moves: Number(b.dataset.moves),"
        " stones: b.querySelectorAll('circle.stone').length}))")


def test_dashboard_draws_the_games_being_played_and_follows_them(chromium, live_service):
    url, build = live_service
    page = chromium.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{url}/dashboard#book=live")

    deadline = time.time() + FIRST_STONES_SECONDS
    first = []
    while time.time() < deadline and not any(b["stones"] for b in first):
        assert build.poll() is None, f"the build stopped: {build.stderr.read().decode()[-2000:]}"
        page.wait_for_timeout(500)
        first = _live_boards(page)
    assert any(b["stones"] for b in first), "no board with stones was drawn"

    page.wait_for_function(
        """previous => {
            const now = [...document.querySelectorAll('#live-boards svg.board')]
                .map(b => b.dataset.game + ':' + b.dataset.moves).join(',');
            return now !== '' && now !== previous;
        }""",
        arg=",".join(f"{b['game']}:{b['moves']}" for b in first), timeout=120_000)
    later = _live_boards(page)
    assert later != first and any(b["stones"] for b in later)

    # the page's other parts are drawn from the same service
    page.wait_for_selector("#book-board svg.board", timeout=60_000)
    assert page.locator("#workers tr").count() >= 2  # header and at least one worker
    assert page.locator("#rate-chart svg").count() == 1 and page.locator("#growth-chart svg").count() == 1
    assert not errors, errors
    page.close()
