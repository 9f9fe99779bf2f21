"""``obook mines play`` / ``show``: outputs that add up, and bad input reported without a traceback."""

import json

import pytest

from obook.cli import main


def test_play_json_reports_consistent_figures(capsys):
    rc = main(["mines", "play", "--size", "4x4", "--mines", "6", "--sampler", "rejection", "--sims", "300",
               "--games", "4", "--seed", "2", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 4 and out["board"] == {"rows": 4, "cols": 4, "mines": 6}
    lo, hi = out["win_rate_ci95"]
    assert lo <= out["win_rate"] <= hi
    assert out["wins"] == round(out["win_rate"] * 4)
    assert 0 <= out["mean_score"] <= 1
    assert sum(out["first_clicks"].values()) == 4
    assert out["seconds_per_move"] > 0


def test_play_text_and_fixed_first_click(capsys):
    rc = main(["mines", "play", "--size", "5x5", "--mines", "5", "--sampler", "exact", "--policy", "safe-first",
               "--sims", "100", "--games", "2", "--first", "0,0"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "win rate" in text and "time per move" in text
    assert "first clicks: (0,0) x2" in text


def test_show_prints_probabilities(capsys):
    rc = main(["mines", "show", "--size", "7x7", "--mines", "11", "--seed", "3", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    prob = [x for row in out["mine_probability"] for x in row]
    hidden = [o == -1 for row in out["observation"] for o in row]
    assert sum(prob) == pytest.approx(11)
    assert all(p == 0 for p, h in zip(prob, hidden) if not h)
    rc = main(["mines", "show", "--size", "7x7", "--mines", "11", "--seed", "3"])
    assert rc == 0
    assert "%" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--size", "4x4", "--mines", "8"], "at most 7 mines"),
        (["--size", "4by4", "--mines", "3"], "ROWSxCOLS"),
        (["--sims", "10", "--seconds", "1"], "not both"),
        (["--sims", "0"], "at least 1"),
        (["--first", "9,9"], "off the"),
        (["--games", "0"], "at least 1"),
        (["--size", "5x5"], "give --mines"),
    ],
)
def test_bad_input_is_an_error_without_traceback(capsys, argv, message):
    rc = main(["mines", "play", *argv])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and "Traceback" not in err


def test_bench_json_reports_the_win_rate_with_its_interval(capsys):
    rc = main(["mines", "bench", "--board", "beginner", "--games", "30", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 30 and out["solver"] == "endgame" and out["mines"] == 10
    assert out["config"]["first"] == 2 * 9 + 2
    lo, hi = out["win_rate_ci95"]
    assert lo <= out["win_rate"] <= hi + 1e-12 and out["wins"] == round(out["win_rate"] * 30)  # hi: 1 - 1e-16 at 30/30
    assert out["seconds_per_game"] > 0 and out["published_best"] == pytest.approx(0.9717)
    assert out["command"].startswith("obook mines bench --board beginner --games 30 --solver endgame")
    rc = main(["mines", "bench", "--board", "expert", "--games", "2", "--first", "0,0"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "first click (0,0)" in text and "win rate" in text and "time per game" in text


@pytest.mark.parametrize("argv,message", [(["--games", "0"], "at least 1"), (["--first", "9,9"], "off the"),
                                          (["--solver", "bsr-uct", "--sims", "0"], "at least 1")])
def test_bench_bad_input_is_an_error_without_traceback(capsys, argv, message):
    rc = main(["mines", "bench", *argv])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "Traceback" not in err
