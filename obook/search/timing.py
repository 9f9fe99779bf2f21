"""The time manager (``time_manager=on``): a move's seconds spent where the best move is unstable.

Under a time budget of ``base`` seconds a move, a plain search stops at ``base`` whatever the root
says. The time manager (in the manner of Pachi's and Fuego's) stops **early** once the most visited
move cannot be overtaken in the time left: the visits the runner-up lacks exceed what the search
does in the rest of ``base`` at its current rate. The seconds it saves go into a bank, kept for
the rest of the game. A search that reaches ``base`` while the best move is **unstable** (the most
visited move is not the one of the best win rate, or its visits are below ``ratio`` times the
runner-up's) goes on, drawing on the bank, up to ``extend`` times ``base`` more. So a game's
mean time a move never exceeds ``base``: what an easy move saves, a hard one spends.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

MIN_FRACTION = 0.25  # no early stop before this share of the base time (the rate is not yet known)
UNSTABLE_RATIO = 1.5  # the most visited move is unstable below this many times the runner-up's visits
VALUE_VISITS = 0.1  # a move's win rate counts against the most visited one's from this share of its visits


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

    def should_stop(self, base: float, elapsed: float, done: int, root: RootSummary) -> bool:
        """Whether a search of ``done`` simulations in ``elapsed`` seconds stops now."""
        if elapsed < base:
            if elapsed < MIN_FRACTION * base or done <= 0:
                return False
            rate = done / elapsed
            return root.first - root.second > rate * (base - elapsed)
        if elapsed >= base + min(self.bank, self.extend * base):
            return True
        return not root.unstable

    def charge(self, base: float, elapsed: float) -> None:
        """Book a finished search: what it saved under ``base`` goes in, what it spent beyond comes out."""
        self.bank = max(0.0, self.bank + base - elapsed)


__all__ = ["RootSummary", "TimeBank", "summarize_root"]
