"""What does resigning cost? An oracle on a recorded series (issue 35).

A recorded match (``obook match``, ``benchmarks/minimax_book.py``: one SGF a game, ``game-NNNN.sgf``
for game NNNN - 1, engine A Black in even games) holds the games engine A resigned. Each is played
on from the position where A resigned, with A's resignation off and the same opponent (a
``{game}`` in its command line is the game's number, so GNU Go plays on with the game's seed): the
games A then wins are the most that resigning cost it in that series. An upper bound, not the
effect of another threshold: the replay starts A with an empty tree, and GNU Go's random state is
not where it was.

    python benchmarks/resign_oracle.py docs/book-results/minimax/b025t2-2500-nobook-vs-...-p5000 \\
        --engine "playouts=5000,resign_threshold=0" \\
        --opponent "gtp:/usr/games/gnugo --mode gtp --level 10 --chinese-rules --seed {game}"
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from obook.go.sgf import read_sgf
from obook.gtp.match import MatchSettings, Opening, parse_engine, run_match
from obook.stats import wilson_interval

GAME_FILE = re.compile(r"game-(\d+)\.sgf$")


def resigned_by_a(folder: Path) -> dict[int, Opening]:
    """The games of the series under ``folder`` (searched recursively) that engine A lost by
    resignation: game number -> its moves."""
    out = {}
    for path in sorted(folder.rglob("game-*.sgf")):
        match = GAME_FILE.search(path.name)
        if match is None:
            continue
        index = int(match.group(1)) - 1
        record = read_sgf(path)
        a_letter = "B" if index % 2 == 0 else "W"
        if record.result.upper().endswith("+R") and not record.result.upper().startswith(a_letter):
            out[index] = tuple(record.position.moves)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("series", type=Path, help="the folder of the series' SGFs")
    parser.add_argument("--engine", default="playouts=5000,resign_threshold=0", help="engine A, resigning never")
    parser.add_argument("--opponent", default="gtp:/usr/games/gnugo --mode gtp --level 10 --chinese-rules --seed {game}")
    parser.add_argument("--games", type=int, default=None, help="replay only the first N resigned games")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--sgf-dir", type=Path, default=None, help="where the replayed games go")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    if not args.series.is_dir():
        parser.error(f"{args.series} is not a folder")
    games = sum(1 for _ in args.series.rglob("game-*.sgf"))
    openings = resigned_by_a(args.series)
    if args.games is not None:
        openings = dict(sorted(openings.items())[: args.games])
    if not openings:
        parser.error(f"no game of {args.series} was lost by engine A's resignation")
    settings = MatchSettings(games=len(openings), parallel=args.parallel, sgf_dir=args.sgf_dir)
    _, records = run_match(parse_engine(args.engine), parse_engine(args.opponent), settings, openings=openings)
    turned = sum(r.winner == "A" for r in records)
    low, high = wilson_interval(turned, len(records))
    summary = {"series": str(args.series), "games": games, "resigned_by_a": len(records), "won_played_on": turned,
               "share": turned / len(records), "interval": [low, high],
               "most_resigning_cost_points": 100 * turned / games,
               "resigned_at_move": sum(len(openings[r.index]) for r in records) / len(records)}
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"{args.series}: {games} games, {len(records)} resigned by A (at move "
              f"{summary['resigned_at_move']:.1f} on average); played on with {args.engine}: {turned} won, "
              f"{100 * turned / len(records):.1f}% [{100 * low:.1f}, {100 * high:.1f}]; resigning cost A at most "
              f"{summary['most_resigning_cost_points']:.2f} points of win rate in this series")
    return 0


if __name__ == "__main__":
    sys.exit(main())
