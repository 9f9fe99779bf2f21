"""``obook playout``: play one random game with a playout policy and show it.

Imports are lazy, inside each command: ``obook --help`` and every command load only what they use.
"""

from __future__ import annotations

import argparse
import json

from obook.errors import ObookError


def register(subparsers) -> None:
    parser = subparsers.add_parser("playout", help="play one seeded random game and print it")
    parser.add_argument("--size", type=int, default=9, help="board size (default 9)")
    parser.add_argument("--policy", default="atari50", help="light, atari50, heavy, heavy-ladder, heavy-moggy or heavy-semeai")
    parser.add_argument("--komi", type=float, default=7.5, help="komi of the result (default 7.5)")
    parser.add_argument("--seed", type=int, default=1, help="random seed: the same seed plays the same game (default 1)")
    parser.add_argument("--moves", default="", help="start from these moves, e.g. 'E5,C3'")
    parser.add_argument("--json", action="store_true", help="print the moves, areas and result as one JSON object")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from obook.go.board import copy_board, new_board
    from obook.go.position import Position
    from obook.playout.policies import POLICY_NAMES, max_playout_moves, new_scratch, run_playout
    from obook.rng import make_rng

    if args.policy not in POLICY_NAMES:
        raise ObookError(f"unknown policy {args.policy!r}; choose from {', '.join(POLICY_NAMES)}")
    position = Position.from_moves(args.moves, size=args.size, komi=args.komi)
    board = new_board(args.size)
    copy_board(board, position.board)
    moves = np.zeros(max_playout_moves(args.size), np.int32)
    _, n, _ = run_playout(board, POLICY_NAMES[args.policy], make_rng(args.seed), new_scratch(board), moves, None, 0,
                          None, 0.0)
    for p in moves[:n]:  # through the Position, which keeps the game record
        if position.is_over:
            break
        position.play(int(p))
    black, white = position.area()
    moves = [position.vertex(p) for _, p in position.moves]
    if args.json:
        print(json.dumps({"moves": moves, "black_area": black, "white_area": white, "result": position.result()}))
        return 0
    print(position.to_ascii())
    print(f"{len(moves)} moves: {' '.join(moves)}")
    print(f"area: Black {black}, White {white}, komi {args.komi} -> {position.result()}")
    return 0
