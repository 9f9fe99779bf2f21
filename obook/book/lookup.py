"""One book lookup, whoever asks (``obook lookup``, the service, ``BookPlayer``, self-play), and its
one serialised form.

A lookup is the book's rules applied to a position's statistics rows: the candidates in the
caller's orientation, the usage rule's move (playing from the book) and the coevolution rule's
choice (what self-play would play). Where the rows come from is the caller's: a transaction of the
store (``obook.store.stats.rows_reader``), a cache of them, the service's pool of readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from obook.book.rules import (BETA, BetaSampler, BoardView, Candidate, beta_move, candidates_from_rows,
                              coevolution_move, usage_move)
from obook.go.board import BLACK, PASS
from obook.stats import wilson_interval
from obook.store.books import BookInfo
from obook.store.stats import ReadRows


class LookedUpPosition(BoardView, Protocol):
    """What a lookup needs of a position: ``Position``, or the service's lighter replay of one."""

    moves: Sequence[tuple[int, int]]
    to_move: int

    def canonical(self) -> tuple[int, int]: ...


@dataclass
class BookLookup:
    book: BookInfo
    position: LookedUpPosition
    candidates: list[Candidate] = field(default_factory=list)
    usage: Candidate | None = None  # the usage rule's move (playing from the book)
    coevolution: Candidate | None = None  # what self-play would play (None: it would mutate, or samples)

    @property
    def in_book(self) -> bool:
        return bool(self.candidates)

    @property
    def games(self) -> int:
        return sum(c.games for c in self.candidates)


def book_choice(book: BookInfo, candidates: list[Candidate], rng: BetaSampler | None = None) -> Candidate | None:
    """What self-play under the book's algorithm plays among ``candidates`` (None: mutate). A BETA
    book samples from ``rng``; without one (a lookup, which shows the book rather than plays it)
    its choice is random, so there is none to show: ``None``."""
    if book.algorithm == BETA:
        return beta_move(candidates, rng, book.widening) if rng is not None else None
    return coevolution_move(candidates, book.threshold, book.widening)


def book_lookup(book: BookInfo, position: LookedUpPosition, read_rows: ReadRows, min_games: int = 1,
                rng: BetaSampler | None = None) -> BookLookup:
    """The book's answer in ``position``; the usage rule ignores moves with fewer than ``min_games``;
    ``rng``: the random numbers of a BETA book's choice (self-play gives them)."""
    key, symmetry = position.canonical()
    candidates = candidates_from_rows(position, symmetry, read_rows(key))
    return BookLookup(book, position, candidates, usage_move(candidates, min_games),
                      book_choice(book, candidates, rng))


def lookup_document(found: BookLookup, brief: bool = False) -> dict:
    """The lookup as plain data: the service's ``LookupOut`` fields (without the stones, which the
    service draws from its own replay), or with ``brief`` the smaller form of ``obook lookup --json``
    (no size, move number, total of games, nor per-candidate marks)."""
    position = found.position
    usage = found.usage.point if found.usage is not None else None
    chosen = found.coevolution.point if found.coevolution is not None else None
    candidates = []
    for c in found.candidates:
        candidate = {"move": c.vertex, "games": c.games, "wins": c.wins, "draws": c.draws,
                     "winrate": round(c.winrate, 6), "share": round(c.share, 6)}
        if not brief:
            low, high = wilson_interval(c.points, c.games)
            candidate.update(usage=c.point == usage, coevolution=c.point == chosen,
                             winrate_ci95=[round(low, 6), round(high, 6)])
        candidates.append(candidate)
    document = {
        "book": found.book.name,
        "size": found.book.size,
        "moves": [position.vertex(p) for _, p in position.moves],
        "to_move": "B" if position.to_move == BLACK else "W",
        "move_number": len(position.moves) + 1,
        "in_book": found.in_book,
        "games": found.games,
        "candidates": candidates,
        "usage_move": found.usage.vertex if found.usage is not None else None,
        "coevolution_move": found.coevolution.vertex if found.coevolution is not None else None,
    }
    if brief:
        for key in ("size", "move_number", "games"):
            del document[key]
    return document


# ---- minimax books ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MinimaxCandidate:
    """A book move of a minimax book in the caller's orientation, from the mover's side."""

    point: int
    vertex: str
    value: float  # minimax value (win rate of the player making the move)
    lcb: float
    ucb: float
    prior: float  # its share of the visits of a search of the position


@dataclass
class MinimaxLookup:
    book: BookInfo
    position: LookedUpPosition
    candidates: list[MinimaxCandidate] = field(default_factory=list)  # best lower bound first
    own_value: float | None = None  # the best move outside the book (None: position not in the book)
    own_move: str | None = None  # that move
    value: float | None = None  # the position's minimax value, player to move
    lcb: float | None = None
    ucb: float | None = None
    usage: MinimaxCandidate | None = None  # what playing from the book plays (None: leave the book)

    @property
    def in_book(self) -> bool:
        return bool(self.candidates)


ReadNode = Callable[[int], "tuple[object, dict] | None"]  # key -> (StoredNode, children's Bounds) or None


def minimax_lookup(book: BookInfo, position: LookedUpPosition, read_node: ReadNode) -> MinimaxLookup:
    """A minimax book's answer in ``position``: its book moves with their bounds, the value of
    leaving the book, and the move playing from the book takes (``minimax.book_move``)."""
    from obook.book.minimax import book_move, edge_views, own_bounds

    found = MinimaxLookup(book, position)
    key, symmetry = position.canonical()
    read = read_node(key)
    if read is None:
        return found
    stored, children = read
    node = stored.node
    own = own_bounds(node)
    best_new = node.best_new()
    found.own_value = own.value
    found.own_move = (position.vertex(PASS if best_new.move == PASS else position.from_canonical(best_new.move, symmetry))
                      if best_new is not None else None)
    found.value, found.lcb, found.ucb = stored.bounds.value, stored.bounds.lcb, stored.bounds.ucb
    chosen = book_move(node, children)
    for e in edge_views(node, children):
        point = position.from_canonical(e.move, symmetry)
        if not position.is_legal(point):
            continue
        candidate = MinimaxCandidate(point, position.vertex(point), e.value, e.lcb, e.ucb, e.prior)
        found.candidates.append(candidate)
        if chosen is not None and e.move == chosen.move:
            found.usage = candidate
    return found


def minimax_document(found: MinimaxLookup) -> dict:
    position = found.position
    return {
        "book": found.book.name,
        "algorithm": found.book.algorithm,
        "size": found.book.size,
        "moves": [position.vertex(p) for _, p in position.moves],
        "to_move": "B" if position.to_move == BLACK else "W",
        "move_number": len(position.moves) + 1,
        "in_book": found.in_book,
        "value": found.value, "lcb": found.lcb, "ucb": found.ucb,
        "own_value": found.own_value, "own_move": found.own_move,
        "candidates": [{"move": c.vertex, "value": round(c.value, 6), "lcb": round(c.lcb, 6), "ucb": round(c.ucb, 6),
                        "prior": round(c.prior, 6), "usage": found.usage is not None and c.point == found.usage.point}
                       for c in found.candidates],
        "usage_move": found.usage.vertex if found.usage is not None else None,
    }
