"""Playing whole games of Mines: the player's options, one game, many games and their summary.

``Player`` decides each move with one of two solvers: ``bsr-uct`` searches with an
``obook.mines.engine.BsrUct`` (and the exact belief when it asks for shortcuts or candidates); ``greedy``
and ``lookahead`` click a cell the exact probabilities (``obook.mines.frontier``) prove safe, else guess
with ``obook.mines.guesses`` (the least likely mine, or a one-click lookahead among the near-safest);
``endgame`` is lookahead whose guesses are the exact optimum (``obook.mines.endgame``) once few layouts are
left. ``play_games`` is the loop of ``obook mines play``, ``obook mines bench`` and the benchmarks.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np

from obook.errors import ObookError
from obook.mines.engine import BsrUct, SamplerGaveUp, SearchResult
from obook.mines.frontier import COUNT_INCONSISTENT, COUNT_OK, MINE, frontier_probabilities, no_fixed_cells
from obook.mines.endgame import endgame_choice
from obook.mines.game import PLAYING, UNKNOWN, WON, MinesGame
from obook.mines.guesses import greedy_choice, lookahead_choice
from obook.mines.samplers import EXACT_SAMPLED, exact_probabilities, sample_layouts
from obook.stats import wilson_interval

PLAYER_MAX_TRIES = 2_000_000  # rejection draws per position before a player falls back (about 1 s)
SOLVERS = ("bsr-uct", "greedy", "lookahead", "endgame")
STANDARD_BSR_UCT = {"sampler": "exact", "belief": "root", "policy": "safe-first", "shortcut": True,
                    "candidates": 8, "reward": "win", "c_uct": 0.3, "first": "center"}  # strongest BSR-UCT
STANDARD_SIMS = {"beginner": 20000, "intermediate": 20000, "expert": 3000}  # its simulations per move
# first click of the bench (0-based row, col): the best one for this rule in MineSweeperProb's table of
# win rate by first move (b1f6c1c4/MineSweeperProb, README), as measured here too (docs/mines.md)
STANDARD_FIRST = {"beginner": (2, 2), "intermediate": (2, 2), "expert": (3, 3)}
PUBLISHED_BEST = {"beginner": 0.9717, "intermediate": 0.8908, "expert": 0.5345}  # PSEQ-D256, same rule
WARM_UP_SEED = 10**9  # a throwaway game, so that think times exclude loading compiled code
FALLBACK_LAYOUTS = 4000  # greedy: layouts sampled when the exact count fails (never seen on standard boards)


@dataclass
class PlayerConfig:
    """How the player chooses moves.

    ``max_tries``: layouts the rejection sampler draws before giving up on a position (the move is then
    searched with the exact sampler and counted as a fallback).
    ``first``: ``search`` (let BSR-UCT choose the first click), ``center``, ``corner`` or a cell index.
    ``shortcut``: reveal a cell the exact belief proves safe without searching (never loses value: the
    cell must be revealed sooner or later and its count only adds information). ``candidates``: when > 0,
    the root considers only that many cells least likely to hold a mine (exact belief). ``reward``:
    ``score`` (the paper) or ``win``. ``solver``: ``bsr-uct`` (the search, every option above),
    ``greedy`` (``greedy_choice``), ``lookahead`` (``lookahead_choice``) or ``endgame`` (``lookahead_choice``
    until at most ``ENDGAME_LAYOUTS`` layouts are left, then ``endgame_choice``); these three only read ``first``.
    """

    solver: str = "bsr-uct"
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
    """Plays Mines under a ``PlayerConfig``: BSR-UCT or the greedy solver."""

    def __init__(self, p: int, q: int, n_mines: int, config: PlayerConfig):
        self.p, self.q, self.n_mines, self.config = p, q, n_mines, config
        if config.solver not in SOLVERS:
            raise ObookError(f"unknown solver {config.solver!r}; choose one of {', '.join(SOLVERS)}")
        if (config.sims is None) == (config.seconds is None):
            raise ObookError("give exactly one budget: --sims or --seconds")
        self.engine = BsrUct(p, q, n_mines, config.sampler, config.policy, config.belief, config.c_uct,
                             config.reward, config.max_tries)
        self.fixed_first = first_click_cell(config.first, p, q)
        self._fallbacks: dict[str, BsrUct] = {}
        self.fallbacks = 0  # moves of the current game searched with a fallback sampler
        self.reservoir_moves = 0  # moves of the current game whose exact draws came from a reservoir
        self._proved_safe: list[int] = []  # greedy: cells the last count proved safe, still to click
        self._proved_mines = no_fixed_cells(p * q)  # greedy: MINE on the cells proved to hold one
        self._proved_for: MinesGame | None = None  # the game both belong to

    def choose(self, game: MinesGame, seed: int) -> tuple[int, SearchResult | None]:
        """The next click for ``game`` and the search behind it (None when no search was needed).

        When the exact enumeration is too long (huge frontiers on expert boards) the shortcut and the
        candidates read the count of ``obook.mines.frontier`` and the move is searched with Metropolis with
        inheritance; when rejection gives up (a position whose consistent
        layouts are too rare to hit) it is searched with the exact sampler. ``self.fallbacks`` counts both.
        """
        cfg = self.config
        obs = game.obs
        if game.revealed == 0 and self.fixed_first is not None:
            return self.fixed_first, None
        if cfg.solver != "bsr-uct":
            return self._greedy(game, seed), None
        ex = None
        allowed = None
        engine = self.engine
        if game.revealed > 0 and (cfg.shortcut or cfg.candidates > 0 or engine.exact):
            ex = engine.prepare(obs, seed)
            if ex is not None:
                self.reservoir_moves += ex.status == EXACT_SAMPLED
            prob = None
            if ex is not None and (cfg.shortcut or cfg.candidates > 0):
                prob = exact_probabilities(ex, self.n_mines, game.n)
            elif cfg.shortcut or cfg.candidates > 0:  # the enumeration gave up: count instead
                status, counted = frontier_probabilities(obs, self.n_mines, engine.nbr, engine.deg)
                prob = counted if status == COUNT_OK else None
            if prob is not None:
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

    def _greedy(self, game: MinesGame, seed: int) -> int:
        """Greedy, lookahead or endgame on the exact probabilities; every cell they prove safe is queued, so
        that the count runs again only when the queue is empty (a proved-safe cell stays safe). The endgame
        falls back on lookahead while too many layouts are left or when its recursion gives up."""
        if self._proved_for is not game:
            self._new_game(game)
        while self._proved_safe:
            cell = self._proved_safe.pop()
            if game.obs[cell] == UNKNOWN:
                return cell
        obs = game.obs
        engine = self.engine
        status, prob = frontier_probabilities(obs, self.n_mines, engine.nbr, engine.deg, self._proved_mines)
        if status == COUNT_INCONSISTENT and (self._proved_mines == MINE).any():  # a rounding-made proof
            self._proved_mines[:] = no_fixed_cells(game.n)
            status, prob = frontier_probabilities(obs, self.n_mines, engine.nbr, engine.deg)
        if status == COUNT_INCONSISTENT:
            raise ObookError(f"no layout of {self.n_mines} mines is consistent with the revealed counts")
        if status != COUNT_OK:
            self.fallbacks += 1
            layouts = sample_layouts(obs, self.p, self.q, self.n_mines, "metropolis-inherit", FALLBACK_LAYOUTS,
                                     seed=seed, trials=20, burn_in=2000)
            prob = layouts.mean(axis=0)
        if status == COUNT_OK:
            self._proved_mines[(obs == UNKNOWN) & (prob == 1.0)] = MINE
        safe = np.flatnonzero((obs == UNKNOWN) & (prob == 0.0))
        if status == COUNT_OK and safe.size:
            self._proved_safe = [int(c) for c in safe[::-1]]
            return self._proved_safe.pop()
        if self.config.solver == "endgame" and status == COUNT_OK:
            exact = endgame_choice(obs, self.n_mines, engine.nbr, engine.deg, self._proved_mines)
            if exact is not None:
                return exact[0]
        if self.config.solver in ("lookahead", "endgame") and status == COUNT_OK:
            return lookahead_choice(obs, prob, self.n_mines, engine.nbr, engine.deg, self._proved_mines)
        return greedy_choice(obs, prob, engine.deg, engine.nbr)

    def _new_game(self, game: MinesGame) -> None:
        self._proved_for, self._proved_safe = game, []
        self._proved_mines[:] = no_fixed_cells(game.n)

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
        self._new_game(game)
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
