"""Seeded random games for the rule tests (Python-level, so every move can be inspected), and finished
games built from diagrams."""

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


# Black's E1 is in atari; its only liberty D1 is an eye of Black's (C1, D2, E1). Black to move connects
# there and E1 lives; White to move captures it (a ko Black cannot take back at once) and then connects
# at E1. GNU Go 3.8 (--chinese-rules, komi 0.5): Black to move W+1.5, no dead stones; White to move
# W+5.5, dead E1. Playouts alone cannot tell (E1 is a ko in them: Black owns it in about half):
# they called it dead or alive by the seed, whoever was to move (W+4.5 or W+1.5 either way).
ATARI_IN_OWN_EYE = """
    . . X O . . .
    . . X O . . .
    . . X O . . .
    . . X O . . .
    . . X O O O O
    . . X X O . .
    . . X . X O .
    """


def moves_to(diagram: str, to_move: str) -> list[str]:
    """Moves that build ``diagram`` (Black's and White's stones alternating, passes when one side has
    none left) and end with two passes with ``to_move`` to move."""
    position = Position.from_ascii(diagram, to_move="B")
    black = [position.vertex(p) for p in position.stones(rules.BLACK)]
    white = [position.vertex(p) for p in position.stones(rules.WHITE)]
    moves = []
    while black or white:
        moves += [black.pop(0) if black else "pass", white.pop(0) if white else "pass"]
    moves += ["pass", "pass"] if to_move == "B" else ["pass", "pass", "pass"]
    return moves
