"""The search's prior knowledge: the evidence each heuristic gives, and how it enters the tree."""

import numpy as np
import pytest

from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import Position
from obook.go.tactics import mover_code
from obook.search.priors import move_evidence, prior_for
from obook.search.shapes import canonical_codes, shipped_shape_evidence

NO_SHAPES = np.zeros(1 << 16)


def evidence(position: Position, vertex: str, shapes=NO_SHAPES) -> tuple[float, float]:
    point = PASS if vertex == "pass" else position.point(vertex)
    return move_evidence(position.board, point, position.to_move, shapes)


def test_a_capture_and_an_escape_are_good_evidence():
    # White B2 is in atari: Black captures at B1, White would escape there.
    shape = """
        . . . . .
        . . . . .
        . X . . .
        X O X . .
        . . . . .
        """
    black = Position.from_ascii(shape, to_move="B")
    good, bad = evidence(black, "B1")
    assert good >= 2 and bad == 0
    white = Position.from_ascii(shape, to_move="W")
    good, bad = evidence(white, "B1")
    assert good >= 2 and bad == 0


def test_capturing_the_last_move_counts_more_than_a_lone_capture():
    position = Position.from_ascii(
        """
        . . . . .
        . . . . .
        . O . . .
        O . O . .
        . . . . .
        """, to_move="B")
    position.play(position.point("B2"))  # Black plays into atari; White takes it
    assert evidence(position, "B1")[0] >= 3


def test_self_atari_of_a_group_is_worse_than_of_a_lone_stone():
    group = Position.from_ascii(
        """
        . . . . .
        O O O . .
        X X O . .
        . O . . .
        . . . . .
        """, to_move="B")
    # A2 joins the black string in atari and leaves it one liberty (A1).
    assert evidence(group, "A2") == (0.0, 3.0)
    lone = Position.from_ascii(
        """
        . . . . .
        . . . . .
        . O . . .
        O . O . .
        . . . . .
        """, to_move="B")
    # A lone stone at B2 in atari may be a throw-in: a smaller penalty.
    assert evidence(lone, "B2") == (0.0, 1.0)


def test_learned_shapes_dislike_the_empty_first_line_and_an_early_pass():
    shapes = shipped_shape_evidence()
    empty = Position(size=9)
    assert evidence(empty, "A5", shapes) == (0.0, 2.0)  # the clip: professionals never start there
    assert evidence(empty, "E5", shapes)[1] > 0  # an empty area is below average too, less so
    assert evidence(empty, "E5", shapes)[1] < 2.0
    assert evidence(empty, "pass", shapes) == (0.0, 1.0)


def test_shape_codes_are_seen_by_the_mover_and_shared_by_symmetry():
    # B2 with a black stone to its north (B3): Black sees its own stone, White the opponent's.
    position = Position.from_ascii(
        """
        . . . . .
        . . . . .
        . X . . .
        . . . . .
        . . . . .
        """, to_move="B")
    from obook.go.board import BLACK as OWN
    from obook.go.board import WHITE as OPPONENT
    from obook.go.tactics import pattern_code

    code = int(pattern_code(position.board, position.point("B2")))
    assert code == OWN  # north is the lowest two bits
    assert mover_code(code, WHITE) == OPPONENT
    canon = canonical_codes()
    south = int(pattern_code(position.board, position.point("B4")))  # the stone is south of B4
    west = int(pattern_code(position.board, position.point("C3")))  # and west of C3
    assert south == OWN << 8 and west == OWN << 12
    assert canon[south] == canon[west] == canon[code]


def test_prior_is_even_visits_plus_weighted_evidence():
    position = Position.from_ascii(
        """
        . . . . .
        . . . . .
        . X . . .
        X O X . .
        . . . . .
        """, to_move="B")
    shapes = shipped_shape_evidence()
    good, bad = evidence(position, "B1", shapes)
    visits, wins = prior_for(position.board, position.point("B1"), BLACK, 10.0, 5.0, shapes, 0)
    assert visits == pytest.approx(10 + 5 * (good + bad))
    assert wins == pytest.approx(5 + 5 * good)
    visits, wins = prior_for(Position(size=9).board, PASS, WHITE, 10.0, 5.0, shapes, 0)
    assert (visits, wins) == (15.0, 5.0)


def test_shipped_shape_counts_are_what_the_documented_command_learns(shared_dir, tmp_path):
    from obook.cli import main
    from obook.search.shapes import COUNTS_PATH

    out = tmp_path / "counts.npz"
    assert main(["learn", "shapes", str(shared_dir / "data" / "go9" / "aeb9x9"), str(out)]) == 0
    with np.load(out) as learned, np.load(COUNTS_PATH) as shipped:
        for key in ("codes", "chosen", "available"):
            assert np.array_equal(learned[key], shipped[key]), key
        # Every move played was one of the points counted as available, in its canonical shape.
        assert (learned["chosen"] <= learned["available"]).all()
        assert 20000 < learned["chosen"].sum() < 30000
        assert set(learned["codes"]) <= set(np.unique(canonical_codes()))


def test_ladder_reading_ranks_an_escape_into_a_working_ladder_below():
    from tests.go.test_ladder import BROKEN, LADDER
    from tests.search.test_movemodel import _root_priors

    def values(diagram: str, spec: str) -> dict[str, float]:
        position = Position.from_ascii(diagram, to_move="W")
        return {v: wins / visits for v, (wins, visits) in _root_priors(position, spec).items()}

    for prior in ("prior_model=off", "prior_model=on"):
        blind = values(LADDER, prior + ",ladders=off")
        seeing = values(LADDER, prior + ",ladders=on")
        # Without reading, running out of atari is among the best moves; reading, it is below average.
        assert blind["E4"] > 0.5 and sorted(blind.values()).index(blind["E4"]) >= len(blind) - 5
        assert seeing["E4"] < 0.5 and seeing["E4"] < blind["E4"] - 0.2, prior
        assert {v: x for v, x in seeing.items() if v != "E4"} == {v: x for v, x in blind.items() if v != "E4"}
        # With a ladder breaker the escape works, and reading keeps it where it was.
        assert values(BROKEN, prior + ",ladders=on")["E4"] == values(BROKEN, prior + ",ladders=off")["E4"] > 0.5


def test_ladder_reading_favours_the_atari_that_starts_a_working_ladder():
    from tests.search.test_movemodel import _root_priors

    position = Position.from_ascii(
        """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . X X . . . .
        . . X O . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        """, to_move="B")
    for prior in ("prior_model=off", "prior_model=on"):
        blind = {v: w / n for v, (w, n) in _root_priors(position, prior + ",ladders=off").items()}
        seeing = {v: w / n for v, (w, n) in _root_priors(position, prior + ",ladders=on").items()}
        assert seeing["D3"] > blind["D3"] and seeing["E4"] == blind["E4"], prior
        assert max(seeing, key=seeing.get) == "D3", prior
