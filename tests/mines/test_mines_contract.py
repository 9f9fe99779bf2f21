"""The Mines game contract, checked by random play as OpenSpiel checks its games: at every click of
seeded random games on small and standard boards, what the player sees agrees with the hidden layout,
the exact belief (probabilities and sampled layouts) agrees with what the player sees, bad clicks are
refused without changing anything, and a game replays from its seed and clicks."""

from __future__ import annotations

import random

import numpy as np
import pytest

from obook.errors import ObookError
from obook.mines.game import LOST, PLAYING, UNKNOWN, WON, MinesGame, count_around
from obook.mines.frontier import mine_probabilities
from obook.mines.samplers import sample_layouts

CASES = [(5, 5, 5, 1), (9, 9, 10, 2), (16, 16, 40, 3), (6, 8, 12, 4)]


def check_view(game: MinesGame) -> None:
    shown = game.obs != UNKNOWN
    assert int(shown.sum()) == game.revealed
    for cell in np.nonzero(shown)[0]:
        assert not game.mines[cell]
        assert game.obs[cell] == count_around(game.mines, cell, game.nbr, game.deg)
    assert (game.status == WON) == (game.revealed == game.safe_cells)


def check_belief(game: MinesGame, seed: int) -> None:
    """The exact probabilities are 0 on revealed cells and add up to the mines; exact layouts fit the view."""
    hidden = game.obs == UNKNOWN
    if int(hidden.sum()) <= game.n_mines:
        return
    probabilities = mine_probabilities(game.obs, game.p, game.q, game.n_mines)
    assert np.all(probabilities[~hidden] == 0.0)
    assert np.all((probabilities >= -1e-12) & (probabilities <= 1 + 1e-12))
    assert probabilities.sum() == pytest.approx(game.n_mines)
    assert probabilities[game.mines.astype(bool)].min() > 0.0  # the true layout is never ruled out
    for layout in sample_layouts(game.obs, game.p, game.q, game.n_mines, "exact", 3, seed=seed):
        assert int(layout.sum()) == game.n_mines
        assert not layout[~hidden].any()
        for cell in np.nonzero(~hidden)[0]:
            assert game.obs[cell] == count_around(layout, cell, game.nbr, game.deg)


def check_refusals(game: MinesGame) -> None:
    before = (game.obs.copy(), game.revealed, game.status, list(game.clicks))
    bad = [-1, game.n]
    if game.status == PLAYING:
        bad += [int(c) for c in np.nonzero(game.obs != UNKNOWN)[0][:2]]
    else:
        bad += [int(c) for c in np.nonzero(game.obs == UNKNOWN)[0][:1]]
    for cell in bad:
        with pytest.raises(ObookError):
            game.click(cell)
    after = (game.obs, game.revealed, game.status, game.clicks)
    assert np.array_equal(before[0], after[0]) and before[1:] == after[1:]


@pytest.mark.parametrize("p, q, n_mines, seed", CASES)
def test_random_games_keep_the_contract(p, q, n_mines, seed):
    rng = random.Random(seed)
    outcomes = set()
    for game_number in range(6):
        game = MinesGame(p, q, n_mines, seed=1000 * seed + game_number)
        first = rng.randrange(game.n)
        game.click(first)
        assert game.status != LOST  # the first click and its neighbours are safe
        assert not game.mines[first] and not game.mines[game.nbr[first, : game.deg[first]]].any()
        while True:
            check_view(game)
            check_refusals(game)
            if game.status != PLAYING:
                break
            # The exact sampler enumerates whole frontiers: beyond 9x9 random clicks leave ones too large.
            if game.n <= 81 and len(game.clicks) % 4 == 1:
                check_belief(game, seed=len(game.clicks))
            hidden = [int(c) for c in np.nonzero(game.obs == UNKNOWN)[0]]
            safe = [c for c in hidden if not game.mines[c]]
            # Mostly safe clicks so that games run long; now and then a random one, which may lose.
            game.click(rng.choice(hidden) if rng.random() < 0.1 else rng.choice(safe))
        outcomes.add(game.status)
        replay = MinesGame(p, q, n_mines, seed=game.seed)
        for cell in game.clicks:
            replay.click(cell)
        assert np.array_equal(replay.obs, game.obs) and np.array_equal(replay.mines, game.mines)
        assert (replay.status, replay.revealed) == (game.status, game.revealed)
    assert outcomes <= {WON, LOST}


def test_the_view_check_can_fail():
    """A guard for the guard: a view that disagrees with the layout fails ``check_view``."""
    game = MinesGame(5, 5, 5, seed=3)
    game.click(12)
    game.obs[np.nonzero(game.obs != UNKNOWN)[0][0]] += 1
    with pytest.raises(AssertionError):
        check_view(game)
