"""``obook mines play``, ``bench`` and ``show``: thin front ends over ``obook.mines.player``, ``frontier`` and
``samplers``.

Imports are lazy, inside each command: ``obook --help`` and every command load only what they use.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from obook.errors import ObookError
from obook.mines.engine import BELIEF_MODES, REWARDS
from obook.mines.player import (
    PLAYER_MAX_TRIES,
    PUBLISHED_BEST,
    SOLVERS,
    STANDARD_BSR_UCT,
    STANDARD_FIRST,
    STANDARD_SIMS,
    WARM_UP_SEED,
    Player,
    PlayerConfig,
    play_games,
    summarise,
)
from obook.mines.playouts import POLICIES
from obook.mines.game import (
    PLAYING,
    STANDARD_BOARDS,
    STATUS_NAMES,
    UNKNOWN,
    MinesGame,
    check_board,
    parse_cell,
    parse_size,
)
from obook.mines.frontier import mine_probabilities
from obook.mines.samplers import SAMPLERS, sample_layouts


def register(subparsers) -> None:
    """Add the ``mines`` command and its ``play``, ``bench`` and ``show`` sub-commands."""
    mines = subparsers.add_parser("mines", help="Mines with belief-state sampling and BSR-UCT",
                                  description="Mines (Gnomine rules) played by BSR-UCT.")
    sub = mines.add_subparsers(dest="mines_command", metavar="SUBCOMMAND")
    mines.set_defaults(func=lambda args: _no_subcommand(mines))

    play = sub.add_parser("play", help="play games and print score, win rate and time per move")
    _board_args(play)
    _search_args(play)
    play.add_argument("--games", type=int, default=10, help="number of games (default 10)")
    play.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    play.set_defaults(func=cmd_play)

    bench = sub.add_parser("bench", help="win rate of a solver on a standard board, with its 95%% interval",
                           description="Play seeded games (game i uses seed+i) on a standard board (the first "
                           "click and its 8 neighbours are mine free), and print the win rate, its "
                           "95%% Wilson interval and the think time per game, beside the best published rate.")
    bench.add_argument("--board", default="beginner", choices=list(STANDARD_BOARDS), help="standard board")
    bench.add_argument("--games", type=int, default=100, help="number of games (default 100)")
    bench.add_argument("--solver", default="endgame", choices=list(SOLVERS),
                       help="endgame (default: lookahead, and the exact optimum once at most 400 layouts are "
                       "left), greedy (exact probabilities, least likely cell), lookahead (one click ahead among "
                       "the near-safest cells) or bsr-uct (the strongest search)")
    bench.add_argument("--sims", type=int, default=None,
                       help="bsr-uct: simulations per searched move (default 20000, expert 3000)")
    bench.add_argument("--seed", type=int, default=0, help="seed of the first game (game i uses seed+i)")
    bench.add_argument("--first", default=None, metavar="ROW,COL",
                       help="first click (0-based); default the best known for the rule: 2,2 (beginner, "
                       "intermediate), 3,3 (expert)")
    bench.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    bench.set_defaults(func=cmd_bench)

    show = sub.add_parser("show", help="print a board with the mine probability of every hidden cell")
    _board_args(show)
    _search_args(show)
    show.add_argument("--click", action="append", default=[], metavar="ROW,COL",
                      help="reveal this cell (0-based; repeatable); default: the centre")
    show.add_argument("--moves", type=int, default=0, help="then let BSR-UCT play this many moves")
    show.add_argument("--estimate", choices=list(SAMPLERS), default="exact",
                      help="how to get the probabilities: exact, or the frequency over --samples layouts")
    show.add_argument("--samples", type=int, default=2000, help="layouts drawn by a non-exact --estimate")
    show.add_argument("--reveal", action="store_true", help="also show the hidden mines")
    show.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    show.set_defaults(func=cmd_show)


def _no_subcommand(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _board_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--size", default="4x4",
                   help=f"ROWSxCOLS or one of {', '.join(STANDARD_BOARDS)} (default 4x4)")
    p.add_argument("--mines", type=int, default=None,
                   help="number of mines (default: 6 on 4x4, the standard count on a named board)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first game (game i uses seed+i)")


def _search_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--sampler", default="rejection", choices=list(SAMPLERS), help="belief sampler")
    p.add_argument("--policy", default="uniform", choices=list(POLICIES), help="playout policy")
    p.add_argument("--belief", default="node", choices=list(BELIEF_MODES),
                   help="resample at every tree node (the paper) or once per simulation at the root")
    p.add_argument("--sims", type=int, default=None, help="simulations per move (default 1000)")
    p.add_argument("--seconds", type=float, default=None, help="thinking time per move instead of --sims")
    p.add_argument("--c-uct", type=float, default=1.0, help="exploration constant (1 = the paper)")
    p.add_argument("--first", default="search",
                   help="first click: search, center, corner or ROW,COL (default search)")
    p.add_argument("--shortcut", action="store_true",
                   help="reveal cells the exact belief proves safe without searching")
    p.add_argument("--reward", default="score", choices=list(REWARDS),
                   help="value backed up: final score (the paper) or 1 for a win")
    p.add_argument("--max-tries", type=int, default=PLAYER_MAX_TRIES,
                   help="rejection draws per position before falling back to the exact sampler")
    p.add_argument("--candidates", type=int, default=0,
                   help="search only the K cells least likely to be mines (0 = all)")


def _board(args) -> tuple[int, int, int]:
    p, q = parse_size(args.size)
    n_mines = args.mines
    if n_mines is None:
        if args.size in STANDARD_BOARDS:
            n_mines = STANDARD_BOARDS[args.size][2]
        elif (p, q) == (4, 4):
            n_mines = 6
        else:
            raise ObookError(f"give --mines for a {p}x{q} board")
    check_board(p, q, n_mines)
    return p, q, n_mines


def _config(args, p: int, q: int) -> PlayerConfig:
    if args.sims is not None and args.seconds is not None:
        raise ObookError("give --sims or --seconds, not both")
    sims = args.sims if args.sims is not None or args.seconds is not None else 1000
    if sims is not None and sims < 1:
        raise ObookError(f"--sims {sims} must be at least 1")
    if args.seconds is not None and not args.seconds > 0:
        raise ObookError(f"--seconds {args.seconds} must be positive")
    if args.max_tries < 1:
        raise ObookError(f"--max-tries {args.max_tries} must be at least 1")
    if args.candidates < 0:
        raise ObookError(f"--candidates {args.candidates} must be >= 0")
    first: str | int = args.first
    if first not in ("search", "center", "corner"):
        first = parse_cell(first, p, q)
    return PlayerConfig(sampler=args.sampler, policy=args.policy, belief=args.belief, sims=sims,
                        seconds=args.seconds, c_uct=args.c_uct, first=first, shortcut=args.shortcut,
                        candidates=args.candidates, reward=args.reward, max_tries=args.max_tries)


def _budget_text(cfg: PlayerConfig) -> str:
    return f"{cfg.sims} simulations per move" if cfg.sims is not None else f"{cfg.seconds:g} s per move"


def cmd_play(args) -> int:
    p, q, n_mines = _board(args)
    cfg = _config(args, p, q)
    if args.games < 1:
        raise ObookError(f"--games {args.games} must be at least 1")
    t0 = time.perf_counter()
    records = play_games(p, q, n_mines, cfg, args.games, args.seed)
    wall = time.perf_counter() - t0
    s = summarise(records)
    if args.json:
        out = {"board": {"rows": p, "cols": q, "mines": n_mines}, "config": vars(cfg), "wall_seconds": wall, **s}
        print(json.dumps(out, indent=2))
        return 0
    lo, hi = s["win_rate_ci95"]
    print(f"{p}x{q} board, {n_mines} mines; sampler {cfg.sampler} ({'root' if cfg.belief == 'root' or cfg.sampler == 'exact' else 'node'} "
          f"belief), {cfg.policy} playouts, {_budget_text(cfg)}")
    print(f"games {s['games']}  wins {s['wins']}  win rate {s['win_rate']:.3f} (95% CI {lo:.3f}-{hi:.3f})  "
          f"mean score {s['mean_score']:.4f} ± {s['mean_score_se']:.4f}")
    print(f"moves {s['moves']} (searched {s['searches']}, {s['simulations']} simulations)  "
          f"time per move {1000 * s['seconds_per_move']:.1f} ms  per game {s['seconds_per_game']:.3f} s")
    firsts = ", ".join(f"({int(c) // q},{int(c) % q}) x{k}" for c, k in s["first_clicks"].items())
    print(f"first clicks: {firsts}")
    if s["fallback_searches"]:
        print(f"searches handed to a fallback sampler: {s['fallback_searches']}")
    return 0


def cmd_bench(args) -> int:
    if args.games < 1:
        raise ObookError(f"--games {args.games} must be at least 1")
    if args.sims is not None and args.sims < 1:
        raise ObookError(f"--sims {args.sims} must be at least 1")
    p, q, n_mines = STANDARD_BOARDS[args.board]
    row, col = STANDARD_FIRST[args.board]
    first = parse_cell(args.first, p, q) if args.first is not None else row * q + col
    if args.solver != "bsr-uct":
        cfg = PlayerConfig(solver=args.solver, first=first)
    else:
        cfg = PlayerConfig(sims=args.sims or STANDARD_SIMS[args.board], **{**STANDARD_BSR_UCT, "first": first})
    player = Player(p, q, n_mines, cfg)
    player.play(WARM_UP_SEED)  # load compiled code before the clock starts
    t0 = time.perf_counter()
    s = summarise(play_games(p, q, n_mines, cfg, args.games, args.seed, player))
    wall = time.perf_counter() - t0
    command = (f"obook mines bench --board {args.board} --games {args.games} --solver {args.solver} --seed {args.seed}"
               f" --first {first // q},{first % q}" + (f" --sims {cfg.sims}" if args.solver == "bsr-uct" else ""))
    if args.json:
        print(json.dumps({"board": args.board, "rows": p, "cols": q, "mines": n_mines, "solver": args.solver,
                          "command": command, "config": vars(cfg), "published_best": PUBLISHED_BEST[args.board],
                          "wall_seconds": wall, **s}, indent=2))
        return 0
    lo, hi = s["win_rate_ci95"]
    print(f"{args.board} {p}x{q}/{n_mines}, solver {args.solver}, first click ({first // q},{first % q}), "
          f"seeds {args.seed}..{args.seed + args.games - 1}")
    print(f"games {s['games']}  wins {s['wins']}  win rate {s['win_rate']:.4f} (95% CI {lo:.4f}-{hi:.4f})  "
          f"best published {PUBLISHED_BEST[args.board]:.4f}")
    print(f"time per game {s['seconds_per_game']:.3f} s  per move {1000 * s['seconds_per_move']:.2f} ms  "
          f"mean score {s['mean_score']:.4f} ± {s['mean_score_se']:.4f}")
    if s["fallback_searches"]:
        print(f"moves decided by a fallback (sampled probabilities or another sampler): {s['fallback_searches']}")
    return 0


def cmd_show(args) -> int:
    p, q, n_mines = _board(args)
    if args.moves < 0:
        raise ObookError(f"--moves {args.moves} must be >= 0")
    if args.samples < 1:
        raise ObookError(f"--samples {args.samples} must be at least 1")
    game = MinesGame(p, q, n_mines, seed=args.seed)
    clicks = [parse_cell(c, p, q) for c in args.click] or [(p // 2) * q + q // 2]
    for cell in clicks:
        game.click(cell)
    if args.moves:
        player = Player(p, q, n_mines, _config(args, p, q))
        for move in range(args.moves):
            if game.status != PLAYING:
                break
            cell, _ = player.choose(game, args.seed * 1000 + move)
            game.click(cell)
    prob = None
    if game.status == PLAYING and int((game.obs == UNKNOWN).sum()) > n_mines:
        if args.estimate == "exact":
            prob = mine_probabilities(game.obs, p, q, n_mines)
        else:
            layouts = sample_layouts(game.obs, p, q, n_mines, args.estimate, args.samples,
                                     seed=args.seed, trials=100, burn_in=2000)
            prob = layouts.mean(axis=0)
            prob[game.obs != UNKNOWN] = 0.0
    if args.json:
        print(json.dumps({
            "board": {"rows": p, "cols": q, "mines": n_mines}, "seed": args.seed,
            "clicks": [[c // q, c % q] for c in game.clicks], "status": STATUS_NAMES[game.status],
            "score": game.score,
            "observation": game.obs.reshape(p, q).tolist(),
            "mine_probability": None if prob is None else np.round(prob, 6).reshape(p, q).tolist(),
            "estimate": args.estimate,
        }, indent=2))
        return 0
    print(f"{p}x{q} board, {n_mines} mines, seed {args.seed}: {STATUS_NAMES[game.status]}, "
          f"score {game.score:.3f}, clicks {', '.join(f'({c // q},{c % q})' for c in game.clicks)}")
    if prob is not None:
        how = "exact" if args.estimate == "exact" else f"{args.estimate}, {args.samples} layouts"
        print(f"hidden cells: mine probability in percent ({how}); revealed: count, '.' for 0")
    print(game.render(prob, show_mines=args.reveal))
    return 0
