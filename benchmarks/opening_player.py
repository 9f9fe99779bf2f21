"""A player that thinks ``factor`` times longer for its first ``moves`` own moves of each game.

This is the ceiling experiment of the book (``benchmarks/book_ceiling.py``): an opening book can at
best play, in the positions it covers, the move a much deeper search would play, and then leave the
engine to play on. So each deep move is searched in a tree of its own, which is dropped afterwards,
exactly as the search starts from nothing when a book player leaves its book: the deep search's
tree never helps a later move, and the experiment measures the moves alone.

It lives beside its benchmark, not in the engine: no search option reaches it. As a GTP engine
(engine A of ``book_ceiling.py``): ``python benchmarks/opening_player.py --config SPEC --moves K
--factor F``.
"""

from __future__ import annotations

import argparse
import sys

from obook.errors import ObookError
from obook.go.position import Position
from obook.search.player import UNLIMITED_PLAYOUTS, CancelToken, MoveBudget, Player, Progress
from obook.search.result import SearchResult


def own_moves(position: Position) -> int:
    """How many moves the side to move has played in this game (passes count; setup stones don't)."""
    return sum(1 for color, _ in position.moves if color == position.to_move)


class OpeningPlayer(Player):
    """Wraps a player: deep searches for the first ``moves`` own moves of each game, the plain
    budget after."""

    def __init__(self, inner: Player, moves: int, factor: float):
        if moves < 0:
            raise ObookError("opening moves must not be negative")
        if factor <= 0:
            raise ObookError("opening factor must be positive")
        self.inner = inner
        self.config = inner.config
        self.moves = moves
        self.factor = factor
        self.deep_moves = 0  # deep searches made in the current game

    def new_game(self) -> None:
        self.deep_moves = 0
        self.inner.new_game()

    def reseed(self, seed: int) -> None:
        self.inner.reseed(seed)

    def close(self) -> None:
        self.inner.close()

    def opening_budget(self, seconds: float | None, playouts: int | None) -> MoveBudget:
        """The plain budget of this call, multiplied by ``factor``."""
        plain = self.budget(seconds, playouts)
        deep_seconds = plain.seconds * self.factor if plain.seconds is not None else None
        deep_playouts = (plain.playouts if plain.playouts >= UNLIMITED_PLAYOUTS
                         else max(1, round(plain.playouts * self.factor)))
        return MoveBudget(deep_seconds, deep_playouts)

    def genmove(self, position: Position, seconds: float | None = None, playouts: int | None = None,
                on_progress: Progress | None = None, progress_interval: float = 0.5,
                cancel: CancelToken | None = None) -> SearchResult:
        if own_moves(position) >= self.moves:
            return self.inner.genmove(position, seconds, playouts, on_progress, progress_interval, cancel)
        deep = self.opening_budget(seconds, playouts)
        self.inner.new_game()
        try:
            result = self.inner.genmove(position, deep.seconds, deep.playouts, on_progress, progress_interval, cancel)
        finally:
            self.inner.new_game()
        self.deep_moves += 1
        return result


def main(argv: list[str] | None = None) -> int:
    from obook.commands.gtp import input_lines
    from obook.gtp.engine import GTPEngine
    from obook.search.config import SearchConfig
    from obook.search.players import make_player
    from obook.search.warmup import warm_up_in_background

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="", help="search options of the plain engine")
    parser.add_argument("--moves", type=int, required=True, help="own moves searched deep")
    parser.add_argument("--factor", type=float, default=100.0, help="deep budget = factor x the plain budget")
    args = parser.parse_args(argv)
    config = SearchConfig.from_spec(args.config)
    warm_up_in_background((config.policy,), algorithm=config.algorithm)
    engine = GTPEngine(config, player=OpeningPlayer(make_player(config), args.moves, args.factor))
    sys.stdout.reconfigure(encoding="utf-8", errors="replace", newline="\n")
    engine.run(input_lines(sys.stdin.fileno()), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
