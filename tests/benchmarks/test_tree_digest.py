"""``benchmarks/tree_digest.py``: the same search gives the same digest, another search another."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from tree_digest import tree_digest  # noqa: E402


def test_a_fixed_seed_search_digests_the_same_and_another_search_differently():
    nodes, digest = tree_digest("", 7, ("D4",), 300)
    assert nodes > 2  # the search grew a tree
    assert tree_digest("", 7, ("D4",), 300) == (nodes, digest)
    assert tree_digest("rave=off", 7, ("D4",), 300)[1] != digest
    assert tree_digest("", 7, ("D4",), 301)[1] != digest
