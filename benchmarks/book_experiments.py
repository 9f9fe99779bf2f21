"""Issue 9: does the book make the engine stronger? Seed 002's experiments at fast settings.

    python benchmarks/book_experiments.py learning --db sqlite:////tmp/exp.db --book mvbm9 \\
        --algorithm mvbm --checkpoints 100,200,400 --playouts 300 --games-per-checkpoint 100
    python benchmarks/book_experiments.py compare --db sqlite:////tmp/exp.db --books mbm9,mvbm9
    python benchmarks/book_experiments.py freelunch --db sqlite:////tmp/exp.db --book mvbm9 --playouts 1200 --games 100

``learning`` grows a book by self-play (the mutation player is MCTS with ``--playouts`` per move) to
each checkpoint and, at each, plays engine+book against the same engine without a book, colors
alternating: the seed's Figure 1 (success rate as black and as white along the book's growth).
``compare`` reads the population: the self-play success rate of white along the build (the seed's
Figure 2), and the share of book moves per color (MBM stalls for black, MVBM does not).
``freelunch`` uses a book built at short settings with a stronger engine (more playouts).
Each writes JSON and a PNG into ``docs/`` (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from sqlalchemy import select

from obook.book.build import BuildPlan, build
from obook.book.library import BookSettings, ensure_book, open_book_store
from obook.gtp.match import MatchSettings, parse_engine, run_match
from obook.stats import wilson_interval
from obook.store.books import get_book
from obook.store.games import GAMES
from obook.store.models import FINISHED

DOCS = Path(__file__).resolve().parents[1] / "docs"


def book_match(url: str, book: str, playouts: int, games: int, size: int, komi: float, min_games: int,
               parallel: int, sgf_dir: Path | None = None) -> dict:
    """Engine+book (A) against the same engine without a book (B); A's results per color."""
    spec = f"playouts={playouts},resign_threshold=0.05"
    a = parse_engine(f"obook:{spec},book={book},book_db={url},book_min_games={min_games}")
    b = parse_engine(f"obook:{spec}")
    settings = MatchSettings(games=games, size=size, komi=komi, parallel=parallel, sgf_dir=sgf_dir)
    summary, records = run_match(a, b, settings)
    result = {"games": summary.games, "score": summary.a_score, "ci95": summary.ci95}
    for color in ("B", "W"):
        mine = [r for r in records if r.a_color == color]
        won = sum(1 for r in mine if r.winner == "A") + 0.5 * sum(1 for r in mine if r.winner is None)
        low, high = wilson_interval(won, len(mine)) if mine else (0.0, 1.0)
        result["as_black" if color == "B" else "as_white"] = {"games": len(mine), "rate": won / max(len(mine), 1),
                                                              "ci95": [low, high]}
    return result


def cmd_learning(args) -> None:
    store = open_book_store(args.db, create=True)
    book = ensure_book(store, args.book, BookSettings(size=args.size, komi=args.komi, algorithm=args.algorithm,
                                                     search=f"playouts={args.playouts}", seconds_per_move=0,
                                                     depth=args.depth, widening=args.widening))
    if args.seed_sgf:
        from obook.book.sgfio import seed_book

        report = seed_book(store, book, sorted(Path(args.seed_sgf).rglob("*.sgf")), args.seed_komi)
        print(json.dumps({"seeded": len(report.scored), "unscored": len(report.unscored),
                          "already": len(report.duplicates), "skipped": len(report.skipped)}), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    curve = []
    for checkpoint in [int(c) for c in args.checkpoints.split(",")]:
        started = time.time()
        build(BuildPlan(url=store.url, book=book.name, target=checkpoint, workers=args.workers))
        built = time.time() - started
        started = time.time()
        point = {"games_in_book": checkpoint, "build_seconds": round(built, 1)}
        point.update(book_match(store.url, book.name, args.playouts, args.games_per_checkpoint, args.size, args.komi,
                                args.min_games, args.workers))
        point["match_seconds"] = round(time.time() - started, 1)
        curve.append(point)
        print(json.dumps(point), flush=True)
        (out / f"book-learning-{book.name}.json").write_text(json.dumps(curve, indent=1))
    plot_learning(curve, out / f"book-learning-{book.name}.png", book.name)


def plot_learning(curve: list[dict], path: Path, name: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    xs = [p["games_in_book"] for p in curve]
    for ax, key, title in ((axes[0], "as_black", "engine+book as Black"), (axes[1], "as_white", "engine+book as White")):
        ys = [p[key]["rate"] for p in curve]
        lo = [p[key]["rate"] - p[key]["ci95"][0] for p in curve]
        hi = [p[key]["ci95"][1] - p[key]["rate"] for p in curve]
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3)
        ax.axhline(0.5, color="grey", lw=0.8, ls="--")
        ax.set_title(title)
        ax.set_xlabel("games in the book")
    axes[0].set_ylabel("success rate vs no book (95% CI)")
    fig.suptitle(f"book {name}: learning curve (seed 002, Fig. 1)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def population(store, name: str) -> list[tuple[str | None, str]]:
    with store.read() as conn:
        book = get_book(conn, name)
        rows = conn.execute(select(GAMES.c.winner, GAMES.c.origins).where(
            GAMES.c.book_id == book.id, GAMES.c.status == FINISHED, GAMES.c.source == "selfplay",
        ).order_by(GAMES.c.finished_at, GAMES.c.id)).all()
    return [(w, o) for w, o in rows]


def moving(values: list[float], window: int) -> list[float]:
    out = []
    for i in range(len(values)):
        part = values[max(0, i - window + 1): i + 1]
        out.append(sum(part) / len(part))
    return out


def cmd_compare(args) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    store = open_book_store(args.db)
    out = Path(args.out)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    summary = {}
    for name in args.books.split(","):
        games = population(store, name)
        white = [1.0 if w == "W" else 0.0 for w, _ in games]
        black_book = [_book_share(o, 0, args.depth) for _, o in games]
        white_book = [_book_share(o, 1, args.depth) for _, o in games]
        xs = list(range(1, len(games) + 1))
        axes[0].plot(xs, moving(white, args.window), label=name)
        axes[1].plot(xs, moving(black_book, args.window), label=name)
        axes[2].plot(xs, moving(white_book, args.window), label=name)
        wins = sum(white)
        low, high = wilson_interval(wins, len(white)) if white else (0.0, 1.0)
        half = len(games) // 2
        summary[name] = {
            "games": len(games), "white_rate": wins / max(len(white), 1), "white_ci95": [low, high],
            "black_book_share_first_half": sum(black_book[:half]) / max(half, 1),
            "black_book_share_second_half": sum(black_book[half:]) / max(len(games) - half, 1),
            "white_book_share_first_half": sum(white_book[:half]) / max(half, 1),
            "white_book_share_second_half": sum(white_book[half:]) / max(len(games) - half, 1),
        }
    axes[0].set_title("self-play: White's success rate")
    axes[1].set_title(f"Black's moves from the book (first {args.depth})")
    axes[2].set_title(f"White's moves from the book (first {args.depth})")
    for ax in axes:
        ax.set_xlabel("game of the build")
        ax.legend()
    axes[0].axhline(0.5, color="grey", lw=0.8, ls="--")
    fig.tight_layout()
    fig.savefig(out / "book-compare.png", dpi=110)
    (out / "book-compare.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps(summary, indent=1))


def _book_share(origins: str, parity: int, depth: int) -> float:
    mine = origins[parity:depth:2]
    return mine.count("b") / len(mine) if mine else 0.0


def cmd_freelunch(args) -> None:
    store = open_book_store(args.db)
    result = book_match(store.url, args.book, args.playouts, args.games, args.size, args.komi, args.min_games,
                        args.workers)
    result["engine_playouts"] = args.playouts
    print(json.dumps(result))
    out = Path(args.out)
    (out / f"book-freelunch-{args.book}-{args.playouts}.json").write_text(json.dumps(result, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    for name in ("learning", "compare", "freelunch"):
        p = sub.add_parser(name)
        p.add_argument("--db", required=True)
        p.add_argument("--size", type=int, default=9)
        p.add_argument("--komi", type=float, default=7.5)
        p.add_argument("--workers", type=int, default=os.cpu_count() or 2)
        p.add_argument("--min-games", type=int, default=1)
        p.add_argument("--depth", type=int, default=20)
        p.add_argument("--out", default=str(DOCS))
    p = sub.choices["learning"]
    p.add_argument("--book", required=True)
    p.add_argument("--algorithm", default="mvbm")
    p.add_argument("--playouts", type=int, default=300)
    p.add_argument("--checkpoints", default="100,200,400")
    p.add_argument("--games-per-checkpoint", type=int, default=100)
    p.add_argument("--seed-sgf", default=None, help="a folder of SGF games to seed the book with first")
    p.add_argument("--seed-komi", choices=("refuse", "moves-only", "accept"), default="refuse",
                   help="seed results at another komi than the book's: refuse (default), keep the moves only, accept")
    p.add_argument("--widening", type=float, default=0.0, help="progressive widening of the book rule (0: off)")
    p.set_defaults(func=cmd_learning)
    p = sub.choices["compare"]
    p.add_argument("--books", required=True)
    p.add_argument("--window", type=int, default=50)
    p.set_defaults(func=cmd_compare)
    p = sub.choices["freelunch"]
    p.add_argument("--book", required=True)
    p.add_argument("--playouts", type=int, default=1200)
    p.add_argument("--games", type=int, default=100)
    p.set_defaults(func=cmd_freelunch)
    args = parser.parse_args()
    args.func(args)


if __name__ == "__main__":
    main()
