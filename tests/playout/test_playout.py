"""Playout policies: the distributions they promise, reproducibility, and sane random games."""

import numpy as np
import pytest
from scipy.stats import chisquare

from obook.go import board as rules
from obook.playout.policies import (
    ATARI50,
    HEAVY,
    HEAVY_LADDER,
    HEAVY_MOGGY,
    HEAVY_SEMEAI,
    LIGHT,
    new_scratch,
    playout_batch,
    select_move,
)
from obook.go.tactics import nakade_self_atari, nakade_vital_point
from obook.playout.heavy import PATTERN_TABLE, _low_liberty_moves, pattern_matches
from obook.go.position import Position
from obook.rng import make_rng

# White B2 is in atari; Black captures at B1.
CAPTURE_POSITION = """
    . . . . .
    . . . . .
    . X . . .
    X O X . .
    . . . . .
    """


def move_counts(position: Position, policy: int, draws: int, seed: int) -> dict[int, int]:
    rng = make_rng(seed)
    scratch = new_scratch(position.board)
    work = rules.new_board(position.size)
    counts: dict[int, int] = {}
    for _ in range(draws):
        rules.copy_board(work, position.board)
        p = int(select_move(work, policy, rng, scratch))
        counts[p] = counts.get(p, 0) + 1
    return counts


def valid_moves(position: Position) -> list[int]:
    c = position.to_move
    return [p for p in position.legal_moves() if not rules.is_eye(position.board, p, c)]


def test_light_policy_is_uniform_over_legal_non_eye_moves():
    position = Position.from_ascii(
        """
        . X . O .
        X X X O O
        . . . . .
        O O . X X
        . O . X .
        """
    )
    valid = valid_moves(position)
    assert position.point("A5") not in valid  # black's own eye
    assert position.point("E1") not in valid
    counts = move_counts(position, LIGHT, 20000, seed=1)
    assert set(counts) == set(valid)
    observed = [counts[p] for p in valid]
    assert chisquare(observed).pvalue > 0.001


def test_atari50_gives_captures_half_the_probability():
    position = Position.from_ascii(CAPTURE_POSITION)
    valid = valid_moves(position)
    captures = [p for p in valid if position.copy().play(p) > 0]
    assert captures == [position.point("B1")]
    others = [p for p in valid if p not in captures]
    draws = 20000
    counts = move_counts(position, ATARI50, draws, seed=2)
    assert set(counts) == set(valid)
    share = counts[captures[0]] / draws
    assert abs(share - 0.5) < 0.02
    observed = [counts[p] for p in others]
    assert chisquare(observed).pvalue > 0.001


def test_atari50_without_captures_is_the_light_policy():
    position = Position.from_moves("E5 D4", size=9)
    counts = move_counts(position, ATARI50, 7900, seed=3)
    assert set(counts) == set(valid_moves(position))


def test_playouts_are_reproducible_from_their_seed():
    start = rules.new_board(9)
    work = rules.new_board(9)
    scratch = new_scratch(start)
    for policy in (LIGHT, ATARI50, HEAVY):
        a = playout_batch(start, work, policy, make_rng(42), 7.5, scratch, 200)
        b = playout_batch(start, work, policy, make_rng(42), 7.5, scratch, 200)
        c = playout_batch(start, work, policy, make_rng(43), 7.5, scratch, 200)
        assert a == b
        assert a != c


def test_light_playouts_on_empty_9x9_match_the_known_statistics():
    """Black wins about 40-46% of uniform playouts at komi 7.5; they last about 110-130 moves."""
    start = rules.new_board(9)
    work = rules.new_board(9)
    n = 4000
    wins, moves, _ = playout_batch(start, work, LIGHT, make_rng(7), 7.5, new_scratch(start), n)
    assert 0.37 < wins / n < 0.49
    assert 100 < moves / n < 135


def test_playouts_run_on_every_board_size():
    for size in range(5, 20):
        start = rules.new_board(size)
        work = rules.new_board(size)
        wins, moves, total = playout_batch(start, work, ATARI50, make_rng(size), 0.5, new_scratch(start), 5)
        wins, moves, total = playout_batch(start, work, HEAVY, make_rng(size), 0.5, new_scratch(start), 5)
        assert moves >= 5 * size * size // 2
        assert np.isfinite(total)


def after_last_move(ascii_board: str, to_move: str, last: str) -> Position:
    """The position of ``ascii_board`` after ``to_move`` plays ``last`` (so the heavy policy's local
    rules answer it)."""
    position = Position.from_ascii(ascii_board, to_move=to_move)
    position.play(position.point(last))
    return position


def heavy_choices(position: Position, draws: int = 400) -> set[str]:
    return {position.vertex(p) for p in move_counts(position, HEAVY, draws, seed=11)}


def test_heavy_captures_a_last_move_that_is_in_atari():
    position = after_last_move(
        """
        . . . . .
        . . . . .
        . O . . .
        O . O . .
        . . . . .
        """, "B", "B2")
    assert heavy_choices(position) == {"B1"}


def test_heavy_extends_a_string_in_atari_next_to_the_last_move():
    position = after_last_move(
        """
        . . . . .
        . . . . .
        . . X . .
        . X O . .
        . . . . .
        """, "B", "C1")
    assert heavy_choices(position) == {"D2"}


# White E3 ataris Black E2; extending at E1 leaves two liberties, D1 and F1, but White's atari at
# either sends Black crawling along the first line into White's wall: a first-line ladder.
FIRST_LINE_LADDER = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . O X O .
    . . . . . . .
    """


def test_heavy_extends_into_a_first_line_ladder_and_heavy_ladder_does_not():
    position = after_last_move(FIRST_LINE_LADDER, "W", "E3")
    assert heavy_choices(position) == {"E1"}
    # Rule 1 has no move left; the later rules answer E3 elsewhere (its hane at D3 and F3).
    choices = {position.vertex(p) for p in move_counts(position, HEAVY_LADDER, 400, seed=11)}
    assert "E1" not in choices and choices


def ladder_choices(ascii_board: str, last: str) -> set[str]:
    position = after_last_move(ascii_board, "W", last)
    return {position.vertex(p) for p in move_counts(position, HEAVY_LADDER, 400, seed=11)}


def test_heavy_ladder_extends_when_own_stones_wait_on_both_sides():
    board = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . O X O .
    . . X . . . X
    """
    assert ladder_choices(board, "E3") == {"E1"}


def test_heavy_ladder_extends_when_a_blocking_stone_would_put_itself_in_atari():
    # White D2 has two liberties, C2 and D1, and Black C1 waits beyond D1: after Black E1, White's
    # block at D1 is a self-atari, so the chase does not work.
    board = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . X . . .
    . . . O X O .
    . . X . . . .
    """
    assert ladder_choices(board, "E3") == {"E1"}


def test_heavy_ladder_keeps_the_extension_when_a_counter_capture_exists():
    # White's atari at E3 is itself in atari (E4): capturing it saves E2, so the extension stays.
    board = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . . . . .
    . . . X . X .
    . . . O X O .
    . . . . . . .
    """
    assert ladder_choices(board, "E3") == {"E1", "E4"}


def test_heavy_ataris_a_two_liberty_string_that_cannot_run():
    # Black's new stone A2 has two liberties, A1 and B2; either atari leaves it no way out.
    position = after_last_move(
        """
        . . . . .
        . . . . .
        O O . . .
        . . O . .
        . O . . .
        """, "B", "A2")
    assert heavy_choices(position) == {"A1", "B2"}


def low_liberty_moves(position: Position, semeai: bool = False) -> set[str]:
    board = position.board
    out = new_scratch(board)
    last = int(board.scalars[rules.LAST_MOVE])
    n = _low_liberty_moves(board, last, position.to_move, out, out[out.shape[0] - 3:], semeai)
    return {position.vertex(int(p)) for p in out[:n]}


def test_semeai_rule_ataris_the_neighbour_in_a_two_liberty_race():
    # Black B3 leaves White's B2-C2-B1 with two liberties, A2 and A1, and extending at A2 gives it
    # only two (A3, A1): it cannot run. Black's C1-D1-D2 beside it has two liberties too, E1 and
    # E2: heavy-semeai ataris it at E2 (E1 would be a self-atari) and wins the race; heavy-moggy's
    # low-liberty rule has no answer (B3's string has three liberties).
    position = after_last_move(
        """
        . . . . .
        . . . . .
        . . X O .
        . O O X .
        . O X X .
        """, "B", "B3")
    assert low_liberty_moves(position) == set()
    assert low_liberty_moves(position, semeai=True) == {"E2"}
    assert {position.vertex(p) for p in move_counts(position, HEAVY_SEMEAI, 50, seed=3)} == {"E2"}


def test_low_liberty_rule_does_not_atari_a_string_that_runs_out():
    # Black's new stone C3 has two liberties, B3 and C4, and an atari on either side lets it run
    # to the other with three liberties: the rule leaves it alone (the shapes may still answer).
    position = after_last_move(
        """
        . . . . .
        . . . . .
        . . . O .
        . . O . .
        . . . . .
        """, "B", "C3")
    assert low_liberty_moves(position) == set()
    caught = after_last_move(
        """
        . . . . .
        . . . . .
        O O . . .
        . . O . .
        . O . . .
        """, "B", "A2")
    assert low_liberty_moves(caught) == {"A1", "B2"}


def test_heavy_extends_an_own_string_left_with_two_liberties():
    # Black C3 leaves White C2 with two liberties, C1 and D2; extending at either gives three.
    position = after_last_move(
        """
        . . . . .
        . . . . .
        . . . . .
        . X O . .
        . . . . .
        """, "B", "C3")
    assert heavy_choices(position) == {"C1", "D2"}


def test_recording_a_playout_does_not_change_it():
    """The shared loop with move recording plays the very game the plain playout plays, and records
    each move with the colour that played it."""
    from obook.playout.policies import playout, run_playout

    for policy in (LIGHT, ATARI50, HEAVY):
        plain = rules.new_board(7)
        score, played = playout(plain, policy, make_rng(11), 7.5, new_scratch(plain))
        recorded = rules.new_board(7)
        moves = np.full(400, -7, np.int32)
        colors = np.zeros(400, np.int8)
        n_played, end, two_passes = run_playout(recorded, policy, make_rng(11), new_scratch(recorded), moves, colors,
                                                3, None, 0.0)
        assert (n_played, end - 3) == (played, played) and two_passes
        assert np.array_equal(recorded.color, plain.color)
        assert list(moves[:3]) == [-7, -7, -7] and moves[end] == -7
        assert moves[end - 1] == moves[end - 2] == rules.PASS
        replay = rules.new_board(7)
        for p, c in zip(moves[3:end], colors[3:end]):
            assert replay.scalars[rules.TO_MOVE] == c
            rules.play(replay, int(p))
        assert np.array_equal(replay.color, plain.color)
        assert rules.settled_area_score(replay, 7.5) == score


def test_a_full_record_stops_recording_not_playing():
    from obook.playout.policies import run_playout

    board = rules.new_board(7)
    moves = np.zeros(5, np.int32)
    played, end, _ = run_playout(board, LIGHT, make_rng(3), new_scratch(board), moves, None, 0, None, 0.0)
    assert end == 5 and played > 5


def test_heavy_playouts_never_play_a_self_atari_of_a_group():
    # White's last move D2; Black C2 would leave Black A2-B2-C2 one liberty (A1) and capture nothing.
    position = after_last_move(
        """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        O O O . . . .
        X X . . . . .
        . O O . . . .
        """, "W", "D2")
    self_atari = position.point("C2")
    assert rules.is_legal(position.board, self_atari, position.to_move)
    counts = move_counts(position, HEAVY, 3000, seed=9)
    assert self_atari not in counts and len(counts) > 10


def test_nakade_self_atari_is_a_dead_shape_inside_and_not_a_self_atari_in_the_open():
    # Game 12 of docs/where-lost/tree-eyes/seconds-0.25, move 67: Black's H9 took the ko at J9,
    # and Black J9 makes H9-J9-J8 a bent three inside White's corner, liberty J7: a nakade, a
    # self-atari of three stones that ``heavy`` never plays.
    corner = Position.from_ascii(
        """
        . . . . . . O X .
        . . . . . . O O X
        . . . . . . O O .
        . . . . . . O O O
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        """
    )
    pts = np.zeros(corner.board.color.shape[0], np.int32)
    assert nakade_self_atari(corner.board, corner.point("J9"), rules.BLACK, pts)
    assert {corner.vertex(p) for p in pts[:3]} == {"H9", "J9", "J8"}
    # Black C2 makes C3-C2 a string whose one liberty C4 opens onto empty points: no nakade.
    open_board = Position.from_ascii(
        """
        . . . . .
        . . . . .
        . O X O .
        . O . O .
        . . O . .
        """
    )
    assert not nakade_self_atari(open_board.board, open_board.point("C2"), rules.BLACK, pts)



CORNER_ROWS = "\n".join([". . . . . . . . ."] * 6)


@pytest.mark.parametrize("rows, last, vital", [
    # White F9 closes G9-H9-J9: a three, killed at its middle; E9 opens onto the open board.
    ([". . . . O . . . .", ". . . . . O O O O", ". . . . . . . . ."], "F9", "H9"),
    ([". . . . . O . . .", ". . . . . O O O O", ". . . . . . . . ."], "E9", None),
    # The straight four F9-J9 lives: no vital point.
    ([". . . O . . . . .", ". . . . O O O O O", ". . . . . . . . ."], "E9", None),
    # White G8 closes the pyramid G9-H9-J9-H8 and the bulky five G9-H9-J9-H8-J8: H9 kills both.
    ([". . . . . O . . .", ". . . . . O . . O", ". . . . . . O O O"], "G8", "H9"),
    ([". . . . . O . . .", ". . . . . O . . .", ". . . . . . O O O"], "G8", "H9"),
])
def test_nakade_vital_point_kills_dead_shapes_and_leaves_live_ones(rows, last, vital):
    position = after_last_move("\n".join(rows) + "\n" + CORNER_ROWS, "W", last)
    pts = np.zeros(position.board.color.shape[0], np.int32)
    p = nakade_vital_point(position.board, position.point(last), pts)
    assert (None if p == rules.NO_POINT else position.vertex(p)) == vital


def test_heavy_moggy_connects_a_ko_after_the_threat():
    # Black C2 takes the ko (White B2); White, banned, plays elsewhere (its policy notes the ko);
    # then heavy-moggy connects at B2 about 40% of the time, heavy only when its random rule
    # happens to choose B2.
    position = Position.from_ascii(
        """
        . . . . .
        . . . . .
        . X O . .
        X O . O .
        . X O . .
        """,
        to_move="B",
    )
    position.play(position.point("C2"))
    ko = position.point("B2")
    assert position.board.scalars[rules.KO_POINT] == ko

    def connects(policy: int) -> float:
        rng = make_rng(5)
        scratch = new_scratch(position.board)
        banned = position.copy()
        work = rules.new_board(banned.size)
        rules.copy_board(work, banned.board)
        select_move(work, policy, rng, scratch)  # White to move under the ban
        banned.play(banned.point("E5"))
        hits = 0
        for _ in range(2000):
            rules.copy_board(work, banned.board)
            hits += int(select_move(work, policy, rng, scratch)) == ko
        return hits / 2000

    assert 0.35 < connects(HEAVY_MOGGY) < 0.6
    assert connects(HEAVY) < 0.2


def test_pattern_bits_answer_as_the_table_for_every_code():
    """The playouts read the 3x3 shapes from a bitset (8 kB, to stay in L1); it must say what the
    boolean table built from the shapes says, code by code."""
    from numba import njit

    @njit
    def all_matches(n):
        out = np.zeros(n, np.bool_)
        for code in range(n):
            out[code] = pattern_matches(code)
        return out

    matches = all_matches(PATTERN_TABLE.shape[0])
    assert 0 < PATTERN_TABLE.sum() < PATTERN_TABLE.shape[0]
    assert np.array_equal(matches, PATTERN_TABLE)
