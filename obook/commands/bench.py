"""``obook bench``: speed figures of the engine (run by hand, never in the tests).

Imports are lazy, inside each command: ``obook --help`` and every command load only what they use.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from obook.errors import ObookError


def register(subparsers) -> None:
    bench = subparsers.add_parser("bench", help="measure engine speed")
    kinds = bench.add_subparsers(dest="bench_kind", metavar="KIND")
    playouts = kinds.add_parser("playouts", help="random playouts per second on one core")
    playouts.add_argument("--size", type=int, default=9, help="board size (default 9)")
    playouts.add_argument("--policy", default="light", help="light, atari50, heavy, heavy-ladder, heavy-moggy or heavy-semeai")
    playouts.add_argument("--seconds", type=float, default=5.0, help="how long to measure (default 5)")
    playouts.add_argument("--komi", type=float, default=7.5, help="komi of the playouts' scores (default 7.5)")
    playouts.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    playouts.add_argument("--json", action="store_true", help="print one JSON object")
    playouts.set_defaults(func=run_playouts)
    search = kinds.add_parser("search", help="MCTS simulations per second against the raw playout rate")
    search.add_argument("--size", type=int, default=9, help="board size (default 9)")
    search.add_argument("--config", default="", help="search options, e.g. 'policy=light,rave=off'")
    search.add_argument("--seconds", type=float, default=5.0,
                        help="length of each of the two searches (a fresh player's, then in play) and of the "
                             "raw playouts measured beside them (default 5)")
    search.add_argument("--json", action="store_true", help="print one JSON object")
    search.set_defaults(func=run_search)
    startup = kinds.add_parser("startup", help="obook warm-up's time with an empty and then a warm numba cache")
    startup.add_argument("--json", action="store_true", help="print one JSON object")
    startup.set_defaults(func=run_startup)
    bench.set_defaults(func=lambda args: bench.print_help() or 2)


def measure_playouts(size: int, policy_name: str, seconds: float, komi: float, seed: int) -> dict:
    """Run playouts from the empty board in batches for about ``seconds``; all inside numba."""
    started = time.perf_counter()
    from obook.go.board import MIN_SIZE, new_board
    from obook.go.zobrist import MAX_SIZE
    from obook.playout.policies import POLICY_NAMES, new_scratch, playout_batch, policy_code
    from obook.rng import make_rng

    if policy_name not in POLICY_NAMES:
        raise ObookError(f"unknown policy {policy_name!r}; choose from {', '.join(POLICY_NAMES)}")
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ObookError(f"board size {size} is outside {MIN_SIZE}..{MAX_SIZE}")
    if seconds <= 0:
        raise ObookError("--seconds must be positive")
    policy = policy_code(policy_name)
    start, work = new_board(size), new_board(size)
    scratch = new_scratch(start)
    rng = make_rng(seed)
    playout_batch(start, work, policy, rng, komi, scratch, 1)
    ready = time.perf_counter() - started
    playouts = wins = moves = 0
    batch = 256
    t0 = time.perf_counter()
    while True:
        w, m, _ = playout_batch(start, work, policy, rng, komi, scratch, batch)
        playouts += batch
        wins += w
        moves += m
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            break
        batch = max(256, min(batch * 2, int(playouts / elapsed * 0.5)))
    return {
        "size": size,
        "policy": policy_name,
        "komi": komi,
        "seconds": round(elapsed, 3),
        "playouts": playouts,
        "playouts_per_second": round(playouts / elapsed, 1),
        "moves_per_playout": round(moves / playouts, 2),
        "moves_per_second": round(moves / elapsed, 1),
        "black_win_rate": round(wins / playouts, 4),
        "engine_ready_seconds": round(ready, 3),
    }


def run_playouts(args: argparse.Namespace) -> int:
    result = measure_playouts(args.size, args.policy, args.seconds, args.komi, args.seed)
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"{result['policy']} playouts, {result['size']}x{result['size']}, komi {result['komi']}, one core: "
            f"{result['playouts_per_second']:,.0f} playouts/s, {result['moves_per_playout']} moves/playout, "
            f"Black wins {100 * result['black_win_rate']:.1f}% "
            f"({result['playouts']:,} playouts in {result['seconds']} s; engine ready in {result['engine_ready_seconds']} s)"
        )
    return 0


def run_search(args: argparse.Namespace) -> int:
    """Two searches from the empty board for ``--seconds`` each on one core, each followed by half
    as long of raw playouts of the same policy (the raw rate is their mean, so that a machine whose
    speed drifts during the run moves both figures alike): the tree's overhead is the gap. The
    first search is a fresh player's: the kernel zeroes each page of its preallocated tree on first
    touch (about 5% of a 5-second search). The second, after ``new_game`` on the same player, finds
    those pages mapped, as a player does from its second move of a game on: the headline figure is
    that one, the fresh one is printed beside it. The rate per second of this process's CPU time is
    given beside the rate per wall second: on a shared machine the CPU rate hardly moves with the
    others' load."""
    from obook.go.position import Position
    from obook.search.config import SearchConfig
    from obook.search.players import make_player

    config = SearchConfig.from_spec(args.config, processes=1, seed=1, max_nodes=4_000_000)
    if args.seconds <= 0:
        raise ObookError("--seconds must be positive")
    position = Position(size=args.size, komi=7.5)
    player = make_player(config)
    player.genmove(position, playouts=200)  # compile or load before timing
    runs, raws = [], []
    for _ in ("fresh", "in_play"):
        player.new_game()
        cpu = time.process_time()
        result = player.genmove(position, seconds=args.seconds)
        runs.append((result, time.process_time() - cpu))
        raws.append(measure_playouts(args.size, config.policy, args.seconds / 2, 7.5, 1)["playouts_per_second"])
    (fresh, _), (result, cpu) = runs
    raw = sum(raws) / len(raws)
    rate = result.playouts / result.seconds
    fresh_rate = fresh.playouts / fresh.seconds
    figures = {
        "size": args.size,
        "config": config.to_spec(),
        "policy": config.policy,
        "simulations": result.playouts,
        "simulations_per_second": round(rate, 1),
        "simulations_per_cpu_second": round(result.playouts / cpu, 1),
        "fresh_simulations_per_second": round(fresh_rate, 1),
        "raw_playouts_per_second": round(raw, 1),
        "ratio_to_raw": round(rate / raw, 3),
        "fresh_ratio_to_raw": round(fresh_rate / raw, 3),
        "tree_nodes": result.nodes,
        "best_move": position.vertex(result.move),
        "winrate": round(result.winrate, 4),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print(
            f"MCTS ({figures['config'] or 'defaults'}), {args.size}x{args.size}, one core: "
            f"{figures['simulations_per_second']:,.0f} simulations/s vs {figures['raw_playouts_per_second']:,.0f} raw "
            f"{config.policy} playouts/s = {100 * figures['ratio_to_raw']:.0f}% "
            f"(a fresh player's first search: {figures['fresh_simulations_per_second']:,.0f}/s = "
            f"{100 * figures['fresh_ratio_to_raw']:.0f}%); {figures['tree_nodes']:,} nodes; "
            f"best {figures['best_move']} ({100 * figures['winrate']:.1f}%)"
        )
    return 0


def run_startup(args: argparse.Namespace) -> int:
    """Time ``obook warm-up`` (what the embedded build and a grid worker compile before their first
    move) in a fresh process, first with an empty numba cache (everything compiles) and then again
    with the cache it left (everything loads)."""
    figures = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, OBOOK_NUMBA_CACHE=cache)
        for label in ("first_run_seconds", "warm_start_seconds"):
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "obook.cli", "warm-up", "--quiet"], env=env,
                                  capture_output=True, text=True)
            if done.returncode != 0:
                raise ObookError(f"the start-up probe failed: {done.stderr.strip()[-500:]}")
            figures[label] = round(time.perf_counter() - t0, 2)
    if args.json:
        print(json.dumps(figures))
    else:
        print(
            f"engine start-up (a new process running obook warm-up: the rules, the search with heavy and light "
            f"playouts, ownership): first run {figures['first_run_seconds']} s (compiling), "
            f"warm {figures['warm_start_seconds']} s (cached)"
        )
    return 0
