"""``benchmarks/opening_player.py``, the opening player of the book's ceiling experiment: deep
searches for the first own moves only."""

import os
import sys

import pytest

from obook.errors import ObookError
from obook.go.position import Position
from obook.search.players import make_player

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from opening_player import OpeningPlayer, own_moves  # noqa: E402


def test_first_own_moves_search_factor_times_the_budget_then_the_plain_budget():
    player = OpeningPlayer(make_player("playouts=40,seed=3"), moves=2, factor=5)
    position = Position(size=9, komi=7.5)
    spent = []
    for _ in range(6):  # three moves each side: the player plays both
        result = player.genmove(position)
        spent.append(result.playouts)
        position.play(result.move)
    assert spent == [200, 200, 200, 200, 40, 40]
    assert player.deep_moves == 4
    player.new_game()
    assert player.deep_moves == 0
    assert player.genmove(Position(size=9, komi=7.5)).playouts == 200


def test_a_repeated_position_plays_the_cached_deep_move_in_any_orientation(tmp_path):
    """``--cache``: a deep search's move is kept by canonical position, so the same position (or a
    mirror image of it) in a later game or another process is not searched again."""
    cache = tmp_path / "deep.sqlite"
    first = OpeningPlayer(make_player("playouts=40,seed=3"), moves=3, factor=5, cache_path=cache)
    position = Position.from_moves("C4", size=9, komi=7.5)
    searched = first.genmove(position)
    assert searched.playouts == 200
    other = OpeningPlayer(make_player("playouts=40,seed=3"), moves=3, factor=5, cache_path=cache)
    again = other.genmove(Position.from_moves("C4", size=9, komi=7.5))
    assert (again.move, again.playouts) == (searched.move, 0) and other.cache.hits == 1
    mirrored = Position.from_moves("G4", size=9, komi=7.5)  # C4 under the left-right mirror (off the diagonals,
    # so the position has no symmetry of its own and one move answers)
    move = other.genmove(mirrored).move
    assert mirrored.vertex(move) == _mirror(position.vertex(searched.move))
    plainer = OpeningPlayer(make_player("playouts=40,seed=3"), moves=3, factor=6, cache_path=cache)
    assert plainer.genmove(Position.from_moves("C4", size=9, komi=7.5)).playouts == 240  # another deep budget


def _mirror(vertex: str) -> str:
    if vertex.lower() == "pass":
        return vertex
    columns = "ABCDEFGHJ"
    return columns[8 - columns.index(vertex[0])] + vertex[1:]


def test_a_call_budget_is_multiplied_too():
    player = OpeningPlayer(make_player("playouts=40,seed=3"), moves=1, factor=3)
    assert player.genmove(Position(size=9), playouts=10).playouts == 30


def test_own_moves_counts_the_side_to_move_only():
    position = Position(size=9)
    assert own_moves(position) == 0
    position.play("E5")
    assert own_moves(position) == 0  # White to move, White has not played
    position.play("pass")
    assert own_moves(position) == 1


@pytest.mark.parametrize("moves, factor, word", [(-1, 100.0, "moves"), (2, 0.0, "factor")])
def test_bad_opening_options_are_refused(moves, factor, word):
    with pytest.raises(ObookError, match=word):
        OpeningPlayer(make_player("playouts=40"), moves, factor)


def test_the_search_options_no_longer_know_the_experiment():
    with pytest.raises(ObookError, match="unknown search option"):
        make_player("opening_moves=2")


def test_the_ceiling_benchmark_starts_this_player_as_engine_a():
    from book_ceiling import deep_engine

    engine = deep_engine("playouts=100", moves=3, factor=100.0)
    assert engine.is_obook and engine.config.playouts == 100
    assert engine.argv[1].endswith("opening_player.py")
    assert engine.argv[2:] == ["--config", "playouts=100", "--moves", "3", "--factor", "100"]
