"""The pure Monte-Carlo family: pruning statistics on constructed means and variances, the stop rules,
the temperature playouts, the parallel master/slave pruning against the sequential one, and seeds."""

import math

import numpy as np
import pytest

from obook.errors import ObookError
from obook.go.board import BLACK, WHITE, new_board
from obook.go.position import Position
from obook.search.config import SearchConfig
from obook.search.mcplayer import MonteCarloPlayer, stage_plan
from obook.search.players import make_player
from obook.search.pruning import (
    CONTINUE,
    N,
    STOP_EQUAL,
    STOP_ONE_LEFT,
    SUM,
    SUM_SQ,
    best_active_move,
    progressive_pruning,
    sigma_of,
    stop_reason,
)

ESCAPE = """
    . . . . . . .
    . . . . . . .
    . . O . . . .
    . O X O . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    """


def moves_with(*rows):
    """Statistics rows from (samples, mean, standard deviation of one sample)."""
    stats = np.zeros((len(rows), 4))
    for k, (n, mean, sd) in enumerate(rows):
        stats[k, N] = n
        stats[k, SUM] = n * mean
        stats[k, SUM_SQ] = n * (sd * sd + mean * mean)
    return stats


def prune(stats, rd, min_games=0, soft=False, active=None):
    active = np.ones(len(stats), np.int64) if active is None else active
    left = progressive_pruning(stats, len(stats), active, rd, min_games, soft)
    return active, left


# --- the statistics -----------------------------------------------------------------------------

def test_sigma_is_the_standard_deviation_of_the_mean():
    stats = moves_with((100, 10.0, 20.0), (400, 0.0, 20.0), (0, 0.0, 0.0))
    assert sigma_of(stats, 0) == pytest.approx(2.0)
    assert sigma_of(stats, 1) == pytest.approx(1.0)
    assert math.isinf(sigma_of(stats, 2))


def test_a_move_is_pruned_when_its_right_bound_is_below_the_best_moves_left_bound():
    # sigma = 1 for each: best m_l = 10 - rd; move 1's m_r = 5 + rd; move 2's m_r = 9 + rd.
    stats = moves_with((100, 10.0, 10.0), (100, 5.0, 10.0), (100, 9.0, 10.0))
    active, left = prune(stats, rd=1.0)
    assert active.tolist() == [1, 0, 1] and left == 2
    active, left = prune(stats, rd=2.4)  # m_r 7.4 < m_l 7.6: still inferior
    assert active.tolist() == [1, 0, 1]
    active, left = prune(stats, rd=2.6)  # 7.6 > 7.4: the intervals overlap, nothing is pruned
    assert active.tolist() == [1, 1, 1] and left == 3
    active, _ = prune(stats, rd=0.0)  # r_d = 0 compares the means alone
    assert active.tolist() == [1, 0, 0]


def test_moves_with_fewer_than_min_games_are_neither_judged_nor_the_reference():
    # Move 1 is clearly inferior but has 50 samples; move 2 has the best mean on 5 samples.
    stats = moves_with((100, 10.0, 10.0), (50, 0.0, 5.0), (5, 30.0, 1.0), (100, 2.0, 10.0))
    active, _ = prune(stats, rd=1.0, min_games=100)
    assert best_active_move(stats, 4, np.ones(4, np.int64), 100) == 0
    assert active.tolist() == [1, 1, 1, 0]
    active, _ = prune(stats, rd=1.0, min_games=0)  # now move 2 is the reference and prunes the others
    assert active.tolist() == [0, 0, 1, 0]


def test_hard_pruning_is_final_and_soft_pruning_brings_a_move_back():
    stats = moves_with((100, 10.0, 10.0), (100, 5.0, 10.0))
    hard, _ = prune(stats, rd=1.0)
    soft, _ = prune(stats, rd=1.0, soft=True)
    assert hard.tolist() == soft.tolist() == [1, 0]
    # More samples of the best move bring its mean down to 6.5 (left bound 5.5 <= move 1's 6.0).
    stats[0] = moves_with((400, 6.5, 20.0))[0]
    prune(stats, rd=1.0, active=hard)
    prune(stats, rd=1.0, soft=True, active=soft)
    assert hard.tolist() == [1, 0]
    assert soft.tolist() == [1, 1]


def test_the_reference_is_the_best_active_move_not_a_pruned_one():
    stats = moves_with((100, 10.0, 10.0), (100, 5.0, 10.0), (100, 6.0, 10.0))
    active = np.array([0, 1, 1], np.int64)  # the best mean was pruned earlier (hard)
    _, left = prune(stats, rd=1.0, active=active)
    assert active.tolist() == [0, 1, 1] and left == 2  # 5 + 1 >= 6 - 1: neither is inferior to move 2


def test_stop_rules():
    one_left = moves_with((100, 10.0, 10.0), (100, 5.0, 10.0))
    active, _ = prune(one_left, rd=1.0)
    assert stop_reason(one_left, 2, active, 1.0, 0.2, 0) == STOP_ONE_LEFT
    # Two equal moves with sigma 0.1 < sigma_e = 0.2: statistically equal, stop.
    equal = moves_with((10000, 3.0, 10.0), (10000, 3.05, 10.0))
    active, _ = prune(equal, rd=1.0)
    assert active.tolist() == [1, 1]
    assert stop_reason(equal, 2, active, 1.0, 0.2, 0) == STOP_EQUAL
    assert stop_reason(equal, 2, active, 1.0, 0.1, 0) == CONTINUE  # sigma 0.1 is not below 0.1
    assert stop_reason(equal, 2, active, 1.0, 0.2, 20000) == CONTINUE  # too few games to call them equal


def test_stage_plan_splits_the_budget_over_stages_and_slaves():
    assert stage_plan(6400, 4, 2) == [800, 800, 800, 800]
    assert stage_plan(1000, 3, 1) == [334, 333, 333]
    assert stage_plan(10, 16, 1) == [1] * 10
    assert sum(stage_plan(12345, 7, 3)) * 3 >= 12345


def test_configuration_of_the_family():
    config = SearchConfig.from_spec("algorithm=pp,rd=0.3,sigma_e=1,min_games=80,soft_pruning=on,stages=8,slaves=2")
    assert (config.rd, config.sigma_e, config.min_games, config.soft_pruning, config.stages) == (0.3, 1.0, 80, True, 8)
    assert SearchConfig.from_spec(config.to_spec()) == config
    with pytest.raises(ObookError, match="allocation"):
        SearchConfig.from_spec("algorithm=flat,allocation=sometimes")
    with pytest.raises(ObookError, match="rd"):
        SearchConfig.from_spec("algorithm=pp,rd=-1")
    with pytest.raises(ObookError, match="slaves=processes"):
        SearchConfig.from_spec("algorithm=pp,processes=2,slaves=3")
    with pytest.raises(ObookError, match="one process"):
        SearchConfig.from_spec("algorithm=amaf,processes=2")


# --- the players ----------------------------------------------------------------------------------

def test_flat_and_pp_find_the_escape_and_pp_samples_the_best_move_most():
    position = Position.from_ascii(ESCAPE, to_move="B", komi=0.5)
    flat = make_player("algorithm=flat,policy=atari50,playouts=6000,seed=5")
    result = flat.genmove(position)
    assert position.vertex(result.move) == "C3"
    assert sum(s.visits for s in result.moves) == 6000
    visits = [s.visits for s in result.moves]
    assert max(visits) - min(visits) <= 1  # round-robin: every move equally often
    pp = make_player("algorithm=pp,policy=atari50,playouts=6000,seed=5,min_games=20,stages=12")
    result = pp.genmove(position)
    assert position.vertex(result.move) == "C3"
    assert any(s.pruned for s in result.moves)
    assert not result.moves[0].pruned and result.moves[0].visits == max(s.visits for s in result.moves)
    pruned = sorted(s.visits for s in result.moves if s.pruned)
    assert 4 * pruned[len(pruned) // 2] < result.moves[0].visits  # most were dropped early


def test_pp_stops_when_one_move_is_left():
    # r_d = 0 and a few games a move: everything inferior in mean to the best is pruned at once.
    position = Position.from_ascii(ESCAPE, to_move="B", komi=0.5)
    player = make_player("algorithm=pp,policy=light,playouts=20000,seed=3,rd=0,min_games=10,stages=20")
    result = player.genmove(position)
    assert player.last_search["stop"] == "one move left"
    assert player.last_search["active"].sum() == 1
    assert result.playouts < 20000


@pytest.mark.parametrize("spec", [
    "algorithm=flat,policy=atari50,allocation=random",
    "algorithm=pp,min_games=10,soft_pruning=on",
    "algorithm=amaf,policy=light",
    "algorithm=amaf,policy=light,temperature=5,annealing=on",
    "algorithm=depth2,policy=light",
])
def test_seeded_searches_reproduce(spec):
    position = Position.from_moves("C3 E5", size=7, komi=0.5)
    a = make_player(f"{spec},playouts=1500,seed=11").genmove(position)
    b = make_player(f"{spec},playouts=1500,seed=11").genmove(position)
    c = make_player(f"{spec},playouts=1500,seed=12").genmove(position)

    def table(result):
        return [(s.point, s.visits, round(s.value, 12), round(s.winrate, 12)) for s in result.moves]

    assert table(a) == table(b) and a.move == b.move
    assert table(a) != table(c)


def test_all_moves_as_first_credits_each_point_once_per_playout():
    position = Position.from_moves("C3 E5", size=7, komi=0.5)
    player = make_player("algorithm=amaf,policy=light,playouts=800,seed=4")
    result = player.genmove(position)
    amaf = player.streams[0].amaf
    assert np.all(amaf[BLACK, :, N] + amaf[WHITE, :, N] <= 800)
    assert amaf[BLACK, :, N].max() > 100  # the mover plays most points first in many games
    chosen = next(s for s in result.moves if s.point == result.move)
    assert chosen.value == pytest.approx(amaf[BLACK, result.move, SUM] / amaf[BLACK, result.move, N])


def test_temperature_playouts_follow_the_weights():
    from obook.playout.policies import LIGHT, new_scratch, run_playout
    from obook.rng import make_rng
    from obook.search.montecarlo import moves_buffer, set_temperature_weights

    position = Position(size=5)
    cells = position.board.color.shape[0]
    amaf = np.zeros((3, cells, 4))
    favourite = position.point("C3")
    amaf[BLACK, favourite, N], amaf[BLACK, favourite, SUM] = 10, 10 * 25.0  # mean score 25 = all 25 points
    weights = np.zeros((3, cells))
    set_temperature_weights(amaf, weights, 20.0, 0, 25)
    assert weights[BLACK, favourite] == pytest.approx(math.exp(20.0))
    assert weights[WHITE, favourite] == pytest.approx(1.0) and weights[BLACK, favourite + 1] == pytest.approx(1.0)
    rng, moves = make_rng(1), moves_buffer(5)
    firsts = []
    for _ in range(20):
        work = new_board(5)
        _, n, _ = run_playout(work, LIGHT, rng, new_scratch(work), moves, None, 0, weights, 20.0)
        firsts.append(int(moves[0]))
        assert n > 10
    assert firsts.count(favourite) >= 19  # e^20 against 24 others of weight 1


def test_depth2_plays_the_maximum_of_the_minimum_over_replies():
    position = Position.from_moves("C3 E5 D4", size=7, komi=0.5)
    player = make_player("algorithm=depth2,policy=light,playouts=6000,seed=2")
    result = player.genmove(position)
    search = player.last_search
    leaves, first = search["leaves"], search["leaf_first"]
    counts = leaves[:, N]
    assert counts.max() - counts.min() <= 1  # round-robin over the leaves
    means = leaves[:, SUM] / counts
    by_move = {}
    for point, mean in zip(first.tolist(), means.tolist()):
        by_move[point] = min(by_move.get(point, math.inf), mean)
    best = max(by_move, key=by_move.get)
    assert result.move == best
    assert result.moves[0].value == pytest.approx(by_move[best])


def test_parallel_master_slave_equals_the_sequential_streams():
    position = Position.from_moves("C3 E5", size=7, komi=0.5)
    spec = "algorithm=pp,policy=light,playouts=3000,stages=6,min_games=10,rd=0.5,soft_pruning=on,seed=21"
    sequential = MonteCarloPlayer(SearchConfig.from_spec(spec + ",slaves=2"))
    parallel = make_player(spec + ",processes=2")
    first_stats = None
    try:
        for move in ("D3", "C5"):
            s = sequential.genmove(position)
            first_stats = sequential.last_search["stats"] if first_stats is None else first_stats
            p = parallel.genmove(position)
            assert s.move == p.move and s.playouts == p.playouts
            assert sequential.last_search["stages"] == parallel.last_search["stages"]
            assert np.array_equal(sequential.last_search["stats"], parallel.last_search["stats"])
            assert np.array_equal(sequential.last_search["active"], parallel.last_search["active"])
            assert sequential.last_search["active"].sum() < len(sequential.last_search["active"])  # it pruned
            position.play(move)
    finally:
        parallel.close()
    # A single stream with the same seed is a different sample stream: the equality above is not trivial.
    single = MonteCarloPlayer(SearchConfig.from_spec(spec))
    single.genmove(Position.from_moves("C3 E5", size=7, komi=0.5))
    assert not np.array_equal(single.last_search["stats"], first_stats)
