"""Would another play rule change what a minimax book plays? (issue 32, item 6)

A rule can only change a game where the book player meets a node whose moves it ranks otherwise.
This counts, for a book and its recorded games (``benchmarks/minimax_book.py``'s JSON lines and
SGFs), the nodes where the book's rule (``book_move``: the best backed-up value) and a score rule
differ, and the recorded games in which the book player met such a node on its way through the
book. The score rule is KataGo's ``utilityPerScore`` idea on the book's back-up: among the book
moves, the best value plus ``lambda`` times the mover's backed-up score (points); where the value
rule leaves the book, so does it.

The coverage rule (``--deltas``) asks whether play could stay in the book longer by choosing well
among moves of about equal value: among the book moves whose values are within ``delta`` of the
value rule's move, the one after which the book player can expect the most own moves from the book
(the opponent replying at ``--truth`` through the play policies, the value rule below;
``reply_model.own_moves_from``). Printed beside the counts is the modelled coverage under the rule
(own book moves a game, as ``reply_model.py --coverage`` gives for the value rule).

    python benchmarks/book_rules.py --db sqlite:///b025-1000.db --book b025 --series "b025 [book_choice=value]" \\
        --checkpoint 1000 --lambdas 0.002,0.005,0.01,0.02 --deltas 0.005,0.01,0.02,0.03
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from minimax_book import DEFAULT_OUT, load, replayed  # noqa: E402
from reply_model import own_moves_from  # noqa: E402


def score_rule(node, figures, per_point: float):
    """The book move by value plus ``per_point`` times the mover's backed-up score (None: leave)."""
    from obook.book.minimax import book_move, edge_views

    chosen = book_move(node, figures)
    edges = edge_views(node, figures)
    if chosen is None or len(edges) < 2:
        return chosen
    sign = 1.0 if node.black_to_move else -1.0

    def utility(edge):
        score = figures[edge.child].backed_up_score
        return edge.value + per_point * (sign * score if score is not None else 0.0)

    return max(edges, key=utility)


def coverage_rule(node, figures, delta: float, after):
    """The book move whose ``after(child)`` (own book moves expected after it) is largest among those
    within ``delta`` of the value rule's move's value (None: leave, as the value rule does)."""
    from obook.book.minimax import book_move, edge_views

    chosen = book_move(node, figures)
    if chosen is None or delta <= 0:
        return chosen
    near = [e for e in edge_views(node, figures) if e.value >= chosen.value - delta]
    return max(near, key=lambda e: (after(e.child), e.value, -e.move))


def games_meeting(rows, nodes, differ) -> int:
    """How many recorded games met a node of ``differ`` on the book player's turn, in the book."""
    from obook.book.keys import canonical_view

    met = 0
    for r in rows:
        for ply, position, _ in replayed(r, 40):
            key, _ = canonical_view(position)
            if key not in nodes:
                break
            if ("B" if ply % 2 == 0 else "W") == r["a_color"] and key in differ:
                met += 1
                break
    return met


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True)
    parser.add_argument("--book", required=True)
    parser.add_argument("--series", default=None, help="the recorded series whose games to replay (default: the book)")
    parser.add_argument("--checkpoint", type=int, default=None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--lambdas", default="0.002,0.005,0.01,0.02", help="win rate per point of score")
    parser.add_argument("--deltas", default="", help="the coverage rule's windows of win rate (none by default)")
    parser.add_argument("--truth", type=float, default=0.5, help="the coverage rule's reply temperature")
    args = parser.parse_args()

    from obook.book.backup import load_nodes
    from obook.book.library import open_book_store
    from obook.book.minimax import book_move
    from obook.store.books import get_book
    from obook.store.minimax import stored_figures

    store = open_book_store(args.db)
    with store.read() as conn:
        info = get_book(conn, args.book)
        nodes = load_nodes(conn, info.id)
        figures = stored_figures(conn, info.id)
    series = args.series or args.book
    rows = [r for r in load(args.out) if r.get("kind") == "game" and r["book"] == series and (args.checkpoint is None or r["checkpoint"] == args.checkpoint)]
    several = [n for n in nodes.values() if len(n.edges) >= 2 and book_move(n, figures) is not None]
    print(f"book {args.book!r}: {len(nodes)} nodes, {len(several)} with two book moves or more and a move to play; "
          f"{len(rows)} recorded games of {series!r}")
    print("| lambda (win rate a point) | nodes where the rules differ | games that meet one |")
    print("| --- | --- | --- |")
    for per_point in (float(x) for x in args.lambdas.split(",")):
        differ = {n.key for n in several if score_rule(n, figures, per_point).move != book_move(n, figures).move}
        print(f"| {per_point:g} | {len(differ)} | {games_meeting(rows, nodes, differ)} |")
    if args.deltas:
        from obook.book.expansion import root_key

        root = root_key(info)
        memo: dict[int, float] = {}

        def value_rule(node):
            return book_move(node, figures)

        def after(child: int) -> float:
            if child not in memo:
                memo[child] = own_moves_from(nodes, child, False, args.truth, value_rule)
            return memo[child]

        print()
        print("| delta (win rate) | nodes where the rules differ | games that meet one | modelled own book moves a game (Black / White) |")
        print("| --- | --- | --- | --- |")
        for delta in [0.0] + [float(x) for x in args.deltas.split(",")]:
            def rule(node, delta=delta):
                return coverage_rule(node, figures, delta, after)

            differ = {n.key for n in several if rule(n).move != book_move(n, figures).move}
            black = own_moves_from(nodes, root, True, args.truth, rule)
            white = own_moves_from(nodes, root, False, args.truth, rule)
            print(f"| {delta:g} | {len(differ)} | {games_meeting(rows, nodes, differ)} | "
                  f"{(black + white) / 2:.3f} ({black:.3f} / {white:.3f}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
