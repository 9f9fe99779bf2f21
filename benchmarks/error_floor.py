"""How large is a book search's error beyond its sampling noise? A calibration of the minimax book's
error floor (issue 32: "the 0.03 error floor was never calibrated").

A book node's own value has the error ``sqrt(w(1-w)/n + floor^2)`` (``obook.book.minimax``): the floor
stands for the search's bias, which no number of visits removes. A book holds a direct test of it.
Where a book move m of node X has a child C that was searched with nothing excluded, two searches
value the same position: X's search gave m a win rate w (X's mover, n visits), and C's own search
gave its first move a win rate v (C's mover), so ``1 - v`` estimates the same thing from a search of
its own, S playouts deep. If each search's error is its sampling noise plus an independent bias of
size f, the difference ``w - (1 - v)`` has variance ``w(1-w)/n + v(1-v)/n_C + 2 f^2``; the excess
of the observed variance over the sampling terms gives f, and the mean difference says whether a
parent's estimate of a move leans one way (values that sink as the book deepens would show here).
Printed: f over all pairs and by the parent's visits and depth, and the spread of the differences'
z-scores under candidate floors (1 when the floor is right; the book's bounds use z = 2).

    python benchmarks/error_floor.py --db sqlite:///b025t2-2500.db --book b025t2

Reads the store only; a minute at most for thousands of nodes.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from typing import NamedTuple


class Pair(NamedTuple):
    """A book move valued twice: by its parent's search and by its child's own."""

    difference: float  # the parent's win rate of the move less 1 - the child's first move's
    parent_variance: float  # w(1-w)/n of the parent's estimate
    child_variance: float  # v(1-v)/n of the child's
    parent_visits: int
    depth: int  # the parent's, in moves from the empty board


def pairs_of(nodes: dict, min_visits: int = 100) -> list[Pair]:
    """Every book move whose parent's search valued it with at least ``min_visits`` visits and whose
    child was searched with nothing excluded (so its first move is its search's best)."""
    out = []
    for node in nodes.values():
        searched = {m.move: m for m in node.root_moves}
        for move, (child_key, _) in node.edges.items():
            child = nodes.get(child_key)
            parent = searched.get(move)
            if child is None or parent is None or parent.visits < min_visits or child.searched_edges or not child.root_moves:
                continue
            top = child.root_moves[0]
            out.append(Pair(parent.winrate - (1.0 - top.winrate), parent.winrate * (1 - parent.winrate) / parent.visits,
                            top.winrate * (1 - top.winrate) / top.visits, parent.visits, node.depth))
    return out


def floor_estimate(pairs: list[Pair]) -> float:
    """f such that the differences' variance is their sampling variance plus 2 f^2 (0 when the
    sampling alone explains it)."""
    excess = statistics.pvariance([p.difference for p in pairs]) - statistics.mean(
        p.parent_variance + p.child_variance for p in pairs)
    return math.sqrt(max(excess, 0.0) / 2)


def z_scores(pairs: list[Pair], floor: float) -> list[float]:
    """Each difference over its error under ``floor``."""
    return [p.difference / math.sqrt(p.parent_variance + p.child_variance + 2 * floor * floor) for p in pairs]


def z_spread(pairs: list[Pair], floor: float) -> float:
    """The standard deviation of the differences' z-scores under ``floor`` (1 when it is right)."""
    return statistics.pstdev(z_scores(pairs, floor))


def report(pairs: list[Pair], floors=(0.0, 0.01, 0.015, 0.02, 0.03, 0.04)) -> list[str]:
    lines = [f"{len(pairs)} book moves valued by their parent's search and by their child's own",
             f"mean difference (parent - child) {statistics.mean(p.difference for p in pairs):+.4f}, "
             f"sd {statistics.pstdev(p.difference for p in pairs):.4f}; sampling sd: parent "
             f"{math.sqrt(statistics.mean(p.parent_variance for p in pairs)):.4f}, child "
             f"{math.sqrt(statistics.mean(p.child_variance for p in pairs)):.4f}",
             f"**floor per search: {floor_estimate(pairs):.4f}**",
             "| pairs by | range | pairs | mean difference | floor |", "| --- | --- | --- | --- | --- |"]
    for name, attr, ranges in (("parent's visits", "parent_visits", ((100, 1000), (1000, 5000), (5000, 20000), (20000, None))),
                               ("parent's depth", "depth", ((0, 4), (4, 8), (8, 12), (12, None)))):
        for lo, hi in ranges:
            cell = [p for p in pairs if getattr(p, attr) >= lo and (hi is None or getattr(p, attr) < hi)]
            if len(cell) >= 20:
                lines.append(f"| {name} | {lo}-{hi if hi is not None else ''} | {len(cell)} | "
                             f"{statistics.mean(p.difference for p in cell):+.4f} | {floor_estimate(cell):.4f} |")
    lines += ["| floor | sd of the z-scores | share with abs(z) > 2 |", "| --- | --- | --- |"]
    for floor in floors:
        z = z_scores(pairs, floor)
        lines.append(f"| {floor:g} | {statistics.pstdev(z):.3f} | {sum(abs(t) > 2 for t in z) / len(z):.3f} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="the book's store")
    parser.add_argument("--book", required=True)
    parser.add_argument("--min-visits", type=int, default=100, help="leave out parent estimates with fewer visits")
    args = parser.parse_args()
    from obook.book.backup import load_nodes
    from obook.book.library import open_book_store
    from obook.store.books import get_book

    from obook.errors import ObookError

    try:
        store = open_book_store(args.db)
        with store.read() as conn:
            nodes = load_nodes(conn, get_book(conn, args.book).id)
    except ObookError as error:
        print(f"error_floor.py: {error}", file=sys.stderr)
        return 2
    pairs = pairs_of(nodes, args.min_visits)
    if len(pairs) < 20:
        print(f"book {args.book!r} has {len(pairs)} book moves valued twice: too few to calibrate", file=sys.stderr)
        return 1
    print(f"book {args.book!r}: {len(nodes)} nodes")
    print("\n".join(report(pairs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
