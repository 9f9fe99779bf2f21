"""Worker heartbeats: who plays games (local build processes or grid workers) and what each plays now.
A player writes its heartbeat through ``obook.store.leases.GameLease``; these are the statements."""

from __future__ import annotations

import functools

from sqlalchemy import Connection, bindparam, delete, select, update

from obook.store.db import as_utc, db_time, db_time_at, db_time_offset, dialect_insert
from obook.store.models import Worker

WORKERS = Worker.__table__


def heartbeat(conn: Connection, worker_id: str, **fields) -> None:
    """Record that ``worker_id`` is alive and what it plays (insert or update), dated by the
    database's clock (another machine decides from it whether the worker is alive)."""
    dialect = conn.dialect.name
    updated = conn.execute(_heartbeat_update(dialect, tuple(sorted(fields))),
                           {"worker": worker_id, "now": db_time_offset(dialect), **fields})
    if updated.rowcount == 0:
        now = db_time(conn)
        values = {"last_seen": now, **fields}
        insert = dialect_insert(conn)(WORKERS).values(id=worker_id, started_at=now, **{
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
