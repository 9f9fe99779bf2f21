"""The embedded build: K local processes play a book's self-play games over one store.

Nothing but the store coordinates them: each process takes the lease of a game nobody plays (or
creates one while the book is short of its target), plays it to the end and takes the next. Ctrl-C
(or SIGTERM) stops every process within a move; a game cut short keeps its stored moves and the next
build resumes it (leases of this machine's dead processes are taken back at start-up).
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import signal
import socket
import time
from dataclasses import dataclass

from obook.store.books import BookInfo, get_book
from obook.store.db import Store, forget_stores
from obook.store.games import game_counts, held_leases, release_lease
from obook.store.models import FINISHED, IN_PROGRESS, SELFPLAY
from obook.store.workers import live_workers, remove_worker

log = logging.getLogger(__name__)


class Stop(BaseException):
    """Raised in a worker process by SIGTERM: stop after releasing the current game."""


@dataclass
class BuildPlan:
    url: str
    book: str
    target: int  # finished self-play games the book should have (seed games not counted)
    workers: int = 2
    seconds: float | None = None  # seconds per move (default: the book's)
    lease_seconds: float | None = None


def run_worker(plan: BuildPlan, index: int) -> int:
    """One local worker: play games of the book until it has ``plan.target`` finished games.
    Returns the number of games it finished."""
    from obook.book.library import open_book_store
    from obook.book.selfplay import SelfPlayer, start_games
    from obook.store.leases import LeaseLost, new_worker_id

    def stop(_signum, _frame):
        raise Stop

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    forget_stores()
    store = open_book_store(plan.url)
    with store.read() as conn:
        book = get_book(conn, plan.book)
    player = SelfPlayer(store, book, owner=new_worker_id(f"build{index}"), lease_seconds=plan.lease_seconds,
                        seconds=plan.seconds)
    finished = 0
    held = None
    try:
        while True:
            held = player.claim()
            if held is None:
                if start_games(store, book, plan.target):
                    continue
                with store.read() as conn:
                    counts = game_counts(conn, book.id, SELFPLAY).get(book.id, {})
                if counts.get(FINISHED, 0) >= plan.target and not counts.get(IN_PROGRESS, 0):
                    return finished
                time.sleep(0.5)  # games in progress elsewhere; one may come back if its player dies
                continue
            try:
                player.play(held)
                finished += 1
            except LeaseLost as exc:
                log.warning("%s", exc)
            held = None
    except Stop:
        if held is not None:
            player.release(held)
        return finished
    finally:
        player.lease.leave()


def _worker_main(plan: BuildPlan, index: int) -> None:
    logging.basicConfig(level=logging.WARNING, format=f"worker {index}: %(message)s")
    run_worker(plan, index)


def reclaim_local_leases(store: Store) -> int:
    """Free the leases held by processes of this host that no longer exist (a build killed hard)."""
    host = socket.gethostname()
    freed = 0
    with store.write() as conn:
        for game_id, owner in held_leases(conn):
            parts = owner.split(":")
            if len(parts) < 3 or parts[0] != host or not parts[1].isdigit() or _alive(int(parts[1])):
                continue
            release_lease(conn, game_id, owner)
            remove_worker(conn, owner)
            freed += 1
    return freed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class BuildStatus:
    finished: int
    in_progress: int
    target: int
    sequences: list[tuple[str, int, str]]  # (worker, game id, moves) being played now
    rate_per_hour: float


def status(store: Store, book: BookInfo, target: int, started: float, finished_at_start: int) -> BuildStatus:
    with store.read() as conn:
        counts = game_counts(conn, book.id, SELFPLAY).get(book.id, {})
        workers = [w for w in live_workers(conn, within_seconds=180) if w["book_id"] == book.id and w["game_id"]]
    finished = counts.get(FINISHED, 0)
    elapsed = max(time.time() - started, 1e-9)
    rate = (finished - finished_at_start) * 3600.0 / elapsed
    sequences = [(w["id"].split(":")[2] if w["id"].count(":") >= 2 else w["id"], w["game_id"], w["moves"])
                 for w in workers]
    return BuildStatus(finished, counts.get(IN_PROGRESS, 0), target, sequences, rate)


def build(plan: BuildPlan, on_status=None, poll: float = 0.5) -> BuildStatus:
    """Run the build until the target is reached or the caller is interrupted (KeyboardInterrupt
    stops the workers within a move and is re-raised). ``on_status`` is called every ``poll`` s."""
    from obook.book.library import open_book_store

    store = open_book_store(plan.url)
    with store.read() as conn:
        book = get_book(conn, plan.book)
    reclaim_local_leases(store)
    from obook.book.selfplay import mutation_config, warm_up

    warm_up((mutation_config(book).policy,))
    context = mp.get_context("spawn")
    processes = [context.Process(target=_worker_main, args=(plan, i + 1), name=f"obook-build-{i + 1}", daemon=True)
                 for i in range(plan.workers)]
    started = time.time()
    first = status(store, book, plan.target, started, 0)
    for p in processes:
        p.start()
    try:
        while any(p.is_alive() for p in processes):
            if on_status is not None:
                on_status(status(store, book, plan.target, started, first.finished))
            time.sleep(poll)
    except KeyboardInterrupt:
        _stop(processes)
        raise
    finally:
        _stop(processes)
    failed = [p for p in processes if p.exitcode not in (0, None, -signal.SIGTERM)]
    final = status(store, book, plan.target, started, first.finished)
    if on_status is not None:
        on_status(final)
    if failed:
        from obook.errors import ObookError

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


def games_at_move_cap(store: Store, book: BookInfo) -> int:
    """How many of the book's finished self-play games the move cap (``selfplay.max_moves``) ended."""
    from obook.book.selfplay import max_moves
    from obook.store.reporting import count_at_move_cap

    with store.read() as conn:
        return count_at_move_cap(conn, book.id, max_moves(book.size))
