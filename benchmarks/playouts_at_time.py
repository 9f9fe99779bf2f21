"""How many playouts a search makes in T seconds a move on this machine, by phase of the game.

A book is built for a play budget in playouts (its nodes search S = 30 x P), while people play at a
time a move: this converts one into the other. The default engine plays ``--games`` self-play games
at ``--seconds`` a move in one process and reports the median and mean playouts of its searches over
moves 1-10, 11-20, 21-40 and after, and how closely each search keeps its seconds: the wall time of
a ``genmove`` call timed from outside (mean and largest; a move's seconds count the whole call, as a
game clock counts them). Run it alone: the figure is the machine's.

``python benchmarks/playouts_at_time.py --seconds 0.25 --games 3``
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from obook.go.board import PASS
from obook.go.position import Position
from obook.search.config import SearchConfig
from obook.search.players import make_player

PHASES = ((0, 10), (10, 20), (20, 40), (40, 10**6))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.25, help="time a move")
    parser.add_argument("--games", type=int, default=3)
    parser.add_argument("--config", default="", help="search options besides seconds")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--komi", type=float, default=7.5)
    args = parser.parse_args()
    player = make_player(SearchConfig.from_spec(args.config, seconds=args.seconds))
    player.genmove(Position(size=args.size, komi=args.komi), seconds=0.5)  # compile and warm up
    by_move: list[tuple[int, int]] = []
    walls: list[float] = []
    for game in range(args.games):
        player.reseed(100 + game)
        player.new_game()
        position = Position(size=args.size, komi=args.komi)
        passes = 0
        while passes < 2 and len(position.moves) < 3 * args.size * args.size:
            began = time.perf_counter()
            result = player.genmove(position, seconds=args.seconds)
            walls.append(time.perf_counter() - began)
            by_move.append((len(position.moves), result.playouts))
            if result.resign:
                break
            position.play(result.move)
            passes = passes + 1 if result.move == PASS else 0
    rows = []
    for low, high in PHASES:
        counts = [n for ply, n in by_move if low <= ply < high]
        if counts:
            rows.append({"moves": f"{low + 1}-{high if high < 10**6 else 'end'}", "searches": len(counts),
                         "median": statistics.median(counts), "mean": round(statistics.mean(counts))})
    print(json.dumps({"seconds": args.seconds, "games": args.games, "config": args.config,
                      "moves_a_game": round(len(by_move) / args.games, 1), "phases": rows,
                      "wall_mean": round(statistics.fmean(walls), 4), "wall_max": round(max(walls), 4)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
