"""The candidate moves of the one-ply (pure) Monte-Carlo players: what ``mcplayer.py`` samples at
the root and ``depth2`` at the replies, and what the random player picks from; and
``superko_allowed``, the root filter of every player (MCTS too): no move that repeats a position."""

from __future__ import annotations

import numpy as np

from obook.go import board as rules
from obook.go.board import EMPTY, N_EMPTY, PASS, TO_MOVE, is_eye, is_legal
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


def superko_allowed(position: Position) -> tuple[np.ndarray, bool]:
    """``allowed[p]`` is 1 where the side to move may play under positional superko (the root's
    children are restricted to these, ``kernel.expand_root``), and whether a move that simple ko
    allows repeats an earlier position. The search never plays such a move, under simple ko too: it
    is legal there, but it is how a game cycles (a capture cycle repeated to the move cap)."""
    board = position.board
    color = position.to_move
    allowed = np.zeros(board.color.shape[0], np.uint8)
    repeats = False
    for p in position.points():
        if board.color[p] != EMPTY or rules.simple_legality(board, p, color) != rules.LEGAL:
            continue
        if rules.superko_legality(board, p, color) == rules.LEGAL:
            allowed[p] = 1
        else:
            repeats = True
    return allowed, repeats


def root_candidates(position: Position) -> list[int]:
    """Legal non-eye moves of the side to move, then PASS, without a move that recreates an earlier
    position: forbidden under positional superko, legal under simple ko but how a game cycles to
    the move cap, so the search never plays it (as the MCTS root: ``superko_allowed``)."""
    candidates = board_candidates(position.board)
    allowed, repeats = superko_allowed(position)
    if not (repeats or position.superko):
        return candidates
    return [p for p in candidates if p == PASS or allowed[p]]
