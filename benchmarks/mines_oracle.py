"""Exact value of every first click on 4x4 with 6 mines (exhaustive expectimax, ``obook.mines.oracle``).

Two objectives: the expected final score (the paper's measure) and the win probability. These are the
ground truth behind Table I: the search should open in the centre, and no player opening in a corner can
win more often than the value printed here.

Run by hand: ``.venv/bin/python benchmarks/mines_oracle.py`` (about 35 s of CPU per objective).
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from obook.mines.oracle import Oracle


def main() -> None:
    p, q, n_mines = 4, 4, 6
    for objective in ("score", "win"):
        t0 = time.perf_counter()
        oracle = Oracle(p, q, n_mines, objective)
        values = [oracle.first_click_value(c) for c in range(p * q)]
        print(f"{p}x{q}/{n_mines}, optimal {objective} after each first click ({time.perf_counter() - t0:.1f} s):")
        for r in range(p):
            print("   " + " ".join(f"{values[r * q + c]:.4f}" for c in range(q)))


if __name__ == "__main__":
    main()
