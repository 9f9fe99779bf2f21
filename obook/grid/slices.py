"""One grid task: a bounded slice of one game, handed on to the next task through the store.

A game is played by whoever holds its lease. Between two tasks the lease is held by a *token*, a
name carried by the task message (``q:<ms since epoch>:<random>``): the task that receives it swaps
the token for its own name (``GameLease.claim``), plays moves until its slice budget is spent, swaps
its name for a fresh token and sends that token in the next message. So:

- a duplicate or late delivery (Redis ``visibility_timeout``, a requeue after a killed child) finds
  the lease under another name and does nothing;
- a lost message (the broker restarted, a publish failed) leaves a token that expires, and the
  driver sends the game again;
- a killed worker leaves its own name on a lease that expires, and the driver sends the game again;
- a slice that fails with any other error than a lost lease or the store's (an engine bug) counts
  a failure on the game and gives it back at once (``GameLease.fail``); after
  ``OBOOK_MAX_GAME_FAILURES`` the game is set aside with its reason instead of being resent for ever;
- a slice lasts ``slice_seconds`` plus at most one move, far below the visibility timeout; told to
  stop (a warm shutdown), it stores the move it is playing and at most the next one, already
  counted as started, then hands the game on.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Callable

from obook.book.selfplay import SelfPlayer
from obook.store.db import StoreError
from obook.store.faults import check_poison, kill_point
from obook.store.leases import GameLease, LeaseLost
from obook.store.models import SET_ASIDE

log = logging.getLogger(__name__)

TOKEN_PREFIX = "q:"

BUSY, FINISHED, HANDED_ON, LOST, STOPPED, FAILED = "busy", "finished", "handed-on", "lost", "stopped", "failed"


def new_token() -> str:
    """A token named by the time it was made on this machine's clock (shifted by the test hook
    OBOOK_TEST_CLOCK_OFFSET) and random bits; the time is for people reading the store, the driver
    never reads it (it ages tokens by its own clock)."""
    from obook.store.faults import clock_offset

    return f"{TOKEN_PREFIX}{int((time.time() + clock_offset()) * 1000)}:{os.urandom(4).hex()}"


HandOn = Callable[[int, str], None]  # send (game id, token) to the next task


def play_slice(player: SelfPlayer, game_id: int, token: str | None, slice_seconds: float, hand_on: HandOn,
               stop_requested: Callable[[], bool] = lambda: False) -> str:
    """Play ``game_id`` from where the store has it until it is finished or ``slice_seconds`` have
    passed (at least one move), then hand it on. Returns what happened (BUSY: someone else holds it)."""
    held = player.claim(game_id, handoff=token)
    if held is None:
        log.info("game %d: lease held elsewhere, nothing to do (duplicate or late message)", game_id)
        return BUSY
    player.player.new_game()  # slices of other games ran in this process since
    started = time.monotonic()
    try:
        while True:
            more = not stop_requested() and time.monotonic() - started < slice_seconds
            check_poison(game_id)
            finished = player.advance(held, more=more)  # more: the next move is prepared (and counted)
            if finished:
                return FINISHED
            if not more:
                break
    except LeaseLost as exc:
        log.warning("%s", exc)
        return LOST
    except StoreError as exc:
        log.warning("game %d: store error, handing the game on: %s", game_id, exc)
        hand_over(player.lease, game_id, hand_on, attempts=5)
        return LOST
    except Exception as exc:  # noqa: BLE001 - a poison game: count it, give it back, never resend it for ever
        return fail_game(player.lease, game_id, exc)
    hand_over(player.lease, game_id, hand_on)
    return STOPPED if stop_requested() else HANDED_ON


def fail_game(lease: GameLease, game_id: int, exc: BaseException) -> str:
    """Record a failure of ``game_id`` (the error's type and message are its reason) and give it back."""
    reason = f"{type(exc).__name__}: {exc}"
    log.exception("game %d failed: %s", game_id, reason)
    try:
        status = lease.fail(game_id, reason)
    except StoreError as store_exc:
        log.warning("game %d: cannot record its failure (%s); its lease will expire", game_id, store_exc)
        return FAILED
    if status == SET_ASIDE:
        log.error("game %d set aside after repeated failures: %s", game_id, reason)
    return FAILED


def hand_over(lease: GameLease, game_id: int, hand_on: HandOn, attempts: int = 1) -> bool:
    """Swap our name on the lease for a fresh token and send it. When the store or the broker fails,
    the lease simply expires and the driver sends the game again."""
    for attempt in range(attempts):
        try:
            token = new_token()
            if not lease.hand_on(game_id, token):
                return False
            break
        except StoreError as exc:
            if attempt + 1 == attempts:
                log.warning("game %d: cannot hand the lease on (%s); it will expire", game_id, exc)
                return False
            time.sleep(0.5 * (attempt + 1))
    kill_point("after_hand_on")
    try:
        hand_on(game_id, token)
    except Exception as exc:  # noqa: BLE001 - any broker failure: the driver resends after the token expires
        log.warning("game %d: cannot send the next slice (%s); the driver will resend it", game_id, exc)
        return False
    return True
