"""Standard boards under the first-click rule (first click and its neighbours mine free).

Beginner 9x9/10, intermediate 16x16/40, expert 16x30/99, centre first click, with the strongest player:
exact sampler (root belief), safe-first playouts, cells proven safe revealed without search, the root
limited to the 8 cells least likely to hold a mine, win reward. Published solvers under this rule: 97.2%,
89.1%, 53.5% (issue 7).

Run by hand: ``.venv/bin/python benchmarks/mines_standard.py [--scale 1.0] [--sims 20000,20000,3000]``;
``--scale`` multiplies the game counts (2000 / 1000 / 500). Writes ``docs/mines_standard.png``.
"""

from __future__ import annotations

import argparse
import os
import time

from mines_common import DOCS, emit, read_results, run_games

from obook.mines.player import STANDARD_BSR_UCT as BEST
from obook.mines.player import PlayerConfig

BOARDS = [("beginner", 9, 9, 10, 2000, 0.972), ("intermediate", 16, 16, 40, 1000, 0.891),
          ("expert", 16, 30, 99, 500, 0.535)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--sims", default="20000,20000,3000", help="simulations per searched move, per board")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--boards", default="beginner,intermediate,expert")
    ap.add_argument("--replot", metavar="FILE", nargs="+", help="only redraw the plot from saved outputs")
    args = ap.parse_args()
    if args.replot:
        published = {tuple(b[1:4]): (b[0], b[5]) for b in BOARDS}
        runs = [r for path in args.replot for r in read_results(path)]
        plot([(*published[tuple(r["board"])], r) for r in runs])
        return
    sims = [int(x) for x in args.sims.split(",")]
    wanted = args.boards.split(",")
    results = []
    t0 = time.perf_counter()
    for (name, p, q, n_mines, games, published), n_sims in zip(BOARDS, sims):
        if name not in wanted:
            continue
        cfg = PlayerConfig(sims=n_sims, seconds=None, **BEST)
        s, _ = run_games(p, q, n_mines, cfg, max(1, int(games * args.scale)), args.seed, args.workers)
        emit(f"{name} {p}x{q}/{n_mines} {n_sims} sims", s)
        print(f"  published {published:.3f}; fallback searches {s['fallback_searches']}, "
              f"moves drawn from a reservoir {s['reservoir_moves']}", flush=True)
        results.append((name, published, s))
    print(f"total wall time {time.perf_counter() - t0:.0f} s")
    plot(results)


def plot(results) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    xs = range(len(results))
    rates = [r[2]["win_rate"] for r in results]
    err = [[max(0.0, r[2]["win_rate"] - r[2]["win_rate_ci95"][0]) for r in results],
           [max(0.0, r[2]["win_rate_ci95"][1] - r[2]["win_rate"]) for r in results]]
    ax.bar([x - 0.2 for x in xs], rates, width=0.4, yerr=err, capsize=4, label="BSR-UCT, exact belief")
    ax.bar([x + 0.2 for x in xs], [r[1] for r in results], width=0.4, label="best published")
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"{r[0]}\n{r[2]['games']} games" for r in results])
    ax.set_ylabel("win rate (95% CI)")
    ax.set_title("Standard boards, first click and neighbours safe")
    ax.legend()
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(os.path.join(DOCS, "mines_standard.png"), dpi=110)


if __name__ == "__main__":
    main()
