"""Table I of the seed paper: 4x4 with 6 mines, score against thinking time per move.

The paper's two columns are BSR-UCT with rejection (Alg. 1 + 2) and the "fast version" (Metropolis with
inheritance, Alg. 4); we add plain Metropolis (Alg. 3) and the exact sampler. All use uniform playouts and
resample at every node as in the paper (exact: once per simulation at the root), and the search chooses
the first click. Then the same rejection player forced to open in a corner, which even optimal play wins
only 49.1% of the time (exhaustive expectimax, see docs/mines.md).

Run by hand: ``.venv/bin/python benchmarks/mines_table1.py [--budget time|sims] [--games 200]``; writes
``docs/mines_table1.png`` (time budgets, as the paper) or ``docs/mines_table1_sims.png`` (simulation
budgets, which show the curve our much faster searches climb below 1 ms) and prints one line (and one
``RESULT`` JSON line) per point.
"""

from __future__ import annotations

import argparse
import os
import time

from mines_common import DOCS, emit, read_results, run_games

from obook.mines.player import PlayerConfig

BUDGETS = [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128]  # seconds per move
SIM_BUDGETS = [1, 3, 10, 30, 100, 300, 1000, 3000]  # simulations per move
SIM_CAP = {"metropolis": 1000, "metropolis-inherit": 1000}  # they run n(s) steps per node: quadratic cost
SAMPLERS = [("rejection", "node"), ("metropolis-inherit", "node"), ("metropolis", "node"), ("exact", "root")]
CENTRE = {"5", "6", "9", "10"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budget", choices=["time", "sims"], default="time")
    ap.add_argument("--replot", metavar="FILE", help="only redraw the plot from this run's saved output")
    args = ap.parse_args()
    if args.replot:
        replot(args.replot, args.budget == "time")
        return
    t0 = time.perf_counter()
    curves: dict[str, list[tuple[float, dict]]] = {}
    by_time = args.budget == "time"
    for sampler, belief in SAMPLERS:
        for budget in BUDGETS if by_time else SIM_BUDGETS:
            if not by_time and budget > SIM_CAP.get(sampler, budget):
                continue
            cfg = PlayerConfig(sampler=sampler, belief=belief, policy="uniform",
                               sims=None if by_time else budget, seconds=budget if by_time else None)
            s, _ = run_games(4, 4, 6, cfg, args.games, args.seed, args.workers)
            centre = sum(v for k, v in s["first_clicks"].items() if k in CENTRE)
            s["centre_first_clicks"] = centre
            unit = "s" if by_time else " sims"
            emit(f"4x4/6 {sampler} {budget:g}{unit} centre={centre}/{s['games']}", s)
            curves.setdefault(sampler, []).append((budget, s))
    last = BUDGETS[-1] if by_time else SIM_BUDGETS[-1]
    cfg = PlayerConfig(sampler="rejection", belief="node", policy="uniform", sims=None if by_time else last,
                       seconds=last if by_time else None, first="corner")
    corner, _ = run_games(4, 4, 6, cfg, args.games, args.seed, args.workers)
    emit(f"4x4/6 rejection {last:g}{'s' if by_time else ' sims'} corner first", corner)
    print(f"total wall time {time.perf_counter() - t0:.0f} s")
    plot(curves, corner, by_time)


def replot(path: str, by_time: bool) -> None:
    curves: dict[str, list[tuple[float, dict]]] = {}
    corner = None
    for r in read_results(path):
        if r["config"]["first"] == "corner":
            corner = r
        else:
            budget = r["config"]["seconds"] if by_time else r["config"]["sims"]
            curves.setdefault(r["config"]["sampler"], []).append((budget, r))
    plot(curves, corner, by_time)


def plot(curves, corner, by_time) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for sampler, points in curves.items():
        xs = [p[1]["seconds_per_move"] if by_time else p[0] for p in points]
        axes[0].plot(xs, [p[1]["mean_score"] for p in points], marker="o", label=sampler)
        rates = [p[1]["win_rate"] for p in points]
        lo = [max(0.0, p[1]["win_rate"] - p[1]["win_rate_ci95"][0]) for p in points]
        hi = [max(0.0, p[1]["win_rate_ci95"][1] - p[1]["win_rate"]) for p in points]
        axes[1].errorbar(xs, rates, yerr=[lo, hi], marker="o", capsize=3, label=sampler)
    axes[1].axhline(corner["win_rate"], color="grey", ls="--", label="rejection, corner first click")
    axes[1].axhline(0.4913, color="black", ls=":", label="optimal play from a corner (0.491)")
    for ax, title in zip(axes, ["mean score", "win rate (95% CI)"]):
        ax.set_xscale("log")
        ax.set_xlabel("measured thinking time per move (s)" if by_time else "simulations per move")
        ax.set_title(f"4x4, 6 mines: {title}")
        ax.grid(alpha=0.3)
    axes[1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(os.path.join(DOCS, "mines_table1.png" if by_time else "mines_table1_sims.png"), dpi=110)


if __name__ == "__main__":
    main()
