"""The time manager: its stop rule and bank on given numbers, and a real search that stops early
on a position with one winning move."""

import io
import time

import numpy as np
import pytest

from obook.errors import ObookError
from obook.go.position import Position
from obook.gtp.engine import GTPEngine
from obook.search.config import SearchConfig
from obook.search.players import make_player
from obook.search.timing import RootSummary, TimeBank, own_moves_left, summarize_root

from tests.search.test_mcts import CAPTURING_RACE

SETTLED = RootSummary(first=550.0, second=30.0, first_has_best_value=True)
CLOSE = RootSummary(first=300.0, second=250.0, first_has_best_value=True)
OVERTAKEN_IN_VALUE = RootSummary(first=550.0, second=30.0, first_has_best_value=False)


def test_summary_reads_the_two_most_visited_and_whether_the_first_has_the_best_rate():
    visits = np.array([10.0, 300.0, 120.0, 0.0])
    wins = np.array([9.0, 150.0, 90.0, 0.0])
    summary = summarize_root(visits, wins)
    assert (summary.first, summary.second) == (300.0, 120.0)
    assert not summary.first_has_best_value  # 0.75 on 120 visits beats 0.5 on 300
    assert summary.unstable
    # a move below a tenth of the first's visits does not count against it, however high its rate
    summary = summarize_root(np.array([20.0, 300.0, 25.0]), np.array([19.0, 150.0, 10.0]))
    assert summary.first_has_best_value and not summary.unstable
    assert not summarize_root(np.zeros(0), np.zeros(0)).unstable


def test_early_stop_only_when_the_runner_up_cannot_catch_up():
    manager = TimeBank()
    # 600 simulations in 0.6 s: 400 more fit in the 0.4 s left; the runner-up lacks 520
    assert manager.should_stop(1.0, 0.6, 600, SETTLED)
    assert not manager.should_stop(1.0, 0.6, 600, CLOSE)
    # the same lead, but early in the search (the rate is not known yet) or with more time left
    assert not manager.should_stop(1.0, 0.2, 600, SETTLED)
    assert not manager.should_stop(1.0, 0.3, 600, SETTLED)


def test_an_unstable_move_spends_the_bank_and_no_more():
    manager = TimeBank(extend=1.0)
    assert manager.should_stop(1.0, 1.0, 2000, CLOSE)  # nothing saved yet: stop at the base
    manager.charge(1.0, 0.4)
    manager.charge(1.0, 0.7)
    assert manager.bank == pytest.approx(0.9)
    # the last move of a game (one move left) may spend all of it
    assert not manager.should_stop(1.0, 1.2, 2000, CLOSE)
    assert not manager.should_stop(1.0, 1.2, 2000, OVERTAKEN_IN_VALUE)
    assert manager.should_stop(1.0, 1.2, 2000, SETTLED, moves_left=10)  # settled past its target: no reason to go on
    assert manager.should_stop(1.0, 1.95, 2000, CLOSE)  # the bank is spent
    manager.charge(1.0, 1.95)
    assert manager.bank == pytest.approx(0.0)
    manager.extend = 0.5
    manager.charge(1.0, 0.0)
    manager.charge(1.0, 0.0)
    assert manager.should_stop(1.0, 1.5, 2000, CLOSE)  # capped at extend x base however rich
    manager.new_game()
    assert manager.bank == 0.0


def test_the_bank_is_spread_over_the_moves_left():
    manager = TimeBank(extend=1.0)
    manager.bank = 3.0
    # ten moves left: each gets a target of 1.3 s; a settled one stops there, an unstable one may
    # go on with the rest of the bank up to extend x base
    assert not manager.should_stop(1.0, 1.25, 100_000, SETTLED, moves_left=10)
    assert manager.should_stop(1.0, 1.3, 100_000, SETTLED, moves_left=10)
    assert not manager.should_stop(1.0, 1.9, 100_000, CLOSE, moves_left=10)
    assert manager.should_stop(1.0, 2.0, 100_000, CLOSE, moves_left=10)
    # the early stop looks at the target, not the base: 520 behind, 400 simulations a second
    assert not manager.should_stop(1.0, 0.6, 240, SETTLED, moves_left=1)  # 1.4 s to the target of 2 s
    assert manager.should_stop(1.0, 0.6, 240, SETTLED, moves_left=1000)
    assert own_moves_left(81, 9) == pytest.approx(30.375)
    assert own_moves_left(50, 9) == pytest.approx(14.875)
    assert own_moves_left(20, 9) == 4  # never fewer than MIN_MOVES_LEFT


def test_a_search_with_one_winning_move_stops_early_and_banks_the_rest():
    position = Position.from_ascii(CAPTURING_RACE, to_move="W", komi=0.5)
    make_player("playouts=64,seed=3").genmove(position)  # compiled before the clock counts
    player = make_player("seconds=1,time_manager=on,seed=3")
    result = player.genmove(position)
    assert position.vertex(result.move) == "A1"
    assert result.seconds < 0.9
    assert player.time_bank.bank == pytest.approx(1.0 - result.seconds, abs=0.05)
    plain = make_player("seconds=0.3,seed=3")
    assert plain.genmove(position).seconds >= 0.3


def test_time_manager_options_are_checked():
    with pytest.raises(ObookError, match="time_extend"):
        SearchConfig.from_spec("time_extend=-1")
    with pytest.raises(ObookError, match="time_manager"):
        SearchConfig.from_spec("time_manager=on,processes=2")


def test_an_unstable_move_extends_but_never_past_the_clock_s_deadline():
    # White answers E5 (hand-set priors: the model prefers one answer): the best answers come in
    # symmetric twins with about equal visits, so the
    # most visited move stays unstable and the search draws on its bank ...
    position = Position.from_moves("E5", size=9)
    make_player("playouts=64,seed=3").genmove(position)
    spent = []
    for seed in (4, 5, 6):  # one search may settle by chance; three all settling would be a change
        player = make_player(f"seconds=0.2,time_manager=on,time_extend=10,seed={seed},prior_model=off")
        player.time_bank.bank = 100.0
        spent.append(player.genmove(position).seconds)
    assert max(spent) > 0.3
    # ... unless a deadline stops it: GTP gives every search the clock's share as its deadline
    engine = GTPEngine("seconds=0.2,time_manager=on,time_extend=10,seed=4,prior_model=off", log=io.StringIO())
    engine.handle("time_settings 0 1 1")  # byo-yomi: 1 s for each move
    engine.handle("play b E5")
    engine.player.time_bank.bank = 100.0
    started = time.perf_counter()
    engine.handle("genmove w")
    assert time.perf_counter() - started < 1.0
