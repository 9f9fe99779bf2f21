"""What ladder reading costs (issue 17, item 3): the search's simulations per CPU second with
``ladders`` off and on, beside the raw heavy playouts' rate. (It measured the nakade rule too until
that rule was removed: ``docs/benchmarks.md``, "Tried and removed".)

    python benchmarks/tactics_cost.py [--rounds 3] [--playouts 20000] [--positions 4]

Positions: the empty board and the positions after 20, 40, ... moves of a fixed self-play game (ladders
are read only where strings are short of liberties, which the empty board never has). CPU time of
this process (``time.process_time``) rather than wall time, and the configurations interleaved round
by round, so that a machine loaded by other work moves the figures less. Prints one JSON line per
measurement, then the median per configuration and its ratio to the first (``ladders=off``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

CONFIGS = ("ladders=off", "ladders=on")


def game_positions(count: int):
    """The empty board and the positions every 20 moves of one fixed 200-playout self-play game."""
    from obook.go.position import Position
    from obook.search.players import make_player

    player = make_player("playouts=200,seed=7,resign_threshold=0")
    position = Position(size=9, komi=7.5)
    positions = [position.copy()]
    while len(positions) < count and not position.is_over:
        position.play(player.genmove(position).move)
        if len(position.moves) % 20 == 0:
            positions.append(position.copy())
    return positions


def search_rate(spec: str, positions, playouts: int) -> float:
    from obook.search.players import make_player

    player = make_player(spec + ",seed=1,reuse_tree=off")
    player.genmove(positions[0], playouts=200)  # compile or load first
    done = 0
    t0 = time.process_time()
    for position in positions:
        player.new_game()
        done += player.genmove(position, playouts=playouts).playouts
    return done / (time.process_time() - t0)


def playout_rate(count: int) -> float:
    from obook.go.board import new_board
    from obook.playout.policies import new_scratch, playout_batch, policy_code
    from obook.rng import make_rng

    start, work = new_board(9), new_board(9)
    scratch = new_scratch(start)
    policy = policy_code("heavy")
    rng = make_rng(1)
    playout_batch(start, work, policy, rng, 7.5, scratch, 10)
    t0 = time.process_time()
    playout_batch(start, work, policy, rng, 7.5, scratch, count)
    return count / (time.process_time() - t0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--playouts", type=int, default=20000, help="simulations per position")
    parser.add_argument("--positions", type=int, default=4)
    args = parser.parse_args()
    positions = game_positions(args.positions)
    figures: dict[str, list[float]] = {}
    for round_ in range(args.rounds):
        order = CONFIGS if round_ % 2 == 0 else CONFIGS[::-1]
        for spec in order:
            rate = search_rate(spec, positions, args.playouts)
            figures.setdefault(spec, []).append(rate)
            print(json.dumps({"round": round_, "config": spec, "simulations_per_cpu_second": round(rate)}),
                  flush=True)
        rate = playout_rate(20000)
        figures.setdefault("playouts heavy", []).append(rate)
        print(json.dumps({"round": round_, "playouts": "heavy", "playouts_per_cpu_second": round(rate)}), flush=True)
    base = statistics.median(figures[CONFIGS[0]])
    for name, values in figures.items():
        median = statistics.median(values)
        ref = median if name.startswith("playouts") else base
        print(f"{name:24s} {median:10,.0f}/CPU s  x{median / ref:.3f}  "
              f"(range {min(values):,.0f}-{max(values):,.0f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
