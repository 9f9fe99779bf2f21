"""One book lookup, whoever asks (``obook lookup``, the service, ``BookPlayer``, self-play), and its
serialised forms: the document (``lookup_document``, ``minimax_document``; the service's common
form, ``minimax_answer_document``) and the text of ``obook lookup`` (``describe_lookup``,
``describe_minimax_lookup``). Which of them a book's lookups take is its kind's choice
(``obook.book.kinds``).

A lookup is the book's rules applied to a position's statistics rows: the candidates in the
caller's orientation, the usage rule's move (playing from the book) and the coevolution rule's
choice (what self-play would play). Where the rows come from is the caller's: a transaction of the
store (``obook.store.stats.rows_reader``), a cache of them, the service's pool of readers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable, NamedTuple, Protocol, Sequence

import numpy as np

from obook.book.minimax import (DEFAULT_PLAY_CHOICE, book_edges, check_play_choice, chosen_edge, own_bounds_of,
                                searched_edge, stored_best_new, stored_own_prior)
from obook.book.rules import (
    BetaSampler,
    BoardView,
    Candidate,
    candidates_from_rows,
    self_play_rule,
    usage_move,
)
from obook.errors import IllegalMoveError, ObookError
from obook.go.board import BLACK, PASS, WHITE
from obook.go.position import _REASONS, COLOR_NAMES
from obook.go.replay import NO_ERROR, replay
from obook.go.symmetry import untransform_point
from obook.go.vertex import COLUMNS, format_vertex, parse_vertex, point_of
from obook.search.report import LCB_Z
from obook.stats import wilson_interval
from obook.store.books import BookInfo
from obook.store.stats import ReadRows


class LookedUpPosition(BoardView, Protocol):
    """What a lookup needs of a position: ``Position``, or the service's lighter replay of one."""

    moves: Sequence[tuple[int, int]]
    to_move: int

    def canonical(self) -> tuple[int, int]: ...


@dataclass(frozen=True)
class ReplayedPosition:
    """What a lookup needs of the position after some moves, without its board: a board carries
    its superko history (40 kB on 9x9), this well under 1 kB, so the service keeps thousands. It
    has the few methods of ``Position`` that ``book_lookup``, ``minimax_lookup`` and the views call.

    Its fields are ints, strings and tuples of them, which Python's garbage collector stops
    tracking: a full cache adds one tracked object per position, not hundreds, and the collector's
    pauses (the service's worst latencies) do not grow with the cache."""

    size: int
    moves: tuple[tuple[int, int], ...]  # (color, point), as Position.moves
    to_move: int
    key: int  # canonical key
    symmetry: int  # the symmetry taking this position to its canonical orientation
    legal: int  # bit p set: point p is legal for the side to move
    stones: tuple[tuple[str, str, int], ...]  # (vertex, color, move number), by move number

    def canonical(self) -> tuple[int, int]:
        return self.key, self.symmetry

    def is_legal(self, point: int) -> bool:
        return point == PASS or bool(self.legal >> point & 1)

    def from_canonical(self, point: int, symmetry: int) -> int:
        return untransform_point(point, symmetry, self.size)

    def vertex(self, point: int) -> str:
        name = _vertex_names(self.size).get(point)
        return name if name is not None else format_vertex(point, self.size)  # off the board: its error


@lru_cache(maxsize=None)
def _vertex_points(size: int) -> dict[str, int]:
    """Every vertex of the board as written upper-case ("E5", "PASS"), and its point."""
    points = {f"{COLUMNS[col]}{row + 1}": point_of(col, row, size) for col in range(size) for row in range(size)}
    points["PASS"] = PASS
    return points


@lru_cache(maxsize=None)
def _vertex_names(size: int) -> dict[int, str]:
    return {point: format_vertex(point, size) for point in _vertex_points(size).values()}


def replay_moves(size: int, superko: bool, moves: Sequence[str]) -> ReplayedPosition:
    """The position after ``moves`` (vertices or "pass", alternating from Black) in one compiled
    replay (``obook.go.replay``): the lookups' path, with no numba call per move nor per point.
    A bad move raises ``ObookError`` with ``obook.book.keys.replay``'s message: "move 3 (E5):
    illegal move B E5: the point is occupied"; the first bad move is named, whether the rules
    or the vertex's spelling reject it."""
    table = _vertex_points(size)
    words = list(moves)
    points = [table.get(word.upper()) for word in words]
    spelling = None  # (index, message) of the first word that is no vertex of the board
    if None in points:
        for index, point in enumerate(points):
            if point is None:
                try:
                    points[index] = parse_vertex(words[index], size)  # "e05", " E5": still a vertex
                except IllegalMoveError as exc:
                    spelling = (index, str(exc))
                    del points[index:]
                    break
    found = replay(size, superko, points)
    if found.error != NO_ERROR:
        index = found.error
        color = BLACK if index % 2 == 0 else WHITE
        raise ObookError(f"move {index + 1} ({words[index]}): illegal move {COLOR_NAMES[color]} "
                         f"{format_vertex(points[index], size)}: {_REASONS[found.reason]}")
    if spelling is not None:
        raise ObookError(f"move {spelling[0] + 1} ({words[spelling[0]]}): {spelling[1]}")
    names = _vertex_names(size)
    stones = []
    for color, name in ((BLACK, "B"), (WHITE, "W")):
        for point in np.flatnonzero(found.color == color).tolist():
            stones.append((names[point], name, int(found.placed[point])))
    stones.sort(key=lambda s: s[2])
    legal = int.from_bytes(np.packbits(found.legal, bitorder="little").tobytes(), "little")
    return ReplayedPosition(size, tuple((BLACK if i % 2 == 0 else WHITE, p) for i, p in enumerate(points)),
                            found.to_move, int(found.keys[-1]), int(found.symmetries[-1]), legal, tuple(stones))


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
    return self_play_rule(book).choose(candidates, book, rng)


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
                             winrate_ci95=[round(low, 6), round(high, 6)],
                             score_mean=round(c.score_mean, 3) if c.score_mean is not None else None)
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


def describe_lookup(found: BookLookup) -> list[str]:
    """A statistical book's answer as ``obook lookup`` prints it under the position's lines."""
    book = found.book
    if not found.in_book:
        return ["  out of book: the population has no game through this position"]
    lines = [f"  {'move':>5} {'games':>7} {'wins':>7} {'draws':>6} {'win rate':>9} {'share of wins':>14} "
             f"{'mean score':>11}"]
    for c in found.candidates:
        marks = []
        if found.usage is not None and c.point == found.usage.point:
            marks.append("usage rule")
        if found.coevolution is not None and c.point == found.coevolution.point:
            marks.append(f"{book.algorithm.upper()} book move")
        score = f"{c.score_mean:+.1f}" if c.score_mean is not None else "-"
        lines.append(f"  {c.vertex:>5} {c.games:>7} {c.wins:>7} {c.draws:>6} {100 * c.winrate:>8.1f}% "
                     f"{100 * c.share:>13.1f}% {score:>11}{'   <- ' + ', '.join(marks) if marks else ''}")
    if found.usage is None:
        lines.append("  usage rule: no move has won a game here")
    note = self_play_rule(book).lookup_note(book, found.coevolution)
    if note:
        lines.append(f"  {note}")
    return lines


# ---- minimax books ------------------------------------------------------------------------------------


class MinimaxCandidate(NamedTuple):
    """A book move of a minimax book in the caller's orientation, from the mover's side (a named
    tuple: made for every book move of every lookup, it costs a third of a frozen dataclass)."""

    point: int
    vertex: str
    value: float  # minimax value (win rate of the player making the move)
    lcb: float
    ucb: float
    prior: float  # its share of the visits of a search of the position
    visits: int = 0  # of the search behind the value of the position it leads to
    score_mean: float | None = None  # the mover's mean final score in the search of the position it leads to
    backed_up_score: float | None = None  # the mover's score on the line of ``value`` (None: not known)


@dataclass
class MinimaxLookup:
    book: BookInfo
    position: LookedUpPosition
    candidates: list[MinimaxCandidate] = field(default_factory=list)  # best value first
    own_value: float | None = None  # the best move outside the book (None: position not in the book)
    own_move: str | None = None  # that move
    own_point: int | None = None  # that move as a point of the position looked up (None: none, or illegal here)
    own_lcb: float | None = None  # the bounds of ``own_value``
    own_ucb: float | None = None
    own_visits: int | None = None  # of the search behind ``own_value`` (0: no move outside the book)
    playouts: int | None = None  # of the position's own search
    score_mean: float | None = None  # the player to move's mean final score in that search (None: not measured)
    value: float | None = None  # the position's minimax value, player to move
    backed_up_score: float | None = None  # the player to move's score on the line of ``value`` (None: not known)
    lcb: float | None = None
    ucb: float | None = None
    usage: MinimaxCandidate | None = None  # what playing from the book plays (None: leave the book)

    @property
    def in_book(self) -> bool:
        return bool(self.candidates)


ReadNode = Callable[[int], "tuple[object, dict] | None"]  # key -> (NodeRow, children's bounds) or None


def minimax_lookup(book: BookInfo, position: LookedUpPosition, read_node: ReadNode,
                   choice: str = DEFAULT_PLAY_CHOICE) -> MinimaxLookup:
    """A minimax book's answer in ``position``: its book moves with their bounds, the value of
    leaving the book, and the move playing from the book takes: by ``choice`` (``PLAY_CHOICES``),
    the back-up's best value (``minimax.book_move``) or the deep searches' most visited move
    (``minimax.searched_edge``).

    It reads of the stored node only what it shows: its search's root moves up to the best one
    outside the book (``minimax.stored_best_new``), not all of them (``node_from_row``), and its
    book moves once (``book_edges``) for both the list and the choice (``chosen_edge``)."""
    found = MinimaxLookup(book, position)
    key, symmetry = position.canonical()
    read = read_node(key)
    if read is None:
        return found
    stored, children = read
    best_new = stored_best_new(stored)
    own = own_bounds_of(best_new)
    found.own_value, found.own_lcb, found.own_ucb = own.value, own.lcb, own.ucb
    found.own_visits = best_new.visits if best_new is not None else 0
    found.playouts = stored.playouts
    black = position.to_move == BLACK
    found.score_mean = _for_mover(stored.score_mean, black)  # stored as Black's
    found.backed_up_score = _for_mover(getattr(stored, "backed_up_score", None), black)
    if best_new is not None:
        point = PASS if best_new.move == PASS else position.from_canonical(best_new.move, symmetry)
        found.own_move = position.vertex(point)
        found.own_point = point if position.is_legal(point) else None
    found.value, found.lcb, found.ucb = stored.value, stored.lcb, stored.ucb
    edges = book_edges(stored.edges, children)
    if check_play_choice(choice) == "value":
        chosen = chosen_edge(edges, own)
    else:
        chosen = searched_edge(edges, stored_own_prior(stored, best_new))
    for e in edges:
        # the stored move is legal in the position it was searched in; this one may have reached
        # the same canonical position by another path, where superko can forbid it: checked here
        point = position.from_canonical(e.move, symmetry)
        if not position.is_legal(point):
            continue
        child = children[e.child]  # book_edges keeps the edges whose child has bounds
        candidate = MinimaxCandidate(point, position.vertex(point), e.value, e.lcb, e.ucb, e.prior,
                                     getattr(child, "visits", 0), _for_mover(getattr(child, "score_mean", None), black),
                                     _for_mover(getattr(child, "backed_up_score", None), black))
        found.candidates.append(candidate)
        if e is chosen:
            found.usage = candidate
    return found


def _for_mover(black_score: float | None, black: bool) -> float | None:
    """A stored score (Black's) for the player to move (``black``: Black), or for the player making
    a move there."""
    if black_score is None:
        return None
    return black_score if black else -black_score


def score_as_result(score: float | None, black: bool) -> str | None:
    """A score as a game's result, to one decimal: "B+3.5", "W+0.5", "0" (jigo); ``score`` is the
    player's whose colour ``black`` says (the mover's: see ``MinimaxLookup``), the result Black's or
    White's, whoever leads. None: no score."""
    if score is None:
        return None
    lead = round(score if black else -score, 1)  # Black's
    if lead == 0:
        return "0"
    return f"B+{lead:.1f}" if lead > 0 else f"W+{-lead:.1f}"


def _rounded(x: float | None, places: int) -> float | None:
    return round(x, places) if x is not None else None


def minimax_document(found: MinimaxLookup) -> dict:
    """The answer as data (``obook lookup --json``, the offline browser). Scores, like values, are
    the mover's: the player to move's for the position, the player making the move for a candidate
    (``backed_up_score``: the score on the line of the value, ``score_mean``: the mean of the
    search of the position reached); ``backed_up_result`` is the backed-up score as a result, "B+3.5"."""
    position = found.position
    black = position.to_move == BLACK
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
        "own_lcb": _rounded(found.own_lcb, 6), "own_ucb": _rounded(found.own_ucb, 6), "own_visits": found.own_visits,
        "playouts": found.playouts, "score_mean": _rounded(found.score_mean, 3),
        "backed_up_score": _rounded(found.backed_up_score, 3),
        "backed_up_result": score_as_result(found.backed_up_score, black),
        "candidates": [{"move": c.vertex, "value": round(c.value, 6), "lcb": round(c.lcb, 6), "ucb": round(c.ucb, 6),
                        "prior": round(c.prior, 6), "visits": c.visits,
                        "score_mean": round(c.score_mean, 3) if c.score_mean is not None else None,
                        "backed_up_score": _rounded(c.backed_up_score, 3),
                        "backed_up_result": score_as_result(c.backed_up_score, black),
                        "usage": found.usage is not None and c.point == found.usage.point}
                       for c in found.candidates],
        "usage_move": found.usage.vertex if found.usage is not None else None,
    }


def minimax_answer_document(found: MinimaxLookup) -> dict:
    """A minimax book's lookup in the common form of a lookup document (``lookup_document``'s
    fields, the service's ``LookupOut``): each candidate's minimax value, bounds and prior
    (``winrate`` is the value, ``share`` the prior; no games), and the position's value."""
    doc = minimax_document(found)
    candidates = [{"move": c["move"], "games": 0, "wins": 0, "draws": 0, "winrate": c["value"], "share": c["prior"],
                   "usage": c["usage"], "coevolution": False, "value": c["value"], "lcb": c["lcb"], "ucb": c["ucb"],
                   "prior": c["prior"], "visits": c["visits"], "score_mean": c["score_mean"],
                   "backed_up_score": c["backed_up_score"], "backed_up_result": c["backed_up_result"]}
                  for c in doc["candidates"]]
    return {"book": doc["book"], "size": doc["size"], "moves": doc["moves"], "to_move": doc["to_move"],
            "move_number": doc["move_number"], "in_book": doc["in_book"], "games": 0, "candidates": candidates,
            "usage_move": doc["usage_move"], "coevolution_move": None, "algorithm": doc["algorithm"],
            "value": doc["value"], "lcb": doc["lcb"], "ucb": doc["ucb"], "own_value": doc["own_value"],
            "own_move": doc["own_move"], "own_lcb": doc["own_lcb"], "own_ucb": doc["own_ucb"],
            "own_visits": doc["own_visits"], "playouts": doc["playouts"], "score_mean": doc["score_mean"],
            "backed_up_score": doc["backed_up_score"], "backed_up_result": doc["backed_up_result"]}


def describe_minimax_lookup(found: MinimaxLookup) -> list[str]:
    """A minimax book's answer as ``obook lookup`` prints it under the position's lines."""
    if found.value is None:
        return ["  out of book: the book has no node for this position"]
    black = found.position.to_move == BLACK
    lines = [f"  minimax value {100 * found.value:.1f}% [{100 * found.lcb:.1f}, {100 * found.ucb:.1f}], "
             f"score {score_as_result(found.backed_up_score, black) or '-'}; "
             f"best move outside the book: {found.own_move or 'none'} {100 * found.own_value:.1f}%",
             f"  {'move':>5} {'value':>7} {'LCB':>7} {'UCB':>7} {'prior':>7} {'visits':>7} {'score':>7} {'mean':>6}"]
    for c in found.candidates:
        mark = "   <- book move" if found.usage is not None and c.point == found.usage.point else ""
        lines.append(f"  {c.vertex:>5} {100 * c.value:>6.1f}% {100 * c.lcb:>6.1f}% {100 * c.ucb:>6.1f}% "
                     f"{100 * c.prior:>6.1f}% {c.visits:>7} {score_as_result(c.backed_up_score, black) or '-':>7} "
                     f"{format(c.score_mean, '+.1f') if c.score_mean is not None else '-':>6}{mark}")
    if found.usage is None:
        lines.append("  playing from the book leaves it here (the best move outside it is clearly better)")
    lines.append("  score: backed up with the value, on its line; mean: the mean score of the search of the position "
                 "the move reaches, for its player")
    return lines


def minimax_move_infos(found: MinimaxLookup, size: int) -> tuple[list[dict], dict]:
    """A minimax book's answer as KataGo's move infos and root (``obook analysis``), marked ``book``:
    each book move's value as ``winrate``, its lower bound as ``lcb``, its backed-up score as
    ``scoreLead`` and ``scoreMean`` (its search's mean where the book has no backed-up score), the
    visits of the searches behind the value, and the best move outside the book with its value
    (``outsideBook``)."""
    infos = []
    for c in found.candidates:
        info = {"move": c.vertex, "visits": int(c.visits), "winrate": float(c.value), "prior": float(c.prior),
                "lcb": float(c.lcb)}
        score = book_score(c)
        if score is not None:
            info.update(scoreMean=float(score), scoreLead=float(score))
        infos.append(info)
    if found.own_point is not None and found.own_value is not None \
            and all(c.point != found.own_point for c in found.candidates):
        infos.append({"move": format_vertex(found.own_point, size), "visits": int(found.own_visits or 0),
                      "winrate": float(found.own_value), "prior": 0.0,
                      "lcb": float(found.own_lcb if found.own_lcb is not None else found.own_value),
                      "outsideBook": True})
    infos.sort(key=lambda i: i["winrate"], reverse=True)
    root = _book_root(infos)
    if found.value is not None:
        root["winrate"] = float(found.value)
    score = book_score(found)
    if score is not None:
        root.update(scoreLead=float(score), scoreMean=float(score))
    return infos, root


def book_score(found: MinimaxCandidate | MinimaxLookup) -> float | None:
    """The score an analysis shows for a book move or position, the mover's: the backed-up score,
    or the search's mean where the book has none (a book backed up before it kept scores)."""
    return found.backed_up_score if found.backed_up_score is not None else found.score_mean


def statistics_move_infos(found: BookLookup, size: int) -> tuple[list[dict], dict]:
    """A statistical book's answer as KataGo's move infos and root, marked ``book``: games as
    visits, their win rate, a lower bound ``LCB_Z`` standard errors below it."""
    infos = []
    for c in sorted(found.candidates, key=lambda c: (c.points, c.winrate), reverse=True):
        spread = LCB_Z * math.sqrt(c.winrate * (1.0 - c.winrate) / c.games) if c.games else 1.0
        info = {"move": c.vertex, "visits": int(c.games), "winrate": float(c.winrate), "prior": float(c.share),
                "lcb": min(max(c.winrate - spread, 0.0), 1.0)}
        if c.score_mean is not None:
            info.update(scoreMean=float(c.score_mean), scoreLead=float(c.score_mean))
        infos.append(info)
    return infos, _book_root(infos)


def _book_root(infos: list[dict]) -> dict:
    """Number the move infos, and the root they make: their win rate weighted by visits."""
    for order, info in enumerate(infos):
        info.update(order=order, pv=[info["move"]], book=True)
    visits = sum(i["visits"] for i in infos)
    rate = sum(i["winrate"] * i["visits"] for i in infos) / visits if visits else infos[0]["winrate"]
    return {"winrate": rate, "visits": visits, "book": True}
