"""Issue 33, item 7: the randomized fault schedule (``benchmarks/fault_schedule.py``) for about 40 s
with a fixed seed over a grid build of games: worker and driver SIGKILLs, PostgreSQL restarts and
crashes (the tests' own cluster), Redis SIGKILLs (a Redis of the run's own), frozen workers,
workers with a clock 10 minutes off or failing every unit, at random; then the build must reach
its last target with nothing lost, nothing counted twice, at most one search repeated per unit a
fault could interrupt, ``obook verify`` clean."""

from __future__ import annotations

import json
import os
import shutil
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from fault_schedule import run_schedule  # noqa: E402

from tests.conftest import _service_missing  # noqa: E402

SEED = 11  # the schedule it made is printed (-s)


@pytest.mark.slow
def test_a_random_fault_schedule_over_a_grid_build_of_games(restartable_postgres, compiled_engine, tmp_path):
    if shutil.which("redis-server") is None:  # the run's own broker, which it kills and starts again
        _service_missing("redis-server", FileNotFoundError("redis-server is not on PATH (apt-get install redis-server)"))
    schedule = []
    figures = run_schedule("game", 0.67, SEED, restartable_postgres, tmp_path, emit=schedule.append,
                           settle_seconds=120, raise_seconds=10)
    print("\n" + "\n".join(json.dumps(event) for event in schedule))
    print(json.dumps({k: v for k, v in figures.items() if k != "verify"}))
    faults = [e["fault"] for e in schedule if e["event"] == "fault"]
    assert len(faults) >= 4 and len(set(faults)) >= 3, faults  # the schedule did fault, in several ways
    assert figures["problems"] == [], figures["problems"]
    target = figures["target"]
    assert figures["counts"] == {"finished": target} and figures["units_credited"] == target
    assert figures["lost"] == 0 and figures["done_went_down"] == 0
    assert f"{target} finished games" in figures["verify"][0] and "statistics match the games" in figures["verify"][1]
    assert 0 <= figures["repeated"] <= figures["repeats_allowed"]
