"""The candidate moves of the one-ply (pure) Monte-Carlo players: what ``mcplayer.py`` samples at
the root and ``depth2`` at the replies, and what the random player picks from."""

from __future__ import annotations

import numpy as np

from obook.go.board import N_EMPTY, PASS, TO_MOVE, is_eye, is_legal
from obook.go.position import Position
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



def board_candidates(board) -> list[int]:
    """``candidate_moves`` of a board, as a list (simple ko only)."""
    out = np.zeros(board.color.shape[0] + 1, np.int64)
    n = int(candidate_moves(board, out))
    return [int(p) for p in out[:n]]


def root_candidates(position: Position) -> list[int]:
    """Legal non-eye moves of the side to move, then PASS; under positional superko the moves it
    forbids are left out (the board alone knows only simple ko)."""
    if not position.superko:
        return board_candidates(position.board)
    mover = position.to_move
    return [p for p in position.legal_moves() if not is_eye(position.board, p, mover)] + [PASS]
