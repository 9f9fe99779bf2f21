"""What the routes call: one ``BookService`` per app holds the store, the lookup cache and the
bounded pool of threads that run the blocking work (SQL, replays of positions); on PostgreSQL a
statistical book's lookup runs on the event loop once the book is known (``_lookup_on_loop``).

Why a cache: a lookup replays the moves (one compiled call, ``obook.book.lookup.replay_moves``),
computes legal moves and the canonical key and queries the statistics, about 0.4 ms of CPU; bots
and the dashboard ask the same positions over and over. The answer, already serialised, is kept under (book, normalised moves, min_games) until
the book gets new games (see ``BookService``), so a repeated question costs a dictionary look-up on
the event loop (``api/fastpath.py``) and no thread at all. ``POST /v1/admin/cache/clear`` drops
everything at once (after ``obook verify --repair``, which changes statistics but not games).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, TypeVar

import anyio
import anyio.to_thread

from api import views
from api.caching import book_tag
from api.schemas import GameList, GameOut, LookupOut, MoveOut, ProgressOut
from obook.book.keys import BookGameError, record_images, replay, require_keys
from obook.book.lookup import ReplayedPosition, book_lookup, minimax_lookup, replay_moves
from obook.book.kinds import is_search_valued
from obook.errors import ObookError
from obook.go.vertex import split_moves
from obook.store import reporting as r
from obook.store.books import BookInfo, get_book
from obook.store.db import Store, StoreError
from obook.store.games import RECORD_INDEX_CHARS, GameRow, games_through, get_game, list_games
from obook.store.models import FINISHED
from obook.store.reporting import AsyncStatsReader, StatsReader
from obook.store.stats import Rows

log = logging.getLogger(__name__)

T = TypeVar("T")

MAX_GAME_ID = 2**31 - 1  # the games.id column is a 32-bit integer
MAX_MOVES = 722  # two full boards of 19x19: longer is no opening


class GameNotFound(ObookError):
    """No game with that id."""


class TtlCache:
    """A small LRU whose entries expire ``seconds`` after they were stored (0: stores nothing),
    bounded by entries and, with ``max_bytes``, by the bytes ``weigh(key, value)`` estimates: a
    722-move question costs a hundred times a short one, so a count of entries alone lets
    anonymous requests fill gigabytes. Safe to share between the event loop and the worker threads."""

    def __init__(self, size: int, seconds: float, max_bytes: float = math.inf,
                 weigh: Callable[[Hashable, Any], int] | None = None):
        self.size = max(size, 0)
        self.seconds = seconds
        self.max_bytes = max_bytes
        self.weigh = weigh or (lambda _key, _value: 0)
        self.bytes = 0  # the estimated size of what is kept
        self._items: OrderedDict[Hashable, tuple[float, Any, int]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            if item[0] < time.monotonic():
                self._drop(key)
                return None
            self._items.move_to_end(key)
            return item[1]

    def put(self, key: Hashable, value: Any) -> None:
        if self.seconds <= 0 or self.size == 0:
            return
        cost = self.weigh(key, value)
        if cost > self.max_bytes:
            return  # larger than the whole cache: not kept
        with self._lock:
            if key in self._items:
                self._drop(key)
            self._items[key] = (time.monotonic() + self.seconds, value, cost)
            self.bytes += cost
            while len(self._items) > self.size or self.bytes > self.max_bytes:
                self._drop(next(iter(self._items)))

    def _drop(self, key: Hashable) -> None:
        self.bytes -= self._items.pop(key)[2]

    def clear(self) -> int:
        with self._lock:
            n = len(self._items)
            self._items.clear()
            self.bytes = 0
            return n

    def __len__(self) -> int:
        return len(self._items)


# Estimated bytes of the cached objects (CPython 3.11, 64-bit; checked against tracemalloc by
# tests/api/test_api_cost.py): a move string in a key ~56 + its tuple slot 8; a replayed move (a
# tuple of two ints) ~64 + 8; a stone (a tuple of two strings and an int) ~170; a statistics row ~120.
def answer_cost(key, value) -> int:
    return 300 + 64 * len(key[1]) + len(value[1])


def position_cost(key, value) -> int:
    return 600 + 64 * len(key[2]) + 72 * len(value.moves) + 170 * len(value.stones)


def rows_cost(_key, value) -> int:
    return 200 + 120 * len(value[1])


def split_query_moves(text: str) -> tuple[str, ...]:
    """The moves as the caller spelled them (so that an error names the move as written)."""
    words = split_moves(text)
    if len(words) > MAX_MOVES:
        raise ObookError(f"{len(words)} moves: at most {MAX_MOVES} are accepted")
    return tuple(words)


def normalise_moves(words: tuple[str, ...]) -> tuple[str, ...]:
    """"E5,G5", "e5 g5" and "E5 g5" are one question: the cache key."""
    return tuple("pass" if w.lower() == "pass" else w.upper() for w in words)


@dataclass
class BookVersion:
    """When the answers about a book were last known fresh: ``generation`` changes whenever the
    book's number of finished games does (every finished game adds statistics)."""

    book_id: int
    finished: int = -1
    generation: int = 0
    tag: str | None = None  # the ETag of answers about the book (``api.caching.book_tag``)
    checked: float = -math.inf
    refreshing: bool = False  # a check is on its way (started by a cache hit)
    lock: threading.Lock = field(default_factory=threading.Lock)


class BookService:
    """The lookup caches, from the cheapest hit to the cheapest miss: ``answers`` (serialised
    answers), ``stats`` (a position's statistics rows by canonical key: a transposed or symmetric
    question shares them) and ``positions`` (replays, kept without expiry).

    Answers and statistics are tagged with the book's generation, which changes when the number of
    finished games of the book changes. That is checked (one indexed count) about every
    ``fresh_seconds`` in the background while cached answers keep being served; a request checks
    itself when the last check is two ``fresh_seconds`` old and none is on its way, or ten old in
    any case. So an answer is about ``fresh_seconds`` behind the book, and a book nobody is
    building is answered from memory for as long as ``cache_seconds``. A repaired book (``obook verify
    --repair``) keeps its count: ``POST /v1/admin/cache/clear`` or ``cache_seconds`` cover that.
    """

    def __init__(self, store: Store, threads: int = 8, cache_seconds: float = 600.0, cache_size: int = 20000,
                 fresh_seconds: float = 1.0, cache_mb: float = 192.0, export_cache_mb: float = 64.0):
        self.store = store
        self.threads = max(threads, 1)
        self.fresh_seconds = fresh_seconds
        share = cache_mb * 2**20 / 3  # the three lookup caches share OBOOK_API_CACHE_MB
        self.answers = TtlCache(cache_size, cache_seconds, share, answer_cost)
        self.stats = TtlCache(cache_size, cache_seconds, share, rows_cost)
        self.positions = TtlCache(cache_size, math.inf, share, position_cost)
        # a book's settings row: without the answer cache (OBOOK_API_CACHE_SECONDS=0) still kept for
        # fresh_seconds, or every lookup would read it again (a transaction, a third of an uncached lookup)
        self.books = TtlCache(256, min(cache_seconds, 5.0) if cache_seconds > 0 else fresh_seconds)
        self.versions: dict[str, BookVersion] = {}
        self._generations = itertools.count(1)  # unique across books and their re-creations
        self.reader = StatsReader(store, pool_size=self.threads)
        self.async_reader = None if store.is_sqlite else AsyncStatsReader(store, pool_size=max(2, self.threads // 2))
        self._limiter: anyio.CapacityLimiter | None = None
        self.heavy_threads = max(1, self.threads // 4)
        self._heavy: anyio.CapacityLimiter | None = None
        self._exporting: anyio.CapacityLimiter | None = None
        # exports (SGF bytes) under the book's generation, bounded by their bytes (OBOOK_API_EXPORT_CACHE_MB)
        self.exports = TtlCache(256, cache_seconds, export_cache_mb * 2**20, lambda _key, value: 200 + len(value[1]))
        self._export_locks = [threading.Lock() for _ in range(16)]  # by the export's hash: a bounded set
        self._progress = TtlCache(64, max(fresh_seconds, 0.5))  # one computation per second for every client
        self._progress_lock = threading.Lock()
        self._schema_checked = False

    async def run(self, function: Callable[..., T], *args) -> T:
        """Run blocking work in the service's threads (at most ``threads`` at once)."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.threads)
        return await anyio.to_thread.run_sync(function, *args, limiter=self._limiter)

    async def run_heavy(self, function: Callable[..., T], *args) -> T:
        """Run expensive work (exports, progress, game pages: many queries and replays each) in
        threads of its own, at most a quarter of ``threads`` (at least one) at once, so that
        however many of them clients ask for, the lookups keep their threads."""
        if self._heavy is None:
            self._heavy = anyio.CapacityLimiter(self.heavy_threads)
        return await anyio.to_thread.run_sync(function, *args, limiter=self._heavy)

    async def run_export(self, function: Callable[..., T], *args) -> T:
        """Run an export: one at a time, in a thread of its own, so that a queue of exports (each
        can take seconds of replays) delays neither the lookups nor progress and game pages."""
        if self._exporting is None:
            self._exporting = anyio.CapacityLimiter(1)
        return await anyio.to_thread.run_sync(function, *args, limiter=self._exporting)

    def warm_up(self) -> None:
        """Load the rules' compiled code (a replay, keys, legal moves) before the first request."""
        replay_moves(9, False, ("E5", "C3"))
        replay_moves(9, True, ("E5", "C3"))

    async def close(self) -> None:
        """Close the connections the service opened itself (the app's shutdown, ``api.app``): the
        event loop's (``AsyncStatsReader``, which only the loop that made them can close) and the
        statistics readers' pool."""
        if self.async_reader is not None:
            await self.async_reader.close()
        self.reader.dispose()

    def clear(self) -> int:
        cleared = self.answers.clear() + self.stats.clear() + self.books.clear() + self.exports.clear()
        for version in list(self.versions.values()):
            version.generation = next(self._generations)
        return cleared

    # ---- the store -----------------------------------------------------------------------------

    def check(self) -> None:
        """Refuse a database at another schema (once it has passed, it is not asked again)."""
        if not self._schema_checked:
            self.store.check_schema()
            self._schema_checked = True

    def health(self) -> tuple[bool, str | None, str | None]:
        """(healthy, schema revision, problem)."""
        try:
            revision = self.store.revision()
            self.store.check_schema()
            with self.store.read() as conn:
                r.count_books(conn)
        except StoreError as exc:
            return False, None, str(exc)
        except Exception as exc:  # noqa: BLE001 - any database failure makes the service unhealthy
            log.warning("health check failed: %s", exc)
            return False, None, f"{type(exc).__name__}: {exc}"
        return True, revision, None

    def book(self, name: str) -> BookInfo:
        book = self.books.get(name)
        if book is None:
            self.check()
            with self.store.read() as conn:
                book = get_book(conn, name)
            self.books.put(name, book)
        return book

    def keyed_book(self, name: str, use: str) -> BookInfo:
        """The book for a use that computes its position keys (``obook.book.keys.require_keys``:
        another engine version's book is refused, HTTP 409)."""
        book = self.book(name)
        require_keys(book, use)
        return book

    def generation(self, book: BookInfo) -> int:
        """The book's current generation, asking the database when the last check is stale."""
        version = self.versions.get(book.name)
        if version is None or version.book_id != book.id:
            version = self.versions[book.name] = BookVersion(book.id)
        if time.monotonic() - version.checked >= self.fresh_seconds:
            self._check(version)
        return version.generation

    def _check(self, version: BookVersion) -> None:
        with version.lock:
            if time.monotonic() - version.checked < self.fresh_seconds:
                return  # another thread just did
            finished = self.reader.work_done(version.book_id)
            if finished != version.finished:
                version.finished = finished
                version.tag = book_tag(version.book_id, finished)
                version.generation = next(self._generations)
            version.checked = time.monotonic()

    def _check_soon(self, version: BookVersion) -> None:
        """Start a check in the background (from the event loop), unless one is on its way."""
        if version.refreshing:
            return
        version.refreshing = True

        async def check() -> None:
            try:  # not in the lookups' threads: behind a queue of them, the check would come late
                await anyio.to_thread.run_sync(self._check, version)
            except Exception as exc:  # noqa: BLE001 - the next request checks in its own time
                log.warning("checking book %s for new games: %s", version.book_id, exc)
            finally:
                version.refreshing = False

        asyncio.get_running_loop().create_task(check())

    # ---- lookups -------------------------------------------------------------------------------

    def cached_answer(self, book: str, words: tuple[str, ...], min_games: int) -> tuple[bytes, str] | None:
        """The serialised answer and its ETag, if one is cached and the book is known not to have
        changed since (called on the event loop)."""
        version = self.versions.get(book)
        if version is None:
            return None
        age = time.monotonic() - version.checked
        if age >= self.fresh_seconds:
            if age >= 10 * self.fresh_seconds or (age >= 2 * self.fresh_seconds and not version.refreshing):
                return None  # the request checks the book itself
            self._check_soon(version)
        hit = self.answers.get((book, words, min_games))
        if hit is None or hit[0] != version.generation:
            return None
        return hit[1], hit[2]

    async def lookup_body(self, book: str, moves: str, min_games: int) -> tuple[bytes, str]:
        """The lookup answer as JSON bytes and its ETag, from the cache when it can."""
        return await self.lookup_answer(book, split_query_moves(moves), min_games)

    async def lookup_answer(self, book: str, spelled: tuple[str, ...], min_games: int) -> tuple[bytes, str]:
        """``lookup_body`` of moves already split (``split_query_moves``)."""
        words = normalise_moves(spelled)
        hit = self.cached_answer(book, words, min_games)
        if hit is not None:
            return hit
        answered = await self._lookup_on_loop(book, spelled, min_games)
        if answered is None:
            answered = await self.run(self._lookup_body, book, spelled, min_games)
        generation, tag, body = answered
        self.answers.put((book, words, min_games), (generation, body, tag))
        return body, tag

    async def _lookup_on_loop(self, book: str, spelled: tuple[str, ...], min_games: int) -> tuple[int, str, bytes] | None:
        """A statistical book's lookup on the event loop, when everything but its statistics is in
        memory (the book's row, a generation checked less than ``fresh_seconds`` ago): a compiled
        replay of some microseconds (``obook.book.lookup.replay_moves``) and one ``SELECT`` on the
        loop's own connections (``AsyncStatsReader``). Handing that to a thread and back would cost
        more than the work (issue 20, item 9). ``None``: the threads answer (``_lookup_body``: on
        SQLite, for a minimax book, or to read the book or check its generation)."""
        if self.async_reader is None:
            return None
        info = self.books.get(book)
        version = self.versions.get(book)
        if (info is None or is_search_valued(info) or version is None or version.book_id != info.id
                or time.monotonic() - version.checked >= self.fresh_seconds):
            return None
        require_keys(info, "look positions up in it")
        generation, tag = version.generation, version.tag
        replayed = self.replayed(info, spelled)
        key, _ = replayed.canonical()
        hit = self.stats.get((info.id, key))
        if hit is not None and hit[0] == generation:
            rows = hit[1]
        else:
            rows = tuple(await self.async_reader.position_stats(info.id, key))
            self.stats.put((info.id, key), (generation, rows))
        found = book_lookup(info, replayed, lambda _key: rows, min_games)
        # dicts: validated with the answer in one call, half the time of a Stone each (16 stones: 30 against 58 us)
        board = [{"vertex": v, "color": c, "move": m} for v, c, m in replayed.stones]
        return generation, tag, views.lookup_out(found, board).model_dump_json(exclude_unset=True).encode()

    def _lookup_body(self, book: str, spelled: tuple[str, ...], min_games: int) -> tuple[int, str, bytes]:
        info = self.keyed_book(book, "look positions up in it")
        generation = self.generation(info)
        tag = self.versions[info.name].tag  # read with the generation, before the answer: never newer than it
        # exclude_unset: a statistical book's answer has no minimax fields (the CLI's form, exactly)
        answer = self.lookup(info, spelled, min_games, generation)
        return generation, tag, answer.model_dump_json(exclude_unset=True).encode()

    def book_tag(self, book: str) -> str:
        """The ETag of answers about ``book`` now (``api.caching``); 404 for an unknown book."""
        info = self.book(book)
        self.generation(info)
        return self.versions[info.name].tag

    def lookup(self, book: BookInfo, spelled: tuple[str, ...], min_games: int = 1,
               generation: int | None = None) -> LookupOut:
        replayed = self.replayed(book, spelled)
        board = [{"vertex": v, "color": c, "move": m} for v, c, m in replayed.stones]
        if is_search_valued(book):
            found = minimax_lookup(book, replayed, lambda key: self.minimax_node(book, key, generation))
            return views.minimax_lookup_out(found, board)
        found = book_lookup(book, replayed, lambda key: self.position_rows(book, key, generation), min_games)
        return views.lookup_out(found, board)

    def minimax_node(self, book: BookInfo, key: int, generation: int | None):
        """A minimax book's node and its children's bounds, cached under the book's generation."""
        hit = self.stats.get((book.id, "minimax", key)) if generation is not None else None
        if hit is not None and hit[0] == generation:
            return hit[1]
        node = self.reader.minimax_node(book.id, key)
        if generation is not None:
            self.stats.put((book.id, "minimax", key), (generation, node))
        return node

    def position_rows(self, book: BookInfo, key: int, generation: int | None) -> Rows:
        """A position's statistics rows, cached under the book's generation when one is given."""
        hit = self.stats.get((book.id, key)) if generation is not None else None
        if hit is not None and hit[0] == generation:
            return hit[1]
        rows = tuple(self.reader.position_stats(book.id, key))
        if generation is not None:
            self.stats.put((book.id, key), (generation, rows))
        return rows

    def replayed(self, book: BookInfo, spelled: tuple[str, ...]) -> ReplayedPosition:
        cache_key = (book.size, book.superko, normalise_moves(spelled))
        replayed = self.positions.get(cache_key)
        if replayed is None:
            replayed = replay_moves(book.size, book.superko, spelled)
            self.positions.put(cache_key, replayed)
        return replayed

    async def book_move(self, book: str, moves: str, min_games: int) -> tuple[MoveOut, str]:
        """The bot's answer (the usage rule's move, or ``move: null`` out of book) and its ETag."""
        body, tag = await self.lookup_body(book, moves, min_games)
        found = LookupOut.model_validate_json(body)
        chosen = next((c for c in found.candidates if c.usage), None)
        return MoveOut(book=found.book, moves=found.moves, to_move=found.to_move, in_book=found.in_book,
                       move=found.usage_move, usage_move=found.usage_move, coevolution_move=found.coevolution_move,
                       games=chosen.games if chosen else 0, wins=chosen.wins if chosen else 0,
                       winrate=chosen.winrate if chosen else None,
                       games_url=chosen.games_url if chosen else None), tag

    # ---- books, games, progress ----------------------------------------------------------------

    def list_books(self, limit: int, offset: int):
        self.check()
        with self.store.read() as conn:
            return r.count_books(conn), [views.book_out(c) for c in r.books_with_counts(conn, limit, offset)]

    def game(self, game_id: int) -> tuple[GameRow, BookInfo]:
        self.check()
        with self.store.read() as conn:
            game = get_game(conn, game_id)
            if game is None:
                raise GameNotFound(f"no game with id {game_id}")
            name = r.book_names(conn, [game.book_id])[game.book_id]
            book = get_book(conn, name)
        return game, book

    def game_out(self, game_id: int) -> GameOut:
        game, book = self.game(game_id)
        return views.game_out(game, book.name)

    def game_sgf(self, game_id: int) -> tuple[str, str]:
        """The game as SGF, and its status."""
        from obook.go.sgf import game_to_sgf

        game, book = self.game(game_id)
        try:
            position = replay(book.size, book.komi, book.superko, game.moves)
        except BookGameError as exc:
            raise ObookError(f"game {game_id} does not replay: {exc}") from None
        date = (game.finished_at or game.created_at).date().isoformat()
        return game_to_sgf(position, black="obook", white="obook", result=game.result, date=date,
                           event=f"obook book {book.name}",
                           game_comment=f"game {game.id} of book {book.name!r} ({game.status}, {game.source}); "
                                        f"move origins: {game.origins or '-'} (b book, m mutation, s seed)"), game.status

    def games(self, book: str, status: str | None, limit: int, offset: int, after: int | None = None,
              through: str | None = None) -> GameList:
        """A page of games: by last change (``offset``), by id after the cursor ``after`` (0: the
        first page), or with ``through`` the finished games through a line (``games_through``)."""
        info = self.book(book)
        if through is not None:
            return self._games_through(info, through, status, limit, offset, after or 0)
        with self.store.read() as conn:
            total = r.count_games(conn, info.id, status)
            rows = list_games(conn, info.id, status=status, limit=limit, offset=offset,
                              before_id=after)
        next_after = rows[-1].id if after is not None and len(rows) == limit else None
        return GameList(total=total, limit=limit, offset=offset, items=[views.game_out(g, info.name) for g in rows],
                        after=after, next_after=next_after)

    def _games_through(self, info: BookInfo, through: str, status: str | None, limit: int, offset: int,
                       after: int) -> GameList:
        """The finished games whose record starts with the line ``through`` or a symmetric image of
        it, by record then id, in keyset pages (``after``: the last game of the previous page). Each
        of the (at most 8) images is one range of ``ix_games_book_record`` read from the cursor, so a
        page costs at most 8 x ``limit`` index rows however big the book; no total is counted."""
        if status not in (None, FINISHED):
            raise ObookError(f"status {status}: through lists finished games only")
        if offset:
            raise ObookError("offset: through pages by the after cursor only (next_after of each page)")
        words = split_query_moves(through)
        if not words:
            raise ObookError("through: give at least one move")
        replayed = self.replayed(info, words)
        line = [replayed.vertex(p) for _, p in replayed.moves]
        if len(" ".join(line)) >= RECORD_INDEX_CHARS:
            raise ObookError(f"through: {len(line)} moves are longer than the games index covers "
                             f"({RECORD_INDEX_CHARS - 1} characters of moves)")
        with self.store.read() as conn:
            rows = games_through(conn, info.id, record_images(info.size, line), limit, after)
        if rows is None:
            raise ObookError(f"after: game {after} is not a finished game of book {info.name!r}")
        next_after = rows[-1].id if len(rows) == limit else None
        return GameList(total=None, limit=limit, offset=0, items=[views.game_out(g, info.name) for g in rows],
                        after=after, next_after=next_after)

    def export_sgf(self, book: str, min_games: int, depth: int | None, max_nodes: int) -> bytes:
        """The book as SGF, made once per generation of the book (and parameters) whoever asks: an
        export replays up to 20,000 nodes and queries each. Concurrent askers of the same export
        wait for the one computation; exports larger than the cache's budget are made each time."""
        from obook.book.sgfio import export_book

        info = self.keyed_book(book, "export it")
        key = (book, min_games, depth, max_nodes)
        with self._export_locks[hash(key) % len(self._export_locks)]:
            generation = self.generation(info)
            hit = self.exports.get(key)
            if hit is not None and hit[0] == generation:
                return hit[1]
            data, _ = export_book(self.store, info, min_games=min_games, depth=depth, max_nodes=max_nodes)
            self.exports.put(key, (generation, data))
            return data

    def progress(self, limit: int, offset: int, games_limit: int, workers_limit: int) -> ProgressOut:
        """The progress page, computed at most once per ``fresh_seconds`` (half a second at least)
        for each set of parameters whoever asks: the dashboard polls it every 1.5 s per viewer."""
        key = (limit, offset, games_limit, workers_limit)
        with self._progress_lock:  # concurrent askers wait for the one computation
            hit = self._progress.get(key)
            if hit is None:
                hit = self._compute_progress(limit, offset, games_limit, workers_limit)
                self._progress.put(key, hit)
            return hit

    def _compute_progress(self, limit: int, offset: int, games_limit: int, workers_limit: int) -> ProgressOut:
        self.check()
        return views.progress(self.store, limit, offset, games_limit, workers_limit)
