"""Small statistics shared by the match runner, the experiments and Mines."""

from __future__ import annotations

import math
from collections.abc import Sequence


def game_points(winner: str | None) -> float:
    """Engine A's points in one match game whose ``winner`` is "A", "B" or None (a draw): 1, 0 or 1/2
    (the match runner's ``GameRecord.winner``, as every benchmark records it)."""
    return 1.0 if winner == "A" else 0.5 if winner is None else 0.0


def wilson_interval(successes: float, trials: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default; draws may count as half
    successes): well behaved near 0 and 1, where the normal approximation is not."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def paired_difference(first: Sequence[float], second: Sequence[float],
                      z: float = 1.959963984540054) -> tuple[float, float, float]:
    """The mean of ``first[i] - second[i]`` (two series' scores of the same games, e.g. with and
    without a book against an opponent on the same seeds) and its 95% interval from the pairs'
    own variance: what pairing removes (the seed's share of the result) leaves the interval."""
    if len(first) != len(second) or not first:
        raise ValueError("a paired difference needs two series of the same, non-zero length")
    differences = [a - b for a, b in zip(first, second)]
    n = len(differences)
    mean = sum(differences) / n
    variance = sum((d - mean) ** 2 for d in differences) / (n - 1) if n > 1 else 1.0
    half = z * math.sqrt(variance / n)
    return mean, mean - half, mean + half


def logistic_score(elo: float) -> float:
    """The expected score of a player ``elo`` logistic Elo points stronger than its opponent."""
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)  # a pair's mean score: 0, 1/2, 1, 3/2 or 2 points of 2


def pentanomial(pairs: Sequence[float]) -> list[int]:
    """How many colour-swapped game pairs scored each of ``PAIR_SCORES`` (fishtest's counts)."""
    counts = [0] * len(PAIR_SCORES)
    for score in pairs:
        counts[min(range(len(PAIR_SCORES)), key=lambda i: abs(PAIR_SCORES[i] - score))] += 1
    return counts


def sprt_llr(counts: Sequence[int], elo0: float, elo1: float) -> float:
    """The log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) given pentanomial ``counts``.

    Fishtest's generalised SPRT: the pairs' mean score is treated as normal with the sample's
    variance (Van den Bergh's approximation), each count regularised by 1e-3 so that a run of one
    outcome has a variance. Pairs, not games, because each pair plays both colours: the colour's
    advantage (large in 9x9 Go) leaves the variance, and the test needs fewer games."""
    regularised = [c + 1e-3 for c in counts]
    n = sum(regularised)
    mean = sum(c * s for c, s in zip(regularised, PAIR_SCORES)) / n
    variance = sum(c * (s - mean) ** 2 for c, s in zip(regularised, PAIR_SCORES)) / n
    real_pairs = sum(counts)
    if real_pairs == 0:
        return 0.0
    s0, s1 = logistic_score(elo0), logistic_score(elo1)
    return real_pairs * ((mean - s0) ** 2 - (mean - s1) ** 2) / (2.0 * variance)


def sprt_bounds(false_positive: float = 0.05, false_negative: float = 0.05) -> tuple[float, float]:
    """The log-likelihood ratios at which a sequential test stops: accept H0 at or below the
    first, H1 at or above the second (Wald), for the rates of accepting H1 wrongly
    (``false_positive``, alpha) and H0 wrongly (``false_negative``, beta)."""
    if not (0 < false_positive < 1 and 0 < false_negative < 1):
        raise ValueError("the error rates must lie strictly between 0 and 1")
    return math.log(false_negative / (1 - false_positive)), math.log((1 - false_negative) / false_positive)
