"""A learned move model: how likely a strong player is to choose each legal move, from features of
the move alone (Coulom 2007, "Computing Elo Ratings of Move Patterns in the Game of Go").

Every candidate move (a legal point that does not fill the mover's own eye, or PASS) is a team of at
most one feature from each group below; feature ``i`` has a strength ``gamma_i`` and the team's
strength is their product. The probability of a move is its strength over the sum of the strengths of
all candidates of the position (generalized Bradley-Terry). The groups:

- pattern: the 3x3 neighbourhood (``pattern_code``) seen by the mover (own stones as BLACK), one
  strength shared by the 8 symmetric images;
- capture: of the string the last move played to, else of a string of 1, 2-3 or 4+ stones;
- extension: the move gives an own string in atari (1, 2-3 or 4+ stones) two or more liberties;
- self-atari: the move's string is left with one liberty (a lone stone, 2-4 stones, 5+ stones);
- atari: the move leaves an adjacent opponent string (1, 2-3 or 4+ stones) with one liberty;
- distance to the last move and to the move before, ``dx + dy + max(dx, dy)`` (2 to 16, 17+);
- line: distance to the nearest edge (first to fifth line or more);
- pass: after the opponent's pass, else while at most half the board is empty, else (early).

The strengths are stored as natural logarithms in one flat float64 table (``TABLE_SIZE``): the
pattern group is indexed by the mover's code itself (every symmetric image holds the same value), the
other groups follow at the offsets below, so ``move_features`` gives indices into the table and the
search adds the logarithms without allocating (``log_strength``). ``obook/search/movefit.py`` fits
the table by minorization-maximization; ``move_model.npz`` ships the one fitted on four fifths of the
517 professional games of ``../shared/data/go9/aeb9x9`` (``obook learn move-model``).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from obook.go.board import (
    EMPTY,
    LAST_MOVE,
    N_EMPTY,
    NO_POINT,
    PASS,
    SIZE,
    WIDTH,
    in_atari,
    is_eye,
    is_legal,
)
from obook.go.tactics import N_PATTERNS, edge_line, liberties_after, mover_code, pattern_code, string_liberties
from obook.jit import hot
from obook.search.shapes import canonical_codes

MODEL_PATH = Path(__file__).with_name("move_model.npz")

CAPTURE = N_PATTERNS  # +0: the last move's string, +1: 1 stone, +2: 2-3 stones, +3: 4+ stones
EXTENSION = CAPTURE + 4  # +0: 1 stone, +1: 2-3, +2: 4+
SELF_ATARI = EXTENSION + 3  # +0: a lone stone, +1: 2-4 stones, +2: 5+
ATARI = SELF_ATARI + 3  # +0: 1 stone, +1: 2-3, +2: 4+
DIST_LAST = ATARI + 3  # +0..+14: distance 2..16, +15: 17 or more
DIST_BEFORE = DIST_LAST + 16
LINE = DIST_BEFORE + 16  # +0..+4: first to fifth line or more
PASS_FEATURE = LINE + 5  # +0: after the opponent's pass, +1: at most half the board empty, +2: more
TABLE_SIZE = PASS_FEATURE + 3
ABSENT = TABLE_SIZE  # a group without a feature (the fitting's extra slot of strength 1)

# Each group's name and [start, end) in the table; a move has at most one feature per group.
GROUPS = (
    ("pattern", 0, N_PATTERNS),
    ("capture", CAPTURE, EXTENSION),
    ("extension", EXTENSION, SELF_ATARI),
    ("self-atari", SELF_ATARI, ATARI),
    ("atari", ATARI, DIST_LAST),
    ("distance to the last move", DIST_LAST, DIST_BEFORE),
    ("distance to the move before", DIST_BEFORE, LINE),
    ("line", LINE, PASS_FEATURE),
    ("pass", PASS_FEATURE, TABLE_SIZE),
)
N_GROUPS = len(GROUPS)
FEATURES_LEN = N_GROUPS + 3  # move_features' output and its scratch (three liberties)


@hot(inline="always")
def _size_bucket(n):
    if n == 1:
        return 0
    if n <= 3:
        return 1
    return 2


@hot(inline="always")
def _distance_feature(b, p, q, base):
    """The feature of the distance from ``p`` to the earlier move ``q`` (ABSENT for none or a pass)."""
    if q == PASS or q == NO_POINT:
        return ABSENT
    w = b.scalars[WIDTH]
    dx = abs(p % w - q % w)
    dy = abs(p // w - q // w)
    d = dx + dy + max(dx, dy)
    return base + min(d, 17) - 2


@hot(inline="always")
def move_features(b, p, c, before_last, out):
    """Write the table index of the move ``p`` of ``c``'s feature in each group to ``out[0:N_GROUPS]``
    (``ABSENT`` where it has none; ``out`` is int64[FEATURES_LEN], the rest scratch);
    ``before_last`` is the move before the last one (PASS or NO_POINT for none). ``p`` must be PASS
    or a legal point."""
    for g in range(N_GROUPS):
        out[g] = ABSENT
    last = b.scalars[LAST_MOVE]
    if p == PASS:
        if last == PASS:
            out[8] = PASS_FEATURE
        elif 2 * b.scalars[N_EMPTY] <= b.scalars[SIZE] * b.scalars[SIZE]:
            out[8] = PASS_FEATURE + 1
        else:
            out[8] = PASS_FEATURE + 2
        return
    w = b.scalars[WIDTH]
    opp = 3 - c
    libs = out[N_GROUPS:]
    took_last = False
    biggest_capture = 0
    extension = ABSENT
    atari = ABSENT
    joined = 1
    nb = (p - w, p - 1, p + 1, p + w)
    for i in range(4):
        q = nb[i]
        v = b.color[q]
        if v != opp and v != c:
            continue
        r = b.root[q]
        seen = False
        for j in range(i):
            if b.color[nb[j]] == v and b.root[nb[j]] == r:
                seen = True
        if seen:
            continue
        size = b.string_size[r]
        if v == opp:
            if in_atari(b, r):
                biggest_capture = max(biggest_capture, size)
                if last != PASS and last != NO_POINT and b.color[last] == opp and b.root[last] == r:
                    took_last = True
            elif string_liberties(b, r, libs) == 2:
                k = ATARI + _size_bucket(size)
                atari = k if atari == ABSENT else max(atari, k)
        else:
            joined += size
            if in_atari(b, r):
                k = EXTENSION + _size_bucket(size)
                extension = k if extension == ABSENT else max(extension, k)
    if took_last:
        out[1] = CAPTURE
    elif biggest_capture > 0:
        out[1] = CAPTURE + 1 + _size_bucket(biggest_capture)
    n_libs = liberties_after(b, p, c)
    if n_libs < 2:
        extension = ABSENT
        if biggest_capture == 0:
            out[3] = SELF_ATARI if joined == 1 else (SELF_ATARI + 1 if joined <= 4 else SELF_ATARI + 2)
            atari = ABSENT
    out[0] = mover_code(pattern_code(b, p), c)
    out[2] = extension
    out[4] = atari
    out[5] = _distance_feature(b, p, last, DIST_LAST)
    out[6] = _distance_feature(b, p, before_last, DIST_BEFORE)
    out[7] = LINE + min(edge_line(b, p), 4)


@hot(inline="always")
def log_strength(b, p, c, before_last, log_gamma, features):
    """The natural log of the strength of move ``p`` of ``c`` under the table ``log_gamma``
    (``features`` is int64[FEATURES_LEN] of scratch)."""
    move_features(b, p, c, before_last, features)
    s = 0.0
    for g in range(N_GROUPS):
        k = features[g]
        if k != ABSENT:
            s += log_gamma[k]
    return s


@hot
def candidate_features(b, c, before_last, moves, features):
    """Every candidate of ``c`` (legal, not filling an own eye, then PASS): writes the moves to
    ``moves`` and their features to the rows of ``features`` (int64[cells + 1, FEATURES_LEN]);
    returns how many."""
    n = 0
    w = b.scalars[WIDTH]
    for p in range(w, w * w - w):
        if b.color[p] == EMPTY and is_legal(b, p, c) and not is_eye(b, p, c):
            moves[n] = p
            move_features(b, p, c, before_last, features[n])
            n += 1
    moves[n] = PASS
    move_features(b, PASS, c, before_last, features[n])
    return n + 1


@lru_cache(maxsize=1)
def shipped_log_gamma() -> np.ndarray:
    """The shipped table (zeros, every move equally likely, without ``move_model.npz``)."""
    if not MODEL_PATH.exists():
        return np.zeros(TABLE_SIZE)
    return load_log_gamma(MODEL_PATH)


def load_log_gamma(path: str | Path) -> np.ndarray:
    with np.load(path) as data:
        table = np.zeros(TABLE_SIZE)
        table[N_PATTERNS:] = data["other"]
        by_canonical = np.zeros(N_PATTERNS)
        by_canonical[data["codes"]] = data["pattern"]
    table[:N_PATTERNS] = by_canonical[canonical_codes()]
    return table


def save_log_gamma(path: str | Path, log_gamma: np.ndarray) -> None:
    """Store the table small: the pattern strengths of canonical codes that differ from 1, the rest."""
    canon = canonical_codes()
    codes = np.nonzero((canon == np.arange(N_PATTERNS)) & (log_gamma[:N_PATTERNS] != 0.0))[0]
    np.savez_compressed(path, codes=codes.astype(np.int32), pattern=log_gamma[codes].astype(np.float32),
                        other=log_gamma[N_PATTERNS:TABLE_SIZE])


__all__ = ["GROUPS", "TABLE_SIZE", "candidate_features", "log_strength", "move_features", "shipped_log_gamma"]
