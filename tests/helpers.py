"""Seeded random games for the rule tests (Python-level, so every move can be inspected)."""

from __future__ import annotations

import random

from obook.go import board as rules
from obook.go.board import PASS
from obook.go.position import Position


def random_game_moves(position: Position, rng: random.Random, max_moves: int, pass_rate: float = 0.01):
    """Yield moves of a random game played on ``position``: legal, never filling one's own eye,
    with captures preferred half of the time (to exercise captures and ko). Random passes happen
    only while most of the board is empty and never answer a pass, so the game ends only when
    neither side has a move left: a settled position with no dead stones, which every scorer must
    agree on."""
    for _ in range(max_moves):
        if position.is_over:
            return
        c = position.to_move
        candidates = [p for p in position.legal_moves() if not rules.is_eye(position.board, p, c)]
        captures = [p for p in candidates if _captures(position, p, c)]
        early = len(candidates) > position.size * position.size // 2
        if not candidates or (early and position.passes == 0 and rng.random() < pass_rate):
            move = PASS
        elif captures and rng.random() < 0.5:
            move = rng.choice(captures)
        else:
            move = rng.choice(candidates)
        position.play(move)
        yield move


def _captures(position: Position, p: int, c: int) -> bool:
    b = position.board
    w = position.size + 2
    for q in (p - w, p - 1, p + 1, p + w):
        if b.color[q] == 3 - c and rules.in_atari(b, b.root[q]):
            return True
    return False


def claim_game(conn, book_id: int, owner: str, lease_seconds: float, game_id: int | None = None):
    """The lease protocol's claim of a game (``obook.store.jobs.claim``), as the game row it took."""
    from obook.store.games import get_game
    from obook.store.jobs import GAME_JOBS, claim

    taken = claim(conn, GAME_JOBS, book_id, owner, lease_seconds, game_id)
    return get_game(conn, taken) if taken is not None else None
