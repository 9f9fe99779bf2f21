"""The seed's big board: 7x7 with 11 mines, centre first click, every sampler at equal thinking time.

First the paper's setting for each sampler (uniform playouts, node resampling, every move searched, score
reward) at the same time per move; then our strongest player (exact sampler, safe-first playouts, proven-safe
cells revealed without search, win reward) with more games. Reference: a good solver wins about 79% with a
central first click, mean score about 0.965 (issue 7).

Run by hand: ``.venv/bin/python benchmarks/mines_7x7.py [--games 200] [--seconds 0.02] [--best-games 2000]``;
writes ``docs/mines_7x7.png``.
"""

from __future__ import annotations

import argparse
import os
import time

from mines_common import DOCS, emit, read_results, run_games

from obook.mines.player import PlayerConfig

SAMPLERS = [("rejection", "node"), ("metropolis", "node"), ("metropolis-inherit", "node"), ("exact", "root")]
BEST = {"sampler": "exact", "belief": "root", "policy": "safe-first", "shortcut": True, "reward": "win", "c_uct": 0.3}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=0.02, help="thinking time per move, every sampler")
    ap.add_argument("--best-games", type=int, default=2000)
    ap.add_argument("--best-sims", type=int, default=20000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--replot", metavar="FILE", help="only redraw the plot from this run's saved output")
    args = ap.parse_args()
    if args.replot:
        plot([(short_label(r["label"]), r) for r in read_results(args.replot)])
        return
    t0 = time.perf_counter()
    bars = []
    for sampler, belief in SAMPLERS:
        cfg = PlayerConfig(sampler=sampler, belief=belief, policy="uniform", sims=None, seconds=args.seconds,
                           first="center")
        s, _ = run_games(7, 7, 11, cfg, args.games, args.seed, args.workers)
        label = f"7x7/11 {sampler} {args.seconds:g}s/move (paper setting)"
        emit(label, s)
        bars.append((short_label(label), s))
    for sampler, belief in [("rejection", "root"), ("exact", "root")]:
        cfg = PlayerConfig(sampler=sampler, belief=belief, policy="safe-first", sims=None, seconds=args.seconds,
                           first="center", reward="win", c_uct=0.3)
        s, _ = run_games(7, 7, 11, cfg, args.games, args.seed, args.workers)
        label = f"7x7/11 {sampler} root safe-first win {args.seconds:g}s/move"
        emit(label, s)
        bars.append((short_label(label), s))
    cfg = PlayerConfig(sims=args.best_sims, seconds=None, first="center", **BEST)
    s, _ = run_games(7, 7, 11, cfg, args.best_games, args.seed, args.workers)
    label = f"7x7/11 best: exact+shortcut {args.best_sims} sims"
    emit(label, s)
    bars.append((short_label(label), s))
    print(f"total wall time {time.perf_counter() - t0:.0f} s")
    plot(bars)


def short_label(label: str) -> str:
    """Two-line tick label from a result label."""
    words = label.removeprefix("7x7/11 ").split()
    if "best:" in words:
        return f"exact + shortcut\n{words[-2]} sims"
    sampler = words[0].replace("metropolis-inherit", "metrop.-inherit")
    setting = "paper setting" if "paper" in label else "root belief\nsafe-first"
    return f"{sampler}\n{setting}"


def plot(bars) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    labels = [b[0] for b in bars]
    xs = range(len(bars))
    rates = [b[1]["win_rate"] for b in bars]
    err = [[max(0.0, b[1]["win_rate"] - b[1]["win_rate_ci95"][0]) for b in bars],
           [max(0.0, b[1]["win_rate_ci95"][1] - b[1]["win_rate"]) for b in bars]]
    axes[0].bar(xs, rates, yerr=err, capsize=4, color="tab:blue")
    axes[0].axhline(0.79, color="black", ls=":", label="reference 0.79")
    axes[0].set_title("7x7, 11 mines, centre first click: win rate (95% CI)")
    axes[1].bar(xs, [b[1]["mean_score"] for b in bars], yerr=[1.96 * b[1]["mean_score_se"] for b in bars],
                capsize=4, color="tab:green")
    axes[1].axhline(0.965, color="black", ls=":", label="reference 0.965")
    axes[1].set_title("mean score")
    axes[1].set_ylim(0.5, 1.0)
    for ax in axes:
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, fontsize=7)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(os.path.join(DOCS, "mines_7x7.png"), dpi=110)


if __name__ == "__main__":
    main()
