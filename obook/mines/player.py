"""Playing whole games of Mines with BSR-UCT: the player's options, one game, many games and their summary.

``Player`` decides each move with an ``obook.mines.engine.BsrUct`` (and the exact belief when it asks for
shortcuts or candidates); ``play_games`` is the loop of ``obook mines play`` and the benchmarks.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from obook.errors import ObookError
from obook.mines.engine import BsrUct, SamplerGaveUp, SearchResult
from obook.mines.game import PLAYING, UNKNOWN, WON, MinesGame
from obook.mines.samplers import EXACT_SAMPLED, exact_probabilities
from obook.stats import wilson_interval

PLAYER_MAX_TRIES = 2_000_000  # rejection draws per position before a player falls back (about 1 s)


@dataclass
class PlayerConfig:
    """How the player chooses moves.

    ``max_tries``: layouts the rejection sampler draws before giving up on a position (the move is then
    searched with the exact sampler and counted as a fallback).
    ``first``: ``search`` (let BSR-UCT choose the first click), ``center``, ``corner`` or a cell index.
    ``shortcut``: reveal a cell the exact belief proves safe without searching (never loses value: the
    cell must be revealed sooner or later and its count only adds information). ``candidates``: when > 0,
    the root considers only that many cells least likely to hold a mine (exact belief). ``reward``:
    ``score`` (the paper) or ``win``.
    """

    sampler: str = "rejection"
    policy: str = "uniform"
    belief: str = "node"
    sims: int | None = 1000
    seconds: float | None = None
    c_uct: float = 1.0
    first: str | int = "search"
    shortcut: bool = False
    candidates: int = 0
    reward: str = "score"
    max_tries: int = PLAYER_MAX_TRIES


@dataclass
class GameRecord:
    """One finished game."""

    seed: int
    score: float
    won: bool
    moves: int
    searches: int
    simulations: int
    think_seconds: float
    first_cell: int
    clicks: list[int] = field(default_factory=list)
    fallback_searches: int = 0
    reservoir_moves: int = 0


def first_click_cell(first: str | int, p: int, q: int) -> int | None:
    """The fixed first click named by ``first``, or None when the search should choose it."""
    if isinstance(first, int):
        if not 0 <= first < p * q:
            raise ObookError(f"first click {first} is off the {p}x{q} board")
        return first
    if first == "search":
        return None
    if first == "center":
        return (p // 2) * q + q // 2
    if first == "corner":
        return 0
    raise ObookError(f"first click {first!r}: use search, center, corner or ROW,COL")


class Player:
    """Plays Mines with BSR-UCT under a ``PlayerConfig``."""

    def __init__(self, p: int, q: int, n_mines: int, config: PlayerConfig):
        self.p, self.q, self.n_mines, self.config = p, q, n_mines, config
        if (config.sims is None) == (config.seconds is None):
            raise ObookError("give exactly one budget: --sims or --seconds")
        self.engine = BsrUct(p, q, n_mines, config.sampler, config.policy, config.belief, config.c_uct,
                             config.reward, config.max_tries)
        self.fixed_first = first_click_cell(config.first, p, q)
        self._fallbacks: dict[str, BsrUct] = {}
        self.fallbacks = 0  # moves of the current game searched with a fallback sampler
        self.reservoir_moves = 0  # moves of the current game whose exact draws came from a reservoir

    def choose(self, game: MinesGame, seed: int) -> tuple[int, SearchResult | None]:
        """The next click for ``game`` and the search behind it (None when no search was needed).

        When the exact enumeration is too long (huge frontiers on expert boards) the move is searched
        with Metropolis with inheritance instead; when rejection gives up (a position whose consistent
        layouts are too rare to hit) it is searched with the exact sampler. ``self.fallbacks`` counts both.
        """
        cfg = self.config
        obs = game.obs
        if game.revealed == 0 and self.fixed_first is not None:
            return self.fixed_first, None
        ex = None
        allowed = None
        engine = self.engine
        if game.revealed > 0 and (cfg.shortcut or cfg.candidates > 0 or engine.exact):
            ex = engine.prepare(obs, seed)
            if ex is not None:
                self.reservoir_moves += ex.status == EXACT_SAMPLED
            if ex is not None and (cfg.shortcut or cfg.candidates > 0):
                prob = exact_probabilities(ex, self.n_mines, game.n)
                hidden = np.flatnonzero(obs == UNKNOWN)
                if cfg.shortcut:
                    sure = hidden[prob[hidden] <= 1e-12]
                    if sure.size:
                        return int(sure[0]), None
                if cfg.candidates > 0 and hidden.size > cfg.candidates:
                    rng = np.random.default_rng(seed)
                    order = hidden[np.lexsort((rng.random(hidden.size), np.round(prob[hidden], 12)))]
                    allowed = np.zeros(game.n, np.uint8)
                    allowed[order[: cfg.candidates]] = 1
            if ex is None and engine.exact:
                engine = self._fallback("metropolis-inherit")
        try:
            result = engine.search(obs, cfg.sims, cfg.seconds, seed, allowed, ex if engine is self.engine else None)
        except SamplerGaveUp:
            result = self._fallback("exact").search(obs, cfg.sims, cfg.seconds, seed, allowed)
        return result.cell, result

    def _fallback(self, sampler: str) -> BsrUct:
        self.fallbacks += 1
        if sampler not in self._fallbacks:
            cfg = self.config
            self._fallbacks[sampler] = BsrUct(self.p, self.q, self.n_mines, sampler, cfg.policy, "root", cfg.c_uct,
                                              cfg.reward)
        return self._fallbacks[sampler]

    def play(self, seed: int) -> GameRecord:
        """Play one game whose layout and search randomness come from ``seed``."""
        game = MinesGame(self.p, self.q, self.n_mines, seed=seed)
        searches = sims = 0
        self.fallbacks = self.reservoir_moves = 0
        think = 0.0
        first = -1
        move = 0
        while game.status == PLAYING:
            t0 = time.perf_counter()
            cell, result = self.choose(game, int(np.random.SeedSequence([seed, move, 7]).generate_state(1)[0]))
            think += time.perf_counter() - t0
            if result is not None:
                searches += 1
                sims += result.simulations
            if first < 0:
                first = cell
            game.click(cell)
            move += 1
        return GameRecord(seed, game.score, game.status == WON, move, searches, sims, think, first,
                          list(game.clicks), self.fallbacks, self.reservoir_moves)


def summarise(records: list[GameRecord]) -> dict:
    """Mean score, win rate with its 95% interval, think time per move and per game."""
    g = len(records)
    wins = sum(r.won for r in records)
    moves = sum(r.moves for r in records)
    think = sum(r.think_seconds for r in records)
    lo, hi = wilson_interval(wins, g)
    scores = np.array([r.score for r in records]) if records else np.zeros(0)
    firsts: dict[int, int] = {}
    for r in records:
        firsts[r.first_cell] = firsts.get(r.first_cell, 0) + 1
    return {
        "games": g,
        "wins": wins,
        "win_rate": wins / g if g else 0.0,
        "win_rate_ci95": [lo, hi],
        "mean_score": float(scores.mean()) if g else 0.0,
        "mean_score_se": float(scores.std(ddof=1) / math.sqrt(g)) if g > 1 else 0.0,
        "moves": moves,
        "searches": sum(r.searches for r in records),
        "simulations": sum(r.simulations for r in records),
        "seconds_per_move": think / moves if moves else 0.0,
        "seconds_per_game": think / g if g else 0.0,
        "first_clicks": {str(k): v for k, v in sorted(firsts.items())},
        "fallback_searches": sum(r.fallback_searches for r in records),
        "reservoir_moves": sum(r.reservoir_moves for r in records),
    }


def play_games(p: int, q: int, n_mines: int, config: PlayerConfig, games: int, seed: int = 0,
               player: Player | None = None) -> list[GameRecord]:
    """Play ``games`` games with seeds ``seed, seed+1, ...`` (so runs are reproducible and comparable)."""
    if games < 1:
        raise ObookError(f"number of games {games} must be at least 1")
    player = player or Player(p, q, n_mines, config)
    return [player.play(seed + i) for i in range(games)]
