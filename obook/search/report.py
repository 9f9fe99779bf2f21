"""A search result as KataGo's analysis tools read it: one dict per move (``move``, ``visits``,
``winrate``, ``scoreMean``, ``scoreStdev``, ``scoreLead``, ``prior``, ``lcb``, ``order``, ``pv``).

Both of obook's KataGo dialects are built from ``kata_move_infos``: GTP's ``kata-analyze`` info
lines (``obook.gtp.analysis``) and the JSON analysis engine's ``moveInfos``
(``obook.analysis.engine``), so the two cannot drift apart. The figures are the player to move's
(the root's); turning them to another perspective is the caller's business.

Where the figures come from: visits and win rates are the search's real simulations; ``prior`` is
each move's share of the virtual wins the search's priors (``obook/search/priors.py``) gave it
(uniform for players without priors); ``lcb`` is the win rate less 1.96 standard errors of its
simulations (0 below two visits). obook has no score network: ``scoreMean``/``scoreStdev`` are the
mean and spread of the final area scores (komi included) of the search's simulations through the
move, and ``scoreLead`` is that same mean; a move with no score (no simulation through it, a book
line) has none of the three.
"""

from __future__ import annotations

import math

from obook.go.board import BLACK
from obook.go.vertex import format_vertex, point_of
from obook.search.result import MoveStats, SearchResult

LCB_Z = 1.96


def priors(result: SearchResult) -> dict[int, float]:
    """Each root move's prior probability: its share of the priors' virtual wins, or uniform."""
    weights = {s.point: s.prior for s in result.moves}
    total = sum(w for w in weights.values() if w is not None and w > 0)
    if total <= 0 or any(w is None for w in weights.values()):
        uniform = 1.0 / max(len(result.moves), 1)
        return {point: uniform for point in weights}
    return {point: max(w, 0.0) / total for point, w in weights.items()}


def has_priors(result: SearchResult) -> bool:
    """Whether the player gave its root moves priors (else ``priors`` is only uniform)."""
    return bool(result.moves) and all(s.prior is not None for s in result.moves) \
        and sum(max(s.prior, 0.0) for s in result.moves) > 0


def lower_bound(stats: MoveStats) -> float:
    """The win rate less ``LCB_Z`` standard errors, in [0, 1]; 0 below two visits. A bound the
    figures carry (``MoveStats.lcb``: a minimax book's back-up) is taken as it is."""
    if stats.lcb is not None:
        return stats.lcb
    if stats.visits < 2:
        return 0.0
    return min(max(stats.winrate - LCB_Z * math.sqrt(max(stats.variance, 0.0) / stats.visits), 0.0), 1.0)


def ranked_moves(result: SearchResult) -> list[MoveStats]:
    """The root's moves best first: most visits, then the better win rate (KataGo's ``order``)."""
    return sorted(result.moves, key=lambda s: (s.visits, s.winrate), reverse=True)


def principal_variation(stats: MoveStats, size: int) -> list[str]:
    """The move, then the search's best continuation after it, as vertices."""
    move = format_vertex(stats.point, size)
    pv = [format_vertex(p, size) for p in (stats.pv or [stats.point])]
    return pv if pv and pv[0] == move else [move] + pv


def kata_move_infos(result: SearchResult, shown: list[MoveStats], size: int, pv_visits: bool = False) -> list[dict]:
    """KataGo's move infos of the moves ``shown`` (in that order: ``order`` is the index), the
    player to move's figures; ``scoreMean``/``scoreStdev``/``scoreLead`` only where measured;
    with ``pv_visits``, ``pvVisits`` where the search kept them."""
    prior = priors(result)
    infos = []
    for order, stats in enumerate(shown):
        info = {"move": format_vertex(stats.point, size), "visits": int(stats.visits),
                "winrate": min(max(float(stats.winrate), 0.0), 1.0)}
        if stats.score_mean is not None:
            info["scoreMean"] = float(stats.score_mean)
            info["scoreStdev"] = float(stats.score_stdev or 0.0)
            info["scoreLead"] = float(stats.score_mean)
        info.update(prior=float(prior.get(stats.point, 0.0)), lcb=lower_bound(stats), order=order,
                    pv=principal_variation(stats, size))
        if pv_visits and stats.pv_visits is not None and len(stats.pv_visits) == len(info["pv"]):
            info["pvVisits"] = list(stats.pv_visits)
        infos.append(info)
    return infos


def root_scores(moves: list[MoveStats]) -> tuple[float | None, float | None]:
    """The mean and standard deviation of the final scores of every simulation through the root's
    moves (each weighted by its visits; the law of total variance pools their spreads); (None,
    None) when none has a score."""
    scored = [(s.score_mean, s.score_stdev or 0.0, s.visits) for s in moves
              if s.score_mean is not None and s.visits > 0]
    count = sum(n for _, _, n in scored)
    if not count:
        return None, None
    mean = sum(m * n for m, _, n in scored) / count
    second = sum((sd * sd + m * m) * n for m, sd, n in scored) / count
    return mean, math.sqrt(max(second - mean * mean, 0.0))


def root_winrate(result: SearchResult) -> float:
    """The root's win rate for the player to move: the visit-weighted mean of its moves' (the
    chosen move's when no move has visits)."""
    visited = [(s.winrate, s.visits) for s in result.moves if s.visits > 0]
    count = sum(n for _, n in visited)
    rate = sum(w * n for w, n in visited) / count if count else result.winrate
    return min(max(float(rate), 0.0), 1.0)


def ownership_rows(black_ownership, size: int, color: int) -> list[float]:
    """Per-point ownership (padded-board array or dict, Black positive) as KataGo writes it: top
    row first, left to right, for ``color``."""
    sign = 1.0 if color == BLACK else -1.0
    return [sign * float(black_ownership[point_of(col, row, size)])
            for row in range(size - 1, -1, -1) for col in range(size)]


__all__ = ["LCB_Z", "has_priors", "kata_move_infos", "lower_bound", "ownership_rows", "principal_variation", "priors",
           "ranked_moves", "root_scores", "root_winrate"]
