"""The compiled replay of a move list (``obook.go.replay``) against ``Position``: every prefix's
canonical key is ``canonical_view``'s (the book's statistics are keyed by it: one wrong key and a
lookup silently misses), the legal moves and stones of the last position are ``Position``'s, and an
illegal move is found at the same index for the same reason."""

from __future__ import annotations

import random

import numpy as np
import pytest

from obook.book.keys import canonical_view
from obook.go import board as rules
from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import Position
from obook.go.replay import NO_ERROR, replay


def random_game(size: int, superko: bool, moves: int, seed: int) -> list[int]:
    """A legal game of random moves (a pass now and then, so passes, ko and the side to move vary;
    long on small boards, so stones are captured and points retaken)."""
    rng = random.Random(seed)
    position = Position(size=size, superko=superko)
    points = []
    for _ in range(moves):
        legal = position.legal_moves()
        point = PASS if not legal or rng.random() < 0.04 else rng.choice(legal)
        position.play(point)
        points.append(point)
    return points


CASES = [(5, False, 120), (5, True, 160), (9, False, 150), (9, True, 150), (13, False, 120), (13, True, 60),
         (19, False, 200), (19, True, 80)]


@pytest.mark.parametrize("size,superko,length", CASES)
def test_every_prefix_has_canonical_views_key(size, superko, length):
    for seed in range(3):
        points = random_game(size, superko, length, seed=1000 * size + seed)
        found = replay(size, superko, points, every_prefix=True)
        assert found.error == NO_ERROR
        position = Position(size=size, superko=superko)
        for i, point in enumerate(points + [None]):
            key, symmetries = canonical_view(position)
            assert int(found.keys[i]) == key, (size, seed, i)
            assert int(found.symmetries[i]) == symmetries[0] == position.canonical()[1]
            if point is not None:
                position.play(point)
        assert found.to_move == position.to_move
        assert np.flatnonzero(found.legal).tolist() == sorted(position.legal_moves())
        assert np.array_equal(found.color, position.board.color)
        last = {p: n for n, (_, p) in enumerate(position.moves, start=1) if p != PASS}
        for p in np.flatnonzero((found.color == BLACK) | (found.color == WHITE)).tolist():
            assert found.placed[p] == last[p]


def test_captures_and_the_ko_point_reach_the_key():
    # Black captures at C3's ko: the key must carry the ko point (White may not retake at once).
    position = Position(size=5)
    moves = ["B3", "C3", "C4", "D4", "C2", "D2", "A1", "E3", "D3"]  # D3 takes C3: a ko at C3
    for vertex in moves:
        position.play(vertex)
    assert position.ko_point != rules.NO_POINT
    found = replay(5, False, [Position(size=5).point(v) for v in moves], every_prefix=True)
    assert int(found.keys[-1]) == canonical_view(position)[0]
    assert int(found.keys[-1]) != int(found.keys[-3])


@pytest.mark.parametrize("superko", [False, True])
def test_the_first_illegal_move_is_named_with_the_rules_reason(superko):
    rng = random.Random(7)
    reasons = set()
    for trial in range(60):
        size = rng.choice([5, 9])
        points = random_game(size, superko, rng.randint(5, 80), seed=trial)
        cut = rng.randrange(len(points))
        position = Position(size=size, superko=superko)
        for p in points[:cut]:
            position.play(p)
        illegal = [p for p in position.points() if not position.is_legal(p)]
        if not illegal:
            continue
        bad = rng.choice(illegal)
        found = replay(size, superko, points[:cut] + [bad] + points[cut:])
        assert found.error == cut
        assert found.reason == position.legality(bad)
        reasons.add(found.reason)
        assert found.length == cut
        assert int(found.keys[-1]) == canonical_view(position)[0]  # the position before the bad move
        assert np.array_equal(found.color, position.board.color)
    assert {rules.OCCUPIED} < reasons  # occupied points, and suicides or ko retakes


def test_a_ko_retake_and_a_superko_repetition_are_refused():
    # White takes the ko at C3 and Black retakes at once: KO under either rule.
    p = Position(size=5)
    points = [p.point(v) for v in ["B3", "C3", "C4", "D4", "C2", "D2", "A1", "E3", "D3", "C3"]]
    assert (replay(5, False, points).error, replay(5, False, points).reason) == (9, rules.KO)
    assert replay(5, True, points).reason == rules.KO
    # A 4x4 game (found by a random search) whose 33rd move repeats an earlier position: legal
    # under simple ko, refused under positional superko.
    game = [9, 19, 20, 28, 21, -1, 16, 7, 15, 13, 8, 14, -1, 22, 27, 28, 22, 26, 25, 13, 14, 19, 7, 19, 26, -1,
            28, -1, 13, -1, 10, 19, 9]
    position = Position(size=4, superko=True)
    for point in game[:-1]:
        position.play(point)
    assert position.legality(game[-1]) == rules.SUPERKO
    assert replay(4, False, game).error == NO_ERROR
    found = replay(4, True, game)
    assert (found.error, found.reason) == (32, rules.SUPERKO)
    assert int(found.keys[-1]) == canonical_view(position)[0]
