"""``benchmarks/error_floor.py``: the book moves valued twice, and the floor recovered from them."""

import math
import os
import random
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from error_floor import Pair, floor_estimate, pairs_of, z_spread  # noqa: E402

from obook.book.minimax import Node, RootMove  # noqa: E402


def test_a_book_move_is_paired_with_its_childs_own_first_search_only():
    nodes = {
        1: Node(1, "", [RootMove(40, 20000, 0.55), RootMove(30, 5000, 0.50), RootMove(31, 50, 0.40)], 0, 0.0,
                edges={40: (2, 0.6), 30: (3, 0.2), 31: (4, 0.01), 22: (5, 0.01)}),
        2: Node(2, "E5", [RootMove(41, 100000, 0.47)], 0, 0.0),  # searched with nothing excluded
        3: Node(3, "C3", [RootMove(41, 100000, 0.52)], 1, 0.3),  # re-searched with a book move excluded
        4: Node(4, "C4", [RootMove(41, 100000, 0.60)], 0, 0.0),  # the parent's estimate has too few visits
        5: Node(5, "B2", [RootMove(41, 100000, 0.50)], 0, 0.0),  # the parent's search never valued the move
    }
    [pair] = pairs_of(nodes)
    assert math.isclose(pair.difference, 0.55 - (1 - 0.47))
    assert math.isclose(pair.parent_variance, 0.55 * 0.45 / 20000) and math.isclose(pair.child_variance, 0.47 * 0.53 / 100000)
    assert pair.parent_visits == 20000 and pair.depth == 0


def test_the_floor_is_recovered_from_noisy_pairs():
    rng = random.Random(7)
    for floor in (0.0, 0.015, 0.03):
        pairs = []
        for _ in range(4000):
            n, m = rng.choice((2000, 20000)), 100000
            sp, sc = 0.25 / n, 0.25 / m
            d = rng.gauss(0, math.sqrt(sp + floor * floor)) - rng.gauss(0, math.sqrt(sc + floor * floor))
            pairs.append(Pair(d, sp, sc, n, 4))
        assert abs(floor_estimate(pairs) - floor) < 0.003
        assert abs(z_spread(pairs, floor) - 1.0) < 0.06
