"""``obook analysis``, KataGo's JSON analysis protocol, driven as a KataGo tool drives it: a
subprocess, one JSON query a line on stdin, one JSON response a line on stdout, real searches of
small budgets."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

import pytest

from obook.go.board import BLACK

SEARCH = "playouts=50,seed=3"
EMPTY_9 = {"rules": "chinese", "komi": 7.5, "boardXSize": 9, "boardYSize": 9}


def session(lines, *args, timeout=300):
    """Responses (parsed) of a session that reads ``lines`` and ends; the process's stderr."""
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
    done = subprocess.run([sys.executable, "-m", "obook.cli", "analysis", "--config", SEARCH, *args],
                          input=text, capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr


def by_id(responses, query_id):
    return [r for r in responses if r.get("id") == query_id]


def check_analysis(response, size):
    """What every analysis response must satisfy."""
    assert response["isDuringSearch"] is False
    infos = response["moveInfos"]
    assert infos, response
    assert [i["order"] for i in infos] == list(range(len(infos)))
    assert sum(i["visits"] for i in infos) <= response["rootInfo"]["visits"]
    for info in infos:
        assert 0.0 <= info["winrate"] <= 1.0 and 0.0 <= info["prior"] <= 1.0
        assert info["pv"][0] == info["move"]
        assert info["utility"] == pytest.approx(2 * info["winrate"] - 1)
    root = response["rootInfo"]
    assert 0.0 <= root["winrate"] <= 1.0 and root["currentPlayer"] in ("B", "W")


def test_a_game_is_analysed_turn_by_turn(compiled_engine):
    query = {"id": "game", "moves": [["B", "E5"], ["w", "C3"], ["B", "pass"]], **EMPTY_9, "maxVisits": 50,
             "analyzeTurns": [0, 1, 3], "includeOwnership": True, "includePolicy": True, "priority": 2}
    responses, _ = session([query])
    assert [r["turnNumber"] for r in responses] == [0, 1, 3]  # no warnings: every field is read
    for response in responses:
        assert response["id"] == "game"
        check_analysis(response, 9)
        assert response["rootInfo"]["visits"] == 50
        ownership = response["ownership"]
        assert len(ownership) == 81 and all(-1.0 <= v <= 1.0 for v in ownership)
        policy = response["policy"]
        assert len(policy) == 82 and sum(v for v in policy if v > 0) == pytest.approx(1.0)
    assert [r["rootInfo"]["currentPlayer"] for r in responses] == ["B", "W", "W"]
    # E5 is the centre, row-major from the top row: index 4 * 9 + 4; occupied after move 1.
    assert responses[1]["policy"][4 * 9 + 4] == -1.0 and responses[0]["policy"][4 * 9 + 4] >= 0
    # C3 (column 2, third row from the bottom: sixth from the top) is occupied at turn 3.
    assert responses[2]["policy"][6 * 9 + 2] == -1.0


def test_bad_queries_get_errors_and_the_engine_keeps_serving(compiled_engine):
    good = {"id": "ok", "moves": [], **EMPTY_9, "maxVisits": 20}
    lines = [
        "{not json",
        "[1, 2]",
        {"moves": [], **EMPTY_9},
        {"id": "illegal", "moves": [["B", "E5"], ["W", "E5"]], **EMPTY_9},
        {"id": "vertex", "moves": [["B", "Z9"]], **EMPTY_9},
        {"id": "colour", "moves": [["X", "E5"]], **EMPTY_9},
        {"id": "rules", "moves": [], **EMPTY_9, "rules": "martian"},
        {"id": "oblong", "moves": [], **EMPTY_9, "boardYSize": 7},
        {"id": "turns", "moves": [["B", "E5"]], **EMPTY_9, "analyzeTurns": [2]},
        {"id": "komi", "moves": [], **EMPTY_9, "komi": 7.3},
        {"id": "visits", "moves": [], **EMPTY_9, "maxVisits": 0},
        {"id": "option", "moves": [], **EMPTY_9, "overrideSettings": {"policy": "psychic"}},
        {"id": "action", "action": "dance"},
        good,
    ]
    responses, _ = session(lines)
    errors = [r for r in responses if "error" in r]
    assert len(errors) == len(lines) - 1
    assert errors[0]["error"].startswith("could not parse JSON")
    assert errors[1] == {"error": "a query must be a JSON object"}
    assert errors[2]["field"] == "id"
    fields = {r["id"]: r["field"] for r in errors[3:]}
    assert fields == {"illegal": "moves", "vertex": "moves", "colour": "moves", "rules": "rules",
                      "oblong": "boardYSize", "turns": "analyzeTurns", "komi": "komi", "visits": "maxVisits",
                      "option": "overrideSettings", "action": "action"}
    assert by_id(responses, "illegal")[0]["error"] == "moves[1]: illegal move W E5: the point is occupied"
    assert "square boards only" in by_id(responses, "oblong")[0]["error"]
    [answer] = by_id([r for r in responses if "error" not in r], "ok")
    check_analysis(answer, 9)


def test_ignored_fields_and_rules_draw_warnings_and_the_query_runs(compiled_engine):
    query = {"id": "w", "moves": [], **EMPTY_9, "rules": "japanese", "maxVisits": 20, "avoidMoves": [],
             "overrideSettings": {"cpuctExploration": 1.0, "exploration": 0.3}}
    responses, _ = session([query])
    warnings = {r["field"]: r["warning"] for r in responses if "warning" in r}
    assert set(warnings) == {"rules", "avoidMoves", "overrideSettings"}
    assert "area" in warnings["rules"] and "cpuctExploration" in warnings["overrideSettings"]
    [answer] = [r for r in responses if "moveInfos" in r]
    check_analysis(answer, 9)


def test_actions_query_version_clear_cache(compiled_engine):
    from obook import __version__

    responses, _ = session([{"id": "v", "action": "query_version"}, {"id": "c", "action": "clear_cache"}])
    assert responses == [{"id": "v", "action": "query_version", "version": __version__, "git_hash": "<omitted>"},
                         {"id": "c", "action": "clear_cache"}]


def test_terminate_stops_a_query_and_the_others_run(compiled_engine):
    """A search of ten million visits, stopped: the turn being searched reports what it found so
    far, the turns not started ``noResults``, the acknowledgement echoes the action, and a later
    query runs."""
    process = subprocess.Popen([sys.executable, "-m", "obook.cli", "analysis", "--config", "seed=3"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        ready = {"id": "ready", "moves": [], **EMPTY_9, "maxVisits": 10}
        process.stdin.write(json.dumps(ready) + "\n")
        process.stdin.flush()
        assert json.loads(process.stdout.readline())["id"] == "ready"  # loaded and searching
        long = {"id": "long", "moves": [["B", "E5"], ["W", "C3"]], **EMPTY_9, "maxVisits": 10_000_000,
                "analyzeTurns": [0, 1, 2]}
        process.stdin.write(json.dumps(long) + "\n")
        process.stdin.flush()
        time.sleep(1.0)
        started = time.monotonic()
        terminate = {"id": "stop", "action": "terminate", "terminateId": "long"}
        after = {"id": "after", "moves": [], **EMPTY_9, "maxVisits": 20}
        out, err = process.communicate(json.dumps(terminate) + "\n" + json.dumps(after) + "\n", timeout=120)
        assert time.monotonic() - started < 60
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0 and "Traceback" not in err
    responses = [json.loads(line) for line in out.splitlines()]
    assert terminate in responses
    long_answers = by_id(responses, "long")
    assert sorted(r["turnNumber"] for r in long_answers) == [0, 1, 2]
    assert all(r["isDuringSearch"] is False for r in long_answers)
    later = [r for r in long_answers if r["turnNumber"] > 0]
    assert all(r.get("noResults") is True for r in later)
    first = next(r for r in long_answers if r["turnNumber"] == 0)
    check_analysis(first, 9)  # stopped in its search: what it found, far short of the budget
    assert 0 < first["rootInfo"]["visits"] < 10_000_000
    [after_answer] = by_id(responses, "after")
    check_analysis(after_answer, 9)


def test_terminate_turn_numbers_stops_only_those_turns(compiled_engine):
    """``turnNumbers`` restricts a terminate to those turns of the query: the others finish their
    budget. (The terminate is read while the first turn's search of 3000 visits runs.)"""
    query = {"id": "q", "moves": [["B", "E5"], ["W", "C3"]], **EMPTY_9, "maxVisits": 3000, "analyzeTurns": [0, 1, 2]}
    terminate = {"id": "t", "action": "terminate", "terminateId": "q", "turnNumbers": [2]}
    responses, _ = session([query, terminate])
    assert responses[0] == terminate
    answers = {r["turnNumber"]: r for r in by_id(responses, "q")}
    assert sorted(answers) == [0, 1, 2]
    assert answers[2] == {"id": "q", "isDuringSearch": False, "noResults": True, "turnNumber": 2}
    for turn in (0, 1):
        check_analysis(answers[turn], 9)
        assert answers[turn]["rootInfo"]["visits"] == 3000


# Black's wall across the sixth row: Black owns two thirds of the board; White to move.
WALL = [["B", f"{c}6"] for c in "ABCDEFGHJ"] + [["W", "C8"], ["W", "G8"]]


def test_winrates_are_black_s_by_default_and_the_side_to_move_s_on_request(compiled_engine):
    query = {"id": "won", "moves": [], "initialStones": WALL, "initialPlayer": "W", **EMPTY_9, "maxVisits": 200}
    black_view, _ = session([query])
    mover_view, _ = session([query], "--report-as", "sidetomove")
    override = {**query, "id": "won-w", "overrideSettings": {"reportAnalysisWinratesAs": "WHITE"}}
    white_view, _ = session([override])
    black, mover, white = black_view[0], mover_view[0], white_view[0]
    for response in (black, mover, white):
        check_analysis(response, 9)
        assert response["rootInfo"]["currentPlayer"] == "W"
    # 200 visits with every child's 50% prior: clearly won, not yet converged (0.80 at expand_threshold=4)
    assert black["rootInfo"]["winrate"] > 0.75 and black["rootInfo"]["scoreLead"] > 5
    assert mover["rootInfo"]["winrate"] < 0.25 and mover["rootInfo"]["scoreLead"] < -5
    assert white["rootInfo"]["winrate"] < 0.25
    gnugo = shutil.which("gnugo") or shutil.which("/usr/games/gnugo")
    if gnugo is None:
        return  # the check against GNU Go's count needs GNU Go
    commands = "boardsize 9\nkomi 7.5\n" + "".join(f"play {c} {v}\n" for c, v in WALL) + "estimate_score\nquit\n"
    done = subprocess.run([gnugo, "--mode", "gtp"], input=commands, capture_output=True, text=True, timeout=120)
    estimate = [line for line in done.stdout.splitlines() if line.startswith("= ") and "+" in line]
    assert estimate and estimate[0].startswith("= B+")  # GNU Go sees the same winner


def test_ownership_is_row_major_from_the_top_for_the_reported_side(compiled_engine):
    """Row-major from the top: the fourth nine values are the sixth row, Black's wall, and the rows
    below it (Black's side) are Black's more than those above; the side to move's view (White's)
    is the same figures negated."""
    query = {"id": "own", "moves": [], "initialStones": WALL, "initialPlayer": "W", **EMPTY_9, "maxVisits": 20,
             "includeOwnership": True}
    [black], _ = session([query])
    [mover], _ = session([query], "--report-as", "SIDETOMOVE")
    rows = [black["ownership"][9 * r:9 * r + 9] for r in range(9)]
    assert all(v > 0.9 for v in rows[3])
    assert sum(map(sum, rows[4:])) / 45 > sum(map(sum, rows[:3])) / 27
    assert all(m == pytest.approx(-b) for m, b in zip(mover["ownership"], black["ownership"]))


# ---- the book ------------------------------------------------------------------------------------


def test_a_statistical_book_position_carries_the_book_s_figures(tmp_path, compiled_engine):
    from obook.book.player import BookPlayer
    from obook.go.position import Position
    from obook.search.players import make_player
    from tests.book.test_book_player import seeded_book

    url = f"sqlite:///{tmp_path / 'p.db'}"
    seeded_book(url)
    found = BookPlayer(make_player(SEARCH), url, "p").lookup(Position(size=9, komi=7.5))
    in_book = {"id": "in", "moves": [], **EMPTY_9, "maxVisits": 30}
    out_of_book = {"id": "out", "moves": [["B", "D4"]], **EMPTY_9, "maxVisits": 30}
    responses, _ = session([in_book, out_of_book], "--book", "p", "--db", url)
    [inside], [outside] = by_id(responses, "in"), by_id(responses, "out")
    check_analysis(inside, 9)
    assert all(i["book"] is True for i in inside["moveInfos"]) and inside["rootInfo"]["book"] is True
    figures = {i["move"]: (i["visits"], i["winrate"]) for i in inside["moveInfos"]}
    assert figures == {c.vertex: (c.games, pytest.approx(c.winrate)) for c in found.candidates}
    assert figures["E5"] == (4, pytest.approx(0.75))  # 3 of its 4 games won by Black, Black to move
    e5 = next(i for i in inside["moveInfos"] if i["move"] == "E5")
    assert e5["lcb"] == pytest.approx(0.75 - 1.96 * (0.75 * 0.25 / 4) ** 0.5)
    check_analysis(outside, 9)
    assert not any("book" in i for i in outside["moveInfos"]) and outside["rootInfo"]["visits"] == 30


def test_a_minimax_book_position_carries_values_and_bounds(store, compiled_engine):
    from obook.book.player import BookPlayer
    from obook.go.position import Position
    from obook.search.players import make_player
    from tests.book.test_minimax import expand, minimax_book

    book = minimax_book(store)
    expand(store, book, 4)
    found = BookPlayer(make_player(SEARCH), store.url, book.name).lookup(Position(size=5, komi=0.5))
    assert found.in_book
    query = {"id": "mm", "moves": [], "rules": "chinese", "komi": 0.5, "boardXSize": 5, "boardYSize": 5,
             "maxVisits": 30}
    mover_view, _ = session([query], "--book", book.name, "--db", store.url, "--report-as", "SIDETOMOVE")
    [answer] = mover_view
    check_analysis(answer, 5)
    infos = {i["move"]: i for i in answer["moveInfos"]}
    for c in found.candidates:
        info = infos[c.vertex]
        assert info["book"] is True
        assert (info["winrate"], info["lcb"], info["visits"]) == (pytest.approx(c.value), pytest.approx(c.lcb),
                                                                  c.visits)
        assert c.backed_up_score is not None and info["scoreLead"] == pytest.approx(c.backed_up_score)
    rates = [i["winrate"] for i in answer["moveInfos"]]
    assert rates == sorted(rates, reverse=True)
    assert answer["rootInfo"]["winrate"] == pytest.approx(found.value)
    assert answer["rootInfo"]["scoreLead"] == pytest.approx(found.backed_up_score)
    [black_view], _ = session([query], "--book", book.name, "--db", store.url)
    assert black_view["rootInfo"]["winrate"] == pytest.approx(found.value)  # Black is to move: no turn-over


def test_kata_analyze_and_the_json_engine_share_their_move_infos(compiled_engine):
    """GTP's info line is written from the same dicts as ``moveInfos``: the figures agree."""
    from obook.go.position import Position
    from obook.gtp.analysis import AnalyzeOptions, format_kata_line, shown_moves
    from obook.search.players import make_player
    from obook.search.report import kata_move_infos

    result = make_player(SEARCH).genmove(Position.from_moves(["E5", "C3"]), playouts=50)
    options = AnalyzeOptions(color=BLACK, interval=1.0)
    line = format_kata_line(result, 9, options)
    infos = kata_move_infos(result, shown_moves(result, options), 9)
    entries = line.split("info ")[1:]
    assert len(entries) == len(infos)
    for entry, info in zip(entries, infos):
        head, _, pv = entry.strip().partition(" pv ")
        words = head.split()
        fields = dict(zip(words[::2], words[1::2]))
        assert fields["move"] == info["move"] and int(fields["visits"]) == info["visits"]
        assert float(fields["winrate"]) == pytest.approx(info["winrate"], abs=1e-6)
        assert float(fields["lcb"]) == pytest.approx(info["lcb"], abs=1e-6)
        assert float(fields["prior"]) == pytest.approx(info["prior"], abs=1e-6)
        assert int(fields["order"]) == info["order"] and pv.split() == info["pv"]
