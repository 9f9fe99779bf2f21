"""Issue 16: the same minimax book built on the grid, with workers SIGKILLed, is as good as the
embedded build's.

Builds a minimax book on this machine's PostgreSQL and Redis with ``obook grid run`` and worker
processes (``obook worker``, one process each), SIGKILLs a random worker every ``--kill-every``
seconds while the build runs and starts a new one, checks the finished book with ``obook
verify``, then plays it as ``benchmarks/minimax_book.py`` does (engine+book against the engine at P
playouts a move, colours alternating) and records the games in the same JSON lines file under
``--book``. The database is kept (``--database``), so a rerun continues the match.

    python benchmarks/minimax_grid.py --book mmreach300grid --search-playouts 30000 --playouts 300 \\
        --expansion reach --play-playouts 300 --target 1000 --games 400 --kill-every 120
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent))

from grid_common import OBOOK, PG_SERVER, REDIS_URL  # noqa: E402
from minimax_book import DEFAULT_OUT, append, expansions_done, load, play, playouts_spent, reached, report  # noqa: E402


def database(name: str) -> str:
    admin = create_engine(PG_SERVER, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        if not conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}).first():
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    url = make_url(PG_SERVER).set(database=name).render_as_string(hide_password=False)
    from obook.store.migrate import upgrade

    upgrade(url)
    return url


def build(url: str, args, logs: Path) -> dict:
    env = {**os.environ, "OBOOK_DATABASE_URL": url, "OBOOK_BROKER_URL": REDIS_URL,
           "OBOOK_QUEUE": f"mmgrid_{os.getpid()}"}
    options = ["--algorithm", "minimax", "--size", "9", "--komi", str(args.komi), "--search",
               f"playouts={args.search_playouts}", "--seconds-per-move", "0", "--expansion", args.expansion,
               "--play-playouts", str(args.play_playouts)]

    def start(command: list[str], log: str) -> subprocess.Popen:
        return subprocess.Popen([*OBOOK, *command], env=env, stdout=open(logs / log, "a"),
                                stderr=subprocess.STDOUT, start_new_session=True)

    workers = [start(["worker", "--concurrency", "1", "--loglevel", "WARNING"], "worker.log")
               for _ in range(args.workers)]
    driver = start(["grid", "run", "--book", args.book, "--target-games", str(args.target), "--poll", "0.5",
                    *options], "driver.log")
    rng = random.Random(args.seed)
    kills = 0
    started = time.monotonic()
    next_kill = started + args.kill_every
    try:
        while driver.poll() is None:
            time.sleep(1)
            if args.kill_every and time.monotonic() >= next_kill:
                victim = rng.randrange(len(workers))
                os.killpg(workers[victim].pid, signal.SIGKILL)
                workers[victim].wait(10)
                kills += 1
                workers[victim] = start(["worker", "--concurrency", "1", "--loglevel", "WARNING"], "worker.log")
                next_kill = time.monotonic() + args.kill_every
                print(f"killed a worker ({kills}), {expansions_done(url, args.book)} expansions done",
                      file=sys.stderr, flush=True)
    finally:
        for p in [*workers, driver]:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
    if driver.returncode != 0:
        raise SystemExit(f"the driver exited {driver.returncode}; logs in {logs}")
    verify = subprocess.run([*OBOOK, "verify", "--book", args.book, "--db", url], capture_output=True, text=True)
    return {"kind": "build", "book": args.book, "checkpoint": args.target, "done": expansions_done(url, args.book),
            "seconds": round(time.monotonic() - started, 1), "playouts": playouts_spent(url, args.book),
            "grid": True, "kills": kills,
            "verify_exit": verify.returncode, "verify": verify.stdout.strip().splitlines()[-1:]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--database", default="obook_minimax_grid", help="PostgreSQL database (kept)")
    parser.add_argument("--book", default="mmreach300grid")
    parser.add_argument("--search-playouts", type=int, default=30000)
    parser.add_argument("--playouts", type=int, default=300)
    parser.add_argument("--expansion", choices=("cost", "reach"), default="reach")
    parser.add_argument("--play-playouts", type=int, default=300)
    parser.add_argument("--target", type=int, default=1000, help="expansions")
    parser.add_argument("--games", type=int, default=400)
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--workers", type=int, default=2, help="worker processes; also games played at once")
    parser.add_argument("--kill-every", type=float, default=120.0, help="seconds between two SIGKILLs (0: none)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    url = database(args.database)
    if not reached(load(args.out), args.book, args.target):
        logs = Path(f"/tmp/minimax-grid-{args.book}")
        logs.mkdir(exist_ok=True)
        row = build(url, args, logs)
        print(json.dumps(row), flush=True)
        if row["verify_exit"] != 0:
            raise SystemExit(f"obook verify failed: {row['verify']}")
        append(args.out, row)
    play(url, args.book, args.target, args.playouts, args.games, args.komi, args.workers, args.out)
    print(json.dumps([r for r in report(load(args.out)) if r["book"] == args.book][-1]), flush=True)


if __name__ == "__main__":
    main()
