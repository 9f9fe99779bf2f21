"""Throughput and latency of ``GET /v1/books/{book}/lookup`` on one uvicorn worker over PostgreSQL.

    python benchmarks/api_lookup.py [--db URL] [--rows 1000000] [--seconds 20] [--connections 32] [--no-cache]

1. Makes (once; later runs reuse it) a book ``bench`` with at least ``--rows`` statistics rows in
   the database ``--db`` (created when missing): the statistics of ``--games`` synthetic 9x9
   openings of 20 moves, played by a random player that prefers three moves per position so that
   openings share prefixes like a real book's, bulk-loaded with COPY, then filler rows under random
   position keys (positions no lookup reaches, standing for the rest of a big book) up to ``--rows``.
2. Starts ``obook serve`` (one uvicorn worker) on a free port.
3. Loads it with wrk (Debian's ``wrk``; ``--tool python`` is a slower asyncio fallback) on a mix of
   lookups: every prefix of every synthetic opening, drawn at random, so the root and early
   positions come up most often, as when bots ask along their games.
4. Prints one JSON line: requests per second, latency percentiles, errors, and the server's CPU
   time per request (user + system of the uvicorn process over the measured load: on a machine
   shared with other work the requests per second follow the CPU the server gets, this does not).

``--server-root DIR`` serves from another checkout (say ``git worktree add /tmp/main main``) with
this script's load and book, for a paired run of two versions back to back.

The service caches answers (``OBOOK_API_CACHE_SECONDS``, refreshed when the book gets new games):
by default the load runs after one pass over the distinct lookups, as on a server that has been up
for a while; ``--cold`` skips that pass and ``--no-cache`` sets the cache to 0 so that every request
replays its moves and queries the database.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

log = logging.getLogger("api_lookup")

DEFAULT_DB = os.environ.get("OBOOK_BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/obook_bench")
BOOK = "bench"
DEPTH = 20


def ensure_database(url: str) -> None:
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    target = make_url(url)
    admin = create_engine(target.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        exists = conn.execute(text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": target.database}).first()
        if not exists:
            conn.execute(text(f'CREATE DATABASE "{target.database}"'))
            log.info("created database %s", target.database)
    admin.dispose()


def synthetic_openings(games: int, seed: int = 1) -> list[tuple[list[str], str]]:
    """(moves, winner) of ``games`` random 9x9 openings that favour three moves per position."""
    from obook.go.position import Position

    rng = random.Random(seed)
    openings = []
    for _ in range(games):
        position = Position(size=9, komi=7.5)
        moves = []
        for _ in range(DEPTH):
            legal = position.legal_moves()
            if rng.random() < 0.75:
                key = position.key
                legal = sorted(legal, key=lambda m: hash((key, m)) & 0xFFFF)[:3]
            point = rng.choice(legal)
            position.play(point)
            moves.append(position.vertex(point))
        openings.append((moves, rng.choice("BW")))
    return openings


def build_book(url: str, rows: int, games: int) -> list[list[str]]:
    """The bench book (made when missing or too small); returns the synthetic openings' moves."""
    from obook.book.keys import opening_statistics
    from obook.book.library import BookSettings, ensure_book, open_book_store
    from obook.store.db import to_signed
    from obook.store.stats import replace_stats, stats_count

    store = open_book_store(url, create=True)
    book = ensure_book(store, BOOK, BookSettings(size=9, komi=7.5, depth=DEPTH))
    started = time.time()
    openings = synthetic_openings(games)
    with store.read() as conn:
        have = stats_count(conn, book.id)
    if have >= rows:
        log.info("book %r already has %d statistics rows", BOOK, have)
        return [m for m, _ in openings]
    stats: dict[tuple[int, int], tuple[int, int]] = {}
    for moves, winner in openings:
        for k, (g, w, _draws) in opening_statistics(9, 7.5, False, moves, winner, DEPTH).items():
            old = stats.get(k, (0, 0))
            stats[k] = (old[0] + g, old[1] + w)
    log.info("%d openings -> %d real statistics rows in %.0f s", games, len(stats), time.time() - started)
    rng = random.Random(2)
    taken = {(to_signed(k), m) for k, m in stats}
    real = [(to_signed(k), m, g, w) for (k, m), (g, w) in stats.items()]
    with store.write() as conn:
        replace_stats(conn, book.id, {})
    raw = store.engine.raw_connection()
    try:
        with raw.cursor() as cursor:
            with cursor.copy("COPY book_stats (book_id, position_key, move, games, wins) FROM STDIN") as copy:
                for key, move, g, w in real:
                    copy.write_row((book.id, key, move, g, w))
                filler = 0
                while len(real) + filler < rows:
                    key, move = rng.randrange(-(1 << 63), 1 << 63), rng.randrange(12, 110)
                    if (key, move) in taken:
                        continue
                    taken.add((key, move))
                    g = rng.randint(1, 40)
                    copy.write_row((book.id, key, move, g, rng.randint(0, g)))
                    filler += 1
        raw.commit()
    finally:
        raw.close()
    with store.write() as conn:
        conn.exec_driver_sql("ANALYZE book_stats")
    log.info("book %r: %d rows (%d real, %d filler) in %.0f s", BOOK, len(real) + filler, len(real), filler,
             time.time() - started)
    return [m for m, _ in openings]


def lookup_paths(openings: list[list[str]], count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    paths = []
    for _ in range(count):
        moves = rng.choice(openings)[: rng.randint(0, DEPTH)]
        paths.append(f"/v1/books/{BOOK}/lookup?moves={','.join(moves)}")
    return paths


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(url: str, port: int, cache: bool, root: Path = ROOT) -> subprocess.Popen:
    env = dict(os.environ) if cache else {**os.environ, "OBOOK_API_CACHE_SECONDS": "0"}
    env["PYTHONPATH"] = str(root)  # the checkout served, before an installed (editable) obook
    server = subprocess.Popen([sys.executable, "-m", "obook.cli", "serve", "--db", url, "--port", str(port),
                               "--log-level", "warning"], env=env, cwd=root)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as answer:
                if answer.status == 200:
                    return server
        except OSError:
            time.sleep(0.3)
    server.kill()
    raise SystemExit("the server did not come up")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def runqueue_wait_seconds(pid: int) -> float:
    """Time the process's threads spent runnable but waiting for a core (Linux schedstat): how
    much the other work on the machine held the server back."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            pass  # a thread that ended
    return total / 1e9


def run_wrk(port: int, paths: list[str], seconds: float, connections: int, threads: int) -> dict:
    script = "paths = {\n" + ",\n".join(json.dumps(p) for p in paths) + "\n}\n" + (
        "request = function()\n  return wrk.format('GET', paths[math.random(#paths)])\nend\n"
        "done = function(summary, latency, requests)\n"
        "  io.write(string.format('JSON {\"requests\": %d, \"errors_status\": %d, \"errors_timeout\": %d, "
        "\"errors_connect\": %d, \"p50_ms\": %.3f, \"p90_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f, "
        "\"seconds\": %.3f}\\n', summary.requests, summary.errors.status, summary.errors.timeout, "
        "summary.errors.connect, latency:percentile(50) / 1000, latency:percentile(90) / 1000, "
        "latency:percentile(99) / 1000, latency.max / 1000, summary.duration / 1e6))\nend\n")
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(script)
    try:
        command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds:g}s", "--latency", "-s", f.name,
                   f"http://127.0.0.1:{port}"]
        log.info("%s", " ".join(command))
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(f.name)
    figures = json.loads(re.search(r"^JSON (.*)$", out, re.M).group(1))
    figures["rps"] = figures["requests"] / figures["seconds"]
    figures["errors"] = figures.pop("errors_status") + figures.pop("errors_timeout") + figures.pop("errors_connect")
    return figures


async def _warm(port: int, paths: list[str], connections: int = 8) -> None:
    """Ask every lookup once, as a server that has been up for a while has."""
    queue = list(paths)

    async def client() -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while queue:
            writer.write(f"GET {queue.pop()} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            await reader.readexactly(int(re.search(rb"(?i)content-length: *(\d+)", head).group(1)))
        writer.close()

    await asyncio.gather(*(client() for _ in range(connections)))


async def _python_load(port: int, paths: list[str], seconds: float, connections: int) -> dict:
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds
    rng = random.Random(4)

    async def client() -> None:
        nonlocal errors
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        while time.perf_counter() < deadline:
            path = rng.choice(paths)
            start = time.perf_counter()
            writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
            head = await reader.readuntil(b"\r\n\r\n")
            length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - start)
            if not head.startswith(b"HTTP/1.1 200"):
                errors += 1
        writer.close()

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(connections)))
    elapsed = time.perf_counter() - started
    latencies.sort()

    def pct(p: float) -> float:
        return 1000 * latencies[min(int(p / 100 * len(latencies)), len(latencies) - 1)]

    return {"requests": len(latencies), "seconds": elapsed, "rps": len(latencies) / elapsed, "errors": errors,
            "p50_ms": pct(50), "p90_ms": pct(90), "p99_ms": pct(99), "max_ms": 1000 * latencies[-1]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=DEFAULT_DB, help="PostgreSQL URL (the database is created when missing)")
    parser.add_argument("--rows", type=int, default=1_000_000, help="statistics rows the book must have")
    parser.add_argument("--games", type=int, default=4000, help="synthetic openings behind the real rows")
    parser.add_argument("--paths", type=int, default=20000, help="lookups in the request mix")
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--connections", default="32", help="open connections; a list (8,32) runs each in turn")
    parser.add_argument("--threads", type=int, default=1, help="wrk threads")
    parser.add_argument("--tool", choices=("wrk", "python"), default="wrk" if shutil.which("wrk") else "python")
    parser.add_argument("--no-cache", action="store_true", help="every request goes to the database")
    parser.add_argument("--cold", action="store_true", help="no first pass over the distinct lookups")
    parser.add_argument("--server-root", type=Path, default=ROOT, help="the checkout to serve (a paired run)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)

    ensure_database(args.db)
    openings = build_book(args.db, args.rows, args.games)
    paths = lookup_paths(openings, args.paths)
    port = free_port()
    from obook.book.library import open_book_store
    from obook.store.books import get_book
    from obook.store.stats import stats_count

    store = open_book_store(args.db)
    with store.read() as conn:
        rows = stats_count(conn, get_book(conn, BOOK).id)
    server = start_server(args.db, port, cache=not args.no_cache, root=args.server_root.resolve())
    try:
        def load(seconds: float, connections: int) -> dict:
            if args.tool == "wrk":
                return run_wrk(port, paths, seconds, connections, args.threads)
            return asyncio.run(_python_load(port, paths, seconds, connections))

        if not args.cold:
            started = time.time()
            asyncio.run(_warm(port, sorted(set(paths))))
            log.info("asked each of the %d distinct lookups once in %.1f s", len(set(paths)), time.time() - started)
        for connections in [int(c) for c in args.connections.split(",")]:
            if args.warmup > 0:
                load(args.warmup, connections)
            cpu, waited = cpu_seconds(server.pid), runqueue_wait_seconds(server.pid)
            figures = load(args.seconds, connections)
            requests = max(figures["requests"], 1)
            figures["server_cpu_ms_per_request"] = 1000 * (cpu_seconds(server.pid) - cpu) / requests
            figures["server_cpu_cores"] = (cpu_seconds(server.pid) - cpu) / figures["seconds"]
            figures["server_runqueue_wait_ms_per_request"] = 1000 * (runqueue_wait_seconds(server.pid) - waited) / requests
            figures["load_average"] = os.getloadavg()[0]
            result = {"benchmark": "api_lookup", "server": str(args.server_root), "tool": args.tool,
                      "connections": connections,
                      "cache": not args.no_cache, "warm": not args.cold, "stats_rows": rows,
                      "distinct_lookups": len(set(paths)),
                      **{k: round(v, 3) if isinstance(v, float) else v for k, v in figures.items()}}
            print(json.dumps(result), flush=True)
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
