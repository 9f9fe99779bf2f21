"""Dynamic komi (``dynamic_komi=on``, ``obook/search/dynkomi.py``): Pachi's rule for even games, and
the player that searches with it."""

import math

import pytest

from obook.go.board import BLACK, WHITE
from obook.go.position import Position
from obook.search.config import SearchConfig
from obook.search.dynkomi import DynamicKomi, effective_komi, start_move
from obook.search.mcts import MCTSPlayer
from tests.search.test_search_score import walls


def test_the_extra_komi_grows_by_a_point_while_clearly_winning_and_not_in_the_opening():
    state = DynamicKomi()
    assert state.update(0.95, 5000, 14, 9, BLACK) == 0.0  # move 14 on 9x9: too early
    assert state.update(0.95, 499, 20, 9, BLACK) == 0.0  # too few simulations to act on
    assert state.update(None, 0, 20, 9, BLACK) == 0.0  # nothing known (the tree was not reused)
    assert [state.update(0.9, 800, 20 + k, 9, BLACK) for k in range(3)] == [1.0, 2.0, 3.0]
    assert state.update(0.82, 800, 23, 9, BLACK) == 3.0  # between the zones: kept


def test_a_falling_win_rate_gives_points_back_and_a_ratchet_caps_the_rest_of_the_game():
    state = DynamicKomi(extra=6.0)
    assert state.update(0.7, 800, 30, 9, WHITE) == 2.0 and state.ratchet == 2.0
    assert state.update(0.9, 800, 31, 9, WHITE) == 2.0  # 3 would reach past the ratchet
    assert state.update(0.7, 800, 32, 9, WHITE) == 0.0 and state.ratchet == 0.0
    assert state.update(0.4, 800, 33, 9, WHITE) == 0.0
    assert state.update(0.95, 800, 34, 9, WHITE) == 0.0  # the ratchet at 0 holds for good


def test_losing_below_one_half_after_a_drop_turns_it_off_and_it_is_never_negative():
    state = DynamicKomi(extra=5.0)
    state.update(0.75, 800, 30, 9, BLACK)  # drop to 1, ratchet 1
    assert state.update(0.45, 800, 31, 9, BLACK) == 0.0 and state.ratchet == 0.0
    fresh = DynamicKomi()
    assert fresh.update(0.1, 800, 40, 9, BLACK) == 0.0 and fresh.ratchet == math.inf  # a loser is not helped


def test_the_start_follows_pachi_by_board_size_and_the_komi_counts_for_the_giver():
    assert [start_move(s, BLACK) for s in (7, 9, 13, 15, 19)] == [15, 15, 50, 100, 200]
    assert start_move(19, WHITE) == 150
    assert effective_komi(7.5, 2.0, BLACK) == 9.5  # Black must win by two points more
    assert effective_komi(7.5, 2.0, WHITE) == 5.5  # White, with two points less komi


def won_position(komi):
    """A 9x9 game 16 moves in, given a komi that decides it for Black (to move)."""
    position = Position(size=9, komi=komi)
    position.play_moves("E5 C3 C7 G3 G7 E3 C5 E7 D4 F4 D6 F6 B4 H4 B6 H6")
    assert position.to_move == BLACK
    return position


def test_a_player_clearly_winning_searches_with_more_komi_move_after_move():
    position = won_position(komi=-40.5)
    player = MCTSPlayer(SearchConfig(playouts=800, seed=4, dynamic_komi=True))
    results = [player.genmove(position) for _ in range(4)]  # the same position: the tree is reused
    assert [r.extra_komi for r in results] == [0.0, 1.0, 2.0, 3.0]
    assert [sum(m.visits for m in r.moves) for r in results] == [800, 1600, 2400, 3200]
    assert MCTSPlayer(SearchConfig(playouts=800, seed=4)).genmove(position).extra_komi == 0.0
    player.new_game()
    assert player.genmove(position).extra_komi == 0.0


def test_the_tree_keeps_the_games_score_whatever_komi_the_search_plays_for():
    """The settled walls: B+11.5 with komi 7.5 whatever the search pretends; with 5 points of extra
    komi Black's simulations count with komi 12.5 (B+6.5, still won), but the tree keeps the game's."""
    position = walls("B")
    params = SearchConfig().kernel_params(7.5, effective_komi(7.5, 5.0, BLACK))
    assert params.komi == 12.5 and params.score_shift == 5.0
    assert SearchConfig().kernel_params(7.5).score_shift == 0.0
    dynamic = MCTSPlayer(SearchConfig(playouts=600, seed=3, dynamic_komi=True))
    dynamic._dynamic_komi[BLACK] = DynamicKomi(extra=5.0)  # as if earlier moves had given it
    assert len(position.moves) < start_move(9, BLACK)  # walls has no history: the extra komi stays as it is
    result = dynamic.genmove(position)
    assert result.extra_komi == 5.0
    assert result.score_mean == pytest.approx(11.5, abs=1.5) and result.best.score_mean == pytest.approx(11.5, abs=0.5)
    assert result.winrate > 0.9  # B+6.5 against the search's komi: still a win


def test_a_falling_win_rate_gives_the_points_back_and_the_search_starts_afresh():
    position = won_position(komi=7.5)  # White is ahead here: Black's win rate is about one quarter
    player = MCTSPlayer(SearchConfig(playouts=800, seed=4, dynamic_komi=True))
    assert player.genmove(position).extra_komi == 0.0
    reused = player.genmove(position)
    assert sum(m.visits for m in reused.moves) == 1600  # the first search's tree was kept
    player._dynamic_komi[BLACK].extra = 4.0  # as if the earlier moves had been clearly won
    dropped = player.genmove(position)
    assert dropped.extra_komi == 0.0 and player._dynamic_komi[BLACK].ratchet == 0.0
    assert sum(m.visits for m in dropped.moves) == 800  # counted with more komi: thrown away


def test_no_resignation_on_win_rates_counted_with_extra_komi():
    position = won_position(komi=-40.5)
    player = MCTSPlayer(SearchConfig(playouts=800, seed=4, dynamic_komi=True, resign_threshold=1.01))
    first = player.genmove(position)
    assert first.extra_komi == 0.0 and first.resign  # a threshold above 1 resigns even a won game...
    second = player.genmove(position)
    assert second.extra_komi == 1.0 and not second.resign  # ...but not on a search under extra komi
