"""The embedded build: K local processes work on a book's units (self-play games, or a minimax
book's expansions: ``obook.book.kinds``) over one store.

Nothing but the store coordinates them: each process takes the lease of a unit nobody works on (or
creates one while the book is short of its target), works it to the end and takes the next. Ctrl-C
(or SIGTERM) stops every process within a move; a game cut short keeps its stored moves and the next
build resumes it, an expansion cut short is searched again (leases of this machine's dead processes
are taken back at start-up). A store error (PostgreSQL restarting, a dropped connection, a locked
SQLite file) is waited out, in the workers and in the parent; a unit that keeps failing is set
aside (see ``run_worker``), and the build then ends with an error that names it.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass, field

from obook.book.kinds import book_kind
from obook.book.library import open_book_store
from obook.book.selfplay import mutation_config, warm_up
from obook.errors import ObookError
from obook.store import jobs
from obook.store.books import BookInfo, get_book
from obook.store.db import Store, StoreError, forget_stores
from obook.store.faults import check_poison
from obook.store.leases import LeaseLost, new_worker_id
from obook.store.models import SET_ASIDE
from obook.store.workers import live_workers, remove_worker

log = logging.getLogger(__name__)


class Stopping:
    """Set by SIGTERM in a worker process. The handler only sets the flag (raising from a signal
    handler could interrupt a database call half-way); the worker looks at it between two moves."""

    requested = False

    @classmethod
    def request(cls, _signum=None, _frame=None) -> None:
        cls.requested = True


@dataclass
class BuildPlan:
    url: str
    book: str
    target: int  # units done the book should have (self-play games finished, seed games not counted; expansions)
    workers: int = 2
    seconds: float | None = None  # seconds per move (default: the book's)
    lease_seconds: float | None = None


class Backoff:
    """Waits after a store error (the database restarts, a SQLite file stays locked): 0.5 s, doubling
    up to 30 s, back to 0.5 s after a success. A build waits the database out instead of dying."""

    def __init__(self, first: float = 0.5, longest: float = 30.0):
        self.first, self.longest, self.delay = first, longest, first

    def wait(self, exc: Exception) -> None:
        log.warning("store error, retrying in %.1f s: %s", self.delay, exc)
        deadline = time.monotonic() + self.delay
        while time.monotonic() < deadline and not Stopping.requested:
            time.sleep(0.1)
        self.delay = min(self.delay * 2, self.longest)

    def reset(self) -> None:
        self.delay = self.first


def run_worker(plan: BuildPlan, index: int) -> int:
    """One local worker: work on units of the book until it has ``plan.target`` done (or no more to
    do: units set aside are not replaced). Returns the number of units it finished.

    Errors, by kind: a lost lease drops the unit (another worker has it); a store error (the
    connection dropped, the database restarts or is locked) is waited out with ``Backoff`` and the
    unit taken up again from what is stored; any other error is the unit's (an engine bug): it is
    counted on the unit (``Lease.fail``), which is set aside after ``OBOOK_MAX_GAME_FAILURES``."""
    signal.signal(signal.SIGTERM, Stopping.request)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    forget_stores(close=False)  # a forked worker: the parent's connections are the parent's
    store = open_book_store(plan.url)
    with store.read() as conn:
        book = get_book(conn, plan.book)
    kind = book_kind(book)
    worker = kind.worker(store, book, owner=new_worker_id(f"build{index}"), lease_seconds=plan.lease_seconds,
                         seconds=plan.seconds)
    backoff = Backoff()
    finished = 0
    held = None
    try:
        while not Stopping.requested:
            try:
                if held is None:
                    held = worker.claim()
                    if held is None:
                        if kind.top_up(store, book, plan.target):
                            continue
                        with store.read() as conn:
                            counts = kind.counts(conn, book)
                        if not counts.open:  # and none to create: the target is met, or nothing is left
                            return finished
                        time.sleep(0.5)  # units in progress elsewhere; one may come back if its worker dies
                        continue
                check_poison(kind.unit, held.id)
                if worker.advance(held):
                    finished += 1
                    held = None
                backoff.reset()
            except LeaseLost as exc:
                log.warning("%s", exc)
                held = None
            except StoreError as exc:
                backoff.wait(exc)
                if held is not None:  # take it up again from what is stored, if it is still ours
                    held = _retake(worker, held, backoff)
            except Exception as exc:  # noqa: BLE001 - the unit's fault, not the store's: count it
                if held is None:
                    raise
                _fail(worker, kind.unit, held, exc, backoff)
                held = None
        if held is not None:
            _release(worker, kind.unit, held)
        return finished
    finally:
        try:
            worker.lease.leave()
        except StoreError as exc:
            log.warning("cannot remove this worker's heartbeat: %s", exc)


def _retake(worker, held, backoff: Backoff):
    """The held unit as stored now (None: it is no longer ours), after a store error."""
    while not Stopping.requested:
        try:
            again = worker.claim(held.id)
            backoff.reset()
            return again
        except StoreError as exc:
            backoff.wait(exc)
    return held


def _fail(worker, unit: str, held, exc: Exception, backoff: Backoff) -> None:
    reason = f"{type(exc).__name__}: {exc}"
    log.exception("%s %d failed: %s", unit, held.id, reason)
    while not Stopping.requested:
        try:
            if worker.lease.fail(held.id, reason) == SET_ASIDE:
                log.error("%s %d set aside after repeated failures: %s", unit, held.id, reason)
            return
        except StoreError as store_exc:
            backoff.wait(store_exc)


def _release(worker, unit: str, held) -> None:
    try:
        worker.release(held)
    except StoreError as exc:
        log.warning("cannot release %s %d (its lease will expire): %s", unit, held.id, exc)


def _worker_main(plan: BuildPlan, index: int) -> None:
    logging.basicConfig(level=logging.WARNING, format=f"worker {index}: %(message)s", force=True)
    run_worker(plan, index)


def process_context():
    """How the build starts its workers: forked on Linux, so that each inherits the engine the parent
    loaded (spawned, each imported obook and loaded the numba cache again: about two seconds of CPU
    a worker, most of a small build's cost); spawned elsewhere (macOS and Windows cannot fork such
    a process safely) and from a process that runs other threads (a lock one of them holds would
    stay held in the copy: ``obook build`` starts its progress display after its workers). Each
    worker drops the parent's database connections without closing them
    (``forget_stores(close=False)``) and sets its own signal handlers first (``run_worker``)."""
    forkable = sys.platform.startswith("linux") and threading.active_count() == 1
    return mp.get_context("fork" if forkable else "spawn")


def reclaim_local_leases(store: Store) -> int:
    """Free the leases (of every kind of unit) held by processes of this host that no longer exist
    (a build killed hard)."""
    host = socket.gethostname()
    freed = 0

    def dead(owner: str) -> bool:
        parts = owner.split(":")
        return len(parts) >= 3 and parts[0] == host and parts[1].isdigit() and not _alive(int(parts[1]))

    with store.write() as conn:
        for table in jobs.JOB_TABLES:
            for unit_id, owner in jobs.held(conn, table):
                if dead(owner):
                    jobs.release(conn, table, unit_id, owner)
                    remove_worker(conn, owner)
                    freed += 1
    return freed


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs. A zombie does not: a build killed hard leaves its workers
    unreaped where the machine's init does not reap orphans (a container's), and their leases
    must not wait to expire."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return True


@dataclass
class BuildStatus:
    finished: int  # units done
    in_progress: int
    target: int
    sequences: list[tuple[str, int, str]]  # (worker, unit id, moves) being worked on now
    rate_per_hour: float
    set_aside: int = 0  # units that failed OBOOK_MAX_GAME_FAILURES times
    unit: str = "game"
    set_aside_units: list[tuple[int, int, str | None]] = field(default_factory=list)  # (id, failures, reason)
    nodes: int | None = None  # a minimax book's positions (None: a self-play book)

    @property
    def eta_seconds(self) -> float | None:
        """Seconds to the target at this build's rate so far (None before its first unit)."""
        if self.rate_per_hour <= 0:
            return None
        return max(self.target - self.finished, 0) * 3600.0 / self.rate_per_hour


def status(store: Store, book: BookInfo, target: int, started: float, finished_at_start: int) -> BuildStatus:
    """The build's progress in the book's units (``obook.book.kinds``)."""
    kind = book_kind(book)
    with store.read() as conn:
        counts = kind.counts(conn, book)
        aside = jobs.set_aside(conn, kind.jobs, book.id, limit=10) if counts.set_aside else []
        workers = [w for w in live_workers(conn, within_seconds=180) if w["book_id"] == book.id and w["game_id"]]
        nodes = kind.nodes(conn, book)
    elapsed = max(time.time() - started, 1e-9)
    rate = (counts.done - finished_at_start) * 3600.0 / elapsed
    sequences = [(w["id"].split(":")[2] if w["id"].count(":") >= 2 else w["id"], w["game_id"], w["moves"])
                 for w in workers]
    return BuildStatus(counts.done, counts.open, target, sequences, rate, counts.set_aside, kind.unit, aside, nodes)


def build(plan: BuildPlan, on_status=None, poll: float = 0.5) -> BuildStatus:
    """Run the build until the target is reached or the caller is interrupted (KeyboardInterrupt
    stops the workers within a move and is re-raised). ``on_status`` is called every ``poll`` s."""
    store = open_book_store(plan.url)
    with store.read() as conn:
        book = get_book(conn, plan.book)
    reclaim_local_leases(store)

    context = process_context()
    warm_up((mutation_config(book).policy,), when_cold_only=context.get_start_method() != "fork")
    processes = [context.Process(target=_worker_main, args=(plan, i + 1), name=f"obook-build-{i + 1}", daemon=True)
                 for i in range(plan.workers)]
    started = time.time()
    first = status(store, book, plan.target, started, 0)
    terminated = []  # SIGTERM to the build: stop the workers as Ctrl-C does (no exception inside database code)
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda *_: terminated.append(True))
    for p in processes:
        p.start()
    try:
        while any(p.is_alive() for p in processes):
            if terminated:
                raise KeyboardInterrupt
            if on_status is not None:
                try:
                    on_status(status(store, book, plan.target, started, first.finished))
                except StoreError as exc:  # the workers wait it out too
                    log.warning("store error, the build goes on: %s", exc)
            time.sleep(poll)
    except KeyboardInterrupt:
        _stop(processes)
        raise
    finally:
        _stop(processes)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    failed = [p for p in processes if p.exitcode not in (0, None, -signal.SIGTERM)]
    backoff = Backoff()
    while True:
        try:
            final = status(store, book, plan.target, started, first.finished)
            break
        except StoreError as exc:
            backoff.wait(exc)
    if on_status is not None:
        on_status(final)
    if failed:
        raise ObookError(f"{len(failed)} build worker(s) failed (exit codes "
                         f"{', '.join(str(p.exitcode) for p in failed)}); see the messages above")
    return final


def _stop(processes, grace: float = 30.0) -> None:
    for p in processes:
        if p.is_alive():
            p.terminate()
    deadline = time.time() + grace
    for p in processes:
        p.join(max(deadline - time.time(), 0.1))
        if p.is_alive():
            p.kill()
            p.join()
