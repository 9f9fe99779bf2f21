"""Test hooks that put the store's callers in the situations the fault tests need, each read here
only and off unless its environment variable is set:

- ``OBOOK_TEST_CLOCK_OFFSET`` (seconds, may be negative): this process's clock runs that far from the
  machine's, as a machine whose clock drifted. ``obook.store.models.utcnow`` and the grid's tokens
  read it; leases, moves and finishes do not depend on it (they are dated by the database's clock).
- ``OBOOK_TEST_POISON_UNIT`` (``KIND:ID``, ``game:12`` or ``expansion:3``): working on that unit
  raises ``PoisonedUnit``, as an engine bug would (``check_poison`` is called before each step of
  a unit, a game's move or an expansion, by the build and the grid).
- ``OBOOK_TEST_FAIL_ALL`` (``1``): working on any unit raises ``PoisonedUnit`` in this process, as
  a broken worker (a bad machine, a broken install) would: every unit it takes fails.
- ``OBOOK_TEST_KILL_AT`` (``POINT:N``): the N-th time this process passes the code point ``POINT``
  (``kill_point``), it kills itself with SIGKILL, as a preempted machine would die there. The
  points (``KILL_POINTS``): ``after_append`` (a move stored), ``after_stage`` (an expansion's
  result staged, not applied), ``before_finish_commit`` (a finish or an apply written, not committed), ``after_finish_commit``, ``after_hand_on`` (a grid slice gave its lease
  to a token and has not published the message yet), ``repair`` (``verify --repair`` inside its
  write transaction, before it replaces the statistics).
- ``OBOOK_TEST_STOP_AT`` (``POINT:N:FILE``): at the same points, the N-th pass stops the process
  (SIGSTOP, as a machine frozen by its hypervisor or a long GC pause) after writing its pid to
  ``FILE``, which it creates exclusively: of the processes sharing the variable only the first to
  get there stops, the others go on. The test resumes it (SIGCONT) after its lease expired: a
  zombie writer, whose writes must all be refused.
"""

from __future__ import annotations

import os
import signal

from obook.errors import ObookError

KILL_POINTS = ("after_append", "after_stage", "before_finish_commit", "after_finish_commit", "after_hand_on", "repair")
_passes: dict[str, int] = {}


class PoisonedUnit(RuntimeError):
    """Raised by the poison test hook (a stand-in for an engine bug)."""


def clock_offset() -> float:
    value = os.environ.get("OBOOK_TEST_CLOCK_OFFSET", "")
    if not value:
        return 0.0
    try:
        return float(value)
    except ValueError:
        raise ObookError(f"OBOOK_TEST_CLOCK_OFFSET must be a number of seconds, not {value!r}") from None


def check_poison(unit: str, unit_id: int) -> None:
    if os.environ.get("OBOOK_TEST_FAIL_ALL", "") not in ("", "0"):
        raise PoisonedUnit(f"test hook OBOOK_TEST_FAIL_ALL: this worker fails every unit ({unit} {unit_id})")
    value = os.environ.get("OBOOK_TEST_POISON_UNIT", "")
    if value and value.strip() == f"{unit}:{unit_id}":
        raise PoisonedUnit(f"test hook OBOOK_TEST_POISON_UNIT: {unit} {unit_id} is poison")


def kill_point(point: str) -> None:
    value = os.environ.get("OBOOK_TEST_KILL_AT", "")
    if value and _nth_pass("OBOOK_TEST_KILL_AT", value, "POINT:N", point):
        os.kill(os.getpid(), signal.SIGKILL)
    value = os.environ.get("OBOOK_TEST_STOP_AT", "")
    if value:
        spec, _, path = value.rpartition(":")
        if not spec or not path:
            raise ObookError(f"OBOOK_TEST_STOP_AT={value!r}: use POINT:N:FILE")
        if _nth_pass("OBOOK_TEST_STOP_AT", spec, "POINT:N:FILE", point):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                return  # another process stopped there already
            os.write(fd, str(os.getpid()).encode())
            os.close(fd)
            os.kill(os.getpid(), signal.SIGSTOP)


def _nth_pass(variable: str, spec: str, form: str, point: str) -> bool:
    """Whether this pass at ``point`` is the N-th that ``spec`` (``POINT:N``) names."""
    name, _, count = spec.partition(":")
    if name not in KILL_POINTS or not count.isdigit() or int(count) < 1:
        raise ObookError(f"{variable}={spec!r}: use {form}, N >= 1, POINT one of {', '.join(KILL_POINTS)}")
    if name != point:
        return False
    key = f"{variable}:{point}"
    _passes[key] = _passes.get(key, 0) + 1
    return _passes[key] == int(count)
