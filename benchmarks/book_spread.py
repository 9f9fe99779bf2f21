"""How much do two builds with the same settings differ? (issue 32, item 7)

Two books built with the same settings and different ``--seed-salt`` search every node with other
seeds, so they differ where a search's choice is close, and from there on in which lines they grow.
This compares two stores' books: the nodes and edges they share (canonical positions), the move
each plays (``book_move``) at the positions both hold, and what they are worth against the
engine's replies by the model of ``benchmarks/reply_model.py`` (expected own book moves a game, the
opponent replying at ``--truth``). The spread in games is the difference of their match scores in
``benchmarks/minimax_book.py``'s report.

    python benchmarks/book_spread.py sqlite:///b025t-500.db:b025t sqlite:///b025s-500.db:b025s
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from reply_model import expected_own_moves  # noqa: E402


def read_book(item: str):
    from obook.book.backup import load_nodes
    from obook.book.library import open_book_store
    from obook.store.books import get_book
    from obook.store.minimax import stored_figures

    url, name = item.rsplit(":", 1)
    store = open_book_store(url)
    with store.read() as conn:
        info = get_book(conn, name)
        return url, name, info.size, load_nodes(conn, info.id), stored_figures(conn, info.id)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("first", metavar="URL:BOOK")
    parser.add_argument("second", metavar="URL:BOOK")
    parser.add_argument("--truth", type=float, default=0.5, help="the opponent's reply temperature in the model")
    args = parser.parse_args()
    from obook.book.minimax import book_move
    from obook.go.vertex import format_vertex

    (url_a, a, size, nodes_a, fig_a), (url_b, b, _, nodes_b, fig_b) = read_book(args.first), read_book(args.second)
    shared = nodes_a.keys() & nodes_b.keys()
    edges_a = {(k, m) for k, n in nodes_a.items() for m in n.edges}
    edges_b = {(k, m) for k, n in nodes_b.items() for m in n.edges}
    same = differ = 0
    for key in shared:
        ma, mb = book_move(nodes_a[key], fig_a), book_move(nodes_b[key], fig_b)
        if ma is None or mb is None:
            continue
        same += ma.move == mb.move
        differ += ma.move != mb.move
    print(f"{a}: {len(nodes_a)} nodes, {len(edges_a)} edges; {b}: {len(nodes_b)} nodes, {len(edges_b)} edges")
    print(f"shared: {len(shared)} nodes ({len(shared) / max(1, min(len(nodes_a), len(nodes_b))):.0%} of the smaller), "
          f"{len(edges_a & edges_b)} edges")
    print(f"at the {same + differ} shared positions where both play a book move: the same move at {same}, "
          f"another at {differ}")
    root_a = min(nodes_a.values(), key=lambda n: n.depth)
    root_b = min(nodes_b.values(), key=lambda n: n.depth)
    for name, root, figures in ((a, root_a, fig_a), (b, root_b, fig_b)):
        chosen = book_move(root, figures)
        print(f"{name}: plays {format_vertex(chosen.move, size) if chosen else 'no book move'} on the empty board, "
              f"root value {figures[root.key].value:.3f}")
    print(f"expected own book moves a game, the opponent replying at T={args.truth:g}:")
    for url, name in ((url_a, a), (url_b, b)):
        own = expected_own_moves(url, name, args.truth)
        print(f"  {name}: as Black {own['black']:.2f}, as White {own['white']:.2f}, "
              f"mean {(own['black'] + own['white']) / 2:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
