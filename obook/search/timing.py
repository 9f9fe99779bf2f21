"""The time manager (``time_manager=on``): a move's seconds spent where the best move is unstable.

Under a time budget of ``base`` seconds a move, a plain search stops at ``base`` whatever the root
says. The time manager (in the manner of Pachi's and Fuego's) keeps a bank of the seconds its
searches saved in this game and gives each search a **target** of ``base`` plus an even share of
the bank: the bank over the own moves the game is expected to have left (``own_moves_left``), so
that the saving is spent over the rest of the game instead of waiting for hard moves. A search
stops **early** once the most visited move cannot be overtaken before the target: the visits the
runner-up lacks exceed what the search does in the time left at its current rate. A search that
reaches its target while the best move is **unstable** (the most visited move is not the one of
the best win rate, or its visits are below ``ratio`` times the runner-up's) goes on, drawing on the
rest of the bank; no search goes beyond ``base`` plus ``extend`` times ``base``. What a search saves under ``base`` goes
into the bank and what it spends beyond comes out, so a game's mean time a move never exceeds
``base``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_FRACTION = 0.25  # no early stop before this share of the base time (the rate is not yet known)
UNSTABLE_RATIO = 1.5  # the most visited move is unstable below this many times the runner-up's visits
VALUE_VISITS = 0.1  # a move's win rate counts against the most visited one's from this share of its visits
MIN_MOVES_LEFT = 4  # the bank's share is never more than a quarter of it


def own_moves_left(empty_points: int, size: int) -> float:
    """The mover's expected moves to the game's end: half the empty points beyond the quarter of the
    board a finished game still has empty (9x9: 30 at the start, 15 with 50 empty points)."""
    return max(MIN_MOVES_LEFT, (empty_points - size * size / 4) / 2)


@dataclass(frozen=True)
class RootSummary:
    """What the time manager reads of the root: the real visits (no prior) of the two most visited
    moves, and whether the most visited one also has the best win rate among the well-visited."""

    first: float
    second: float
    first_has_best_value: bool

    @property
    def unstable(self) -> bool:
        return not self.first_has_best_value or self.first < UNSTABLE_RATIO * self.second


def summarize_root(visits: np.ndarray, wins: np.ndarray) -> RootSummary:
    """``visits`` and ``wins`` of the root's children, without their prior (virtual) part."""
    if len(visits) == 0:
        return RootSummary(0.0, 0.0, True)
    order = np.argsort(-visits, kind="stable")
    first = float(visits[order[0]])
    second = float(visits[order[1]]) if len(visits) > 1 else 0.0
    if first <= 0:
        return RootSummary(first, second, True)
    rates = np.where(visits > 0, wins / np.maximum(visits, 1e-9), -1.0)
    contenders = visits >= VALUE_VISITS * first
    best_rate = float(np.max(np.where(contenders, rates, -1.0)))
    return RootSummary(first, second, bool(rates[order[0]] >= best_rate - 1e-12))


class TimeBank:
    """The bank of one game's saved seconds and the stop rule of each search (module docstring).
    ``extend``: the most a move may spend beyond its base, in multiples of it."""

    def __init__(self, extend: float = 1.0):
        self.extend = extend
        self.bank = 0.0

    def new_game(self) -> None:
        self.bank = 0.0

    def should_stop(self, base: float, elapsed: float, done: int, root: RootSummary,
                    moves_left: float = 1.0) -> bool:
        """Whether a search of ``done`` simulations in ``elapsed`` seconds stops now, with
        ``moves_left`` own moves expected in the game (its share of the bank: module docstring)."""
        most = min(self.bank, self.extend * base)
        target = base + min(self.bank / max(moves_left, 1.0), most)
        if elapsed < target:
            if elapsed < MIN_FRACTION * base or done <= 0:
                return False
            rate = done / elapsed
            return root.first - root.second > rate * (target - elapsed)
        if elapsed >= base + most:
            return True
        return not root.unstable

    def charge(self, base: float, elapsed: float) -> None:
        """Book a finished search: what it saved under ``base`` goes in, what it spent beyond comes out."""
        self.bank = max(0.0, self.bank + base - elapsed)


__all__ = ["RootSummary", "TimeBank", "own_moves_left", "summarize_root"]
