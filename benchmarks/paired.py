"""Old code against new in one run: ``obook bench playouts`` and ``obook bench search`` from two
checkouts, interleaved round by round so that both see the same machine load.

    python benchmarks/paired.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 5] [--seconds 5]

Each checkout is imported from its own folder (``PYTHONPATH``), with this interpreter's packages; warm
both numba caches first (one run each) so that no compile lands in a timed round. Prints one JSON line
per measurement, then the median of each figure per checkout and new/old.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CASES = (
    ("playouts light", ["playouts", "--policy", "light"], "playouts_per_second"),
    ("playouts atari50", ["playouts", "--policy", "atari50"], "playouts_per_second"),
    ("playouts heavy", ["playouts", "--policy", "heavy"], "playouts_per_second"),
    ("search default", ["search"], "simulations_per_second"),
)


def measure(checkout: str, args: list[str], seconds: float) -> dict:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(checkout))
    out = subprocess.run([sys.executable, "-m", "obook.cli", "bench", *args, "--seconds", str(seconds), "--json"],
                         env=env, cwd=checkout, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    figures: dict[tuple[str, str], list[float]] = {}
    for round_ in range(args.rounds):
        for name, bench_args, field in CASES:
            order = (("old", args.old), ("new", args.new)) if round_ % 2 == 0 else (("new", args.new), ("old", args.old))
            for label, checkout in order:
                result = measure(checkout, bench_args, args.seconds)
                value = float(result[field])
                figures.setdefault((name, label), []).append(value)
                print(json.dumps({"round": round_, "case": name, "checkout": label, field: round(value)}), flush=True)
    for name, _, _ in CASES:
        old = statistics.median(figures[(name, "old")])
        new = statistics.median(figures[(name, "new")])
        print(f"{name:18s} old {old:12,.0f}  new {new:12,.0f}  new/old {new / old:.3f}  "
              f"(old range {min(figures[(name, 'old')]):,.0f}-{max(figures[(name, 'old')]):,.0f}, "
              f"new range {min(figures[(name, 'new')]):,.0f}-{max(figures[(name, 'new')]):,.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
