"""The lookups' replay (``obook.book.lookup.replay_moves``, one compiled call) gives what the
``Position`` path gave: the same key, symmetry, legal moves, stones and moves, and for a bad move
the same error as ``obook.book.keys.replay`` (the service answers it as a 422)."""

from __future__ import annotations


import numpy as np
import pytest

from obook.book.keys import BookGameError, canonical_view, replay
from obook.book.lookup import replay_moves
from obook.errors import ObookError
from obook.go.board import BLACK, PASS
from obook.go.vertex import format_vertex
from tests.go.test_replay import random_game


def random_vertices(size: int, superko: bool, moves: int, seed: int) -> list[str]:
    return [format_vertex(point, size) for point in random_game(size, superko, moves, seed)]


@pytest.mark.parametrize("size,superko", [(5, False), (5, True), (9, False), (13, True), (19, False)])
def test_replay_moves_matches_the_position(size, superko):
    for seed in range(4):
        words = random_vertices(size, superko, 30 + 20 * seed, seed)
        words = [w.lower() if i % 3 == 0 else w for i, w in enumerate(words)]  # as callers spell them
        found = replay_moves(size, superko, words)
        position = replay(size, 7.5, superko, words)
        key, symmetries = canonical_view(position)
        assert found.canonical() == (key, symmetries[0])
        assert found.moves == tuple(position.moves)
        assert found.to_move == position.to_move
        assert [p for p in position.points() if found.is_legal(p)] == position.legal_moves()
        placed = {p: n for n, (_, p) in enumerate(position.moves, start=1) if p != PASS}
        expected = sorted(((position.vertex(p), "B" if position.board.color[p] == BLACK else "W", placed.get(p, 0))
                           for p in np.flatnonzero((position.board.color == 1) | (position.board.color == 2)).tolist()),
                          key=lambda s: s[2])
        assert sorted(found.stones) == sorted(expected)
        assert [s[2] for s in found.stones] == sorted(s[2] for s in found.stones)


@pytest.mark.parametrize("words", [
    ["E5", "E5"],  # occupied
    ["E5", "Z9", "E5"],  # no vertex
    ["E5", "J10"],  # off a 9x9 board
    ["E5", "C3", "e5"],  # occupied, spelled lower-case
    ["E5", "E5", "Q"],  # the first bad move is named, whatever comes after
    ["A2", "B2", "B1", "C1", "pass", "A1", "B1"],  # white captures B1 (a ko); black retakes at once
    ["A2", "pass", "B1", "A1"],  # suicide
])
def test_bad_moves_are_named_as_before(words):
    with pytest.raises(BookGameError) as before:
        replay(9, 7.5, False, words)
    with pytest.raises(ObookError) as now:
        replay_moves(9, False, words)
    assert str(now.value) == str(before.value)
