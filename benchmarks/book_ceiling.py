"""The ceiling of any opening book (issue 15, item 4): how much can a book give at a play budget?

A book can at best play, in the positions it covers, the move a far deeper search would play. So
engine A is the plain engine at P playouts a move, except that its first k own moves of each game are
searched with 100 x P playouts (``benchmarks/opening_player.py --moves k --factor 100``: each deep
move in a tree of its own, dropped afterwards, as when a book player leaves its book).
Engine B is the plain engine at P, or with ``--opponent`` another engine: a GTP command (``"gtp:/usr/games/gnugo
--mode gtp --level 10 --chinese-rules --seed {game}"``: game i of every cell meets GNU Go on seed i,
so ``--moves 0 6`` gives the plain engine's score and the ceiling's on the same seeds), and A's
score minus the k = 0 cell's is then the most a book of depth k could add against it (``--report``:
``paired_gain``, game by game on the same seeds, with its 95% interval). Colours alternate; 9x9, komi 7.5, area scoring, ``obook match``'s
referee and clean-up phase. A's score minus 50% is the most a book of depth k could add at budget P.

Run by hand (hours at P >= 300 on 2 cores):
``python benchmarks/book_ceiling.py --playouts 100 300 --moves 3 6 10 --games 400 --parallel 2``.
Every finished game is appended to ``--out`` (JSON lines, with the full configuration of both
engines and the game's SGF saved under ``--out``'s name), so an interrupted run continues where it
stopped; ``--report`` only prints the table of what is recorded. Deep searches of a position seen
before are taken from a cache next to ``--out`` (``opening_player.py --cache``): at P of thousands
(issue 32's gate: P = the playouts 0.25 s gives) they are most of the cost, and the opening repeats.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path

from obook.gtp.match import EngineSpec, MatchSettings, parse_engine, run_match
from obook.search.config import SearchConfig
from obook.stats import game_points, paired_difference, wilson_interval

DEFAULT_OUT = Path("docs/book-results/ceiling.jsonl")
OPENING_PLAYER = Path(__file__).resolve().with_name("opening_player.py")


def deep_engine(plain: str, moves: int, factor: float, cache: Path | None = None) -> EngineSpec:
    """Engine A: the plain engine ``plain`` whose first ``moves`` own moves search ``factor`` times
    its budget (``opening_player.py`` as a GTP engine)."""
    config = SearchConfig.from_spec(plain)
    argv = [sys.executable, str(OPENING_PLAYER), "--config", config.to_spec(), "--moves", str(moves),
            "--factor", f"{factor:g}", *(["--cache", str(cache)] if cache else [])]
    return EngineSpec(label=f"obook:{plain} (first {moves} own moves x{factor:g})", argv=argv, config=config)


def load(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def cell_key(row: dict) -> tuple:
    """A cell of the table: the budget, the deep moves, their factor and the opponent ("" for the
    plain engine at the same budget, as in the rows written before opponents were recorded)."""
    return row["playouts"], row["moves"], row["factor"], row.get("opponent", "")


def run_cell(playouts: int, moves: int, factor: float, games: int, parallel: int, out: Path, base: str,
             opponent: str = "") -> None:
    done = sum(1 for r in load(out) if cell_key(r) == (playouts, moves, factor, opponent))
    if done >= games:
        return
    plain = ",".join(filter(None, [base, f"playouts={playouts}"]))
    a = deep_engine(plain, moves, factor, out.with_suffix(".deep-moves.sqlite"))
    b = parse_engine(opponent if opponent else f"obook:{plain}")
    against = f"-vs-{re.sub(r'[^A-Za-z0-9.]+', '', opponent)}" if opponent else ""
    sgf_dir = out.with_suffix("") / f"P{playouts}-k{moves}-x{factor:g}{against}" / f"from-{done:04d}"
    settings = MatchSettings(games=games - done, size=9, komi=7.5, parallel=parallel, sgf_dir=sgf_dir,
                             first_game=done)
    sgf_dir.mkdir(parents=True, exist_ok=True)
    engine = dataclasses.asdict(a.config)  # the plain engine A deepens (and B is, unless --opponent)
    print(f"P={playouts} k={moves} factor={factor:g}{' vs ' + opponent if opponent else ''}: {done} games recorded, playing {games - done}",
          file=sys.stderr, flush=True)

    def record(game) -> None:
        row = {"playouts": playouts, "moves": moves, "factor": factor, "game": game.index,
               "a_color": game.a_color, "winner": game.winner, "result": game.result, "reason": game.reason,
               "moves_played": game.moves, "seconds": game.seconds, "sgf": game.sgf, "engine": engine,
               **({"opponent": opponent} if opponent else {})}
        with out.open("a") as handle:
            handle.write(json.dumps(row) + "\n")

    run_match(a, b, settings, on_game=record)


def by_cell(rows: list[dict]) -> dict[tuple, list[dict]]:
    """The recorded games of each cell (``cell_key``)."""
    cells: dict[tuple, list[dict]] = {}
    for row in rows:
        cells.setdefault(cell_key(row), []).append(row)
    return cells


def report(rows: list[dict]) -> list[dict]:
    cells = by_cell(rows)
    table = []
    for (playouts, moves, factor, opponent), games in sorted(cells.items(), key=lambda cell: (cell[0][3], cell[0])):
        n = len(games)
        points = sum(game_points(g["winner"]) for g in games)
        low, high = wilson_interval(points, n)
        black = [g for g in games if g["a_color"] == "B"]
        table.append({
            "playouts": playouts, "moves": moves, "factor": factor, **({"opponent": opponent} if opponent else {}),
            "games": n,
            "a_score": round(points / n, 4), "ci95": [round(low, 4), round(high, 4)],
            "a_as_black": round(sum(g["winner"] == "A" for g in black) / len(black), 4) if black else None,
            "a_as_white": round(sum(g["winner"] == "A" for g in games if g["a_color"] == "W")
                                / max(1, n - len(black)), 4),
            "seconds_a_per_game": round(sum(g["seconds"]["A"] for g in games) / n, 2),
            "seconds_b_per_game": round(sum(g["seconds"]["B"] for g in games) / n, 2),
            **paired_gain(games, cells.get((playouts, 0, factor, opponent), []) if moves and "{game}" in opponent else []),
        })
    return table


def paired_gain(deep: list[dict], plain: list[dict]) -> dict:
    """A deep cell's gain over the k = 0 cell on the same opponent seeds (game i of both met the
    opponent on seed i, with the same colours), with its 95% interval: {} without common games.
    A game number whose colours differ between the two is left out: it met another game of the
    opponent's."""
    plain_games = {g["game"]: g for g in plain}
    common = [g for g in deep if g["game"] in plain_games and plain_games[g["game"]]["a_color"] == g["a_color"]]
    plain_points = {n: game_points(g["winner"]) for n, g in plain_games.items()}
    if not common:
        return {}
    gain, low, high = paired_difference([game_points(g["winner"]) for g in common], [plain_points[g["game"]] for g in common])
    return {"paired_games": len(common), "paired_gain": round(gain, 4), "paired_ci95": [round(low, 4), round(high, 4)]}


def pair_with_books(rows: list[dict], book_rows: list[dict]) -> list[dict]:
    """Every series of ``benchmarks/minimax_book.py``'s ``--out`` (engine+book, or its ``[no book]``
    baseline) paired with every cell here that met the same seeded opponent at the same budget: the
    book's score minus the cell's, game by game on the same seeds, with its 95% interval. Against
    the k = 0 cell it is the book's gain measured by the other harness's plain engine (and the two
    plain engines' difference is the noise between harnesses); against a deep cell it is how far
    the book is from that ceiling."""
    from minimax_book import series_opponent

    series: dict[tuple, list[dict]] = {}
    for r in book_rows:
        opponent = series_opponent(r["book"]) if r.get("kind") == "game" else ""
        if "{game}" in opponent:
            series.setdefault((r["book"], r["checkpoint"], r["playouts"], opponent), []).append(r)
    cells = sorted(by_cell(rows).items())
    pairs = []
    for (book, checkpoint, playouts, opponent), games in sorted(series.items()):
        for (cell_playouts, moves, factor, cell_opponent), cell in cells:
            gain = paired_gain(games, cell) if (cell_playouts, cell_opponent) == (playouts, opponent) else {}
            if gain:
                pairs.append({"book": book, "expansions": checkpoint, "playouts": playouts, "moves": moves,
                              "factor": factor, **gain})
    return pairs


def opponent_label(opponent: str) -> str:
    """A GTP command shortened for a legend: the program's name and its level, if given."""
    words = opponent.removeprefix("gtp:").split()
    level = next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "--level"), None)
    return Path(words[0]).name + (f" level {level}" if level else "") if words else opponent


def plot(table: list[dict], path: Path) -> None:
    """A's score against the deep own moves k, one line per play budget P."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.6, 4.4))
    for playouts, opponent in sorted({(r["playouts"], r.get("opponent", "")) for r in table}):
        cells = sorted((r for r in table if (r["playouts"], r.get("opponent", "")) == (playouts, opponent)),
                       key=lambda r: r["moves"])
        xs = [r["moves"] for r in cells]
        ys = [100 * r["a_score"] for r in cells]
        err = [[100 * (r["a_score"] - r["ci95"][0]) for r in cells], [100 * (r["ci95"][1] - r["a_score"]) for r in cells]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=f"P = {playouts}, deep = {cells[0]['factor']:g} P" + (f" vs {opponent_label(opponent)}" if opponent else ""))
    ax.axhline(50, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("own moves searched deep (k)")
    ax.set_ylabel("A's score against B, % (95%)")
    ax.set_title("The ceiling of a book (9x9, komi 7.5)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), fontsize=7, ncol=2, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--playouts", type=int, nargs="+", default=[100, 300], help="play budgets P")
    parser.add_argument("--moves", type=int, nargs="+", default=[3, 6, 10], help="deep own moves k")
    parser.add_argument("--factor", type=float, default=30.0, help="deep budget = factor x P (issue 15 used 100)")
    parser.add_argument("--games", type=int, default=400, help="games per (P, k)")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--config", default="", help="search options of both engines besides playouts")
    parser.add_argument("--opponent", default="",
                        help='B, if not the plain engine: a GTP command ("gtp:gnugo --mode gtp --level 10 --seed {game}")')
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--report", action="store_true", help="only print the table of recorded games")
    parser.add_argument("--plot", type=Path, help="also draw the table to this image")
    parser.add_argument("--pair-with", type=Path, metavar="JSONL",
                        help="also pair each series of this benchmarks/minimax_book.py --out with the cells "
                             "that met the same seeded opponent (the book against the ceiling and the plain engine)")
    args = parser.parse_args()
    if not args.report:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        for playouts in args.playouts:
            for moves in args.moves:
                run_cell(playouts, moves, args.factor, args.games, args.parallel, args.out, args.config, args.opponent)
    table = report(load(args.out))
    for line in table:
        print(json.dumps(line))
    if args.plot:
        plot(table, args.plot)
    if args.pair_with:
        for line in pair_with_books(load(args.out), load(args.pair_with)):
            print(json.dumps({"pair": line}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
