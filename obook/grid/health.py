"""A grid worker's health as its record in the store says (``obook grid health``): healthy, or
quarantined with the reason (it failed ``OBOOK_QUARANTINE_FAILURES`` units in a row and takes no
more work). Compose's health check of a worker container runs it for the container's host."""

from __future__ import annotations

import socket
from dataclasses import dataclass

from obook.errors import ObookError
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
