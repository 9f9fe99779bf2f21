"""Issue 16's goal: does a minimax (search-valued) book make the engine stronger at P playouts a move?
And the seed's books (``--algorithm mvbm`` or ``mbm``, self-play by a mutation player of
``--mutation-playouts``) measured alike, at the compute the build rows record (playouts searched).

Grows one minimax book (searches of S playouts, ``obook build --algorithm minimax``) to each
checkpoint (expansions done), and at each plays engine+book (A) against the same engine without a
book (B) at P playouts a move, colours alternating, 9x9; the learning curve is the score at each
checkpoint of the same build. Every game is appended to ``--out`` as a JSON line with the book
moves A played and the path of its SGF (saved under ``--out``'s name), and every build phase with
its seconds, so an interrupted run continues where it stopped (the build resumes from the store). ``--report`` prints the table of what is recorded.
``--opponent OPTIONS`` plays against another engine (one no opponent model used) and
``--without-book`` against it without the book, the baseline of the book's gain there. With
``{game}`` in a GTP opponent (``"gtp:gnugo --mode gtp --level 10 --chinese-rules --seed {game}"``) game i
of both series meets the opponent on seed i, and the report adds the book's gain over the games both
played, paired game by game, with its 95% interval. A series at another ``--playouts`` (the same book
played at 1 s a move) is a series of its own: every game records its P, and the report keeps each P
apart.

    python benchmarks/minimax_book.py --db /tmp/mm.db --book mm300 --search-playouts 30000 \\
        --playouts 300 --checkpoints 250,1000,2000 --games 200,200,400 --workers 2 [--expansion reach]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from obook.book.rules import ALGORITHMS, MINIMAX
from obook.stats import game_points, paired_difference, wilson_interval

DEFAULT_OUT = Path("docs/book-results/minimax.jsonl")


def load(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def append(path: Path, row: dict) -> None:
    with path.open("a") as handle:
        handle.write(json.dumps(row) + "\n")


def expansions_done(url: str, book: str) -> int:
    """The book's finished work in its own units (a minimax book's expansions), as a build counts it."""
    from obook.book.kinds import book_kind
    from obook.book.library import open_book_store
    from obook.store.books import get_book

    with open_book_store(url).read() as conn:
        info = get_book(conn, book)
        return book_kind(info).counts(conn, info).done


def replayed(row: dict, plies: int | None = None):
    """(ply, position, point) along a recorded game's SGF (its path relative to the repository, where
    the benchmarks run), for its first ``plies`` moves: ``position`` is the one ``point`` is played
    from, and is played on after each step (read it, do not keep it)."""
    from obook.go.position import Position
    from obook.go.sgf import read_sgf

    record = read_sgf(Path(row["sgf"]))
    position = Position(size=record.position.size, komi=record.position.komi)
    for ply, (_, point) in enumerate(record.position.moves[:plies]):
        yield ply, position, point
        position.play(point)


def playouts_spent(url: str, book: str) -> int:
    """Playouts the book's searches cost, read from the store: a minimax book's S-playout searches
    (one per node, one more for a node searched again with book moves excluded) and its play-policy
    searches; a self-play book's mutation searches."""
    from sqlalchemy import func, select

    from obook.book.expansion import play_playouts
    from obook.book.minimax import CONSTANTS
    from obook.book.library import open_book_store
    from obook.store.books import get_book
    from obook.store.models import SELFPLAY, Game, MinimaxNode
    from obook.search.config import SearchConfig

    from obook.book.kinds import book_kind

    store = open_book_store(url)
    with store.read() as conn:
        info = get_book(conn, book)
        playouts = SearchConfig.from_spec(info.search or None).playouts
        if book_kind(info).has_play_budget:  # a search-valued book: its nodes' searches and play models
            nodes, researched = conn.execute(select(func.count(), func.count().filter(MinimaxNode.searched_edges > 0))
                                             .where(MinimaxNode.book_id == info.id)).one()
            play = CONSTANTS.play_searches * play_playouts(info) if info.expansion == "reach" else 0
            return int(nodes * (playouts + play) + researched * playouts)
        searches = conn.execute(select(func.coalesce(func.sum(Game.searches), 0)).where(
            Game.book_id == info.id, Game.source == SELFPLAY)).scalar_one()
        return int(searches) * playouts


def reached(rows: list[dict], book: str, target: int) -> bool:
    """Whether a finished build row of ``book`` is at ``target`` or beyond (an unfinished row, of a
    build stopped on its way, is not)."""
    return any(r.get("kind") == "build" and r["book"] == book and r["checkpoint"] >= target
               and r["done"] >= r["checkpoint"] for r in rows)


def grow(url: str, book: str, target: int, workers: int, out: Path) -> None:
    """Build ``book`` to ``target`` and record the build's seconds and playouts. A build stopped
    before the target (Ctrl-C, SIGTERM, a failed worker) records the seconds it ran as an unfinished
    row, so a book grown over several runs or sessions reports all its build time; only a finished
    row counts as the checkpoint reached."""
    from obook.book.build import BuildPlan, build

    if reached(load(out), book, target):
        return
    started = time.time()
    try:
        build(BuildPlan(url=url, book=book, target=target, workers=workers))
    finally:
        append(out, {"kind": "build", "book": book, "checkpoint": target, "done": expansions_done(url, book),
                     "seconds": round(time.time() - started, 1), "playouts": playouts_spent(url, book)})


def series_name(book: str, book_options: str, opponent: str = "", without_book: bool = False) -> str:
    """The name of a series of games in ``--out``: the book, how it was played if not by default
    (``[no book]``: the engine alone, the baseline against the same opponent), and the opponent
    where it is not the plain engine (``vs reward=score``)."""
    name = f"{book} [no book]" if without_book else f"{book} [{book_options}]" if book_options else book
    return f"{name} vs {opponent}" if opponent else name


def base_book(series: str) -> str:
    """The book of a series (``series_name``'s inverse, for its book part)."""
    return re.split(r" \[| vs ", series, maxsplit=1)[0]


def series_opponent(series: str) -> str:
    """The opponent of a series ("" for the plain engine; ``series_name``'s inverse, for its opponent)."""
    return series.partition(" vs ")[2]


def play(url: str, book: str, checkpoint: int, playouts: int, games: int, komi: float, parallel: int,
         out: Path, book_options: str = "", opponent: str = "", without_book: bool = False) -> None:
    """Engine+book against the engine, both at ``playouts`` a move; ``book_options`` (e.g.
    ``book_soft=1000``) change how the book is played, and name the series (``b025 [book_soft=1000]``);
    ``opponent`` (search options) makes B another engine, ``without_book`` plays A without the book
    (the baseline against the same opponent)."""
    from obook.gtp.match import MatchSettings, parse_engine, run_match

    series = series_name(book, book_options, opponent, without_book)
    done = sum(1 for r in load(out) if r.get("kind") == "game" and r["book"] == series
               and r["checkpoint"] == checkpoint and r["playouts"] == playouts)
    if done >= games:
        return
    spec = f"playouts={playouts}"
    with_book = "" if without_book else ",".join(filter(None, [f"book={book},book_db={url}", book_options]))
    a = parse_engine("obook:" + ",".join(filter(None, [spec, with_book])))
    b = (parse_engine(opponent) if " " in opponent  # a GTP command: "gnugo --mode gtp --level 10"
         else parse_engine("obook:" + ",".join(filter(None, [spec, opponent]))))
    print(f"{series} at {checkpoint} expansions, {playouts} playouts a move: {done} games recorded, playing "
          f"{games - done}", file=sys.stderr,
          flush=True)

    def record(game) -> None:
        used = game.book.get("A") or {}
        append(out, {"kind": "game", "book": series, "checkpoint": checkpoint, "playouts": playouts,
                     "game": game.index, "a_color": game.a_color, "winner": game.winner,
                     "result": game.result, "reason": game.reason, "moves_played": game.moves,
                     "book_moves": used.get("book_moves"), "left_at": used.get("left_at"), "sgf": game.sgf})

    options = ["nobook"] if without_book else [o.replace("=", "") for o in book_options.split(",") if o]
    options += [f"vs-{re.sub(r'[^A-Za-z0-9.]+', '', o)}" for o in opponent.split(",") if o]
    folder = f"{book}-{checkpoint}" + "".join(f"-{o}" for o in options) + f"-p{playouts}"
    sgf_dir = out.with_suffix("") / folder / f"from-{done:04d}"  # every game, to audit the lines
    run_match(a, b, MatchSettings(games=games - done, size=9, komi=komi, parallel=parallel, sgf_dir=sgf_dir,
                                  first_game=done),
              on_game=record)


def report(rows: list[dict]) -> list[dict]:
    builds = [r for r in rows if r.get("kind") == "build"]  # a checkpoint's runs: unfinished ones, then the finished
    cells: dict[tuple, list[dict]] = {}
    for r in rows:
        if r.get("kind") == "game":
            cells.setdefault((r["book"], r["checkpoint"], r["playouts"]), []).append(r)
    table = []
    for (book, checkpoint, playouts), games in sorted(cells.items()):
        built = None if " [no book]" in book else base_book(book)  # options: the book's build; no book: none
        won = sum(game_points(g["winner"]) for g in games)
        low, high = wilson_interval(won, len(games))
        seconds = sum(b["seconds"] for b in builds if b["book"] == built and b["checkpoint"] <= checkpoint)
        book_moves = [g["book_moves"] for g in games if g["book_moves"] is not None]
        by_colour = {}
        for colour in ("B", "W"):
            mine = [g for g in games if g["a_color"] == colour]
            by_colour[colour] = sum(game_points(g["winner"]) for g in mine) / len(mine) if mine else None
        spent = [b.get("playouts") for b in builds
                 if b["book"] == built and b["checkpoint"] == checkpoint and b["done"] >= checkpoint]
        table.append({"book": book, "expansions": checkpoint, "playouts": playouts,
                      "build_minutes": round(seconds / 60, 1),
                      "playouts_millions": round(spent[0] / 1e6, 1) if spent and spent[0] else None,
                      "games": len(games), "score": won / len(games), "ci95": [low, high],
                      "as_black": by_colour["B"], "as_white": by_colour["W"],
                      "mean_book_moves": sum(book_moves) / len(book_moves) if book_moves else None})
    return table


def paired_gains(rows: list[dict]) -> list[dict]:
    """The book's gain where a series with the book and its ``[no book]`` baseline met an opponent on
    the same seeds (``{game}`` in its command: game i of both series met the same opponent): the
    mean of the per-game differences over the game numbers both played, with its 95% interval. The
    baseline plays no book, so its games do not depend on the checkpoint it was recorded at: a
    book's later checkpoint pairs with it too (the baseline at the same checkpoint when there is
    one, else the one with the most games)."""
    scores: dict[tuple, dict[int, float]] = {}
    for r in rows:
        if r.get("kind") == "game" and " vs " in r["book"] and "{game}" in r["book"]:
            scores.setdefault((r["book"], r["checkpoint"], r["playouts"]), {})[r["game"]] = game_points(r["winner"])
    gains = []
    for (series, checkpoint, playouts), games in sorted(scores.items()):
        if " [no book]" in series:
            continue
        opponent = series_opponent(series)
        name = series_name(base_book(series), "", opponent, without_book=True)
        baselines = {c: g for (b, c, p), g in scores.items() if b == name and p == playouts}
        baseline = baselines.get(checkpoint) or max(baselines.values(), key=len, default={})
        common = sorted(set(games) & set(baseline))
        if not common:
            continue
        gain, low, high = paired_difference([games[g] for g in common], [baseline[g] for g in common])
        gains.append({"book": series, "expansions": checkpoint, "playouts": playouts, "games": len(common),
                      "gain": gain, "ci95": [low, high], "with_book": sum(games[g] for g in common) / len(common),
                      "without_book": sum(baseline[g] for g in common) / len(common)})
    return gains


def plot_curves(table: list[dict], spec: str, path: Path) -> None:
    """One panel per ``title=series,series;...`` group of ``spec``; a series is one book's checkpoints,
    or several books' joined by ``+`` (checkpoints of separate builds of one configuration)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [part.split("=", 1) for part in spec.split(";") if part.strip()]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6), sharey=True, squeeze=False)
    for ax, (title, series) in zip(axes[0], panels):
        for offset, names in enumerate(series.split(",")):
            books = names.split("+")
            points = sorted((r["expansions"], r["score"], r["ci95"]) for r in table if r["book"] in books)
            if not points:
                continue
            xs = [x + 3 * (offset - 1) for x, _, _ in points]  # side by side, so the bars do not overlap
            ys = [100 * y for _, y, _ in points]
            err = [[100 * (y - lo) for _, y, (lo, _) in points], [100 * (hi - y) for _, y, (_, hi) in points]]
            ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=books[0].rstrip("0123456789k"))  # mvbm3000k75 -> mvbm
        ax.axhline(50, color="grey", lw=0.8, ls="--")
        ax.set_title(title.strip())
        ax.set_xlabel("self-play games in the book")
        ax.legend(loc="upper left", fontsize=8)
    axes[0][0].set_ylabel("engine+book score, % (95% interval)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", default="/tmp/minimax-book.db", help="the book's store (SQLite path or URL)")
    parser.add_argument("--book", default="mm300")
    parser.add_argument("--search-playouts", type=int, default=30000, help="S: playouts of each book search")
    parser.add_argument("--playouts", type=int, default=300, help="P: playouts a move in the matches")
    parser.add_argument("--algorithm", choices=ALGORITHMS, default=MINIMAX,
                        help="the book's algorithm; --checkpoints count expansions (minimax) or self-play games")
    parser.add_argument("--mutation-playouts", type=int, default=None,
                        help="mvbm/mbm/beta: playouts a move of the self-play mutation player (default: --playouts)")
    parser.add_argument("--expansion", choices=("cost", "reach"), default="reach",
                        help="new book: the next node to expand by KataGo's cost or by reach in play")
    parser.add_argument("--play-playouts", type=int, default=0,
                        help="new reach book: the play budget that models the opponent (0: S / 100)")
    parser.add_argument("--opponents", default="",
                        help='new reach book: the opponent population, e.g. "playouts=2500;playouts=10000"')
    parser.add_argument("--seed-salt", type=int, default=0, help="new minimax book: mixed into every expansion's seed")
    parser.add_argument("--reply-temperature", type=float, default=None,
                        help="new reach book: the opponent model's temperature (default: obook's, 0.5)")
    parser.add_argument("--book-options", default="",
                        help="how engine+book plays the book, e.g. book_soft=1000 or book_warm=on (a series of its own)")
    parser.add_argument("--opponent", default="",
                        help="the opponent (B): search options over the plain engine's (reward=score), or a GTP "
                             "command ('gnugo --mode gtp --level 10'); an engine no opponent model used (a series of "
                             "its own)")
    parser.add_argument("--without-book", action="store_true",
                        help="A plays without the book: the baseline of a series against --opponent")
    parser.add_argument("--checkpoints", default="250,1000,2000", help="expansions done at each evaluation")
    parser.add_argument("--games", default="200", help="games per checkpoint (one number, or one per checkpoint)")
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--depth", type=int, default=20,
                        help="self-play books: plies that count in the book (0: no cap, as in the seed)")
    parser.add_argument("--workers", type=int, default=2, help="build processes and games played at once")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--report", action="store_true", help="only print the table of what is recorded")
    parser.add_argument("--plot", type=Path, help="with --curves: draw the learning curves to this image")
    parser.add_argument("--curves", default="", help='panels of series: "komi 7=mvbm3000k7,beta3000k7;komi 7.5=..."; '
                        "a series joins books by +")
    args = parser.parse_args()
    if not args.report:
        from obook.book.kinds import book_kind
        from obook.book.library import BookSettings, ensure_book, open_book_store

        store = open_book_store(args.db, create=True)
        if book_kind(args.algorithm).has_play_budget:
            settings = BookSettings(size=9, komi=args.komi, algorithm=args.algorithm,
                                    search=f"playouts={args.search_playouts}", seconds_per_move=0,
                                    expansion=args.expansion, play_playouts=args.play_playouts,
                                    opponents=args.opponents, seed_salt=args.seed_salt,
                                    reply_temperature=args.reply_temperature)
        else:
            settings = BookSettings(size=9, komi=args.komi, algorithm=args.algorithm, seconds_per_move=0,
                                    search=f"playouts={args.mutation_playouts or args.playouts}",
                                    depth=args.depth)
        ensure_book(store, args.book, settings)
        checkpoints = [int(c) for c in args.checkpoints.split(",")]
        games = [int(g) for g in args.games.split(",")]
        games += [games[-1]] * (len(checkpoints) - len(games))
        for checkpoint, n in zip(checkpoints, games):
            grow(store.url, args.book, checkpoint, args.workers, args.out)
            play(store.url, args.book, checkpoint, args.playouts, n, args.komi, args.workers, args.out,
                 args.book_options, args.opponent, args.without_book)
            series = series_name(args.book, args.book_options, args.opponent, args.without_book)
            for row in report(load(args.out)):  # none when the checkpoint is only built (--games 0)
                if row["book"] == series and row["expansions"] == checkpoint and row["playouts"] == args.playouts:
                    print(json.dumps(row), flush=True)
    for row in report(load(args.out)):
        low, high = row["ci95"]
        print(f"{row['book']}: {row['expansions']} expansions or games, {row['playouts']} playouts a move "
              f"({row['build_minutes']} min of building, "
              f"{row['playouts_millions']} M playouts): "
              f"{100 * row['score']:.1f}% [{100 * low:.1f}, {100 * high:.1f}] over {row['games']} games "
              f"(as Black {100 * (row['as_black'] or 0):.1f}%, as White {100 * (row['as_white'] or 0):.1f}%), "
              + (f"{row['mean_book_moves']:.2f} book moves a game" if row['mean_book_moves'] is not None else "-"))
    for gain in paired_gains(load(args.out)):
        low, high = gain["ci95"]
        print(f"{gain['book']}: {gain['expansions']} expansions, {gain['playouts']} playouts a move, paired on the "
              f"opponent's seeds over {gain['games']} "
              f"games: with the book {100 * gain['with_book']:.1f}%, without {100 * gain['without_book']:.1f}%, "
              f"gain {100 * gain['gain']:+.1f} points [{100 * low:+.1f}, {100 * high:+.1f}]")
    if args.plot:
        plot_curves(report(load(args.out)), args.curves, args.plot)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # Ctrl-C (or SIGTERM in a build): finished games and a stopped build's time are recorded
        print("stopped; run the same command again to continue", file=sys.stderr)
        sys.exit(130)
