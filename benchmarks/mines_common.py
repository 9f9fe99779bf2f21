"""Shared by the Mines benchmarks: play many games on several processes and summarise them.

Games are split by seed (game i uses seed + i) over worker processes, so a run is reproducible whatever the
number of workers; think time is measured inside each game, wall time around the whole run.
"""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import sys
import time
from dataclasses import asdict, replace

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from obook.mines.player import WARM_UP_SEED, Player, PlayerConfig, summarise
DOCS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "docs")


def _play_chunk(args):
    p, q, n_mines, config, seeds = args
    Player(p, q, n_mines, replace(config, sims=4, seconds=None)).play(WARM_UP_SEED)  # load jitted code first
    player = Player(p, q, n_mines, config)
    return [player.play(s) for s in seeds]


def run_games(p: int, q: int, n_mines: int, config: PlayerConfig, games: int, seed: int = 0,
              workers: int = 2) -> tuple[dict, float]:
    """Play ``games`` games on ``workers`` processes; return the summary and the wall time."""
    seeds = list(range(seed, seed + games))
    chunks = [seeds[i::workers] for i in range(workers) if seeds[i::workers]]
    t0 = time.perf_counter()
    if workers == 1:
        records = _play_chunk((p, q, n_mines, config, seeds))
    else:
        with mp.get_context("spawn").Pool(len(chunks)) as pool:
            records = [r for part in pool.map(_play_chunk, [(p, q, n_mines, config, c) for c in chunks]) for r in part]
    wall = time.perf_counter() - t0
    summary = summarise(records)
    summary["wall_seconds"] = wall
    summary["config"] = asdict(config)
    summary["board"] = [p, q, n_mines]
    return summary, wall


def line(label: str, s: dict) -> str:
    lo, hi = s["win_rate_ci95"]
    return (f"{label:<34} games {s['games']:>5}  win {s['win_rate']:.3f} [{lo:.3f}, {hi:.3f}]  "
            f"score {s['mean_score']:.4f}±{s['mean_score_se']:.4f}  {1000 * s['seconds_per_move']:7.1f} ms/move  "
            f"{s['seconds_per_game']:6.2f} s/game  sims/search {s['simulations'] / max(1, s['searches']):8.0f}")


def emit(label: str, s: dict) -> None:
    """Print a readable line and a JSON line (``RESULT {...}``) for later tables and plots."""
    print(line(label, s), flush=True)
    print("RESULT " + json.dumps({"label": label, **s}), flush=True)


def read_results(path: str) -> list[dict]:
    """The ``RESULT`` JSON lines of a saved benchmark output, in order."""
    with open(path) as f:
        return [json.loads(line[len("RESULT "):]) for line in f if line.startswith("RESULT ")]
