"""The opening player of the book's ceiling experiment: deep searches for the first own moves only."""

import pytest

from obook.errors import ObookError
from obook.go.position import Position
from obook.search.opening import OpeningPlayer, own_moves
from obook.search.players import make_player


def test_first_own_moves_search_factor_times_the_budget_then_the_plain_budget():
    player = make_player("playouts=40,opening_moves=2,opening_factor=5,seed=3")
    assert isinstance(player, OpeningPlayer)
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


def test_a_call_budget_is_multiplied_too():
    player = make_player("playouts=40,opening_moves=1,opening_factor=3,seed=3")
    assert player.genmove(Position(size=9), playouts=10).playouts == 30


def test_own_moves_counts_the_side_to_move_only():
    position = Position(size=9)
    assert own_moves(position) == 0
    position.play("E5")
    assert own_moves(position) == 0  # White to move, White has not played
    position.play("pass")
    assert own_moves(position) == 1


@pytest.mark.parametrize("spec", ["opening_moves=-1", "opening_factor=0"])
def test_bad_opening_options_are_refused(spec):
    with pytest.raises(ObookError, match=spec.split("=")[0]):
        make_player(spec)
