"""Games per hour on the grid with 1 and then 2 worker processes at 0.2 s per move (MCTS with the
default heavy policy), Redis, PostgreSQL and the driver on this machine: the ratio says whether
the grid adds workers without getting in their way (1.8 or more on 2 cores).

    python benchmarks/grid_scaling.py [--seconds 90] [--size 7] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grid_common import GridRun, fresh_database  # noqa: E402


def measure(processes: int, size: int, seconds_per_move: float, seconds: float) -> dict:
    with fresh_database() as url:
        run = GridRun(url, "scaling", target=100000,
                      book_options=["--size", str(size), "--seconds-per-move", str(seconds_per_move),
                                    "--depth", "1"])  # almost no book moves: every move is a timed search
        try:
            run.start_workers(processes)
            run.start_driver()
            figures = run.measure(warm_games=processes, seconds=seconds)
        finally:
            run.stop()
    return {"processes": processes, **figures}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=90.0, help="measured window per run")
    parser.add_argument("--size", type=int, default=7)
    parser.add_argument("--seconds-per-move", type=float, default=0.2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    runs = [measure(p, args.size, args.seconds_per_move, args.seconds) for p in (1, 2)]
    moves_ratio = runs[1]["moves_per_second"] / max(runs[0]["moves_per_second"], 1e-9)
    searches_ratio = runs[1]["searches_per_second"] / max(runs[0]["searches_per_second"], 1e-9)
    mean_moves = max(r["mean_moves_per_game"] for r in runs)
    for r in runs:  # whole games finish in steps: the move rate over a mean game is the finer measure
        r["games_per_hour_from_moves"] = round(r["moves_per_second"] * 3600 / mean_moves) if mean_moves else 0
    games_ratio = runs[1]["games_per_hour"] / max(runs[0]["games_per_hour"], 1e-9)
    result = {"benchmark": "grid_scaling", "size": args.size, "seconds_per_move": args.seconds_per_move,
              "runs": runs, "games_per_hour_ratio": round(games_ratio, 2), "moves_ratio": round(moves_ratio, 2),
              "searches_ratio": round(searches_ratio, 2)}
    if args.json:
        print(json.dumps(result))
    else:
        for r in runs:
            print(f"{r['processes']} worker process(es): {r['games_per_hour']} games/hour counted "
                  f"({r['games']} games over {r['seconds']} s), {r['moves_per_second']} moves/s, "
                  f"{r['searches_per_second']} searches/s, "
                  f"{r['games_per_hour_from_moves']} games/hour at {mean_moves} moves a game")
        print(f"ratio 2/1: {games_ratio:.2f} in games per hour counted, {moves_ratio:.2f} in moves, "
              f"{searches_ratio:.2f} in searches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
