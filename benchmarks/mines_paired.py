"""Paired comparison of Mines solver variants on the same seeds (the same games).

A variant is a list of overrides of module constants, ``module.NAME=value`` (for instance
``guesses.SAFETY_WEIGHT=0.8``), applied before the games; ``base`` overrides nothing. Each variant's
per-seed wins are cached in ``--cache`` (a JSON file keyed by board, seeds and variant), so variants run in
separate invocations are compared game by game: games won by one only, and a two-sided sign test on them
(small gains are visible where two separate win rates would be lost in the noise).

    .venv/bin/python benchmarks/mines_paired.py --board expert --games 300 base guesses.SAFETY_WEIGHT=0.8

Each uncached variant is played in a fresh process (one core), so overrides never leak into another.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from obook.mines.player import STANDARD_FIRST, Player, PlayerConfig  # noqa: E402

BOARDS = {"beginner": (9, 9, 10), "intermediate": (16, 16, 40), "expert": (16, 30, 99)}


def apply(variant: str) -> None:
    if variant == "base":
        return
    for item in variant.split(","):
        target, value = item.split("=", 1)
        module, name = target.rsplit(".", 1)
        mod = importlib.import_module(f"obook.mines.{module}")
        if not hasattr(mod, name):
            raise SystemExit(f"variant {variant!r}: obook.mines.{module} has no constant {name}")
        old = getattr(mod, name)
        setattr(mod, name, type(old)(value) if not isinstance(old, str) else value)


def sign_test(a: int, b: int) -> float:
    """Two-sided exact binomial p-value of a split a:b under 1/2."""
    n = a + b
    if n == 0:
        return 1.0
    k = min(a, b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--board", choices=BOARDS, default="beginner")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--solver", default="endgame")
    ap.add_argument("--cache", default="/tmp/mines_paired.json")
    ap.add_argument("--run-one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("variants", nargs="+")
    args = ap.parse_args()
    p, q, n = BOARDS[args.board]
    r, c = STANDARD_FIRST[args.board]
    cache = json.load(open(args.cache)) if os.path.exists(args.cache) else {}
    key = lambda v: f"{args.board}|{args.seed}|{args.games}|{args.solver}|{v}"  # noqa: E731
    if args.run_one:  # a fresh process per variant, so that overrides never leak into the next one
        v = args.variants[0]
        apply(v)
        player = Player(p, q, n, PlayerConfig(solver=args.solver, first=r * q + c))
        t0 = time.perf_counter()
        wins = "".join("1" if player.play(s).won else "0" for s in range(args.seed, args.seed + args.games))
        cache = json.load(open(args.cache)) if os.path.exists(args.cache) else {}
        cache[key(v)] = {"wins": wins, "seconds": time.perf_counter() - t0}
        json.dump(cache, open(args.cache, "w"))
        return
    for v in args.variants:
        if key(v) not in cache:
            subprocess.run([sys.executable, os.path.abspath(__file__), "--run-one", "--board", args.board, "--games",
                            str(args.games), "--seed", str(args.seed), "--solver", args.solver, "--cache", args.cache,
                            v], check=True)
            cache = json.load(open(args.cache))
    ref = args.variants[0]
    rw = cache[key(ref)]["wins"]
    for v in args.variants:
        w = cache[key(v)]["wins"]
        only_v = sum(a == "1" and b == "0" for a, b in zip(w, rw))
        only_r = sum(a == "0" and b == "1" for a, b in zip(w, rw))
        print(f"{args.board} {args.games} games from {args.seed}: {v:<50} wins {w.count('1'):>6} "
              f"({w.count('1') / len(w):.4f})  vs {ref}: +{only_v} -{only_r}  sign p={sign_test(only_v, only_r):.3f}  "
              f"{cache[key(v)]['seconds']:.0f} s")


if __name__ == "__main__":
    main()
