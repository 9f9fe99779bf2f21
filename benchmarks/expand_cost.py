"""What one child of an expansion costs: nanoseconds a child of ``kernel.expand`` on the positions
of nodes that a real search expanded.

    PYTHONPATH=CHECKOUT python benchmarks/expand_cost.py [--config SPEC] [--positions FILE]

The positions come from a seeded search of ``--simulations`` from the empty board (the checkout's
default player): ``--count`` of its expanded nodes, each replayed from the root. The search depends on the
checkout's code, so to compare two checkouts or two configurations on the same positions, pass the
same ``--positions`` file to every run: the first run writes it (JSON: each position's moves), the
others read it. Each position is expanded ``--repeats`` times in a row (its board stays in the
cache: this measures the work a child costs, not the cache misses of reaching it); the figure is
the fastest and the median of five passes. ``docs/benchmarks.md``, "Calls that pass a board".
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

from obook.go.board import PASS, new_board, play
from obook.go.position import Position
from obook.jit import hot
from obook.search.config import SearchConfig
from obook.search.kernel import expand, new_search_scratch
from obook.search.mcts import MCTSPlayer
from obook.search.tree import N_NODES, ROOT, new_tree


@hot
def expand_again(tree, b, params, sc, repeats):
    """Expand the root of ``tree`` on ``b`` ``repeats`` times; returns the children made in all."""
    node = tree.meta[ROOT]
    made = 0
    for _ in range(repeats):
        tree.meta[N_NODES] = node + 1
        tree.n_children[node] = 0
        expand(tree, node, b, params, sc)
        made += tree.n_children[node]
    return made


def searched_positions(simulations: int, count: int, seed: int) -> list[list[int]]:
    """The move sequences from the root to ``count`` nodes (not passes) a seeded search expanded."""
    player = MCTSPlayer(SearchConfig.from_spec(f"seed={seed}"))
    player.genmove(Position(9, komi=7.5), playouts=simulations)
    tree = player.tree
    expanded = [k for k in range(2, int(tree.meta[N_NODES]))
                if tree.n_children[k] > 0 and tree.move[k] != PASS]
    picked = np.random.default_rng(seed).choice(expanded, min(count, len(expanded)), replace=False)
    paths = []
    for node in picked:
        path = []
        while node != tree.meta[ROOT]:
            path.append(int(tree.move[node]))
            node = int(tree.parent[node])
        paths.append(path[::-1])
    return paths


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="", help="search options of the expansion (default: the defaults)")
    parser.add_argument("--positions", type=Path, default=None, help="read the positions here, or write them")
    parser.add_argument("--simulations", type=int, default=100_000)
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.positions is not None and args.positions.exists():
        paths = json.loads(args.positions.read_text())
    else:
        paths = searched_positions(args.simulations, args.count, args.seed)
        if args.positions is not None:
            args.positions.write_text(json.dumps(paths))
    boards = []
    for path in paths:
        board = new_board(9)
        for move in path:
            play(board, move)
        boards.append(board)
    params = SearchConfig.from_spec(args.config).kernel_params(7.5)
    scratch = new_search_scratch(9)
    tree = new_tree(10_000)
    expand_again(tree, boards[0], params, scratch, 1)  # compile or load before timing
    passes = []
    for _ in range(5):
        started = time.perf_counter()
        children = sum(expand_again(tree, board, params, scratch, args.repeats) for board in boards)
        passes.append((time.perf_counter() - started) / children * 1e9)
    print(f"expansion ({args.config or 'defaults'}): {min(passes):.1f} ns a child at best, median "
          f"{statistics.median(passes):.1f} ({len(boards)} positions, {children // args.repeats:,} children)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
