"""Old code against new in one run: ``obook bench playouts`` and ``obook bench search`` from two
checkouts, interleaved round by round so that both see the same machine load.

    python benchmarks/paired.py OLD_CHECKOUT NEW_CHECKOUT [--rounds 5] [--seconds 5] [--case search ...]

Each checkout is imported from its own folder (``PYTHONPATH``), with this interpreter's packages; warm
both numba caches first (one run each) so that no compile lands in a timed round. Prints one JSON line
per measurement, then the median of each figure per checkout, new/old, and the median of the rounds'
new/old (each round runs both, so that ratio is paired). ``--case`` (repeatable) keeps
only the cases whose name starts with it (``search``, ``playouts heavy``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CASES = (
    ("playouts light", ["playouts", "--policy", "light"], ("playouts_per_second",)),
    ("playouts atari50", ["playouts", "--policy", "atari50"], ("playouts_per_second",)),
    ("playouts heavy", ["playouts", "--policy", "heavy"], ("playouts_per_second",)),
    ("playouts heavy-moggy", ["playouts", "--policy", "heavy-moggy"], ("playouts_per_second",)),
    ("search default", ["search"], ("simulations_per_second", "simulations_per_cpu_second",
                                    "fresh_simulations_per_second")),
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
    parser.add_argument("--case", action="append", default=[], help="only the cases whose name starts with this")
    args = parser.parse_args()
    cases = [case for case in CASES if not args.case or any(case[0].startswith(c) for c in args.case)]
    figures: dict[tuple[str, str, str], list[float]] = {}
    for round_ in range(args.rounds):
        for name, bench_args, fields in cases:
            order = (("old", args.old), ("new", args.new)) if round_ % 2 == 0 else (("new", args.new), ("old", args.old))
            for label, checkout in order:
                result = measure(checkout, bench_args, args.seconds)
                values = {field: float(result[field]) for field in fields if field in result}
                for field, value in values.items():
                    figures.setdefault((name, field, label), []).append(value)
                print(json.dumps({"round": round_, "case": name, "checkout": label,
                                  **{field: round(value) for field, value in values.items()}}), flush=True)
    for name, _, fields in cases:
        for field in fields:
            old_runs, new_runs = figures.get((name, field, "old"), []), figures.get((name, field, "new"), [])
            if len(old_runs) != len(new_runs) or not old_runs:
                continue  # a checkout whose bench does not report it
            old, new = statistics.median(old_runs), statistics.median(new_runs)
            paired = statistics.median(n / o for n, o in zip(new_runs, old_runs))
            print(f"{name} {field}: old {old:,.0f}  new {new:,.0f}  new/old {new / old:.3f}, "
                  f"median of the rounds' new/old {paired:.3f}  (old range {min(old_runs):,.0f}-{max(old_runs):,.0f}, "
                  f"new range {min(new_runs):,.0f}-{max(new_runs):,.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
