"""Workers: their heartbeats (who plays games, local build processes or grid workers, and what
each plays now), written through ``obook.store.leases.Lease``, and their records, kept after they
stop: a worker's identity, what it finished, what it failed, whether it quarantined itself.

A worker's identity (``worker_identity``) is ``SITE:HOST:PID:STARTED:ENGINE``: the site
(``OBOOK_SITE``, ``default`` when unset), the host name, the process id of the worker (an ``obook worker``'s
main process, shared by its pool processes; an embedded build's process), when that process
started (seconds since the epoch, so that a pid reused after a restart is another worker) and the
engine version. It is stable for the worker's life and recorded with what it writes.

Failures are charged to the worker (``charge_failure``): ``failures_in_row`` counts the units it
failed since one last worked without error (``credit_work`` resets it); at ``quarantine_after`` the
record is quarantined with its reason: the worker takes no more work and its health check
(``obook grid health``) fails, until it is restarted (a new identity).
"""

from __future__ import annotations

import functools
import os
import socket

from sqlalchemy import Connection, bindparam, delete, select, update

from obook.config import settings
from obook.store.db import as_utc, db_time, db_time_at, db_time_offset, dialect_insert
from obook.store.models import Worker, WorkerRecord

WORKERS = Worker.__table__
RECORDS = WorkerRecord.__table__


def worker_identity(engine_version: str, pid: int | None = None, site: str | None = None) -> str:
    """``SITE:HOST:PID:STARTED:ENGINE`` of the process ``pid`` (this one by default)."""
    if site is None:
        site = settings().site
    pid = os.getpid() if pid is None else pid
    site = (site or "default").replace(":", "_")[:60]
    return f"{site}:{socket.gethostname()}:{pid}:{_started(pid)}:{engine_version}"[:200]


def parse_identity(worker_id: str) -> dict:
    """The parts of a worker identity (``worker_identity``)."""
    site, host, pid, started, engine = (worker_id.split(":", 4) + ["", "", "", "", ""])[:5]
    return {"site": site, "host": host, "pid": int(pid) if pid.isdigit() else 0,
            "engine_version": engine}


def _started(pid: int) -> int:
    """When process ``pid`` started, in seconds since the epoch (0 when unknown)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            ticks = int(f.read().rpartition(")")[2].split()[19])
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime"))
        return boot + ticks // os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, StopIteration, IndexError):
        return 0


def register_worker(conn: Connection, worker_id: str, kind: str) -> None:
    """Create ``worker_id``'s record if it has none (every worker writes it when it starts)."""
    if conn.execute(select(RECORDS.c.id).where(RECORDS.c.id == worker_id)).first() is not None:
        return
    now = db_time(conn)
    conn.execute(dialect_insert(conn)(RECORDS).values(
        id=worker_id, kind=kind, first_seen=now, last_seen=now, **parse_identity(worker_id))
        .on_conflict_do_nothing(index_elements=[RECORDS.c.id]))


def charge_failure(conn: Connection, worker_id: str, kind: str, reason: str, quarantine_after: int | None) -> str | None:
    """Count a failed unit on ``worker_id``; with ``quarantine_after``, quarantine it at that many
    failures in a row. The quarantine's reason when it is (or was already) quarantined, else None."""
    register_worker(conn, worker_id, kind)
    r = RECORDS.c
    conn.execute(update(RECORDS).where(r.id == worker_id).values(
        failures=r.failures + 1, failures_in_row=r.failures_in_row + 1, last_seen=db_time(conn)))
    in_row, quarantined, why = conn.execute(select(r.failures_in_row, r.quarantined_at, r.quarantine_reason)
                                            .where(r.id == worker_id)).one()
    if quarantined is not None:
        return why
    if quarantine_after is not None and in_row >= quarantine_after:
        why = f"{in_row} units failed in a row (OBOOK_QUARANTINE_FAILURES={quarantine_after}), the last: {reason}"[:2000]
        conn.execute(update(RECORDS).where(r.id == worker_id).values(quarantined_at=db_time(conn),
                                                                       quarantine_reason=why))
        return why
    return None


def credit_work(conn: Connection, worker_id: str, done: int = 1) -> None:
    """``worker_id`` worked a unit (``done``: finished one) without error: its failures in a row end."""
    r = RECORDS.c
    conn.execute(update(RECORDS).where(r.id == worker_id).values(
        units_done=r.units_done + done, failures_in_row=0, last_seen=db_time(conn)))


def quarantine_reason(conn: Connection, worker_id: str) -> str | None:
    """Why ``worker_id`` is quarantined, or None when it is not."""
    row = conn.execute(select(RECORDS.c.quarantined_at, RECORDS.c.quarantine_reason)
                       .where(RECORDS.c.id == worker_id)).first()
    return row[1] or "quarantined" if row is not None and row[0] is not None else None


def worker_records(conn: Connection, worker_id: str | None = None, host: str | None = None,
                   limit: int = 100) -> list[dict]:
    """Worker records, newest first: one identity's, a host's, or all."""
    query = select(RECORDS)
    if worker_id is not None:
        query = query.where(RECORDS.c.id == worker_id)
    if host is not None:
        query = query.where(RECORDS.c.host == host)
    rows = conn.execute(query.order_by(RECORDS.c.first_seen.desc(), RECORDS.c.id).limit(limit))
    return [{**r._mapping, "first_seen": as_utc(r.first_seen), "last_seen": as_utc(r.last_seen),
             "quarantined_at": as_utc(r.quarantined_at) if r.quarantined_at is not None else None} for r in rows]


def quarantined_workers(conn: Connection) -> set[str]:
    """The identities of every quarantined worker."""
    return {r[0] for r in conn.execute(select(RECORDS.c.id).where(RECORDS.c.quarantined_at.is_not(None)))}


def heartbeat(conn: Connection, owner: str, **fields) -> None:
    """Record that the lease owner ``owner`` (a process) is alive and what it plays (insert or update), dated by the
    database's clock (another machine decides from it whether the worker is alive)."""
    dialect = conn.dialect.name
    updated = conn.execute(_heartbeat_update(dialect, tuple(sorted(fields))),
                           {"worker": owner, "now": db_time_offset(dialect), **fields})
    if updated.rowcount == 0:
        now = db_time(conn)
        values = {"last_seen": now, **fields}
        insert = dialect_insert(conn)(WORKERS).values(id=owner, started_at=now, **{
            "host": "", "pid": 0, "kind": "local", "engine_version": "", "moves": "", **values})
        conn.execute(insert.on_conflict_do_update(index_elements=[WORKERS.c.id], set_=values))


@functools.cache
def _heartbeat_update(dialect: str, fields: tuple[str, ...]):
    """The heartbeat's update of a known worker, built once per dialect and set of fields (a worker
    writes one after every claim and commit)."""
    return update(WORKERS).where(WORKERS.c.id == bindparam("worker")).values(
        last_seen=db_time_at(dialect, "now"), **{name: bindparam(name) for name in fields})


def remove_worker(conn: Connection, worker_id: str) -> None:
    conn.execute(delete(WORKERS).where(WORKERS.c.id == worker_id))


def live_workers(conn: Connection, within_seconds: float = 60.0, limit: int | None = None) -> list[dict]:
    """Workers heard from in the last ``within_seconds``, most recently seen first."""
    since = db_time(conn, -within_seconds)
    query = select(WORKERS).where(WORKERS.c.last_seen >= since).order_by(WORKERS.c.last_seen.desc(), WORKERS.c.id)
    if limit is not None:
        query = query.limit(limit)
    return [{**r._mapping, "last_seen": as_utc(r.last_seen), "started_at": as_utc(r.started_at)}
            for r in conn.execute(query)]
