"""How closely a timed search keeps its seconds a move: self-play from the empty board with the
default search at ``--seconds`` a move, timing each ``genmove`` call from outside.

Run by hand, nothing else running: ``python benchmarks/time_control.py [--seconds 0.25] [--moves 40]``.
Prints one JSON line per budget: the mean and largest wall time of a call, the search's own
seconds and simulations a move. A move's budget is the whole call (root preparation, search and
reading the result), as a game clock counts it; before 2026-12-05 the search overran 0.25 s by
about 7% (the last chunk of simulations ran whole past the deadline).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from obook.go.position import Position
from obook.search.players import make_player


def measure(seconds: float, moves: int, config: str) -> dict:
    player = make_player(",".join(filter(None, [config, f"seconds={seconds:g}"])))
    position = Position.from_moves([], 9, 7.5)
    player.genmove(position)  # compiles and loads everything once
    player.new_game()
    walls, searches, simulations = [], [], []
    for _ in range(moves):
        began = time.perf_counter()
        result = player.genmove(position)
        walls.append(time.perf_counter() - began)
        searches.append(result.seconds)
        simulations.append(result.playouts)
        if result.resign or position.is_over:
            break
        position.play(result.move)
    return {"seconds": seconds, "moves": len(walls), "wall_mean": round(statistics.fmean(walls), 4),
            "wall_max": round(max(walls), 4), "search_mean": round(statistics.fmean(searches), 4),
            "simulations_per_move": round(statistics.fmean(simulations))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, nargs="+", default=[0.25, 1.0])
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--config", default="", help="search options besides the defaults")
    args = parser.parse_args()
    for seconds in args.seconds:
        print(json.dumps(measure(seconds, args.moves, args.config)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
