"""The coevolution rules of seed 002, Beta sampling, and the usage rule, on a position's book
statistics: rows in, choice out (no store here; ``obook.book.lookup`` reads the rows and applies these).

MBM ("mutate bad moves", threshold 50%) and MVBM ("mutate very bad moves", 10%): in each position of
a self-play game, score every move by the frequency of won games in the population with that move
in that position; play the best one if its score exceeds the threshold, otherwise mutate (play the
search's move). A draw (jigo, at an integer komi) counts as half a won game for both players.

BETA (an option beyond seed 002: the "Beta distribution sampling" of the MoGo team's meta-MCTS):
Thompson sampling, which explores by uncertainty instead of taking the greedy argmax; see
``beta_move``. Playing *from* the book uses the usage rule: the most simulated move in won games.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, Sequence

from obook.go.board import PASS

MBM = "mbm"
MVBM = "mvbm"
BETA = "beta"
MINIMAX = "minimax"  # not a coevolution rule: a search-valued book (obook/book/minimax.py)
ALGORITHMS = (MBM, MVBM, BETA, MINIMAX)  # BETA and MINIMAX have no threshold (their books store 0)
# A new book's algorithm wherever one is not named (BookSettings, obook build, the grid's driver):
# the only book measured to make play stronger (docs/book.md).
NEW_BOOK_ALGORITHM = MINIMAX


class BetaSampler(Protocol):
    """The caller's random numbers: ``random.Random`` (seeded by the caller, so a choice replays)."""

    def betavariate(self, alpha: float, beta: float) -> float: ...


@dataclass(frozen=True)
class Candidate:
    """A move of the book in the caller's orientation, with the population's figures."""

    point: int
    vertex: str
    games: int
    wins: int  # games won by the player making this move
    share: float  # this move's share of the won games (draws as half) of the position
    draws: int = 0  # drawn games (jigo): half a win each
    score_mean: float | None = None  # the mover's mean final score over its scored games (None: none)

    @property
    def points(self) -> float:
        """Won games, a draw counting half."""
        return self.wins + 0.5 * self.draws

    @property
    def winrate(self) -> float:
        return self.points / self.games if self.games else 0.0


class BoardView(Protocol):
    """The little of a position the rules read: ``Position``, or the service's lighter replay."""

    def is_legal(self, point: int) -> bool: ...
    def from_canonical(self, point: int, symmetry: int) -> int: ...
    def vertex(self, point: int) -> str: ...


def candidates_from_rows(position: BoardView, symmetry: int, rows: Sequence[tuple]) -> list[Candidate]:
    """The legal moves the population has played in this position (or any symmetric or transposed
    copy of it), most played first, from its statistics rows (canonical move, games, wins, draws,
    and optionally scored games and their score sum) and the symmetry taking the position to its
    canonical orientation."""
    total = sum(row[2] + 0.5 * row[3] for row in rows)
    candidates = []
    for move, games, wins, draws, *scores in rows:
        point = PASS if move == PASS else position.from_canonical(move, symmetry)
        if point != PASS and not position.is_legal(point):
            continue  # only under superko can a transposition forbid a move the population played
        score_mean = scores[1] / scores[0] if scores and scores[0] else None
        candidates.append(Candidate(point=point, vertex=position.vertex(point), games=games, wins=wins,
                                    share=(wins + 0.5 * draws) / total if total else 0.0, draws=draws,
                                    score_mean=score_mean))
    candidates.sort(key=lambda c: (-c.games, -c.points, c.point))
    return candidates


def coevolution_move(candidates: list[Candidate], threshold: float, widening: float = 0.0) -> Candidate | None:
    """Algorithm 1's choice: the move with the highest success rate when it exceeds ``threshold``
    (ties go to the move with more games), else ``None``: mutate.

    ``widening`` b > 0 adds progressive widening (seed 001's device, applied to the book): while a
    position with N games has fewer than 1 + floor(N^b) distinct moves, mutate anyway. Without it
    MVBM settles on one line whose moves stay above 10% and stops exploring the opening."""
    if widening > 0:
        games = sum(c.games for c in candidates)
        if len(candidates) < 1 + math.floor(games ** widening):
            return None
    best = None
    for c in candidates:
        if c.winrate > threshold and (best is None or (c.winrate, c.games) > (best.winrate, best.games)):
            best = c
    return best


def beta_move(candidates: list[Candidate], rng: BetaSampler, widening: float = 0.0) -> Candidate | None:
    """Thompson sampling ("Beta distribution sampling"): draw a success rate for each candidate from
    Beta(w + 1, l + 1), w its won games and l its lost ones (a draw half of each), and one for a
    *new-move arm*; play the candidate with the highest draw, or ``None`` (mutate: the search
    plays a fresh move) when the new-move arm's draw is highest. A move whose first game was lost
    (Beta(1, 2)) is still chosen now and then, so one unlucky game does not bury it, and a move of
    an unscored seed (0 games: Beta(1, 1)) gets tried.

    The new-move arm is Beta(1 + P/k, 1 + (G - P)/k), with G the position's games, P its won
    games (draws half) and k its number of candidates: *an average move of this position, known as
    well as an average one*. Why: the fresh move comes from the same search that proposed the
    moves already here, so a priori it is about as good as they are on average, not a coin flip.
    A uniform Beta(1, 1) arm would mutate with probability about 1 - p forever in a position whose
    best move wins a fraction p, i.e. half the time in a balanced opening, and the book would never
    grow deep. With this arm, when the k moves are alike the rule mutates 1 time in k + 1 by
    symmetry (a position widens as it is played, like progressive widening, without a parameter),
    a move below the position's average soon loses its turn to a new move, and one clearly above
    it is played almost always. A position the book does not know (no candidates) mutates.

    The random numbers come from ``rng`` (the caller seeds it, so self-play replays its choices);
    ``widening`` > 0 applies progressive widening first, as in ``coevolution_move``."""
    if not candidates:
        return None
    games = sum(c.games for c in candidates)
    if widening > 0 and len(candidates) < 1 + math.floor(games ** widening):
        return None
    points = sum(c.points for c in candidates)
    k = len(candidates)
    best, best_draw = None, rng.betavariate(1.0 + points / k, 1.0 + (games - points) / k)
    for c in candidates:
        draw = rng.betavariate(1.0 + c.points, 1.0 + c.games - c.points)
        if draw > best_draw:
            best, best_draw = c, draw
    return best


def usage_move(candidates: list[Candidate], min_games: int = 1) -> Candidate | None:
    """The usage rule: the most simulated move in won games (a draw counting half; ties: the better
    success rate), among moves with at least ``min_games`` games; ``None`` when no move has won a
    game."""
    best = None
    for c in candidates:
        if c.games < min_games or c.points == 0:
            continue
        if best is None or (c.points, c.winrate) > (best.points, best.winrate):
            best = c
    return best


class SelfPlayRule:
    """How a self-play book's games choose among its moves: one per algorithm, chosen in one place
    (``self_play_rule``), so that nothing else asks which algorithm a book has."""

    threshold: float | None = None  # the default win-rate threshold (None: the rule has none)

    def choose(self, candidates: list[Candidate], book, rng: "BetaSampler | None") -> Candidate | None:
        """Self-play's move among ``candidates`` (None: mutate, or nothing to show)."""
        raise NotImplementedError

    def summary(self, book) -> str:
        """The rule in a few words ("threshold 0.1", "Beta sampling")."""
        raise NotImplementedError

    def label(self, book) -> str:
        """The rule with the algorithm's name ("MVBM threshold 0.1", "BETA sampling")."""
        raise NotImplementedError

    def lookup_note(self, book, chosen: Candidate | None) -> str | None:
        """What a lookup says of self-play here, its choice being ``chosen`` (None: nothing)."""
        raise NotImplementedError


class ThresholdRule(SelfPlayRule):
    """Seed 002's coevolution: the usage move unless its win rate is below the book's threshold
    (then mutate)."""

    def __init__(self, threshold: float):
        self.threshold = threshold

    def choose(self, candidates, book, rng):
        return coevolution_move(candidates, book.threshold, book.widening)

    def summary(self, book):
        return f"threshold {book.threshold:g}"

    def label(self, book):
        return f"{book.algorithm.upper()} threshold {book.threshold:g}"

    def lookup_note(self, book, chosen):
        return None if chosen is not None else f"self-play would mutate here (no move above {100 * book.threshold:g}%)"


class BetaSamplingRule(SelfPlayRule):
    """Thompson sampling of each move's Beta posterior and a new-move arm; without random numbers
    (a lookup, which shows the book rather than plays it) its choice is random: none to show."""

    def choose(self, candidates, book, rng):
        return beta_move(candidates, rng, book.widening) if rng is not None else None

    def summary(self, book):
        return "Beta sampling"

    def label(self, book):
        return "BETA sampling"

    def lookup_note(self, book, chosen):
        return "self-play samples each move's Beta(w+1, l+1) (a draw half of each) and a new-move arm (mutate)"


# seed 002: mutate bad moves (MBM) / mutate very bad moves (MVBM); a search-valued book has none
SELF_PLAY_RULES: dict[str, SelfPlayRule] = {MBM: ThresholdRule(0.5), MVBM: ThresholdRule(0.1), BETA: BetaSamplingRule()}


def self_play_rule(book) -> SelfPlayRule | None:
    """The self-play rule of ``book`` (a book or an algorithm's name); None: not a self-play book."""
    return SELF_PLAY_RULES.get(getattr(book, "algorithm", book))
