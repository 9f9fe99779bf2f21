"""What the grid costs around the search: a zero-think mutation player (a uniformly random legal
move, no playouts) on 9x9, 2 worker processes, Redis and PostgreSQL all on this machine. Every move
is still a stored, leased, heartbeated transaction and every game is scored and counted, so the
figures are the grid's own ceiling: with 1,000 workers thinking 2 s a move a build needs 500 stored
moves per second.

    python benchmarks/grid_overhead.py [--processes 2] [--seconds 30] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from grid_common import GridRun, fresh_database  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    with fresh_database() as url:
        run = GridRun(url, "overhead", target=100000,
                      book_options=["--size", str(args.size), "--search", "algorithm=random",
                                    "--seconds-per-move", "0"])
        try:
            run.start_workers(args.processes)
            run.start_driver()
            figures = run.measure(warm_games=4, seconds=args.seconds)
        finally:
            run.stop()
    figures = {"benchmark": "grid_overhead", "size": args.size, "processes": args.processes, **figures}
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"{args.processes} worker processes, {args.size}x{args.size}, zero-think player: "
              f"{figures['moves_per_second']} stored moves/s, {figures['games_per_second']} finished games/s "
              f"over {figures['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
