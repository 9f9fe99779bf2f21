"""BSR-UCT against the exhaustive expectimax oracle on boards small enough to solve, plus its bookkeeping."""

import itertools

import numpy as np
import pytest
from scipy import stats

from obook.errors import ObookError
from obook.mines.bsr_uct import (
    BsrUct,
    Player,
    PlayerConfig,
    _playout_safe_first,
    _playout_uniform,
    make_scratch,
    wilson_interval,
)
from obook.mines.game import (
    PLAYING,
    UNKNOWN,
    MinesGame,
    neighbour_table,
    position_from_ascii,
    reveal,
    seed_random,
)
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


def test_safe_first_playout_solves_what_deduction_solves_and_uniform_does_not():
    p, q, mines, obs = position_from_ascii("o o o o o\n. . x . .")
    nbr, deg = neighbour_table(p, q)
    sw = make_scratch(p * q)
    revealed = int((obs != UNKNOWN).sum())
    safe_total = p * q - 1
    seed_random(8)
    finals_safe, finals_uniform = [], []
    for _ in range(300):
        finals_safe.append(_playout_safe_first(obs.copy(), mines, revealed, safe_total, 1, nbr, deg, sw))
        finals_uniform.append(_playout_uniform(obs.copy(), mines, revealed, safe_total, 1, nbr, deg, sw))
    assert all(f == safe_total for f in finals_safe)
    wins = sum(f == safe_total for f in finals_uniform)
    assert stats.binomtest(wins, 300, uniform_win_probability(obs, mines, nbr, deg)).pvalue > 1e-3
    assert wins < 300


def uniform_win_probability(obs, mines, nbr, deg):
    """Clicking hidden cells in a uniformly random order (skipping those already shown): P(win)."""
    hidden = np.flatnonzero(obs == UNKNOWN)
    out = np.zeros(obs.size, np.int32)
    wins = total = 0
    for order in itertools.permutations(hidden):
        o = obs.copy()
        won = True
        for c in order:
            if o[c] != UNKNOWN:
                continue
            if reveal(o, mines, c, nbr, deg, out) < 0:
                won = int((o == UNKNOWN).sum()) == int(mines.sum())
                break
        wins += won
        total += 1
    return wins / total


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


def test_oracle_values_a_hand_solved_position():
    # one mine hides in the last column; a count only ever says "1", so it is a coin toss: win 1/2
    p, q, _, obs = position_from_ascii("o o x\no o .")
    win = Oracle(p, q, 1, "win")
    layouts = win.consistent_layouts(obs)
    assert len(layouts) == 2
    assert win.value(obs, layouts) == pytest.approx(0.5)
    score = Oracle(p, q, 1, "score")
    assert score.value(obs, layouts) == pytest.approx(0.5 * 1 + 0.5 * 4 / 5)
