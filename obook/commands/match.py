"""``obook match A B``: play games between two engines and report A's win rate.

A and B are obook search configurations (``obook:playouts=2000,policy=atari50`` or just the spec)
or GTP command lines (``gtp:/usr/games/gnugo --mode gtp --level 10 --chinese-rules``, or anything
with a space or a slash). The progress bar goes to stderr, so ``--json`` output stays clean. An
obook engine's book (``book=NAME``) that can never be used in the match (another size, komi or engine
version) is refused before any game; how each engine with a book used it is in the summary's ``book``.

Imports are lazy, inside each command: ``obook --help`` and every command load only what they use.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path


def register(subparsers) -> None:
    parser = subparsers.add_parser("match", help="play games between two engines (obook configs or GTP commands)")
    parser.add_argument("a", metavar="A", help="engine A: an obook spec, obook:SPEC, gtp:COMMAND or a command line")
    parser.add_argument("b", metavar="B", help="engine B, in the same forms")
    parser.add_argument("--games", type=int, default=10, help="games to play, colours alternating (default 10)")
    parser.add_argument("--size", type=int, default=9, help="board size (default 9)")
    parser.add_argument("--komi", type=float, default=7.5, help="komi (default 7.5)")
    parser.add_argument("--superko", action="store_true", help="the referee forbids positional superko")
    parser.add_argument("--parallel", type=int, default=1, help="games played at once (two engine processes each)")
    parser.add_argument("--seconds", type=float, default=None,
                        help="seconds per move for both engines (obook: seconds=S; others: time_settings 0 S 1)")
    parser.add_argument("--max-moves", type=int, default=0, help="adjudicate by area after this many moves (default 3*size^2)")
    parser.add_argument("--sgf-dir", default=None, help="where the games are saved (default ./match-DATE-TIME)")
    parser.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from obook.gtp.match import MatchSettings, parse_engine, run_match

    a = parse_engine(args.a, seconds=args.seconds)
    b = parse_engine(args.b, seconds=args.seconds)
    sgf_dir = Path(args.sgf_dir) if args.sgf_dir else Path(f"match-{dt.datetime.now():%Y%m%d-%H%M%S}")
    settings = MatchSettings(games=args.games, size=args.size, komi=args.komi, superko=args.superko,
                             parallel=args.parallel, seconds=args.seconds, max_moves=args.max_moves, sgf_dir=sgf_dir)
    console = Console(stderr=True)
    tally = {"A": 0, "B": 0, "draw": 0}
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=args.json) as progress:
        task = progress.add_task("A 0 - B 0", total=settings.games)

        def on_game(record) -> None:
            tally[record.winner or "draw"] += 1
            played = sum(tally.values())
            rate = (tally["A"] + 0.5 * tally["draw"]) / played
            draws = f", {tally['draw']} draws" if tally["draw"] else ""
            progress.update(task, advance=1, description=f"A {tally['A']} - B {tally['B']}{draws} (A {100 * rate:.0f}%)")
            if record.result.endswith("+F"):
                progress.console.print(f"game {record.index + 1}: {record.reason}: {record.detail}")

        summary, _ = run_match(a, b, settings, on_game=on_game)
    if args.json:
        print(json.dumps(summary.to_dict()))
        return 0
    low, high = summary.ci95
    print(f"A = {summary.a}")
    print(f"B = {summary.b}")
    print(f"{summary.games} games on {settings.size}x{settings.size}, komi {settings.komi:g}: "
          f"A won {summary.a_wins}, B won {summary.b_wins}" + (f", {summary.draws} drawn" if summary.draws else ""))
    print(f"A's win rate {100 * summary.a_score:.1f}% (95% CI {100 * low:.1f}% - {100 * high:.1f}%, Wilson)")
    for label, part in (("Black", summary.a_as_black), ("White", summary.a_as_white)):
        if part["games"]:
            print(f"  A as {label}: {part['wins']}/{part['games']} won" + (f", {part['draws']} drawn" if part["draws"] else ""))
    spm = summary.seconds_per_move
    print(f"average game {summary.average_moves:.1f} moves; seconds per move: "
          f"A {spm['A'] if spm['A'] is not None else '-'}, B {spm['B'] if spm['B'] is not None else '-'}")
    print("endings: " + ", ".join(f"{reason} {count}" for reason, count in sorted(summary.reasons.items())))
    for role in ("A", "B"):
        play = summary.book[role]
        if play is None or not play["games"]:
            continue
        if play["mean_left_at"] is None:
            left = "never left it"
        else:
            left = f"left it at ply {play['mean_left_at']:g} on average"
            if play["never_left"]:
                left += f" (never in {play['never_left']} of {play['games']} games)"
        print(f"{role}'s book {play['book']!r}: {play['mean_book_moves']:g} book moves a game, {left}")
    for item in summary.forfeits:
        print(f"  game {item['game']} forfeited: {item['reason']}: {item['detail']}")
    print(f"games saved in {summary.sgf_dir}")
    return 0
