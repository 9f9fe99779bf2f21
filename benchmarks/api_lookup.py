"""Throughput and latency of ``GET /v1/books/{book}/lookup`` on one uvicorn worker over PostgreSQL.

    python benchmarks/api_lookup.py [--db URL] [--algorithm mvbm|minimax] [--rows N] [--seconds 20]
                                    [--connections 32] [--no-cache] [--cold]

1. Makes (once; later runs reuse it) a book in the database ``--db`` (created when missing):

   - ``--algorithm mvbm`` (the default), the statistical book ``bench`` with at least ``--rows``
     (default 1,000,000) statistics rows: the statistics of ``--games`` synthetic 9x9 openings of 20
     moves, played by a random player that prefers three moves per position so that openings share
     prefixes like a real book's, bulk-loaded with COPY, then filler rows under random position keys
     (positions no lookup reaches, standing for the rest of a big book) up to ``--rows``;
   - ``--algorithm minimax``, the search-valued book ``bench_minimax`` with at least ``--rows``
     (default 100,000) nodes: every position of the same openings as a node (canonical keys), their
     moves as its edges, a made-up search of it (root moves, play policy, mean score) and the
     figures the book's back-up computes from those (``obook.book.backup.computed_figures``), so that
     the lookup reads, and chooses its book move from, what an expansion would have stored; then
     filler nodes under random keys, in small trees with their edges, up to ``--rows``; and one done
     expansion per edge, as the expansions that grew the book left them (the service's freshness
     check counts them). The book is made through ``ensure_book`` (its settings row); only the rows
     of nodes, edges and expansions are bulk-loaded with COPY.
2. Starts ``obook serve`` (one uvicorn worker) on a free port, and asks a sample of the distinct
   lookups once, failing unless each is a real answer (status 200; every position before the 20th
   move in the book, and a minimax book's with its book move): a benchmark of 404s or empty answers
   measures nothing.
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
replays its moves and queries the database (a minimax book: its node, and its edges joined to its
children's bounds). The check of step 2 asks its sample either way.
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
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from obook.book.rules import MINIMAX, MVBM  # noqa: E402 - the algorithms measured: statistical, search-valued
from obook.book.kinds import book_kind  # noqa: E402 - what differs between the two, asked of the kind

log = logging.getLogger("api_lookup")

DEFAULT_DB = os.environ.get("OBOOK_BENCH_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/obook_bench")
BOOK = "bench"  # the statistical book (--algorithm mvbm)
MINIMAX_BOOK = "bench_minimax"
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
    book = ensure_book(store, BOOK, BookSettings(size=9, komi=7.5, algorithm=MVBM, depth=DEPTH))
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


# ---- a minimax book ------------------------------------------------------------------------------------


@dataclass
class SyntheticNode:
    """A node of the minimax bench book before its search is made up: the path that first reached
    it, its book moves and a few other moves its search may have ranked."""

    moves: str  # "E5 G5 ...", from the empty board
    edges: dict[int, int] = field(default_factory=dict)  # canonical move -> child key, in the order added
    others: list[int] = field(default_factory=list)  # canonical moves not in the book (legal, for real positions)


def opening_graph(openings: list[list[str]], seed: int = 6) -> tuple[list[list[str]], dict[int, SyntheticNode]]:
    """The openings' positions as a minimax book's nodes (canonical keys, ``canonical_view``) and
    their moves as its edges (canonical moves), with a sample of each position's other legal moves;
    and the openings kept: one that repeats a position (through a ko) is left out, so that the
    graph stays acyclic as an expansion's commit keeps it (none did in 4,000)."""
    from obook.book.keys import canonical_move, canonical_view
    from obook.go.board import EMPTY
    from obook.go.position import Position

    rng = random.Random(seed)
    nodes: dict[int, SyntheticNode] = {}
    kept = []
    for moves in openings:
        position = Position(size=9, komi=7.5)
        points = position.points()
        steps = []  # (key, canonical move played, other moves of a position new to the book)
        for vertex in moves + [None]:
            key, symmetries = canonical_view(position)
            others = []
            if key not in nodes:  # a sample of the legal points (Position.legal_moves asks every point)
                empty = [p for p in points if position.board.color[p] == EMPTY]
                others = [canonical_move(position, p, symmetries) for p in rng.sample(empty, min(12, len(empty)))
                          if position.is_legal(p)]
            if vertex is None:
                steps.append((key, None, others))
                break
            point = position.point(vertex)
            steps.append((key, canonical_move(position, point, symmetries), others))
            position.play(point)
        if len({key for key, _, _ in steps}) < len(steps):
            continue
        kept.append(moves)
        for depth, (key, move, others) in enumerate(steps):
            node = nodes.get(key)
            if node is None:
                node = nodes[key] = SyntheticNode(" ".join(moves[:depth]), others=list(dict.fromkeys(others)))
            if move is not None:
                node.edges.setdefault(move, steps[depth + 1][0])
    return kept, nodes


def filler_graph(rng: random.Random, count: int, taken: set[int]) -> dict[int, SyntheticNode]:
    """``count`` nodes under random keys not in ``taken`` (which gets them), in trees of 10 to 100
    nodes below random paths: no lookup reaches them, they stand for the rest of a big book (its
    tables' and indexes' size, an edge and an expansion per node) as the statistical book's filler
    rows do."""
    from obook.go.vertex import format_vertex, point_of

    points = [point_of(col, row, 9) for row in range(9) for col in range(9)]
    nodes: dict[int, SyntheticNode] = {}
    while len(nodes) < count:
        tree: list[int] = []
        for _ in range(min(rng.randint(10, 100), count - len(nodes))):
            key = rng.getrandbits(64)
            while key in taken:
                key = rng.getrandbits(64)
            taken.add(key)
            if not tree:
                moves = " ".join(format_vertex(p, 9) for p in rng.sample(points, rng.randint(2, 14)))
            else:
                parent = nodes[rng.choice(tree)]
                move = rng.choice([p for p in points if p not in parent.edges])
                parent.edges[move] = key
                moves = f"{parent.moves} {format_vertex(move, 9)}"
            nodes[key] = SyntheticNode(moves)
            tree.append(key)
        for key in tree:
            nodes[key].others = [p for p in rng.sample(points, 12) if p not in nodes[key].edges]
    return nodes


def searched_nodes(graph: dict[int, SyntheticNode], rng: random.Random, playouts: int):
    """The graph's nodes as ``obook.book.minimax.Node`` with a made-up search each, as an expansion
    stores it (``searched_edges`` 0 and no excluded prior: searched once, when it was added, its
    book moves then added from its own root moves, most visited first).

    The search: its book moves first, winning 42-58% for the mover, then up to 8 other moves whose
    best (the node's own value, the best move outside the book) wins 25-38% at a node with book
    moves and 40-60% at a leaf, each visited less than the one before. So every backed-up value
    stays within 40-60% and every book move's value lies above the own value's lower bound: each
    position with book moves has a book move (``minimax.book_move``), as in a book whose expansions
    added the best moves, and the lookup's check can ask for one."""
    from obook.book.minimax import Node, RootMove

    nodes = {}
    for key, synthetic in graph.items():
        others = [m for m in synthetic.others if m not in synthetic.edges][: rng.randint(3, 8)]
        weights = [rng.uniform(0.5, 1.0) * 0.8 ** i for i in range(len(synthetic.edges) + len(others))]
        visits = [max(1, round(playouts * w / sum(weights))) for w in weights]
        own = rng.uniform(0.25, 0.38) if synthetic.edges else rng.uniform(0.40, 0.60)
        winrates = ([rng.uniform(0.42, 0.58) for _ in synthetic.edges]
                    + [own - (rng.uniform(0.01, 0.1) if i else 0.0) for i in range(len(others))])
        # win rates as the stored text keeps them (format_root_moves), so that the figures computed
        # here are those of the stored searches, as obook verify recomputes them
        root_moves = [RootMove(m, n, round(w, 6)) for m, n, w in zip([*synthetic.edges, *others], visits, winrates)]
        shown = root_moves[:4]  # a play policy: the visit shares of the search's first moves
        shown_visits = sum(m.visits for m in shown)
        node = Node(key, synthetic.moves, root_moves, 0, 0.0,
                    play_policy=[(m.move, m.visits / shown_visits) for m in shown])
        node.edges = {move: (child, node.prior(move)) for move, child in synthetic.edges.items()}
        nodes[key] = node
    return nodes


NODE_COLUMNS = ("book_id, position_key, moves, policy, searched_edges, excluded_prior, play_policy, score_mean, "
                "playouts, spec, seed, engine_version, searched_at, seq, value, lcb, ucb, own_value, own_error, "
                "own_visits, best_new, backed_up_score")
EXPANSION_COLUMNS = ("book_id, position_key, generation, moves, cost, status, attempts, failures, seed, created_at, "
                     "done_at")


def copy_nodes(cursor, book_id: int, nodes: dict, rng: random.Random, spec: str) -> int:
    """COPY ``nodes`` (``obook.book.minimax.Node``, closed under their edges: a whole graph or whole
    trees) into the book with their backed-up figures, their edges, and a done expansion per edge
    (``generation``: the edges the parent had before it). Returns the edges written."""
    import datetime as dt

    from obook.book.backup import computed_figures
    from obook.book.keys import ENGINE_VERSION
    from obook.book.minimax import format_play_policy, format_root_moves
    from obook.store.db import to_signed
    from obook.store.models import DONE

    seeds = {}
    for key, node in nodes.items():  # drawn in the order the book was always drawn in: the same book
        node.score_mean = round(rng.gauss(0.0, 6.0), 3)
        seeds[key] = rng.getrandbits(63)
    figures = computed_figures(nodes)
    now = dt.datetime.now(dt.timezone.utc)
    with cursor.copy(f"COPY minimax_nodes ({NODE_COLUMNS}) FROM STDIN") as copy:
        for key, node in nodes.items():
            f = figures[key]
            copy.write_row((book_id, to_signed(key), node.moves, format_root_moves(node.root_moves),
                            node.searched_edges, node.excluded_prior, format_play_policy(node.play_policy),
                            node.score_mean, sum(m.visits for m in node.root_moves), spec,
                            seeds[key], ENGINE_VERSION, now, 1, f.value, f.lcb, f.ucb, f.own_value,
                            f.own_error, f.own_visits, f.best_new, f.backed_up_score))
    edges = 0
    with cursor.copy("COPY minimax_edges (book_id, parent_key, move, child_key, prior) FROM STDIN") as copy:
        for key, node in nodes.items():
            for move, (child, prior) in node.edges.items():
                copy.write_row((book_id, to_signed(key), move, to_signed(child), prior))
                edges += 1
    with cursor.copy(f"COPY expansions ({EXPANSION_COLUMNS}) FROM STDIN") as copy:
        for key, node in nodes.items():
            for generation in range(len(node.edges)):
                copy.write_row((book_id, to_signed(key), generation, node.moves, node.depth + rng.uniform(0, 5),
                                DONE, 1, 0, rng.getrandbits(63), now, now))
    return edges


def build_minimax_book(url: str, rows: int, games: int, chunk: int = 20000) -> list[list[str]]:
    """The minimax bench book (made when missing or smaller than ``rows`` nodes); returns the
    synthetic openings in it (every prefix is a node)."""
    from sqlalchemy import delete

    from obook.book.library import BookSettings, ensure_book, open_book_store
    from obook.search.config import SearchConfig
    from obook.store.minimax import node_count
    from obook.store.models import Expansion, MinimaxEdge, MinimaxNode

    store = open_book_store(url, create=True)
    book = ensure_book(store, MINIMAX_BOOK, BookSettings(size=9, komi=7.5, algorithm=MINIMAX))
    started = time.time()
    openings, graph = opening_graph([m for m, _ in synthetic_openings(games)])
    log.info("%d openings (%d kept) -> %d positions in %.0f s", games, len(openings), len(graph), time.time() - started)
    with store.read() as conn:
        have = node_count(conn, book.id)
    if have >= rows:
        log.info("book %r already has %d nodes", MINIMAX_BOOK, have)
        return openings
    with store.write() as conn:
        for table in (MinimaxEdge, Expansion, MinimaxNode):
            conn.execute(delete(table.__table__).where(table.__table__.c.book_id == book.id))
    config = SearchConfig.from_spec(book.search or None)
    rng = random.Random(7)
    taken = set(graph)
    raw = store.engine.raw_connection()
    try:
        with raw.cursor() as cursor:
            edges = copy_nodes(cursor, book.id, searched_nodes(graph, rng, config.playouts), rng, config.to_spec())
            filler = max(0, rows - len(graph))
            for start in range(0, filler, chunk):  # whole trees at a time: their figures are their own
                nodes = searched_nodes(filler_graph(rng, min(chunk, filler - start), taken), rng, config.playouts)
                edges += copy_nodes(cursor, book.id, nodes, rng, config.to_spec())
        raw.commit()
    finally:
        raw.close()
    from obook.store.minimax import count_done, set_done_counter

    with store.write() as conn:  # what the applies that grew the book would have counted
        set_done_counter(conn, book.id, count_done(conn, book.id))
    # VACUUM as well as ANALYZE: the service's freshness check counts the done expansions, an
    # index-only scan once the visibility map is set, as autovacuum sets it on a book built for days
    with store.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
        for table in ("minimax_nodes", "minimax_edges", "expansions"):
            conn.exec_driver_sql(f"VACUUM ANALYZE {table}")
    log.info("book %r: %d nodes (%d of the openings, %d filler), %d edges and expansions in %.0f s", MINIMAX_BOOK,
             len(graph) + filler, len(graph), filler, edges, time.time() - started)
    return openings


def lookup_paths(openings: list[list[str]], count: int, seed: int = 3, book: str = BOOK) -> list[str]:
    rng = random.Random(seed)
    paths = []
    for _ in range(count):
        moves = rng.choice(openings)[: rng.randint(0, DEPTH)]
        paths.append(f"/v1/books/{book}/lookup?moves={','.join(moves)}")
    return paths


def check_answers(port: int, paths: list[str], algorithm: str, sample: int = 300, seed: int = 8) -> int:
    """Ask ``sample`` of the distinct lookups once and stop unless each is a real answer: status 200,
    a position before the openings' last move in the book, and in a minimax book its node found at
    every depth and a book move before the last, the best-valued candidate (``minimax.book_move``;
    a statistical book's usage rule may rightly leave a move of no wins unplayed). Returns how many
    were checked."""
    distinct = sorted(set(paths))
    for path in random.Random(seed).sample(distinct, min(sample, len(distinct))):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as answer:
                status, found = answer.status, json.load(answer)
        except urllib.error.HTTPError as exc:
            raise SystemExit(f"{path}: status {exc.code}: {exc.read()[:400]!r}") from None
        moves = path.split("moves=", 1)[1]
        depth = len(moves.split(",")) if moves else 0
        wrong = [] if status == 200 else [f"status {status}"]
        if depth < DEPTH and not found["in_book"]:
            wrong.append("not in the book")
        if book_kind(algorithm).has_play_budget:  # a minimax book's answer: values, a book move
            if found.get("value") is None:
                wrong.append("the position is no node of the book")
            if depth < DEPTH and found["usage_move"] is None:
                wrong.append("no book move")
            elif depth < DEPTH and found["usage_move"] != found["candidates"][0]["move"]:
                wrong.append("the book move is not the best-valued candidate")
        if wrong:
            raise SystemExit(f"{path}: {', '.join(wrong)}: {json.dumps(found)[:400]}")
    return min(sample, len(distinct))


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


def book_size(url: str, algorithm: str) -> dict:
    """What the measured book holds: statistics rows, or nodes, edges and expansions done."""
    from sqlalchemy import func, select

    from obook.book.library import open_book_store
    from obook.store.books import get_book
    from obook.store.minimax import EDGES, count_done, node_count
    from obook.store.stats import stats_count

    store = open_book_store(url)
    with store.read() as conn:
        if not book_kind(algorithm).has_play_budget:
            return {"stats_rows": stats_count(conn, get_book(conn, BOOK).id)}
        book_id = get_book(conn, MINIMAX_BOOK).id
        edges = conn.execute(select(func.count()).select_from(EDGES).where(EDGES.c.book_id == book_id)).scalar_one()
        return {"nodes": node_count(conn, book_id), "edges": edges, "expansions_done": count_done(conn, book_id)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=DEFAULT_DB, help="PostgreSQL URL (the database is created when missing)")
    parser.add_argument("--algorithm", choices=(MVBM, MINIMAX), default=MVBM,
                        help="the book measured: statistical (mvbm, book 'bench') or search-valued (minimax, "
                             "book 'bench_minimax')")
    parser.add_argument("--rows", type=int, default=None,
                        help="statistics rows (mvbm, default 1,000,000) or nodes (minimax, default 100,000) the "
                             "book must have")
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
    if book_kind(args.algorithm).has_play_budget:
        openings = build_minimax_book(args.db, args.rows or 100_000, args.games)
        paths = lookup_paths(openings, args.paths, book=MINIMAX_BOOK)
    else:
        openings = build_book(args.db, args.rows or 1_000_000, args.games)
        paths = lookup_paths(openings, args.paths)
    size = book_size(args.db, args.algorithm)
    port = free_port()
    server = start_server(args.db, port, cache=not args.no_cache, root=args.server_root.resolve())
    try:
        def load(seconds: float, connections: int) -> dict:
            if args.tool == "wrk":
                return run_wrk(port, paths, seconds, connections, args.threads)
            return asyncio.run(_python_load(port, paths, seconds, connections))

        checked = check_answers(port, paths, args.algorithm)
        log.info("%d distinct lookups checked: real answers", checked)
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
                      "algorithm": args.algorithm, "connections": connections,
                      "cache": not args.no_cache, "warm": not args.cold, **size,
                      "distinct_lookups": len(set(paths)), "checked_lookups": checked,
                      **{k: round(v, 3) if isinstance(v, float) else v for k, v in figures.items()}}
            print(json.dumps(result), flush=True)
    finally:
        server.terminate()
        server.wait(30)

if __name__ == "__main__":
    main()
