"""A player that thinks ``factor`` times longer for its first ``moves`` own moves of each game.

This is the ceiling experiment of the book (``benchmarks/book_ceiling.py``): an opening book can at
best play, in the positions it covers, the move a much deeper search would play, and then leave the
engine to play on. So each deep move is searched in a tree of its own, which is dropped afterwards,
exactly as the search starts from nothing when a book player leaves its book: the deep search's
tree never helps a later move, and the experiment measures the moves alone.

With ``--cache FILE``, a deep search's move is kept in an SQLite file under the position's
canonical key (the 8 symmetries merged), the plain configuration and the deep budget, and a
repeated position plays the kept move instead of searching again, as a book would: the opening
repeats across games, so this is most of the experiment's cost at P of thousands. Processes of
parallel games share the file.

It lives beside its benchmark, not in the engine: no search option reaches it. As a GTP engine
(engine A of ``book_ceiling.py``): ``python benchmarks/opening_player.py --config SPEC --moves K
--factor F [--cache FILE]``.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from obook.errors import ObookError
from obook.go.position import Position
from obook.search.player import UNLIMITED_PLAYOUTS, CancelToken, MoveBudget, Player, Progress
from obook.search.result import SearchResult



class DeepMoveCache:
    """Deep searches' moves by (configuration, deep budget, canonical position key)."""

    def __init__(self, path: Path, config_spec: str, budget: str):
        self.connection = sqlite3.connect(path, timeout=60, isolation_level=None)
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute("CREATE TABLE IF NOT EXISTS deep_moves (config TEXT, budget TEXT, key TEXT, "
                                "move INTEGER, resign INTEGER, winrate REAL, playouts INTEGER, "
                                "PRIMARY KEY (config, budget, key))")
        self.scope = (config_spec, budget)
        self.hits = 0

    def get(self, position: Position) -> SearchResult | None:
        key, symmetry = position.canonical()
        row = self.connection.execute("SELECT move, resign, winrate, playouts FROM deep_moves WHERE config = ? "
                                      "AND budget = ? AND key = ?", (*self.scope, str(key))).fetchone()
        if row is None:
            return None
        move, resign, winrate, playouts = row
        self.hits += 1
        point = position.from_canonical(move, symmetry) if move >= 0 else move
        return SearchResult(move=point, resign=bool(resign), winrate=winrate, playouts=0, seconds=0.0, moves=[], pv=[])

    def put(self, position: Position, result: SearchResult) -> None:
        key, symmetry = position.canonical()
        move = position.to_canonical(result.move, symmetry) if result.move >= 0 else result.move
        self.connection.execute("INSERT OR IGNORE INTO deep_moves VALUES (?, ?, ?, ?, ?, ?, ?)",
                                (*self.scope, str(key), move, int(result.resign), result.winrate, result.playouts))


def own_moves(position: Position) -> int:
    """How many moves the side to move has played in this game (passes count; setup stones don't)."""
    return sum(1 for color, _ in position.moves if color == position.to_move)


class OpeningPlayer(Player):
    """Wraps a player: deep searches for the first ``moves`` own moves of each game, the plain
    budget after."""

    def __init__(self, inner: Player, moves: int, factor: float, cache_path: Path | None = None):
        if moves < 0:
            raise ObookError("opening moves must not be negative")
        if factor <= 0:
            raise ObookError("opening factor must be positive")
        self.inner = inner
        self.config = inner.config
        self.moves = moves
        self.factor = factor
        self.deep_moves = 0  # deep searches made in the current game
        self.cache_path = cache_path
        self.cache: DeepMoveCache | None = None

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
        if self.cache_path is not None and self.cache is None:
            self.cache = DeepMoveCache(self.cache_path, self.config.to_spec(), f"{deep.seconds}s/{deep.playouts}p")
        kept = self.cache.get(position) if self.cache is not None else None
        if kept is not None:
            self.deep_moves += 1
            return kept
        self.inner.new_game()
        try:
            result = self.inner.genmove(position, deep.seconds, deep.playouts, on_progress, progress_interval, cancel)
        finally:
            self.inner.new_game()
        if self.cache is not None:
            self.cache.put(position, result)
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
    parser.add_argument("--cache", type=Path, help="SQLite file keeping deep searches' moves by position")
    args = parser.parse_args(argv)
    config = SearchConfig.from_spec(args.config)
    warm_up_in_background((config.policy,), algorithm=config.algorithm)
    engine = GTPEngine(config, player=OpeningPlayer(make_player(config), args.moves, args.factor, args.cache))
    sys.stdout.reconfigure(encoding="utf-8", errors="replace", newline="\n")
    engine.run(input_lines(sys.stdin.fileno()), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
