"""Self-play of one individual: the functions the embedded build and the grid workers share.

A game lives in the store. Whoever plays it first takes its lease (``claim``), then repeatedly
``advance``s it: the move is chosen (the book rule while the population knows the position, the
mutation player's search otherwise) and stored, lease renewed, before anything else happens; a
process killed at any instant therefore loses at most the move it was thinking about, and the next
player resumes from the stored moves. When the game is over, ``finish`` closes it and adds its
statistics in one transaction that can succeed once only.

Each move's search is seeded from the game's seed and the move number, so a resumed game makes the
choices an uninterrupted one would have made (exactly so under a playout budget).
"""

from __future__ import annotations

import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass

from obook.book.keys import ENGINE_VERSION, BookGameError, opening_statistics, replay
from obook.book.rules import book_candidates, coevolution_move
from obook.errors import ObookError
from obook.go.board import BLACK
from obook.go.position import Position
from obook.search.config import SearchConfig
from obook.search.player import CancelToken, Player
from obook.search.players import make_player
from obook.store import queries as q
from obook.store.db import Store
from obook.store.models import ABANDONED

log = logging.getLogger(__name__)

BOOK, SEARCH, SEED = "b", "m", "s"  # where a move came from (games.origins)
OWNERSHIP_PLAYOUTS = 600  # playouts that decide which stones are dead when both players pass


class LeaseLost(ObookError):
    """Another player took this game (our lease expired); stop without writing."""


class EngineMismatch(ObookError):
    """The book was built with other rules or keys than this obook's: its statistics would be wrong."""


def new_worker_id(kind: str = "local") -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{kind}:{uuid.uuid4().hex[:8]}"


def move_seed(game_seed: int, move_number: int) -> int:
    """SplitMix64 of (game seed, move number): independent seeds for the moves of a game."""
    z = (game_seed + 0x9E3779B97F4A7C15 * (move_number + 1)) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return (z ^ (z >> 31)) or 1


def max_moves(size: int) -> int:
    return 3 * size * size


def mutation_config(book: q.BookInfo, seconds: float | None = None) -> SearchConfig:
    """The search that mutates: the book's settings, one process, the book's time per move."""
    per_move = book.seconds_per_move if seconds is None else seconds
    return SearchConfig.from_spec(book.search or None, seconds=per_move, processes=1)


def warm_up(policies: tuple[str, ...] = ("heavy", "light")) -> None:
    """Load (or compile) the engine's jitted code once, in a parent process before it starts its
    players (the embedded build's processes, a grid worker's pool), so that no player stalls on the
    compiler while it holds a lease and several do not compile the same code at once."""
    from obook.playout.ownership import stone_status

    for policy in policies:
        position = Position(size=5)
        player = make_player(f"playouts=16,policy={policy},seed=1")
        for _ in range(3):
            position.play(player.genmove(position).move)
        stone_status(position, 8, policy, seed=1)
        player.close()


def check_engine(book: q.BookInfo) -> None:
    if book.engine_version != ENGINE_VERSION:
        raise EngineMismatch(
            f"book {book.name!r} was built with engine version {book.engine_version}, this obook is "
            f"{ENGINE_VERSION}: refusing to add games to it"
        )


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


class SelfPlayer:
    """Plays games of one book for one owner (a local process or a grid worker)."""

    def __init__(self, store: Store, book: q.BookInfo, owner: str | None = None, lease_seconds: float | None = None,
                 player: Player | None = None, seconds: float | None = None, kind: str = "local"):
        from obook.config import settings

        check_engine(book)
        self.store = store
        self.book = book
        self.owner = owner or new_worker_id(kind)
        self.kind = kind
        self.config = mutation_config(book, seconds)
        think = self.config.seconds or 1.0
        self.lease_seconds = lease_seconds or max(settings().lease_seconds, 4 * think + 10)
        self.player = player or make_player(self.config)
        self.stopping = False
        self._replayed: tuple[int, tuple[str, ...], Position] | None = None  # the last position advanced to
        self.heartbeat_seconds = 0.0  # least time between two heartbeats written with a move
        self._prepared: tuple[int, int, object] | None = None  # (game, move number, book pick) counted ahead
        self._last_beat = 0.0

    # ---- leases ---------------------------------------------------------------------------------

    def claim(self, game_id: int | None = None, handoff: str | None = None) -> q.GameRow | None:
        """Take a game's lease: one nobody holds, or ``game_id``; with ``handoff`` (a grid task's
        token) also when that token holds it, which is how a game passes from task to task."""
        self._prepared = None
        with self.store.write() as conn:
            game = None
            if handoff is not None and game_id is not None and q.pass_lease(
                    conn, game_id, handoff, self.owner, self.lease_seconds):
                game = q.get_game(conn, game_id)
            if game is None:
                game = q.claim_game(conn, self.book.id, self.owner, self.lease_seconds, game_id)
            if game is not None:
                q.heartbeat(conn, self.owner, **self._beat(game))
        return game

    def release(self, game: q.GameRow) -> None:
        with self.store.write() as conn:
            q.release_lease(conn, game.id, self.owner)
            q.heartbeat(conn, self.owner, game_id=None, moves="")

    def _beat(self, game: q.GameRow) -> dict:
        return {"host": socket.gethostname(), "pid": os.getpid(), "kind": self.kind,
                "engine_version": ENGINE_VERSION, "book_id": self.book.id, "game_id": game.id,
                "moves": " ".join(game.moves)}

    # ---- one move -------------------------------------------------------------------------------

    def position(self, game: q.GameRow) -> Position:
        """The position after the game's stored moves: the one this player advanced to when the game
        is as it left it (no replay from the empty board at every move), else a replay."""
        cached = self._replayed
        self._replayed = None
        if cached is not None and cached[0] == game.id and cached[1] == game.moves:
            return cached[2]
        return replay(self.book.size, self.book.komi, self.book.superko, game.moves)

    def is_over(self, position: Position) -> bool:
        return position.passes >= 2 or len(position.moves) >= max_moves(self.book.size)

    def choose(self, game: q.GameRow, position: Position) -> Choice:
        """The book move when one beats the threshold, otherwise the mutation player's move. The
        search is counted in the store before it starts (``games.searches``), in the transaction
        that stored the previous move when this player prepared it (``advance(more=True)``)."""
        prepared, self._prepared = self._prepared, None
        if prepared is not None and prepared[:2] == (game.id, len(position.moves)):
            pick = prepared[2]
            if pick is not None:
                return Choice(pick.vertex, BOOK, pick.winrate)
        else:
            with self.store.write() as conn:  # one transaction: the book's statistics, else count the search
                pick = self._book_pick(conn, position)
                if pick is not None:
                    return Choice(pick.vertex, BOOK, pick.winrate)
                q.count_search(conn, game.id)
        self.player.reseed(move_seed(game.seed, len(position.moves)))
        interval = max(1.0, self.lease_seconds / 4)
        cancel = CancelToken()
        result = self.player.genmove(position, on_progress=lambda _r: self._keep_lease(game, cancel),
                                     progress_interval=interval, cancel=cancel)
        if cancel.cancelled:
            if self.stopping:
                raise KeyboardInterrupt
            raise LeaseLost(f"game {game.id}: lease lost while thinking")
        if result.resign:
            return Choice("resign", SEARCH, result.winrate)
        return Choice(position.vertex(result.move), SEARCH, result.winrate)

    def _book_pick(self, conn, position: Position):
        if len(position.moves) >= self.book.depth:
            return None
        return coevolution_move(book_candidates(conn, self.book, position), self.book.threshold, self.book.widening)

    def _keep_lease(self, game: q.GameRow, cancel: CancelToken) -> None:
        """Renew the lease while the search thinks; cancel the search when the lease is lost or
        the player is stopping."""
        with self.store.write() as conn:
            if not q.renew_lease(conn, game.id, self.owner, self.lease_seconds):
                cancel.cancel()
                return
            q.heartbeat(conn, self.owner, **self._beat(game))
        if self.stopping:
            cancel.cancel()

    def advance(self, game: q.GameRow, more: bool = False) -> tuple[q.GameRow, bool]:
        """Play one move of ``game`` (or finish it when it is over). Returns (game as stored now,
        finished?). Raises ``LeaseLost`` when someone else plays this game. ``more``: the caller
        will advance this game again at once, so the transaction storing this move also prepares
        the next one (its book move, or the count of its search): one transaction per move."""
        try:
            position = self.position(game)
        except BookGameError as exc:
            self._abandon(game, f"illegal stored game: {exc}")
            return game, True
        if self.is_over(position):
            return game, self.finish(game, position)
        choice = self.choose(game, position)
        if choice.vertex == "resign":
            loser = "B" if position.to_move == BLACK else "W"
            winner = "W" if loser == "B" else "B"
            return game, self.finish(game, position, Outcome(f"{winner}+R", winner, None))
        position.play(choice.vertex)
        over = self.is_over(position)
        with self.store.statements() as conn:  # each statement is guarded on its own: no transaction needed
            pick = self._book_pick(conn, position) if more and not over else None
            search_next = more and not over and pick is None
            stored = q.append_move(conn, game, self.owner, choice.vertex, choice.origin, self.lease_seconds,
                                   count_search=search_next)
            if stored is None:
                raise LeaseLost(f"game {game.id}: changed by another player before move {game.n_moves + 1}")
            now = time.monotonic()
            if now - self._last_beat >= self.heartbeat_seconds:
                q.heartbeat(conn, self.owner, **self._beat(stored))
                self._last_beat = now
        if over:
            return stored, self.finish(stored, position)
        self._replayed = (stored.id, stored.moves, position)
        if more:
            self._prepared = (stored.id, len(stored.moves), pick)
        return stored, False

    # ---- the end --------------------------------------------------------------------------------

    def outcome(self, game: q.GameRow, position: Position) -> Outcome:
        """Area score with komi after removing the stones that playouts from here find dead."""
        from obook.playout.ownership import score_without_dead, stone_status

        status = stone_status(position, OWNERSHIP_PLAYOUTS, self.config.policy, seed=move_seed(game.seed, 10**6))
        score = float(score_without_dead(position, status))
        if score == 0:
            return Outcome("0", None, 0.0)
        winner = "B" if score > 0 else "W"
        return Outcome(f"{winner}+{abs(score):g}", winner, score)

    def finish(self, game: q.GameRow, position: Position, outcome: Outcome | None = None) -> bool:
        """Close the game and count it; False when it was already closed or is no longer ours."""
        problem = self.inconsistency(game, resigned=outcome is not None, position=position)
        if problem is not None:
            self._abandon(game, problem)
            return True
        outcome = outcome or self.outcome(game, position)
        stats = opening_statistics(self.book.size, self.book.komi, self.book.superko, game.moves, outcome.winner,
                                   self.book.depth)
        with self.store.write() as conn:
            done = q.finish_game(conn, game, self.owner, outcome.result, outcome.winner, outcome.score, stats)
            q.heartbeat(conn, self.owner, game_id=None, moves="")
        if not done:
            raise LeaseLost(f"game {game.id}: finished or taken by another player")
        log.info("game %d finished: %s after %d moves", game.id, outcome.result, game.n_moves)
        return True

    def inconsistency(self, game: q.GameRow, resigned: bool, position: Position | None = None) -> str | None:
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

    def _abandon(self, game: q.GameRow, reason: str) -> None:
        log.error("game %d abandoned: %s", game.id, reason)
        with self.store.write() as conn:
            q.finish_game(conn, game, self.owner, "illegal", None, None, {}, status=ABANDONED)

    def play(self, game: q.GameRow) -> bool:
        """Play a claimed game to its end; True when this player finished it."""
        self.player.new_game()
        while True:
            game, finished = self.advance(game)
            if finished:
                return True


def start_games(store: Store, book: q.BookInfo, target: int, count: int = 1) -> list[int]:
    """Create up to ``count`` self-play games, never more than the book's ``target`` in all."""
    seeds = [int.from_bytes(os.urandom(8), "little") >> 1 for _ in range(count)]
    with store.write() as conn:
        return q.top_up_games(conn, book.id, target, seeds)
