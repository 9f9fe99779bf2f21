"""Where the ``endgame`` solver loses: the number of layouts consistent with the position of every fatal click.

Positions with at most ``ENDGAME_LAYOUTS`` layouts are played exactly (the end game), so a loss there is
the position's luck; losses at larger positions are where a better guess could still gain.

    .venv/bin/python benchmarks/mines_losses.py --board expert --games 600
"""

from __future__ import annotations

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from obook.mines.endgame import ENDGAME_LAYOUTS  # noqa: E402
from obook.mines.frontier import log_layouts  # noqa: E402
from obook.mines.player import STANDARD_FIRST, Player, PlayerConfig  # noqa: E402

BOARDS = {"beginner": (9, 9, 10), "intermediate": (16, 16, 40), "expert": (16, 30, 99)}
BOUNDS = [math.log10(ENDGAME_LAYOUTS + 0.5), 8.0, 40.0]  # log10 of the layout counts between the columns


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", choices=BOARDS, default="beginner")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    p, q, n = BOARDS[args.board]
    r, c = STANDARD_FIRST[args.board]
    player = Player(p, q, n, PlayerConfig(solver="endgame", first=r * q + c))
    choose = player._greedy
    last = {}

    def recorded(game, seed):
        cell = choose(game, seed)
        last["log10"] = log_layouts(game.obs, n, player.engine.nbr, player.engine.deg, player._proved_mines)[1] / math.log(10)
        return cell

    player._greedy = recorded
    bins = [0] * (len(BOUNDS) + 1)
    for s in range(args.seed, args.seed + args.games):
        if not player.play(s).won:
            bins[sum(last["log10"] > b for b in BOUNDS)] += 1
    labels = [f"<= {ENDGAME_LAYOUTS} layouts", f"{ENDGAME_LAYOUTS} to 1e8", "1e8 to 1e40", "> 1e40"]
    print(f"{args.board}, {args.games} games from seed {args.seed}: {sum(bins)} losses; "
          + ", ".join(f"{lab}: {k}" for lab, k in zip(labels, bins)))


if __name__ == "__main__":
    main()
