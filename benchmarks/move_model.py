"""How well the move model predicts professional moves, against the search's priors of today.

    python benchmarks/move_model.py [--games ../shared/data/go9/aeb9x9] [--hold-out-every 5] [--refit]

Splits the games as ``obook learn move-model`` does (every 5th game by path held out), and on every
held-out move whose move is a candidate (legal, not filling an own eye, or PASS) ranks the candidates
by each scorer; prints the share of professional moves ranked first and in the top 5 (ties broken at
random) and the mean log-likelihood where the scorer is a probability model. Scorers:

- move model: the shipped table (``obook/search/move_model.npz``, fitted on the training games), or a
  fresh fit on them with ``--refit``;
- priors: the value a new child starts with in the search today, ``(even/2 + w good) / (even + w
  (good + bad))`` (``obook/search/priors.py``, default ``prior_even`` and ``prior_weight``), with the
  shipped shape counts (learned from all the games, held-out ones included: flattering) or with shape
  counts from the training games only;
- shapes alone: the learned 3x3 shape evidence (training games only).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from obook.go.board import PASS  # noqa: E402
from obook.search.config import SearchConfig  # noqa: E402
from obook.search.movefit import (  # noqa: E402
    collect,
    fit,
    game_positions,
    log_likelihood,
    rank_accuracy,
    split_games,
    spread_patterns,
)
from obook.search.movemodel import ABSENT, FEATURES_LEN, candidate_features, shipped_log_gamma  # noqa: E402
from obook.search.priors import move_evidence  # noqa: E402
from obook.search.shapes import shape_evidence, shipped_shape_evidence  # noqa: E402


def training_shape_counts(train) -> tuple[np.ndarray, np.ndarray]:
    """(chosen, available) per canonical shape, as ``learn_shape_counts`` counts them, from the
    training competitions (their pattern column holds canonical codes; PASS rows have none)."""
    pattern = train.features[:, 0]
    available = np.bincount(pattern[pattern != ABSENT], minlength=1 << 16)
    won = pattern[train.winner]
    chosen = np.bincount(won[won != ABSENT], minlength=1 << 16)
    return chosen, available


def prior_scores(held_paths, shape_tables, even, weight) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per shape table, (prior value, shape evidence) of every held-out candidate in ``collect``'s row order."""
    values = [[] for _ in shape_tables]
    shapes_only = [[] for _ in shape_tables]
    moves = features = None
    for board, color, before_last, point in game_positions(held_paths):
        if moves is None:
            moves = np.zeros(board.color.shape[0] + 1, np.int64)
            features = np.zeros((board.color.shape[0] + 1, FEATURES_LEN), np.int64)
        n = candidate_features(board, color, before_last, moves, features)
        if point not in moves[:n]:
            continue
        for t, shapes in enumerate(shape_tables):
            for i in range(n):
                p = int(moves[i])
                good, bad = move_evidence(board, p, color, shapes)
                values[t].append((0.5 * even + weight * good) / (even + weight * (good + bad)))
                shapes_only[t].append(-np.inf if p == PASS else shapes[int(features[i, 0])])
    return [(np.array(v), np.array(s)) for v, s in zip(values, shapes_only)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=str(ROOT.parent / "shared" / "data" / "go9" / "aeb9x9"))
    parser.add_argument("--hold-out-every", type=int, default=5)
    parser.add_argument("--refit", action="store_true", help="fit on the training games instead of the shipped table")
    parser.add_argument("--sweeps", type=int, default=30)
    args = parser.parse_args()
    if not Path(args.games).is_dir():
        print(f"no games at {args.games}", file=sys.stderr)
        return 2
    train_paths, held_paths = split_games(args.games, args.hold_out_every)
    started = time.time()
    train = collect(train_paths)
    held = collect(held_paths)
    print(f"{len(train_paths)} training games ({len(train.winner)} moves), {len(held_paths)} held out "
          f"({len(held.winner)} moves, {len(held.moves) / len(held.winner):.1f} candidates a move); "
          f"collected in {time.time() - started:.0f} s")
    if args.refit:
        started = time.time()
        log_gamma = spread_patterns(fit(train, sweeps=args.sweeps))
        print(f"fitted in {time.time() - started:.0f} s ({args.sweeps} sweeps)")
    else:
        log_gamma = shipped_log_gamma()
    model = np.append(log_gamma, 0.0)[held.features].sum(axis=1)

    chosen, available = training_shape_counts(train)
    config = SearchConfig()
    (prior_all, _), (prior_train, shapes_train) = prior_scores(
        held_paths, [shipped_shape_evidence(), shape_evidence(chosen, available)], config.prior_even,
        config.prior_weight)
    assert len(prior_all) == len(held.moves)

    rows = [
        ("uniform (every candidate alike)", np.zeros(len(held.moves)), True),
        ("shapes alone (training counts)", shapes_train, False),
        ("priors today, shapes from training games", prior_train, False),
        ("priors today, shipped shapes (seen the held-out games)", prior_all, False),
        ("move model" + (" (refitted)" if args.refit else " (shipped table)"), model, True),
    ]
    print(f"{'scorer':58} {'first':>7} {'top 5':>7} {'log-lik':>8}")
    for name, scores, probabilistic in rows:
        ll = f"{log_likelihood(log_gamma if name.startswith('move') else np.zeros_like(log_gamma), held):8.3f}" \
            if probabilistic else f"{'':8}"
        print(f"{name:58} {rank_accuracy(scores, held, 1):7.1%} {rank_accuracy(scores, held, 5):7.1%} {ll}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
