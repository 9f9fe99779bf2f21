"""Smoke test of the Pachi anchor (``benchmarks/pachi_match.py``): one short game against Pachi 12.90
finishes on the board and is counted by the referee and by GNU Go. Skips without the binary that
``scripts/build_pachi.sh`` installs (``.cache/pachi/pachi``, or ``pachi`` on the PATH); it never
downloads or builds anything."""

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from obook.go.sgf import read_sgf
from obook.gtp.match import MatchError

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from pachi_match import budget_key, calibrate_pachi, gnugo_count, obook_engine, pachi_count, pachi_engine  # noqa: E402


@pytest.fixture(scope="module")
def pachi_path():
    built = ROOT / ".cache" / "pachi" / "pachi"
    path = str(built) if os.access(built, os.X_OK) else shutil.which("pachi")
    if path is None:
        pytest.skip("no Pachi binary (scripts/build_pachi.sh builds one into .cache/pachi/)")
    return path


def test_pachi_runs_on_one_thread_with_a_forced_budget(tmp_path):
    fake = tmp_path / "pachi"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    assert pachi_engine(fake, 0.25, None).argv[1:] == ["--rules", "chinese", "-t", "0.25", "threads=1"]
    assert pachi_engine(fake, None, 600, "resign_threshold=0").argv[4:] == ["=600", "threads=1,resign_threshold=0"]
    with pytest.raises(MatchError, match="at least 500 playouts"):
        pachi_engine(fake, None, 499)


def test_each_budget_is_recorded_under_its_own_key():
    assert budget_key(0.25, None) == "0.25s" and budget_key(None, 600) == "P600"
    assert budget_key(1.0, None, 16000) == "1s-pachiP16000"
    assert budget_key(1.0, None, pachi_count("auto")) == "1s-pachiPauto"


def test_pachi_playouts_are_a_count_or_auto():
    assert pachi_count("21000") == 21000 and pachi_count("auto") == "auto"
    with pytest.raises(argparse.ArgumentTypeError, match="'fast'"):
        pachi_count("fast")


def test_pachis_count_is_calibrated_to_the_seconds_in_games_against_obook(pachi_path):
    obook = obook_engine("playouts=50,resign_threshold=0,seed=3", None, 50)
    short, per_move = calibrate_pachi(Path(pachi_path), obook, 0.05, 1, "resign_threshold=0", games=1, start=600)
    # 600 playouts took per_move seconds a move: 0.05 s holds proportionally fewer (at least Pachi's 500)
    assert per_move > 0 and short == max(500, round(600 * 0.05 / per_move, -2))


def test_one_short_game_against_pachi_is_played_out_and_counted(pachi_path, gnugo_path, tmp_path):
    out = tmp_path / "pachi.jsonl"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "pachi_match.py"), "--pachi", pachi_path, "--size", "7",
         "--playouts", "500", "--config", "playouts=50,resign_threshold=0,seed=5",
         "--pachi-options", "resign_threshold=0", "--games", "1", "--run", "test", "--out", str(out)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["run"] == "test" and row["budget"] == "P500-7x7" and row["a_color"] == "B"
    assert row["reason"] == "score", row  # neither side resigns: two passes, then the referee's count
    assert row["result"][:2] in ("B+", "W+") and row["winner"] == ("A" if row["result"][0] == "B" else "B")
    assert row["engine_moves"]["B"] > 5 and "threads=1" in row["pachi"] and "-t =500" in row["pachi"]
    game = read_sgf(Path(row["sgf"]))
    assert game.total_moves == row["moves_played"] and game.result == row["result"]
    assert game.white.startswith("Pachi 12.90")  # the anchor's own name and version, from GTP
    assert row["gnugo_result"] == gnugo_count(Path(row["sgf"]), gnugo_path) and row["gnugo_result"][:2] in ("B+", "W+")
    [table] = [json.loads(line) for line in done.stdout.splitlines()]
    assert table["games"] == 1 and table["obook_score"] == (1.0 if row["winner"] == "A" else 0.0)
    assert table["gnugo_checked"] == 1


def test_a_missing_binary_is_a_clear_error(tmp_path):
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "pachi_match.py"), "--pachi", str(tmp_path / "none"),
         "--games", "1", "--out", str(tmp_path / "p.jsonl")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "scripts/build_pachi.sh" in done.stderr and "Traceback" not in done.stderr
