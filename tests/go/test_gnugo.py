"""The engine against GNU Go 3.8 over GTP: legality, captures and final area scores."""

import random

import pytest

from obook.go import board as rules
from obook.go.board import BLACK, PASS, WHITE
from obook.gtp.client import GTPClient
from obook.go.position import Position
from tests.helpers import random_game_moves

pytestmark = pytest.mark.gnugo

COLOR = {BLACK: "black", WHITE: "white"}


def stones_of(gnugo: GTPClient, color: str) -> set[str]:
    return set(gnugo.send(f"list_stones {color}").split())


def our_stones(position: Position, color: int) -> set[str]:
    return {position.vertex(p) for p in position.stones(color)}


def compare_game(gnugo: GTPClient, size: int, seed: int, legal_sample: int | None) -> int:
    """Play one seeded random game in both engines; compare every step. Returns moves played."""
    rng = random.Random(seed)
    gnugo.send(f"boardsize {size}")
    gnugo.send("clear_board")
    gnugo.send("komi 7.5")
    position = Position(size=size, komi=7.5)
    played = 0
    points = position.points()
    for move in random_game_moves(position, rng, max_moves=6 * size * size):
        color, point = position.moves[-1]
        gnugo.send(f"play {COLOR[color]} {position.vertex(point)}")
        played += 1
        if point != PASS:
            for c in (BLACK, WHITE):
                assert stones_of(gnugo, COLOR[c]) == our_stones(position, c), (seed, played)
        to_move = position.to_move
        empty = [p for p in points if position.board.color[p] == rules.EMPTY]
        checked = empty if legal_sample is None else rng.sample(empty, min(legal_sample, len(empty)))
        for p in checked:
            theirs = gnugo.send(f"is_legal {COLOR[to_move]} {position.vertex(p)}") == "1"
            assert position.is_legal(p) == theirs, (seed, played, position.vertex(p), position.legality(p))
    assert position.is_over
    ours = position.result()
    theirs = gnugo.send("final_score")
    assert ours == theirs, (seed, ours, theirs, position.to_ascii())
    return played


@pytest.fixture(scope="module")
def gnugo(gnugo_path):
    with GTPClient([gnugo_path, "--mode", "gtp", "--chinese-rules", "--level", "0"]) as engine:
        yield engine


@pytest.mark.parametrize("seed", range(30))
def test_9x9_games_agree_with_gnugo(gnugo, seed):
    assert compare_game(gnugo, 9, 9000 + seed, legal_sample=None) > 60


@pytest.mark.parametrize("seed", range(15))
def test_7x7_games_agree_with_gnugo(gnugo, seed):
    assert compare_game(gnugo, 7, 7000 + seed, legal_sample=None) > 30


@pytest.mark.parametrize("seed", range(3))
def test_19x19_games_agree_with_gnugo(gnugo, seed):
    assert compare_game(gnugo, 19, 19000 + seed, legal_sample=25) > 300


@pytest.mark.parametrize("seed", range(3))
def test_13x13_games_agree_with_gnugo(gnugo, seed):
    assert compare_game(gnugo, 13, 13000 + seed, legal_sample=40) > 100
