"""``obook learn shapes`` and ``obook learn move-model``: relearn the search's knowledge from a folder of SGF
games (the 3x3 shape statistics; the move model's feature strengths).

Imports are lazy, inside each command: ``obook --help`` and every command load only what they use.
"""

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
    model = actions.add_parser("move-model", help="fit the move model's feature strengths (obook/search/movemodel.py)")
    model.add_argument("games", help="folder searched recursively for .sgf files")
    model.add_argument("out", help="table to write (.npz), e.g. obook/search/move_model.npz")
    model.add_argument("--hold-out-every", type=int, default=5, metavar="K",
                       help="fit without every K-th game (sorted by path) and report on those (0: fit on all)")
    model.add_argument("--sweeps", type=int, default=30, help="minorization-maximization sweeps (default 30)")
    model.set_defaults(func=learn_move_model)
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


def learn_move_model(args: argparse.Namespace) -> int:
    import numpy as np

    from obook.search.movefit import collect, fit, log_likelihood, rank_accuracy, split_games, spread_patterns
    from obook.search.movemodel import save_log_gamma

    if args.sweeps < 1:
        raise ObookError(f"--sweeps must be at least 1 (got {args.sweeps})")
    if args.hold_out_every < 0 or args.hold_out_every == 1:
        raise ObookError(f"--hold-out-every must be 0 (none) or at least 2 (got {args.hold_out_every})")
    train_paths, held_paths = split_games(args.games, args.hold_out_every)
    if not train_paths:
        raise ObookError(f"no .sgf files under {args.games}")
    train = collect(train_paths)
    if len(train.winner) == 0:
        raise ObookError(f"no moves to learn from in the games under {args.games}")
    log_gamma = fit(train, sweeps=args.sweeps)
    spread = spread_patterns(log_gamma)
    save_log_gamma(args.out, spread)
    print(f"{len(train_paths)} games, {len(train.winner)} moves: log-likelihood a move "
          f"{log_likelihood(np.zeros_like(log_gamma), train):.3f} uniform -> {log_likelihood(log_gamma, train):.3f}")
    if held_paths:
        held = collect(held_paths)
        scores = np.append(log_gamma, 0.0)[held.features].sum(axis=1)
        print(f"held out: {len(held_paths)} games, {len(held.winner)} moves, log-likelihood "
              f"{log_likelihood(log_gamma, held):.3f}, first {rank_accuracy(scores, held, 1):.1%}, "
              f"top 5 {rank_accuracy(scores, held, 5):.1%}")
    print(f"-> {args.out}")
    return 0
