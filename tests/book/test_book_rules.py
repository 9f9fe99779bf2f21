"""The coevolution, Beta-sampling and usage rules, and the statistics a game contributes (no database)."""

import random
from collections import Counter

from obook.book.keys import UNSCORED, BookGameError, game_outcome, opening_statistics, within_depth
from obook.book.rules import Candidate, beta_move, candidates_from_rows, coevolution_move, usage_move
from obook.go.board import PASS
from obook.go.position import Position
from tests.helpers import random_game_moves

import pytest


def cand(vertex, games, wins):
    return Candidate(point=hash(vertex) % 1000 + 1, vertex=vertex, games=games, wins=wins, share=0.0)


def test_mbm_plays_only_a_move_above_half():
    moves = [cand("E5", 10, 5), cand("C3", 4, 2)]
    assert coevolution_move(moves, 0.5) is None  # 50% is not above 50%: mutate
    moves.append(cand("G5", 3, 2))
    assert coevolution_move(moves, 0.5).vertex == "G5"


def test_mvbm_takes_the_best_rate_above_ten_percent():
    moves = [cand("E5", 20, 6), cand("C3", 10, 4), cand("D4", 5, 0)]
    assert coevolution_move(moves, 0.1).vertex == "C3"  # 40% beats 30%
    assert coevolution_move([cand("D4", 5, 0), cand("F6", 20, 2)], 0.1) is None  # 10% is not above 10%


def test_ties_go_to_the_move_with_more_games():
    assert coevolution_move([cand("E5", 2, 1), cand("C3", 10, 5)], 0.1).vertex == "C3"


def test_usage_rule_is_most_won_games_not_best_rate():
    moves = [cand("E5", 100, 55), cand("C3", 3, 3), cand("D4", 60, 40)]
    assert usage_move(moves).vertex == "E5"
    assert usage_move(moves, min_games=101) is None
    assert usage_move([cand("E5", 5, 0)]) is None


def test_symmetric_first_moves_share_one_statistic():
    a = opening_statistics(9, 7.5, False, ["C3", "E5"], "B", depth=20)
    b = opening_statistics(9, 7.5, False, ["G7", "E5"], "W", depth=20)
    first_a = [k for k in a if a[k] == (1, 1, 0)]
    assert len(a) == 2 and len(b) == 2
    assert set(a) == set(b)  # C3 and G7 are one move of one position; E5 answers the same way
    assert a[first_a[0]] == (1, 1, 0) and b[first_a[0]] == (1, 0, 0)


def test_transpositions_share_the_position():
    a = opening_statistics(9, 7.5, False, ["C3", "G7", "C7", "G3"], "B", depth=20)
    b = opening_statistics(9, 7.5, False, ["C7", "G7", "C3", "G3"], "B", depth=20)
    last_a = list(a)[-1]
    last_b = list(b)[-1]
    assert last_a == last_b  # same position after three moves, same fourth move


def test_depth_limits_the_statistics_and_jigo_counts_a_draw():
    stats = opening_statistics(9, 7.5, False, ["E5", "C3", "G7", "C7"], None, depth=3)
    assert len(stats) == 3
    assert all(v == (1, 0, 1) for v in stats.values())


def test_illegal_game_is_rejected():
    with pytest.raises(BookGameError, match="move 2"):
        opening_statistics(9, 7.5, False, ["E5", "E5"], "B", depth=20)


def test_candidates_come_back_in_the_callers_orientation():
    # The population played C3 (canonical orientation of the empty board); after a mirrored
    # opening the same canonical move must be shown where it lies on the caller's board.
    position = Position.from_moves(["G7"])
    key, symmetry = position.canonical()
    reference = Position.from_moves(["C3"])
    ref_key, ref_symmetry = reference.canonical()
    assert key == ref_key
    answer = reference.point("D7")
    canonical = reference.to_canonical(answer, ref_symmetry)
    found = candidates_from_rows(position, symmetry, [(canonical, 4, 3, 0), (PASS, 1, 0, 0)])
    # D7 after C3 is F3 after G7 (half turn) or, the same move, C6 (its mirror in the diagonal)
    assert found[0].vertex in ("F3", "C6") and found[1].vertex == "pass"
    assert found[0].share == 1.0


def test_progressive_widening_mutates_until_a_position_has_enough_moves():
    one_line = [cand("E5", 9, 5)]  # 9 games, one move: 1 + floor(9 ** 0.5) = 4 moves wanted
    assert coevolution_move(one_line, 0.1) is not None  # the seed's rule keeps playing it
    assert coevolution_move(one_line, 0.1, widening=0.5) is None  # widening mutates
    wide = [cand("E5", 6, 3), cand("C3", 1, 1), cand("D4", 1, 0), cand("F6", 1, 0)]
    assert coevolution_move(wide, 0.1, widening=0.5).vertex == "C3"  # 4 moves for 9 games: the rule again
    assert coevolution_move([], 0.1, widening=0.5) is None


def test_the_rules_and_keys_read_no_store():
    """Rows in, choice out: the rules and the keys import neither the store nor SQLAlchemy, directly
    or through what they import (a fresh interpreter, so that no other test's imports count)."""
    import subprocess
    import sys

    probe = ("import sys, obook.book.rules, obook.book.keys; "
             "print(sorted(m for m in sys.modules if m.startswith(('obook.store', 'sqlalchemy'))))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"
    # the control: the lookup does read the store, and the probe sees it
    probe = probe.replace("obook.book.keys", "obook.book.lookup")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert "obook.store.stats" in loaded


# ---- draws, unscored games, depth 0 -----------------------------------------------------------------


def test_a_draw_is_half_a_win_in_every_rule():
    drawn = Candidate(point=1, vertex="E5", games=4, wins=1, share=0.0, draws=2)
    assert drawn.points == 2 and drawn.winrate == 0.5
    assert coevolution_move([drawn], 0.5) is None  # 50% is not above 50%
    assert coevolution_move([drawn], 0.1) is drawn
    only_draws = Candidate(point=2, vertex="C3", games=3, wins=0, share=0.0, draws=1)
    assert usage_move([only_draws]) is only_draws  # half a won game is a won game for the usage rule
    assert usage_move([only_draws, Candidate(point=3, vertex="D4", games=3, wins=1, share=0.0)]).vertex == "D4"


def test_candidates_share_the_won_games_counting_draws_half():
    position = Position(size=9)
    key, symmetry = position.canonical()
    e5 = position.point("E5")
    canonical = position.to_canonical(e5, symmetry)
    found = candidates_from_rows(position, symmetry, [(canonical, 4, 1, 2), (PASS, 2, 2, 0)])
    shares = {c.vertex: c.share for c in found}
    assert shares == {"E5": 0.5, "pass": 0.5}


def test_game_outcome_tells_draws_from_unscored_games():
    assert game_outcome("B", "B+R") == "B" and game_outcome("W", "W+0.5") == "W"
    for draw in ("0", "Draw", "jigo", " 0 "):
        assert game_outcome(None, draw) is None
    for unscored in ("?", "B+T", "W+F", "Void", "", None):
        assert game_outcome(None, unscored) == UNSCORED


def test_an_unscored_game_adds_its_moves_without_a_game():
    stats = opening_statistics(9, 7.5, False, ["E5", "C3", "G7"], UNSCORED, depth=20)
    assert len(stats) == 3 and set(stats.values()) == {(0, 0, 0)}
    position = Position(size=9)
    key, symmetry = position.canonical()
    (move,) = [m for (k, m) in stats if k == key]
    (found,) = candidates_from_rows(position, symmetry, [(move, 0, 0, 0)])
    assert found.winrate == 0.0 and usage_move([found]) is None and coevolution_move([found], 0.0) is None


def test_depth_zero_counts_every_move():
    rng = random.Random(3)
    moves = [Position(size=7).vertex(p) for p in random_game_moves(Position(size=7), rng, 60)]
    assert len(moves) > 40
    assert len(opening_statistics(7, 7.5, False, moves, "B", depth=0)) > 20
    assert len(opening_statistics(7, 7.5, False, moves, "B", depth=0)) == \
        len(opening_statistics(7, 7.5, False, moves, "B", depth=len(moves)))
    assert len(opening_statistics(7, 7.5, False, moves, "B", depth=10)) == 10
    assert within_depth(0, 500) and within_depth(20, 19) and not within_depth(20, 20)


# ---- Beta sampling ----------------------------------------------------------------------------------


def choices(candidates, draws=4000, seed=11, widening=0.0):
    rng = random.Random(seed)
    picks = Counter()
    for _ in range(draws):
        pick = beta_move(candidates, rng, widening)
        picks[pick.vertex if pick is not None else None] += 1
    return picks


def test_beta_sampling_is_reproducible_from_the_callers_generator():
    moves = [cand("E5", 10, 5), cand("C3", 3, 1), cand("D4", 1, 0)]
    first = [beta_move(moves, random.Random(5)) for _ in range(3)]
    again = [beta_move(moves, random.Random(5)) for _ in range(3)]
    assert first == again
    assert choices(moves, 300, seed=9) == choices(moves, 300, seed=9)
    assert choices(moves, 300, seed=9) != choices(moves, 300, seed=10)


def test_beta_sampling_mutates_in_an_unknown_position():
    assert beta_move([], random.Random(1)) is None


def test_a_move_whose_first_game_was_lost_is_still_tried():
    picks = choices([cand("E5", 10, 6), cand("C3", 1, 0)])
    assert picks["C3"] > 100  # greedy MVBM would never play it again
    assert coevolution_move([cand("E5", 10, 6), cand("C3", 1, 0)], 0.1).vertex == "E5"


def test_the_new_move_arm_mutates_one_time_in_k_plus_one_among_alike_moves():
    for k in (1, 3):
        alike = [cand(v, 200, 100) for v in ("E5", "C3", "D4")[:k]]
        picks = choices(alike, draws=6000)
        assert abs(picks[None] / 6000 - 1 / (k + 1)) < 0.03, picks


def test_a_clearly_better_move_is_played_and_a_worse_one_makes_way_for_new_moves():
    picks = choices([cand("E5", 200, 140), cand("C3", 200, 60)], draws=3000)
    assert picks["E5"] > 0.95 * 3000  # far above the position's average (50%)
    assert picks["C3"] < 30  # far below it: a new move is tried rather than it
    alone = choices([cand("E5", 40, 10)], draws=3000)  # one move: the arm is that move itself, half the time
    assert 0.4 < alone[None] / 3000 < 0.6


def test_beta_sampling_counts_draws_half_and_applies_widening():
    drawn = [Candidate(point=1, vertex="E5", games=200, wins=0, share=0.0, draws=200),
             Candidate(point=2, vertex="C3", games=200, wins=100, share=0.0)]
    picks = choices(drawn, draws=3000)
    assert abs(picks["E5"] - picks["C3"]) < 300 and picks[None] > 600  # both are 50% moves
    assert choices([cand("E5", 9, 5)], draws=50, widening=0.5) == {None: 50}


def test_each_self_play_algorithm_has_one_rule_and_a_search_valued_book_none():
    from obook.book.rules import ALGORITHMS, BETA, MBM, MINIMAX, MVBM, self_play_rule

    assert {a for a in ALGORITHMS if self_play_rule(a) is not None} == {MBM, MVBM, BETA}
    assert self_play_rule(MINIMAX) is None
    assert (self_play_rule(MBM).threshold, self_play_rule(MVBM).threshold, self_play_rule(BETA).threshold) == (0.5, 0.1, None)
