"""One book lookup, whoever asks (``obook lookup``, the service, ``BookPlayer``, self-play), and its
one serialised form.

A lookup is the book's rules applied to a position's statistics rows: the candidates in the
caller's orientation, the usage rule's move (playing from the book) and the coevolution rule's
choice (what self-play would play). Where the rows come from is the caller's: a transaction of the
store (``obook.store.stats.rows_reader``), a cache of them, the service's pool of readers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Sequence

from obook.book.rules import (BETA, BetaSampler, BoardView, Candidate, beta_move, candidates_from_rows,
                              coevolution_move, usage_move)
from obook.go.board import BLACK
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
            candidate.update(usage=c.point == usage, coevolution=c.point == chosen)
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
