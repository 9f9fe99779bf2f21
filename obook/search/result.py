"""What a search returns: the move, and the statistics behind it for analysis and books.

Scores are final area scores, komi included (what a finished game would count), averaged over the
simulations a search ran and always from the point of view of the player to move at the root:
positive means that player ends ahead. They are the search's own simulations (the tree's playouts,
or a pure Monte-Carlo player's samples), so they sharpen as the search runs; a value of None means
the player measured no score there (no simulation went through that move, or the player does not
score its simulations: ``BookPlayer``'s book lines, the pure Monte-Carlo players with
``value=win``, ``RandomPlayer``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class MoveStats:
    point: int  # padded-board point, or PASS (-1)
    visits: int
    winrate: float  # mean reward for the player to move at the root, in [0, 1]
    variance: float
    amaf_visits: int = 0
    amaf_winrate: float = 0.0
    pv: list[int] = field(default_factory=list)  # this move, then the best continuation
    value: float = 0.0  # pure Monte-Carlo players: the mean score (or win rate) they rank moves by
    pruned: bool = False  # progressive pruning: no longer a candidate when the search ended
    prior: float | None = None  # the priors' virtual wins for this move (None: a player without priors)
    score_mean: float | None = None  # mean final score of the simulations through this move (module docstring)
    score_stdev: float | None = None  # their standard deviation (population: 0 below two simulations)
    lcb: float | None = None  # a lower bound known otherwise (a minimax book's), instead of the standard error's
    pv_visits: list[int] | None = None  # the visits of each node of ``pv`` (None: not kept, as by root parallelism)


@dataclass
class SearchResult:
    move: int  # the chosen point, or PASS
    resign: bool  # the player to move should resign
    winrate: float  # of the chosen move, for the player to move
    playouts: int  # simulations run by this search (all processes)
    seconds: float
    moves: list[MoveStats]  # root children, most visited first
    pv: list[int]  # principal variation from the root
    nodes: int = 0  # tree nodes in use after the search
    score_mean: float | None = None  # mean final score of the simulations through the root (module docstring)
    extra_komi: float = 0.0  # points the search pretended to give beyond the komi (dynamic_komi); win rates count it

    @property
    def best(self) -> MoveStats | None:
        return self.moves[0] if self.moves else None


def score_moments(total: float, total_sq: float, count: float, sign: float) -> tuple[float | None, float | None]:
    """Mean and standard deviation of ``count`` scores from their sum and sum of squares, the mean
    multiplied by ``sign`` (+1 or -1: the scores were counted from the other player's view);
    (None, None) without scores."""
    if count <= 0:
        return None, None
    mean = total / count
    return sign * mean, math.sqrt(max(total_sq / count - mean * mean, 0.0))


def pooled_score_mean(moves: list[MoveStats]) -> float | None:
    """The mean score over every simulation through the moves that have one (each move weighted by
    its visits): the root's mean for a player whose root is only its moves."""
    scored = [(s.score_mean, s.visits) for s in moves if s.score_mean is not None and s.visits > 0]
    count = sum(n for _, n in scored)
    return sum(mean * n for mean, n in scored) / count if count else None
