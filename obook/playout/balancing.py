"""Simulation balancing of the heavy policy's rule rates (Silver & Tesauro 2009, "Monte-Carlo
Simulation Balancing"; Huang, Coulom & Lin 2010, "... in Practice").

A playout policy serves the search when the mean outcome of its playouts from a position is that
position's value, not when its moves are strong: errors that cancel over a playout cost nothing,
errors that pile up one way bias every evaluation. Simulation balancing fits the policy's
parameters to that: with the value V(s) = E[z] (z = 1 when Black wins the playout) and
psi_t = d log pi(a_t | s_t) / d theta, the policy-gradient theorem gives
grad V(s) = E[(z - b) * sum_t psi_t] for any constant baseline b, and one step over training
positions s with target values V*(s) (deep searches' values) is

    theta <- theta + alpha * mean_s (V*(s) - V_M(s)) * g_N(s)

with V_M from M playouts and g_N from N others, independent so that the product's mean is the
true gradient of half the squared error. Both players' moves count: one policy plays both sides.

The parameters here are the heavy rules' rates (``heavy.RULES``), each the logistic of a logit
theta_k; a rule with candidates chooses with probability rates[k] (``heavy._chooses`` adds each
decision's psi to the playout's score-function sums).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from obook.go.board import copy_board, new_board
from obook.go.position import Position
from obook.jit import hot
from obook.playout.heavy import RULES
from obook.playout.policies import HEAVY, new_scratch, playout_score, run_playout
from obook.rng import make_rng


@hot
def balanced_playouts(start, work, rng, komi, scratch, rates, count, baseline, score, gradient):
    """``count`` heavy playouts at ``rates`` from ``start``; return Black's wins. With ``gradient``
    given, add to it each playout's (z - ``baseline``) times its decisions' summed score functions
    (``score``: one cell a rule, scratch)."""
    wins = 0
    for _ in range(count):
        copy_board(work, start)
        score[:] = 0.0
        _, _, two_passes = run_playout(work, HEAVY, rng, scratch, None, None, 0, None, 0.0, rates, score)
        z = 1 if playout_score(work, komi, two_passes) > 0 else 0
        wins += z
        if gradient is not None:
            for k in range(score.shape[0]):
                gradient[k] += (z - baseline) * score[k]
    return wins


def rates_of(logits: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-logits))


def logits_of(rates: Sequence[float]) -> np.ndarray:
    r = np.asarray(rates, np.float64)
    return np.log(r / (1.0 - r))


@dataclass
class BalancingStep:
    step: int
    rates: np.ndarray  # after the step
    error: float  # mean squared error (V* - V_M)^2 over the step's positions, before the step


class Balancer:
    """Playouts from a fixed set of positions (9x9 or any size, each with its own komi) at chosen
    rates: their values, their errors against targets, and the simulation-balancing steps."""

    def __init__(self, positions: Sequence[Position], targets: Sequence[float], seed: int = 1):
        if len(positions) != len(targets) or not positions:
            raise ValueError("simulation balancing needs as many target values as positions, at least one")
        if any(not 0.0 <= t <= 1.0 for t in targets):
            raise ValueError("target values are Black's win rates, in [0, 1]")
        self.positions = list(positions)
        self.targets = np.asarray(targets, np.float64)
        self.rng = make_rng(seed)
        self.score = np.zeros(len(RULES), np.float64)
        self._work = {}

    def _board_work(self, position: Position):
        work = self._work.get(position.size)
        if work is None:
            work = self._work[position.size] = (new_board(position.size), new_scratch(position.board))
        return work

    def value(self, index: int, rates: np.ndarray, playouts: int) -> float:
        """Black's win rate over ``playouts`` playouts from position ``index``."""
        position = self.positions[index]
        work, scratch = self._board_work(position)
        wins = balanced_playouts(position.board, work, self.rng, position.komi, scratch, rates, playouts, 0.0,
                                 self.score, None)
        return wins / playouts

    def error(self, rates: Sequence[float], playouts: int, indices: Sequence[int] | None = None) -> float:
        """Mean squared error of the playouts' values against the targets (each value from
        ``playouts`` playouts, so it includes their sampling variance, about 0.25 / playouts)."""
        rates = np.asarray(rates, np.float64)
        chosen = range(len(self.positions)) if indices is None else indices
        return float(np.mean([(self.targets[i] - self.value(i, rates, playouts)) ** 2 for i in chosen]))

    def gradient(self, index: int, rates: np.ndarray, playouts: int, baseline: float) -> np.ndarray:
        """g_N: the estimated gradient of position ``index``'s value in the rules' logits."""
        position = self.positions[index]
        work, scratch = self._board_work(position)
        gradient = np.zeros(len(RULES), np.float64)
        balanced_playouts(position.board, work, self.rng, position.komi, scratch, rates, playouts, baseline,
                          self.score, gradient)
        return gradient / playouts

    def fit(self, rates: Sequence[float], steps: int, step_size: float, value_playouts: int = 64,
            gradient_playouts: int = 64, batch: int = 32) -> Iterator[BalancingStep]:
        """Simulation balancing from ``rates``: each step draws ``batch`` positions, estimates each
        one's value (M = ``value_playouts``) and gradient (N = ``gradient_playouts``, baseline the
        value) and moves the logits by ``step_size`` times the batch's mean of (V* - V_M) g_N."""
        logits = logits_of(rates)
        order = np.random.default_rng(int(self.rng[0] % (2**32)))
        for step in range(1, steps + 1):
            current = rates_of(logits)
            chosen = order.choice(len(self.positions), size=min(batch, len(self.positions)), replace=False)
            update = np.zeros_like(logits)
            errors = []
            for i in chosen:
                v = self.value(int(i), current, value_playouts)
                delta = self.targets[i] - v
                errors.append(delta * delta)
                update += delta * self.gradient(int(i), current, gradient_playouts, v)
            logits = logits + step_size * update / len(chosen)
            yield BalancingStep(step, rates_of(logits), float(np.mean(errors)))


__all__ = ["Balancer", "BalancingStep", "balanced_playouts", "logits_of", "rates_of"]
