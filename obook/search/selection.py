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
def rave_weight(tree, child, params):
    """Weight of the AMAF mean in the value of ``child`` (0: plain Monte-Carlo mean)."""
    n = tree.visits[child]
    if not params.rave_beta:
        alpha = min(1.0, n / params.rave_k)
        return 1.0 - alpha
    na = tree.amaf_visits[child]
    b = params.rave_bias
    return na / (n + na + 4.0 * b * b * n * na + 1e-9)


@hot
def child_value(tree, child, log_parent, params):
    """The selection score of ``child``: (RAVE-mixed) mean plus the UCB exploration term."""
    n = tree.visits[child]
    rave = params.rave
    na = tree.amaf_visits[child]
    if n == 0.0:
        if rave and na > 0.0:
            return tree.amaf_wins[child] / na
        return params.first_play_urgency
    mean = tree.wins[child] / n
    value = mean
    if rave and na > 0.0:
        beta = rave_weight(tree, child, params)
        value = (1.0 - beta) * mean + beta * tree.amaf_wins[child] / na
    c = params.exploration
    if c > 0.0:
        if not params.ucb1_tuned:
            value += c * math.sqrt(log_parent / n)
        else:
            var = max(tree.wins_sq[child] / n - mean * mean, 0.0)
            v = var + params.tuned_c1 * math.sqrt(log_parent / n)
            value += c * math.sqrt(log_parent / n * min(v, params.tuned_c2))
    return value


@hot
def select_child(tree, node, params):
    """The child of ``node`` with the best ``child_value`` (the first of equals), among the first
    ``widening_a + N ** widening_b`` with progressive widening."""
    first = tree.first_child[node]
    count = tree.n_children[node]
    if params.widening:
        limit = int(params.widening_a + tree.visits[node] ** params.widening_b)
        count = min(count, max(limit, 1))
    log_parent = math.log(max(tree.visits[node], 1.0))
    best = first
    best_value = -1e300
    for child in range(first, first + count):
        v = child_value(tree, child, log_parent, params)
        if v > best_value:
            best_value = v
            best = child
    return best


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
