"""The learned move model: its features, the MM fit, the shipped table and its use as the tree's prior."""

import numpy as np
import pytest

from obook.go.board import NO_POINT, PASS
from obook.go.position import Position
from obook.search import movemodel as mm
from obook.search.movefit import Competitions, collect, fit, log_likelihood, rank_accuracy, split_games, spread_patterns
from obook.search.movemodel import FEATURES_LEN, N_GROUPS, move_features, shipped_log_gamma


def features(position: Position, vertex: str, before_last: int = NO_POINT) -> list[int]:
    point = PASS if vertex == "pass" else position.point(vertex)
    out = np.zeros(FEATURES_LEN, np.int64)
    move_features(position.board, point, position.to_move, before_last, out)
    return [int(x) for x in out[:N_GROUPS]]


CAPTURE_SHAPE = """
    . . . . .
    . . . . .
    . X . . .
    X O X . .
    . . . . .
    """


def test_capture_extension_and_line():
    black = Position.from_ascii(CAPTURE_SHAPE, to_move="B")
    f = features(black, "B1")
    assert f[1] == mm.CAPTURE + 1  # a lone stone, not the last move's
    assert f[3] == mm.ABSENT and f[7] == mm.LINE  # no self-atari; first line
    white = Position.from_ascii(CAPTURE_SHAPE, to_move="W")
    f = features(white, "B1")
    assert f[2] == mm.EXTENSION  # out of atari, one stone
    assert f[1] == mm.ABSENT
    assert features(black, "C3")[7] == mm.LINE + 2


def test_capturing_the_last_move_and_distances():
    position = Position.from_ascii(
        """
        . . . . .
        . . . . .
        . O . . .
        O . O . .
        . . . . .
        """, to_move="B")
    position.play(position.point("B2"))  # Black plays into atari; White may take it at B1
    f = features(position, "B1", before_last=position.point("E5"))
    assert f[1] == mm.CAPTURE
    assert f[5] == mm.DIST_LAST + 0  # B1 is next to B2: distance 1 + 0 + 1 = 2
    assert f[6] == mm.DIST_BEFORE + min(3 + 4 + 4, 17) - 2  # from E5: dx 3, dy 4
    assert features(position, "pass")[8] == mm.PASS_FEATURE + 2  # most of the board is empty
    position.play(PASS)
    assert features(position, "pass") == [mm.ABSENT] * 8 + [mm.PASS_FEATURE]


def test_self_atari_by_size_and_atari():
    group = Position.from_ascii(
        """
        . . . . .
        O O O . .
        X X O . .
        . O . . .
        . . . . .
        """, to_move="B")
    assert features(group, "A2")[3] == mm.SELF_ATARI + 1  # joins two stones: three in atari
    lone = Position.from_ascii(
        """
        . . . . .
        . . . . .
        . O . . .
        O . O . .
        . . . . .
        """, to_move="B")
    assert features(lone, "B2")[3] == mm.SELF_ATARI
    atari = Position.from_ascii(
        """
        . . . . .
        . . . . .
        . . . . .
        . X O . .
        . . X . .
        """, to_move="B")
    assert features(atari, "D2")[4] == mm.ATARI  # White C2 keeps one liberty (C3)
    assert features(atari, "D4")[4] == mm.ABSENT


def _synthetic(true_log_gamma: np.ndarray, positions: int, candidates: int, seed: int) -> Competitions:
    """Competitions whose candidates have random capture and line features and whose winners are drawn
    from the Bradley-Terry model of ``true_log_gamma``."""
    rng = np.random.default_rng(seed)
    rows = positions * candidates
    feats = np.full((rows, N_GROUPS), mm.ABSENT, np.int32)
    feats[:, 1] = np.where(rng.random(rows) < 0.2, mm.CAPTURE + rng.integers(0, 4, rows), mm.ABSENT)
    feats[:, 7] = mm.LINE + rng.integers(0, 5, rows)
    strength = np.exp(np.append(true_log_gamma, 0.0)[feats].sum(axis=1)).reshape(positions, candidates)
    cumulative = np.cumsum(strength / strength.sum(axis=1, keepdims=True), axis=1)
    pick = (rng.random((positions, 1)) > cumulative).sum(axis=1)
    start = np.arange(positions + 1, dtype=np.int64) * candidates
    return Competitions(feats, np.zeros(rows, np.int32), start, start[:-1] + pick)


def test_mm_recovers_known_strengths_and_never_lowers_the_likelihood():
    truth = np.zeros(mm.TABLE_SIZE)
    truth[mm.CAPTURE:mm.CAPTURE + 4] = [2.0, 1.0, 0.5, 1.5]
    truth[mm.LINE:mm.LINE + 5] = [-1.5, -0.5, 0.3, 0.2, 0.0]
    train = _synthetic(truth, 4000, 20, seed=1)
    held = _synthetic(truth, 1000, 20, seed=2)
    history = []
    fitted = fit(train, sweeps=15, report=lambda sweep, ll: history.append(ll))
    assert all(b >= a - 1e-12 for a, b in zip(history, history[1:]))
    # The line group has no "absent" level, so its strengths are known up to a common factor.
    line = fitted[mm.LINE:mm.LINE + 5] - fitted[mm.LINE + 4]
    assert np.abs(line - truth[mm.LINE:mm.LINE + 5]).max() < 0.2
    assert np.abs(fitted[mm.CAPTURE:mm.CAPTURE + 4] - truth[mm.CAPTURE:mm.CAPTURE + 4]).max() < 0.25
    assert log_likelihood(fitted, held) > log_likelihood(np.zeros_like(fitted), held) + 0.1
    assert log_likelihood(fitted, held) == pytest.approx(log_likelihood(truth, held), abs=0.01)


def test_rank_accuracy_counts_ties_by_chance():
    start = np.array([0, 3, 6], np.int64)
    data = Competitions(np.zeros((6, N_GROUPS), np.int32), np.zeros(6, np.int32), start, np.array([0, 4]))
    scores = np.array([2.0, 1.0, 0.0, 5.0, 1.0, 1.0])  # first: ranked first; second: tied second and third
    assert rank_accuracy(scores, data, 1) == pytest.approx(0.5)
    assert rank_accuracy(scores, data, 2) == pytest.approx((1 + 0.5) / 2)


def test_refit_on_a_small_sample_of_professional_games_predicts_held_out_moves(shared_dir, tmp_path):
    from obook.cli import main
    from obook.search.movemodel import load_log_gamma

    games = shared_dir / "data" / "go9" / "aeb9x9"
    train_paths, held_paths = split_games(games, 5)
    train = collect(train_paths[:16])
    held = collect(held_paths[:4])
    fitted = fit(train, sweeps=8)
    uniform = np.zeros_like(fitted)
    assert log_likelihood(fitted, train) > log_likelihood(uniform, train) + 1.0
    assert log_likelihood(fitted, held) > log_likelihood(uniform, held) + 0.5
    scores = np.append(spread_patterns(fitted), 0.0)[held.features].sum(axis=1)
    assert rank_accuracy(scores, held, 5) > 3 * rank_accuracy(np.zeros(len(held.moves)), held, 5)

    sample = tmp_path / "games"
    sample.mkdir()
    for path in sorted(games.rglob("*.sgf"))[:6]:
        (sample / path.name).write_bytes(path.read_bytes())
    out = tmp_path / "model.npz"
    assert main(["learn", "move-model", str(sample), str(out), "--sweeps", "3"]) == 0
    table = load_log_gamma(out)
    assert table.shape == (mm.TABLE_SIZE,) and np.isfinite(table).all() and table.any()


def test_the_shipped_model_prefers_captures_and_shuns_self_atari_and_the_empty_first_line():
    table = shipped_log_gamma()
    assert table[mm.CAPTURE] > 1.0  # taking the stone that just played
    assert table[mm.SELF_ATARI + 2] < -1.0  # five stones or more left in atari
    empty = Position(size=9)

    def strength(position, vertex):
        return sum(table[k] for k in features(position, vertex) if k != mm.ABSENT)

    assert strength(empty, "E5") > strength(empty, "C3") > strength(empty, "A1")
    assert strength(empty, "pass") < strength(empty, "E5") - 3  # professionals never pass early
    assert table[mm.PASS_FEATURE] > 0 > table[mm.PASS_FEATURE + 1] > table[mm.PASS_FEATURE + 2]
    # Symmetric shapes share one strength: the four 3-3 points of the empty board.
    assert len({round(strength(empty, v), 9) for v in ("C3", "G3", "C7", "G7")}) == 1


def _root_priors(position: Position, spec: str) -> dict[str, tuple[float, float]]:
    """(virtual wins, virtual visits) of every child of a fresh root."""
    from obook.search.config import SearchConfig
    from obook.search.kernel import expand_root, new_search_scratch
    from obook.search.mcts import superko_allowed
    from obook.search.tree import ROOT, new_tree

    tree = new_tree(1000)
    allowed, _ = superko_allowed(position)
    params = SearchConfig.from_spec(spec).kernel_params(position.komi)
    expand_root(tree, position.board, params, new_search_scratch(position.size), allowed)
    first = int(tree.first_child[tree.meta[ROOT]])
    return {position.vertex(int(tree.move[k])): (float(tree.prior_wins[k]), float(tree.prior_visits[k]))
            for k in range(first, first + int(tree.n_children[tree.meta[ROOT]]))}


def test_model_priors_favour_the_capture_and_stay_off_by_default():
    position = Position.from_ascii(
        """
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . O O . . . .
        . . O X X O . . .
        . . O X X O . . .
        . . . O . . . . .
        """, to_move="W")
    model = {v: wins / visits for v, (wins, visits) in _root_priors(position, "prior_model=on").items()}
    assert max(model, key=model.get) == "E1"  # takes four stones
    assert model["A9"] < 0.5 and model["pass"] < 0.5
    hand = {v: wins / visits for v, (wins, visits) in _root_priors(position, "prior_model=off").items()}
    assert hand.keys() == model.keys() and hand != model
    assert _root_priors(position, "") == _root_priors(position, "prior_model=on")  # the model is the default
    assert set(_root_priors(position, "priors=off,prior_model=on").values()) == {(0.0, 0.0)}
