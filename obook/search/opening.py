"""A player that thinks ``opening_factor`` times longer for its first ``opening_moves`` own moves.

This is the ceiling experiment of the book (``benchmarks/book_ceiling.py``): an opening book can at
best play, in the positions it covers, the move a much deeper search would play, and then leave the
engine to play on. So each deep move is searched in a tree of its own, which is dropped afterwards,
exactly as the search starts from nothing when a book player leaves its book: the deep search's
tree never helps a later move, and the experiment measures the moves alone.
"""

from __future__ import annotations

from obook.go.position import Position
from obook.search.config import SearchConfig
from obook.search.player import UNLIMITED_PLAYOUTS, Budget, CancelToken, Player, Progress
from obook.search.result import SearchResult


def own_moves(position: Position) -> int:
    """How many moves the side to move has played in this game (passes count; setup stones don't)."""
    return sum(1 for color, _ in position.moves if color == position.to_move)


class OpeningPlayer(Player):
    """Wraps a player: deep searches for the first moves of each game, the plain budget after."""

    def __init__(self, inner: Player, config: SearchConfig):
        self.inner = inner
        self.config = config
        self.deep_moves = 0  # deep searches made in the current game

    def new_game(self) -> None:
        self.deep_moves = 0
        self.inner.new_game()

    def reseed(self, seed: int) -> None:
        self.inner.reseed(seed)

    def close(self) -> None:
        self.inner.close()

    def opening_budget(self, seconds: float | None, playouts: int | None) -> Budget:
        """The plain budget of this call, multiplied by ``opening_factor``."""
        plain = Budget.resolve(self.config, seconds, playouts)
        factor = self.config.opening_factor
        deep_seconds = plain.seconds * factor if plain.seconds is not None else None
        deep_playouts = (plain.playouts if plain.playouts >= UNLIMITED_PLAYOUTS
                         else max(1, round(plain.playouts * factor)))
        return Budget(deep_seconds, deep_playouts)

    def genmove(self, position: Position, seconds: float | None = None, playouts: int | None = None,
                on_progress: Progress | None = None, progress_interval: float = 0.5,
                cancel: CancelToken | None = None) -> SearchResult:
        if own_moves(position) >= self.config.opening_moves:
            return self.inner.genmove(position, seconds, playouts, on_progress, progress_interval, cancel)
        deep = self.opening_budget(seconds, playouts)
        self.inner.new_game()
        try:
            result = self.inner.genmove(position, deep.seconds, deep.playouts, on_progress, progress_interval, cancel)
        finally:
            self.inner.new_game()
        self.deep_moves += 1
        return result
