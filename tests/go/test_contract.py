"""The game contract, checked by random play as OpenSpiel checks each of its games: at every step of
seeded random games on 5x5, 9x9 and 19x19 (simple ko and positional superko), everything the
Position API promises holds, and a finished game survives an SGF round trip."""

from __future__ import annotations

import random

import pytest

from obook.errors import ObookError
from obook.go import board as rules
from obook.go.board import BLACK, EMPTY, PASS, WHITE
from obook.go.position import Position
from obook.go.sgf import game_to_sgf, read_sgf
from obook.go.symmetry import N_SYMMETRIES, transform_point
from tests.helpers import random_game_moves

CASES = [(5, False, 1), (5, True, 2), (9, False, 3), (9, True, 4), (19, False, 5)]


def check_step(position: Position, rng: random.Random) -> None:
    size = position.size
    empties = [p for p in position.points() if position.board.color[p] == EMPTY]
    black, white = len(position.stones(BLACK)), len(position.stones(WHITE))
    assert black + white + len(empties) == size * size
    legal = set(position.legal_moves())
    assert legal <= set(empties)
    # A legal move can be played, keeps its stone and removes only opponent stones.
    for point in rng.sample(sorted(legal), min(3, len(legal))):
        trial = position.copy()
        mover = trial.to_move
        captured = trial.play(point)
        assert trial.board.color[point] == mover
        assert len(trial.stones(mover)) == len(position.stones(mover)) + 1
        assert len(trial.stones(3 - mover)) == len(position.stones(3 - mover)) - captured
        assert trial.to_move == 3 - mover
        trial.undo()
        assert trial.key == position.key
    # An illegal move is refused with a clear error and changes nothing.
    refused = [p for p in position.points() if p not in legal]
    for point in rng.sample(refused, min(3, len(refused))):
        before = (position.key, len(position.moves))
        with pytest.raises(ObookError):
            position.play(point)
        assert (position.key, len(position.moves)) == before
    # The incremental keys equal a replay from scratch.
    replay = Position(size=size, komi=position.komi, superko=position.superko, moves=list(position.moves))
    assert replay.key == position.key
    assert replay.stone_key == position.stone_key


def check_symmetries(position: Position) -> None:
    """The canonical key is the same for the game under every symmetry of the board."""
    canonical = position.canonical()[0]
    for s in range(N_SYMMETRIES):
        moved = [(c, p if p == PASS else transform_point(p, s, position.size)) for c, p in position.moves]
        other = Position(size=position.size, komi=position.komi, moves=moved)
        assert other.canonical()[0] == canonical


@pytest.mark.parametrize("size, superko, seed", CASES)
def test_random_games_keep_the_contract(size, superko, seed):
    rng = random.Random(seed)
    position = Position(size=size, komi=7.5, superko=superko)
    games = 2 if size < 19 else 1
    for _ in range(games):
        position = Position(size=size, komi=7.5, superko=superko)
        for number, _move in enumerate(random_game_moves(position, rng, max_moves=3 * size * size)):
            if size < 19 or number % 25 == 0:
                check_step(position, rng)
        if not position.is_over:
            position.play(PASS)
            position.play(PASS)
        assert position.is_over
        check_step(position, rng)
        check_symmetries(position)
        # A finished game: the score is the area difference minus komi, and its result says so.
        black_area, white_area = position.area()
        assert black_area + white_area <= size * size
        assert position.score() == black_area - white_area - position.komi
        result = position.result()
        assert result.startswith("B+" if position.score() > 0 else "W+")
        # SGF round trip: the same moves, the same final position, the same komi.
        record = read_sgf(game_to_sgf(position, result=result).encode())
        assert record.position.moves == position.moves
        assert record.position.key == position.key
        assert record.position.komi == position.komi


def test_the_contract_checks_can_fail():
    """A guard for the guard: a position whose incremental key is corrupted fails ``check_step``."""
    position = Position(size=5)
    position.play("C3")
    position.board.scalars[rules.TO_MOVE] = BLACK  # the position now says Black is to move again
    with pytest.raises(AssertionError):
        check_step(position, random.Random(1))
