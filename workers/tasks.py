"""The grid's one task: a slice of one unit of work of any kind of book, a game's moves or an
expansion (``obook.grid.slices.play_slice``).

Each pool process is one worker with its own name in the store (``host:pid:celery:random``), a
heartbeat row from start to exit, and one worker of the book's kind per book
(``obook.book.kinds``). Its failures are charged to its ``obook worker``'s identity
(``obook.store.workers.worker_identity`` of the main process, shared by the pool processes):
once that worker is quarantined (``obook.grid.slices.grid_lease``) its processes take no more
work: each message they still receive is published again untouched for another worker, and the
worker stops consuming the queue. A warm shutdown (SIGTERM to the worker) is passed to the pool processes,
whose slices stop after the step they are on and hand their unit on.
"""

from __future__ import annotations

import logging
import os
import signal
import time

from celery.signals import worker_init, worker_process_init, worker_process_shutdown, worker_shutting_down
from sqlalchemy import event

from obook.book.keys import ENGINE_VERSION, EngineMismatch
from obook.book.kinds import book_kind
from obook.book.selfplay import warm_up
from obook.config import settings
from obook.grid.slices import grid_lease, play_slice
from obook.store import db
from obook.store.books import BookNotFound, get_book
from obook.store.db import StoreError, forget_stores, open_store
from obook.store.leases import GameLease, new_worker_id
from obook.store.workers import worker_identity
from obook.store.urls import normalise_url
from workers.app import app

log = logging.getLogger("obook.worker")

HEARTBEAT_SECONDS = 1.0  # a worker's heartbeat follows its progress at most this often
STOP_SIGNAL = signal.SIGUSR2  # main process -> pool processes: finish the current move and hand on

_state = {"owner": None, "stop": False, "players": {}, "quarantined": None}
_identity = {"id": None}  # the obook worker's identity, made by its main process (inherited by the pool's)


def _worker_id() -> str:
    if _identity["id"] is None:  # not made at start (the solo pool, or a test calling the task)
        _identity["id"] = worker_identity(ENGINE_VERSION)
    return _identity["id"]


def _owner() -> str:
    if _state["owner"] is None:
        _state["owner"] = new_worker_id("celery")
    return _state["owner"]


def _worker_lease() -> GameLease:
    """The pool process's own name in the store, for the heartbeat it writes with no game."""
    return GameLease(_store(), _owner(), settings().lease_seconds, kind="celery", engine_version=ENGINE_VERSION,
                     worker_id=_worker_id())


def _store():
    """The store as a grid player uses it. No ping before each transaction: a dropped connection
    fails the transaction (``StoreError``), the slice hands its game on, and the pool reconnects.
    On PostgreSQL, unless ``OBOOK_DURABLE_MOVES`` is set, commits do not wait for the disk
    (``synchronous_commit = off``): a crash of the database server then loses the last fraction of
    a second of transactions, whole and in order, which the grid already survives as it survives a
    preempted worker (a game goes back to its last stored move; a lost finish is replayed once),
    while a disk that syncs 250 times a second no longer caps the grid at 250 moves a second."""
    s = settings()
    fresh = normalise_url(s.database_url) not in _open_urls()
    store = open_store(s.database_url, pre_ping=False)
    if fresh and not store.is_sqlite and not s.durable_moves:
        event.listen(store.engine, "connect", _asynchronous_commit)
        store.engine.dispose()  # the schema check's connection predates the listener
    return store


def _open_urls() -> set[str]:
    return set(db._STORES)


def _asynchronous_commit(dbapi_connection, _record) -> None:
    autocommit = dbapi_connection.autocommit
    dbapi_connection.autocommit = True
    dbapi_connection.execute("SET synchronous_commit TO off")
    dbapi_connection.autocommit = autocommit


def _worker(book_name: str):
    """This pool process's worker of ``book_name`` (kept for the next task of that book)."""
    worker = _state["players"].get(book_name)
    if worker is None:
        store = _store()
        with store.read() as conn:
            book = get_book(conn, book_name)
        worker = book_kind(book).worker(store, book, owner=_owner(), kind="celery",  # EngineMismatch
                                        heartbeat_seconds=HEARTBEAT_SECONDS)
        grid_lease(worker.lease, _worker_id())
        longest = settings().slice_seconds + worker.config.seconds
        if longest > settings().visibility_timeout / 2:
            log.warning("book %r: a slice may last %.0f s, near the broker's visibility timeout (%.0f s): "
                        "Redis may deliver it twice (harmless, the lease decides, but wasteful); "
                        "raise OBOOK_VISIBILITY_TIMEOUT", book_name, longest, settings().visibility_timeout)
        _state["players"][book_name] = worker
    return worker


@worker_init.connect
def _load_engine(**_kwargs) -> None:
    _identity["id"] = worker_identity(ENGINE_VERSION)
    log.info("worker %s: loading the engine", _identity["id"])
    warm_up()


@worker_process_init.connect
def _process_started(**_kwargs) -> None:
    forget_stores(close=False)  # engines inherited from the parent: neither shared nor closed (the parent's)
    _state.update(owner=None, stop=False, players={}, quarantined=None)
    signal.signal(STOP_SIGNAL, lambda *_: _state.update(stop=True))
    try:
        _worker_lease().announce()
    except StoreError as exc:
        log.warning("no heartbeat yet: %s", exc)


@worker_process_shutdown.connect
def _process_stopping(**_kwargs) -> None:
    try:
        _worker_lease().leave()
    except Exception as exc:  # noqa: BLE001 - exiting anyway
        log.warning("could not remove the heartbeat of %s: %s", _owner(), exc)


@worker_shutting_down.connect
def _tell_pool_to_stop(**_kwargs) -> None:
    _state["stop"] = True  # the solo pool runs tasks in this process
    try:
        from billiard.process import active_children  # lazy: the prefork pool's, absent from the solo pool
    except ImportError:
        return
    for child in active_children():
        try:
            os.kill(child.pid, STOP_SIGNAL)
        except (ProcessLookupError, TypeError):
            pass


def send_slice(book_name: str, unit_id: int, token: str) -> None:
    advance_unit.apply_async((book_name, unit_id, token), queue=settings().queue)


def _enter_quarantine(why: str, hostname: str | None) -> None:
    """Once a process: say why in the log and stop this worker consuming the queue."""
    if _state["quarantined"] is not None:
        return
    _state["quarantined"] = why
    log.error("worker %s is quarantined and takes no more work: %s (its health check, `obook grid health`, "
              "fails; restart it once repaired)", _worker_id(), why)
    try:
        app.control.cancel_consumer(settings().queue, destination=[hostname] if hostname else None)
    except Exception as exc:  # noqa: BLE001 - the messages it still gets are published again
        log.warning("cannot stop consuming %r: %s", settings().queue, exc)


def _quarantined(worker, book_name: str, unit_id: int, token: str | None, hostname: str | None) -> str | None:
    """When this worker is quarantined (by this process, or another of the same ``obook worker``):
    say why in the log (once a process), stop consuming the queue, and publish the message again
    untouched (its token still holds the unit) for a healthy worker. None when it is healthy."""
    why = _state["quarantined"] or worker.lease.check_quarantine()
    if why is None:
        return None
    _enter_quarantine(why, hostname)
    time.sleep(1.0)  # until the consumer is cancelled, the message may come back here
    try:
        send_slice(book_name, unit_id, token)
    except Exception as exc:  # noqa: BLE001 - the driver resends the unit once its token is stale
        log.warning("unit %d: cannot publish it again (%s); the driver will resend it", unit_id, exc)
    return "quarantined"


@app.task(name="obook.advance_unit", ignore_result=True, bind=True)
def advance_unit(self, book_name: str, unit_id: int, token: str | None = None) -> str:
    """Work a slice of unit ``unit_id`` (a game, an expansion) of book ``book_name`` if ``token``
    (or nobody) holds it: a duplicate delivery finds it done or held and does nothing; a worker
    killed meanwhile loses at most the step it was on (the lease expires, the driver sends it
    again)."""
    try:
        worker = _worker(book_name)
    except EngineMismatch as exc:
        log.error("worker %s refuses unit %d of book %r: %s", _owner(), unit_id, book_name, exc)
        return "refused"
    except (StoreError, BookNotFound) as exc:
        log.warning("unit %d of book %r: %s", unit_id, book_name, exc)
        return "unavailable"
    try:
        refused = _quarantined(worker, book_name, unit_id, token, self.request.hostname)
        if refused is not None:
            return refused
        outcome = play_slice(worker, unit_id, token, settings().slice_seconds,
                             lambda uid, tok: send_slice(book_name, uid, tok), stop_requested=lambda: _state["stop"])
        if worker.lease.quarantined:
            _enter_quarantine(worker.lease.quarantined, self.request.hostname)
        return outcome
    except StoreError as exc:
        log.warning("unit %d: store unreachable (%s); its lease will expire and the driver resends it", unit_id, exc)
        return "unavailable"
