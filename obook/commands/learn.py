"""``obook learn shapes``: relearn the search's 3x3 shape statistics from a folder of SGF games."""

from __future__ import annotations

import argparse
from pathlib import Path

from obook.errors import ObookError


def register(subparsers) -> None:
    parser = subparsers.add_parser("learn", help="learn the search's knowledge from SGF games")
    actions = parser.add_subparsers(dest="learn_action", metavar="WHAT")
    shapes = actions.add_parser("shapes", help="count how often each 3x3 shape is played (obook/search/shapes.py)")
    shapes.add_argument("games", help="folder searched recursively for .sgf files")
    shapes.add_argument("out", help="counts file to write (.npz), e.g. obook/search/shape_counts.npz")
    shapes.set_defaults(func=learn_shapes)
    parser.set_defaults(func=lambda _args: parser.print_help() or 2)


def learn_shapes(args: argparse.Namespace) -> int:
    from obook.search.shapes import learn_shape_counts, save_counts

    paths = sorted(Path(args.games).rglob("*.sgf"))
    if not paths:
        raise ObookError(f"no .sgf files under {args.games}")
    chosen, available = learn_shape_counts(paths)
    save_counts(args.out, chosen, available)
    print(f"{len(paths)} games, {int(chosen.sum())} moves, {int((available > 0).sum())} shapes -> {args.out}")
    return 0
