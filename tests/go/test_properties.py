"""Properties that must hold in every position of every game."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from obook.go import board as rules
from obook.go.board import BLACK, PASS, WHITE
from obook.go.symmetry import INVERSE, N_SYMMETRIES, symmetry_maps, transform_xy
from obook.go.position import Position
from tests.helpers import random_game_moves


def check_strings(position: Position) -> None:
    """Every string's pseudo-liberty atari test agrees with its real liberty count."""
    b = position.board
    for p in position.points():
        if b.color[p] in (BLACK, WHITE):
            r = b.root[p]
            assert b.color[r] == b.color[p]
            libs = rules.real_liberties(b, r)
            assert libs >= 1
            assert bool(rules.in_atari(b, r)) == (libs == 1)
            if libs == 1:
                lib = rules.atari_liberty(b, r)
                assert b.color[lib] == rules.EMPTY


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.sampled_from([5, 7, 9, 13]))
def test_incremental_key_and_strings_match_recomputation(seed, size):
    position = Position(size=size)
    for _ in random_game_moves(position, random.Random(seed), max_moves=4 * size * size):
        assert position.board.hash[0] == rules.recompute_hash(position.board)
        check_strings(position)
    empties = [p for p in position.points() if position.board.color[p] == rules.EMPTY]
    n = position.board.scalars[rules.N_EMPTY]
    assert sorted(position.board.empties[:n].tolist()) == sorted(empties)


def test_symmetries_form_a_group_with_the_stated_inverses():
    size = 9
    for s in range(N_SYMMETRIES):
        for x in range(size):
            for y in range(size):
                tx, ty = transform_xy(s, x, y, size)
                assert transform_xy(int(INVERSE[s]), tx, ty, size) == (x, y)
    maps = symmetry_maps(size)
    for s in range(N_SYMMETRIES):
        assert sorted(maps[s][maps[s] > 0].tolist()) == sorted(maps[0][maps[0] > 0].tolist())


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.sampled_from([5, 8, 9, 19]), length=st.integers(0, 60))
def test_canonical_key_is_equal_for_all_symmetric_positions(seed, size, length):
    original = Position(size=size)
    moves = list(random_game_moves(original, random.Random(seed), max_moves=length))
    key, sym = original.canonical()
    maps = symmetry_maps(size)
    for s in range(N_SYMMETRIES):
        image = Position(size=size)
        for m in moves:
            image.play(PASS if m == PASS else int(maps[s, m]))
        image_key, image_sym = image.canonical()
        assert image_key == key
        # The returned symmetry really takes the image to the canonical orientation.
        canonical = Position(size=size)
        for m in moves:
            canonical.play(PASS if m == PASS else int(maps[image_sym, maps[s, m]]))
        assert canonical.key == key


def test_side_to_move_and_ko_are_part_of_the_key():
    a = Position.from_moves("E5", size=9)
    b = Position.from_moves("E5 pass", size=9)
    assert a.stone_key == b.stone_key
    assert a.key != b.key
    ko = Position.from_ascii(
        """
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
        """
    )
    before = ko.stone_key
    ko.play("C4")
    no_ko = Position.from_ascii(ko.to_ascii(), to_move="W")
    assert ko.stone_key == no_ko.stone_key != before
    assert ko.key != no_ko.key


def test_settled_score_equals_flood_fill_score_at_playout_ends():
    from obook.playout.policies import ATARI50, LIGHT, new_scratch, playout
    from obook.rng import make_rng

    for size in (5, 9, 13):
        start = rules.new_board(size)
        work = rules.new_board(size)
        scratch = new_scratch(start)
        rng = make_rng(size)
        for i in range(30):
            rules.copy_board(work, start)
            score, moves = playout(work, LIGHT if i % 2 else ATARI50, rng, 7.5, scratch)
            assert moves > 0
            assert score == pytest.approx(rules.area_score(work, 7.5))
            assert work.hash[0] == rules.recompute_hash(work)
