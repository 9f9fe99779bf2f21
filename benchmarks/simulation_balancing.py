"""Simulation balancing of the heavy playouts' rule rates (issue 35, item 3).

    python benchmarks/simulation_balancing.py targets [--games ../shared/data/go9/aeb9x9] \
        [--target-playouts 20000] [--workers 2] [--out docs/balancing/targets.jsonl]
    python benchmarks/simulation_balancing.py fit [--targets docs/balancing/targets.jsonl] \
        [--steps 200] [--step-size 200] [--from 0.95]

``targets`` takes one position from every professional game (a move number drawn from 6 to 40, at
most the game's length less one; komi 7.5 whatever the record says) and values it with a deep
search of today's defaults: Black's win rate of the search's best move, the value the playouts
should reproduce. Resumable: positions already in ``--out`` are kept.

``fit`` holds every fourth position out, runs ``obook.playout.balancing.Balancer.fit`` on the others
and prints, every ``--report-every`` steps, the rates and the held-out mean squared error of the
playouts' values (each from ``--error-playouts`` playouts) for the rates of that step, with the
error of ``heavy`` (every rate 1) beside it: the rates to try are those of the lowest held-out error,
and what decides is a match (``benchmarks/sprt.py --test policy=heavy-balanced``), not the error.
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from obook.go.board import BLACK  # noqa: E402
from obook.go.position import Position  # noqa: E402
from obook.go.sgf import read_sgf  # noqa: E402
from obook.playout.balancing import Balancer, logits_of, rates_of  # noqa: E402
from obook.playout.heavy import RULES  # noqa: E402

KOMI = 7.5


def training_position(path: Path, seed: int) -> tuple[int, Position] | None:
    """The position after a move number drawn from 6 to 40 (or the game's length less one), at komi 7.5."""
    record = read_sgf(path)
    if record.position.size != 9 or record.handicap or record.total_moves < 8:
        return None
    rng = np.random.default_rng([seed, record.total_moves, len(str(path))])
    moves = int(rng.integers(6, min(40, record.total_moves - 1) + 1))
    played = read_sgf(path, moves=moves).position
    position = Position(size=9, komi=KOMI, superko=played.superko, setup_black=list(played.setup_black),
                        setup_white=list(played.setup_white), first_to_move=played.first_to_move,
                        moves=list(played.moves))
    return moves, position


def _value(task: tuple[str, str, int, int, int]) -> dict:
    from obook.search.config import SearchConfig
    from obook.search.mcts import MCTSPlayer

    games, game, moves, playouts, seed = task
    position = training_position(Path(games) / game, seed)[1]
    player = MCTSPlayer(SearchConfig.from_spec(f"seed={seed},resign_threshold=0"))
    result = player.genmove(position, playouts=playouts)
    black = result.winrate if position.to_move == BLACK else 1.0 - result.winrate
    player.close()
    return {"game": game, "moves": moves, "target": round(float(black), 5), "playouts": playouts,
            "to_move": "B" if position.to_move == BLACK else "W"}


def make_targets(args) -> int:
    out = Path(args.out)
    done = set()
    if out.exists():
        done = {json.loads(line)["game"] for line in out.read_text().splitlines() if line.strip()}
    tasks = []
    games = Path(args.games)
    for path in sorted(games.rglob("*.sgf")):
        game = str(path.relative_to(games))
        picked = training_position(path, args.seed)
        if picked is not None and game not in done:
            tasks.append((str(games), game, picked[0], args.target_playouts, args.seed))
    print(f"{len(done)} positions valued already, {len(tasks)} to value at {args.target_playouts} playouts")
    out.parent.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(args.workers) as pool, out.open("a") as sink:
        for k, row in enumerate(pool.map(_value, tasks, chunksize=4), start=1):
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            if k % 50 == 0:
                print(f"  {k}/{len(tasks)}", flush=True)
    return 0


def load_targets(path: Path, games: Path, seed: int) -> tuple[list[Position], list[float]]:
    positions, targets = [], []
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        moves, position = training_position(games / row["game"], seed)
        if moves != row["moves"]:
            raise SystemExit(f"{row['game']}: the targets were made with another --seed (move {row['moves']})")
        positions.append(position)
        targets.append(row["target"])
    return positions, targets


def fit(args) -> int:
    positions, targets = load_targets(Path(args.targets), Path(args.games), args.seed)
    held = [i for i in range(len(positions)) if i % 4 == 3]
    train = [i for i in range(len(positions)) if i % 4 != 3]
    trainer = Balancer([positions[i] for i in train], [targets[i] for i in train], seed=args.seed)
    judge = Balancer([positions[i] for i in held], [targets[i] for i in held], seed=args.seed + 1)
    heavy = judge.error([1.0] * len(RULES), args.error_playouts)
    print(f"{len(train)} training and {len(held)} held-out positions; held-out error of heavy (rates 1): {heavy:.5f}")
    print("step  " + "  ".join(f"{r:>11}" for r in RULES) + "  train error  held-out error")
    start = [args.start] * len(RULES)
    print(f"{0:4d}  " + "  ".join(f"{r:11.4f}" for r in start)
          + f"  {'':11}  {judge.error(start, args.error_playouts):.5f}")
    rows = []
    recent = []
    averaged = []  # the logits of the second half's steps (Polyak's average: the noise of single steps cancels)
    for step in trainer.fit(start, args.steps, args.step_size, args.value_playouts, args.gradient_playouts, args.batch):
        recent.append(step.error)
        if step.step > args.steps // 2:
            averaged.append(logits_of(step.rates))
        if step.step % args.report_every == 0:
            held_error = judge.error(step.rates, args.error_playouts)
            rows.append({"step": step.step, "rates": [round(float(r), 4) for r in step.rates],
                         "train_error": float(np.mean(recent)), "held_out_error": held_error})
            print(f"{step.step:4d}  " + "  ".join(f"{r:11.4f}" for r in step.rates)
                  + f"  {np.mean(recent):11.5f}  {held_error:.5f}", flush=True)
            recent = []
    mean_rates = rates_of(np.mean(averaged, axis=0)) if averaged else np.asarray(start)
    mean_error = judge.error(mean_rates, args.error_playouts)
    print("mean of the second half's steps: " + "  ".join(f"{r:.4f}" for r in mean_rates)
          + f"; held-out error {mean_error:.5f} (heavy {heavy:.5f})")
    if args.json:
        Path(args.json).write_text(json.dumps({"heavy_held_out_error": heavy, "steps": rows,
                                               "averaged_rates": [round(float(r), 4) for r in mean_rates],
                                               "averaged_held_out_error": mean_error, "args": vars(args)},
                                              indent=1) + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    targets = commands.add_parser("targets", help="value one position of every game with a deep search")
    targets.add_argument("--target-playouts", type=int, default=20000)
    targets.add_argument("--workers", type=int, default=2)
    targets.add_argument("--out", default=str(ROOT / "docs" / "balancing" / "targets.jsonl"))
    targets.add_argument("--seed", type=int, default=1)
    fitting = commands.add_parser("fit", help="fit the rates by simulation balancing")
    fitting.add_argument("--targets", default=str(ROOT / "docs" / "balancing" / "targets.jsonl"))
    fitting.add_argument("--steps", type=int, default=200)
    fitting.add_argument("--step-size", type=float, default=200.0)
    fitting.add_argument("--start", type=float, default=0.95, help="every rate at the start")
    fitting.add_argument("--value-playouts", type=int, default=64)
    fitting.add_argument("--gradient-playouts", type=int, default=64)
    fitting.add_argument("--batch", type=int, default=32)
    fitting.add_argument("--error-playouts", type=int, default=400)
    fitting.add_argument("--report-every", type=int, default=20)
    fitting.add_argument("--seed", type=int, default=1)
    for command in (targets, fitting):
        command.add_argument("--games", default=str(ROOT.parent / "shared" / "data" / "go9" / "aeb9x9"))
    fitting.add_argument("--json", help="write the reported steps to this file")
    args = parser.parse_args(argv)
    return make_targets(args) if args.command == "targets" else fit(args)


if __name__ == "__main__":
    raise SystemExit(main())
