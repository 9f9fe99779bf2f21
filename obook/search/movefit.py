"""Fitting the move model (``obook/search/movemodel.py``) to games by minorization-maximization.

Each position of a game is a competition among its candidate moves which the move played won.
Coulom's MM update for a feature ``i`` of group ``g``, the others fixed, is
``gamma_i = W_i / sum_j C_ij / E_j``: ``W_i`` the wins of teams holding ``i``, ``E_j`` the total
strength of competition ``j`` and ``C_ij`` the strength of ``i``'s team-mates there (summed over the
candidates holding ``i``). A virtual win and a virtual loss against a player of strength 1 (Coulom's
prior) keep a feature seen rarely near 1 and one never chosen above 0. One sweep updates every group
in turn; the log-likelihood never decreases.

Rows are kept in numpy (one per candidate, one column per group) so a sweep over the ~1.3 million
candidates of the 517 professional games takes a fraction of a second.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from obook.go.board import NO_POINT
from obook.go.sgf import read_sgf
from obook.search.movemodel import ABSENT, FEATURES_LEN, GROUPS, N_GROUPS, N_PATTERNS, TABLE_SIZE, candidate_features
from obook.search.shapes import canonical_codes

PRIOR_GAMES = 1.0  # virtual wins and as many virtual losses against strength 1, per feature


@dataclass
class Competitions:
    """The candidates of many positions: ``features[r]`` the table indices of row ``r`` (ABSENT for
    none; patterns as canonical codes), ``moves[r]`` its move, ``start[j]:start[j + 1]`` the rows of
    position ``j`` and ``winner[j]`` the row of the move played there."""

    features: np.ndarray  # int32[rows, N_GROUPS]
    moves: np.ndarray  # int32[rows]
    start: np.ndarray  # int64[positions + 1]
    winner: np.ndarray  # int64[positions]

    @property
    def position_of_row(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.winner)), np.diff(self.start))


def game_positions(paths):
    """(board, colour to move, the move before the last, move played) for every move of the main
    lines of ``paths`` that the side to move played; the board is the replay's own (read it before
    the next item)."""
    for path in paths:
        game = read_sgf(path).position
        replay = game.copy()
        while replay.moves:
            replay.undo()
        before_last = NO_POINT
        last = NO_POINT
        for color, point in game.moves:
            if color == replay.to_move:
                yield replay.board, color, before_last, point
            replay.play(point, color)
            before_last, last = last, point


def collect(paths) -> Competitions:
    """The competitions of every move of ``paths`` whose move is a candidate (legal, not filling an
    own eye, or PASS)."""
    canon = canonical_codes()
    chunks, move_chunks, starts, winners = [], [], [0], []
    moves = None
    rows = 0
    for board, color, before_last, point in game_positions(paths):
        if moves is None or moves.shape[0] < board.color.shape[0] + 1:
            moves = np.zeros(board.color.shape[0] + 1, np.int64)
            features = np.zeros((board.color.shape[0] + 1, FEATURES_LEN), np.int64)
        n = candidate_features(board, color, before_last, moves, features)
        hit = np.nonzero(moves[:n] == point)[0]
        if len(hit) == 0:
            continue
        block = features[:n, :N_GROUPS].astype(np.int32)
        block[:, 0] = np.where(block[:, 0] == ABSENT, ABSENT, canon[np.minimum(block[:, 0], N_PATTERNS - 1)])
        chunks.append(block)
        move_chunks.append(moves[:n].astype(np.int32))
        winners.append(rows + int(hit[0]))
        rows += n
        starts.append(rows)
    if not chunks:
        return Competitions(np.zeros((0, N_GROUPS), np.int32), np.zeros(0, np.int32), np.zeros(1, np.int64),
                            np.zeros(0, np.int64))
    return Competitions(np.concatenate(chunks), np.concatenate(move_chunks), np.array(starts, np.int64),
                        np.array(winners, np.int64))


def log_likelihood(log_gamma: np.ndarray, data: Competitions) -> float:
    """Mean log-probability of the moves played."""
    strength = _row_log_strength(log_gamma, data)
    per_position = np.logaddexp.reduceat(strength, data.start[:-1])
    return float(np.mean(strength[data.winner] - per_position))


def _row_log_strength(log_gamma: np.ndarray, data: Competitions) -> np.ndarray:
    table = np.append(log_gamma, 0.0)  # the ABSENT slot
    return table[data.features].sum(axis=1)


def fit(data: Competitions, sweeps: int = 30, log_gamma: np.ndarray | None = None, report=None) -> np.ndarray:
    """The table of log-strengths (``TABLE_SIZE``; patterns by canonical code, not yet spread to their
    symmetric images: ``spread_patterns``) after ``sweeps`` MM sweeps; ``report(sweep, ll)`` sees
    the mean log-likelihood after each."""
    if len(data.winner) == 0:
        raise ValueError("no positions to fit")
    gamma = np.ones(TABLE_SIZE + 1) if log_gamma is None else np.exp(np.append(log_gamma, 0.0))
    position = data.position_of_row
    wins = np.bincount(data.features[data.winner].ravel(), minlength=TABLE_SIZE + 1).astype(np.float64)
    for sweep in range(sweeps):
        for _name, lo, hi in GROUPS:
            column = data.features[:, _group_column(lo)]
            strength = np.prod(gamma[data.features], axis=1)
            total = np.bincount(position, strength, minlength=len(data.winner))
            mates = strength / gamma[column] / total[position]
            denominator = np.bincount(column, mates, minlength=TABLE_SIZE + 1)[lo:hi]
            seen = denominator > 0
            g = gamma[lo:hi]
            updated = (wins[lo:hi] + PRIOR_GAMES) / (denominator + 2 * PRIOR_GAMES / (g + 1.0))
            gamma[lo:hi] = np.where(seen, updated, g)
        if report is not None:
            report(sweep + 1, log_likelihood(np.log(gamma[:TABLE_SIZE]), data))
    return np.log(gamma[:TABLE_SIZE])


def _group_column(lo: int) -> int:
    for g, (_name, start, _end) in enumerate(GROUPS):
        if start == lo:
            return g
    raise KeyError(lo)


def spread_patterns(log_gamma: np.ndarray) -> np.ndarray:
    """The table with every pattern code holding its canonical code's value (what the search reads)."""
    out = log_gamma.copy()
    out[:N_PATTERNS] = log_gamma[canonical_codes()]
    return out


def rank_accuracy(scores: np.ndarray, data: Competitions, top: int) -> float:
    """Share of positions whose move played is among the ``top`` best-scored candidates, ties broken
    at random (a move tied with others counts by the chance that it would be drawn)."""
    position = data.position_of_row
    won = scores[data.winner][position]
    better = np.bincount(position, scores > won, minlength=len(data.winner))
    tied = np.bincount(position, scores == won, minlength=len(data.winner))
    return float(np.mean(np.clip((top - better) / tied, 0.0, 1.0)))


def split_games(folder: str | Path, hold_out_every: int = 5) -> tuple[list[Path], list[Path]]:
    """(training, held-out) SGF files of ``folder``, sorted by path: every ``hold_out_every``-th
    game (the 5th, 10th, ...) held out; 0 holds none out."""
    paths = sorted(Path(folder).rglob("*.sgf"))
    if hold_out_every <= 0:
        return paths, []
    held = [p for i, p in enumerate(paths) if i % hold_out_every == hold_out_every - 1]
    train = [p for i, p in enumerate(paths) if i % hold_out_every != hold_out_every - 1]
    return train, held


__all__ = ["Competitions", "collect", "fit", "game_positions", "log_likelihood", "rank_accuracy", "split_games",
           "spread_patterns"]
