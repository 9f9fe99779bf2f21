"""What the store and the scheduler of a minimax book sustain, with the search taken out (issue 31).

    python benchmarks/minimax_coordination.py [--db URL] [--workers 1,2,4] [--stages 1000,10000]
        [--search-ms 0] [--size 9] [--scheduler driver|workers] [--vacuum-seconds 0]

N worker processes grow one ``reach`` book through the real protocol (``obook.store.jobs`` leases,
``Expander.advance``: the commit with its incremental back-up, ``BookKind.top_up``: the reach
index's scheduling), each with a search stub of fixed cost (``--search-ms``) that returns a random
spread of visits over up to 8 legal moves, so that what is measured is the store's and the
scheduler's cost. Workers open the store as grid workers do (no ping before a transaction). For
each stage (the book's expansions done) and each number of workers it prints one JSON line:

- expansions a second (those finished once every worker is set up, over the time from then to the
  last: spawning N processes is not the store's cost);
- the commit's and the schedule's latency (p50, p99, max, in ms; with the driver, its step: the
  units counted and the next expansions scheduled);
- CPU milliseconds an expansion: the workers', the driver's, and the rest of the machine's busy
  time over the same interval (PostgreSQL's, mostly: ``/proc/stat``), which says what a store's
  machine pays when the workers run elsewhere;
- the book's lock: the share of the wall time someone held it, the holds, and ms a hold (its one
  serial section: a share near 1 is its ceiling);
- claims that found nothing (workers starved by the scheduler);
- memory: the peak and final RSS of a worker and of the driver.

``--scheduler driver`` (the default) schedules in one process, as the grid's driver does (the
workers only claim and expand; they hold no reach index); ``--scheduler workers`` lets each worker
schedule when it finds nothing to claim, as an embedded build does. ``--vacuum-seconds`` vacuums
the book's tables that often, as autovacuum would (this machine's server runs without it). Every
stage ends with ``obook verify``'s check of the whole book (bounds equal to a back-up from scratch,
the count of expansions done). PostgreSQL by default (``OBOOK_TEST_DATABASE_URL`` or the machine's
``test`` database); a fresh database per run.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing as mp
import os
import random
import resource
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests.conftest: a fresh database

from obook.search.player import ROOT_MOVES, Player
from obook.search.result import MoveStats, SearchResult

DEFAULT_DB = os.environ.get("OBOOK_TEST_DATABASE_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


class StubSearch(Player):
    """A search of fixed cost: visits spread at random over up to 8 legal moves."""

    root_controls = frozenset({ROOT_MOVES})

    def __init__(self, config, seconds: float):
        self.config = config
        self.seconds = seconds
        self.rng = random.Random(0)

    def reseed(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def genmove(self, position, seconds=None, playouts=None, on_progress=None, progress_interval=0.5, cancel=None,
                root_moves=None):
        if self.seconds:
            time.sleep(self.seconds)
        points = [p for p in position.points() if root_moves is None or root_moves(p)]
        self.rng.shuffle(points)
        chosen = []  # up to 8 legal moves, testing no more points than it takes (the stub's cost stays near 0)
        for point in points:
            if len(chosen) == 8:
                break
            if position.is_legal(point):
                chosen.append(point)
        moves = sorted((MoveStats(p, self.rng.randint(1, 2000), self.rng.random(), 0.0) for p in chosen),
                       key=lambda m: -m.visits)
        best = moves[0].point if moves else -1
        return SearchResult(best, False, moves[0].winrate if moves else 0.5, sum(m.visits for m in moves), 0.0,
                            moves, [best])


def worker(db: str, book_name: str, target: int, search_seconds: float, schedules_too: bool, out: mp.Queue) -> None:
    from obook.book.kinds import book_kind
    from obook.book.library import open_book_store
    from obook.store.books import get_book
    from obook.store.db import forget_stores, open_store
    from obook.store.leases import ExpansionLease, LeaseLost

    forget_stores()
    open_store(db, pre_ping=False)  # as a grid worker's (``workers.tasks``): no ping before each transaction
    store = open_book_store(db)
    with store.read() as conn:
        book = get_book(conn, book_name)
    kind = book_kind(book)
    lock_clock = LockClock(store.engine)
    expander = kind.worker(store, book)
    expander.player = StubSearch(expander.config, search_seconds)
    expander.play_players = [StubSearch(expander.config, 0.0)] * len(expander.play_players)
    commits, schedules = [], []
    commit = ExpansionLease.commit

    def timed_commit(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return commit(self, *args, **kwargs)
        finally:
            commits.append(time.perf_counter() - started)

    expander.lease.commit = timed_commit.__get__(expander.lease)
    import obook.book.backup as backup

    whole, write_back_up = [], backup.write_back_up

    def counted_write_back_up(*args, **kwargs):  # the back-up's fallback to the whole book (a cycle)
        whole.append(1)
        return write_back_up(*args, **kwargs)

    backup.write_back_up = counted_write_back_up
    done = 0
    finished_at = []
    ready = time.time()  # imports and set-up are not the store's cost: the rate counts from here
    cpu_at_ready = cpu_seconds()
    misses = 0
    while True:
        held = expander.claim()
        if held is None:
            misses += 1
            if schedules_too:
                started = time.perf_counter()
                created = kind.top_up(store, book, target, 1)
                schedules.append(time.perf_counter() - started)
                if created:
                    continue
            if schedules_too or misses % 10 == 0:  # a grid worker is sent its units: polling is the harness's cost
                with store.read() as conn:
                    counts = kind.counts(conn, book)
                if not counts.open and counts.done + counts.set_aside >= target:
                    break
                if schedules_too and not counts.open:
                    break
            time.sleep(0.01 if schedules_too else 0.003)
            continue
        try:
            expander.advance(held)
            done += 1
            finished_at.append(time.time())
        except LeaseLost:
            pass
    out.put({"role": "worker", "done": done, "misses": misses, "commits": commits, "whole_back_ups": len(whole), "schedules": schedules, "ready": ready,
             "finished_at": finished_at, "cpu_s": cpu_seconds() - cpu_at_ready,
             "lock_held_s": lock_clock.held, "lock_holds": lock_clock.holds, "statements": lock_clock.statements,
             "rss_now_mb": rss_now_mb(),
             "rss_mb": rss_peak_mb()})


def rss_peak_mb() -> float:
    """This process's peak resident memory (``VmHWM``). Not ``ru_maxrss``: Linux carries the high-water
    mark of the process image that an exec replaces into it, so a spawned worker's ``ru_maxrss`` is at
    least its parent's size when it was forked (the harness's, after a whole-book verify: the "worker
    peak of 503 MB at 10^5" of earlier runs)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_now_mb() -> float:
    """This process's resident memory now (the peak, ``ru_maxrss``, may be one moment's)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        return float("nan")


def driver(db: str, book_name: str, target: int, workers: int, out: mp.Queue) -> None:
    """The grid driver's scheduling (``obook.grid.driver.Driver.step`` without the broker): count the
    book's units, and top up the open ones to the live workers plus a margin; each step timed."""
    from obook.book.kinds import book_kind
    from obook.book.library import open_book_store
    from obook.grid.driver import FinishRate, wanted_in_flight
    from obook.store.books import get_book
    from obook.store.db import forget_stores

    forget_stores()
    store = open_book_store(db)
    with store.read() as conn:
        book = get_book(conn, book_name)
    kind = book_kind(book)
    lock_clock = LockClock(store.engine)
    profile_to = os.environ.get("OBOOK_PROFILE_DRIVER")  # a file: the driver's cProfile, to find its cost
    if profile_to:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    finish_rate, step_seconds, poll = FinishRate(), 0.0, 0.005
    steps = []
    cpu_at_ready = cpu_seconds()
    while True:
        started = time.perf_counter()
        with store.read() as conn:
            counts = kind.counts(conn, book)
        accounted = counts.done + counts.set_aside
        if accounted >= target and not counts.open:
            break
        wanted = wanted_in_flight(workers, 2, finish_rate.update(counts.done), poll + step_seconds)  # as Driver.step
        created = []
        if counts.open < wanted and accounted + counts.open < target:
            created = kind.top_up(store, book, target, wanted - counts.open)
            step_seconds = time.perf_counter() - started
            steps.append(step_seconds)
            if not created and not counts.open:
                break
        if not created:
            time.sleep(poll)
    if profile_to:
        profiler.disable()
        profiler.dump_stats(profile_to)
    out.put({"role": "driver", "steps": steps, "cpu_s": cpu_seconds() - cpu_at_ready,
             "lock_held_s": lock_clock.held, "lock_holds": lock_clock.holds, "statements": lock_clock.statements,
             "rss_now_mb": rss_now_mb(),
             "rss_mb": rss_peak_mb()})


class LockClock:
    """Time this process holds the book's lock: from the statement that takes it (``FOR NO KEY
    UPDATE`` of ``books``, not skipped) to the end of its transaction. The lock is the book's one
    serial section: its share of the wall time says how near the book is to its ceiling."""

    def __init__(self, engine):
        from sqlalchemy import event

        self.held = 0.0
        self.holds = 0
        self.statements = 0  # every statement this process ran
        self._since: dict[int, float] = {}
        event.listen(engine, "after_cursor_execute", self._executed)
        event.listen(engine, "commit", self._ended)
        event.listen(engine, "rollback", self._ended)

    def _executed(self, conn, cursor, statement, parameters, context, executemany) -> None:
        self.statements += 1
        if "FROM books" in statement and "FOR NO KEY UPDATE" in statement and id(conn) not in self._since:
            if "SKIP LOCKED" not in statement or cursor.rowcount:
                self._since[id(conn)] = time.perf_counter()

    def _ended(self, conn) -> None:
        since = self._since.pop(id(conn), None)
        if since is not None:
            self.held += time.perf_counter() - since
            self.holds += 1


def cpu_seconds() -> float:
    """This process's CPU time (user and system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def machine_busy_seconds() -> float:
    """CPU seconds every core of the machine spent busy since boot (``/proc/stat``; NaN elsewhere)."""
    try:
        with open("/proc/stat") as stat:
            fields = [int(f) for f in stat.readline().split()[1:]]
    except OSError:
        return float("nan")
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class BusySampler(threading.Thread):
    """Samples the machine's busy CPU time every 0.2 s, so that a stage's server CPU (the machine's
    busy time less the workers' and the driver's own) is read over the timed interval only."""

    def __init__(self):
        super().__init__(daemon=True)
        self.samples: list[tuple[float, float]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.samples.append((time.time(), machine_busy_seconds()))
            self.stop.wait(0.2)

    def busy_between(self, start: float, end: float) -> float:
        inside = [busy for t, busy in self.samples if start <= t <= end]
        return inside[-1] - inside[0] if len(inside) >= 2 else float("nan")


class Vacuumer(threading.Thread):
    """``VACUUM (ANALYZE)`` of the book's tables every ``seconds`` while a stage runs: what
    autovacuum does on a server that runs it (this machine's test server has it off, and past
    5 x 10^4 expansions the dead rows of updated nodes and jobs slowed every statement)."""

    TABLES = ("minimax_nodes", "minimax_edges", "expansions", "expansion_results", "workers", "books")

    def __init__(self, url: str, seconds: float):
        super().__init__(daemon=True)
        self.url, self.seconds = url, seconds
        self.stop = threading.Event()
        self.runs = 0

    def run(self) -> None:
        from sqlalchemy import create_engine, text

        engine = create_engine(self.url, isolation_level="AUTOCOMMIT")
        while not self.stop.wait(self.seconds):
            with engine.connect() as conn:
                conn.execute(text(f"VACUUM (ANALYZE) {', '.join(self.TABLES)}"))
            self.runs += 1
        engine.dispose()


def percentile(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(p * len(values)))]


@contextlib.contextmanager
def kept_database(server: str, name: str):
    """The URL of database ``name`` on ``server``, created if missing and left in place."""
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}).first() is None:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    yield make_url(server).set(database=name).render_as_string(hide_password=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=DEFAULT_DB)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--stages", default="1000,3000")
    parser.add_argument("--search-ms", type=float, default=0.0)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--vacuum-seconds", type=float, default=0.0,
                        help="VACUUM (ANALYZE) the book's tables this often during a stage, as autovacuum would "
                             "(0: never; this machine's server runs without autovacuum)")
    parser.add_argument("--scheduler", choices=("workers", "driver"), default="driver",
                        help="driver: one process schedules, as the grid's driver (default); workers: each worker "
                             "schedules when it finds nothing to claim, as an embedded build")
    parser.add_argument("--keep-db", metavar="NAME",
                        help="build in this database of --db's server (created if missing) and keep it, so that a "
                             "later run continues the same book (stages are the book's expansions in all)")
    args = parser.parse_args()
    from obook.book.library import BookSettings, ensure_book, open_book_store
    from obook.book.verification import verify_minimax
    from tests.conftest import fresh_postgres_database

    for workers in [int(w) for w in args.workers.split(",")]:
        with kept_database(args.db, args.keep_db) if args.keep_db else fresh_postgres_database(
                args.db, f"obook_coord_{workers}") as url:
            store = open_book_store(url, create=True)
            book = ensure_book(store, "coord", BookSettings(size=args.size, komi=7.0, algorithm="minimax",
                                                            search="playouts=100", seconds_per_move=0,
                                                            play_playouts=10))
            for stage in [int(s) for s in args.stages.split(",")]:
                queue: mp.Queue = mp.get_context("spawn").Queue()
                context = mp.get_context("spawn")
                by_driver = args.scheduler == "driver"
                processes = [context.Process(target=worker, args=(url, "coord", stage, args.search_ms / 1000,
                                                                  not by_driver, queue))
                             for _ in range(workers)]
                if by_driver:
                    processes.append(context.Process(target=driver, args=(url, "coord", stage, workers, queue)))
                sampler = BusySampler()
                sampler.start()
                vacuumer = Vacuumer(url, args.vacuum_seconds) if args.vacuum_seconds > 0 else None
                if vacuumer is not None:
                    vacuumer.start()
                for p in processes:
                    p.start()
                everything = [queue.get() for _ in processes]
                sampler.stop.set()
                if vacuumer is not None:
                    vacuumer.stop.set()
                    vacuumer.join()
                results = [r for r in everything if r["role"] == "worker"]
                driven = [r for r in everything if r["role"] == "driver"]
                for p in processes:
                    p.join()
                done = sum(r["done"] for r in results)
                ready = max(r["ready"] for r in results)
                timed = sorted(t for r in results for t in r["finished_at"] if t >= ready)
                rate = len(timed) / (timed[-1] - ready) if timed else float("nan")
                client_cpu = sum(r["cpu_s"] for r in everything)
                busy = sampler.busy_between(ready, timed[-1]) if timed else float("nan")
                per = 1000 / max(1, len(timed))
                commits = [c for r in results for c in r["commits"]]
                schedules = [s for r in results for s in r["schedules"]] + [s for r in driven for s in r["steps"]]
                check = verify_minimax(store, book)
                print(json.dumps({
                    "workers": workers, "book_expansions": stage, "nodes": check.nodes, "expansions": done,
                    "expansions_per_second": round(rate, 1),
                    "commit_ms_p50": round(1000 * statistics.median(commits), 2),
                    "commit_ms_p99": round(1000 * percentile(commits, 0.99), 2),
                    "commit_ms_max": round(1000 * max(commits), 1),
                    "schedule_ms_p50": round(1000 * statistics.median(schedules), 2) if schedules else None,
                    "schedule_ms_p99": round(1000 * percentile(schedules, 0.99), 2) if schedules else None,
                    "scheduler": args.scheduler,
                    "cpu_ms_per_expansion": {"workers": round(per * sum(r["cpu_s"] for r in results), 2),
                                             "driver": round(per * sum(r["cpu_s"] for r in driven), 2),
                                             "server_and_rest": round(per * (busy - client_cpu), 2)},
                    "lock": {"held_share": round(sum(r["lock_held_s"] for r in everything) / (timed[-1] - ready), 2)
                             if timed else None,
                             "holds_by_workers": sum(r["lock_holds"] for r in results),
                             "holds_by_driver": sum(r["lock_holds"] for r in driven),
                             "ms_per_hold": round(1000 * sum(r["lock_held_s"] for r in everything)
                                                  / max(1, sum(r["lock_holds"] for r in everything)), 2)},
                    "statements_per_expansion": {"workers": round(sum(r["statements"] for r in results) / max(1, done), 1),
                                                 "driver": round(sum(r["statements"] for r in driven) / max(1, done), 1)},
                    "claims_missed": sum(r["misses"] for r in results),
                    "whole_back_ups": sum(r["whole_back_ups"] for r in results),
                    "vacuums": vacuumer.runs if vacuumer is not None else 0,
                    "worker_rss_mb": round(max(r["rss_mb"] for r in results), 1),
                    "worker_rss_now_mb": round(max(r["rss_now_mb"] for r in results), 1),
                    "driver_rss_mb": round(driven[0]["rss_mb"], 1) if driven else None,
                    "driver_rss_now_mb": round(driven[0]["rss_now_mb"], 1) if driven else None,
                    "verify_clean": check.clean,
                }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
