"""The coevolution rules of seed 002 and the usage rule, on a position's book statistics: rows in,
choice out (no store here; ``obook.book.lookup`` reads the rows and applies these).

MBM ("mutate bad moves", threshold 50%) and MVBM ("mutate very bad moves", 10%): in each position of
a self-play game, score every move by the frequency of won games in the population with that move
in that position; play the best one if its score exceeds the threshold, otherwise mutate (play the
search's move). Playing *from* the book uses the usage rule: the most simulated move in won games.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, Sequence

from obook.go.board import PASS

MBM = "mbm"
MVBM = "mvbm"
THRESHOLDS = {MBM: 0.5, MVBM: 0.1}  # seed 002: mutate bad moves / mutate very bad moves


@dataclass(frozen=True)
class Candidate:
    """A move of the book in the caller's orientation, with the population's figures."""

    point: int
    vertex: str
    games: int
    wins: int  # games won by the player making this move
    share: float  # this move's share of the won games of the position

    @property
    def winrate(self) -> float:
        return self.wins / self.games if self.games else 0.0


class BoardView(Protocol):
    """The little of a position the rules read: ``Position``, or the service's lighter replay."""

    def is_legal(self, point: int) -> bool: ...
    def from_canonical(self, point: int, symmetry: int) -> int: ...
    def vertex(self, point: int) -> str: ...


def candidates_from_rows(position: BoardView, symmetry: int, rows: Sequence[tuple[int, int, int]]) -> list[Candidate]:
    """The legal moves the population has played in this position (or any symmetric or transposed
    copy of it), most played first, from its statistics rows (canonical move, games, wins) and the
    symmetry taking the position to its canonical orientation."""
    total_wins = sum(w for _, _, w in rows)
    candidates = []
    for move, games, wins in rows:
        point = PASS if move == PASS else position.from_canonical(move, symmetry)
        if point != PASS and not position.is_legal(point):
            continue  # only under superko can a transposition forbid a move the population played
        candidates.append(Candidate(point=point, vertex=position.vertex(point), games=games, wins=wins,
                                    share=wins / total_wins if total_wins else 0.0))
    candidates.sort(key=lambda c: (-c.games, -c.wins, c.point))
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


def usage_move(candidates: list[Candidate], min_games: int = 1) -> Candidate | None:
    """The usage rule: the most simulated move in won games (ties: the better success rate), among
    moves with at least ``min_games`` games; ``None`` when no move has won a game."""
    best = None
    for c in candidates:
        if c.games < min_games or c.wins == 0:
            continue
        if best is None or (c.wins, c.winrate) > (best.wins, best.winrate):
            best = c
    return best
