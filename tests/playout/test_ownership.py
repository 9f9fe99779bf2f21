"""Dead stones from playouts (``obook/playout/ownership.py``): statuses, seki, the final count with the
dead stones counted for their capturer, checked against GNU Go's ``final_status_list`` and
``final_score`` when it is installed."""

import numpy as np
import pytest

from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import Position
from tests.helpers import ATARI_IN_OWN_EYE, moves_to
from obook.playout.ownership import (
    ALIVE,
    DEAD,
    SEKI,
    board_status,
    board_strings,
    estimate_ownership,
    final_area,
    final_score,
    play_on,
    stone_status,
)

# Two living walls, each with two areas; a white stone (B1) in Black's corner and a black one (F1)
# in White's are dead (GNU Go agrees: final_status_list dead is B1 F1, final_score W+7.5).
DEAD_STONES = """
    . . X O . . .
    . . X O . . .
    . . X O . . .
    . . X O . . .
    X X X O O O O
    . . X O . . .
    . O X O . X .
    """

# Black's A1-D2 and White's A3-F3-F1 share their only liberties E1 and E2: whoever fills one is
# captured (GNU Go 3.8 agrees: these two seki strings, dame E1 E2, final_score B+30.5 at komi 0.5;
# the GTP tests' seki).
SEKI_DIAGRAM = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    X X X X X X X
    O O O O O O X
    X X X X . O X
    X X X X . O X
    """

# Not a seki though B1-B2 and A2-A3-B3-C3-C2 share their only liberties A1 and C1: Black fills C1
# joining its wall, and White, in atari, dies (GNU Go 3.8: dead A3 B3 C3 A2 C2, B+24.5).
FALSE_SEKI = """
    . . . . .
    X X X X .
    O O O X .
    O X O X .
    . X . X .
    """


# A seki of three strings: Black's eyeless D1-D2 between White's one-eyed A2-D3 (eye A1) and
# E2-G2 (eye G1); whoever fills C1 or E1 is captured. A test of pairs misses it: each white string
# has a liberty that is neither shared with D1-D2's partner nor an eye.
THREE_STRING_SEKI = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    X X X X X X X
    X X O O X X X
    O O O X O O O
    . O . X . O .
    """

# No seki, though White's B1-D2 shares its only liberties A1 and C1 with Black's A2 and D1: their
# other liberties, A3 and E1, touch Black's wall too, so Black connects there and then fills A1 and
# C1 (GNU Go 3.8: dead B1 B2 C2 D2; a 13x13 game of benchmarks/score_vs_gnugo.py --seed 2 ended so).
FALSE_SEKI_EYES = """
    . . . . . . .
    . . . . . . .
    . . . . . . .
    X X X X X X X
    . X X X X X X
    X O O O X X X
    . O . X . X .
    """

def vertices(position, stones):
    return sorted(position.vertex(p) for p in stones)


def test_clearly_dead_stones_are_dead_and_the_walls_alive():
    position = Position.from_ascii(DEAD_STONES, to_move="B", komi=0.5)
    status = stone_status(position, playouts=400, seed=3)
    dead = sorted(vertices(position, stones) for stones in status.stones(DEAD))
    assert dead == [["B1"], ["F1"]]
    alive = {(color, len(stones)) for color, stones, s in status.strings if s == ALIVE}
    assert alive == {(BLACK, 9), (WHITE, 10)}
    assert vertices(position, status.dead_points()) == ["B1", "F1"]


# A dead white stone (B1) beside a point that touches both colours (C1). Counted by hand: Black has
# 8 stones, 10 points A3-B7, B1 (the dead stone, Black's once captured) and A1 (its region now touches
# Black only): 20; White 7 stones and 21 points: 28; C1 is nobody's. Taking B1 off instead made
# A1-B1-C1 one region touching both colours, nobody's: Black 18.
DEAD_BESIDE_DAME = """
    . . X O . . .
    . . X O . . .
    . . X O . . .
    . . X O . . .
    . . X O . . .
    X X X O . . .
    . O . O . . .
    """


def test_final_count_gives_dead_stones_and_their_points_to_the_capturer():
    position = Position.from_ascii(DEAD_STONES, to_move="B", komi=0.5)
    status = stone_status(position, playouts=400, seed=3)
    # Black: 9 stones + 11 empty points + B1; White: 10 stones + 17 empty points + F1.
    assert final_area(position, status.dead_points()) == (21, 28)
    assert final_score(position, status) == pytest.approx(21 - 28 - 0.5)
    assert final_area(position, set()) == (18, 23)  # with the dead counted as alive, their regions are nobody's


def test_a_dead_stone_beside_a_neutral_point_is_still_the_capturers():
    position = Position.from_ascii(DEAD_BESIDE_DAME, to_move="B", komi=0.5)
    status = board_status(position, playouts=400, seed=3)
    assert vertices(position, status.dead_points()) == ["B1"]
    assert final_area(position, status.dead_points()) == (20, 28)
    assert final_score(position, status) == pytest.approx(-8.5)
    assert 20 + 28 == 7 * 7 - 1  # C1 alone is nobody's
    # Played on before it is counted, Black (to move) fills C1 first: one point more.
    settled = stone_status(position, playouts=400, seed=3)
    assert vertices(position, settled.dead_points()) == ["B1"]
    assert final_score(position, settled) == pytest.approx(-7.5)


def test_a_dead_group_counts_for_the_capturer_point_by_point():
    # White's dead A1-A2-B2 (in atari at B1) in Black's corner; B1 and C1 touch White's living D1.
    position = Position.from_ascii("""
        . . X O . . .
        . . X O . . .
        . . X O . . .
        . . X O . . .
        X X X O . . .
        O O X O . . .
        O . . O . . .
        """, to_move="B", komi=0.5)
    dead = {position.point(v) for v in ("A1", "A2", "B2")}
    # Black: 8 stones + A4-B7 (8) + the three dead stones; B1 and C1 touch both colours: nobody's.
    assert final_area(position, dead) == (19, 28)
    assert final_area(position, set()) == (16, 31)  # counted alive, the three are White's


def test_ownership_is_a_mean_in_minus_one_one_with_the_right_signs():
    position = Position.from_ascii(DEAD_STONES, to_move="B", komi=0.5)
    owner = estimate_ownership(position, playouts=200, seed=1)
    assert owner.shape == position.board.color.shape
    assert np.all(np.abs(owner) <= 1.0)
    assert owner[position.point("A7")] > 0.8 and owner[position.point("G7")] < -0.8
    assert owner[position.point("B1")] > 0.5 and owner[position.point("F1")] < -0.5
    assert not estimate_ownership(position, playouts=0).any()
    again = estimate_ownership(position, playouts=200, seed=1)
    assert np.array_equal(owner, again)  # seeded


def test_a_simple_seki_is_seki_not_dead():
    position = Position.from_ascii(SEKI_DIAGRAM, to_move="B", komi=0.5)
    status = stone_status(position, playouts=200, seed=2)
    seki = sorted(vertices(position, stones) for stones in status.stones(SEKI))
    assert seki == [["A1", "A2", "B1", "B2", "C1", "C2", "D1", "D2"], ["A3", "B3", "C3", "D3", "E3", "F1", "F2", "F3"]]
    assert not status.stones(DEAD)
    assert len(board_strings(position)) == 3
    assert final_area(position, status.dead_points()) == (39, 8)  # E1 and E2 are nobody's


def test_a_seki_of_three_strings_is_seki_and_its_eyes_its_owners():
    position = Position.from_ascii(THREE_STRING_SEKI, to_move="B", komi=0.5)
    status = stone_status(position, playouts=200, seed=2)
    seki = sorted(vertices(position, stones) for stones in status.stones(SEKI))
    assert seki == [["A2", "B1", "B2", "C2", "C3", "D3"], ["D1", "D2"], ["E2", "F1", "F2", "G2"]]
    assert not status.stones(DEAD)
    # Black: the wall's 12 stones, the 21 points above it and D1-D2; White: 10 stones and the eyes
    # A1 and G1; C1 and E1 are nobody's.
    assert final_area(position, status.dead_points()) == (35, 12)


def test_an_eye_shared_with_a_living_string_saves_nothing_from_seki():
    position = Position.from_ascii(FALSE_SEKI_EYES, to_move="B", komi=0.5)
    status = stone_status(position, playouts=400, seed=2)
    assert not status.stones(SEKI)
    assert vertices(position, status.dead_points()) == ["B1", "B2", "C2", "D2"]


@pytest.mark.gnugo
def test_gnu_go_agrees_on_the_three_string_seki_and_the_false_one(gnugo_path):
    from obook.gtp.client import GTPClient

    for diagram in (THREE_STRING_SEKI, FALSE_SEKI_EYES):
        position = Position.from_ascii(diagram, to_move="B", komi=0.5)
        status = stone_status(position, playouts=400, seed=2)
        with GTPClient([gnugo_path, "--mode", "gtp", "--chinese-rules", "--level", "0"]) as gnugo:
            gnugo.send(f"boardsize {position.size}")
            gnugo.send("clear_board")
            for color, name in ((BLACK, "black"), (WHITE, "white")):
                for p in position.stones(color):
                    gnugo.send(f"play {name} {position.vertex(p)}")
            seki = sorted(gnugo.send("final_status_list seki").split())
            dead = sorted(gnugo.send("final_status_list dead").split())
        assert seki == sorted(position.vertex(p) for stones in status.stones(SEKI) for p in stones)
        assert dead == vertices(position, status.dead_points())


def test_shared_liberties_that_one_side_fills_safely_are_no_seki():
    position = Position.from_ascii(FALSE_SEKI, to_move="B", komi=0.5)
    status = stone_status(position, playouts=400, seed=2)
    assert not status.stones(SEKI)
    assert vertices(position, status.dead_points()) == ["A2", "A3", "B3", "C2", "C3"]
    assert final_score(position, status) == pytest.approx(24.5)


@pytest.mark.gnugo
def test_dead_stones_agree_with_gnu_go(gnugo_path):
    from obook.gtp.client import GTPClient

    position = Position.from_ascii(DEAD_STONES, to_move="B", komi=0.5)
    status = stone_status(position, playouts=400, seed=3)
    with GTPClient([gnugo_path, "--mode", "gtp", "--chinese-rules", "--level", "0"]) as gnugo:
        gnugo.send(f"boardsize {position.size}")
        gnugo.send("clear_board")
        gnugo.send("komi 0.5")
        for color, name in ((BLACK, "black"), (WHITE, "white")):
            for p in position.stones(color):
                gnugo.send(f"play {name} {position.vertex(p)}")
        theirs = sorted(gnugo.send("final_status_list dead").split())
        score = gnugo.send("final_score")
    assert theirs == vertices(position, status.dead_points())
    assert score == "W+7.5" and final_score(position, status) == -7.5


def gnugo_final(gnugo_path, size, komi, moves=(), stones=(), to_move="black"):
    """GNU Go's (final_score, dead stones) of a position given by ``moves`` or by ``stones``."""
    from obook.gtp.client import GTPClient

    with GTPClient([gnugo_path, "--mode", "gtp", "--chinese-rules", "--level", "10"]) as gnugo:
        gnugo.send(f"boardsize {size}")
        gnugo.send("clear_board")
        gnugo.send(f"komi {komi:g}")
        for index, move in enumerate(moves):
            gnugo.send(f"play {'black' if index % 2 == 0 else 'white'} {move}")
        last = None
        for color, vertex in stones:
            gnugo.send(f"play {color} {vertex}")
            last = color
        if last is not None and last == to_move:
            gnugo.send(f"play {'white' if to_move == 'black' else 'black'} pass")
        return gnugo.send("final_score"), sorted(gnugo.send("final_status_list dead").split())


def score_text(score: float) -> str:
    return f"B+{score:.1f}" if score > 0 else f"W+{-score:.1f}" if score < 0 else "0"


@pytest.mark.gnugo
def test_dead_stone_beside_a_neutral_point_against_gnu_go(gnugo_path):
    position = Position.from_ascii(DEAD_BESIDE_DAME, to_move="B", komi=0.5)
    status = stone_status(position, playouts=400, seed=3)
    stones = [(name, position.vertex(p)) for color, name in ((BLACK, "black"), (WHITE, "white"))
              for p in position.stones(color)]
    score, dead = gnugo_final(gnugo_path, 7, 0.5, stones=stones, to_move="black")
    assert dead == vertices(position, status.dead_points()) == ["B1"]
    # GNU Go plays the game on before it counts (finish_and_score_game, then the aftermath): Black,
    # to move, fills the neutral C1, one point more than the board as it stands gives Black; so does
    # stone_status.
    assert score == score_text(final_score(position, status)) == "W+7.5"


# Finished games with dead stones on the board: random openings (30% of the points) that GNU Go level
# 0 played on for both sides until two passes (benchmarks/score_vs_gnugo.py --seed 1).
FINISHED_GAMES = [
    (7, "B2 C6 E1 E3 C2 A6 E5 B6 A5 C3 A2 A7 B1 G5 B5 C5 D3 B4 D6 D4 D2 F4 E4 F2 G3 F3 F6 G6 G2 G4 E7 A4 "
        "D5 C7 C4 B3 D4 D7 A3 pass pass"),
    (9, "B7 G9 A1 F7 J4 D4 F2 J5 E1 D1 G1 C1 E7 A5 E8 A2 C5 B8 D5 J9 H5 F6 D3 F4 E5 C4 E4 C3 D2 C2 F8 B5 "
        "C8 A7 B6 A6 B9 A8 F5 B4 C9 A9 pass pass"),
]


@pytest.mark.gnugo
@pytest.mark.parametrize("size,moves", FINISHED_GAMES)
def test_finished_games_with_dead_stones_score_as_gnu_go_scores_them(gnugo_path, size, moves):
    position = Position.from_moves(moves, size=size, komi=7.5)
    status = stone_status(position, playouts=1000, seed=1)
    score, dead = gnugo_final(gnugo_path, size, 7.5, moves=moves.split())
    assert len(dead) >= 5
    assert vertices(position, status.dead_points()) == dead
    assert score_text(final_score(position, status)) == score


@pytest.mark.parametrize("to_move,dead,score", [("B", [], -1.5), ("W", ["E1"], -5.5)])
def test_a_string_in_atari_in_its_own_eye_lives_when_its_side_is_to_move(to_move, dead, score):
    position = Position.from_moves(moves_to(ATARI_IN_OWN_EYE, to_move), size=7, komi=0.5)
    assert position.to_move == (BLACK if to_move == "B" else WHITE) and position.is_over
    for seed in (1, 2, 3):
        status = stone_status(position, playouts=1000, seed=seed)
        assert vertices(position, status.dead_points()) == dead, seed
        assert final_score(position, status) == pytest.approx(score), seed
    assert len(position.moves) == len(moves_to(ATARI_IN_OWN_EYE, to_move))  # the game itself is not played on


def test_playing_on_connects_captures_and_fills_neutral_points_then_passes_twice():
    black_to_move = Position.from_moves(moves_to(ATARI_IN_OWN_EYE, "B"), size=7, komi=0.5)
    played = play_on(black_to_move, set()).moves[len(black_to_move.moves):]
    assert [(color, black_to_move.vertex(p)) for color, p in played] == [(BLACK, "D1"), (WHITE, "pass"), (BLACK, "pass")]
    white_to_move = Position.from_moves(moves_to(ATARI_IN_OWN_EYE, "W"), size=7, komi=0.5)
    # White takes E1 in atari in Black's eye whatever the playouts say; Black cannot take the ko back at once.
    for dead in (set(), {white_to_move.point("E1")}):
        played = play_on(white_to_move, dead).moves[len(white_to_move.moves):]
        assert [(color, white_to_move.vertex(p)) for color, p in played] == [
            (WHITE, "D1"), (BLACK, "pass"), (WHITE, "E1"), (BLACK, "pass"), (WHITE, "pass")]
    beside_dame = Position.from_ascii(DEAD_BESIDE_DAME, to_move="B", komi=0.5)
    settled = play_on(beside_dame, {beside_dame.point("B1")})
    # Black fills the neutral C1, which puts the dead B1 in atari, and takes it off.
    assert [(color, beside_dame.vertex(p)) for color, p in settled.moves] == [
        (BLACK, "C1"), (WHITE, "pass"), (BLACK, "A1"), (WHITE, "pass"), (BLACK, "pass")]


def test_a_settled_board_is_counted_as_it_stands():
    position = Position.from_ascii(DEAD_STONES, to_move="B", komi=0.5)
    status = stone_status(position, playouts=400, seed=3)
    assert status.counted is None and not status.played_on and not status.uncertain


@pytest.mark.gnugo
@pytest.mark.parametrize("to_move", ["B", "W"])
def test_gnu_go_agrees_on_the_string_in_atari_in_its_own_eye(gnugo_path, to_move):
    moves = moves_to(ATARI_IN_OWN_EYE, to_move)
    position = Position.from_moves(moves, size=7, komi=0.5)
    status = stone_status(position, playouts=1000, seed=1)
    score, dead = gnugo_final(gnugo_path, 7, 0.5, moves=moves)
    assert dead == vertices(position, status.dead_points())
    assert score == score_text(final_score(position, status))
