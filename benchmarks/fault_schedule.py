"""A randomized fault schedule over a grid build, Jepsen-style (issue 33, item 7).

    python benchmarks/fault_schedule.py --kind game|expansion --minutes N --seed S [--record]

The faults that the grid tests try one at a time (``tests/grid/test_grid_faults.py``,
``test_grid_reliability.py``, ``tests/store/test_server_restart.py``) come here at random, one after
another, over a real grid build: 3 ``obook worker`` processes and ``obook grid run`` over a fresh
database of the tests' own PostgreSQL cluster (``tests.conftest.RestartableServer``, never the
machine's shared one) and a Redis server of the run's own (``PrivateRedis``). ``--kind game``
builds a statistical book of fast 5x5 games, ``--kind expansion`` a minimax book of tiny-search
7x7 expansions. For ``--minutes``, at random intervals (2 to 10 s), one of:

- ``kill_worker``: SIGKILL a worker's process group (one in a unit if any), then start a new one;
- ``kill_driver``: SIGKILL the driver, start it again;
- ``pg_restart`` / ``pg_crash``: restart the cluster (fast shutdown) or stop it ``-m immediate``
  (what a power cut leaves, recovered from the WAL) and start it;
- ``redis_restart``: SIGKILL the broker (every queued message is lost) and start it;
- ``stop_worker``: SIGSTOP a worker's process group for longer than its lease, then SIGCONT: a
  zombie whose writes must be refused;
- ``clock_worker``: replace a worker by one whose clock is 10 minutes ahead or behind
  (``OBOOK_TEST_CLOCK_OFFSET``);
- ``failing_worker``: a 4th worker that fails every unit it takes (``OBOOK_TEST_FAIL_ALL``),
  SIGKILLed after 25 s.

The driver's target is raised as the build nears it (the driver is stopped and started with a
higher ``--target-games``), so the build never ends under the faults. Then the faults stop, the
build reaches its last target, and the run checks:

- every unit seen done during the run is still done (none lost to a crash), and the count of
  units done never went down;
- the rows are exactly the target (none in progress, abandoned or set aside), and each unit is
  counted once: the workers' credited units (``worker_records.units_done``) and, for expansions,
  the book's counter (``books.expansions_done``) equal the rows; ``obook verify`` is clean (the
  statistics are the recount of the finished games; every backed-up value matches);
- searches repeated (games: searches counted beyond the search moves stored and resignations;
  expansions: tasks that ended ``lost`` or never ended, ``task_outcomes``; ``attempts - 1``, the
  driver's sends beyond the first, is printed too) at most one per unit a fault could interrupt:
  one per worker killed, stopped or replaced, one per worker alive at a PostgreSQL or Redis restart.

It prints each fault as a JSON line (seconds since the start, the fault, its details) and the
figures as a last line; the exit status is 1 when a check fails. ``--record`` appends the figures to
the table in ``docs/architecture.md``. Needs root and Debian's PostgreSQL tools (the cluster),
``redis-server``; ``OBOOK_MAX_GAME_FAILURES`` is raised for the run, since the schedule starts
many broken workers and 3 failures on 2 of them set a good unit aside by design (that rule has
its own test).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.conftest and tests.grid.gridharness: the tests' cluster and grid

from sqlalchemy.exc import OperationalError  # noqa: E402

from tests.grid.gridharness import Grid, PrivateRedis  # noqa: E402

BOOK = "schedule"
OPTIONS = {
    "game": ("--size", "5", "--search", "playouts=20", "--seconds-per-move", "0", "--depth", "10"),
    # 7x7: a 5x5 book at komi 0.5 had nothing left to schedule after 51 expansions (one line to the end)
    "expansion": ("--algorithm", "minimax", "--size", "7", "--komi", "9.5", "--search", "playouts=300",
                  "--seconds-per-move", "0"),
}
FAULTS = ("kill_worker", "kill_driver", "pg_restart", "pg_crash", "redis_restart", "stop_worker", "clock_worker",
          "failing_worker")
WORKERS = 3
FAILING_SECONDS = 25  # a worker failing every unit lives this long (it takes seconds to start)
HEADROOM, STEP = 8, 20  # the target is raised once within HEADROOM of it: by STEP at least,
RAISE_SECONDS = 30  # or by the units done in this long at the rate since the last raise
CHECK_ATTEMPTS = 5
RUN_ENV = {"OBOOK_DB_IDLE_TRANSACTION_TIMEOUT": "3",  # a frozen worker's open transaction ends, its locks go
           "OBOOK_MAX_GAME_FAILURES": "1000", "OBOOK_RETRY_SECONDS": "1"}


@dataclass
class Schedule:
    """One run: the grid, its faults so far, and what was seen done."""

    kind: str
    grid: Grid
    server: object  # tests.conftest.RestartableServer
    broker: PrivateRedis
    rng: random.Random
    emit: callable
    target: int = STEP
    raise_seconds: float = RAISE_SECONDS
    slots: list = field(default_factory=list)  # the WORKERS workers (Popen), some with a clock offset
    failing: subprocess.Popen | None = None
    failing_since: float = 0.0
    started: float = field(default_factory=time.monotonic)
    faults: dict = field(default_factory=dict)
    interruptible: int = 0  # units a fault could have interrupted: searches that may be repeated
    seen_done: set = field(default_factory=set)
    most_done: int = 0
    went_down: list = field(default_factory=list)
    driver_exits: list = field(default_factory=list)
    raised: tuple = field(default_factory=lambda: (time.monotonic(), 0))  # (when, units done) at the last raise

    @property
    def table(self) -> str:
        return "games" if self.kind == "game" else "expansions"

    @property
    def done_status(self) -> str:
        return "finished" if self.kind == "game" else "done"

    def now(self) -> float:
        return round(time.monotonic() - self.started, 1)

    def log(self, event: str, **details) -> None:
        self.emit({"t": self.now(), "event": event, **details})

    # ---- the build ------------------------------------------------------------------------------

    def start_driver(self) -> None:
        self.grid.start_driver(BOOK, self.target, *OPTIONS[self.kind])

    def stop_driver(self, sig: int) -> None:
        driver = self.grid.driver
        if driver is not None and driver.poll() is None:
            self.grid.kill(driver, sig)
            try:
                driver.wait(20)
            except subprocess.TimeoutExpired:
                self.grid.kill(driver)
                driver.wait(10)

    def done_ids(self) -> set[int]:
        rows = self.grid.sql(f"SELECT u.id FROM {self.table} u JOIN books b ON b.id = u.book_id "
                             f"WHERE b.name = :book AND u.status = :done", book=BOOK, done=self.done_status)
        return {unit for (unit,) in rows}

    def observe(self) -> int | None:
        """Note the units done now (None when the store is out of reach); raise the target near it."""
        try:
            done = self.done_ids()
        except Exception:  # noqa: BLE001 - the server may be restarting
            return None
        if len(done) < self.most_done:
            self.went_down.append((self.now(), self.most_done, len(done)))
            self.log("done_went_down", was=self.most_done, now=len(done))
        self.most_done = max(self.most_done, len(done))
        self.seen_done |= done
        return len(done)

    def keep_going(self, done: int | None) -> None:
        """Start the driver again when it ended, with a higher target when the build nears it."""
        driver = self.grid.driver
        if driver.poll() is not None:
            self.driver_exits.append((self.now(), driver.returncode))
            self.log("driver_ended", status=driver.returncode, target=self.target)
        elif done is None or done < self.target - HEADROOM:
            return
        else:
            self.stop_driver(signal.SIGTERM)
        if done is not None and done >= self.target - HEADROOM:
            elapsed = time.monotonic() - self.raised[0]
            rate = (done - self.raised[1]) / elapsed if elapsed > 0 else 0.0
            self.target = done + max(STEP, int(rate * self.raise_seconds))
            self.raised = (time.monotonic(), done)
            self.log("target_raised", target=self.target, done=done)
        self.start_driver()

    # ---- the faults -----------------------------------------------------------------------------

    def pick_worker(self) -> subprocess.Popen:
        """A worker of the slots, one holding a unit when there is one (the heartbeat's pid)."""
        try:
            playing = [w for w in self.grid.playing_workers() if w in self.slots]
        except Exception:  # noqa: BLE001 - the server may be restarting
            playing = []
        return self.rng.choice(playing or self.slots)

    def replace(self, victim: subprocess.Popen, **env: str) -> None:
        self.grid.kill(victim)
        victim.wait(20)
        self.slots[self.slots.index(victim)] = self.grid.start_worker(**env)

    def alive(self) -> int:
        """Workers alive that may hold a search (not the failing one)."""
        return len([w for w in self.grid.alive_workers() if w is not self.failing])

    def fault(self, name: str) -> dict:
        if name == "kill_worker":
            victim = self.pick_worker()
            self.replace(victim)
            self.interruptible += 1
            return {"worker": victim.pid}
        if name == "kill_driver":
            self.stop_driver(signal.SIGKILL)
            self.start_driver()
            return {}
        if name in ("pg_restart", "pg_crash", "redis_restart"):
            alive = self.alive()
            self.interruptible += alive
            began = time.monotonic()
            {"pg_restart": self.server.restart, "pg_crash": self.server.crash,
             "redis_restart": self.broker.restart}[name]()
            return {"workers_alive": alive, "seconds": round(time.monotonic() - began, 1)}
        if name == "stop_worker":
            victim = self.pick_worker()
            seconds = self.grid.lease_seconds + self.rng.uniform(2, 6)
            os.killpg(victim.pid, signal.SIGSTOP)
            try:
                time.sleep(seconds)
            finally:
                os.killpg(victim.pid, signal.SIGCONT)
            self.interruptible += 1
            return {"worker": victim.pid, "seconds": round(seconds, 1)}
        if name == "clock_worker":
            victim = self.pick_worker()
            offset = self.rng.choice((600, -600))
            self.replace(victim, OBOOK_TEST_CLOCK_OFFSET=str(offset))
            self.interruptible += 1
            return {"worker": victim.pid, "offset": offset}
        if name == "failing_worker":
            self.end_failing_worker()
            self.failing = self.grid.start_worker(OBOOK_TEST_FAIL_ALL="1")  # fails before it searches
            self.failing_since = time.monotonic()
            return {"worker": self.failing.pid}
        raise ValueError(name)

    def end_failing_worker(self) -> None:
        if self.failing is not None:
            self.grid.kill(self.failing)
            self.failing.wait(20)
            self.log("failing_worker_stopped", worker=self.failing.pid)
            self.failing = None

    def run(self, seconds: float, settle_seconds: float) -> dict:
        self.slots = [self.grid.start_worker() for _ in range(WORKERS)]
        self.start_driver()
        self.log("started", kind=self.kind, target=self.target, workers=[w.pid for w in self.slots])
        next_fault = time.monotonic() + self.rng.uniform(2, 10)
        while time.monotonic() - self.started < seconds:
            self.keep_going(self.observe())
            if self.failing is not None and time.monotonic() - self.failing_since > FAILING_SECONDS:
                self.end_failing_worker()
            if time.monotonic() >= next_fault:
                name = self.rng.choice(FAULTS)
                details = self.fault(name)
                self.faults[name] = self.faults.get(name, 0) + 1
                self.log("fault", fault=name, **{k: v for k, v in details.items() if v is not None})
                next_fault = time.monotonic() + self.rng.uniform(2, 10)
            time.sleep(0.5)
        self.end_failing_worker()
        faulting = self.now()
        self.log("faults_stopped", target=self.target)
        settle_from = time.monotonic()
        while self.grid.driver.poll() is None and time.monotonic() - settle_from < settle_seconds:
            self.observe()
            time.sleep(0.5)
        self.observe()
        status = self.grid.driver.poll()
        self.log("build_ended" if status is not None else "build_did_not_end", status=status, target=self.target)
        settled = round(time.monotonic() - settle_from, 1)
        for attempt in range(CHECK_ATTEMPTS):
            try:
                return self.check(faulting, settled, status)
            except OperationalError as exc:  # the cluster is shared by the tests: another session may restart it
                if attempt + 1 == CHECK_ATTEMPTS:
                    raise
                self.log("check_retried", error=str(exc).splitlines()[0])
                time.sleep(5)

    # ---- the checks -----------------------------------------------------------------------------

    def check(self, faulting: float, settling: float, status: int | None) -> dict:
        grid, book = self.grid, BOOK
        counts = dict(grid.sql(f"SELECT u.status, count(*) FROM {self.table} u JOIN books b ON b.id = u.book_id "
                               f"WHERE b.name = :book GROUP BY u.status", book=book))
        done = counts.get(self.done_status, 0)
        now_done = self.done_ids()
        lost = sorted(self.seen_done - now_done)
        credited = grid.sql("SELECT coalesce(sum(units_done), 0) FROM worker_records")[0][0]
        failures = grid.sql(f"SELECT coalesce(sum(failures), 0) FROM {self.table}")[0][0]
        quarantined = grid.sql("SELECT count(*) FROM worker_records WHERE quarantined_at IS NOT NULL")[0][0]
        verify = grid.obook("verify", "--book", book, timeout=600)
        figures = {"kind": self.kind, "seed": None, "faulting_seconds": faulting, "settle_seconds": settling,
                   "faults": dict(sorted(self.faults.items())), "fault_count": sum(self.faults.values()),
                   "target": self.target, "counts": counts, "lost": len(lost), "lost_ids": lost[:20],
                   "done_went_down": len(self.went_down), "units_credited": credited,
                   "failures_charged": failures, "workers_quarantined": quarantined,
                   "driver_exits": self.driver_exits, "driver_status": status,
                   "verify_status": verify.returncode, "verify": verify.stdout.strip().splitlines()}
        if self.kind == "game":
            figures["repeated"] = grid.lost_searches(book)
            clean = (f"{self.target} finished games" in verify.stdout
                     and "statistics match the games" in verify.stdout)
        else:
            figures["claims_repeated"] = grid.sql("SELECT coalesce(sum(attempts - 1), 0) FROM expansions")[0][0]
            figures["tasks"] = task_outcomes(grid.logs)
            figures["repeated"] = figures["tasks"]["searches_repeated"]
            figures["book_counter"] = grid.sql("SELECT expansions_done FROM books WHERE name = :b", b=book)[0][0]
            figures["staged_left"] = grid.sql("SELECT count(*) FROM expansion_results")[0][0]
            figures["edges"] = grid.sql("SELECT count(*) FROM minimax_edges")[0][0]
            clean = "every backed-up value matches the stored searches" in verify.stdout
        figures["repeats_allowed"] = self.interruptible
        problems = []
        if status != 0:
            problems.append(f"the driver did not end the build with status 0 ({status})")
        if counts != {self.done_status: self.target}:
            problems.append(f"the rows are {counts}, not {self.target} {self.done_status}")
        if lost or self.went_down:
            problems.append(f"{len(lost)} units seen done are no longer done ({lost[:20]}); "
                            f"the count went down {self.went_down}")
        if credited != done:
            problems.append(f"the workers were credited {credited} units, {done} rows are done")
        if self.kind == "expansion" and (figures["book_counter"] != done or figures["staged_left"]):
            problems.append(f"books.expansions_done {figures['book_counter']}, {done} rows done, "
                            f"{figures['staged_left']} staged results left")
        if verify.returncode != 0 or not clean:
            problems.append("obook verify is not clean")
        if not 0 <= figures["repeated"] <= self.interruptible:
            problems.append(f"{figures['repeated']} searches repeated, at most {self.interruptible} allowed")
        figures["problems"] = problems
        return figures


def task_outcomes(logs: Path) -> dict:
    """The workers' grid tasks by outcome, from their logs (Celery's "received" and "succeeded ...:
    'finished'" lines), and the expansion searches repeated: tasks that ended ``lost`` (a store
    error or a lost lease after the search) or never ended (the worker killed, or frozen until the
    end). On the grid an expansion's ``attempts`` counts the driver's sends (a claim by a token),
    not searches: a resent message whose first copy was lost, or that found its unit taken
    (``busy``) or the store down (``unavailable``), searched nothing."""
    text = "\n".join(p.read_text(errors="replace") for p in sorted(logs.glob("worker*.log")))
    received = len(re.findall(r"advance_unit\[[^\]]*\] received", text))
    outcomes: dict[str, int] = {}
    for outcome in re.findall(r"advance_unit\[[^\]]*\] succeeded in [0-9.]+s: '([a-z-]+)'", text):
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
    unfinished = received - sum(outcomes.values())
    return {"received": received, **dict(sorted(outcomes.items())), "never_ended": unfinished,
            "searches_repeated": outcomes.get("lost", 0) + unfinished}


def run_schedule(kind: str, minutes: float, seed: int, server, logs: Path, emit=None,
                 settle_seconds: float = 900.0, raise_seconds: float = RAISE_SECONDS) -> dict:
    """Run the schedule over a fresh database of ``server`` (a ``RestartableServer``); the figures.
    ``raise_seconds``: each raise of the target is about this long a build (what is left to build
    once the faults stop)."""
    from obook.store.db import forget_stores
    from obook.store.migrate import upgrade
    from tests.conftest import fresh_postgres_database

    emit = emit or (lambda record: print(json.dumps(record), flush=True))
    saved = {k: os.environ.get(k) for k in RUN_ENV}
    os.environ.update(RUN_ENV)
    broker = PrivateRedis(logs)
    try:
        with fresh_postgres_database(server.url, "obook_schedule") as url:
            upgrade(url)
            grid = Grid(database_url=url, logs=logs, broker_url=broker.url)
            schedule = Schedule(kind, grid, server, broker, random.Random(seed), emit, raise_seconds=raise_seconds)
            try:
                figures = schedule.run(minutes * 60, settle_seconds)
            finally:
                grid.stop_all()
                forget_stores()
        figures["seed"] = seed
        figures["logs"] = str(logs)
        return figures
    finally:
        broker.stop()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def record(figures: dict, minutes: float) -> None:
    """Append a row for this run to the schedule's table in docs/architecture.md."""
    path = ROOT / "docs" / "architecture.md"
    text = path.read_text()
    marker = "<!-- fault-schedule rows -->"
    if marker not in text:
        raise SystemExit(f"{path} has no {marker} line to append after")
    faults = ", ".join(f"{n} {name}" for name, n in figures["faults"].items())
    verdict = "clean" if not figures["problems"] else "FAILED: " + "; ".join(figures["problems"])
    row = (f"| `python benchmarks/fault_schedule.py --kind {figures['kind']} --minutes {minutes:g} "
           f"--seed {figures['seed']}` | {figures['fault_count']} faults in {figures['faulting_seconds']:.0f} s "
           f"({faults}); settled in {figures['settle_seconds']:.0f} s | target {figures['target']}: "
           f"{', '.join(f'{n} {status}' for status, n in figures['counts'].items())}, {figures['lost']} lost, "
           f"the count {'went down' if figures['done_went_down'] else 'never went down'}, "
           f"{figures['units_credited']} credited to workers, {figures['repeated']} searches repeated "
           f"(at most {figures['repeats_allowed']} allowed), {figures['failures_charged']} failures charged, "
           f"{figures['workers_quarantined']} workers quarantined; verify {verdict} |")
    path.write_text(text.replace(marker, f"{row}\n{marker}", 1))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=("game", "expansion"), required=True)
    parser.add_argument("--minutes", type=float, required=True, help="how long to fault")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--settle-minutes", type=float, default=15.0,
                        help="how long the build may take to reach its target once the faults stop")
    parser.add_argument("--record", action="store_true", help="append the figures to docs/architecture.md")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("the tests' PostgreSQL cluster needs root (pg_createcluster, pg_ctlcluster)")
    from tests.conftest import _start_restartable_server

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # SIGTERM too stops the grid and drops the database
    signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job's SIGINT is ignored otherwise

    server, started = _start_restartable_server()
    logs = Path(tempfile.mkdtemp(prefix=f"fault_schedule_{args.kind}_"))
    try:
        figures = run_schedule(args.kind, args.minutes, args.seed, server, logs,
                               settle_seconds=args.settle_minutes * 60)
    finally:
        if started:
            server.ctl("stop")
    print(json.dumps({"figures": figures}), flush=True)
    if args.record:
        record(figures, args.minutes)
    return 1 if figures["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
