"""The exact end game (``obook.mines.endgame``): its layouts against brute force, its values and moves
against the expectimax oracle, and its limits."""

import math

import numpy as np
import pytest

from obook.mines.endgame import EndgameSolver, endgame_choice, list_layouts
from obook.mines.frontier import log_layouts, mine_probabilities
from obook.mines.game import PLAYING, UNKNOWN, MinesGame, neighbour_table, position_from_ascii
from obook.mines.oracle import Oracle
from obook.mines.player import Player, PlayerConfig
from tests.mines.brute import consistent_layouts


def positions(p, q, n_mines, seeds, max_clicks=3):
    """Positions after a random first click and up to ``max_clicks`` random safe clicks."""
    rng = np.random.default_rng(5)
    for seed in seeds:
        game = MinesGame(p, q, n_mines, seed=seed)
        game.click(int(rng.integers(p * q)))
        for _ in range(int(rng.integers(0, max_clicks + 1))):
            if game.status != PLAYING:
                break
            hidden = np.flatnonzero((game.obs == UNKNOWN) & (game.mines == 0))
            game.click(int(rng.choice(hidden)))
        if game.status == PLAYING:
            yield game


@pytest.mark.parametrize("p,q,n_mines", [(5, 5, 5), (4, 7, 7)])
def test_listed_layouts_are_the_consistent_layouts_with_their_counts(p, q, n_mines):
    nbr, deg = neighbour_table(p, q)
    checked = 0
    for game in positions(p, q, n_mines, range(20), max_clicks=8):
        truth = consistent_layouts(game.obs, n_mines, p, q)
        listed = list_layouts(game.obs, n_mines, nbr, deg, limit=100_000)
        assert listed is not None and listed.shows.shape[0] == len(truth)
        assert log_layouts(game.obs, n_mines, nbr, deg)[1] == pytest.approx(math.log(len(truth)))
        got = {tuple(row) for row in (listed.shows == -1).astype(np.uint8)}
        hidden_truth = {tuple(z[listed.cells]) for z in truth}
        assert got == hidden_truth
        for r in range(min(5, listed.shows.shape[0])):
            z = np.zeros(p * q, np.uint8)
            z[listed.cells[listed.shows[r] == -1]] = 1
            z[(game.obs == UNKNOWN) & ~np.isin(np.arange(p * q), listed.cells)] = 1  # settled mines
            for c, shown in zip(listed.cells, listed.shows[r]):
                assert shown == (-1 if z[c] else int(z[nbr[c, : deg[c]]].sum()))
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("p,q,n_mines", [(4, 4, 5), (3, 5, 4), (3, 6, 5)])
def test_endgame_value_and_click_are_optimal(p, q, n_mines):
    """The value the recursion gives equals the oracle's optimal win probability, the oracle rates the
    click it returns as optimal, and ``click_value`` of other clicks is the oracle's value of them (the
    oracle floods zeros, the recursion does not: same values)."""
    nbr, deg = neighbour_table(p, q)
    checked = 0
    for game in positions(p, q, n_mines, range(25)):
        oracle = Oracle(p, q, n_mines, "win")
        layouts = oracle.consistent_layouts(game.obs)
        best = oracle.value(game.obs, layouts)
        cell, value = endgame_choice(game.obs, n_mines, nbr, deg, limit=10_000, max_nodes=10**6)
        assert value == pytest.approx(best, abs=1e-12)
        assert oracle.action_value(game.obs, layouts, cell) == pytest.approx(best, abs=1e-12)
        solver = EndgameSolver(list_layouts(game.obs, n_mines, nbr, deg, limit=10_000), max_nodes=10**6)
        for other in solver.cells[:6]:
            assert solver.click_value(int(other)) == pytest.approx(
                oracle.action_value(game.obs, layouts, int(other)), abs=1e-12)
        checked += 1
    assert checked >= 10


def test_a_coin_toss_is_worth_one_half_and_limits_give_none():
    p, q, _, obs = position_from_ascii("o o x\no o .")
    nbr, deg = neighbour_table(p, q)
    cell, value = endgame_choice(obs, 1, nbr, deg)
    assert value == pytest.approx(0.5) and cell in (2, 5)
    assert endgame_choice(obs, 1, nbr, deg, limit=1) is None  # two layouts, one allowed
    assert EndgameSolver(list_layouts(obs, 1, nbr, deg), max_nodes=1).best() is None  # gives up


def test_default_limits_are_read_when_called(monkeypatch):
    """``benchmarks/mines_paired.py`` compares limits by setting the module constants."""
    import obook.mines.endgame as endgame

    p, q, _, obs = position_from_ascii("o o x\no o .")
    nbr, deg = neighbour_table(p, q)
    monkeypatch.setattr(endgame, "ENDGAME_LAYOUTS", 1)
    assert endgame_choice(obs, 1, nbr, deg) is None
    monkeypatch.setattr(endgame, "ENDGAME_LAYOUTS", 2)
    monkeypatch.setattr(endgame, "ENDGAME_NODES", 0)
    assert endgame_choice(obs, 1, nbr, deg) is None
    monkeypatch.setattr(endgame, "ENDGAME_NODES", 10)
    assert endgame_choice(obs, 1, nbr, deg)[1] == pytest.approx(0.5)


def test_open_board_has_too_many_layouts():
    game = MinesGame(16, 30, 99, seed=1)
    game.click(3 * 30 + 3)
    nbr, deg = neighbour_table(16, 30)
    assert list_layouts(game.obs, 99, nbr, deg) is None


def test_the_endgame_player_guesses_optimally_on_a_small_board():
    """On 4x4 with 5 mines every position has few layouts: each guess of the ``endgame`` solver (with the
    mines it proved earlier carried along) is one the oracle rates optimal."""
    p, q, n_mines = 4, 4, 5
    player = Player(p, q, n_mines, PlayerConfig(solver="endgame", first=0))
    guesses = 0
    for seed in range(12):
        game = MinesGame(p, q, n_mines, seed=seed)
        move = 0
        while game.status == PLAYING:
            cell, _ = player.choose(game, move)
            if game.revealed and mine_probabilities(game.obs, p, q, n_mines)[game.obs == UNKNOWN].min() > 0:
                oracle = Oracle(p, q, n_mines, "win")
                layouts = oracle.consistent_layouts(game.obs)
                assert oracle.action_value(game.obs, layouts, cell) == pytest.approx(
                    oracle.value(game.obs, layouts), abs=1e-12)
                guesses += 1
            game.click(cell)
            move += 1
    assert guesses >= 5
