"""Prior knowledge for new tree nodes: virtual wins and losses from Go heuristics.

When a node is expanded, each child starts with ``even`` virtual simulations at 50% plus ``weight``
virtual wins per unit of good evidence and ``weight`` virtual losses per unit of bad evidence
(Gelly & Silver 2007, "Combining online and offline knowledge in UCT"; Fuego and Pachi do the same).
The search then needs no simulations to stop trying self-ataris and first-line moves in an empty
corner, and finds captures and escapes sooner. The evidence, per move ``p`` of the side ``c``:

- capture: ``p`` takes a string in atari (+2, +1 more when the string has several stones or is the
  one the last move played to);
- save-atari: ``p`` is the liberty of an own string in atari and leaves it with two liberties (+2);
- self-atari: ``p`` leaves its own string with one liberty (-1 for a lone stone, which may be a
  throw-in or a nakade; -3 for a larger string);
- shape: how much likelier than an average point professionals are to play the 3x3 shape around
  ``p`` (``obook/search/shapes.py``): log2 of the ratio, from -2 (first line in an empty area, a
  crawl beside a lone own stone) to +3, as good or bad evidence;
- proximity: ``p`` is within distance 2 of the last move (+0.5);
- pass: -1 while more than a quarter of the board is empty.

With ``ladders`` (on by default; ``obook/go/ladder.py`` reads the chase), for either prior: an
escape from atari that runs into a working ladder only adds stones to the capture, so its evidence
is replaced by -4 (whatever its shape says; with the model, by the model's lowest, -3); an atari that
starts a working ladder gets +2 more (above the model's clipping range too).

With ``prior_model`` (the default) the evidence comes from the learned move model instead
(``obook/search/movemodel.py``): a child whose probability among its ``n`` siblings is ``q`` has
``log2(n q)`` units (how much likelier than an average sibling it is), clipped to
``MODEL_EVIDENCE_RANGE``, as good or bad evidence: the same virtual wins in proportion as above, with
the model's weighing of captures, atari, self-atari, shapes and distances in place of the hand-set one.

The prior visits are kept per node (``prior_visits``), so analysis reports real simulations.
"""

from __future__ import annotations

import math

from obook.go.board import (
    EMPTY,
    LAST_MOVE,
    N_EMPTY,
    NO_POINT,
    PASS,
    SIZE,
    WIDTH,
    in_atari,
)
from obook.jit import hot
from obook.go.tactics import liberties_after, mover_code, pattern_code, touches_own


@hot
def move_evidence(b, p, c, shapes):
    """(good, bad) evidence units for the legal move ``p`` of ``c`` (see the module docstring);
    ``shapes`` is the learned shape evidence (``obook.search.shapes``)."""
    w = b.scalars[WIDTH]
    opp = 3 - c
    last = b.scalars[LAST_MOVE]
    good = 0.0
    bad = 0.0
    if p == PASS:
        if b.scalars[N_EMPTY] * 4 > b.scalars[SIZE] * b.scalars[SIZE]:
            bad += 1.0
        return good, bad
    captures = False
    saves = False
    for q in (p - w, p - 1, p + 1, p + w):
        v = b.color[q]
        if v == opp:
            r = b.root[q]
            if in_atari(b, r) and not captures:
                captures = True
                good += 2.0
                if b.string_size[r] > 1 or (last != PASS and last != NO_POINT and b.root[last] == r
                                            and b.color[last] == opp):
                    good += 1.0
        elif v == c and in_atari(b, b.root[q]):
            saves = True  # p, next to the string, is its last liberty
    libs = liberties_after(b, p, c)
    if saves and libs >= 2:
        good += 2.0
    if libs <= 1 and not captures:
        bad += 3.0 if touches_own(b, p, c) else 1.0
    shape = shapes[mover_code(pattern_code(b, p), c)]
    if shape > 0:
        good += shape
    else:
        bad -= shape
    if last != PASS and last != NO_POINT:
        d = abs(p // w - last // w) + abs(p % w - last % w)
        if d <= 2 and b.color[last] != EMPTY:
            good += 0.5
    return good, bad


LADDER_ESCAPE = 4.0  # bad evidence units of an escape into a working ladder (and no good ones)
LADDER_ATARI = 2.0  # good evidence units an atari that starts a working ladder adds


@hot
def prior_for(b, p, c, even, weight, shapes, ladder):
    """(virtual visits, virtual wins) of a new child for move ``p`` of ``c``; ``shapes`` is the
    evidence table of ``obook.search.shapes`` (indexed by the mover's view of the 3x3 code),
    ``ladder`` the move's ladder verdict (``obook.go.ladder.ladder_units``; 0 without reading)."""
    good, bad = move_evidence(b, p, c, shapes)
    if ladder < 0:
        good = 0.0
        bad = LADDER_ESCAPE
    elif ladder > 0:
        good += LADDER_ATARI
    visits = even + weight * (good + bad)
    wins = 0.5 * even + weight * good
    return visits, wins


MODEL_EVIDENCE_RANGE = (-3.0, 4.0)


@hot(inline="always")
def model_prior(probability, siblings, even, weight, ladder):
    """(virtual visits, virtual wins) of a child the move model gives ``probability`` among
    ``siblings`` children, with ``ladder`` its ladder verdict (see the module docstring)."""
    lo, hi = MODEL_EVIDENCE_RANGE
    evidence = min(max(math.log2(max(probability * siblings, 1e-300)), lo), hi)
    if ladder < 0:
        evidence = max(-LADDER_ESCAPE, lo)
    elif ladder > 0:
        evidence += LADDER_ATARI
    good = max(evidence, 0.0)
    bad = max(-evidence, 0.0)
    return even + weight * (good + bad), 0.5 * even + weight * good


__all__ = ["model_prior", "move_evidence", "prior_for"]
