"""Exact probabilities counted over the frontier (``obook.mines.frontier``): against brute force on small
boards, against the exact sampler's enumeration on intermediate boards, and on expert frontiers too large
to enumerate."""

import math
import time

import numpy as np
import pytest

from obook.errors import ObookError
from obook.mines.frontier import (
    COUNT_OK,
    COUNT_TOO_BIG,
    FREE,
    MINE,
    SAFE,
    frontier_probabilities,
    log_layouts,
    mine_probabilities,
    no_fixed_cells,
    settle,
)
from obook.mines.game import PLAYING, UNKNOWN, MinesGame, neighbour_table, position_from_ascii
from obook.mines.samplers import EXACT_TOO_BIG, exact_prepare, exact_probabilities
from obook.rng import make_rng
from tests.mines.brute import consistent_layouts


def random_positions(p, q, n_mines, seeds, clicks_per_game=60):
    """Positions of seeded games grown by clicking random safe cells (first click in the centre)."""
    rng = np.random.default_rng(11)
    for seed in seeds:
        game = MinesGame(p, q, n_mines, seed=seed)
        game.click((p // 2) * q + q // 2)
        for _ in range(clicks_per_game):
            if game.status != PLAYING:
                break
            yield game
            hidden = np.flatnonzero(game.obs == UNKNOWN)
            game.click(int(rng.choice(hidden[game.mines[hidden] == 0])))


@pytest.mark.parametrize("p,q,n_mines", [(5, 5, 5), (4, 7, 7), (6, 6, 9), (5, 8, 11)])
def test_counted_probabilities_match_brute_force(p, q, n_mines):
    checked = proved = 0
    for game in random_positions(p, q, n_mines, range(12)):
        hidden = int((game.obs == UNKNOWN).sum())
        if hidden <= n_mines or math.comb(hidden, n_mines) > 300_000:
            continue
        truth = consistent_layouts(game.obs, n_mines, p, q).mean(axis=0)
        prob = mine_probabilities(game.obs, p, q, n_mines)
        assert np.allclose(prob, truth, atol=1e-12)
        assert np.array_equal(prob == 0.0, truth == 0.0)  # proved safe: exactly 0
        assert np.array_equal(prob == 1.0, truth == 1.0)  # proved mine: exactly 1
        checked += 1
        proved += int((truth[game.obs == UNKNOWN] == 1.0).sum())
    assert checked >= 10 and proved > 0


def test_single_count_deductions_and_fixed_mines_change_no_probability():
    p, q, mines, obs = position_from_ascii(
        """
        o o o o o
        o x o x o
        o o o . .
        . . . . x
        """
    )
    n_mines = int(mines.sum())
    nbr, deg = neighbour_table(p, q)
    fixed = no_fixed_cells(p * q)
    assert settle(obs, nbr, deg, fixed)
    assert fixed[1 * q + 1] == MINE and fixed[1 * q + 3] == MINE  # walled in by counts
    assert fixed[2 * q + 3] == SAFE  # the top-right 1 already has its mine
    truth = consistent_layouts(obs, n_mines, p, q).mean(axis=0)
    status, prob = frontier_probabilities(obs, n_mines, nbr, deg)
    assert status == COUNT_OK and np.allclose(prob, truth, atol=1e-12)
    known = no_fixed_cells(p * q)
    known[1 * q + 1] = MINE
    status, again = frontier_probabilities(obs, n_mines, nbr, deg, known)
    assert status == COUNT_OK and np.allclose(again, truth, atol=1e-12)
    assert (known == FREE).sum() == p * q - 1  # the caller's array is left alone


def test_counted_probabilities_match_the_enumeration_on_intermediate_boards():
    nbr, deg = neighbour_table(16, 16)
    compared = 0
    for game in random_positions(16, 16, 40, range(3), clicks_per_game=40):
        ex = exact_prepare(game.obs, 40, nbr, deg, 64, 2_000_000, make_rng(0))
        if ex.status == EXACT_TOO_BIG:
            continue
        prob = mine_probabilities(game.obs, 16, 16, 40)
        assert np.allclose(prob, exact_probabilities(ex, 40, 256), atol=1e-12)
        compared += 1
    assert compared >= 50


def test_expert_frontiers_too_large_to_enumerate_are_counted_quickly():
    nbr, deg = neighbour_table(16, 30)
    found = 0
    for game in random_positions(16, 30, 99, range(4), clicks_per_game=120):
        if (game.obs != UNKNOWN).sum() < 150:
            continue
        if exact_prepare(game.obs, 99, nbr, deg, 1, 300_000, make_rng(0)).status != EXACT_TOO_BIG:
            continue
        t0 = time.perf_counter()
        status, prob = frontier_probabilities(game.obs, 99, nbr, deg)
        assert time.perf_counter() - t0 < 2.0
        assert status == COUNT_OK
        assert prob.sum() == pytest.approx(99)  # expected number of mines
        assert prob[game.mines == 1].min() > 0.0 and prob[game.mines == 0].max() < 1.0
        found += 1
        if found == 5:
            return
    raise AssertionError(f"only {found} expert positions beyond the enumeration")


def test_failures_are_statuses_and_clear_errors():
    p, q, mines, obs = position_from_ascii(
        """
        o o o . .
        . x . . x
        """
    )
    nbr, deg = neighbour_table(p, q)
    status, _ = frontier_probabilities(obs, 2, nbr, deg, max_table=3)
    assert status == COUNT_TOO_BIG
    bad = obs.copy()
    bad[1] = 5
    with pytest.raises(ObookError, match="consistent"):
        mine_probabilities(bad, p, q, 2)


@pytest.mark.parametrize("p,q,n_mines", [(5, 5, 5), (6, 6, 9)])
def test_layout_counts_and_the_chances_of_what_a_click_shows(p, q, n_mines):
    """log_layouts counts the consistent layouts; revealing a hidden cell as each possible count splits
    them, so the chances of the counts add up to the cell's chance of being safe (impossible counts,
    e.g. more mines than hidden neighbours, get none)."""
    nbr, deg = neighbour_table(p, q)
    checked = 0
    for game in random_positions(p, q, n_mines, range(5)):
        hidden = np.flatnonzero(game.obs == UNKNOWN)
        if hidden.size <= n_mines or math.comb(hidden.size, n_mines) > 300_000:
            continue
        status, log_total = log_layouts(game.obs, n_mines, nbr, deg)
        assert status == COUNT_OK
        assert math.exp(log_total) == pytest.approx(len(consistent_layouts(game.obs, n_mines, p, q)))
        prob = mine_probabilities(game.obs, p, q, n_mines)
        cell = int(hidden[checked % hidden.size])
        safe = 0.0
        for shown in range(9):
            child = game.obs.copy()
            child[cell] = shown
            status, log_child = log_layouts(child, n_mines, nbr, deg)
            if status == COUNT_OK:
                assert shown <= deg[cell]
                safe += math.exp(log_child - log_total)
        assert safe == pytest.approx(1.0 - prob[cell], abs=1e-12)
        checked += 1
    assert checked >= 10
