import pytest

from obook.go.board import BLACK, WHITE
from obook.go.position import Position
from obook.gtp.clock import (
    ABSOLUTE,
    CANADIAN,
    JAPANESE,
    NO_LIMIT,
    GameClock,
    TimeControlError,
    TimeSettings,
    expected_moves_left,
    phase_weight,
)
from obook.search.config import SearchConfig
from obook.search.player import UNLIMITED_PLAYOUTS, MoveBudget


def game_clock(main, byo, stones):
    return GameClock(TimeSettings.from_gtp(main, byo, stones))


def test_gtp_settings_follow_the_specification():
    assert TimeSettings.from_gtp(0, 5, 0).kind == NO_LIMIT  # byo-yomi time with no stones: no limit
    assert TimeSettings.from_gtp(300, 0, 0).kind == ABSOLUTE
    canadian = TimeSettings.from_gtp(60, 30, 10)
    assert (canadian.kind, canadian.main, canadian.period, canadian.stones) == (CANADIAN, 60, 30, 10)
    with pytest.raises(TimeControlError):
        TimeSettings.from_gtp(-1, 0, 0)


def test_kgs_settings():
    assert TimeSettings.from_kgs(["none"]).kind == NO_LIMIT
    japanese = TimeSettings.from_kgs(["byoyomi", "30", "10", "5"])
    assert (japanese.kind, japanese.main, japanese.period, japanese.periods) == (JAPANESE, 30, 10, 5)
    assert TimeSettings.from_kgs(["canadian", "60", "30", "10"]).kind == CANADIAN
    for bad in (["fischer", "1"], ["absolute"], ["absolute", "x"], []):
        with pytest.raises(TimeControlError):
            TimeSettings.from_kgs(bad)


def test_no_clock_means_no_time_budget():
    assert GameClock().move_seconds(BLACK, 81, 81) is None
    assert game_clock(0, 5, 0).move_seconds(BLACK, 81, 81) is None


def test_absolute_time_keeps_a_margin_and_leaves_time_for_the_rest_of_the_game():
    clock = game_clock(60, 0, 0)
    seconds = clock.move_seconds(BLACK, 81, 81)
    assert 0.5 < seconds < 60 / 20


def test_simulated_sudden_death_game_never_runs_out_of_time():
    clock = game_clock(20, 0, 0)
    remaining = 20.0
    empty = 81
    spent_early = spent_late = 0.0
    for move in range(60):  # a 120-move game: longer than almost any 9x9 game
        seconds = clock.move_seconds(BLACK, max(empty, 0), 81)
        remaining -= seconds + clock.overhead
        clock.time_left(BLACK, max(remaining, 0.0), 0)
        assert remaining > 0, f"lost on time at move {move}"
        if move < 15:
            spent_early += seconds
        elif move < 30:
            spent_late += seconds
        empty = max(empty - 2, 4)
    assert spent_early > spent_late


def test_opening_gets_a_larger_share_than_the_endgame():
    assert phase_weight(0.1, 1.6, 0.6) > phase_weight(0.5, 1.6, 0.6) > phase_weight(0.9, 1.6, 0.6)
    assert expected_moves_left(81, 81) > expected_moves_left(10, 81) >= 16


def test_canadian_byo_yomi_divides_the_period_among_its_stones():
    clock = game_clock(0, 30, 10)
    clock.time_left(BLACK, 30, 10)
    seconds = clock.move_seconds(BLACK, 40, 81)
    assert 2.0 < seconds < 3.0
    clock.time_left(BLACK, 4, 1)  # the last stone of the period
    assert 2.5 < clock.move_seconds(BLACK, 40, 81) < 4


def test_main_time_with_byo_yomi_adds_the_safe_byo_yomi_share():
    with_byo = game_clock(60, 10, 1)
    without = game_clock(60, 0, 0)
    assert with_byo.move_seconds(BLACK, 60, 81) > without.move_seconds(BLACK, 60, 81)
    assert with_byo.move_seconds(BLACK, 60, 81) < 60 / 10 + 10  # the main time's share plus one period


def test_japanese_byo_yomi_uses_one_period_less_the_margin():
    clock = GameClock(TimeSettings.from_kgs(["byoyomi", "0", "10", "3"]))
    seconds = clock.move_seconds(WHITE, 50, 81)
    assert 8.5 < seconds < 10


def test_spend_moves_from_main_time_into_byo_yomi():
    clock = game_clock(10, 30, 5)
    clock.spend(BLACK, 4)
    assert clock.clocks[BLACK].main == pytest.approx(6)
    clock.spend(BLACK, 8)  # 6 s of main time, then 2 s of the first period
    black = clock.clocks[BLACK]
    assert black.in_byo_yomi and black.period_left == pytest.approx(28) and black.stones_left == 4
    for _ in range(4):
        clock.spend(BLACK, 1)
    assert black.period_left == pytest.approx(30) and black.stones_left == 5  # a fresh period
    assert clock.clocks[WHITE].main == 10


def test_bad_time_left_is_an_error():
    clock = game_clock(10, 0, 0)
    with pytest.raises(TimeControlError):
        clock.time_left(BLACK, -1, 0)


def test_the_move_budget_is_the_clock_s_seconds_or_else_the_configuration_s():
    counted, timed = SearchConfig(playouts=500), SearchConfig(seconds=5.0)
    position = Position(size=9)
    assert GameClock().move_budget(counted, BLACK, position) == MoveBudget(None, 500)
    assert GameClock().move_budget(timed, BLACK, position) == MoveBudget(5.0, UNLIMITED_PLAYOUTS)
    clock = game_clock(0, 1, 1)  # one second a move
    seconds = clock.move_seconds(BLACK, 81, 81)
    assert 0 < seconds < 1
    assert clock.move_budget(counted, BLACK, position) == MoveBudget(seconds, 500)
    assert clock.move_budget(timed, BLACK, position) == MoveBudget(seconds, UNLIMITED_PLAYOUTS)
