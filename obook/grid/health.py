"""A grid worker's health as its record in the store says (``obook grid health``): healthy, or
quarantined with the reason (it failed ``OBOOK_QUARANTINE_FAILURES`` units in a row and takes no
more work). Compose's health check of a worker container runs it for the container's host. A
book's build health (``--book``, compose's driver): unhealthy while units are set aside, which the
driver waits for an operator to put back."""

from __future__ import annotations

import socket
from dataclasses import dataclass

from obook.book.kinds import book_kind
from obook.errors import ObookError
from obook.store.books import get_book
from obook.store.db import Store
from obook.store.workers import worker_records


@dataclass(frozen=True)
class WorkerHealth:
    worker_id: str
    healthy: bool
    units_done: int
    failures: int
    failures_in_row: int
    reason: str | None  # why it is quarantined

    def line(self) -> str:
        state = "healthy" if self.healthy else f"QUARANTINED: {self.reason}"
        return (f"worker {self.worker_id}: {state} ({self.units_done} units done, {self.failures} failures, "
                f"{self.failures_in_row} in a row)")


def worker_health(store: Store, worker_id: str | None = None, host: str | None = None) -> WorkerHealth:
    """The health of worker ``worker_id``, or of the newest worker of ``host`` (this machine's by
    default: a container runs one ``obook worker``). ``ObookError`` when the store knows none."""
    if worker_id is None:
        host = host or socket.gethostname()
    with store.read() as conn:
        records = worker_records(conn, worker_id=worker_id, host=host if worker_id is None else None, limit=1)
    if not records:
        raise ObookError(f"no worker {worker_id!r} in the store" if worker_id is not None
                         else f"no worker of host {host!r} in the store (it has not started yet?)")
    r = records[0]
    return WorkerHealth(r["id"], r["quarantined_at"] is None, r["units_done"], r["failures"], r["failures_in_row"],
                        r["quarantine_reason"])


@dataclass(frozen=True)
class BookHealth:
    book: str
    unit: str
    done: int
    open: int
    set_aside: int

    @property
    def healthy(self) -> bool:
        return self.set_aside == 0

    def line(self) -> str:
        state = "healthy" if self.healthy else (
            f"NEEDS AN OPERATOR: {self.set_aside} {self.unit}(s) set aside after repeated failures "
            f"(obook verify --book {self.book} lists them; --retry-set-aside puts them back)")
        return f"book {self.book}: {state} ({self.done} {self.unit}s done, {self.open} open)"


def book_health(store: Store, name: str) -> BookHealth:
    """The build of book ``name``: healthy unless units are set aside (``BookNotFound`` for none)."""
    with store.read() as conn:
        book = get_book(conn, name)
        kind = book_kind(book)
        counts = kind.counts(conn, book)
    return BookHealth(book.name, kind.unit, counts.done, counts.open, counts.set_aside)
