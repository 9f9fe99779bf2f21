"""``benchmarks/mines_paired.py``: the sign test, and a paired run whose variants share their games."""

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from mines_paired import sign_test  # noqa: E402


def test_sign_test_matches_the_binomial():
    assert sign_test(0, 0) == 1.0
    assert sign_test(5, 0) == pytest.approx(2 / 32)
    assert sign_test(3, 3) == 1.0
    assert sign_test(9, 1) == pytest.approx(2 * 11 / 1024)


def test_paired_run_caches_per_seed_wins_and_compares_them(tmp_path):
    cache = tmp_path / "paired.json"
    out = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "mines_paired.py"), "--board", "beginner",
                          "--games", "6", "--cache", str(cache), "base", "endgame.ENDGAME_LAYOUTS=1"],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    runs = json.loads(cache.read_text())
    assert sorted(runs) == ["beginner|0|6|endgame|base", "beginner|0|6|endgame|endgame.ENDGAME_LAYOUTS=1"]
    assert all(len(r["wins"]) == 6 and set(r["wins"]) <= {"0", "1"} for r in runs.values())
    assert out.count("vs base") == 2
