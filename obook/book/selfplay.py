"""Self-play of one individual: the functions the embedded build and the grid workers share.

A game lives in the store. Whoever plays it first takes its lease (``claim``, which gives the caller
a ``HeldGame``), then repeatedly ``advance``s it: the move is chosen (the book rule while the
population knows the position, the mutation player's search otherwise) and stored, lease renewed,
before anything else happens; a process killed at any instant therefore loses at most the move it
was thinking about, and the next player resumes from the stored moves. When the game is over,
``finish`` closes it and adds its statistics in one transaction that can succeed once only. Every
write goes through the player's ``GameLease`` (``obook.store.leases``).

Each move's search is seeded from the game's seed and the move number, so a resumed game makes the
choices an uninterrupted one would have made (exactly so under a playout budget).
"""

from __future__ import annotations

import logging
import os
import random
import sys
from dataclasses import dataclass

from obook.book.keys import (
    ENGINE_VERSION,
    BookGameError,
    game_outcome,
    opening_record,
    replay,
    require_engine,
    require_keys,
    within_depth,
)
from obook.book.lookup import book_lookup
from obook.book.rules import Candidate
from obook.config import settings
from obook.go.board import BLACK
from obook.go.position import Position
from obook.playout.ownership import final_score, stone_status
from obook.search.config import SearchConfig
from obook.search.player import CancelToken, Player
from obook.search.players import make_player
from obook.search.result import SearchResult
from obook.search.warmup import is_warm
from obook.search.warmup import warm_up as compile_engine
from obook.store.books import BookInfo
from obook.store.db import Store
from obook.store.games import GameRow, top_up_games
from obook.store.leases import GameLease, LeaseLost, new_worker_id
from obook.store.reporting import count_at_move_cap
from obook.store.stats import ReadRows

log = logging.getLogger(__name__)

BOOK, SEARCH, SEED = "b", "m", "s"  # where a move came from (games.origins)
OWNERSHIP_PLAYOUTS = 600  # playouts that decide which stones are dead when both players pass
BOOK_RNG_MOVES = 2 * 10**6  # move_seed(game seed, this + move number) seeds a BETA book's sampling


def move_seed(game_seed: int, move_number: int) -> int:
    """SplitMix64 of (game seed, move number): independent seeds for the moves of a game."""
    z = (game_seed + 0x9E3779B97F4A7C15 * (move_number + 1)) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) or 1


def max_moves(size: int) -> int:
    return 3 * size * size


def games_at_move_cap(store: Store, book: BookInfo) -> int:
    """How many of the book's finished self-play games the move cap (``max_moves``) ended."""
    with store.read() as conn:
        return count_at_move_cap(conn, book.id, max_moves(book.size))


def mutation_config(book: BookInfo, seconds: float | None = None) -> SearchConfig:
    """The search that mutates: the book's settings, one process, the book's time per move."""
    per_move = book.seconds_per_move if seconds is None else seconds
    return SearchConfig.from_spec(book.search or None, seconds=per_move, processes=1)


def warm_up(policies: tuple[str, ...] = ("heavy", "light"), when_cold_only: bool = False) -> None:
    """Load (or compile) the engine's jitted code once, in a parent process before it starts its
    players (the embedded build's processes, a grid worker's pool), so that no player stalls on the
    compiler while it holds a lease and several do not compile the same code at once. When it has
    to compile, it says so on stderr, step by step. A parent that spawns its players (the embedded
    build off Linux) passes ``when_cold_only``: each spawned process loads the code it uses from the
    cache, so the parent's own load of a warm cache (a second of CPU) would serve nothing; a forking
    parent (the embedded build on Linux, Celery's pool) loads it once for all its children."""
    if is_warm():
        if not when_cold_only:
            compile_engine(policies)
        return
    compile_engine(policies, progress=sys.stderr)


@dataclass
class Choice:
    vertex: str  # GTP vertex, or "resign"
    origin: str
    winrate: float


@dataclass
class Outcome:
    result: str
    winner: str | None
    score: float | None


@dataclass
class HeldGame:
    """A game this player holds the lease of, as it stands between two of its moves. The caller
    keeps it from ``claim`` to the end of the game (or of its grid slice) and hands it to
    ``advance``; a failed move leaves ``position`` None, so the next advance replays the stored moves."""

    game: GameRow  # as stored now
    position: Position | None = None  # after the stored moves (None: not replayed yet)
    prepared: bool = False  # the next move was prepared with the last one stored (``advance(more=True)``)
    pick: Candidate | None = None  # the prepared book move; None, prepared: its search is already counted

    @property
    def id(self) -> int:
        return self.game.id


class SelfPlayer:
    """Plays games of one book for one owner (a local process or a grid worker)."""

    def __init__(self, store: Store, book: BookInfo, owner: str | None = None, lease_seconds: float | None = None,
                 player: Player | None = None, seconds: float | None = None, kind: str = "local",
                 heartbeat_seconds: float = 0.0):
        require_keys(book, "add games to it")
        require_engine(book, "add games to it")
        self.book = book
        self.config = mutation_config(book, seconds)
        think = self.config.seconds or 1.0
        self.lease = GameLease(store, owner or new_worker_id(kind),
                               lease_seconds or max(settings().lease_seconds, 4 * think + 10), kind=kind,
                               engine_version=ENGINE_VERSION, heartbeat_seconds=heartbeat_seconds)
        self.player = player or make_player(self.config)

    @property
    def owner(self) -> str:
        return self.lease.owner

    def claim(self, game_id: int | None = None, handoff: str | None = None) -> HeldGame | None:
        """Take a game's lease: one nobody holds, or ``game_id``; with ``handoff`` (a grid task's
        token) also when that token holds it. The search starts a new game: slices of other games
        may have run in this process since."""
        game = self.lease.claim(self.book.id, game_id, handoff)
        if game is None:
            return None
        self.player.new_game()
        return HeldGame(game)

    def release(self, held: HeldGame) -> None:
        self.lease.release(held.game)

    # ---- one move -------------------------------------------------------------------------------

    def is_over(self, position: Position) -> bool:
        return position.passes >= 2 or len(position.moves) >= max_moves(self.book.size)

    def book_pick(self, position: Position, rows: ReadRows, game_seed: int = 0) -> Candidate | None:
        """The coevolution rule's move within the book's depth; None: mutate (search). A BETA
        book samples from a generator seeded by the game's seed and the move number, so that a
        resumed game makes the choice an uninterrupted one would have made."""
        if not within_depth(self.book.depth, len(position.moves)):
            return None
        rng = random.Random(move_seed(game_seed, BOOK_RNG_MOVES + len(position.moves)))
        return book_lookup(self.book, position, rows, rng=rng).coevolution

    def choose(self, held: HeldGame, position: Position) -> Choice:
        """The book move when one beats the threshold, otherwise the mutation player's move. The
        search is counted in the store before it starts (``games.searches``), in the transaction
        that stored the previous move when that one prepared it (``advance(more=True)``)."""
        if held.prepared:
            pick = held.pick
            held.prepared, held.pick = False, None
        else:
            pick = self.lease.start_move(held.game, lambda rows: self.book_pick(position, rows, held.game.seed))
        if pick is not None:
            return Choice(pick.vertex, BOOK, pick.winrate)
        result = self.search(held.game, position)
        if result.resign:
            return Choice("resign", SEARCH, result.winrate)
        return Choice(position.vertex(result.move), SEARCH, result.winrate)

    def search(self, game: GameRow, position: Position) -> SearchResult:
        """The mutation player's move: self-play's one ``genmove``. Seeded from the game's seed and
        the move number (a resumed game replays); the lease is renewed from the progress callback,
        and a lost lease cancels the search and raises ``LeaseLost`` once it has returned."""
        self.player.reseed(move_seed(game.seed, len(position.moves)))
        interval = max(1.0, self.lease.lease_seconds / 4)
        cancel = CancelToken()
        lost: list[LeaseLost] = []

        def keep_lease(_result: SearchResult) -> None:
            try:
                self.lease.renew(game)
            except LeaseLost as exc:
                lost.append(exc)
                cancel.cancel()

        result = self.player.genmove(position, on_progress=keep_lease, progress_interval=interval, cancel=cancel)
        if lost:
            raise lost[0]
        return result

    def advance(self, held: HeldGame, more: bool = False) -> bool:
        """Play one move of the held game (or finish it when it is over); True when it is finished.
        Raises ``LeaseLost`` when someone else plays this game. ``more``: the caller will advance
        this game again at once, so the round trip storing this move also prepares the next one
        (its book move, or the count of its search): one round trip per move."""
        position, held.position = held.position, None
        if position is None:
            try:
                position = replay(self.book.size, self.book.komi, self.book.superko, held.game.moves)
            except BookGameError as exc:
                self._abandon(held.game, f"illegal stored game: {exc}")
                return True
        if self.is_over(position):
            return self.finish(held.game, position)
        choice = self.choose(held, position)
        if choice.vertex == "resign":
            loser = "B" if position.to_move == BLACK else "W"
            winner = "W" if loser == "B" else "B"
            return self.finish(held.game, position, Outcome(f"{winner}+R", winner, None))
        position.play(choice.vertex)
        over = self.is_over(position)
        prepare = more and not over
        held.game, pick = self.lease.append(held.game, choice.vertex, choice.origin,
                                            (lambda rows: self.book_pick(position, rows, held.game.seed))
                                            if prepare else None)
        if over:
            return self.finish(held.game, position)
        held.position, held.prepared, held.pick = position, prepare, pick
        return False

    # ---- the end --------------------------------------------------------------------------------

    def outcome(self, game: GameRow, position: Position) -> Outcome:
        """Area score with komi, the stones that playouts from here find dead counted for their capturer."""
        status = stone_status(position, OWNERSHIP_PLAYOUTS, self.config.policy, seed=move_seed(game.seed, 10**6))
        score = float(final_score(position, status))
        if score == 0:
            return Outcome("0", None, 0.0)
        winner = "B" if score > 0 else "W"
        return Outcome(f"{winner}+{abs(score):g}", winner, score)

    def finish(self, game: GameRow, position: Position, outcome: Outcome | None = None) -> bool:
        """Close the game and count it (``LeaseLost`` when it was already closed or is no longer
        ours); True: the game is over for this player."""
        problem = self.inconsistency(game, resigned=outcome is not None, position=position)
        if problem is not None:
            self._abandon(game, problem)
            return True
        outcome = outcome or self.outcome(game, position)
        stats, scores = opening_record(self.book.size, self.book.komi, self.book.superko, game.moves,
                                       game_outcome(outcome.winner, outcome.result), outcome.score, self.book.depth)
        self.lease.finish(game, outcome.result, outcome.winner, outcome.score, stats, scores)
        if game.n_moves >= max_moves(self.book.size) and position.passes < 2:
            log.warning("game %d reached the move cap (%d moves): scored as it stands, %s", game.id, game.n_moves,
                        outcome.result)
        else:
            log.info("game %d finished: %s after %d moves", game.id, outcome.result, game.n_moves)
        return True

    def inconsistency(self, game: GameRow, resigned: bool, position: Position | None = None) -> str | None:
        """Why ``game`` must not be counted (None: it may): its stored moves must have been played
        through the rules from the empty board (a replay, unless ``position`` is this player's own
        position reached by exactly those moves), one origin per move, and it must be over unless
        it was resigned."""
        if len(game.origins) != len(game.moves):
            return f"{len(game.moves)} moves but {len(game.origins)} move origins"
        played = position is not None and [position.vertex(p) for _, p in position.moves] == list(game.moves)
        if not played:
            try:
                position = replay(self.book.size, self.book.komi, self.book.superko, game.moves)
            except BookGameError as exc:
                return f"illegal stored game: {exc}"
        if not resigned and not self.is_over(position):
            return f"not over after {len(game.moves)} moves"
        return None

    def _abandon(self, game: GameRow, reason: str) -> None:
        log.error("game %d abandoned: %s", game.id, reason)
        self.lease.abandon(game)

    def play(self, held: HeldGame) -> bool:
        """Play a claimed game to its end; True when this player finished it."""
        self.player.new_game()
        while not self.advance(held):
            pass
        return True


def start_games(store: Store, book: BookInfo, target: int, count: int = 1) -> list[int]:
    """Create up to ``count`` self-play games, never more than the book's ``target`` in all."""
    seeds = [int.from_bytes(os.urandom(8), "little") >> 1 for _ in range(count)]
    with store.write() as conn:
        return top_up_games(conn, book.id, target, seeds)
