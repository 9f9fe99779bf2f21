"""The book commands as a user runs them: build, interrupt and resume, two builders at once, seed,
export, lookup, verify, and their errors."""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time

import pytest

from obook.book.library import open_book_store
from sqlalchemy import update
from obook.store.books import get_book
from obook.store.db import forget_stores
from obook.store.games import game_counts
from obook.store.stats import STATS

BUILD = ["--algorithm", "mvbm", "--size", "7", "--search", "playouts=48", "--seconds-per-move", "0", "--depth", "12"]


def obook(*args, check=True, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-m", "obook.cli", *args], capture_output=True, text=True, timeout=600,
                            **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"obook {' '.join(args)} failed ({result.returncode}):\n{result.stderr}")
    return result


def run_cli(capsys, *args) -> tuple[int, str, str]:
    """The command in this process (fast: no new interpreter, no numba load)."""
    from obook.cli import main

    forget_stores()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def counts(url: str, name: str) -> dict:
    forget_stores()
    store = open_book_store(url)
    with store.read() as conn:
        book = get_book(conn, name)
        return game_counts(conn, book.id).get(book.id, {})


def _ctrl_c_as_in_a_terminal() -> None:
    """A shell starts background jobs with SIGINT ignored, and a child inherits that: the build
    would then never see the test's Ctrl-C (as when the suite itself runs in the background)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_build_is_interrupted_and_continues(tmp_path, compiled_engine):
    url = f"sqlite:///{tmp_path / 'b.db'}"
    # so many games that Ctrl-C comes mid-build however slowly this test polls (a loaded machine once
    # let 150 finish first); the second run continues to a few games more than the first stored
    process = subprocess.Popen([sys.executable, "-m", "obook.cli", "build", "--db", url, "--book", "k",
                                "--games", "5000",
                                "--workers", "2", "--quiet", *BUILD], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, preexec_fn=_ctrl_c_as_in_a_terminal)
    deadline = time.time() + 300
    while time.time() < deadline:  # wait until moves are being stored, then Ctrl-C
        time.sleep(0.1)
        try:
            if counts(url, "k").get("finished"):
                break
        except Exception:  # noqa: BLE001 - the database may not exist yet
            continue
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert "run the same command to continue" in err
    before = counts(url, "k")
    assert 0 < before.get("finished", 0) < 5000
    target = before["finished"] + 10
    obook("build", "--db", url, "--book", "k", "--games", str(target), "--workers", "2", "--quiet", *BUILD)
    after = counts(url, "k")
    assert after == {"finished": target}
    result = obook("verify", "--db", url, "--book", "k")
    assert "statistics match the games" in result.stdout


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_two_builders_on_one_book(kind, tmp_path, request, compiled_engine):
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'b.db'}"
    else:
        url = request.getfixturevalue("postgres_url")
    args = ["build", "--db", url, "--book", "two", "--games", "8", "--workers", "1", "--quiet", *BUILD]
    obook("db", "upgrade", "--db", url)
    first = subprocess.Popen([sys.executable, "-m", "obook.cli", *args], stderr=subprocess.PIPE, text=True)
    second = subprocess.Popen([sys.executable, "-m", "obook.cli", *args], stderr=subprocess.PIPE, text=True)
    for p in (first, second):
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
    assert counts(url, "two") == {"finished": 8}
    assert obook("verify", "--db", url, "--book", "two").returncode == 0


def test_lookup_export_and_errors(tmp_path, capsys, monkeypatch):
    url = f"sqlite:///{tmp_path / 'b.db'}"
    obook("build", "--db", url, "--book", "x", "--games", "2", "--workers", "1", "--quiet", *BUILD)
    found = json.loads(run_cli(capsys, "lookup", "--db", url, "--book", "x", "", "--json")[1])
    assert found["in_book"] and found["to_move"] == "B"
    assert list(found) == ["book", "moves", "to_move", "in_book", "candidates", "usage_move", "coevolution_move",
                           "engine"]
    assert found["engine"]["differences_from_this_obook"] == []
    assert list(found["candidates"][0]) == ["move", "games", "wins", "draws", "winrate", "share"]
    assert sum(c["games"] for c in found["candidates"]) == 2
    first = found["candidates"][0]["move"]
    deeper = json.loads(run_cli(capsys, "lookup", "--db", url, "--book", "x", first, "--json")[1])
    assert deeper["to_move"] == "W" and deeper["moves"] == [first]
    assert "usage rule" in run_cli(capsys, "lookup", "--db", url, "--book", "x", "")[1]
    out = tmp_path / "x.sgf"
    assert "book moves" in run_cli(capsys, "export", "--db", url, "--book", "x", "--sgf", str(out))[1]
    assert out.read_bytes().startswith(b"(;")
    monkeypatch.chdir(tmp_path)
    code, piped, err = run_cli(capsys, "export", "--db", url, "--book", "x", "--sgf", "-")
    assert code == 0 and piped.encode() == out.read_bytes() and "book moves" in err
    assert not (tmp_path / "-").exists()

    # a reader that stops early (`obook lookup ... | head`): no traceback
    piped = subprocess.Popen([sys.executable, "-m", "obook.cli", "lookup", "--db", url, "--book", "x", ""],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    piped.stdout.close()  # before the command writes: it starts in about a second
    assert piped.wait(timeout=120) == 1 and b"Traceback" not in piped.stderr.read()

    for args, message in [
        (("lookup", "--db", url, "--book", "x", "D4 D4"), "move 2 (D4)"),
        (("lookup", "--db", url, "--book", "x", "Z1"), "invalid vertex"),
        (("lookup", "--db", url, "--book", "nope", ""), "no book named 'nope'"),
        (("export", "--db", url, "--book", "x", "--sgf", str(tmp_path / "no" / "x.sgf")), "cannot write"),
        (("build", "--db", url, "--book", "x", "--size", "9", "--games", "3"), "exists with size=7"),
        (("lookup", "--db", str(tmp_path / "no" / "b.db"), "--book", "x", ""), "does not exist"),
    ]:
        code, _, err = run_cli(capsys, *args)
        assert code == 2, err
        assert message in err and len(err.strip().splitlines()) == 1


def test_seed_checks_every_file_before_writing(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'b.db'}"
    obook("build", "--db", url, "--book", "s", "--algorithm", "mvbm", "--size", "9", "--games", "1", "--workers", "1",
          "--quiet", "--search", "playouts=32", "--seconds-per-move", "0")
    good = tmp_path / "good.sgf"
    good.write_text("(;GM[1]FF[4]SZ[9]KM[7.5]RE[W+2.5];B[ee];W[gc];B[cg])")
    again = tmp_path / "again.sgf"
    again.write_text("(;GM[1]FF[4]SZ[9]KM[7.5]RE[B+R];B[ee];W[gc];B[cg])")
    unknown = tmp_path / "unknown.sgf"
    unknown.write_text("(;GM[1]FF[4]SZ[9]AB[cc];W[ee])")  # handicap stones: skipped
    big = tmp_path / "big.sgf"
    big.write_text("(;GM[1]FF[4]SZ[13]RE[B+R];B[gg])")
    before = counts(url, "s")
    code, _, err = run_cli(capsys, "seed", "--db", url, "--book", "s", str(good), str(big))
    assert code == 2 and "board size 13" in err
    assert counts(url, "s") == before  # nothing written
    code, out, err = run_cli(capsys, "seed", "--db", url, "--book", "s", str(good), str(again), str(unknown))
    assert code == 0 and "1 seed games added with their result, 0 without a result (unscored), 1 already present, " \
                         "1 skipped" in out
    assert "setup or handicap stones" in err
    assert counts(url, "s")["finished"] == before["finished"] + 1
    code, out, _ = run_cli(capsys, "verify", "--db", url, "--book", "s")
    assert code == 0 and "statistics match" in out
    with open_book_store(url).write() as conn:
        conn.execute(update(STATS).values(games=STATS.c.games + 1))
    code, out, _ = run_cli(capsys, "verify", "--db", url, "--book", "s")
    assert code == 1 and "should be games/wins/draws" in out
    code, out, _ = run_cli(capsys, "verify", "--db", url, "--book", "s", "--repair")
    assert code == 0 and "repaired" in out  # exit 1 means problems remain, and none do
    code, out, _ = run_cli(capsys, "verify", "--db", url, "--book", "s")
    assert code == 0 and "statistics match" in out


def test_seed_reports_per_file_and_refuses_another_komi(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'b.db'}"
    from obook.book.library import BookSettings, ensure_book

    ensure_book(open_book_store(url, create=True), "k", BookSettings(size=9, komi=7.5, algorithm="mvbm"))
    pro = tmp_path / "pro.sgf"
    pro.write_text("(;GM[1]SZ[9]KM[6.5]RU[Japanese]RE[B+R];B[ee];W[gc])(;GM[1]SZ[9]KM[6.5]RE[W+T];B[ee];W[ed])")
    code, _, err = run_cli(capsys, "seed", "--db", url, "--book", "k", str(pro))
    assert code == 2 and f"{pro}" in err and "komi 6.5" in err and "book komi 7.5" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert counts(url, "k") == {}
    code, out, err = run_cli(capsys, "seed", "--db", url, "--book", "k", "--moves-only", str(pro))
    assert code == 0 and "0 seed games added with their result, 2 without a result (unscored)" in out
    assert f"{pro}: 2 game(s) (komi 6.5; rules Japanese): 0 seeded with their result, 2 seeded without a result" in err
    assert "game 2 of 2: no result counted: RE[W+T] is a win on time" in err
    with pytest.raises(SystemExit) as usage:
        run_cli(capsys, "seed", "--db", url, "--book", "k", "--moves-only", "--accept-komi", str(pro))
    assert usage.value.code == 2 and "not allowed with" in capsys.readouterr().err
    code, out, _ = run_cli(capsys, "verify", "--db", url, "--book", "k")
    assert code == 0 and "statistics match" in out


def test_professional_games_seed_a_book(tmp_path, shared_dir):
    games = sorted((shared_dir / "data" / "go9").rglob("*.sgf"))
    assert len(games) >= 500
    url = f"sqlite:///{tmp_path / 'b.db'}"
    obook("db", "upgrade", "--db", url)
    store = open_book_store(url)
    from obook.book.library import BookSettings, ensure_book, lookup
    from obook.book.sgfio import seed_book

    from obook.book.sgfio import ACCEPT, MOVES_ONLY, KomiMismatch

    book = ensure_book(store, "pro", BookSettings(size=9, komi=7.5, algorithm="mvbm", depth=20))
    with pytest.raises(KomiMismatch, match="komi 6.5"):
        seed_book(store, book, games)  # their results are at komi 5.5 and 6.5
    report = seed_book(store, book, games, MOVES_ONLY)
    assert len(report.added) >= 500 and len(report.unscored) >= 490
    assert all("board size" not in why for _, why in report.skipped)
    assert lookup(store, book, "").games == len(report.scored)  # only results at komi 7.5 count
    accepted = ensure_book(store, "pro-accepted", BookSettings(size=9, komi=7.5, algorithm="mvbm", depth=20))
    report = seed_book(store, accepted, games, ACCEPT)
    root = lookup(store, accepted, "")
    assert root.usage is not None and root.usage.vertex in ("E5", "C3", "D4", "E4", "F6")
    assert root.games == len(report.scored) >= 490


def parsers_and_actions(parser: argparse.ArgumentParser, path: str = "obook"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from parsers_and_actions(sub, f"{path} {name}")
        else:
            yield path, action


def test_every_option_of_every_command_has_help():
    from obook.cli import build_parser

    seen = set()
    missing = []
    for path, action in parsers_and_actions(build_parser()):
        seen.add(path)
        if not action.help or action.help == argparse.SUPPRESS:
            missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    assert {"obook build", "obook lookup", "obook match", "obook bench search", "obook serve", "obook worker"} <= seen
    assert missing == []


def subcommands(parser: argparse.ArgumentParser) -> set[str]:
    return set(next(a for a in parser._actions if a.dest == "command").choices)


def test_a_command_line_registers_only_the_module_of_its_command():
    """``obook CMD`` imports only CMD's module (importing them all cost about a second before any
    work); the map of modules to commands must name every command its module registers, and each
    front end must declare an entry point for every command it registers."""
    import importlib
    from importlib.metadata import entry_points

    from obook.cli import COMMAND_MODULES, ENTRY_POINT_GROUP, build_parser

    every = subcommands(build_parser())
    front_ends = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    declared = {command: module for module, commands in COMMAND_MODULES.items() for command in commands}
    assert set(declared) | set(front_ends) == every
    for command in every:
        module = declared.get(command) or front_ends[command]
        registered = subcommands(build_parser([command, "--help"]))
        assert command in registered and registered <= every, (command, registered)
        sub = argparse.ArgumentParser().add_subparsers(dest="command")
        importlib.import_module(module).register(sub)
        assert registered == set(sub.choices), (command, module)
    assert subcommands(build_parser(["no-such-command"])) == every  # argparse then lists every choice
    assert subcommands(build_parser(["--version"])) == every


def test_top_level_help_is_plain_text_with_examples(capsys):
    from obook.cli import main

    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    description = text.split("\n\n")[1]
    assert description.startswith("obook builds opening books for Go") and "``" not in text
    examples = text[text.index("examples:"):]
    for command in ("obook build ", "obook lookup ", "obook serve", "obook gtp "):
        assert command in examples, command
    assert max(len(line) for line in text.splitlines()) <= 100
