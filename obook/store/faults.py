"""Test hooks that put the store's callers in the situations the fault tests need, each read here
only and off unless its environment variable is set:

- ``OBOOK_TEST_CLOCK_OFFSET`` (seconds, may be negative): this process's clock runs that far from the
  machine's, as a machine whose clock drifted. ``obook.store.models.utcnow`` and the grid's tokens
  read it; leases do not depend on it (they are dated by the database's clock).
- ``OBOOK_TEST_POISON_GAME`` (a game id): playing a move of that game raises ``PoisonedGame``, as
  an engine bug would (``check_poison`` is called before each move by the build and the grid).
"""

from __future__ import annotations

import os

from obook.errors import ObookError


class PoisonedGame(RuntimeError):
    """Raised by the poison test hook (a stand-in for an engine bug)."""


def clock_offset() -> float:
    value = os.environ.get("OBOOK_TEST_CLOCK_OFFSET", "")
    if not value:
        return 0.0
    try:
        return float(value)
    except ValueError:
        raise ObookError(f"OBOOK_TEST_CLOCK_OFFSET must be a number of seconds, not {value!r}") from None


def check_poison(game_id: int) -> None:
    value = os.environ.get("OBOOK_TEST_POISON_GAME", "")
    if value and value.strip() == str(game_id):
        raise PoisonedGame(f"test hook OBOOK_TEST_POISON_GAME: game {game_id} is poison")
