"""Rules of Mines: neighbours, the first-click rule, flood reveal, score and end of game, bad input."""

import numpy as np
import pytest
from scipy import stats

from obook.errors import ObookError
from obook.mines.game import (
    LOST,
    PLAYING,
    UNKNOWN,
    WON,
    MinesGame,
    check_board,
    count_around,
    neighbour_table,
    parse_cell,
    parse_size,
    place_mines,
    position_from_ascii,
    reveal,
)
from obook.rng import make_rng


def test_neighbour_table_counts_and_symmetry():
    nbr, deg = neighbour_table(3, 4)
    assert deg[0] == 3 and deg[1] == 5 and deg[5] == 8
    for c in range(12):
        for d in nbr[c, : deg[c]]:
            assert c in nbr[d, : deg[d]]
            assert max(abs(c // 4 - d // 4), abs(c % 4 - d % 4)) == 1


def test_flood_reveal_opens_zero_region_with_true_counts():
    p, q, mines, _ = position_from_ascii(
        """
        . . . . x
        . . . . .
        . . . x .
        x . . . .
        """
    )
    nbr, deg = neighbour_table(p, q)
    obs = np.full(p * q, UNKNOWN, np.int8)
    out = np.zeros(p * q, np.int32)
    shown = reveal(obs, mines, 0, nbr, deg, out)
    expected = """
        . . . 1 #
        . . 1 2 #
        1 1 1 # #
        # # # # #
    """
    want = [row.split() for row in expected.strip().splitlines()]
    for r in range(p):
        for c in range(q):
            v = obs[r * q + c]
            assert want[r][c] == ("#" if v == UNKNOWN else "." if v == 0 else str(v))
    assert shown == int((obs != UNKNOWN).sum())
    assert set(out[:shown].tolist()) == set(np.flatnonzero(obs != UNKNOWN).tolist())


def test_reveal_on_a_mine_changes_nothing():
    p, q, mines, obs = position_from_ascii("o x .\n. . .")
    nbr, deg = neighbour_table(p, q)
    before = obs.copy()
    assert reveal(obs, mines, 1, nbr, deg, np.zeros(p * q, np.int32)) == -1
    assert np.array_equal(obs, before)


@pytest.mark.parametrize("first", [0, 5, 12, 23])
def test_first_click_and_its_neighbours_are_mine_free(first):
    for seed in range(30):
        game = MinesGame(4, 6, 9, seed=seed)
        game.click(first)
        block = {first, *game.nbr[first, : game.deg[first]].tolist()}
        assert int(game.mines.sum()) == 9
        assert not any(game.mines[c] for c in block)
        assert game.obs[first] == 0


def test_jitted_placement_is_uniform_outside_the_first_block():
    p, q, n_mines, first = 4, 5, 6, 6
    nbr, deg = neighbour_table(p, q)
    mines = np.zeros(p * q, np.uint8)
    work = np.zeros(p * q, np.int32)
    block = {first, *nbr[first, : deg[first]].tolist()}
    free = [c for c in range(p * q) if c not in block]
    counts = np.zeros(p * q)
    rng = make_rng(11)
    for _ in range(4000):
        place_mines(mines, n_mines, first, nbr, deg, work, rng)
        assert int(mines.sum()) == n_mines
        counts += mines
    assert all(counts[c] == 0 for c in block)
    assert stats.chisquare(counts[free]).pvalue > 1e-3


def test_winning_game_scores_one_and_losing_keeps_the_score():
    game = MinesGame(5, 5, 4, seed=3)
    game.click(12)
    safe = [c for c in range(25) if not game.mines[c] and game.obs[c] == UNKNOWN]
    for c in safe:
        if game.obs[c] == UNKNOWN:
            game.click(c)
    assert game.status == WON and game.score == 1.0
    with pytest.raises(ObookError, match="game is over"):
        game.click(0)

    game = MinesGame(5, 5, 4, seed=3)
    game.click(12)
    score = game.score
    assert 0 < score < 1
    game.click(int(np.flatnonzero(game.mines)[0]))
    assert game.status == LOST and game.score == score


def test_random_games_keep_their_invariants():
    rng = np.random.default_rng(5)
    for seed in range(40):
        game = MinesGame(6, 7, 10, seed=seed)
        while game.status == PLAYING:
            hidden = np.flatnonzero(game.obs == UNKNOWN)
            game.click(int(rng.choice(hidden)))
            shown = game.obs != UNKNOWN
            assert game.revealed == int(shown.sum())
            assert not (game.mines.astype(bool) & shown).any()
            for c in np.flatnonzero(shown):
                assert game.obs[c] == count_around(game.mines, c, game.nbr, game.deg)
        assert game.status in (WON, LOST)
        assert (game.status == WON) == (game.revealed == 42 - 10)


def test_bad_input_is_reported_clearly():
    with pytest.raises(ObookError, match="at most 7 mines"):
        check_board(4, 4, 8)
    with pytest.raises(ObookError, match="at least one mine"):
        check_board(4, 4, 0)
    with pytest.raises(ObookError, match="ROWSxCOLS"):
        parse_size("4by4")
    assert parse_size("16x30") == (16, 30) and parse_size("expert") == (16, 30)
    with pytest.raises(ObookError, match="off the"):
        parse_cell("4,0", 4, 4)
    assert parse_cell("1,2", 4, 4) == 6
    game = MinesGame(4, 4, 6, seed=0)
    game.click(5)
    with pytest.raises(ObookError, match="already revealed"):
        game.click(5)
