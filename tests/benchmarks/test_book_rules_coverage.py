"""``benchmarks/book_rules.py``'s coverage rule and ``reply_model.own_moves_from``, the modelled own
book moves a game that both the rule and ``reply_model.py --coverage`` read."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from book_rules import coverage_rule  # noqa: E402
from reply_model import own_moves_from  # noqa: E402

from obook.book.minimax import Bounds, Node, RootMove, book_move  # noqa: E402


def small_book():
    """The root (Black to move) holds two book moves: to B, the better value, whose reply is not in
    the book, and to A, a point worse, whose one reply leads to a node with a deep-search move."""
    nodes = {
        1: Node(key=1, moves="", root_moves=[], searched_edges=2, excluded_prior=0.0,
                edges={10: (2, 0.5), 11: (3, 0.5)}),
        2: Node(key=2, moves="C3", root_moves=[], searched_edges=1, excluded_prior=0.0,
                edges={20: (4, 1.0)}, play_policy=[(20, 0.9), (22, 0.1)]),
        3: Node(key=3, moves="C4", root_moves=[], searched_edges=0, excluded_prior=0.0,
                play_policy=[(21, 1.0)]),
        4: Node(key=4, moves="C3 D3", root_moves=[RootMove(30, 1000, 0.5)], searched_edges=0, excluded_prior=0.0),
    }
    figures = {2: Bounds(0.49, 0.45, 0.53), 3: Bounds(0.48, 0.44, 0.52), 4: Bounds(0.5, 0.47, 0.53)}
    return nodes, figures


def test_the_coverage_rule_takes_the_move_that_stays_in_the_book_among_near_equal_values():
    nodes, figures = small_book()
    memo = {}

    def value_rule(node):
        return book_move(node, figures)

    def after(child):
        return memo.setdefault(child, own_moves_from(nodes, child, False, 1.0, value_rule))

    assert book_move(nodes[1], figures).child == 3  # the better value, after which play leaves
    assert own_moves_from(nodes, 1, True, 1.0, value_rule) == 1.0
    assert after(2) == 0.9 and after(3) == 0.0  # A's likely reply is in the book (share 0.9)
    assert coverage_rule(nodes[1], figures, 0.005, after).child == 3  # A is not within half a point
    wide = coverage_rule(nodes[1], figures, 0.02, after)
    assert wide.child == 2
    assert own_moves_from(nodes, 1, True, 1.0, lambda n: coverage_rule(n, figures, 0.02, after)) == 1.9
