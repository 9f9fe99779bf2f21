"""Dynamic komi in even games (``dynamic_komi=on``): Pachi's "linear" dynkomi past its handicap phase.

A search whose every move wins (or every move loses) cannot tell its moves apart: the win rates
all sit near 1, and the most visited move may throw away points it will need if it misjudged a
fight. Pachi (Baudiš 2011, "Balancing MCTS by Dynamically Adjusting the Komi Value"; ``uct/dynkomi.c``,
``linear_permove``) makes a player that is clearly winning search as if it had to give a little
more komi, so that the search keeps preferring the moves that keep the margin:

- nothing before move ``start_move(size, colour)`` (15 on boards up to 9x9; the opening's values
  are too noisy to act on);
- then, before each of its moves, from the player's win rate at the root (real simulations, at
  least ``MIN_VISITS`` of them, as Pachi's ``GJ_MINGAMES``), under the extra komi it searched with:
  above ``GREEN`` (0.85) it gives one point more, unless that reaches the ratchet; below ``ORANGE``
  (0.8) with extra komi it gives ``DROP`` (4) points back and the ratchet (a cap on the extra komi
  for the rest of the game) falls to the new value; below 0.5 once a ratchet is set, the extra komi
  and the ratchet go to 0 for the rest of the game ("too dangerous in this game").

The extra komi is never negative: a losing player is not told it is less behind. Each colour has
its own state (one player object may search for both sides).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from obook.go.board import BLACK

GREEN = 0.85
ORANGE = 0.8
DROP = 4.0
MIN_VISITS = 500


def start_move(size: int, colour: int) -> int:
    """The move number from which the extra komi adapts (Pachi's ``linear_moves``)."""
    if size <= 9:
        return 15
    if size == 15:
        return 100
    if size >= 19:
        return 200 if colour == BLACK else 150
    return 50


@dataclass
class DynamicKomi:
    """One colour's extra komi (points it pretends to give, never negative) and its ratchet."""

    extra: float = 0.0
    ratchet: float = math.inf

    def update(self, value: float | None, visits: float, moves_played: int, size: int, colour: int) -> float:
        """The extra komi for the next search, from the player's root win rate ``value`` (None:
        nothing known) over ``visits`` real simulations, ``moves_played`` moves into the game."""
        if moves_played < start_move(size, colour) or value is None or visits < MIN_VISITS:
            return self.extra
        if value < 0.5 and 0 < self.ratchet < math.inf:
            self.extra = self.ratchet = 0.0
        elif value < ORANGE and self.extra > 0:
            self.extra = self.ratchet = max(self.extra - DROP, 0.0)
        elif value > GREEN and self.extra + 1 <= self.ratchet:
            self.extra += 1.0
        return self.extra


def effective_komi(komi: float, extra: float, colour: int) -> float:
    """The komi the search counts with when ``colour`` pretends to give ``extra`` points more."""
    return komi + extra if colour == BLACK else komi - extra


__all__ = ["DynamicKomi", "effective_komi", "start_move"]
