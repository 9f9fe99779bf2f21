import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from obook.errors import ObookError
from obook.gtp.match import (
    MatchError,
    MatchSettings,
    parse_engine,
    run_match,
    wilson_interval,
)
from obook.go.position import Position
from obook.go.sgf import read_sgf

FLAT = "algorithm=flat,playouts=300,resign_threshold=0,seed=3"


def gnugo_command(path, level=0):
    return f"{path} --mode gtp --level {level} --chinese-rules"


def test_wilson_interval():
    low, high = wilson_interval(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4) and high == pytest.approx(0.5962, abs=1e-4)
    assert wilson_interval(0, 2) == (0.0, pytest.approx(0.6576, abs=1e-4))
    low, high = wilson_interval(95, 100)
    assert low == pytest.approx(1 - wilson_interval(5, 100)[1]) and 0.88 < low < 0.95 < high < 0.99
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_engine_descriptions(gnugo_path):
    assert parse_engine("obook:playouts=100,policy=light").config.playouts == 100
    bare = parse_engine("playouts=100", seconds=2.0)
    assert bare.is_obook and bare.config.seconds == 2.0 and "seconds=2" in bare.argv[-1]
    assert parse_engine("obook").config.playouts > 0
    command = parse_engine(f"gtp:{gnugo_command(gnugo_path)}")
    assert not command.is_obook and command.argv[1:3] == ["--mode", "gtp"]
    assert parse_engine(gnugo_command(gnugo_path)).argv[0] == gnugo_path
    with pytest.raises(MatchError, match="cannot find the program"):
        parse_engine("/no/such/engine --gtp")
    with pytest.raises(ObookError, match="unknown search option"):
        parse_engine("obook:speed=11")
    with pytest.raises(MatchError, match="games"):
        MatchSettings(games=0)


def test_match_against_gnugo_alternates_colours_scores_by_area_and_saves_sgf(gnugo_path, tmp_path):
    a = parse_engine(f"obook:{FLAT}")
    b = parse_engine(gnugo_command(gnugo_path))
    settings = MatchSettings(games=2, size=7, komi=7.5, parallel=2, sgf_dir=tmp_path)
    seen = []
    summary, records = run_match(a, b, settings, on_game=seen.append)
    assert len(seen) == 2 and [r.a_color for r in records] == ["B", "W"]
    assert summary.games == 2 and summary.a_wins + summary.b_wins + summary.draws == 2
    assert summary.a_as_black["games"] == 1 and summary.a_as_white["games"] == 1
    assert 0 <= summary.ci95[0] <= summary.a_score <= summary.ci95[1] <= 1
    assert summary.seconds_per_move["A"] > 0 and summary.seconds_per_move["B"] > 0
    for record in records:
        assert record.reason in ("score", "resignation", "move cap"), record
        saved = read_sgf(record.sgf)
        assert len(saved.position.moves) == record.moves
        assert saved.result == record.result
        names = {saved.black, saved.white}
        assert any(name.startswith("GNU Go") for name in names) and any(name.startswith("obook") for name in names)
        if record.reason == "score":
            assert saved.position.result() == record.result  # area scoring of the final board


STUB_ENGINE = textwrap.dedent(
    """
    import os, sys, time
    mode = sys.argv[1]
    if len(sys.argv) > 2:  # a folder where the engine leaves its process id
        open(os.path.join(sys.argv[2], f"{os.getpid()}.pid"), "w").close()
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "quit":
            print("=\\n", flush=True)
            break
        if words[0] == "genmove":
            if mode == "crash":
                sys.exit(1)
            if mode == "think":
                time.sleep(3600)  # think for an hour
            print("= A1\\n", flush=True)  # the same point every time: illegal on the second move
        elif words[0] == "name":
            print("? no name today\\n" if mode == "refuse" else "= stubborn\\n", flush=True)
        elif words[0] == "known_command":
            print("= false\\n", flush=True)
        else:
            print("=\\n", flush=True)
    """
)


@pytest.mark.parametrize("mode, reason, detail", [("illegal", "illegal move", "occupied"), ("crash", "engine error", "")])
def test_an_engine_that_breaks_the_rules_or_dies_loses_the_game(tmp_path, mode, reason, detail):
    script = tmp_path / "stubborn.py"
    script.write_text(STUB_ENGINE)
    a = parse_engine(f"gtp:{sys.executable} {script} {mode}")
    b = parse_engine(f"obook:{FLAT}")
    summary, records = run_match(a, b, MatchSettings(games=1, size=5, sgf_dir=tmp_path))
    record = records[0]
    assert (record.winner, record.result, record.reason) == ("B", "W+F", reason)
    assert detail in record.detail and record.detail.startswith("A (")
    assert summary.forfeits[0]["reason"] == reason
    saved = read_sgf(record.sgf)
    assert saved.result == "W+F"
    if mode == "illegal":
        assert len(saved.position.moves) == 2
        assert "occupied" in saved.comments[2]


def test_match_command_line_json(gnugo_path, tmp_path):
    engine = gnugo_command(gnugo_path)
    done = subprocess.run(
        [sys.executable, "-m", "obook.cli", "match", engine, f"gtp:{engine}", "--games", "2", "--size", "5",
         "--komi", "0.5", "--sgf-dir", str(tmp_path / "games"), "--json"],
        check=False, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["games"] == 2 and len(summary["ci95"]) == 2
    assert sorted(p.name for p in (tmp_path / "games").iterdir()) == ["game-0001.sgf", "game-0002.sgf"]


def test_match_command_line_errors_are_clear():
    done = subprocess.run([sys.executable, "-m", "obook.cli", "match", "/no/such/engine --gtp", "playouts=10"],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("obook: error: engine '/no/such/engine --gtp': cannot find the program")


INTERRUPTED_MATCH = textwrap.dedent(
    """
    import signal, sys
    from obook.gtp.match import MatchSettings, parse_engine, run_match
    signal.signal(signal.SIGINT, signal.default_int_handler)  # as in a terminal, even if started with SIGINT ignored
    engine = parse_engine(f"gtp:{sys.executable} {sys.argv[1]} think {sys.argv[2]}")
    try:
        run_match(engine, engine, MatchSettings(games=5, size=5, parallel=2, sgf_dir=None))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
    """
)


def running(pid):
    """Whether process ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def engine_pids(directory):
    return [int(path.stem) for path in directory.glob("*.pid")]


def test_ctrl_c_stops_the_match_and_kills_the_engines(tmp_path):
    script, runner, pids = tmp_path / "stub.py", tmp_path / "match.py", tmp_path / "pids"
    script.write_text(STUB_ENGINE)
    runner.write_text(INTERRUPTED_MATCH)
    pids.mkdir()
    process = subprocess.Popen([sys.executable, str(runner), str(script), str(pids)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while len(engine_pids(pids)) < 4 and time.monotonic() < deadline:  # two games, two engines each
            time.sleep(0.1)
        assert len(engine_pids(pids)) == 4, process.communicate(timeout=5)
        time.sleep(0.3)  # both games are waiting for a move
        process.send_signal(signal.SIGINT)  # to the runner only, not to its engines
        out, err = process.communicate(timeout=30)
        assert process.returncode == 130 and out == "interrupted\n", err
        assert len(engine_pids(pids)) == 4  # no engine was started after the interruption
        assert not [pid for pid in engine_pids(pids) if running(pid)]
    finally:
        if process.poll() is None:
            process.kill()
        for pid in engine_pids(pids):
            if running(pid):
                os.kill(pid, signal.SIGKILL)


def test_an_engine_that_fails_to_start_stops_the_match(tmp_path):
    script, pids = tmp_path / "stub.py", tmp_path / "pids"
    script.write_text(STUB_ENGINE)
    pids.mkdir()
    refusing = parse_engine(f"gtp:{sys.executable} {script} refuse {pids}")
    played = []
    with pytest.raises(MatchError, match=r"engine A \(gtp:.*\) does not work: .*no name today"):
        run_match(refusing, refusing, MatchSettings(games=3, size=5, parallel=2, sgf_dir=None), on_game=played.append)
    assert played == []
    time.sleep(0.5)
    assert not [pid for pid in engine_pids(pids) if running(pid)]


# ---- engines playing from a book ------------------------------------------------------------------

def book_engine(url, book="p"):
    return f"obook:algorithm=flat,playouts=50,resign_threshold=0,seed=3,book={book},book_db={url}"


def test_match_counts_each_engines_book_moves_and_where_it_left_the_book(tmp_path):
    from tests.book.test_book_player import seeded_book

    url = f"sqlite:///{tmp_path / 'p.db'}"
    seeded_book(url)
    # Both engines follow the book: Black E5, White's reply, Black's third move; then out of book.
    done = subprocess.run(
        [sys.executable, "-m", "obook.cli", "match", book_engine(url), book_engine(url), "--games", "2",
         "--max-moves", "8", "--sgf-dir", str(tmp_path / "games"), "--json"],
        check=False, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    book = json.loads(done.stdout)["book"]
    as_black, as_white = {"book_moves": 2, "left_at": 5}, {"book_moves": 1, "left_at": 4}
    assert book["A"] == {"book": "p", "games": 2, "mean_book_moves": 1.5, "mean_left_at": 4.5, "never_left": 0,
                         "per_game": [{"game": 1, "color": "B", **as_black}, {"game": 2, "color": "W", **as_white}]}
    assert book["B"]["per_game"] == [{"game": 1, "color": "W", **as_white}, {"game": 2, "color": "B", **as_black}]
    for game in (1, 2):
        moves = read_sgf(str(tmp_path / "games" / f"game-000{game}.sgf")).position.moves
        assert len(moves) == 8
        assert moves[0][1] == Position().point("E5")


def test_an_engine_without_a_book_reports_none(tmp_path):
    summary, records = run_match(parse_engine(f"obook:{FLAT}"), parse_engine(f"obook:{FLAT}"),
                                 MatchSettings(games=1, size=5, max_moves=4, sgf_dir=None))
    assert summary.book == {"A": None, "B": None} and records[0].book == {"A": None, "B": None}


def test_match_refuses_a_book_that_could_never_be_used(tmp_path):
    from tests.book.test_book_player import seeded_book, stale_book

    url = f"sqlite:///{tmp_path / 'p.db'}"
    seeded_book(url)
    stale_book(url)
    plain = parse_engine(f"obook:{FLAT}")
    with pytest.raises(MatchError, match=r"engine B \(.*\): book 'p' is for 9x9 komi 7.5; this match is 7x7 komi 7.5: "
                                         "the book would never be used"):
        run_match(plain, parse_engine(book_engine(url)), MatchSettings(games=1, size=7, sgf_dir=tmp_path / "no"))
    assert not (tmp_path / "no").exists()
    with pytest.raises(MatchError, match="book 'stale' was made by engine version area-ko-0/zobrist-0"):
        run_match(parse_engine(book_engine(url, "stale")), plain, MatchSettings(games=1, sgf_dir=None))
    with pytest.raises(MatchError, match="no book named 'nothing'"):
        run_match(parse_engine(book_engine(url, "nothing")), plain, MatchSettings(games=1, sgf_dir=None))
    ghost = tmp_path / "typo.db"
    with pytest.raises(MatchError, match=f"no book database at {ghost}: the file does not exist"):
        run_match(parse_engine(book_engine(f"sqlite:///{ghost}")), plain, MatchSettings(games=1, sgf_dir=None))
    assert not ghost.exists()  # a mistyped path is not created as an empty database
    done = subprocess.run([sys.executable, "-m", "obook.cli", "match", book_engine(url), "playouts=50", "--komi", "6.5",
                           "--sgf-dir", str(tmp_path / "games")],
                          check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"obook: error: engine A ({book_engine(url)}): book 'p' is for 9x9 komi 7.5; this match is 9x9 komi 6.5: "
        "the book would never be used")
    assert not (tmp_path / "games").exists()


def test_a_match_ends_when_its_listener_says_so(tmp_path):
    engine = parse_engine("obook:algorithm=flat,playouts=30,resign_threshold=0,seed=3")
    heard = []

    def decided(record):
        heard.append(record.index)
        return True

    summary, records = run_match(engine, engine, MatchSettings(games=4, size=5, parallel=1, sgf_dir=tmp_path),
                                 on_game=decided)
    # a game a free engine pair began before the listener's answer is played out and counted
    assert heard[0] == 0 and len(heard) <= 2 and [r.index for r in records] == sorted(heard)
    assert summary.games == len(heard) and len(list(tmp_path.iterdir())) == len(heard)


def test_a_game_numbered_command_pairs_two_matches_game_by_game(gnugo_path, tmp_path):
    """``{game}`` in a GTP command becomes the game's number and the engine starts anew each game,
    so a game of one match replays exactly in another match that gives its engines the same seeds
    (how two series against GNU Go, with and without a book, are paired on its seeds)."""
    gnugo = gnugo_command(gnugo_path, level=1)
    numbered = parse_engine(f"gtp:{gnugo} --seed {{game}}")
    assert numbered.argv_for(3)[-2:] == ["--seed", "3"] and numbered.argv[-1] == "{game}"
    settings = MatchSettings(games=3, size=7, komi=7.5, parallel=1, sgf_dir=tmp_path / "paired")
    _, paired = run_match(numbered, numbered, settings)
    _, alone = run_match(parse_engine(f"gtp:{gnugo} --seed 2"), parse_engine(f"gtp:{gnugo} --seed 2"),
                         MatchSettings(games=1, size=7, komi=7.5, sgf_dir=tmp_path / "alone"))
    _, continued = run_match(numbered, numbered, MatchSettings(games=1, size=7, komi=7.5, first_game=2,
                                                               sgf_dir=tmp_path / "continued"))
    moves = [read_sgf(record.sgf).position.moves for record in paired]
    assert read_sgf(alone[0].sgf).position.moves == moves[2]  # game 2: seed 2 on both sides, fresh engines
    assert continued[0].index == 2 and continued[0].a_color == "B"  # a series that goes on numbers on
    assert read_sgf(continued[0].sgf).position.moves == moves[2]
    assert moves[0] != moves[2]  # other seeds, other games


def test_games_played_on_from_openings_keep_their_numbers_colours_and_moves(tmp_path):
    opening = Position.from_moves("C3 D3 C4", size=5)
    openings = {3: tuple(opening.moves), 6: ()}
    summary, records = run_match(parse_engine(f"obook:{FLAT}"), parse_engine(f"obook:{FLAT}"),
                                 MatchSettings(games=1, size=5, max_moves=10, sgf_dir=tmp_path), openings=openings)
    assert [(r.index, r.a_color) for r in records] == [(3, "W"), (6, "B")]
    played_on = read_sgf(str(tmp_path / "game-0004.sgf")).position.moves
    assert played_on[:3] == opening.moves and len(played_on) == 10
    assert summary.games == 2
    # White is to move after the opening: game 3's A (White) made the first engine move.
    assert records[0].engine_moves == {"A": 4, "B": 3}


def test_an_illegal_opening_is_refused_before_any_engine_starts(tmp_path):
    board = Position(size=5)
    c3 = board.point("C3")
    with pytest.raises(MatchError, match=r"game 2's opening: move 2 is illegal"):
        run_match(parse_engine(f"obook:{FLAT}"), parse_engine(f"obook:{FLAT}"),
                  MatchSettings(games=1, size=5), openings={1: ((1, c3), (2, c3))})
