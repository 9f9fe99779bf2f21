"""``obook gtp``: play and analyse through the Go Text Protocol (GoGui, Sabaki, match runners).

Commands come on stdin and answers go to stdout; everything else (search summaries, warnings) goes
to stderr, which GUIs show in their log window.

Imports are lazy, inside each command: ``obook --help`` and every command load only what they use.
"""

from __future__ import annotations

import argparse
import os
import sys

from obook.book.minimax import DEFAULT_PLAY_CHOICE, PLAY_CHOICES


def register(subparsers) -> None:
    parser = subparsers.add_parser("gtp", help="run as a GTP engine on stdin/stdout")
    parser.add_argument("--config", default="", help="search options, e.g. 'playouts=2000,policy=atari50'")
    parser.add_argument("--size", type=int, default=9, help="initial board size (GTP boardsize changes it)")
    parser.add_argument("--komi", type=float, default=7.5, help="initial komi (GTP komi changes it)")
    parser.add_argument("--superko", action="store_true", help="forbid positional superko (simple ko is always forbidden)")
    parser.add_argument("--ownership-playouts", type=int, default=1000,
                        help="playouts behind final_score and final_status_list")
    parser.add_argument("--book", default=None, metavar="NAME",
                        help="play the book's usage-rule move while the position is in this book")
    parser.add_argument("--book-db", default=None, metavar="URL", help="the book's store (default OBOOK_DATABASE_URL)")
    parser.add_argument("--book-min-games", type=int, default=1,
                        help="leave the book when its move has fewer games than this")
    parser.add_argument("--book-soft", type=float, default=0.0, metavar="VISITS",
                        help="minimax book: give the search each book move's value as VISITS prior visits "
                             "instead of playing book moves (0: play them)")
    parser.add_argument("--book-own-moves", choices=("on", "off"), default="on",
                        help="minimax book: where a node has no book move to play, play its own deep search's "
                             "best move outside the book (on, the default) instead of searching at the play budget")
    parser.add_argument("--book-choice", choices=PLAY_CHOICES, default=DEFAULT_PLAY_CHOICE,
                        help="minimax book: play the book move with the best backed-up value (value), or the move "
                             "its deep searches visited most (search; out of the book when that move is not in it)")
    parser.add_argument("--book-warm", choices=("on", "off"), default="off",
                        help="on a book move, spend the move's budget searching the position after it, so that "
                             "the search leaves the book with a tree as warm as an opponent's that reuses its own")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from obook.errors import ObookError
    from obook.go.board import MIN_SIZE
    from obook.gtp.engine import MAX_BOARD_SIZE, GTPEngine

    if not MIN_SIZE <= args.size <= MAX_BOARD_SIZE:
        raise ObookError(f"--size {args.size} is outside {MIN_SIZE}..{MAX_BOARD_SIZE}")
    if args.ownership_playouts < 1:
        raise ObookError("--ownership-playouts must be at least 1")
    if args.book:  # a missing book, or one of another engine version, is refused before anything starts
        from obook.book.library import open_book_store, open_keyed_book

        open_keyed_book(open_book_store(args.book_db), args.book, "play from it")
    from obook.search.config import SearchConfig
    from obook.search.warmup import warm_up_in_background

    # A GUI that starts the engine sees nothing for a minute when it compiles: say so on stderr (its
    # log window) and compile beside the GTP loop, which answers the commands that need no search.
    config = SearchConfig.from_spec(args.config)
    warm_up_in_background((config.policy,), algorithm=config.algorithm)
    player = None
    if args.book:
        from obook.book.player import BookPlayer
        from obook.search.config import SearchConfig
        from obook.search.players import make_player

        player = BookPlayer(make_player(SearchConfig.from_spec(args.config)), args.book_db, args.book,
                            min_games=args.book_min_games, soft_visits=args.book_soft,
                            own_moves=args.book_own_moves == "on", warm=args.book_warm == "on",
                            choice=args.book_choice)
    engine = GTPEngine(args.config, size=args.size, komi=args.komi, superko=args.superko,
                       ownership_playouts=args.ownership_playouts, player=player)
    sys.stdout.reconfigure(encoding="utf-8", errors="replace", newline="\n")
    engine.run(input_lines(sys.stdin.fileno()), sys.stdout)
    return 0


def input_lines(fd: int, chunk: int = 65536):
    """Lines of the file descriptor ``fd``, read with ``os.read``: the engine reads its input in a
    daemon thread, and a thread blocked inside a buffered ``sys.stdin`` read makes the interpreter
    abort at exit ("could not acquire lock ... at interpreter shutdown")."""
    pending = b""
    while True:
        data = os.read(fd, chunk)
        if not data:
            break
        pending += data
        *lines, pending = pending.split(b"\n")
        for line in lines:
            yield line.decode("utf-8", errors="replace") + "\n"
    if pending:
        yield pending.decode("utf-8", errors="replace")
