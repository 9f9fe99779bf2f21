"""The candidate moves of the one-ply (pure) Monte-Carlo players: what ``mcplayer.py`` samples at
the root and ``depth2`` at the replies."""

from __future__ import annotations

from obook.go.board import N_EMPTY, PASS, TO_MOVE, is_eye, is_legal
from obook.jit import hot


@hot
def candidate_moves(b, out):
    """Legal non-eye moves of the side to move, then PASS; returns how many."""
    c = b.scalars[TO_MOVE]
    n = 0
    for i in range(b.scalars[N_EMPTY]):
        p = b.empties[i]
        if is_legal(b, p, c) and not is_eye(b, p, c):
            out[n] = p
            n += 1
    out[n] = PASS
    return n + 1

