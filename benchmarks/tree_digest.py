"""A digest of the trees that fixed-seed searches build, to tell whether a change to the kernel
keeps every search the same bit for bit (a speed change should; run it in both checkouts and
compare the last line).

    PYTHONPATH=CHECKOUT python benchmarks/tree_digest.py [--playouts 3000]

Each line: the configuration, the board size, the moves played before the search, the node count
and the digest of every node array up to it; the last line digests them all.
"""

from __future__ import annotations

import argparse
import hashlib

import numpy as np

from obook.go.position import Position
from obook.search.config import SearchConfig
from obook.search.mcts import MCTSPlayer
from obook.search.tree import N_NODES

CONFIGS = ("", "rave_schedule=alpha", "selection=ucb1-tuned", "rave=off", "widening=on", "policy=light",
           "reward=score", "policy=heavy-ladder,ladders=off")
POSITIONS = ((9, ()), (9, ("E5", "C4", "G5")), (7, ("D4",)))


def tree_digest(spec: str, size: int, moves: tuple[str, ...], playouts: int) -> tuple[int, str]:
    player = MCTSPlayer(SearchConfig.from_spec(",".join(filter(None, (spec, "seed=11")))))
    position = Position(size, komi=7.5)
    for move in moves:
        position.play(move)
    player.genmove(position, playouts=playouts)
    nodes = int(player.tree.meta[N_NODES])
    return nodes, nodes_digest(player.tree, nodes)


def nodes_digest(tree, nodes: int) -> str:
    """The digest of every node array's first ``nodes`` entries. Float arrays are digested as
    float64, so a tree that stores the same values at another precision digests alike."""
    digest = hashlib.sha256()
    for field in tree._fields:
        if field != "meta":
            values = getattr(tree, field)[:nodes]
            if values.dtype.kind == "f":
                values = values.astype(np.float64)
            digest.update(np.ascontiguousarray(values).tobytes())
    return digest.hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--playouts", type=int, default=3000, help="simulations of each search")
    args = parser.parse_args(argv)
    everything = hashlib.sha256()
    for spec in CONFIGS:
        for size, moves in POSITIONS:
            nodes, digest = tree_digest(spec, size, moves, args.playouts)
            everything.update(digest.encode())
            print(f"{spec or 'defaults':34} {size}x{size} after {len(moves)} moves: {nodes:6d} nodes {digest}")
    print("all", everything.hexdigest()[:16])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
