"""``obook analysis``: KataGo's JSON analysis protocol on stdin/stdout (``obook.analysis.engine``).

Queries come one JSON object a line on stdin and responses go one a line to stdout; warnings about
the engine itself (compiling, a search that failed) go to stderr.

Imports are lazy, inside each command: ``obook --help`` and every command load only what they use.
"""

from __future__ import annotations

import argparse
import sys


def register(subparsers) -> None:
    parser = subparsers.add_parser("analysis", help="run as a KataGo-style JSON analysis engine on stdin/stdout")
    parser.add_argument("--config", default="", help="search options, e.g. 'policy=heavy'")
    parser.add_argument("--max-visits", type=int, default=500,
                        help="visits of a query that gives no maxVisits (KataGo's example configuration: 500)")
    parser.add_argument("--report-as", choices=("BLACK", "WHITE", "SIDETOMOVE"), default="BLACK",
                        type=str.upper, help="reportAnalysisWinratesAs: whose win rates and scores are reported")
    parser.add_argument("--ownership-playouts", type=int, default=1000,
                        help="playouts behind includeOwnership's ownership")
    parser.add_argument("--book", default=None, metavar="NAME",
                        help="in this book's positions, report the book's moves and values")
    parser.add_argument("--book-db", "--db", dest="book_db", default=None, metavar="URL",
                        help="the book's store (default OBOOK_DATABASE_URL)")
    parser.add_argument("--book-min-games", type=int, default=1,
                        help="statistical book: leave out moves with fewer games than this")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from obook.analysis.engine import AnalysisEngine
    from obook.commands.gtp import input_lines
    from obook.errors import ObookError
    from obook.search.config import SearchConfig
    from obook.search.players import make_player

    if args.max_visits < 1:
        raise ObookError("--max-visits must be at least 1")
    if args.ownership_playouts < 1:
        raise ObookError("--ownership-playouts must be at least 1")
    from obook.search.warmup import warm_up_in_background

    config = SearchConfig.from_spec(args.config)
    # The first search waits for the compile: say so on stderr, compiling while queries are read.
    warm_up_in_background((config.policy,), algorithm=config.algorithm)
    player = make_player(config)
    book = None
    if args.book:  # a missing book, or one of another engine version, is refused before anything starts
        from obook.book.player import BookPlayer

        book = BookPlayer(player, args.book_db, args.book, min_games=args.book_min_games)
    sys.stdout.reconfigure(encoding="utf-8", errors="replace", newline="\n")
    engine = AnalysisEngine(player, sys.stdout, book=book, max_visits=args.max_visits, report_as=args.report_as,
                            ownership_playouts=args.ownership_playouts)
    try:
        engine.serve(input_lines(sys.stdin.fileno()))
    finally:
        player.close()
    return 0
