"""What a build asks of a book: its algorithm (a new book's: ``rules.NEW_BOOK_ALGORITHM``) and the
play budget a search-valued book is built for.

A minimax book is worth building for one play budget: P playouts a move, that of the engine that
will play from it and of the opponent model its "reach" grows against (``--play-playouts``). Each of
its nodes is a deep search of S = 30 x P playouts (``--search playouts=S``), the factor the ceiling
benchmark measures a book's room with (``docs/book.md``, "Where people play"). ``obook build --for``
takes that budget in the user's words (``0.25s`` or ``5000``) and derives both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from obook.book.expansion import play_playouts
from obook.book.kinds import book_kind
from obook.book.rules import NEW_BOOK_ALGORITHM
from obook.errors import ObookError
from obook.search.config import SearchConfig
from obook.store.books import BookInfo, find_book
from obook.store.db import Store

# Playouts a second of the default engine in the opening, one process: `benchmarks/playouts_at_time.py
# --seconds 0.25` measured a median of 5,056 a move over the first 10 moves on the project's 2-core
# machine (2026-11-28). A constant, not a calibration at build time: the same `--for` then builds
# the same book on any machine and under any load (its expansions' seeds are deterministic); on a
# faster or slower machine give the budget in playouts.
PLAYOUTS_PER_SECOND = 20_000
DEEP_FACTOR = 30  # S = 30 x P: each node searches as the ceiling benchmark's deep player does
DEFAULT_PLAY_BUDGET = "0.25s"  # a new minimax book given neither --for nor the expert flags
EXPERT_FLAGS = ("search", "play_playouts", "seconds_per_move")  # what --for derives, each overriding it


@dataclass(frozen=True)
class PlayBudget:
    """A play budget, as asked (``text``) and in playouts: P a move of play, S a node's search."""

    text: str
    play_playouts: int  # P
    search_playouts: int  # S = DEEP_FACTOR x P

    def describe(self) -> str:
        seconds = f"{self.text} a move, " if self.text.endswith("s") else ""
        return f"{seconds}{self.play_playouts:,} playouts a move"


def parse_play_budget(text: str) -> PlayBudget:
    """The budget ``--for`` names: seconds a move (``0.25s``: P = seconds x PLAYOUTS_PER_SECOND) or
    playouts a move (``5000``); S = DEEP_FACTOR x P. A clear ``ObookError`` for anything else."""
    raw = str(text).strip()
    match = re.fullmatch(r"(-?(?:\d+(?:\.\d*)?|\.\d+))\s*(s?)", raw)
    if match is None:
        raise ObookError(f"--for {text!r}: give the play budget the book is for, in seconds a move (0.25s) "
                         "or in playouts a move (5000)")
    number, in_seconds = match.groups()
    if in_seconds:
        playouts = round(float(number) * PLAYOUTS_PER_SECOND)
    elif "." in number:
        raise ObookError(f"--for {text!r}: playouts are a whole number; for seconds write {number}s")
    else:
        playouts = int(number)
    if float(number) <= 0 or playouts < 1:
        raise ObookError(f"--for {text!r}: the play budget must be positive (at least one playout a move; "
                         f"{PLAYOUTS_PER_SECOND:,} playouts a second)")
    return PlayBudget(f"{number}s" if in_seconds else number, playouts, DEEP_FACTOR * playouts)


def build_settings(store: Store, name: str, given: dict,
                   budget: PlayBudget | None = None) -> tuple[dict, PlayBudget | None]:
    """The settings a build of book ``name`` asks ``ensure_book`` for (``BookSettings`` fields), from
    the options the user ``given``, and the play budget they come from (None: none).

    The algorithm is the one asked for, else the existing book's (a book keeps its algorithm), else
    NEW_BOOK_ALGORITHM. A search-valued book takes ``budget`` (``--for``), or for a new book given
    none of the EXPERT_FLAGS, DEFAULT_PLAY_BUDGET: a deep search of S playouts at each node, P
    playouts a move of play, searches by playouts (no time); an expert flag given overrides what the
    budget derives (``search`` options are applied over ``playouts=S``). A budget for a statistical
    book is an error."""
    with store.read() as conn:
        existing = find_book(conn, name)
    algorithm = given.get("algorithm") or (existing.algorithm if existing is not None else NEW_BOOK_ALGORITHM)
    settings = {**given, "algorithm": algorithm}
    if not book_kind(algorithm).has_play_budget:
        if budget is not None:
            raise ObookError(f"--for is the play budget of a minimax book; book {name!r} is {algorithm} "
                             "(its mutation player's time is --seconds-per-move)")
        return settings, None
    if budget is None and (existing is not None or any(k in given for k in EXPERT_FLAGS)):
        return settings, None
    budget = budget or parse_play_budget(DEFAULT_PLAY_BUDGET)
    search = f"playouts={budget.search_playouts}" + (f",{given['search']}" if given.get("search") else "")
    return {**settings, "search": search, "play_playouts": given.get("play_playouts", budget.play_playouts),
            "seconds_per_move": given.get("seconds_per_move", 0.0)}, budget


def play_search(book: BookInfo) -> SearchConfig:
    """The search of the play ``book`` is for (the engine to play it with): a minimax book's search
    at its play budget (the engine its reach models), a statistical book's mutation player."""
    config = SearchConfig.from_spec(book.search or None)
    if book_kind(book).has_play_budget:
        return config.replace(playouts=play_playouts(book), seconds=0.0)
    return config.replace(seconds=book.seconds_per_move)
