"""What the count at the end of a game costs with the game played on (``stone_status``) and without
(``settle=False``: the board as it stands), on the games of a ``score_vs_gnugo.py --json`` file.

Run by hand: ``python benchmarks/count_cost.py GAMES.json [--playouts 600]`` (600: what
``SelfPlayer.outcome`` uses). Prints one JSON line: games, milliseconds a game each way, games where
a stone was played on, scores changed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from obook.book.selfplay import OWNERSHIP_PLAYOUTS
from obook.go.position import Position
from obook.playout.ownership import final_score, stone_status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", help="a --json file of benchmarks/score_vs_gnugo.py")
    parser.add_argument("--playouts", type=int, default=OWNERSHIP_PLAYOUTS)
    parser.add_argument("--komi", type=float, default=7.5)
    args = parser.parse_args()
    with open(args.games) as source:
        rows = json.load(source)
    seconds = {False: 0.0, True: 0.0}
    scores = {}
    played_on = 0
    for index, row in enumerate(rows):
        position = Position.from_moves(row["game"], size=row["size"], komi=args.komi)
        for settle in (False, True):
            started = time.perf_counter()
            status = stone_status(position, args.playouts, seed=7, settle=settle)
            scores[settle, index] = final_score(position, status)
            seconds[settle] += time.perf_counter() - started
            if settle:
                played_on += any(point >= 0 for _, point in status.played_on)
    games = max(len(rows), 1)
    print(json.dumps({
        "games": len(rows), "ms_as_it_stands": round(1000 * seconds[False] / games, 1),
        "ms_played_on": round(1000 * seconds[True] / games, 1), "played_on": played_on,
        "score_changed": sum(scores[False, i] != scores[True, i] for i in range(len(rows))),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
