"""``benchmarks/tree_digest.py``: the same search gives the same digest, another search another."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

import numpy as np  # noqa: E402
from tree_digest import nodes_digest, tree_digest  # noqa: E402

from obook.search.tree import N_NODES, new_tree  # noqa: E402


def test_a_fixed_seed_search_digests_the_same_and_another_search_differently():
    nodes, digest = tree_digest("", 7, ("D4",), 300)
    assert nodes > 2  # the search grew a tree
    assert tree_digest("", 7, ("D4",), 300) == (nodes, digest)
    assert tree_digest("rave=off", 7, ("D4",), 300)[1] != digest
    assert tree_digest("", 7, ("D4",), 301)[1] != digest


def test_the_same_values_stored_at_another_precision_digest_alike_and_other_values_do_not():
    tree = new_tree(8)
    tree.visits[1:4] = (3.0, 1.0, 2.0)
    tree.wins[1:4] = (1.5, 0.25, 1.0)
    nodes = int(tree.meta[N_NODES]) + 2
    narrow = tree._replace(visits=tree.visits.astype(np.float32), wins=tree.wins.astype(np.float32))
    assert nodes_digest(narrow, nodes) == nodes_digest(tree, nodes)
    narrow.wins[2] = 0.5
    assert nodes_digest(narrow, nodes) != nodes_digest(tree, nodes)
