"""The pure Monte-Carlo experiments of seeds 003 (Yoshimoto et al.) and 001 (Bouzy's tables), scaled.

Every point is an ``obook match`` (``obook.gtp.match.run_match``: two ``obook gtp`` engines refereed by
area scoring, colours alternating) and is reported as A's win rate with a Wilson 95% interval and A's
mean score margin. Results go to ``docs/montecarlo_results.json`` (merged by experiment) and plots to
``docs/montecarlo_*.png``; ``plot`` redraws them from the JSON.

    python benchmarks/montecarlo_experiments.py fig3 --games 20 --budgets 250,500,1000,2000 --programs BASIC
    python benchmarks/montecarlo_experiments.py fig4 --games 20 --budgets 250,1000,4000
    python benchmarks/montecarlo_experiments.py fig4 --games 20 --budgets 4000,16000 --pairs "ATARIPP80 vs ATARI"
    python benchmarks/montecarlo_experiments.py rd --games 20 --budget 2000 --values 0.5,1,2,4
    python benchmarks/montecarlo_experiments.py temperature --games 20 --budget 1000 --values 0,2,5,10,20
    python benchmarks/montecarlo_experiments.py amaf --games 20 --budget 2000
    python benchmarks/montecarlo_experiments.py plot     # redraw the PNGs from the JSON
    python benchmarks/montecarlo_experiments.py table    # the results as Markdown tables

The players (seed 003's three programs; random first moves, scores averaged, as its "simpler
approach"; ``resign_threshold=0`` so that every game is scored to the end):

- BASIC: ``algorithm=flat,policy=light,allocation=random``
- ATARI: BASIC with ``policy=atari50``
- ATARIPP: ATARI with progressive pruning, ``algorithm=pp,rd=0.3,sigma_e=1`` (the seed's values),
  pruning decided after each of 8 stages once a move has ``min_games=10`` samples (scaled down so
  that pruning acts at budgets of a few thousand; too aggressive, see docs/montecarlo.md);
- ATARIPP80: the same with ``min_games=80``, the seed's 6,400 samples before pruning (about 80 a move
  on the empty 9x9 board).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from obook.gtp.match import MatchSettings, parse_engine, run_match

DOCS = Path(__file__).resolve().parent.parent / "docs"
RESULTS = DOCS / "montecarlo_results.json"

COMMON = "allocation=random,resign_threshold=0"
BASIC = f"algorithm=flat,policy=light,{COMMON}"
ATARI = f"algorithm=flat,policy=atari50,{COMMON}"
ATARIPP = f"algorithm=pp,policy=atari50,rd=0.3,sigma_e=1,min_games=10,stages=8,{COMMON}"
ATARIPP80 = f"algorithm=pp,policy=atari50,rd=0.3,sigma_e=1,min_games=80,stages=8,{COMMON}"
PROGRAMS = {"BASIC": BASIC, "ATARI": ATARI, "ATARIPP": ATARIPP, "ATARIPP80": ATARIPP80}
PAIRS = {"ATARI vs BASIC": (ATARI, BASIC), "ATARIPP vs ATARI": (ATARIPP, ATARI), "ATARIPP80 vs ATARI": (ATARIPP80, ATARI)}


def margin_for_a(record) -> float | None:
    """A's final score margin in points (None for a forfeit or an unscored game)."""
    if record.score is None:
        return None
    return record.score if record.a_color == "B" else -record.score


def play(a: str, b: str, games: int, size: int, komi: float, seed: int) -> dict:
    """One match between obook specs ``a`` and ``b``; both get ``seed`` (different per side)."""
    spec_a = f"{a},seed={seed * 2 + 1}"
    spec_b = f"{b},seed={seed * 2 + 2}"
    with tempfile.TemporaryDirectory() as sgf_dir:
        settings = MatchSettings(games=games, size=size, komi=komi, sgf_dir=Path(sgf_dir))
        started = time.perf_counter()
        summary, records = run_match(parse_engine("obook:" + spec_a), parse_engine("obook:" + spec_b), settings)
    margins = [m for m in (margin_for_a(r) for r in records) if m is not None]
    row = {
        "a": spec_a, "b": spec_b, "games": summary.games, "a_wins": summary.a_wins, "b_wins": summary.b_wins,
        "draws": summary.draws, "a_score": summary.a_score, "ci95": list(summary.ci95),
        "mean_margin_a": round(sum(margins) / len(margins), 2) if margins else None,
        "average_moves": summary.average_moves, "seconds_per_move": summary.seconds_per_move,
        "reasons": summary.reasons, "wall_seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(row), flush=True)
    return row


def save(experiment: str, payload: dict) -> None:
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data[experiment] = payload
    RESULTS.write_text(json.dumps(data, indent=1) + "\n")


def fig3(args) -> None:
    """003 Figure 3: each program with 4N samples against itself with N."""
    previous = json.loads(RESULTS.read_text()).get("fig3", {}) if RESULTS.exists() else {}
    rows = previous.get("rows", {})
    for name in args.programs:
        spec = PROGRAMS[name]
        rows[name] = [r for r in rows.get(name, []) if r["n"] not in args.budgets]  # rerun budgets replace
        for n in args.budgets:
            row = play(f"{spec},playouts={4 * n}", f"{spec},playouts={n}", args.games, args.size, args.komi, n)
            rows[name].append({"n": n, **row})
        rows[name].sort(key=lambda r: r["n"])
    save("fig3", {"settings": vars_of(args), "rows": rows})


def fig4(args) -> None:
    """003 Figure 4: ATARI vs BASIC and ATARIPP vs ATARI at equal sample sizes."""
    previous = json.loads(RESULTS.read_text()).get("fig4", {}) if RESULTS.exists() else {}
    rows = previous.get("rows", {})
    for pair in args.pairs:
        a, b = PAIRS[pair]
        rows[pair] = [r for r in rows.get(pair, []) if r["n"] not in args.budgets]  # rerun budgets replace
        for n in args.budgets:
            rows[pair].append({"n": n, **play(f"{a},playouts={n}", f"{b},playouts={n}", args.games, args.size,
                                              args.komi, n)})
        rows[pair].sort(key=lambda r: r["n"])
    save("fig4", {"settings": vars_of(args), "rows": rows})


def rd_effect(args) -> None:
    """Bouzy's r_d table: progressive pruning with several r_d against the one-ply player without
    pruning at the same budget (round-robin allocation, light playouts, sigma_e = 0.2)."""
    reference = f"algorithm=flat,policy=light,resign_threshold=0,playouts={args.budget}"
    rows = []
    for rd in args.values:
        spec = (f"algorithm=pp,policy=light,rd={rd:g},sigma_e=0.2,min_games={args.min_games},stages=16,"
                f"resign_threshold=0,playouts={args.budget}")
        rows.append({"rd": rd, **play(spec, reference, args.games, args.size, args.komi, int(rd * 100))})
    save("rd", {"settings": vars_of(args), "reference": reference, "rows": rows})


def temperature(args) -> None:
    """Bouzy's temperature table: all-moves-as-first with constant temperature K against K = 2 (the
    table's reference), and annealing (K rising from 0 to 5)."""
    base = f"algorithm=amaf,policy=light,resign_threshold=0,playouts={args.budget}"
    reference = f"{base},temperature=2"
    rows = []
    for k in args.values:
        if k == 2:
            continue
        rows.append({"K": k, **play(f"{base},temperature={k:g}", reference, args.games, args.size, args.komi, int(k))})
    rows.append({"K": "anneal 0-5", **play(f"{base},temperature=5,annealing=on", reference, args.games, args.size,
                                           args.komi, 99)})
    save("temperature", {"settings": vars_of(args), "reference": reference, "rows": rows})


def amaf(args) -> None:
    """Bouzy's AMAF / basic / PP table: the one-ply player and progressive pruning against
    all-moves-as-first, all with the same number of playouts per move."""
    reference = f"algorithm=amaf,policy=light,resign_threshold=0,playouts={args.budget}"
    basic = f"algorithm=flat,policy=light,resign_threshold=0,playouts={args.budget}"
    pp = (f"algorithm=pp,policy=light,rd=1,sigma_e=0.2,min_games={args.min_games},stages=16,resign_threshold=0,"
          f"playouts={args.budget}")
    rows = [{"player": "basic (one-ply)", **play(basic, reference, args.games, args.size, args.komi, 1)},
            {"player": "PP (rd=1)", **play(pp, reference, args.games, args.size, args.komi, 2)}]
    save("amaf", {"settings": vars_of(args), "reference": reference, "rows": rows})


def vars_of(args) -> dict:
    return {k: v for k, v in vars(args).items() if k != "func"}


def plot(_args=None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = json.loads(RESULTS.read_text())

    def errorbars(ax, xs, rows, label, offset=0.0):
        ys = [100 * r["a_score"] for r in rows]
        low = [100 * (r["a_score"] - r["ci95"][0]) for r in rows]
        high = [100 * (r["ci95"][1] - r["a_score"]) for r in rows]
        ax.errorbar([x * (1 + offset) for x in xs], ys, yerr=[low, high], marker="o", capsize=3, label=label)

    if "fig3" in data:
        fig, ax = plt.subplots(figsize=(6, 4))
        for i, (name, rows) in enumerate(data["fig3"]["rows"].items()):
            errorbars(ax, [r["n"] for r in rows], rows, name, offset=0.04 * (i - 1))
        ax.axhline(50, color="grey", lw=0.8)
        ax.axhline(55, color="grey", lw=0.8, ls=":")
        ax.set_xscale("log")
        ns = sorted({r["n"] for rows in data["fig3"]["rows"].values() for r in rows})
        ax.set_xticks(ns, [f"{4 * n}-{n}" for n in ns], fontsize=8)
        ax.minorticks_off()
        ax.set_xlabel("4N-N (playouts per move)")
        ax.set_ylabel("win % of 4N against N (95% Wilson)")
        games = sorted({r["games"] for rows in data["fig3"]["rows"].values() for r in rows})
        ax.set_title(f"Self-play 4N vs N, {'-'.join(map(str, games[::max(1, len(games) - 1)]))} games a point"
                     " (cf. 003 Fig. 3)", fontsize=10)
        ax.legend()
        fig.tight_layout()
        fig.savefig(DOCS / "montecarlo_fig3.png", dpi=110)
    if "fig4" in data:
        fig, ax = plt.subplots(figsize=(6, 4))
        for i, (name, rows) in enumerate(data["fig4"]["rows"].items()):
            errorbars(ax, [r["n"] for r in rows], rows, name, offset=0.04 * i)
        ax.axhline(50, color="grey", lw=0.8)
        ax.set_xscale("log")
        ns = sorted({r["n"] for rows in data["fig4"]["rows"].values() for r in rows})
        ax.set_xticks(ns, [str(n) for n in ns], fontsize=8)
        ax.minorticks_off()
        ax.set_xlabel("playouts per move (both sides)")
        ax.set_ylabel("win % of the enhanced version (95% Wilson)")
        ax.set_title("Enhancements at equal samples, 20 games a point (cf. 003 Fig. 4)", fontsize=10)
        ax.legend()
        fig.tight_layout()
        fig.savefig(DOCS / "montecarlo_fig4.png", dpi=110)
    panels = [(key, column, label) for key, column, label in (("rd", "rd", "r_d"), ("temperature", "K", "K"),
                                                                ("amaf", "player", "player")) if key in data]
    if panels:
        fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 4), squeeze=False)
        for ax, (key, column, label) in zip(axes[0], panels):
            rows = data[key]["rows"]
            names = [str(r[column]) for r in rows]
            xs = list(range(len(rows)))
            ys = [100 * r["a_score"] for r in rows]
            ax.errorbar(xs, ys, yerr=[[100 * (r["a_score"] - r["ci95"][0]) for r in rows],
                                      [100 * (r["ci95"][1] - r["a_score"]) for r in rows]],
                        fmt="o", capsize=3)
            for x, r in zip(xs, rows):
                if r.get("mean_margin_a") is not None:
                    ax.annotate(f"{r['mean_margin_a']:+.1f} pts", (x, 100 * r["a_score"]), textcoords="offset points",
                                xytext=(6, 4), fontsize=8)
            ax.set_xticks(xs, names, rotation=20, fontsize=8)
            ax.axhline(50, color="grey", lw=0.8)
            ax.set_ylim(0, 100)
            reference = data[key]["reference"].replace(",resign_threshold=0", "")
            ax.set_title(f"{label} vs {reference.split(',')[0].split('=')[1]}"
                         + (" K=2" if key == "temperature" else ""), fontsize=9)
            ax.set_ylabel("win % (95% Wilson)")
        fig.suptitle("Bouzy's tables (seed 001), scaled", fontsize=10)
        fig.tight_layout()
        fig.savefig(DOCS / "montecarlo_bouzy.png", dpi=110)


def table(_args=None) -> None:
    """The results as Markdown tables (what docs/montecarlo.md quotes)."""
    data = json.loads(RESULTS.read_text())

    def line(label, r):
        low, high = r["ci95"]
        spm = r["seconds_per_move"]
        return (f"| {label} | {r['a_wins']}-{r['b_wins']}" + (f" ({r['draws']} drawn)" if r["draws"] else "")
                + f" | {100 * r['a_score']:.0f}% [{100 * low:.0f}, {100 * high:.0f}] | {r['mean_margin_a']:+.1f} |"
                f" {spm['A']:.3f} / {spm['B']:.3f} |")

    header = "| {} | A-B wins | A's score, 95% CI | A's mean margin (points) | s/move A / B |\n|---|---|---|---|---|"
    for key, label in (("fig3", "n"), ("fig4", "n")):
        if key in data:
            for name, rows in data[key]["rows"].items():
                print(f"\n{key} {name}\n" + header.format("N"))
                for r in rows:
                    print(line(f"{4 * r['n']} vs {r['n']}" if key == "fig3" else str(r["n"]), r))
    for key, label in (("rd", "rd"), ("temperature", "K"), ("amaf", "player")):
        if key in data:
            print(f"\n{key} (B = {data[key]['reference']})\n" + header.format(label))
            for r in data[key]["rows"]:
                print(line(str(r[label]), r))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    def numbers(text: str, kind=float) -> list:
        return [kind(x) for x in text.split(",") if x]

    for name, func in (("fig3", fig3), ("fig4", fig4)):
        p = sub.add_parser(name)
        p.add_argument("--budgets", type=lambda t: numbers(t, int), default=[250, 500, 1000, 2000])
        p.set_defaults(func=func)
        if name == "fig3":
            p.add_argument("--programs", type=lambda t: t.split(","), default=["BASIC", "ATARI", "ATARIPP"],
                           help="which of BASIC,ATARI,ATARIPP,ATARIPP80 to (re)run; the others' rows are kept")
        else:
            p.add_argument("--pairs", type=lambda t: t.split(","), default=["ATARI vs BASIC", "ATARIPP vs ATARI"],
                           help=f"which of {', '.join(PAIRS)} to (re)run; the others' rows are kept")
    for name, func, values, budget in (("rd", rd_effect, "0.5,1,2,4", 2000), ("temperature", temperature,
                                       "0,2,5,10,20", 1000), ("amaf", amaf, "", 2000)):
        p = sub.add_parser(name)
        p.add_argument("--values", type=numbers, default=numbers(values))
        p.add_argument("--budget", type=int, default=budget)
        p.add_argument("--min-games", type=int, default=10)
        p.set_defaults(func=func)
    p = sub.add_parser("plot")
    p.set_defaults(func=plot)
    p = sub.add_parser("table")
    p.set_defaults(func=table)
    for p in sub.choices.values():
        p.add_argument("--games", type=int, default=20)
        p.add_argument("--size", type=int, default=9)
        p.add_argument("--komi", type=float, default=0.5)
    args = parser.parse_args()
    args.func(args)
    if args.command not in ("plot", "table"):
        plot()


if __name__ == "__main__":
    main()
