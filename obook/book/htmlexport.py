"""A book as static HTML pages one browses offline (``obook export --html DIR``), as KataGo's book ships.

The export walks the book breadth first from the empty board and writes each position it reaches
once, under its canonical key (transpositions and the 8 symmetries merged): the position's lookup
document as ``obook lookup --json`` gives it (``BookKind.document``; nothing is recomputed here), in
the orientation of the first line that reached it, and for each of its book moves the position the
move leads to and the symmetry between that position's stored orientation and the one the move
reaches. The page (``browser/``: plain JS and SVG) composes those symmetries along the line it
shows, so it draws every stored move in the orientation of the line the reader clicked.

What a position's figures are and which of them the page shows is the book's kind's
(``BookKind.browser_view``: ``STATISTICAL_VIEW``, ``MINIMAX_VIEW``); this module only walks, writes
and copies the page. The data are classic scripts (``data/book.js``, ``data/positions-N.js``) that
``index.html`` loads with ``<script>`` tags: a browser refuses ``fetch()`` and module scripts on
``file://``, not scripts.
"""

from __future__ import annotations

import html
import json
import time
from collections import deque
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from obook.book.keys import engine_line
from obook.book.lookup import replay_moves
from obook.errors import ObookError
from obook.go.symmetry import INVERSE, N_SYMMETRIES, symmetry_maps
from obook.store.books import BookInfo
from obook.store.db import Store

CHUNK_POSITIONS = 1000  # positions a data file holds: the first paints after the first file
PAGE_FILES = ("browser.js", "browser.css")
DOCUMENT_CONSTANTS = ("book", "size", "algorithm")  # the same in every position: written once, in book.js

# A column or a figure: (field of the lookup document, label, format). Formats: "pct" (a fraction
# shown in percent), "int", "score" (signed, one decimal), "vertex" (a move: the page turns it into the
# line's orientation), "text".
STATISTICAL_VIEW = {
    "columns": [["move", "move", "vertex"], ["games", "games", "int"], ["wins", "wins", "int"],
                ["draws", "draws", "int"], ["winrate", "win rate", "pct"], ["share", "share of wins", "pct"],
                ["score_mean", "mean score", "score"]],
    "marks": [["usage", "usage rule"], ["coevolution", "self-play's move"]],
    "figures": [["games", "games through the position", "int"], ["usage_move", "usage rule's move", "vertex"],
                ["coevolution_move", "self-play's move", "vertex"]],
    "label": ["winrate", "games"],  # what a book move's mark on the board shows: its rate and its count
    "count": "games",  # the figure --min-games applies to: a move with fewer games is listed, not followed
}
MINIMAX_VIEW = {
    "columns": [["move", "move", "vertex"], ["value", "value", "pct"], ["lcb", "LCB", "pct"], ["ucb", "UCB", "pct"],
                ["visits", "visits", "int"], ["prior", "prior", "pct"], ["backed_up_result", "score", "text"],
                ["score_mean", "mean score", "score"]],
    "marks": [["usage", "the book plays it"]],
    "figures": [["value", "minimax value", "pct"], ["lcb", "LCB", "pct"], ["ucb", "UCB", "pct"],
                ["usage_move", "the book plays", "vertex"], ["own_move", "best move outside the book", "vertex"],
                ["own_value", "its value", "pct"], ["own_lcb", "its LCB", "pct"], ["own_ucb", "its UCB", "pct"],
                ["own_visits", "its visits", "int"], ["playouts", "playouts of the position", "int"],
                ["backed_up_result", "score (backed up)", "text"], ["score_mean", "mean score of its search", "score"]],
    "label": ["value", "visits"],
    "count": None,
}


@dataclass
class HtmlExport:
    directory: Path
    positions: int  # positions written, each once
    book_moves: int  # book moves written (edges between them, transpositions included)
    files: int  # data files
    truncated: bool  # ``max_positions`` stopped the walk
    seconds: float


@lru_cache(maxsize=None)
def _edge_symmetries(size: int) -> dict[tuple[int, int], int]:
    """(a, b) -> the symmetry k with maps[k] = maps[INVERSE[a]] . maps[b]: a position stored in the
    orientation whose symmetry to the canonical one is ``b``, seen in the orientation whose symmetry
    is ``a``."""
    maps = symmetry_maps(size)
    on_board = maps[0] != 0
    table = {}
    for a in range(N_SYMMETRIES):
        for b in range(N_SYMMETRIES):
            composed = maps[INVERSE[a]][maps[b]]
            table[a, b] = next(k for k in range(N_SYMMETRIES) if (maps[k][on_board] == composed[on_board]).all())
    return table


def check_directory(directory: Path, force: bool) -> None:
    """Refuse a ``directory`` that is a file, or a directory with something in it unless ``force``."""
    if directory.exists() and not directory.is_dir():
        raise ObookError(f"{directory} exists and is not a directory")
    if directory.is_dir() and any(directory.iterdir()) and not force:
        raise ObookError(f"{directory} exists and is not empty: choose another directory, or --force to write "
                         "the book's pages over it")


def _page_text(name: str) -> str:
    return resources.files("obook.book").joinpath("browser", name).read_text(encoding="utf-8")


def _script(data_name: str, payload) -> str:
    return f"OBOOK.{data_name}({json.dumps(payload, separators=(',', ':'))});\n"


def export_html(store: Store, book: BookInfo, kind, directory: Path | str, min_games: int = 1,
                depth: int | None = None, max_positions: int = 100_000, force: bool = False) -> HtmlExport:
    """Write ``book`` as a browsable directory (``index.html``, ``data/``): every position its book
    moves reach from the empty board, once, up to ``depth`` moves (None or 0: the book's own depth
    cap, if any) and ``max_positions`` positions. ``kind`` is the book's ``BookKind``; ``min_games``
    its usage rule's (and, for a statistical book, the games a move needs to be followed)."""
    started = time.perf_counter()
    directory = Path(directory)
    check_directory(directory, force)
    if depth is None or depth <= 0:
        depth = book.depth if book.depth > 0 else None
    view = kind.browser_view()
    count_field = view["count"]
    edges = _edge_symmetries(book.size)
    records: list[dict] = []
    ids: dict[int, int] = {}  # canonical key -> position id
    root = replay_moves(book.size, book.superko, [])
    ids[root.key] = 0
    queue = deque([(0, root)])
    truncated = False
    book_moves = 0
    with store.read() as conn:
        read = kind.export_reader(conn, book.id)
        while queue:
            pid, position = queue.popleft()
            document = kind.document(kind.lookup(book, position, read, min_games))
            for name in DOCUMENT_CONSTANTS:
                document.pop(name, None)
            line = document["moves"]
            links = []
            for candidate in document["candidates"]:
                follow = ((count_field is None or candidate[count_field] >= min_games)
                          and (depth is None or len(line) < depth))
                if not follow:
                    links.append(None)
                    continue
                child = replay_moves(book.size, book.superko, [*line, candidate["move"]])
                cid = ids.get(child.key)
                if cid is None:
                    if len(ids) >= max_positions:
                        truncated = True
                        links.append(None)
                        continue
                    cid = ids[child.key] = len(ids)
                    queue.append((cid, child))
                links.append([cid, child.symmetry])
                book_moves += 1
            records.append({"id": pid, "key": f"{position.key:016x}", "symmetry": position.symmetry,
                            "doc": document, "next": links})
    # ids are given in the order positions are written: a link's target may be written after it
    for record in records:
        record["next"] = [None if link is None else [link[0], edges[link[1], records[link[0]]["symmetry"]]]
                          for link in record["next"]]
    try:
        data = directory / "data"
        data.mkdir(parents=True, exist_ok=True)
        for stale in data.glob("positions-*.js"):
            stale.unlink()
        chunks = [records[i:i + CHUNK_POSITIONS] for i in range(0, len(records), CHUNK_POSITIONS)]
        header = {"book": book.name, "algorithm": book.algorithm, "kind": kind.name, "size": book.size,
                  "komi": book.komi, "rule": kind.rule(book), "engine": engine_line(book), "positions": len(records),
                  "book_moves": book_moves, "depth": depth, "min_games": min_games, "truncated": truncated,
                  "view": view}
        (data / "book.js").write_text(
            "var OBOOK = {positions: [], book: null, load: function (b) { this.book = b; },\n"
            "  add: function (rows) { for (const r of rows) this.positions[r.id] = r; }};\n" + _script("load", header),
            encoding="utf-8")
        for number, chunk in enumerate(chunks):
            (data / f"positions-{number}.js").write_text(_script("add", chunk), encoding="utf-8")
        for name in PAGE_FILES:
            (directory / name).write_text(_page_text(name), encoding="utf-8")
        scripts = "\n".join(f'<script src="data/positions-{n}.js"></script>' for n in range(len(chunks)))
        page = (_page_text("index.html").replace("{{title}}", html.escape(f"obook book {book.name}"))
                .replace("{{data}}", scripts))
        (directory / "index.html").write_text(page, encoding="utf-8")
    except OSError as exc:
        raise ObookError(f"cannot write {directory}: {exc.strerror or exc}") from None
    return HtmlExport(directory, len(records), book_moves, len(chunks) + 1, truncated,
                      time.perf_counter() - started)
