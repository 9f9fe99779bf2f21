"""Playing from a book: the usage rule while the position is in the book, the search after.

``BookPlayer`` wraps any ``Player``. In a position the book knows with at least ``min_games``
games on its chosen move it answers at once with the most simulated move in won games, and its
result carries the book's figures (games as visits, win rates) so that GTP analysis shows them;
elsewhere the wrapped search plays. The book is read from the store once per position and kept in
memory for the life of the player.
"""

from __future__ import annotations

import logging
import time

from obook.book.lookup import BookLookup, book_lookup
from obook.go.position import Position
from obook.search.player import Player
from obook.search.result import MoveStats, SearchResult
from obook.store.books import get_book
from obook.store.stats import Rows, position_stats

log = logging.getLogger(__name__)


class BookPlayer(Player):
    def __init__(self, inner: Player, store_url: str | None, book_name: str, min_games: int = 1,
                 max_moves: int | None = None):
        from obook.book.library import open_book_store

        self.inner = inner
        self.config = inner.config
        self.store = open_book_store(store_url)
        with self.store.read() as conn:
            self.book = get_book(conn, book_name)
        self.min_games = max(1, min_games)
        self.max_moves = (self.book.depth or None) if max_moves is None else max_moves  # None: no cap
        self._rows: dict[int, list[tuple[int, int, int]]] = {}
        self.book_moves = 0  # moves this player has taken from the book
        self._warned = False

    def applies_to(self, position: Position) -> bool:
        same_rules = (position.size == self.book.size and position.komi == self.book.komi
                      and not position.setup_black and not position.setup_white)
        if not same_rules and not self._warned:
            log.warning("book %s is for %dx%d komi %g: not used in this game", self.book.name, self.book.size,
                        self.book.size, self.book.komi)
            self._warned = True
        return same_rules and (self.max_moves is None or len(position.moves) < self.max_moves)

    def rows(self, key: int) -> Rows:
        """A position's statistics, read from the store once."""
        rows = self._rows.get(key)
        if rows is None:
            with self.store.read() as conn:
                rows = self._rows[key] = position_stats(conn, self.book.id, key)
        return rows

    def lookup(self, position: Position) -> BookLookup:
        return book_lookup(self.book, position, self.rows, self.min_games)

    def book_result(self, position: Position) -> SearchResult | None:
        """The usage rule's answer with the book's figures, or None when out of book."""
        if not self.applies_to(position):
            return None
        started = time.perf_counter()
        found = self.lookup(position)
        choice = found.usage
        if choice is None:
            return None
        ranked = sorted(found.candidates, key=lambda c: (c.wins, c.winrate), reverse=True)
        stats = [MoveStats(point=c.point, visits=c.games, winrate=c.winrate, variance=0.0, pv=[c.point])
                 for c in ranked]
        return SearchResult(move=choice.point, resign=False, winrate=choice.winrate, playouts=0,
                            seconds=time.perf_counter() - started, moves=stats, pv=[choice.point])

    def genmove(self, position, seconds=None, playouts=None, on_progress=None, progress_interval=0.5, cancel=None):
        result = self.book_result(position)
        if result is None:
            return self.inner.genmove(position, seconds=seconds, playouts=playouts, on_progress=on_progress,
                                      progress_interval=progress_interval, cancel=cancel)
        self.book_moves += 1
        if on_progress is not None:
            on_progress(result)
        return result

    def new_game(self) -> None:
        self.inner.new_game()

    def reseed(self, seed: int) -> None:
        self.inner.reseed(seed)

    def close(self) -> None:
        self.inner.close()
