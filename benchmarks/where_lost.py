"""Where lost games turn: every position of a lost game where obook was to move, valued again by a
deeper search, so that the move after which obook's chances fell most can be found and looked at.

    python benchmarks/where_lost.py SGF_DIR [--playouts 20000] [--workers 2] [--out FILE]
    python benchmarks/where_lost.py --report [--out FILE]

SGF_DIR holds the saved games of a match (``obook match``'s or ``benchmarks/minimax_book.py``'s:
``PB``/``PW`` name obook as ``obook ...``); every game obook lost is read. For each position before
one of obook's moves, a search of ``--playouts`` simulations (the defaults, seed 1, a fresh tree each
time) gives obook's win rate there, the move it prefers and the win rate it gives the move obook
played in the game (when that move was searched). One JSON line per position goes to ``--out``
(a run continues where it stopped); ``--report`` prints, per game, the turn: the obook move after
which the deeper search's win rate fell most by obook's next turn (the drop includes the
opponent's reply), its move number, whether the deeper search preferred another move there, and
the distribution of those turns over the game. The deeper search is the same engine with more
playouts, so it finds the moves more search would have avoided, not the blind spots the engine has
at any budget; a turn it does not see (no drop) points at those.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import sys
from pathlib import Path


def lost_games(sgf_dir: Path) -> list[tuple[Path, str]]:
    """(path, obook's colour 'B' or 'W') of every game in ``sgf_dir`` obook lost."""
    from obook.go.sgf import read_sgf

    games = []
    for path in sorted(sgf_dir.rglob("*.sgf")):
        record = read_sgf(path, moves=0)
        colour = "B" if record.black.lower().startswith("obook") else "W"
        if record.result[:1] in ("B", "W") and record.result[:1] != colour:
            games.append((path, colour))
    return games


def _value_positions(task: tuple[str, str, int]) -> list[dict]:
    from obook.go.board import BLACK, PASS
    from obook.go.position import Position
    from obook.go.sgf import read_sgf
    from obook.search.config import SearchConfig
    from obook.search.players import make_player

    path, colour, playouts = task
    game = read_sgf(path).position
    position = Position(size=game.size, komi=game.komi)
    player = make_player(SearchConfig.from_spec("seed=1", processes=1))
    rows = []
    passes = 0
    for k, (color, played) in enumerate(game.moves):
        if passes >= 2:
            break  # the clean-up phase after the game's end
        if ("B" if color == BLACK else "W") == colour:
            player.new_game()
            result = player.genmove(position, playouts=playouts)
            played_stats = next((m for m in result.moves if m.point == played), None)
            rows.append({
                "game": str(path), "colour": colour, "move_number": k + 1,
                "winrate": round(result.winrate, 4),
                "search_move": position.vertex(result.move), "played": position.vertex(played),
                "played_winrate": round(played_stats.winrate, 4) if played_stats else None,
                "played_visits": int(played_stats.visits) if played_stats else 0,
                "playouts": playouts,
            })
        position.play(played, color)
        passes = passes + 1 if played == PASS else 0
    player.close()
    return rows


def report(rows: list[dict]) -> None:
    by_game: dict[str, list[dict]] = {}
    for row in rows:
        by_game.setdefault(row["game"], []).append(row)
    turns = []
    for game, positions in sorted(by_game.items()):
        positions.sort(key=lambda r: r["move_number"])
        best = None
        for before, after in zip(positions, positions[1:]):
            drop = before["winrate"] - after["winrate"]
            if best is None or drop > best[0]:
                best = (drop, before, after)
        if best is None:
            continue
        drop, before, after = best
        turns.append(best)
        other = before["search_move"] != before["played"]
        print(f"{Path(game).parent.name}/{Path(game).name} ({before['colour']}): move {before['move_number']} "
              f"{before['played']}, win rate {before['winrate']:.2f} -> {after['winrate']:.2f} by move "
              f"{after['move_number']}" + (f"; deeper search preferred {before['search_move']}"
                                             f" (played move {before['played_winrate']})" if other else ""))
    if not turns:
        print("no games")
        return
    numbers = [t[1]["move_number"] for t in turns]
    drops = [t[0] for t in turns]
    preferred_other = sum(t[1]["search_move"] != t[1]["played"] for t in turns)
    quartiles = statistics.quantiles(numbers, n=4) if len(numbers) > 1 else numbers * 3
    print(f"\n{len(turns)} lost games; the turn at move {statistics.median(numbers)} (median; quartiles "
          f"{quartiles[0]}, {quartiles[2]}), its drop {statistics.median(drops):.2f} (median)")
    print(f"the deeper search preferred another move at the turn in {preferred_other} of {len(turns)}")
    for lo, hi in ((1, 10), (11, 20), (21, 30), (31, 40), (41, 60), (61, 200)):
        n = sum(lo <= m <= hi for m in numbers)
        print(f"  turn at moves {lo}-{hi}: {n}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sgf_dir", type=Path, nargs="?", help="the match's SGF folder (not needed with --report)")
    parser.add_argument("--playouts", type=int, default=20000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", type=Path, default=Path("docs/where-lost/positions.jsonl"))
    parser.add_argument("--report", action="store_true", help="print the turns of what --out holds")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.out.read_text().splitlines()] if args.out.exists() else []
    if not args.report:
        if args.sgf_dir is None or not args.sgf_dir.is_dir():
            print(f"error: {args.sgf_dir or 'no folder given'}: give the folder of the match's SGF files",
                  file=sys.stderr)
            return 2
        done = {row["game"] for row in rows}
        tasks = [(str(p), colour, args.playouts) for p, colour in lost_games(args.sgf_dir) if str(p) not in done]
        print(f"{len(tasks)} lost games to value ({len(done)} done)", file=sys.stderr)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with multiprocessing.get_context("spawn").Pool(args.workers) as pool, args.out.open("a") as out:
            for game_rows in pool.imap_unordered(_value_positions, tasks):
                for row in game_rows:
                    out.write(json.dumps(row) + "\n")
                out.flush()
                rows.extend(game_rows)
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
