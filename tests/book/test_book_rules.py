"""The coevolution and usage rules, and the statistics a game contributes (no database)."""

from obook.book.keys import BookGameError, opening_statistics
from obook.book.rules import Candidate, candidates_from_rows, coevolution_move, usage_move
from obook.go.board import PASS
from obook.go.position import Position

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
    first_a = [k for k in a if a[k] == (1, 1)]
    assert len(a) == 2 and len(b) == 2
    assert set(a) == set(b)  # C3 and G7 are one move of one position; E5 answers the same way
    assert a[first_a[0]] == (1, 1) and b[first_a[0]] == (1, 0)


def test_transpositions_share_the_position():
    a = opening_statistics(9, 7.5, False, ["C3", "G7", "C7", "G3"], "B", depth=20)
    b = opening_statistics(9, 7.5, False, ["C7", "G7", "C3", "G3"], "B", depth=20)
    last_a = list(a)[-1]
    last_b = list(b)[-1]
    assert last_a == last_b  # same position after three moves, same fourth move


def test_depth_limits_the_statistics_and_jigo_counts_no_win():
    stats = opening_statistics(9, 7.5, False, ["E5", "C3", "G7", "C7"], None, depth=3)
    assert len(stats) == 3
    assert all(v == (1, 0) for v in stats.values())


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
    found = candidates_from_rows(position, symmetry, [(canonical, 4, 3), (PASS, 1, 0)])
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
