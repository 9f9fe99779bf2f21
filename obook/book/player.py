"""Playing from a book: the usage rule while the position is in the book, the search after; and the
record of how each game used the book.

``BookPlayer`` wraps any ``Player``. In a position the book knows with at least ``min_games``
games on its chosen move it answers at once with the most simulated move in won games, and its
result (a ``BookResult``) carries the book's figures (games as visits, win rates) so that GTP
analysis shows them; elsewhere the wrapped search plays. The book is read from the store once per
position and kept in memory for the life of the player.

A book is used only in games of its size and komi (``book_mismatch`` says, in one line naming both
values, why a book can never be used in a game), and only by the engine version that made its keys
(``obook.book.keys.ENGINE_VERSION``): another version's book is refused when the player opens it.
What the player's moves were is recorded by whoever plays them (``record_move``: the GTP engine,
for the moves it plays, not for analysis): per game and colour, the number of book moves and the
ply of the first own move not from the book.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from obook.book.kinds import book_kind
from obook.book.library import open_book_store, open_keyed_book
from obook.book.lookup import BookLookup, MinimaxLookup, book_score
from obook.book.minimax import DEFAULT_PLAY_CHOICE, check_play_choice
from obook.errors import ObookError
from obook.go.board import BLACK, WHITE
from obook.go.position import Position
from obook.search.player import ROOT_PRIORS, Player
from obook.search.result import MoveStats, SearchResult
from obook.store.books import BookInfo

COLOR_WORDS = {BLACK: "black", WHITE: "white"}


class BookResult(SearchResult):
    """A move taken from the book (its figures are the book's, not a search's)."""


class DeepSearchResult(BookResult):
    """A minimax book's node with no book move to play: its own deep search's best move outside
    the book (S playouts, far more than the play budget)."""


def book_mismatch(book: BookInfo, size: int, komi: float, where: str = "this game") -> str | None:
    """Why ``book`` can never be used in a game of ``size`` and ``komi``, naming both values; None
    when it can. (A book of another engine version is refused when it is opened.)"""
    if size != book.size or komi != book.komi:
        return (f"book {book.name!r} is for {book.size}x{book.size} komi {book.komi:g}; "
                f"{where} is {size}x{size} komi {komi:g}")
    return None


@dataclass
class BookPlay:
    """How one colour used the book in one game."""

    book_moves: int = 0  # own moves taken from the book
    left_at: int | None = None  # ply (move number in the game) of the first own move not from the book
    moves: int = 0  # own moves recorded

    def to_dict(self) -> dict:
        return {"book_moves": self.book_moves, "left_at": self.left_at}

    def describe(self) -> str:
        left = f"left the book at ply {self.left_at}" if self.left_at is not None else "never left the book"
        return f"{self.book_moves} book move{'s' if self.book_moves != 1 else ''}, {left}"


class BookPlayer(Player):
    def __init__(self, inner: Player, store_url: str | None, book_name: str, min_games: int = 1,
                 max_moves: int | None = None, soft_visits: float = 0.0, own_moves: bool = True,
                 warm: bool = False, choice: str = DEFAULT_PLAY_CHOICE):
        self.inner = inner
        self.choice = check_play_choice(choice)  # a minimax book: its move by the back-up's value or by its deep searches' visits
        self.own_moves = own_moves  # a minimax node with no book move to play: play its deep search's best move
        self.warm = warm  # on a book move, search the position after it with the move's budget (tree reuse)
        self.warm_result: SearchResult | None = None  # the last such search (the opponent's view)
        self.config = inner.config
        self.store = open_book_store(store_url)
        self.book = open_keyed_book(self.store, book_name, "play from it")
        self.min_games = max(1, min_games)
        self.kind = book_kind(self.book)
        self.soft_visits = soft_visits  # > 0: a minimax book's values are prior visits of the search, no book move
        if soft_visits > 0:
            if not self.kind.gives_priors or ROOT_PRIORS not in inner.root_controls:
                raise ObookError("--book-soft needs a minimax book and the uct search in one process")
        self.max_moves = (self.book.depth or None) if max_moves is None else max_moves  # None: no cap
        self._records: dict[int, object] = {}  # the positions' records read so far (statistics rows, nodes)
        self.book_moves = 0  # book moves recorded over the player's life
        self.game = {BLACK: BookPlay(), WHITE: BookPlay()}  # the current game's record, per colour

    def opening_book(self) -> "BookPlayer":
        return self

    def mismatch(self, size: int, komi: float) -> str | None:
        return book_mismatch(self.book, size, komi)

    def applies_to(self, position: Position) -> bool:
        return (position.size == self.book.size
                and position.komi == self.book.komi and not position.setup_black and not position.setup_white
                and (self.max_moves is None or len(position.moves) < self.max_moves))

    def record(self, key: int):
        """A position's record (its statistics rows, a minimax book's node with its children's
        bounds), read from the store once."""
        if key not in self._records:
            with self.store.read() as conn:
                self._records[key] = self.kind.reader(conn, self.book.id)(key)
        return self._records[key]

    def lookup(self, position: Position) -> BookLookup | MinimaxLookup:
        return self.kind.lookup(self.book, position, self.record, self.min_games, self.choice)

    def minimax_result(self, found: MinimaxLookup, started: float) -> BookResult | None:
        """A minimax book's move (the lookup's ``usage``: by the player's ``choice``, the best backed-up
        value or the deep searches' most visited move) with its figures; where the node has none to
        play, its own deep search's best move (``own_moves``); None: leave the book."""
        stats = [MoveStats(point=c.point, visits=c.visits, winrate=c.value, variance=0.0, pv=[c.point],
                           prior=c.prior, score_mean=book_score(c), lcb=c.lcb) for c in found.candidates]
        if found.usage is None:
            if not self.own_moves or found.own_point is None:
                return None
            own = found.own_point
            stats.insert(0, MoveStats(point=own, visits=found.own_visits or 0, winrate=found.own_value, variance=0.0,
                                      pv=[own], prior=0.0, lcb=found.own_lcb))
            return DeepSearchResult(move=own, resign=False, winrate=found.own_value, playouts=0,
                                    seconds=time.perf_counter() - started, moves=stats, pv=[own])
        return BookResult(move=found.usage.point, resign=False, winrate=found.usage.value, playouts=0,
                          seconds=time.perf_counter() - started, moves=stats, pv=[found.usage.point])

    def book_result(self, position: Position) -> BookResult | None:
        """The usage rule's answer with the book's figures, or None when out of book."""
        if not self.applies_to(position):
            return None
        started = time.perf_counter()
        return self.kind.book_result(self, self.lookup(position), started)

    def statistics_result(self, found: BookLookup, started: float) -> BookResult | None:
        """A statistical book's move: the usage rule's, with the population's figures (games as
        visits); None: out of book."""
        choice = found.usage
        if choice is None:
            return None
        ranked = sorted(found.candidates, key=lambda c: (c.points, c.winrate), reverse=True)
        stats = [MoveStats(point=c.point, visits=c.games, winrate=c.winrate, variance=c.winrate * (1 - c.winrate),
                           pv=[c.point]) for c in ranked]  # a game is a Bernoulli trial: its standard error
        return BookResult(move=choice.point, resign=False, winrate=choice.winrate, playouts=0,
                          seconds=time.perf_counter() - started, moves=stats, pv=[choice.point])

    def soft_priors(self, position: Position) -> dict[int, tuple[float, float]] | None:
        """A minimax book's soft mode: each book move's minimax value as ``soft_visits`` virtual
        visits of the search's root (None: not in the book)."""
        if not self.applies_to(position):
            return None
        found = self.lookup(position)
        return {c.point: (self.soft_visits, c.value) for c in found.candidates} or None

    def genmove(self, position, seconds=None, playouts=None, on_progress=None, progress_interval=0.5, cancel=None):
        if self.soft_visits > 0:  # only a book whose kind gives priors gets here (``__init__``)
            priors = self.soft_priors(position)
            extra = {"root_priors": priors} if priors else {}
            return self.inner.genmove(position, seconds=seconds, playouts=playouts, on_progress=on_progress,
                                      progress_interval=progress_interval, cancel=cancel, **extra)
        result = self.book_result(position)
        if result is None:
            return self.inner.genmove(position, seconds=seconds, playouts=playouts, on_progress=on_progress,
                                      progress_interval=progress_interval, cancel=cancel)
        if self.warm:
            self.warm_up_tree(position, result.move, seconds, playouts, cancel)
        if on_progress is not None:
            on_progress(result)
        return result

    def warm_up_tree(self, position: Position, move: int, seconds, playouts, cancel) -> None:
        """Spend the book move's budget searching the position after it, so that the search's tree
        holds the opponent's replies when the game leaves the book: the search then starts as warm
        as an opponent that reuses its tree, not from nothing."""
        after = position.copy()
        after.play(move)
        self.warm_result = self.inner.genmove(after, seconds=seconds, playouts=playouts, cancel=cancel)

    # ---- the record of the game -------------------------------------------------------------------

    def record_move(self, color: int, ply: int, result: SearchResult | None) -> str | None:
        """``color`` played ``result``'s move (None: a move that no genmove chose) as move ``ply`` of
        the game; the line to show when that move left the book, else None."""
        play = self.game[color]
        play.moves += 1
        if isinstance(result, BookResult):
            play.book_moves += 1
            self.book_moves += 1
            return None
        if play.left_at is None:
            play.left_at = ply
            return (f"book: {COLOR_WORDS[color]} left the book {self.book.name!r} at ply {ply} "
                    f"after {play.book_moves} book move{'s' if play.book_moves != 1 else ''}")
        return None

    def game_summary(self) -> str | None:
        """One line on the current game's use of the book, by the colours this player moved for."""
        parts = [f"{COLOR_WORDS[c]} {self.game[c].describe()}" for c in (BLACK, WHITE) if self.game[c].moves]
        return f"book {self.book.name!r} this game: " + "; ".join(parts) if parts else None

    def begin_game(self) -> str | None:
        """Start the record of a new game; the summary of the one before (None if it had no moves)."""
        summary = self.game_summary()
        self.game = {BLACK: BookPlay(), WHITE: BookPlay()}
        return summary

    def new_game(self) -> None:
        self.inner.new_game()

    def reseed(self, seed: int) -> None:
        self.inner.reseed(seed)

    def close(self) -> None:
        self.inner.close()
