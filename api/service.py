"""What the routes call: one ``BookService`` per app holds the store, the lookup caches and the
limits on the threads that run the blocking work (SQL, replays of positions, ``api.limiters``).

Every endpoint that answers "which move here?" (``/lookup``, ``/move``, the fast path of
``api/fastpath.py``) goes through one call, ``BookService.answer``, to one answer (``LookupAnswer``,
made from one lookup document). On PostgreSQL a statistical book's lookup runs on the
event loop once the book is known (``_answer_on_loop``), otherwise in the threads.

Why a cache: a lookup replays the moves (one compiled call, ``obook.book.lookup.replay_moves``),
computes legal moves and the canonical key and queries the statistics, about 0.4 ms of CPU; bots
and the dashboard ask the same positions over and over. The answer, already serialised, is kept
under (book, normalised moves, min_games) until the book gets new games (``api.freshness``), so a
repeated question costs a dictionary look-up on the event loop and no thread at all.
``POST /v1/admin/cache/clear`` drops everything at once (after ``obook verify --repair``, which
changes statistics but not games).
"""

from __future__ import annotations

import logging
import math
import threading
from dataclasses import dataclass
from typing import Callable

from api import views
from api.bounded_cache import BoundedCache
from api.freshness import BookVersions
from api.limiters import ThreadLimits
from api.schemas import GameList, GameOut, LookupOut, ProgressOut
from obook.book.keys import BookGameError, record_images, replay, require_keys
from obook.book.kinds import book_kind
from obook.book.lookup import ReplayedPosition, replay_moves
from obook.errors import ObookError
from obook.go.sgf import game_to_sgf
from obook.go.vertex import split_moves
from obook.store import reporting as r
from obook.store.books import BookInfo, get_book
from obook.store.db import Store, StoreError
from obook.store.games import RECORD_INDEX_CHARS, GameRow, games_through, get_game, list_games
from obook.store.models import FINISHED
from obook.store.readers import AsyncStatsReader, StatsReader, bounded_store

log = logging.getLogger(__name__)

MAX_GAME_ID = 2**31 - 1  # the games.id column is a 32-bit integer
# the most a progress page shows (the route's bounds): books, units in flight a book, live workers
PROGRESS_BOOKS, PROGRESS_UNITS, PROGRESS_WORKERS = 50, 20, 200
MAX_MOVES = 722  # two full boards of 19x19: longer is no opening


class GameNotFound(ObookError):
    """No game with that id."""


# Estimated bytes of the cached objects (CPython 3.11, 64-bit; checked against tracemalloc by
# tests/api/test_api_cost.py): an entry's keeping in the cache ~300 (cachetools' link and its
# dictionaries' slots); a move string in a key ~56 + its tuple slot 8; a replayed move (a tuple of
# two ints) ~64 + 8; a stone (a tuple of two strings and an int) ~170; a statistics row ~120.
def answer_cost(key, value) -> int:
    return 500 + 64 * len(key[1]) + len(value.lookup_json) + len(value.move_json)


def position_cost(key, value) -> int:
    return 600 + 64 * len(key[2]) + 72 * len(value.moves) + 170 * len(value.stones)


def rows_cost(_key, value) -> int:
    return 500 + 120 * len(value[1] or ())  # None: a minimax book's position out of book


def split_query_moves(text: str) -> tuple[str, ...]:
    """The moves as the caller spelled them (so that an error names the move as written)."""
    words = split_moves(text)
    if len(words) > MAX_MOVES:
        raise ObookError(f"{len(words)} moves: at most {MAX_MOVES} are accepted")
    return tuple(words)


def normalise_moves(words: tuple[str, ...]) -> tuple[str, ...]:
    """"E5,G5", "e5 g5" and "E5 g5" are one question: the cache key."""
    return tuple("pass" if w.lower() == "pass" else w.upper() for w in words)


def stone_dicts(replayed: ReplayedPosition) -> list[dict]:
    """The stones of a lookup document as dicts: validated with the answer in one call, half the
    time of a ``Stone`` each (16 stones: 30 against 58 us)."""
    return [{"vertex": v, "color": c, "move": m} for v, c, m in replayed.stones]


@dataclass(frozen=True, slots=True)
class LookupAnswer:
    """One lookup as the endpoints that answer "which move here?" send it: ``/lookup``'s JSON (the
    lookup document), ``/move``'s (the bot's move, taken from that document), their ETag, and the
    book's generation they were computed at (a cached answer is served while the book keeps it).

    Both bodies are made with the document, which is not kept: its objects would take four times
    the memory of the rest of a cached entry (tracemalloc: 6.4 KB against 1.7 KB for a lookup a few
    moves deep), while making ``/move``'s body costs about 4 us, a few percent of a lookup."""

    generation: int
    tag: str
    lookup_json: bytes
    move_json: bytes


def lookup_answer(generation: int, tag: str, document: LookupOut) -> LookupAnswer:
    # exclude_unset: a statistical book's answer has no minimax fields (the CLI's form, exactly)
    return LookupAnswer(generation, tag, document.model_dump_json(exclude_unset=True).encode(),
                        views.move_out(document).model_dump_json().encode())


class BookService:
    """The lookup caches, from the cheapest hit to the cheapest miss: ``answers`` (whole answers,
    ``LookupAnswer``), ``stats`` (a position's record, its statistics rows or a minimax book's node,
    by book and canonical key: a transposed or symmetric question shares them) and ``positions``
    (replays, kept without expiry).

    Answers and statistics are kept under the book's generation (``api.freshness``): a book nobody
    is building is answered from memory for as long as ``cache_seconds``, one being built about
    ``fresh_seconds`` behind its games.
    """

    def __init__(self, store: Store, threads: int = 8, cache_seconds: float = 600.0, cache_size: int = 20000,
                 fresh_seconds: float = 1.0, cache_mb: float = 192.0, export_cache_mb: float = 64.0,
                 db_timeout: float = 5.0, export_queue: int = 4):
        # every other page's statements (books, games, progress, exports, /healthz) bounded as the lookups'
        self.store = bounded_store(store, db_timeout)
        self.limits = ThreadLimits(threads, export_queue)
        self.threads, self.heavy_threads = self.limits.threads, self.limits.heavy_threads
        self.run, self.run_heavy, self.run_export = self.limits.run, self.limits.run_heavy, self.limits.run_export
        share = cache_mb * 2**20 / 3  # the three lookup caches share OBOOK_API_CACHE_MB
        self.answers = BoundedCache(cache_size, cache_seconds, share, answer_cost)
        self.stats = BoundedCache(cache_size, cache_seconds, share, rows_cost)
        self.positions = BoundedCache(cache_size, math.inf, share, position_cost)
        # a book's settings row: without the answer cache (OBOOK_API_CACHE_SECONDS=0) still kept for
        # fresh_seconds, or every lookup would read it again (a transaction, a third of an uncached lookup)
        self.books = BoundedCache(256, min(cache_seconds, 5.0) if cache_seconds > 0 else fresh_seconds)
        # db_timeout (OBOOK_API_DB_TIMEOUT): a lookup on a connection that stopped answering fails (503)
        self.reader = StatsReader(store, pool_size=self.threads, timeout=db_timeout)
        self.async_reader = None if store.is_sqlite else AsyncStatsReader(store, pool_size=max(2, self.threads // 2),
                                                                          timeout=db_timeout)
        self.versions = BookVersions(self.reader.changes, fresh_seconds)
        # exports (SGF bytes) under the book's generation, bounded by their bytes (OBOOK_API_EXPORT_CACHE_MB)
        self.exports = BoundedCache(256, cache_seconds, export_cache_mb * 2**20, lambda _key, value: 200 + len(value[1]))
        self._export_locks = [threading.Lock() for _ in range(16)]  # by the export's hash: a bounded set
        self._progress = BoundedCache(64, max(fresh_seconds, 0.5))  # one computation per second for every client
        self._progress_lock = threading.Lock()
        self._schema_checked = False

    def warm_up(self) -> None:
        """Load the rules' compiled code (a replay, keys, legal moves) before the first request."""
        replay_moves(9, False, ("E5", "C3"))
        replay_moves(9, True, ("E5", "C3"))

    async def close(self) -> None:
        """Close the connections the service opened itself (the app's shutdown, ``api.app``): the
        event loop's (``AsyncStatsReader``, which only the loop that made them can close), the
        statistics readers' pool and the pages'."""
        if self.async_reader is not None:
            await self.async_reader.close()
        self.reader.dispose()
        if getattr(self.store, "deadlines", None) is not None:  # bounded_store's own engine
            self.store.deadlines.close()
            self.store.dispose()

    def clear(self) -> int:
        cleared = self.answers.clear() + self.stats.clear() + self.books.clear() + self.exports.clear()
        self.versions.renew()
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
            book = self.reader.book(name)  # bounded by OBOOK_API_DB_TIMEOUT, as the lookup's other reads
            self.books.put(name, book)
        return book

    def keyed_book(self, name: str, use: str) -> BookInfo:
        """The book for a use that computes its position keys (``obook.book.keys.require_keys``:
        another engine version's book is refused, HTTP 409)."""
        book = self.book(name)
        require_keys(book, use)
        return book

    def book_tag(self, book: str) -> str:
        """The ETag of answers about ``book`` now (``api.caching``); 404 for an unknown book."""
        return self.versions.current(self.book(book)).tag

    # ---- lookups: one route, ``answer`` ---------------------------------------------------------

    async def answer(self, book: str, spelled: tuple[str, ...], min_games: int) -> LookupAnswer:
        """The answer to "which move here?" after the moves ``spelled`` (``split_query_moves``):
        from the cache when the book has not changed, else on the event loop when it can
        (``_answer_on_loop``), else in the service's threads (``_answer_in_threads``)."""
        words = normalise_moves(spelled)
        found = self.cached_answer(book, words, min_games)
        if found is None:
            found = await self._answer_on_loop(book, spelled, min_games)
            if found is None:
                found = await self.run(self._answer_in_threads, book, spelled, min_games)
            self.answers.put((book, words, min_games), found)
        return found

    def cached_answer(self, book: str, words: tuple[str, ...], min_games: int) -> LookupAnswer | None:
        """The cached answer to the normalised moves ``words``, if the book is known not to have
        changed since (called on the event loop)."""
        version = self.versions.serving(book)
        if version is None:
            return None
        found = self.answers.get((book, words, min_games))
        return found if found is not None and found.generation == version.generation else None

    async def lookup_body(self, book: str, moves: str, min_games: int) -> tuple[bytes, str]:
        """``/lookup``: the lookup document as JSON, and its ETag."""
        found = await self.answer(book, split_query_moves(moves), min_games)
        return found.lookup_json, found.tag

    async def move_body(self, book: str, moves: str, min_games: int) -> tuple[bytes, str]:
        """``/move``: the bot's answer as JSON (the usage rule's move, or ``move: null`` out of book),
        and its ETag."""
        found = await self.answer(book, split_query_moves(moves), min_games)
        return found.move_json, found.tag

    async def _answer_on_loop(self, book: str, spelled: tuple[str, ...], min_games: int) -> LookupAnswer | None:
        """A book's answer on the event loop, when everything but its statistics (or its node) is in
        memory (the book's row, a generation checked less than ``fresh_seconds`` ago): a compiled
        replay of some microseconds (``obook.book.lookup.replay_moves``) and one ``SELECT`` (for a
        minimax book, its node joined to its edges and their children's bounds) on the
        loop's own connections (``AsyncStatsReader``). Handing that to a thread and back would cost
        more than the work (issue 20, item 9). ``None``: the threads answer (on SQLite, or to read
        the book or check its generation)."""
        if self.async_reader is None:
            return None
        info = self.books.get(book)
        version = self.versions.fresh(info) if info is not None else None
        if version is None:
            return None
        require_keys(info, "look positions up in it")
        generation, tag = version.generation, version.tag
        replayed = self.replayed(info, spelled)
        key, _ = replayed.canonical()
        hit = self.stats.get((info.id, key))
        if hit is not None and hit[0] == generation:
            record = hit[1]
        else:
            record = await book_kind(info).read_position_async(self.async_reader, info.id, key)
            self.stats.put((info.id, key), (generation, record))
        return lookup_answer(generation, tag, self.answer_out(info, replayed, min_games, lambda _key: record))

    def _answer_in_threads(self, book: str, spelled: tuple[str, ...], min_games: int) -> LookupAnswer:
        info = self.keyed_book(book, "look positions up in it")
        version = self.versions.current(info)
        generation, tag = version.generation, version.tag  # read before the answer: never newer than it
        return lookup_answer(generation, tag, self.lookup(info, spelled, min_games, generation))

    def _lookup_body(self, book: str, spelled: tuple[str, ...], min_games: int) -> tuple[int, str, bytes]:
        """The threads' answer as (generation, ETag, JSON): what the event loop's must equal byte for
        byte (tests/api/test_api.py)."""
        found = self._answer_in_threads(book, spelled, min_games)
        return found.generation, found.tag, found.lookup_json

    def lookup(self, book: BookInfo, spelled: tuple[str, ...], min_games: int = 1,
               generation: int | None = None) -> LookupOut:
        """The lookup document, its records read in this thread (cached under ``generation``)."""
        replayed = self.replayed(book, spelled)
        return self.answer_out(book, replayed, min_games, lambda key: self.position_record(book, key, generation))

    @staticmethod
    def answer_out(book: BookInfo, replayed: ReplayedPosition, min_games: int, read: Callable) -> LookupOut:
        """The book's lookup document, its records from ``read`` (key -> a position's statistics rows,
        or a minimax book's node and its children's bounds: the book's kind says which)."""
        kind = book_kind(book)
        return views.lookup_out(kind.answer_document(kind.lookup(book, replayed, read, min_games)),
                                stone_dicts(replayed))

    def position_record(self, book: BookInfo, key: int, generation: int | None):
        """A position's record (``answer_out``), cached under the book's generation when one is given."""
        hit = self.stats.get((book.id, key)) if generation is not None else None
        if hit is not None and hit[0] == generation:
            return hit[1]
        record = book_kind(book).read_position(self.reader, book.id, key)
        if generation is not None:
            self.stats.put((book.id, key), (generation, record))
        return record

    def replayed(self, book: BookInfo, spelled: tuple[str, ...]) -> ReplayedPosition:
        cache_key = (book.size, book.superko, normalise_moves(spelled))
        replayed = self.positions.get(cache_key)
        if replayed is None:
            replayed = replay_moves(book.size, book.superko, spelled)
            self.positions.put(cache_key, replayed)
        return replayed

    # ---- books, games, progress ----------------------------------------------------------------

    def list_books(self, limit: int, offset: int):
        self.check()
        with self.store.read() as conn:
            return r.count_books(conn), [views.book_out(c, book_kind(c.book).unit_counts(conn, c))
                                         for c in r.books_with_counts(conn, limit, offset)]

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
        wait for the one computation; exports larger than the cache's budget are made each time.
        Parameters the export does not read are not in the key (``BookKind.export_parameters``: a
        minimax book's ``min_games``, a depth past the book's), and an export that wrote the whole
        tree (fewer nodes than its cap) answers every larger cap, so that varying them makes no new
        export (issue 33)."""
        info = self.keyed_book(book, "export it")
        kind = book_kind(info)
        min_games, depth = kind.export_parameters(info, min_games, depth)
        key, whole_key = (book, min_games, depth, max_nodes), (book, min_games, depth, "whole")
        with self._export_locks[hash(whole_key) % len(self._export_locks)]:
            generation = self.versions.current(info).generation
            for hit in (self.exports.get(key), self.exports.get(whole_key)):
                if hit is not None and hit[0] == generation and hit[2] <= max_nodes:
                    return hit[1]
            data, nodes = kind.export(self.store, info, min_games=min_games, depth=depth, max_nodes=max_nodes)
            self.exports.put(whole_key if nodes < max_nodes else key, (generation, data, nodes))
            return data

    def progress(self, limit: int, offset: int, games_limit: int, workers_limit: int) -> ProgressOut:
        """The progress page, computed at most once per ``fresh_seconds`` (half a second at least)
        whoever asks: the dashboard polls it every 1.5 s per viewer. Pages are computed whole
        (``PROGRESS_BOOKS`` books from a multiple of it, every unit and worker a page may show) and
        cut to what was asked, so that varying the parameters neither computes the page again nor
        evicts the dashboard's entry (issue 33)."""
        start = offset - offset % PROGRESS_BOOKS
        pages = [self._progress_page(start)]
        if offset + limit > start + PROGRESS_BOOKS:
            pages.append(self._progress_page(start + PROGRESS_BOOKS))
        books = [b for page in pages for b in page.books][offset - start:offset - start + limit]
        first = pages[0]
        return first.model_copy(update={
            "limit": limit, "offset": offset, "workers": first.workers[:workers_limit],
            "books": [b.model_copy(update={"in_flight": b.in_flight[:games_limit]}) for b in books]})

    def _progress_page(self, start: int) -> ProgressOut:
        with self._progress_lock:  # concurrent askers wait for the one computation
            hit = self._progress.get(start)
            if hit is None:
                hit = self._compute_progress(PROGRESS_BOOKS, start, PROGRESS_UNITS, PROGRESS_WORKERS)
                self._progress.put(start, hit)
            return hit

    def _compute_progress(self, limit: int, offset: int, games_limit: int, workers_limit: int) -> ProgressOut:
        self.check()
        return views.progress(self.store, limit, offset, games_limit, workers_limit)
