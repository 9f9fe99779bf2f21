"""Issue 34, items 1 and 2: a new book is a minimax book, built for a play budget (``--for``), and
``obook build`` speaks its book's unit; an existing book keeps its algorithm."""

from __future__ import annotations

import json
import re
import shlex
import subprocess

import pytest

from obook.book.budget import DEEP_FACTOR, DEFAULT_PLAY_BUDGET, PLAYOUTS_PER_SECOND, build_settings, parse_play_budget
from obook.book.library import BookSettings, ensure_book, open_book_store
from obook.book.rules import NEW_BOOK_ALGORITHM
from obook.errors import ObookError
from obook.search.config import SearchConfig
from obook.store.books import get_book
from obook.store.db import forget_stores
from tests.book.test_book_cli import obook, run_cli


def book_row(url: str, name: str):
    forget_stores()
    with open_book_store(url).read() as conn:
        return get_book(conn, name)


@pytest.mark.parametrize("text, play", [("0.25s", 5000), ("0.25 s", 5000), ("1s", PLAYOUTS_PER_SECOND), (".5s", 10000),
                                        ("5000", 5000), (" 300 ", 300)])
def test_a_play_budget_in_seconds_or_playouts_gives_p_and_s(text, play):
    budget = parse_play_budget(text)
    assert (budget.play_playouts, budget.search_playouts) == (play, DEEP_FACTOR * play)
    assert DEEP_FACTOR == 30 and parse_play_budget("0.25s").play_playouts == 5000  # benchmarks/playouts_at_time.py


@pytest.mark.parametrize("text, message", [("abc", "in seconds a move (0.25s) or in playouts a move (5000)"),
                                           ("-1", "must be positive"), ("0", "must be positive"),
                                           ("0s", "must be positive"), ("0.00001s", "at least one playout"),
                                           ("1.5", "for seconds write 1.5s"), ("5000ms", "in seconds a move"),
                                           ("", "in seconds a move")])
def test_a_bad_play_budget_is_named(text, message):
    with pytest.raises(ObookError, match=re.escape(message)) as error:
        parse_play_budget(text)
    assert f"--for {text!r}" in str(error.value)


def test_a_new_book_is_minimax_for_the_default_budget_and_an_existing_book_keeps_its_algorithm(tmp_path):
    store = open_book_store(f"sqlite:///{tmp_path / 'b.db'}", create=True)
    settings, budget = build_settings(store, "new", {"size": 9})
    default = parse_play_budget(DEFAULT_PLAY_BUDGET)
    assert NEW_BOOK_ALGORITHM == "minimax" and settings["algorithm"] == "minimax" and budget == default
    assert settings == {"size": 9, "algorithm": "minimax", "search": f"playouts={default.search_playouts}",
                        "play_playouts": default.play_playouts, "seconds_per_move": 0.0}

    # --for, with the expert flags overriding their part of it
    settings, budget = build_settings(store, "new", {"search": "policy=light", "seconds_per_move": 0.5},
                                      parse_play_budget("100"))
    assert SearchConfig.from_spec(settings["search"]) == SearchConfig.from_spec("playouts=3000,policy=light")
    assert (settings["play_playouts"], settings["seconds_per_move"]) == (100, 0.5)
    settings, _ = build_settings(store, "new", {"search": "playouts=777", "play_playouts": 7}, parse_play_budget("100"))
    assert SearchConfig.from_spec(settings["search"]).playouts == 777 and settings["play_playouts"] == 7
    # the expert flags without --for: what they say, nothing derived (P is then S/100, as before)
    assert build_settings(store, "new", {"search": "playouts=50", "seconds_per_move": 0.0}) == (
        {"algorithm": "minimax", "search": "playouts=50", "seconds_per_move": 0.0}, None)

    ensure_book(store, "stat", BookSettings(size=7, algorithm="mvbm"))
    assert build_settings(store, "stat", {}) == ({"algorithm": "mvbm"}, None)
    assert build_settings(store, "stat", {"depth": 12})[0] == {"algorithm": "mvbm", "depth": 12}
    with pytest.raises(ObookError, match="--for is the play budget of a minimax book; book 'stat' is mvbm"):
        build_settings(store, "stat", {}, parse_play_budget("300"))
    with pytest.raises(ObookError, match="--for is the play budget of a minimax book; book 'new' is beta"):
        build_settings(store, "new", {"algorithm": "beta"}, parse_play_budget("300"))
    # an existing minimax book: nothing derived unless --for is given again (then it must agree)
    ensure_book(store, "mm", BookSettings(size=5, algorithm="minimax", search="playouts=60", seconds_per_move=0))
    assert build_settings(store, "mm", {}) == ({"algorithm": "minimax"}, None)
    assert build_settings(store, "mm", {"algorithm": "mvbm"})[0]["algorithm"] == "mvbm"  # ensure_book refuses it


def test_a_new_book_has_one_default_algorithm_in_the_library_the_cli_and_the_grid(tmp_path):
    """A kind of book is chosen in one place: ``BookSettings`` without an algorithm, ``obook build``
    and ``obook grid run`` without ``--algorithm`` all make a NEW_BOOK_ALGORITHM book, and their
    help says so."""
    from obook.cli import build_parser

    store = open_book_store(f"sqlite:///{tmp_path / 'b.db'}", create=True)
    assert BookSettings().algorithm == NEW_BOOK_ALGORITHM
    assert ensure_book(store, "library", BookSettings(size=9)).algorithm == NEW_BOOK_ALGORITHM
    assert build_settings(store, "cli", {"size": 9})[0]["algorithm"] == NEW_BOOK_ALGORITHM
    commands = next(a for a in build_parser()._actions if a.dest == "command").choices
    grid_run = next(a for a in commands["grid"]._actions if a.dest == "grid_action").choices["run"]
    for parser in (commands["build"], grid_run):
        [algorithm] = [a for a in parser._actions if a.dest == "algorithm"]
        assert algorithm.default is None and f"(default {NEW_BOOK_ALGORITHM}" in algorithm.help


def test_cli_errors_of_the_budget_and_the_target_are_one_line(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'b.db'}"
    for args, message in [(("--for", "abc"), "--for 'abc': give the play budget"),
                          (("--for", "-1"), "--for '-1': the play budget must be positive"),
                          (("--for", "2.5"), "playouts are a whole number"),
                          (("--target", "0"), "--target (--expansions, --games) must be at least 1"),
                          (("--algorithm", "mvbm", "--for", "300"), "--for is the play budget of a minimax book")]:
        code, _, err = run_cli(capsys, "build", "--db", url, "--book", "x", *args)
        assert code == 2, err
        assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert (tmp_path / "b.db").exists()  # only the last one got as far as the store: no book was made
    forget_stores()
    with open_book_store(url).read() as conn:
        from obook.store.books import list_books

        assert list_books(conn) == []


def test_a_minimax_build_speaks_of_expansions_and_says_how_to_play_it(tmp_path, compiled_engine):
    url = f"sqlite:///{tmp_path / 'b.db'}"
    built = obook("build", "--db", url, "--book", "mm", "--size", "5", "--komi", "0.5", "--for", "20",
                  "--expansions", "3", "--workers", "1")
    book = book_row(url, "mm")
    assert book.algorithm == "minimax" and book.play_playouts == 20 and book.seconds_per_move == 0
    assert SearchConfig.from_spec(book.search).playouts == 20 * DEEP_FACTOR
    out = built.stderr + built.stdout
    assert "for play at 20 playouts a move (--for 20); each node a search of 600 playouts" in built.stderr
    assert "target 3 expansions: 0 done, 3 to go, 0 nodes" in built.stderr
    assert re.search(r"expansions/hour", built.stderr)
    assert re.search(r"done: 3 expansions done in book 'mm', \d+ nodes", built.stdout)
    assert not re.search(r"\bgames?\b|self-play|mutation|move cap", out, re.IGNORECASE), out
    assert f"look:   obook lookup --db {url} --book mm" in built.stdout
    play = r'play:   .*obook.* gtp --book mm --book-db sqlite:///\S+b\.db --config "playouts=20"'
    assert re.search(play, built.stdout)
    # the play line as a GUI runs it, from another directory, over a scripted GTP session: the book's move
    line = next(text for text in built.stdout.splitlines() if text.startswith("  play:   "))
    session = subprocess.run(shlex.split(line.removeprefix("  play:   ")), input="boardsize 5\nkomi 0.5\ngenmove b\nquit\n",
                             capture_output=True, text=True, timeout=300, cwd=tmp_path.parent)
    usage = json.loads(obook("lookup", "--db", url, "--book", "mm", "", "--json").stdout)["usage_move"]
    assert usage and session.stdout.split("\n\n")[2] == f"= {usage}", session.stdout + session.stderr[-2000:]
    assert f"grow:   obook build --db {url} --book mm --target 6" in built.stdout

    # continued with --games (still accepted), no other option: the book's settings, its unit
    again = obook("build", "--db", url, "--book", "mm", "--games", "4", "--workers", "1", "--quiet")
    assert "target 4 expansions: 3 done, 1 to go" in again.stderr and "4 expansions done" in again.stdout
    assert book_row(url, "mm").play_playouts == 20
    refused = obook("build", "--db", url, "--book", "mm", "--for", "30", "--target", "4", "--quiet", check=False)
    assert refused.returncode == 2 and "exists with play_playouts=20, not 30" in refused.stderr


def test_continuing_an_mvbm_book_without_algorithm_keeps_mvbm(tmp_path, compiled_engine):
    url = f"sqlite:///{tmp_path / 'b.db'}"
    obook("build", "--db", url, "--book", "s", "--algorithm", "mvbm", "--size", "5", "--search", "playouts=20",
          "--seconds-per-move", "0", "--depth", "6", "--games", "2", "--workers", "1", "--quiet")
    again = obook("build", "--db", url, "--book", "s", "--depth", "6", "--games", "3", "--workers", "1", "--quiet")
    assert book_row(url, "s").algorithm == "mvbm"
    assert "MVBM threshold 0.1" in again.stderr and "target 3 games done" in again.stderr
    assert "done: 3 games done in book 's'" in again.stdout and "ended at the move cap" in again.stdout


def test_the_eta_is_the_units_to_go_at_the_rate_so_far():
    from obook.book.build import BuildStatus

    status = BuildStatus(finished=10, in_progress=2, target=40, sequences=[], rate_per_hour=60.0, unit="expansion")
    assert status.eta_seconds == 30 * 60.0
    assert BuildStatus(10, 0, 40, [], 0.0).eta_seconds is None  # no unit done yet in this build
    assert BuildStatus(45, 0, 40, [], 60.0).eta_seconds == 0  # past the target (another builder's units)
