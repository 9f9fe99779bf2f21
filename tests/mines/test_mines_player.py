"""The player: reproducible games, shortcuts that only click safe cells, fallbacks, and the statistics."""

import pytest
from scipy import stats

from obook.mines.game import PLAYING, MinesGame
from obook.mines.player import Player, PlayerConfig
from obook.stats import wilson_interval


def test_player_is_reproducible_and_its_shortcut_only_clicks_safe_cells():
    config = PlayerConfig(sampler="exact", policy="safe-first", sims=200, first="center", shortcut=True)
    player = Player(6, 6, 7, config)
    assert player.play(3).clicks == player.play(3).clicks
    for seed in range(6):
        game = MinesGame(6, 6, 7, seed=seed)
        move = 0
        while game.status == PLAYING:
            cell, result = player.choose(game, move)
            if result is None and game.revealed > 0:
                assert not game.mines[cell]
            game.click(cell)
            move += 1


def test_player_falls_back_to_exact_when_rejection_gives_up():
    config = PlayerConfig(sampler="rejection", sims=50, first="center", max_tries=1)
    record = Player(6, 6, 8, config).play(1)
    assert record.fallback_searches > 0
    assert record.fallback_searches <= record.searches


def test_wilson_interval_matches_scipy():
    for wins, games in [(0, 10), (7, 10), (95, 100), (500, 500)]:
        ci = stats.binomtest(wins, games).proportion_ci(method="wilson")
        assert wilson_interval(wins, games) == pytest.approx((ci.low, ci.high), abs=1e-9)
