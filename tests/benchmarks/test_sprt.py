"""``benchmarks/sprt.py`` and its statistics: a sequential test of a search option, in colour-swapped
pairs, that stops when it has decided and continues where it stopped."""

import dataclasses
import json
import os
import random
import subprocess
import sys

import pytest

from obook.gtp.match import parse_engine
from obook.stats import logistic_score, pentanomial, sprt_bounds, sprt_llr

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPRT = os.path.join(ROOT, "benchmarks", "sprt.py")
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from sprt import pair_scores  # noqa: E402


def simulated_pairs(elo, pairs, seed):
    rng = random.Random(seed)
    p = logistic_score(elo)
    return [((rng.random() < p) + (rng.random() < p)) / 2 for _ in range(pairs)]


def test_the_log_likelihood_ratio_leans_toward_the_hypothesis_the_games_come_from():
    assert logistic_score(0) == 0.5 and logistic_score(400) == pytest.approx(10 / 11)
    low, high = sprt_bounds(0.05, 0.05)
    assert low == pytest.approx(-2.944, abs=1e-3) and high == pytest.approx(2.944, abs=1e-3)
    for seed in range(5):
        assert sprt_llr(pentanomial(simulated_pairs(60, 2000, seed)), 0, 30) > high
        assert sprt_llr(pentanomial(simulated_pairs(-30, 2000, seed)), 0, 30) < low
    assert sprt_llr([0, 0, 0, 0, 0], 0, 30) == 0.0
    midway = [0, 10, 20, 10, 0]  # exactly even: closer to H0 (0) than to H1 (30)
    assert sprt_llr(midway, 0, 30) < 0 < sprt_llr(midway, -30, 0)
    with pytest.raises(ValueError):
        sprt_bounds(0, 0.05)


def test_pentanomial_counts_pairs_by_their_score():
    assert pentanomial([0.0, 0.5, 0.5, 1.0, 0.25, 0.75]) == [1, 1, 2, 1, 1]


def test_only_pairs_with_both_games_recorded_count():
    rows = [{"game": 0, "winner": "A"}, {"game": 1, "winner": "B"}, {"game": 2, "winner": "A"},
            {"game": 5, "winner": "A"}, {"game": 4, "winner": None}]
    assert pair_scores(rows) == [0.5, 0.75]


def run(tmp_path, *extra):
    command = [sys.executable, SPRT, "--test", "prior_model=off", "--budget", "playouts=20", "--size", "5", "--komi", "0.5",
               "--parallel", "1", "--out", str(tmp_path / "sprt.jsonl"), *extra]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)


def test_a_test_stops_at_its_games_and_continues_in_pairs(tmp_path):
    first = run(tmp_path, "--max-games", "1")
    assert first.returncode == 0, first.stderr
    rows = [json.loads(line) for line in (tmp_path / "sprt.jsonl").read_text().splitlines()]
    assert [r["game"] for r in rows] == [0] and rows[0]["a_color"] == "B"
    assert all(os.path.exists(r["sgf"]) for r in rows)
    assert rows[0]["engines"]["A"]["prior_model"] != rows[0]["engines"]["B"]["prior_model"]
    second = run(tmp_path, "--max-games", "3")
    assert second.returncode == 0, second.stderr
    rows = [json.loads(line) for line in (tmp_path / "sprt.jsonl").read_text().splitlines()]
    # game 1 would pair with game 0 but was never played: the next run starts a new pair at 2
    assert sorted(r["game"] for r in rows) == [0, 2, 3]
    assert [r["a_color"] for r in sorted(rows, key=lambda r: r["game"])] == ["B", "B", "W"]
    assert "3 games" in second.stdout and any(w in second.stdout for w in ("undecided", "H0", "H1"))
    report = run(tmp_path, "--report")
    assert report.stdout.count("prior_model=off vs default at playouts=20 (5x5, komi 0.5): 3 games") == 1


def test_a_test_is_judged_by_the_hypotheses_its_games_were_played_under(tmp_path):
    played = run(tmp_path, "--max-games", "2", "--elo0", "-10", "--elo1", "40")
    assert played.returncode == 0, played.stderr
    rows = [json.loads(line) for line in (tmp_path / "sprt.jsonl").read_text().splitlines()]
    assert {(r["elo0"], r["elo1"]) for r in rows} == {(-10.0, 40.0)}
    assert "(H0 -10 Elo, H1 40)" in run(tmp_path, "--report").stdout
    assert "(H0 0 Elo, H1 15)" in run(tmp_path, "--report", "--elo0", "0", "--elo1", "15").stdout
    refused = run(tmp_path, "--report", "--elo0", "50")  # above the recorded H1
    assert refused.returncode == 2 and "must be greater than H0 (50 Elo)" in refused.stderr
    assert "Traceback" not in refused.stderr


def test_a_misspelt_option_is_refused_before_any_game(tmp_path):
    refused = run(tmp_path, "--base", "prior_modle=off")
    assert refused.returncode == 2 and "unknown search option 'prior_modle'" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "sprt.jsonl").exists()


def test_a_test_whose_recorded_engines_differ_from_today_s_is_refused_and_its_games_kept(tmp_path):
    """A default that changed since the games were played (here B's expand_threshold, as when 4
    became the default) would mix two tests under one name."""
    engine = {side: dataclasses.asdict(parse_engine(spec).config)
              for side, spec in (("A", "obook:prior_model=off,playouts=20"),
                                 ("B", "obook:prior_model=on,expand_threshold=9,playouts=20"))}
    row = {"test": "prior_model=off", "base": "", "budget": "playouts=20", "size": 5, "komi": 0.5, "game": 0,
           "a_color": "B", "winner": "A", "engines": engine, "elo0": 0.0, "elo1": 15.0}
    out = tmp_path / "sprt.jsonl"
    out.write_text(json.dumps(row) + "\n")
    refused = run(tmp_path, "--max-games", "4")
    assert refused.returncode == 2
    assert "B's expand_threshold 9 -> " in refused.stderr and "name the options" in refused.stderr
    assert "Traceback" not in refused.stderr
    assert out.read_text() == json.dumps(row) + "\n"
