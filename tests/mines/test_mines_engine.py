"""BSR-UCT searches against the exhaustive expectimax oracle on boards small enough to solve, the tree
bookkeeping, budgets and bad options."""

import numpy as np
import pytest

from obook.errors import ObookError
from obook.mines.engine import BsrUct
from obook.mines.game import PLAYING, UNKNOWN, MinesGame
from obook.mines.oracle import Oracle

CENTRE_4X4 = {5, 6, 9, 10}  # the four cells away from the edge


def decisive_positions(p, q, n_mines, count, gap=0.04):
    """Positions after a centre click where the best move beats some other move by at least ``gap``."""
    oracle = Oracle(p, q, n_mines)
    found = []
    for seed in range(300):
        game = MinesGame(p, q, n_mines, seed=seed)
        game.click((p // 2) * q + q // 2)
        if game.status != PLAYING:
            continue
        layouts = oracle.consistent_layouts(game.obs)
        if not 3 <= len(layouts) <= 60:
            continue
        values = {int(a): oracle.action_value(game.obs, layouts, a) for a in np.flatnonzero(game.obs == UNKNOWN)}
        best = max(values.values())
        if best - min(values.values()) >= gap and 0 < best < 1:
            found.append((game.obs.copy(), values))
            if len(found) == count:
                return oracle, found
    raise AssertionError("no decisive position found")


ORACLE_5X5, POSITIONS_5X5 = decisive_positions(5, 5, 7, 3)


@pytest.mark.parametrize(
    "sampler,belief,reward", [("rejection", "node", "score"), ("exact", "root", "win"), ("rejection", "root", "score")]
)
def test_first_click_on_4x4_is_a_forced_win_in_the_centre(sampler, belief, reward):
    engine = BsrUct(4, 4, 6, sampler=sampler, belief=belief, reward=reward)
    result = engine.search(np.full(16, UNKNOWN, np.int8), sims=3000, seed=1)
    assert result.cell in CENTRE_4X4
    assert Oracle(4, 4, 6, reward).first_click_value(result.cell) == pytest.approx(1.0)


@pytest.mark.parametrize("index", range(len(POSITIONS_5X5)))
@pytest.mark.parametrize("sampler,belief", [("rejection", "node"), ("exact", "root")])
def test_search_plays_an_optimal_move(index, sampler, belief):
    obs, values = POSITIONS_5X5[index]
    engine = BsrUct(5, 5, 7, sampler=sampler, belief=belief)
    result = engine.search(obs, sims=6000, seed=index)
    assert values[result.cell] >= max(values.values()) - 0.01


def test_metropolis_searches_return_hidden_cells_and_count_visits():
    obs, _ = POSITIONS_5X5[0]
    for sampler in ("metropolis", "metropolis-inherit"):
        engine = BsrUct(5, 5, 7, sampler=sampler)
        result = engine.search(obs, sims=300, seed=2)
        assert obs[result.cell] == UNKNOWN
        assert result.visits.sum() == 300 - 1  # the first simulation stops at the unvisited root
        assert set(result.cells.tolist()) == set(np.flatnonzero(obs == UNKNOWN).tolist())


def test_search_is_reproducible_from_its_seed_and_respects_allowed_cells():
    obs, _ = POSITIONS_5X5[1]
    engine = BsrUct(5, 5, 7, sampler="rejection")
    a = engine.search(obs, sims=500, seed=4)
    b = engine.search(obs, sims=500, seed=4)
    assert np.array_equal(a.visits, b.visits) and a.cell == b.cell
    assert a.nodes <= 500 + 1
    allowed = np.zeros(25, np.uint8)
    hidden = np.flatnonzero(obs == UNKNOWN)
    allowed[hidden[:3]] = 1
    c = engine.search(obs, sims=200, seed=4, allowed=allowed)
    assert set(c.cells.tolist()) == set(hidden[:3].tolist())


def test_time_budget_runs_until_the_time_is_spent():
    engine = BsrUct(5, 5, 7, sampler="exact")
    obs, _ = POSITIONS_5X5[0]
    result = engine.search(obs, seconds=0.2, seed=0)
    assert result.simulations > 1 and result.seconds >= 0.2


def test_budgets_and_modes_are_checked():
    engine = BsrUct(5, 5, 7)
    obs, _ = POSITIONS_5X5[0]
    with pytest.raises(ObookError, match="exactly one budget"):
        engine.search(obs)
    with pytest.raises(ObookError, match="at least 1"):
        engine.search(obs, sims=0)
    with pytest.raises(ObookError, match="belief mode"):
        BsrUct(5, 5, 7, belief="leaf")
    with pytest.raises(ObookError, match="playout policy"):
        BsrUct(5, 5, 7, policy="greedy")
    with pytest.raises(ObookError, match="unknown reward"):
        BsrUct(5, 5, 7, reward="time")
