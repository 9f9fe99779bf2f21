"""The score a search knows: each node's final scores backed up with its wins, read as the root's and
each root move's mean and spread for the player to move, kept by tree reuse, shown by analysis."""

import pytest

from obook.go.board import BLACK
from obook.go.position import Position
from obook.gtp.analysis import AnalyzeOptions, format_kata_line
from obook.search.config import SearchConfig
from obook.search.mcts import MCTSPlayer
from obook.search.players import make_player

# Both groups have many one-point eyes; the only moves are the nine neutral points of column F, which
# the players fill in turn: the player to move gets five. Black's area is 45 + 5 (White to move: 4),
# White's 27 + 4 (5): with komi 7.5, Black to move ends B+11.5, White to move B+9.5.
WALLS = """
. X . X X . O . O
X X X X X . O O O
. X . X X . O . O
X X X X X . O O O
. X . X X . O . O
X X X X X . O O O
. X . X X . O . O
X X X X X . O O O
. X . X X . O . O
"""
MARGIN = {"B": 11.5, "W": -9.5}  # the final score under best play, for the player to move


def walls(to_move):
    return Position.from_ascii(WALLS, to_move=to_move, komi=7.5)


@pytest.mark.parametrize("to_move", ["B", "W"])
def test_the_root_mean_score_is_the_known_margin_for_the_player_to_move(to_move):
    result = MCTSPlayer(SearchConfig(playouts=600, seed=3)).genmove(walls(to_move))
    assert result.score_mean == pytest.approx(MARGIN[to_move], abs=1.5)
    best = result.best
    assert best.score_mean == pytest.approx(MARGIN[to_move], abs=0.5)
    assert 0.0 <= best.score_stdev < 1.0


@pytest.mark.parametrize("spec", ["algorithm=flat", "algorithm=pp", "algorithm=depth2"])
def test_the_pure_monte_carlo_players_score_their_samples(spec):
    result = make_player(spec + ",playouts=800,seed=3").genmove(walls("W"))
    assert result.score_mean == pytest.approx(MARGIN["W"], abs=1.5)
    assert max(s.score_mean for s in result.moves if s.visits) == pytest.approx(MARGIN["W"], abs=0.5)
    no_scores = make_player(spec + ",value=win,playouts=200,seed=3").genmove(walls("W"))
    assert no_scores.score_mean is None and all(s.score_mean is None for s in no_scores.moves)


def test_the_score_spread_is_zero_below_two_simulations_and_none_without_any():
    for seed in range(1, 20):  # a seed whose three simulations do not all go through one move
        result = MCTSPlayer(SearchConfig(playouts=3, seed=seed)).genmove(Position(size=9))
        visited = [s for s in result.moves if s.visits == 1]
        if visited:
            break
    assert visited and all(s.score_stdev == 0.0 and s.score_mean is not None for s in visited)
    assert all(s.score_mean is None and s.score_stdev is None for s in result.moves if s.visits == 0)


def test_an_open_position_has_a_spread_and_a_root_mean_between_its_moves():
    result = MCTSPlayer(SearchConfig(playouts=400, seed=2)).genmove(Position(size=9))
    visited = [s for s in result.moves if s.visits >= 2]
    assert any(s.score_stdev > 1.0 for s in visited)
    means = [s.score_mean for s in visited]
    assert min(means) <= result.score_mean <= max(means)


def test_the_score_survives_tree_reuse():
    position = walls("B")
    player = MCTSPlayer(SearchConfig(playouts=600, seed=5))
    first = player.genmove(position)
    played = next(s for s in first.moves if s.point == first.move)
    position.play(first.move)
    kept = player.genmove(position, playouts=0)  # the reused subtree alone: no new simulation
    assert played.visits > 10
    assert kept.score_mean == pytest.approx(-played.score_mean)  # White's view of Black's move
    assert kept.score_mean == pytest.approx(-MARGIN["B"], abs=0.5)


def test_the_analysis_line_shows_the_search_score_as_it_changes_with_the_visits():
    results = []
    player = MCTSPlayer(SearchConfig(playouts=3000, seed=7))
    player.genmove(Position(size=9), on_progress=results.append, progress_interval=0.0)
    assert len(results) >= 3
    options = AnalyzeOptions(color=BLACK, interval=0.0, max_moves=1)
    shown = []
    for result in results:
        fields = format_kata_line(result, 9, options).split()
        score_mean = float(fields[fields.index("scoreMean") + 1])
        best = result.best
        assert score_mean == pytest.approx(best.score_mean, abs=0.005)
        assert float(fields[fields.index("scoreStdev") + 1]) == pytest.approx(best.score_stdev, abs=0.005)
        assert float(fields[fields.index("scoreLead") + 1]) == score_mean
        shown.append((best.point, best.visits, score_mean))
    by_move = {}
    for point, visits, score_mean in shown:
        by_move.setdefault(point, set()).add((visits, score_mean))
    assert any(len({s for _, s in seen}) > 1 for seen in by_move.values())  # one move, new visits, a new mean


def test_the_root_moves_count_every_simulation_of_a_fresh_search():
    """Each simulation goes through one root move; with fractional priors the visits less the
    virtual ones are still whole numbers (once truncated one below)."""
    result = MCTSPlayer(SearchConfig(playouts=2000, seed=1)).genmove(Position(size=9))
    assert sum(s.visits for s in result.moves) == 2000
