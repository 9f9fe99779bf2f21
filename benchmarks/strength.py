"""Strength figure of issue 3: the default search against GNU Go 3.8 level 10 on 9x9.

Run by hand: ``python benchmarks/strength.py [--games 100] [--parallel 2] [--seconds 1] [--config SPEC]``.
Plays ``obook match`` with colours alternating, komi 7.5, area scoring, saves every game as SGF under
``--sgf-dir`` and prints the match summary as JSON (win rate, Wilson 95% interval, per colour).

With ``--parallel 2`` on a 2-core machine two games run at once, so each obook engine shares the
cores with the other game's engines: the figure is then a slight underestimate of one full core.
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys

GNUGO = "gtp:/usr/games/gnugo --mode gtp --level 10 --chinese-rules"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=1.0, help="obook's time per move")
    parser.add_argument("--config", default="", help="search options besides the defaults")
    parser.add_argument("--sgf-dir", default=f"strength-{datetime.date.today().isoformat()}")
    args = parser.parse_args()
    spec = ",".join(filter(None, [args.config, f"seconds={args.seconds:g}"]))
    command = [sys.executable, "-m", "obook.cli", "match", f"obook:{spec}", GNUGO, "--games", str(args.games),
               "--size", "9", "--komi", "7.5", "--parallel", str(args.parallel), "--sgf-dir", args.sgf_dir,
               "--json"]
    return subprocess.run(command).returncode


if __name__ == "__main__":
    sys.exit(main())
