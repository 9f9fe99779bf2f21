"""The heavy rules' rates and simulation balancing's gradient (obook/playout/balancing.py)."""

import numpy as np
import pytest

from obook.go import board as rules
from obook.go.position import Position
from obook.playout.balancing import Balancer, logits_of, rates_of
from obook.playout.heavy import RULES
from obook.playout.policies import HEAVY, new_scratch, run_playout, select_move
from obook.rng import make_rng

def test_a_rule_with_candidates_chooses_at_its_rate_and_its_score_counts_the_choices():
    # Black's C2 puts White's B2 in atari; heavy's rule 1 always extends at B1 (two liberties).
    position = Position.from_moves(["B3", "B2", "A2", "E5", "C2"], size=5)
    rate = 0.3
    rates = np.array([rate, 0.0, 0.0, 0.0])
    score = np.zeros(len(RULES))
    rng = make_rng(5)
    scratch = new_scratch(position.board)
    work = rules.new_board(position.size)
    draws = 4000
    extensions = 0
    for _ in range(draws):
        rules.copy_board(work, position.board)
        if position.vertex(int(select_move(work, HEAVY, rng, scratch, rates, score))) == "B1":
            extensions += 1
    chosen = score[0] + rate * draws  # each choice adds 1 - r, each pass-over -r
    assert chosen == pytest.approx(round(chosen), abs=1e-6)
    assert abs(chosen / draws - rate) < 0.03
    # The uniform rule picks B1 among the 20 other valid points as well.
    assert extensions == pytest.approx(chosen + (draws - chosen) / 21, rel=0.1)
    assert np.all(score[1:] == 0.0)  # rules at rate 0 never choose: their score function is 0


def test_rates_of_one_play_the_heavy_policy_move_for_move():
    position = Position.from_moves(["E5", "C4", "D4", "D5"], size=9)
    records = []
    for rates in (None, np.ones(len(RULES))):
        work = rules.new_board(9)
        rules.copy_board(work, position.board)
        moves = np.zeros(400, np.int32)
        score = np.zeros(len(RULES))
        rng = make_rng(3)
        if rates is None:
            n = run_playout(work, HEAVY, rng, new_scratch(work), moves, None, 0, None, 0.0)[1]
        else:
            n = run_playout(work, HEAVY, rng, new_scratch(work), moves, None, 0, None, 0.0, rates, score)[1]
            assert np.all(score == 0.0)
        records.append((moves[:n].tolist(), int(rng[0])))
    assert records[0] == records[1]


def test_the_logits_and_the_rates_are_inverse():
    rates = np.array([0.1, 0.5, 0.9, 0.99])
    assert rates_of(logits_of(rates)) == pytest.approx(rates)


def test_a_balancer_refuses_targets_that_do_not_fit_its_positions():
    position = Position.from_moves(["E5"])
    with pytest.raises(ValueError, match="as many target values"):
        Balancer([position], [0.5, 0.5])
    with pytest.raises(ValueError, match="in \\[0, 1\\]"):
        Balancer([position], [1.5])


def test_balancing_moves_a_rate_toward_the_rate_that_made_the_targets():
    """Targets made by playouts at a low pattern rate: balancing from high rates lowers it."""
    positions = [Position.from_moves(moves, size=7) for moves in
                 (["D4", "C3", "C4", "D3"], ["C3", "D4", "E3", "E4"], ["D4", "D3", "C3", "E4", "E3"],
                  ["C4", "D4", "D3", "E3", "C2"], ["D5", "C3", "C4", "D3", "E3", "B4"])]
    truth = np.array([0.95, 0.95, 0.05, 0.95])
    maker = Balancer(positions, [0.5] * len(positions), seed=2)
    targets = [maker.value(i, truth, 20000) for i in range(len(positions))]
    trainer = Balancer(positions, targets, seed=3)
    start = [0.95] * len(RULES)
    before = trainer.error(start, 4000)
    last = None
    for last in trainer.fit(start, steps=30, step_size=300.0, value_playouts=256, gradient_playouts=256, batch=5):
        pass
    assert last.rates[2] < 0.6
    assert trainer.error(last.rates, 4000) < before
