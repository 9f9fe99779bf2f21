"""Belief samplers against brute force: every consistent layout is equally likely under the first-click rule.

Positions come from real games on small boards, chosen (deterministically) so that the frontier can hold
different numbers of mines: then the interior weighting C(interior, mines left) matters, and a sampler that
got it wrong would fail the chi-square test.
"""

import numpy as np
import pytest
from scipy import stats

from obook.errors import ObookError
from obook.mines.game import (
    PLAYING,
    UNKNOWN,
    MinesGame,
    neighbour_table,
    position_from_ascii,
)
from obook.mines.frontier import mine_probabilities
from obook.mines.samplers import (
    draw_metropolis,
    make_work,
    prepare_exact,
    exact_probabilities,
    sample_layouts,
)
from obook.rng import make_rng
from tests.mines.brute import consistent_layouts, frontier_mask


def find_positions(p, q, n_mines, count, lo=8, hi=60):
    """The first ``count`` positions (centre click) whose frontier mine count varies across layouts."""
    found = []
    for seed in range(500):
        game = MinesGame(p, q, n_mines, seed=seed)
        game.click((p // 2) * q + q // 2)
        if game.status != PLAYING:
            continue
        layouts = consistent_layouts(game.obs, n_mines, p, q)
        front = frontier_mask(game.obs, p, q)
        interior = int(((game.obs == UNKNOWN) & ~front).sum())
        if lo <= len(layouts) <= hi and interior > 0 and len({int(z[front].sum()) for z in layouts}) >= 2:
            found.append((game.obs.copy(), layouts))
            if len(found) == count:
                return found
    raise AssertionError("no suitable test position found")


POSITIONS = [(4, 6, 6, *pos) for pos in find_positions(4, 6, 6, 1)] + [
    (5, 6, 8, *pos) for pos in find_positions(5, 6, 8, 1)
]


def layout_chisquare(samples, layouts):
    """Chi-square p-value of the sampled layouts against the uniform law on ``layouts``."""
    index = {z.tobytes(): i for i, z in enumerate(layouts)}
    counts = np.zeros(len(layouts))
    for z in samples:
        key = z.tobytes()
        assert key in index, "sampler returned an inconsistent layout"
        counts[index[key]] += 1
    return stats.chisquare(counts).pvalue


def enumerated_probabilities(obs, p, q, n_mines):
    """The exact sampler's probabilities (its enumeration), beside the counted ones of ``frontier``."""
    nbr, deg = neighbour_table(p, q)
    return exact_probabilities(prepare_exact(obs, n_mines, nbr, deg), n_mines, p * q)


@pytest.mark.parametrize("probabilities", [mine_probabilities, enumerated_probabilities])
@pytest.mark.parametrize("p,q,n_mines,obs,layouts", POSITIONS)
def test_exact_probabilities_match_brute_force(p, q, n_mines, obs, layouts, probabilities):
    prob = probabilities(obs, p, q, n_mines)
    assert np.allclose(prob, layouts.mean(axis=0), atol=1e-12)


@pytest.mark.parametrize("probabilities", [mine_probabilities, enumerated_probabilities])
def test_exact_probabilities_with_several_components_and_interior(probabilities):
    p, q, mines, obs = position_from_ascii(
        """
        o o o . o o o
        . x . . . x .
        x . . . . . x
        """
    )
    n_mines = int(mines.sum()) + 1
    layouts = consistent_layouts(obs, n_mines, p, q)
    assert len({int(z[frontier_mask(obs, p, q)].sum()) for z in layouts}) >= 2
    assert np.allclose(probabilities(obs, p, q, n_mines), layouts.mean(axis=0), atol=1e-12)


@pytest.mark.parametrize("sampler", ["exact", "rejection"])
@pytest.mark.parametrize("p,q,n_mines,obs,layouts", POSITIONS)
def test_consistent_samplers_pass_chisquare(sampler, p, q, n_mines, obs, layouts):
    samples = sample_layouts(obs, p, q, n_mines, sampler, 40 * len(layouts), seed=17)
    assert layout_chisquare(samples, layouts) > 1e-3


@pytest.mark.parametrize("p,q,n_mines,obs,layouts", POSITIONS)
def test_metropolis_with_inheritance_converges_to_the_belief(p, q, n_mines, obs, layouts):
    samples = sample_layouts(obs, p, q, n_mines, "metropolis-inherit", 40 * len(layouts), seed=5, trials=60,
                           burn_in=2000)
    assert layout_chisquare(samples, layouts) > 1e-3


@pytest.mark.parametrize("p,q,n_mines,obs,layouts", POSITIONS)
def test_metropolis_error_shrinks_with_the_number_of_steps(p, q, n_mines, obs, layouts):
    exact = layouts.mean(axis=0)
    consistent = {z.tobytes() for z in layouts}
    errors, fractions = [], []
    for trials in (2, 20, 400):
        samples = sample_layouts(obs, p, q, n_mines, "metropolis", 3000, seed=9, trials=trials)
        errors.append(np.abs(samples.mean(axis=0) - exact).max())
        fractions.append(np.mean([z.tobytes() in consistent for z in samples]))
    assert errors[0] > errors[1] > errors[2]
    assert fractions[0] < fractions[2]
    assert fractions[2] > 0.99
    assert errors[2] < 0.05


def test_inherited_chain_recovers_from_mines_on_revealed_cells():
    p, q, n_mines, obs, layouts = POSITIONS[0]
    work = make_work(p * q, n_mines)
    nbr, deg = neighbour_table(p, q)
    shown = np.flatnonzero(obs != UNKNOWN)
    work.mine_cell[:] = shown[:n_mines]  # a stale state: every mine on a revealed cell
    work.has_chain[0] = 1
    z = np.zeros(p * q, np.uint8)
    left = draw_metropolis(obs, n_mines, nbr, deg, work, z, 2000, True, make_rng(3))
    assert left == 0
    assert z.tobytes() in {l.tobytes() for l in layouts}


def test_sampler_failures_are_clear_errors():
    p, q, n_mines, obs, _ = POSITIONS[1]
    with pytest.raises(ObookError, match="gave up"):
        sample_layouts(obs, p, q, n_mines, "rejection", 5, seed=0, max_tries=1)
    with pytest.raises(ObookError, match="unknown sampler"):
        sample_layouts(obs, p, q, n_mines, "gibbs", 5)
    bad = obs.copy()
    bad[np.flatnonzero(obs > 0)[0]] = 8
    with pytest.raises(ObookError, match="consistent"):
        sample_layouts(bad, p, q, n_mines, "exact", 5)
    with pytest.raises(ObookError, match="hidden cells"):
        sample_layouts(np.zeros(p * q, np.int8), p, q, n_mines, "exact", 5)


def test_exact_probabilities_stay_exact_when_solutions_overflow_the_reservoir():
    from obook.mines.samplers import (
        EXACT_SAMPLED,
        exact_draw,
        exact_prepare,
        exact_probabilities,
    )

    p, q, n_mines, obs, layouts = POSITIONS[1]
    nbr, deg = neighbour_table(p, q)
    ex = exact_prepare(obs, n_mines, nbr, deg, 1, 10**7, make_rng(0))
    assert ex.status == EXACT_SAMPLED
    assert np.allclose(exact_probabilities(ex, n_mines, p * q), layouts.mean(axis=0), atol=1e-12)
    consistent = {z.tobytes() for z in layouts}
    z = np.zeros(p * q, np.uint8)
    scratch = np.zeros(p * q, np.int32)
    rng = make_rng(1)
    for _ in range(200):
        exact_draw(ex, n_mines, z, scratch, rng)
        assert z.tobytes() in consistent


@pytest.mark.parametrize("sampler", ["rejection", "metropolis", "metropolis-inherit", "exact"])
def test_draws_are_reproducible_from_their_seed_alone(sampler):
    p, q, n_mines, obs, _ = POSITIONS[0]
    a = sample_layouts(obs, p, q, n_mines, sampler, 30, seed=7, trials=20)
    sample_layouts(obs, p, q, n_mines, sampler, 30, seed=8, trials=20)  # draws in between change nothing
    b = sample_layouts(obs, p, q, n_mines, sampler, 30, seed=7, trials=20)
    c = sample_layouts(obs, p, q, n_mines, sampler, 30, seed=8, trials=20)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
