"""Lookups of ``obook serve`` (one uvicorn worker, PostgreSQL) while exports, progress, deep game
pages and long anonymous questions run at the same time (issue 19, item 8).

    python benchmarks/api_under_load.py [--db URL] [--rows 300000] [--games 4000] [--seconds 30]

1. Makes (once; later runs reuse it) a book ``bench`` in the database ``--db`` (created when missing)
   as ``benchmarks/api_lookup.py`` does (statistics of synthetic 9x9 openings plus filler rows up to
   ``--rows``), and stores ``--games`` of those openings as finished games and 8 as games in
   progress, so that progress, game pages and exports have a real book's work to do.
2. Starts ``obook serve`` on a free port and asks every distinct lookup of the mix once.
3. Phase ``alone``: ``--lookup-connections`` clients ask lookups back to back for ``--seconds``.
4. Phase ``loaded``: the same lookups while, all the time, ``--export-clients`` ask ``export.sgf``
   with a different ``max_nodes`` (10,000-20,000) each time (so that the export cache misses, as an
   attacker would make it), ``--progress-clients`` poll ``/v1/progress``, a client reads random deep
   pages of ``games?offset=`` and a client asks distinct 722-move pass-padded questions.
5. Prints one JSON line per phase: lookup count, rate and latency percentiles, what the other
   clients got done, the server's resident memory (largest sampled, and the kernel's high-water
   mark ``VmHWM``) and whether the bounds hold (lookup p99 under ``--p99-ms``, memory under ``--rss-mb``).

The clients run in this process (asyncio), on the same machine as the server: on a machine with
few cores they take CPU from it, so the figures are an upper bound on the service's own latency.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import random
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from api_lookup import BOOK, build_book, ensure_database, free_port, lookup_paths, start_server  # noqa: E402

log = logging.getLogger("api_under_load")

DEFAULT_DB = os.environ.get("OBOOK_BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/obook_bench_load")
LONG = 722


def store_games(url: str, openings: list[list[str]], games: int) -> int:
    """Store ``games`` openings as finished games of the bench book (their statistics are already
    in the book) and 8 as games in progress; returns the book's finished games."""
    from obook.book.library import open_book_store
    from obook.store.books import get_book
    from obook.store.reporting import count_games

    store = open_book_store(url)
    with store.read() as conn:
        book = get_book(conn, BOOK)
        have = count_games(conn, book.id, "finished")
    if have >= games:
        return have
    rng = random.Random(5)
    raw = store.engine.raw_connection()
    try:
        with raw.cursor() as cursor:
            columns = ("book_id, moves, n_moves, origins, status, result, winner, source, seed, lease_owner, "
                       "lease_until, created_at, updated_at, finished_at, searches, failures")
            with cursor.copy(f"COPY games ({columns}) FROM STDIN") as copy:
                now = time.time()
                for i in range(have, games):
                    moves = openings[i % len(openings)]
                    winner = rng.choice("BW")
                    stamp = time.strftime("%Y-%m-%d %H:%M:%S+00", time.gmtime(now - 3 * (games - i)))
                    copy.write_row((book.id, " ".join(moves), len(moves), "m" * len(moves), "finished",
                                    f"{winner}+R", winner, "selfplay", i + 1, None, None, stamp, stamp, stamp,
                                    len(moves), 0))
                for i in range(8):
                    moves = openings[-1 - i][: 6 + i]
                    stamp = time.strftime("%Y-%m-%d %H:%M:%S+00", time.gmtime(now))
                    copy.write_row((book.id, " ".join(moves), len(moves), "m" * len(moves), "in_progress", None,
                                    None, "selfplay", 10**6 + i, f"bench:{i}:celery:x", "2999-01-01 00:00:00+00",
                                    stamp, stamp, None, len(moves), 0))
        raw.commit()
    finally:
        raw.close()
    with store.write() as conn:
        conn.exec_driver_sql("ANALYZE games")
        return count_games(conn, book.id, "finished")


class Client:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, port: int):
        self.port = port
        self.reader = self.writer = None

    async def get(self, path: str) -> tuple[int, int, float]:
        """(status, body bytes, seconds)."""
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port, limit=2**24)
        started = time.perf_counter()
        self.writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
        await self.reader.readexactly(length)
        return int(head.split()[1]), length, time.perf_counter() - started

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def percentiles(latencies: list[float]) -> dict:
    if not latencies:
        return {}
    ordered = sorted(latencies)

    def pct(p: float) -> float:
        return round(1000 * ordered[min(int(p / 100 * len(ordered)), len(ordered) - 1)], 2)

    return {"p50_ms": pct(50), "p90_ms": pct(90), "p99_ms": pct(99), "max_ms": round(1000 * ordered[-1], 2)}


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


async def phase(port: int, pid: int, paths: list[str], openings: list[list[str]], games: int, seconds: float,
                args, loaded: bool) -> dict:
    deadline = time.perf_counter() + seconds
    lookups: list[float] = []
    done = {"lookup_errors": 0, "exports": 0, "export_bytes": 0, "export_s": [], "progress": 0, "progress_s": [],
            "pages": 0, "page_s": [], "long_lookups": 0, "long_s": [], "other_errors": 0}
    rss = {"max": 0.0}
    rng = random.Random(7 if loaded else 6)

    async def lookup_client() -> None:
        client = Client(port)
        while time.perf_counter() < deadline:
            status, _, took = await client.get(rng.choice(paths))
            lookups.append(took)
            done["lookup_errors"] += status != 200
        client.close()

    async def loop(make_path, count: str, times: str) -> None:
        client = Client(port)
        while time.perf_counter() < deadline:
            status, length, took = await client.get(make_path())
            done[count] += 1
            done[times].append(took)
            done["other_errors"] += status != 200
            if count == "exports":
                done["export_bytes"] += length
        client.close()

    async def sample_rss() -> None:
        while time.perf_counter() < deadline:
            rss["max"] = max(rss["max"], rss_mb(pid))
            await asyncio.sleep(0.2)

    def export_path() -> str:
        return f"/v1/books/{BOOK}/export.sgf?max_nodes={rng.randint(10000, 20000)}"

    def page_path() -> str:
        return f"/v1/books/{BOOK}/games?limit=50&offset={rng.randrange(max(games - 50, 1))}&status=finished"

    def long_path() -> str:
        moves = rng.choice(openings)[: rng.randint(1, 20)]
        return f"/v1/books/{BOOK}/lookup?moves={','.join(moves + ['pass'] * (LONG - len(moves)))}"

    tasks = [lookup_client() for _ in range(args.lookup_connections)] + [sample_rss()]
    if loaded:
        tasks += [loop(export_path, "exports", "export_s") for _ in range(args.export_clients)]
        tasks += [loop(lambda: "/v1/progress", "progress", "progress_s") for _ in range(args.progress_clients)]
        tasks += [loop(page_path, "pages", "page_s"), loop(long_path, "long_lookups", "long_s")]
    started = time.perf_counter()
    await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    out = {"benchmark": "api_under_load", "phase": "loaded" if loaded else "alone", "lookups": len(lookups),
           "lookup_rps": round(len(lookups) / elapsed, 1), **percentiles(lookups), "lookup_errors": done["lookup_errors"]}
    if loaded:
        for name in ("export", "progress", "page", "long"):
            times = done.pop(f"{name}_s")
            out[f"{name}_median_ms"] = percentiles(times).get("p50_ms")
        out.update({k: v for k, v in done.items() if k != "lookup_errors"})
    out["rss_mb_max_sampled"] = round(rss["max"], 1)
    out["rss_mb_peak"] = round(rss_mb(pid, "VmHWM"), 1)
    return out


async def warm(port: int, paths: list[str]) -> None:
    client = Client(port)
    for path in sorted(set(paths)):
        await client.get(path)
    client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=DEFAULT_DB, help="PostgreSQL URL (the database is created when missing)")
    parser.add_argument("--rows", type=int, default=300_000, help="statistics rows the book must have")
    parser.add_argument("--games", type=int, default=4000, help="finished games (synthetic openings) in the book")
    parser.add_argument("--paths", type=int, default=5000, help="lookups in the request mix")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of each phase")
    parser.add_argument("--lookup-connections", type=int, default=4)
    parser.add_argument("--export-clients", type=int, default=2)
    parser.add_argument("--progress-clients", type=int, default=2)
    parser.add_argument("--p99-ms", type=float, default=20.0, help="the lookups' p99 bound")
    parser.add_argument("--rss-mb", type=float, default=700.0, help="the server's memory bound")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)

    ensure_database(args.db)
    from obook.store.migrate import upgrade

    upgrade(args.db)
    openings = build_book(args.db, args.rows, args.games)
    finished = store_games(args.db, openings, args.games)
    paths = lookup_paths(openings, args.paths)
    port = free_port()
    server = start_server(args.db, port, cache=True)
    try:
        asyncio.run(warm(port, paths))
        for loaded in (False, True):
            out = asyncio.run(phase(port, server.pid, paths, openings, finished, args.seconds, args, loaded))
            out.update(finished_games=finished, stats_rows_wanted=args.rows,
                       p99_bound_ms=args.p99_ms, rss_bound_mb=args.rss_mb,
                       p99_ok=out.get("p99_ms", 1e9) < args.p99_ms, rss_ok=out["rss_mb_peak"] < args.rss_mb,
                       load_average=os.getloadavg()[0])
            print(json.dumps(out), flush=True)
    finally:
        server.terminate()
        server.wait(30)


if __name__ == "__main__":
    main()
