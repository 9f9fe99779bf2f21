"""Board tactics in O(1) or by a short walk: what the playout policies and the search's priors ask of a
candidate move (its 3x3 neighbourhood code, the liberties it would have, whether it joins a string of
its own) without playing it.

``pattern_code`` writes the 3x3 neighbourhood as 2 bits per neighbour (EMPTY, BLACK, WHITE, BORDER)
in the order N, NE, E, SE, S, SW, W, NW.
"""

from __future__ import annotations

import numpy as np

from obook.go.board import BLACK, BORDER, EMPTY, NO_POINT, WIDTH, _next_mark, in_atari
from obook.jit import hot

N_PATTERNS = 1 << 16  # 3x3 codes: 2 bits for each of the 8 neighbours


@hot(inline="always")
def edge_line(b, p):
    """The distance of ``p`` to the nearest edge (0: the first line)."""
    w = b.scalars[WIDTH]
    x = p % w - 1
    y = p // w - 1
    n = w - 3
    return min(min(x, y), min(n - x, n - y))


@hot(inline="always")
def pattern_code(b, p):
    w = b.scalars[WIDTH]
    col = b.color
    return (
        np.int64(col[p + w])
        | (np.int64(col[p + w + 1]) << 2)
        | (np.int64(col[p + 1]) << 4)
        | (np.int64(col[p - w + 1]) << 6)
        | (np.int64(col[p - w]) << 8)
        | (np.int64(col[p - w - 1]) << 10)
        | (np.int64(col[p - 1]) << 12)
        | (np.int64(col[p + w - 1]) << 14)
    )


@hot(inline="always")
def mover_code(code, c):
    """The 3x3 code as ``c`` sees it: its own stones as BLACK (swap the colours when ``c`` is WHITE)."""
    if c == BLACK:
        return code
    swap = (code ^ (code >> 1)) & 0x5555
    return code ^ (swap | (swap << 1))


@hot(inline="always")
def _note_liberty(first, q):
    """Fold liberty ``q`` into the one seen so far: returns (first, True when two are distinct)."""
    if first == -1:
        return q, False
    return first, q != first


@hot(inline="always")
def liberties_after(b, p, c):
    """Liberties (0, 1, or 2 meaning "two or more") of the string ``c`` would have after playing
    the legal point ``p``, in O(1): a neighbouring own string's pseudo-liberties minus its copies
    of ``p`` are either all one point (one liberty left) or not (two or more)."""
    w = b.scalars[WIDTH]
    opp = 3 - c
    first = -1
    for q in (p - w, p - 1, p + 1, p + w):
        cq = b.color[q]
        if cq == EMPTY or (cq == opp and in_atari(b, b.root[q])):
            # An empty neighbour, or a stone the move captures: a liberty either way.
            first, two = _note_liberty(first, q)
            if two:
                return 2
        elif cq == c:
            r = b.root[q]
            k = 0
            for e in (p - w, p - 1, p + 1, p + w):
                if b.color[e] == c and b.root[e] == r:
                    k += 1
            n = np.int64(b.lib_count[r]) - k
            if n > 0:
                s = b.lib_sum[r] - k * p
                sq = b.lib_sum_sq[r] - k * p * p
                if n * sq != s * s:
                    return 2
                first, two = _note_liberty(first, s // n)
                if two:
                    return 2
    return 0 if first == -1 else 1


@hot(inline="always")
def touches_own(b, p, c):
    """Whether a stone of ``c`` at ``p`` would join a string of its own (else it stands alone)."""
    w = b.scalars[WIDTH]
    return b.color[p - w] == c or b.color[p - 1] == c or b.color[p + 1] == c or b.color[p + w] == c


@hot(inline="always")
def nakade_self_atari(b, p, c, pts):
    """Whether the self-atari of ``c`` at ``p`` (a legal move leaving its string one liberty, and
    capturing nothing) is a nakade: the string it makes, of 2 to 5 stones (written to ``pts``), lies
    inside the opponent's stones with its liberty, and its capture leaves an eye space of one eye:
    any 2 or 3 points, the square or the pyramid of 4, the bulky five or the cross of 5 (the dead
    shapes; Pachi's ``nakade_making_dead_shape``). Without it a playout never kills by nakade and
    calls a group in such a shape alive (docs/benchmarks.md, "Ko, nakade and false eyes in the playouts")."""
    w = b.scalars[WIDTH]
    opp = 3 - c
    for q in (p - w, p - 1, p + 1, p + w):
        if b.color[q] == opp and in_atari(b, b.root[q]):
            return False
    gen = _next_mark(b)
    pts[0] = p
    b.mark[p] = gen
    n = 1
    for q in (p - w, p - 1, p + 1, p + w):
        if b.color[q] == c and b.mark[q] != gen:
            s = b.root[q]
            r = s
            while True:
                if n == 5:
                    return False
                pts[n] = s
                b.mark[s] = gen
                n += 1
                s = b.next_stone[s]
                if s == r:
                    break
    if n < 2:
        return False
    lib = -1
    edges = 0
    top = 0
    for i in range(n):
        s = pts[i]
        degree = 0
        for q in (s - w, s - 1, s + 1, s + w):
            v = b.color[q]
            if b.mark[q] == gen:
                degree += 1
            elif v == EMPTY:
                lib = q
            elif v != opp and v != BORDER:
                return False
        edges += degree
        top = max(top, degree)
    edges //= 2
    for q in (lib - w, lib - 1, lib + 1, lib + w):
        if b.mark[q] != gen and b.color[q] != opp and b.color[q] != BORDER:
            return False
    if n <= 3:
        return True
    if n == 4:
        return top == 3 or edges == 4
    return top == 4 or edges == 5


@hot(inline="always")
def _touches_other(nbr, shift):
    """Whether a point whose neighbour counts are ``nbr`` touches a stone that is neither empty,
    the border nor of the colour counted at ``shift`` (borders count as both colours there)."""
    return 4 - (nbr & 15) - ((nbr >> shift) & 15) != 0


@hot(inline="always")
def nakade_vital_point(b, last, pts):
    """The vital point of the eye space next to the last move ``last``, or NO_POINT: the empty area
    its one or two empty neighbours open onto (one area: two must touch diagonally), 3 to 5
    points enclosed by the last mover's stones and the edge, of a shape that one stone at its
    vital point kills (Pachi's ``nakade_point``): any 3 points (the middle), the pyramid of 4 or the
    bulky five (the point touching three others), the cross (its centre). The area goes to
    ``pts``."""
    w = b.scalars[WIDTH]
    owner = b.color[last]
    shift = 4 * owner
    if not 0 < (b.nbr[last] & 15) <= 2:
        return NO_POINT
    empty = NO_POINT
    for q in (last - w, last - 1, last + 1, last + w):
        if b.color[q] == EMPTY:
            if empty == NO_POINT:
                empty = q
            elif abs(q - empty) != w - 1 and abs(q - empty) != w + 1:
                return NO_POINT
    if _touches_other(b.nbr[empty], shift):
        return NO_POINT
    gen = _next_mark(b)
    pts[0] = empty
    b.mark[empty] = gen
    n = 1
    i = 0
    while i < n:
        s = pts[i]
        i += 1
        for q in (s - w, s - 1, s + 1, s + w):
            if b.color[q] == EMPTY and b.mark[q] != gen:
                if n == 5 or _touches_other(b.nbr[q], shift):
                    return NO_POINT
                b.mark[q] = gen
                pts[n] = q
                n += 1
    if n < 3:
        return NO_POINT
    best = NO_POINT
    top = -1
    edges = 0
    for i in range(n):
        s = pts[i]
        degree = 0
        for q in (s - w, s - 1, s + 1, s + w):
            degree += b.color[q] == EMPTY and b.mark[q] == gen
        edges += degree
        if degree > top:
            top = degree
            best = s
    edges //= 2
    if n == 3 or (n == 4 and top == 3) or (n == 5 and (top == 4 or edges == 5)):
        return best
    return NO_POINT


@hot(inline="always")
def string_liberties(b, r, libs):
    """Write up to three distinct liberties of the string rooted at ``r`` to ``libs``; return how
    many (3 means three or more). Walks the string, so only for strings near the last move."""
    w = b.scalars[WIDTH]
    n = 0
    s = r
    while True:
        for q in (s - w, s - 1, s + 1, s + w):
            if b.color[q] == EMPTY:
                fresh = True
                for i in range(n):
                    if libs[i] == q:
                        fresh = False
                if fresh:
                    libs[n] = q
                    n += 1
                    if n == 3:
                        return n
        s = b.next_stone[s]
        if s == r:
            break
    return n


@hot(inline="always")
def liberties_after_extending(b, p, other, r, c):
    """Roughly how many liberties the string ``r`` of ``c`` has after ``c`` extends it at ``p``,
    one of its liberties, when ``other`` is its only other liberty or a point taken meanwhile (not
    counted): the empty neighbours of ``p`` other than ``other``, two for every other string of
    ``c`` it joins that is not in atari (it may have many), one per capture."""
    w = b.scalars[WIDTH]
    opp = 3 - c
    n = 0
    for q in (p - w, p - 1, p + 1, p + w):
        cq = b.color[q]
        if cq == EMPTY:
            if q != other:
                n += 1
        elif cq == c:
            rq = b.root[q]
            if rq != r and not in_atari(b, rq):
                n += 2
        elif cq == opp and in_atari(b, b.root[q]):
            n += 1
    return n
