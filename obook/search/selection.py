"""How MCTS picks the child to descend into: the value of a child (UCB1 or UCB1-tuned on the
RAVE-mixed mean) and progressive widening. ``params`` is ``config.KernelParams``.

- UCB1: ``mean + c * sqrt(ln N / n)``; UCB1-tuned (Auer et al.): ``mean + c * sqrt(ln N / n *
  min(V, c2))`` with ``V = var + c1 * sqrt(ln N / n)``.
- RAVE: the mean is ``(1 - beta) * mean + beta * amaf_mean``; ``beta = 1 - min(1, n / k)`` (the
  alpha schedule) or ``n~ / (n + n~ + 4 b^2 n n~)`` (Gelly & Silver 2007).
- An unvisited child is worth its AMAF mean when it has one, else the first-play urgency.
- Progressive widening considers only the ``widening_a + N ** widening_b`` children with the best
  AMAF means.
"""

from __future__ import annotations

import math

from obook.jit import hot
from obook.search.tree import swap_siblings


@hot(inline="always")
def _value(n, w, wsq, na, aw, log_parent, params):
    """``child_value`` of statistics read from the tree. Written without a branch on the
    statistics (each case is worked out and one is kept) so that LLVM vectorises the loop of
    ``child_values`` over a node's children; the options are the same for every child, and LLVM
    takes their branches out of the loop."""
    visited = n > 0.0
    n1 = n if visited else 1.0
    has_amaf = na > 0.0
    na1 = na if has_amaf else 1.0
    mean = w / n1
    value = mean
    if params.rave:
        if params.rave_beta:
            b = params.rave_bias
            beta = na / (n + na + 4.0 * b * b * n * na + 1e-9)
        else:
            beta = 1.0 - min(1.0, n / params.rave_k)
        mixed = (1.0 - beta) * mean + beta * aw / na1
        value = mixed if has_amaf else mean
    c = params.exploration
    if c > 0.0:
        if not params.ucb1_tuned:
            value += c * math.sqrt(log_parent / n1)
        else:
            var = max(wsq / n1 - mean * mean, 0.0)
            v = var + params.tuned_c1 * math.sqrt(log_parent / n1)
            value += c * math.sqrt(log_parent / n1 * min(v, params.tuned_c2))
    unvisited = params.first_play_urgency
    if params.rave:
        unvisited = aw / na1 if has_amaf else unvisited
    return value if visited else unvisited


@hot
def child_value(tree, child, log_parent, params):
    """The selection score of ``child``: (RAVE-mixed) mean plus the UCB exploration term."""
    return _value(tree.visits[child], tree.wins[child], tree.wins_sq[child], tree.amaf_visits[child],
                  tree.amaf_wins[child], log_parent, params)


@hot(inline="always")
def child_values(tree, first, count, log_parent, params, values):
    """``values[k]`` = ``child_value`` of child ``first + k`` for ``k < count``, from contiguous
    slices (an index from 0 lets LLVM drop numba's negative-index check and vectorise)."""
    visits = tree.visits[first:first + count]
    wins = tree.wins[first:first + count]
    wins_sq = tree.wins_sq[first:first + count]
    amaf_visits = tree.amaf_visits[first:first + count]
    amaf_wins = tree.amaf_wins[first:first + count]
    for k in range(count):
        values[k] = _value(visits[k], wins[k], wins_sq[k], amaf_visits[k], amaf_wins[k], log_parent, params)


@hot(inline="always")
def select_child(tree, node, params, values):
    """The child of ``node`` with the best ``child_value`` (the first of equals), among the first
    ``widening_a + N ** widening_b`` with progressive widening. ``values`` is scratch of at least
    the node's number of children."""
    first = tree.first_child[node]
    count = tree.n_children[node]
    if params.widening:
        limit = int(params.widening_a + tree.visits[node] ** params.widening_b)
        count = min(count, max(limit, 1))
    log_parent = math.log(max(tree.visits[node], 1.0))
    child_values(tree, first, count, log_parent, params, values)
    best = 0
    best_value = -1e300
    for k in range(count):
        v = values[k]
        if v > best_value:
            best_value = v
            best = k
    return first + best


@hot
def widening_order(tree, node):
    """Keep the children of ``node`` sorted by AMAF mean (then visits), best first, so progressive
    widening considers the most promising ones (insertion sort: the order changes little)."""
    first = tree.first_child[node]
    last = first + tree.n_children[node]
    for i in range(first + 1, last):
        j = i
        while j > first and _amaf_key(tree, j) > _amaf_key(tree, j - 1):
            swap_siblings(tree, j, j - 1)
            j -= 1


@hot(inline="always")
def _amaf_key(tree, child):
    na = tree.amaf_visits[child]
    if na > 0.0:
        return tree.amaf_wins[child] / na + 1e-6 * tree.visits[child]
    return 0.5 + 1e-6 * tree.visits[child]
