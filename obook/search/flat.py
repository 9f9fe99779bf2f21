"""One-ply Monte-Carlo ("pure" Monte-Carlo): every candidate move gets playouts in turn and the move
with the best mean wins. The seeds' starting point, and the baseline the tree search must beat."""

from __future__ import annotations

from obook.go.board import (
    BLACK,
    N_EMPTY,
    PASS,
    TO_MOVE,
    copy_board,
    is_eye,
    is_legal,
    play,
)
from obook.jit import hot
from obook.playout.policies import playout


@hot
def flat_search(root, work, candidates, n_candidates, policy, rng, komi, scratch, playouts, wins, sq, visits):
    """Spread ``playouts`` round-robin over the candidates; accumulate the mover's rewards."""
    mover = root.scalars[TO_MOVE]
    for i in range(playouts):
        k = i % n_candidates
        copy_board(work, root)
        play(work, candidates[k])
        score, _ = playout(work, policy, rng, komi, scratch)
        if score > 0:
            r = 1.0 if mover == BLACK else 0.0
        elif score < 0:
            r = 0.0 if mover == BLACK else 1.0
        else:
            r = 0.5
        wins[k] += r
        sq[k] += r * r
        visits[k] += 1


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

