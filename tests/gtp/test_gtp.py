"""A scripted GTP session against the real engine (the flat Monte-Carlo player, small budgets)."""

import io
import subprocess
import sys
import time

import pytest

from obook.go.board import BLACK, WHITE
from obook.go.vertex import format_vertex
from obook.gtp.arguments import fixed_handicap_points
from obook.gtp.engine import GTPEngine
from obook.gtp.protocol import format_response, parse_command_line
from obook.go.position import Position
from obook.go.sgf import game_to_sgf, read_sgf
from tests.helpers import ATARI_IN_OWN_EYE, moves_to

FAST = "algorithm=flat,playouts=200,seed=7"

# Two living groups and no neutral point: 12 points for Black, 13 for White.
SETTLED = """
X . X O .
X X X O O
. X O O .
X X O . O
. X O O O
"""

# A lone white stone in Black's area.
DEAD_STONE = """
. . X O .
. . X O .
O . X O .
. . X O .
. . X O .
"""

# Black's A1-D2 and White's A3-F3-F1 share their only liberties E1 and E2: whoever fills one is
# captured (GNU Go 3.8: the same two seki strings, dame E1 E2, B+30.5 at komi 0.5).
SEKI = """
. . . . . . .
. . . . . . .
. . . . . . .
X X X X X X X
O O O O O O X
X X X X . O X
X X X X . O X
"""


@pytest.fixture
def engine():
    return GTPEngine(FAST, size=9, komi=7.5, log=io.StringIO(), ownership_playouts=400)


def ok(engine, command):
    response = engine.handle(command)
    assert response.startswith("=") and response.endswith("\n\n"), (command, response)
    return response[1:].strip()


def fails(engine, command, message=""):
    before = (engine.position.size, engine.position.komi, list(engine.position.moves), engine.position.to_ascii(),
              engine.position.to_move)
    response = engine.handle(command)
    assert response.startswith("? ") and response.endswith("\n\n"), (command, response)
    assert message in response, (command, response)
    after = (engine.position.size, engine.position.komi, list(engine.position.moves), engine.position.to_ascii(),
             engine.position.to_move)
    assert after == before, f"{command!r} changed the game"
    return response


def load(engine, tmp_path, diagram, to_move="B", komi=7.5, name="position.sgf"):
    path = tmp_path / name
    path.write_text(game_to_sgf(Position.from_ascii(diagram, to_move=to_move, komi=komi)))
    ok(engine, f"loadsgf {path}")
    return path


def test_administrative_commands(engine):
    assert ok(engine, "protocol_version") == "2"
    assert ok(engine, "name") == "obook"
    assert ok(engine, "version")
    commands = ok(engine, "list_commands").split("\n")
    for name in ("protocol_version", "name", "version", "known_command", "list_commands", "quit", "boardsize",
                 "clear_board", "komi", "play", "genmove", "undo", "showboard", "final_score", "final_status_list",
                 "time_settings", "time_left", "loadsgf", "printsgf", "set_free_handicap", "fixed_handicap",
                 "place_free_handicap", "reg_genmove", "kgs-genmove_cleanup", "analyze", "lz-analyze",
                 "genmove_analyze", "lz-genmove_analyze", "gogui-analyze_commands", "kata-analyze",
                 "kata-genmove_analyze"):
        assert name in commands
    assert ok(engine, "known_command genmove") == "true"
    assert ok(engine, "known_command fly") == "false"
    assert "final_status_list dead" in ok(engine, "gogui-analyze_commands")
    assert ok(engine, "quit") == "" and engine.quit_requested


def test_protocol_ids_comments_blank_lines_crlf_tabs_and_case(engine):
    assert engine.handle("12 name") == "=12 obook\n\n"
    assert engine.handle("") == "" and engine.handle("   \t ") == ""
    assert engine.handle("# just a comment") == ""
    assert engine.handle("7 play\tb E5 # a comment\r\n") == "=7\n\n"
    assert engine.handle("PLAY W c3\r") == "=\n\n"
    assert engine.handle("3 fly") == "?3 unknown command: fly\n\n"
    assert engine.handle("42") == "?42 missing command\n\n"
    assert engine.handle("\x01name\x7f") == "= obook\n\n"
    assert engine.position.moves == [(BLACK, engine.position.point("E5")), (WHITE, engine.position.point("C3"))]
    assert parse_command_line("5 genmove b") == ("5", "genmove", ["b"])
    assert format_response("", "a\n\nb") == "= a\nb\n\n"


def test_board_setup_and_moves(engine):
    ok(engine, "boardsize 7")
    assert engine.position.size == 7
    ok(engine, "komi 6.5")
    ok(engine, "play b D4")
    ok(engine, "play white c3")
    ok(engine, "play B pass")
    board = ok(engine, "showboard")
    assert " 4 . . . X . . . 4" in board and "black to move" not in board and "white to move, move 3, komi 6.5" in board
    ok(engine, "undo")
    assert len(engine.position.moves) == 2 and engine.position.to_move == BLACK
    ok(engine, "clear_board")
    assert engine.position.moves == [] and engine.position.size == 7 and engine.position.komi == 6.5


def test_bad_input_is_an_error_and_changes_nothing(engine, tmp_path):
    ok(engine, "play b e5")
    fails(engine, "play b e5", "illegal move B E5: the point is occupied")
    fails(engine, "play b z9", "invalid vertex")
    fails(engine, "play b j10", "off a 9x9 board")
    fails(engine, "play x e4", "invalid color")
    fails(engine, "play b", "syntax error")
    fails(engine, "play", "syntax error")
    fails(engine, "play b e4 e6", "syntax error")
    fails(engine, "genmove", "syntax error")
    fails(engine, "genmove purple", "invalid color")
    fails(engine, "boardsize 0", "unacceptable size")
    fails(engine, "boardsize 25", "unacceptable size")
    fails(engine, "boardsize nine", "integer")
    fails(engine, "komi lots", "komi not a float")
    fails(engine, "komi", "syntax error")
    fails(engine, "final_status_list undecided", "invalid status")
    fails(engine, "time_settings 10 x 1", "seconds")
    fails(engine, "time_settings -5 0 0", "negative")
    fails(engine, "time_left b 10", "syntax error")
    fails(engine, "kgs-time_settings fischer 10 5", "unknown time system")
    fails(engine, f"loadsgf {tmp_path / 'absent.sgf'}", "cannot read")
    (tmp_path / "broken.sgf").write_text("(;SZ[9];B[ee];W[ee])")
    fails(engine, f"loadsgf {tmp_path / 'broken.sgf'}", "move 2: illegal move")
    fails(engine, f"loadsgf {tmp_path / 'broken.sgf'} 0", "numbered from 1")
    fails(engine, "fixed_handicap 2", "board not empty")
    fails(engine, "set_free_handicap c3 g7", "board not empty")
    fails(engine, "lz-analyze b 10 allow b e4", "expected: allow COLOR VERTEX[,VERTEX...] UNTILDEPTH")
    fails(engine, "lz-analyze b 10 avoid b e4,z9 1", "z9")
    fails(engine, "lz-analyze b 10 avoid b e4 0", "avoid depth must be at least 1")
    fails(engine, "lz-analyze b 10 ownership true", "unknown analyze option 'ownership'")
    fails(engine, "kata-analyze b 10 ownership yes", "ownership must be true or false")
    fails(engine, "printsgf /nonexistent/dir/game.sgf", "cannot write")
    ok(engine, "undo")
    fails(engine, "undo", "cannot undo")
    ok(engine, "play w e5")  # the board is still usable after undoing past the start
    assert engine.position.moves == [(WHITE, engine.position.point("E5"))]


def test_ko_and_suicide_are_refused(engine):
    ok(engine, "boardsize 5")
    for move in ("b b3", "w c3", "b a2", "w b2", "b b1", "w d2", "b e5", "w c1", "b c2"):  # B C2 takes B2
        ok(engine, f"play {move}")
    assert engine.position.color_at("B2") == 0
    fails(engine, "play w b2", "retakes a ko")
    ok(engine, "clear_board")
    for move in ("w b1", "w a2"):
        ok(engine, f"play {move}")
    fails(engine, "play b a1", "suicide")


def test_genmove_plays_a_legal_move_and_reg_genmove_does_not(engine):
    vertex = ok(engine, "genmove b")
    point = engine.position.point(vertex)
    assert engine.position.moves == [(BLACK, point)]
    suggestion = ok(engine, "reg_genmove w")
    assert engine.position.is_legal(suggestion, WHITE) and len(engine.position.moves) == 1
    reply = ok(engine, "genmove b")  # out of turn, as GTP allows
    assert [c for c, _ in engine.position.moves] == [BLACK, BLACK] and reply != vertex


def test_genmove_passes_when_nothing_is_left_and_resigns_when_lost(engine, tmp_path):
    load(engine, tmp_path, SETTLED, to_move="B", komi=-5.5)
    assert ok(engine, "genmove b") == "pass"
    load(engine, tmp_path, SETTLED, to_move="B", komi=7.5)
    assert ok(engine, "genmove b") == "resign"
    assert engine.position.moves == []
    assert ok(engine, "final_score") == "W+8.5"


def test_final_score_and_status_remove_dead_stones_and_keep_seki(engine, tmp_path):
    load(engine, tmp_path, DEAD_STONE, to_move="B", komi=0.5)
    assert engine.position.result() == "W+6.5"  # the board as it stands counts the dead stone
    assert ok(engine, "final_status_list dead") == "A3"
    assert ok(engine, "final_score") == "B+4.5"
    alive = ok(engine, "final_status_list alive").split("\n")
    assert sorted(alive) == ["C1 C2 C3 C4 C5", "D1 D2 D3 D4 D5"]
    load(engine, tmp_path, SEKI, to_move="B", komi=0.5, name="seki.sgf")
    assert sorted(ok(engine, "final_status_list seki").split("\n")) == [
        "A1 B1 C1 D1 A2 B2 C2 D2", "F1 F2 A3 B3 C3 D3 E3 F3"]
    assert ok(engine, "final_status_list dead") == ""
    assert ok(engine, "final_score") == "B+30.5"
    ownership = ok(engine, "obook-ownership").split("\n")
    assert len(ownership) == 7 and all(len(row.split()) == 7 for row in ownership)


def test_cleanup_genmove_captures_dead_stones_instead_of_passing(engine, tmp_path):
    load(engine, tmp_path, DEAD_STONE, to_move="B", komi=0.5)
    for _ in range(6):
        move = ok(engine, "kgs-genmove_cleanup b")
        assert move not in ("pass", "resign")
        ok(engine, "play w pass")
        if engine.position.color_at("A3") == 0:
            break
    assert engine.position.color_at("A3") == 0, engine.position.to_ascii()


def test_a_lost_player_keeps_playing_in_the_cleanup_phase():
    # This engine resigns in any position; in KGS's cleanup phase a resignation must not become a
    # pass either, or the opponent would capture every stone it can reach.
    engine = GTPEngine("playouts=2000,seed=3,resign_threshold=0.999", size=9, komi=7.5, log=io.StringIO(),
                       ownership_playouts=400)
    assert ok(engine, "genmove b") == "resign"
    assert ok(engine, "kgs-genmove_cleanup b") not in ("pass", "resign")


def test_loadsgf_and_printsgf(engine, tmp_path):
    position = Position.from_moves("E5 C3 G5 pass", size=9, komi=6.5)
    path = tmp_path / "game.sgf"
    path.write_text(game_to_sgf(position))
    assert ok(engine, f"loadsgf {path}") == "black"
    assert engine.position.moves == position.moves and engine.position.komi == 6.5
    assert ok(engine, f"loadsgf {path} 3") == "black"  # the position before move 3
    assert len(engine.position.moves) == 2
    text = ok(engine, "printsgf")
    assert text.startswith("(;") and "\n\n" not in text
    assert read_sgf(text.encode()).position.moves == position.moves[:2]
    out = tmp_path / "out.sgf"
    ok(engine, f"printsgf {out}")
    assert read_sgf(out).position.moves == position.moves[:2]


def test_handicap_commands(engine):
    assert ok(engine, "fixed_handicap 4") == "C3 G7 C7 G3"
    assert engine.position.to_move == WHITE and len(engine.position.setup_black) == 4
    ok(engine, "clear_board")
    fails(engine, "fixed_handicap 10", "invalid number of handicap stones")
    fails(engine, "fixed_handicap 1", "invalid number of handicap stones")
    fails(engine, "set_free_handicap c3", "at least two")
    fails(engine, "set_free_handicap c3 c3", "distinct")
    fails(engine, "set_free_handicap c3 pass", "pass")
    fails(engine, "set_free_handicap c3 z1", "invalid vertex")
    ok(engine, "set_free_handicap c3 g7 e5")
    assert sorted(engine.position.setup_black) == sorted(engine.position.point(v) for v in ("C3", "G7", "E5"))
    ok(engine, "clear_board")
    assert len(ok(engine, "place_free_handicap 3").split()) == 3
    assert [format_vertex(p, 19) for p in fixed_handicap_points(19, 9)] == \
        ["D4", "Q16", "D16", "Q4", "D10", "Q10", "K4", "K16", "K10"]
    assert [format_vertex(p, 19) for p in fixed_handicap_points(19, 2)] == ["D4", "Q16"]


def test_the_clock_sets_the_thinking_time():
    engine = GTPEngine("algorithm=flat,seconds=5,seed=7", log=io.StringIO())
    ok(engine, "time_settings 0 1 1")  # one second a move: think about 0.4 s, not the configured 5
    ok(engine, "time_left b 1 1")
    ok(engine, "reg_genmove b")  # compiles the search, if needed, outside the timed call
    started = time.perf_counter()
    ok(engine, "genmove b")
    assert 0.2 < time.perf_counter() - started < 1.0
    ok(engine, "kgs-time_settings byoyomi 0 2 3")
    assert 1.0 < engine.clock.move_seconds(WHITE, 81, 81) < 2.0
    ok(engine, "kgs-time_settings none")
    assert engine.clock.move_seconds(WHITE, 81, 81) is None


def test_genmove_analyze_streams_info_lines_and_plays(engine):
    response = engine.handle("5 lz-genmove_analyze b 5")
    lines = response.split("\n")
    assert lines[0] == "=5"
    assert lines[-3].startswith("play ") and lines[-2:] == ["", ""]
    infos = [line for line in lines if line.startswith("info ")]
    assert infos
    move = lines[-3].split()[1]
    assert engine.position.moves[-1] == (BLACK, engine.position.point(move))
    check_info_line(infos[-1], engine.position.size)


def check_info_line(line, size):
    """The Leela-Zero format, parsed the way Sabaki parses it."""
    entries = [part.strip() for part in line.split("info ") if part.strip()]
    assert entries
    orders = []
    for entry in entries:
        head, _, pv = entry.partition(" pv ")
        words = head.split()
        fields = dict(zip(words[::2], words[1::2]))
        assert set(fields) == {"move", "visits", "winrate", "prior", "lcb", "order"}
        assert int(fields["visits"]) > 0
        assert 0 <= int(fields["lcb"]) <= int(fields["winrate"]) <= 10000 and 0 < int(fields["prior"]) <= 10000
        orders.append(int(fields["order"]))
        moves = pv.split()
        assert moves[0] == fields["move"]
    assert orders == list(range(len(entries)))


def start_engine(args=("--config", "algorithm=flat,seconds=20,seed=7")):
    return subprocess.Popen([sys.executable, "-m", "obook.cli", "gtp", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_response(process):
    lines = []
    while True:
        line = process.stdout.readline()
        assert line, "the engine closed its output"
        if line == "\n":
            if lines:
                return lines
            continue
        lines.append(line.rstrip("\n"))


def test_subprocess_session_analyze_until_next_command_and_interrupt():
    process = start_engine()
    try:
        send = lambda text: (process.stdin.write(text + "\n"), process.stdin.flush())
        send("1 boardsize 9")
        assert read_response(process) == ["=1"]
        send("play b e5")  # compiles the rules' legality checks before anything is timed
        assert read_response(process) == ["="]
        send("2 lz-analyze 10")
        streamed = [process.stdout.readline() for _ in range(3)]  # arrive before any other command
        send("3 name")
        analysis = [line.rstrip("\n") for line in streamed]
        while (line := process.stdout.readline()) != "\n":
            analysis.append(line.rstrip("\n"))
        assert analysis[0] == "=2"
        for line in analysis[1:]:
            check_info_line(line, 9)
        assert read_response(process) == ["=3 obook"]
        send("analyze b")
        time.sleep(0.5)
        send("showboard")
        analysis = read_response(process)
        assert analysis[0] == "=" and analysis[1].startswith("info move")
        assert read_response(process)[0] == "= "
        send("time_settings 300 0 0")  # about 10 s for this move, unless interrupted
        read_response(process)
        started = time.perf_counter()
        send("4 genmove w")
        time.sleep(0.7)
        send("# interrupt")
        reply = read_response(process)
        assert reply[0].startswith("=4 ") and time.perf_counter() - started < 5
        send("quit")
        assert read_response(process) == ["="]
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_cli_rejects_a_bad_configuration_without_a_traceback():
    done = subprocess.run([sys.executable, "-m", "obook.cli", "gtp", "--config", "playouts=many"],
                          input="", check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.startswith("obook: error: search option playouts='many'")
    assert "Traceback" not in done.stderr


def test_end_of_input_ends_the_session():
    done = subprocess.run([sys.executable, "-m", "obook.cli", "gtp", "--config", FAST],
                          input="1 name\n2 play b e5\n3 play b e5\n4 showboard\n", check=False, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0
    assert done.stdout.startswith("=1 obook\n\n=2\n\n?3 illegal move B E5: the point is occupied\n\n=4 \n")


def send_line(process, text):
    process.stdin.write(text + "\n")
    process.stdin.flush()


def read_within(process, seconds):
    """The next response, or fail when none is complete within ``seconds``."""
    import threading

    box = []
    reader = threading.Thread(target=lambda: box.append(read_response(process)), daemon=True)
    reader.start()
    reader.join(seconds)
    assert box, f"no answer within {seconds} s"
    return box[0]


def stop(process):
    if process.poll() is None:
        process.kill()
        process.wait()


def test_analyze_on_a_finished_game_answers_and_the_next_command_is_answered():
    """Sabaki analyses the last node of a game (both passed), then stops the analysis by sending
    any command; GoGui does the same with ``# interrupt``."""
    process = start_engine()
    try:
        send_line(process, "play b e5")  # compiles the rules before anything is timed
        assert read_response(process) == ["="]
        send_line(process, "play b pass")
        send_line(process, "play w pass")
        assert read_response(process) == ["="] and read_response(process) == ["="]
        send_line(process, "1 lz-analyze 10")
        analysis = read_within(process, 5)
        assert analysis == ["=1", "info move pass visits 1 winrate 10000 prior 10000 lcb 10000 order 0 pv pass"]
        send_line(process, "2 kata-analyze w 10 ownership true")
        kata = read_within(process, 5)
        assert kata[0] == "=2" and len(kata) == 2
        head, _, ownership = kata[1].partition(" ownership ")
        assert head.startswith("info move pass visits 1 winrate 0.000000 scoreMean -73.50 ")
        values = [float(v) for v in ownership.split()]
        assert len(values) == 81 and values[4 * 9 + 4] == -1.0 and values.count(-1.0) == 81  # E5 is Black's
        send_line(process, "3 lz-analyze 10")
        time.sleep(1.0)
        send_line(process, "4 protocol_version")
        assert read_within(process, 2)[0] == "=3"
        assert read_within(process, 2) == ["=4 2"]
        send_line(process, "5 lz-analyze 10")
        time.sleep(0.5)
        send_line(process, "# interrupt")  # the analysis has answered: nothing to interrupt
        send_line(process, "6 name")
        assert read_within(process, 2)[0] == "=5" and read_within(process, 2) == ["=6 obook"]
        send_line(process, "7 clear_board")
        assert read_response(process) == ["=7"]
        send_line(process, "8 analyze b 10")  # a live position: it runs until GoGui's interrupt alone
        time.sleep(1.0)
        send_line(process, "# interrupt")
        analysis = read_within(process, 3)
        assert analysis[0] == "=8" and analysis[1].startswith("info move ")
    finally:
        stop(process)


def test_a_stale_interrupt_does_not_cut_the_next_genmove_short():
    """GoGui may send ``# interrupt`` just after the answer it interrupts has come: with nothing
    running it is ignored, and the next genmove spends its whole budget."""
    process = start_engine(("--config", "algorithm=flat,playouts=3000,seed=7"))
    try:
        send_line(process, "1 name")
        assert read_response(process) == ["=1 obook"]
        send_line(process, "# interrupt")
        time.sleep(0.5)
        send_line(process, "2 genmove b")
        reply = read_within(process, 60)
        assert reply[0].startswith("=2 ") and reply[0] != "=2 pass"
        send_line(process, "quit")
        read_response(process)
        assert process.wait(timeout=20) == 0
        assert "playouts 3000 in" in process.stderr.read()
    finally:
        stop(process)


def test_kata_analyze_lines_as_lizzie_and_sabaki_read_them():
    process = start_engine(("--config", "algorithm=uct,seed=7"))
    try:
        send_line(process, "boardsize 9")
        send_line(process, "play b e5")
        assert read_response(process) == ["="] and read_response(process) == ["="]
        send_line(process, "1 kata-analyze w 20 ownership true avoid w D5,F5 1 maxmoves 6")
        time.sleep(1.5)
        send_line(process, "2 name")
        analysis = read_within(process, 5)
        assert read_within(process, 2) == ["=2 obook"]
        assert analysis[0] == "=1" and len(analysis) >= 2
        for line in analysis[1:]:
            moves, ownership = check_kata_line(line, 9)
            assert len(moves) <= 6 and not {"D5", "F5"} & set(moves)
            assert ownership[4 * 9 + 4] < -0.5  # White's view: E5 is Black's stone
        send_line(process, "3 lz-analyze w 10 minmoves 100")  # every move, with or without visits
        time.sleep(0.5)
        send_line(process, "4 name")
        analysis = read_within(process, 5)
        assert read_within(process, 2) == ["=4 obook"]
        entries = parse_info_entries(analysis[-1])
        priors = [int(f["prior"]) for f in entries]
        assert len(entries) == 81 and len(set(priors)) > 1  # the search's priors, not a uniform share
        assert abs(sum(priors) - 10000) <= 81
    finally:
        stop(process)


def test_kata_genmove_analyze_streams_kata_lines_then_plays_over_the_pipes():
    """KataGo's ``kata-genmove_analyze`` as a GUI drives it: ``=id``, kata-analyze's info lines
    (scores, and ownership when asked) while the engine thinks, then ``play MOVE``, which is
    played on the engine's board (the next genmove is for the other colour's reply)."""
    process = start_engine(("--config", "algorithm=uct,playouts=3000,seed=7"))
    try:
        for command in ("boardsize 9", "komi 7.5", "play b e5"):
            send_line(process, command)
            assert read_within(process, 60) == ["="]
        send_line(process, "7 kata-genmove_analyze w 5 ownership true maxmoves 4")
        answer = read_within(process, 120)
        assert answer[0] == "=7" and answer[-1].startswith("play ") and len(answer) >= 3
        for line in answer[1:-1]:
            moves, ownership = check_kata_line(line, 9)
            assert len(moves) <= 4
            assert ownership[4 * 9 + 4] < -0.5  # White's view: E5 is Black's stone
        move = answer[-1].split()[1]
        assert move in moves  # among the last line's best moves
        send_line(process, "known_command kata-genmove_analyze")
        assert read_within(process, 5) == ["= true"]
        send_line(process, f"play w {move}")
        assert read_within(process, 5)[0].startswith("? ")  # the point is taken: the move was played
        send_line(process, "8 kata-genmove_analyze b 5 nonsense true")
        assert read_within(process, 5)[0].startswith("?8 unknown analyze option 'nonsense'")
    finally:
        stop(process)


def parse_info_entries(line):
    """Each ``info`` entry's fields and its pv, as Sabaki and Lizzie split them."""
    entries = []
    for entry in (part.strip() for part in line.split("info ") if part.strip()):
        head, _, pv = entry.partition(" pv ")
        words = head.split()
        fields = dict(zip(words[::2], words[1::2]))
        fields["pv"] = pv.split()
        entries.append(fields)
    return entries


def check_kata_line(line, size):
    """KataGo's format: fractions with a decimal point (how Sabaki tells them from Leela Zero's),
    scores, lcb below the win rate, and the ownership of every point at the end."""
    head, _, ownership = line.partition(" ownership ")
    entries = parse_info_entries(head)
    assert entries
    for order, fields in enumerate(entries):
        assert set(fields) == {"move", "visits", "winrate", "scoreMean", "scoreStdev", "scoreLead", "prior", "lcb",
                               "order", "pv"}
        assert "." in fields["winrate"] and 0.0 <= float(fields["winrate"]) <= 1.0
        assert 0.0 <= float(fields["lcb"]) <= float(fields["winrate"])
        assert 0.0 < float(fields["prior"]) <= 1.0
        assert abs(float(fields["scoreMean"])) <= size * size + 10 and float(fields["scoreStdev"]) >= 0
        assert int(fields["order"]) == order and fields["pv"][0] == fields["move"]
    values = [float(v) for v in ownership.split()]
    assert len(values) == size * size and all(-1.0 <= v <= 1.0 for v in values)
    return [f["move"] for f in entries], values


def test_kata_genmove_analyze_shows_the_scores_of_the_search_it_plays():
    """The scores are the search's: the last line's first move has the mean and spread that the same
    search (same seed and budget) gives that move, for the colour analysed."""
    from obook.search.players import make_player

    engine = GTPEngine("playouts=400,seed=5", size=9, komi=7.5, log=io.StringIO())
    engine.handle("play b E5")
    lines = [line for line in engine.handle("kata-genmove_analyze w 1").split("\n") if line.startswith("info ")]
    first = parse_info_entries(lines[-1])[0]
    position = Position(size=9, komi=7.5)
    position.play("E5")
    result = make_player("playouts=400,seed=5").genmove(position)
    best = result.best
    assert first["move"] == format_vertex(best.point, 9) and int(first["visits"]) == best.visits
    assert float(first["scoreMean"]) == pytest.approx(best.score_mean, abs=0.005)
    assert float(first["scoreStdev"]) == pytest.approx(best.score_stdev, abs=0.005)
    assert float(first["scoreLead"]) == float(first["scoreMean"])


def test_kata_get_and_set_param_change_the_move_budget_and_name_what_is_fixed():
    """KataGo's ``kata-get-param``/``kata-set-param`` (issue 34): the move budget under KataGo's
    names, read and changed, and it is what the next ``genmove`` spends; the search's other options
    are readable and refused as settable by name; unknown names are errors that change nothing."""
    engine = GTPEngine("playouts=40,seed=1", size=9)
    assert engine.handle("kata-get-param maxVisits") == "= 40\n\n"
    assert engine.handle("kata-get-param maxTime") == "= 0\n\n"
    assert engine.handle("kata-get-param rave") == "= true\n\n"
    assert engine.handle("kata-set-param maxVisits 120") == "=\n\n"
    assert engine.handle("kata-get-param maxPlayouts") == "= 120\n\n"
    budget = engine.clock.move_budget(engine.config, BLACK, engine.position)  # what genmove spends (cmd_genmove)
    assert (budget.playouts, budget.seconds) == (120, None)
    assert engine.handle("genmove b").startswith("= ")
    for command, message in [("kata-set-param maxVisits 0", "at least 1"), ("kata-set-param maxTime x", "not a number"),
                             ("kata-set-param rave false", "fixed for the session"),
                             ("kata-set-param bogus 1", "unknown parameter"), ("kata-get-param bogus", "unknown parameter")]:
        answer = engine.handle(command)
        assert answer.startswith("?") and message in answer, (command, answer)
    assert engine.handle("kata-get-param maxVisits") == "= 120\n\n"
    assert engine.handle("kata-set-param maxTime 0.5") == "=\n\n" and engine.handle("kata-get-param maxTime") == "= 0.5\n\n"


@pytest.mark.parametrize("to_move,score,dead,played", [("B", "W+1.5", "", "B D1 W pass B pass"),
                                                        ("W", "W+5.5", "E1", "W D1 B pass W E1 B pass W pass")])
def test_final_score_plays_on_a_string_in_atari_in_its_own_eye_as_the_side_to_move_would(to_move, score, dead, played):
    log = io.StringIO()
    engine = GTPEngine(FAST, size=7, komi=0.5, log=log, ownership_playouts=1000)
    moves = moves_to(ATARI_IN_OWN_EYE, to_move)
    for index, move in enumerate(moves):
        ok(engine, f"play {'b' if index % 2 == 0 else 'w'} {move}")
    assert ok(engine, "final_score") == score  # GNU Go 3.8 agrees (tests/playout/test_ownership.py)
    assert ok(engine, "final_status_list dead") == dead
    assert f"played on before the count: {played}" in log.getvalue()
    assert len(engine.position.moves) == len(moves)
    assert "not settled" not in log.getvalue()


def test_final_score_on_an_open_board_answers_and_says_it_is_a_guess(tmp_path):
    log = io.StringIO()
    engine = GTPEngine(FAST, size=9, komi=7.5, log=log, ownership_playouts=400)
    for command in ("play b E5", "play w E6", "play b D6", "play w D7", "play b pass", "play w pass"):
        ok(engine, command)
    assert ok(engine, "final_score")[:2] in ("B+", "W+")
    assert "the board is not settled, so the count is a guess" in log.getvalue()
    assert "empty points are nobody's yet" in log.getvalue()
    settled = io.StringIO()
    engine = GTPEngine(FAST, size=9, komi=7.5, log=settled, ownership_playouts=400)
    load(engine, tmp_path, SEKI, to_move="B", komi=0.5)
    assert ok(engine, "final_score") == "B+30.5"
    assert "not settled" not in settled.getvalue() and "played on" not in settled.getvalue()
