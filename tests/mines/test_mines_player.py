"""The player: reproducible games, shortcuts that only click safe cells, fallbacks, the greedy solver, and
the statistics."""

import numpy as np
import pytest
from scipy import stats

from obook.errors import ObookError
from obook.mines.frontier import mine_probabilities
from obook.mines.game import PLAYING, UNKNOWN, MinesGame, neighbour_table
from obook.mines.guesses import NEAR_SAFEST, TIE, greedy_choice
from obook.mines.player import Player, PlayerConfig, play_games
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


@pytest.mark.parametrize("solver,margin", [("greedy", 0.0), ("lookahead", NEAR_SAFEST)])
def test_exact_solvers_click_proved_safe_cells_else_guess_among_the_safest(solver, margin):
    """greedy guesses a least likely cell, lookahead one at most ``NEAR_SAFEST`` likelier; both click a
    proved-safe cell whenever there is one, and replay a game from its seed."""
    player = Player(6, 6, 7, PlayerConfig(solver=solver, first="center"))
    assert player.play(5).clicks == player.play(5).clicks
    guesses = 0
    for seed in range(8):
        game = MinesGame(6, 6, 7, seed=seed)
        move = 0
        while game.status == PLAYING:
            cell, result = player.choose(game, move)
            assert result is None
            if game.revealed:
                prob = mine_probabilities(game.obs, 6, 6, 7)
                lowest = prob[game.obs == UNKNOWN].min()
                assert prob[cell] <= lowest * (1 + margin) + TIE
                if lowest == 0.0:
                    assert prob[cell] == 0.0 and not game.mines[cell]
                else:
                    guesses += 1
            game.click(cell)
            move += 1
    assert guesses > 0


def test_greedy_breaks_ties_towards_the_fewest_hidden_neighbours():
    p, q = 5, 6
    nbr, deg = neighbour_table(p, q)
    obs = np.full(p * q, UNKNOWN, np.int8)
    prob = np.full(p * q, 0.2)
    assert greedy_choice(obs, prob, deg, nbr) == 0  # a corner
    prob[0] = prob[q - 1] = 0.3
    assert greedy_choice(obs, prob, deg, nbr) == (p - 1) * q  # the next corner
    prob[2 * q + 2] = 0.1
    assert greedy_choice(obs, prob, deg, nbr) == 2 * q + 2  # a lower probability beats any tie-break


@pytest.mark.parametrize("solver", ["greedy", "lookahead", "endgame"])
def test_exact_solvers_win_most_beginner_games(solver):
    """All three win about 97% of beginner games from (2, 2) (docs/mines.md); 180 of 200 is far below that
    and far above what a solver without exact probabilities manages."""
    wins = sum(r.won for r in play_games(9, 9, 10, PlayerConfig(solver=solver, first=20), 200))
    assert wins >= 180


def test_unknown_solver_is_a_clear_error():
    with pytest.raises(ObookError, match="unknown solver"):
        Player(4, 4, 3, PlayerConfig(solver="minimax"))
