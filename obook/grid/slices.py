"""One grid task: a bounded slice of one unit of work (a game's moves, or one expansion), handed on
to the next task through the store.

A unit is worked on by whoever holds its lease (``obook.store.jobs``). Between two tasks the lease
is held by a *token*, a name carried by the task message (``q:<ms since epoch>:<random>``): the
task that receives it swaps the token for its own name (``Lease.claim``), works (a game's moves
until its slice budget is spent; an expansion whole), swaps its name for a fresh token and sends
that token in the next message. So:

- a duplicate or late delivery (Redis ``visibility_timeout``, a requeue after a killed child) finds
  the lease under another name and does nothing;
- a lost message (the broker restarted, a publish failed) leaves a token that expires, and the
  driver sends the game again;
- a killed worker leaves its own name on a lease that expires, and the driver sends the game again;
- a slice that fails with any other error than a lost lease or the store's (an engine bug) counts
  a failure on the unit and on the worker and gives the unit back (``Lease.fail``), to be tried
  again after a back-off (``OBOOK_RETRY_SECONDS``, doubling); after ``OBOOK_MAX_GAME_FAILURES``
  failures on ``OBOOK_SET_ASIDE_WORKERS`` different workers the unit is set aside with its reason
  instead of being resent for ever; a worker that fails ``OBOOK_QUARANTINE_FAILURES`` units in a
  row is quarantined (``grid_lease``: the grid's rules, set on a pool process's lease);
- a slice lasts ``slice_seconds`` plus at most one move, far below the visibility timeout; told to
  stop (a warm shutdown), it stores the move it is playing and at most the next one, already
  counted as started, then hands the game on.
"""

from __future__ import annotations

import logging
import os
import time
from typing import Callable

from obook.config import settings
from obook.errors import ObookError
from obook.store.db import StoreError
from obook.store.faults import check_poison, clock_offset, kill_point
from obook.store.leases import Lease, LeaseLost
from obook.store.models import SET_ASIDE

log = logging.getLogger(__name__)

TOKEN_PREFIX = "q:"

BUSY, FINISHED, HANDED_ON, LOST, STOPPED, FAILED = "busy", "finished", "handed-on", "lost", "stopped", "failed"


def new_token() -> str:
    """A token named by the time it was made on this machine's clock (shifted by the test hook
    OBOOK_TEST_CLOCK_OFFSET) and random bits; the time is for people reading the store, the driver
    never reads it (it ages tokens by its own clock)."""
    return f"{TOKEN_PREFIX}{int((time.time() + clock_offset()) * 1000)}:{os.urandom(4).hex()}"


HandOn = Callable[[int, str], None]  # send (unit id, token) to the next task


def grid_lease(lease: Lease, worker_id: str) -> Lease:
    """Give a grid pool process's lease the grid's rules on failures: its worker's identity (the
    ``obook worker`` it belongs to, shared by its pool processes), set-aside only after failures on
    ``OBOOK_SET_ASIDE_WORKERS`` different workers, quarantine at ``OBOOK_QUARANTINE_FAILURES``
    failures in a row."""
    s = settings()
    if s.set_aside_workers < 1 or s.quarantine_failures < 1:
        raise ObookError(f"OBOOK_SET_ASIDE_WORKERS ({s.set_aside_workers}) and OBOOK_QUARANTINE_FAILURES "
                         f"({s.quarantine_failures}) must be at least 1")
    lease.worker_id = worker_id
    lease.min_workers = s.set_aside_workers
    lease.quarantine_after = s.quarantine_failures
    return lease


def play_slice(worker, unit_id: int, token: str | None, slice_seconds: float, hand_on: HandOn,
               stop_requested: Callable[[], bool] = lambda: False) -> str:
    """Work on ``unit_id`` with ``worker`` (``obook.book.kinds``: a game's player, an expander) from
    where the store has it until it is done or ``slice_seconds`` have passed (at least one step),
    then hand it on. Returns what happened (BUSY: someone else holds it)."""
    unit = worker.lease.jobs.name
    held = worker.claim(unit_id, handoff=token)
    if held is None:
        log.info("%s %d: lease held elsewhere, nothing to do (duplicate or late message)", unit, unit_id)
        return BUSY
    started = time.monotonic()
    try:
        while True:
            more = not stop_requested() and time.monotonic() - started < slice_seconds
            check_poison(unit, unit_id)
            if worker.advance(held, more=more):  # more: the next step is prepared (a game's next move counted)
                return FINISHED
            if not more:
                break
    except LeaseLost as exc:
        log.warning("%s", exc)
        return LOST
    except StoreError as exc:
        log.warning("%s %d: store error, handing it on: %s", unit, unit_id, exc)
        hand_over(worker.lease, unit_id, hand_on, attempts=5)
        return LOST
    except Exception as exc:  # noqa: BLE001 - a poison unit: count it, give it back, never resend it for ever
        return fail_unit(worker.lease, unit, unit_id, exc)
    hand_over(worker.lease, unit_id, hand_on)
    return STOPPED if stop_requested() else HANDED_ON


def fail_unit(lease: Lease, unit: str, unit_id: int, exc: BaseException) -> str:
    """Record a failure of ``unit_id`` (the error's type and message are its reason) and give it back."""
    reason = f"{type(exc).__name__}: {exc}"
    log.exception("%s %d failed: %s", unit, unit_id, reason)
    try:
        status = lease.fail(unit_id, reason)
    except StoreError as store_exc:
        log.warning("%s %d: cannot record its failure (%s); its lease will expire", unit, unit_id, store_exc)
        return FAILED
    if status == SET_ASIDE:
        log.error("%s %d set aside after repeated failures: %s", unit, unit_id, reason)
    if lease.quarantined:
        log.error("worker %s quarantined: %s; it takes no more work", lease.worker_id, lease.quarantined)
    return FAILED


def hand_over(lease: Lease, unit_id: int, hand_on: HandOn, attempts: int = 1) -> bool:
    """Swap our name on the lease for a fresh token and send it. When the store or the broker fails,
    the lease simply expires and the driver sends the unit again."""
    for attempt in range(attempts):
        try:
            token = new_token()
            if not lease.hand_on(unit_id, token):
                return False
            break
        except StoreError as exc:
            if attempt + 1 == attempts:
                log.warning("%d: cannot hand the lease on (%s); it will expire", unit_id, exc)
                return False
            time.sleep(0.5 * (attempt + 1))
    kill_point("after_hand_on")
    try:
        hand_on(unit_id, token)
    except Exception as exc:  # noqa: BLE001 - any broker failure: the driver resends after the token expires
        log.warning("%d: cannot send the next slice (%s); the driver will resend it", unit_id, exc)
        return False
    return True
