"""The rules of Go on a flat padded board, compiled with numba.

Layout (read this first). A board of size N lives in arrays of ``W*W`` cells with ``W = N + 2``;
point ``p = (row + 1) * W + (col + 1)`` where row 0 is the bottom line (GTP row 1) and col 0 is
column A. The ring of cells around the board holds ``BORDER`` so that the four neighbours of any
on-board point are ``p - W, p - 1, p + 1, p + W`` without bounds checks.

Strings are circular linked lists (``next_stone``) with a representative point (``root``). Each
root keeps *pseudo-liberties*: every (stone, empty neighbour) adjacency is counted, with the sum
and the sum of squares of the liberty points. A string is captured when its count reaches zero,
and it is in atari exactly when all its pseudo-liberties are the same point, i.e. when
``count * sum_sq == sum * sum``; that point is ``sum // count``. This makes play, capture and atari
tests O(1) per neighbour without ever counting real liberties in the hot path.

Each point also keeps ``nbr``, its neighbours counted by kind in one int32 (``NBR_EMPTY`` units for
empty neighbours, ``nbr_unit(c)`` units for neighbours of colour ``c`` or off the board), so that the
playouts' two questions, "could this be an eye of ``c``?" and "does this point touch an empty one?",
are one load and a mask instead of four loads and branches.

Hot code indexes with unsigned integers (``_u``): numba adds a negative-index wrap-around to every
access with a signed index, and with the board's many arrays that doubled the work of each access.

All state, scalars included, is in the arrays of a ``Board`` named tuple, so a board can be passed
to and mutated by jitted functions, copied with ``copy_board`` and never allocated in a loop.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from obook.go.zobrist import MAX_POINTS, MAX_SIZE, STONE_KEYS, WHITE_TO_MOVE_KEY
from obook.jit import hot

EMPTY = 0
BLACK = 1
WHITE = 2
BORDER = 3

PASS = -1
NO_POINT = 0  # point 0 is always a border corner, so it can mean "none" (no ko, no last move)

NBR_EMPTY = 1  # nbr[p] counts empty neighbours in bits 0-3, colour c's (and border) in 4c..4c+3
NBR_BORDER = (1 << 4) | (1 << 8)

MIN_SIZE = 2
HISTORY_CAPACITY = 4096

# Slots of Board.scalars.
SIZE = 0
WIDTH = 1
TO_MOVE = 2
KO_POINT = 3
PASSES = 4
N_EMPTY = 5
MOVE_NUMBER = 6
LAST_MOVE = 7
N_ATARI = 8
CAPTURED_BLACK = 9
CAPTURED_WHITE = 10
MARK_GENERATION = 11
N_SCALARS = 12

# Legality verdicts (is_legal_reason); 0 means legal.
LEGAL = 0
OCCUPIED = 1
SUICIDE = 2
KO = 3
SUPERKO = 4
OFF_BOARD = 5


class Board(NamedTuple):
    """Every field is an array; shapes are per board of padded width W (cells = W*W)."""

    color: np.ndarray  # int8[cells]: EMPTY, BLACK, WHITE or BORDER
    root: np.ndarray  # int32[cells]: representative point of the string at a stone, else 0
    next_stone: np.ndarray  # int32[cells]: next stone of the same string (circular)
    string_size: np.ndarray  # int32[cells]: stones in the string, valid at roots
    lib_count: np.ndarray  # int32[cells]: pseudo-liberty count, valid at roots
    lib_sum: np.ndarray  # int64[cells]: sum of pseudo-liberty points, valid at roots
    lib_sum_sq: np.ndarray  # int64[cells]: sum of their squares, valid at roots
    empties: np.ndarray  # int32[cells]: the empty points, first scalars[N_EMPTY] entries
    empty_index: np.ndarray  # int32[cells]: position of an empty point in `empties`
    atari: np.ndarray  # int32[cells]: roots that may be in atari (a superset; validate on use)
    mark: np.ndarray  # int32[cells]: scratch marks, compared with scalars[MARK_GENERATION]
    stack: np.ndarray  # int32[cells]: scratch stack for flood fills
    scalars: np.ndarray  # int64[N_SCALARS]: size, width, side to move, ko point, ... (slots above)
    hash: np.ndarray  # uint64[1]: Zobrist key of the stones (positional, side not included)
    history: np.ndarray  # uint64[HISTORY_CAPACITY]: stone keys, [0] at the start, [m] after move m
    nbr: np.ndarray  # int32[cells]: neighbour counts by kind at on-board points (see NBR_EMPTY)


_u = np.uint64


@hot(inline="always")
def nbr_unit(c):
    """The amount one neighbour of colour ``c`` (BLACK or WHITE) adds to ``nbr``."""
    return np.int32(1) << np.int32(4 * c)


def new_board(size: int) -> Board:
    """Allocate an empty board of ``size`` x ``size`` (2..19)."""
    if not MIN_SIZE <= size <= MAX_SIZE:
        raise ValueError(f"board size {size} is outside {MIN_SIZE}..{MAX_SIZE}")
    cells = (size + 2) * (size + 2)
    board = Board(
        color=np.empty(cells, np.int8),
        root=np.zeros(cells, np.int32),
        next_stone=np.zeros(cells, np.int32),
        string_size=np.zeros(cells, np.int32),
        lib_count=np.zeros(cells, np.int32),
        lib_sum=np.zeros(cells, np.int64),
        lib_sum_sq=np.zeros(cells, np.int64),
        empties=np.zeros(cells, np.int32),
        empty_index=np.zeros(cells, np.int32),
        atari=np.zeros(cells, np.int32),
        mark=np.zeros(cells, np.int32),
        stack=np.zeros(cells, np.int32),
        scalars=np.zeros(N_SCALARS, np.int64),
        hash=np.zeros(1, np.uint64),
        history=np.zeros(HISTORY_CAPACITY, np.uint64),
        nbr=np.zeros(cells, np.int32),
    )
    clear_board(board, size)
    return board


@hot
def clear_board(b, size):
    w = size + 2
    s = b.scalars
    for i in range(N_SCALARS):
        s[i] = 0
    s[SIZE] = size
    s[WIDTH] = w
    s[TO_MOVE] = BLACK
    n = 0
    for p in range(w * w):
        row = p // w
        col = p % w
        b.mark[p] = 0
        b.root[p] = 0
        b.string_size[p] = 0
        b.lib_count[p] = 0
        b.lib_sum[p] = 0
        b.lib_sum_sq[p] = 0
        b.nbr[p] = 0
        if row == 0 or col == 0 or row == w - 1 or col == w - 1:
            b.color[p] = BORDER
        else:
            b.color[p] = EMPTY
            b.empties[n] = p
            b.empty_index[p] = n
            n += 1
    s[N_EMPTY] = n
    for i in range(n):
        p = b.empties[i]
        k = 0
        for q in (p - w, p - 1, p + 1, p + w):
            k += NBR_BORDER if b.color[q] == BORDER else NBR_EMPTY
        b.nbr[p] = k
    b.hash[0] = np.uint64(0)
    b.history[0] = np.uint64(0)


@hot
def place_setup_stones(b, points, c):
    """Put stones of colour ``c`` on the board before the game (handicap); not moves, so the
    move number stays 0 and the resulting position is the first entry of the superko history."""
    s = b.scalars
    side = s[TO_MOVE]
    for i in range(points.shape[0]):
        s[TO_MOVE] = c
        play(b, points[i])
    s[TO_MOVE] = side
    s[MOVE_NUMBER] = 0
    s[PASSES] = 0
    s[KO_POINT] = NO_POINT
    s[LAST_MOVE] = NO_POINT
    b.history[0] = b.hash[0]


@hot
def copy_board(dst, src):
    """Copy ``src`` into the preallocated ``dst`` (same size); the search's per-simulation reset."""
    n = _u(src.scalars[WIDTH] * src.scalars[WIDTH])
    _copy(dst.color, src.color, n)
    _copy(dst.root, src.root, n)
    _copy(dst.next_stone, src.next_stone, n)
    _copy(dst.string_size, src.string_size, n)
    _copy(dst.lib_count, src.lib_count, n)
    _copy(dst.lib_sum, src.lib_sum, n)
    _copy(dst.lib_sum_sq, src.lib_sum_sq, n)
    _copy(dst.empty_index, src.empty_index, n)
    _copy(dst.nbr, src.nbr, n)
    _copy(dst.empties, src.empties, _u(src.scalars[N_EMPTY]))
    _copy(dst.atari, src.atari, _u(src.scalars[N_ATARI]))
    generation = dst.scalars[MARK_GENERATION]  # dst's marks were made with its own counter
    for i in range(N_SCALARS):
        dst.scalars[i] = src.scalars[i]
    dst.scalars[MARK_GENERATION] = max(generation, src.scalars[MARK_GENERATION])
    dst.hash[0] = src.hash[0]
    _copy(dst.history, src.history, _u(min(src.scalars[MOVE_NUMBER] + 1, HISTORY_CAPACITY)))


@hot(inline="always")
def _copy(dst, src, n):
    """Separate loops per array let LLVM vectorize each copy."""
    for i in range(n):
        dst[i] = src[i]


@hot(inline="always")
def in_atari(b, r):
    """True when the string rooted at ``r`` has exactly one (real) liberty."""
    u = _u(r)
    n = np.int64(b.lib_count[u])
    m = b.lib_sum[u]
    return n * b.lib_sum_sq[u] == m * m


@hot(inline="always")
def atari_liberty(b, r):
    return b.lib_sum[_u(r)] // b.lib_count[_u(r)]


@hot(inline="always")
def _add_liberty(b, r, p):
    u = _u(r)
    b.lib_count[u] += 1
    b.lib_sum[u] += p
    b.lib_sum_sq[u] += p * p


@hot(inline="always")
def _remove_liberty(b, r, p):
    u = _u(r)
    b.lib_count[u] -= 1
    b.lib_sum[u] -= p
    b.lib_sum_sq[u] -= p * p


@hot(inline="always")
def _own_neighbours_safe(b, p, c):
    """For a point whose on-board neighbours are all ``c``: (some of them is in atari, some is not)."""
    w = b.scalars[WIDTH]
    color = b.color
    root = b.root
    some_atari = False
    some_safe = False
    for q in (p - w, p - 1, p + 1, p + w):
        if color[_u(q)] == c:
            if in_atari(b, root[_u(q)]):
                some_atari = True
            else:
                some_safe = True
    return some_atari, some_safe


@hot(inline="always")
def _saving_neighbour(b, p, c):
    """True when playing ``c`` at ``p`` (no empty neighbour) keeps a liberty: it joins a string of
    its own that is not in atari or captures a string in atari."""
    w = b.scalars[WIDTH]
    color = b.color
    root = b.root
    opp = 3 - c
    for q in (p - w, p - 1, p + 1, p + w):
        cq = color[_u(q)]
        if cq == c:
            if not in_atari(b, root[_u(q)]):
                return True
        elif cq == opp:
            if in_atari(b, root[_u(q)]):
                return True
    return False


@hot(inline="always")
def is_eye(b, p, c):
    """The seed's approximate eye of colour ``c``: an empty point whose on-board neighbours are all
    stones of ``c`` none of which is in atari (so filling it would never be needed)."""
    if p < 0 or b.color[_u(p)] != EMPTY:
        return False
    if (b.nbr[_u(p)] >> (4 * c)) & 15 != 4:
        return False
    some_atari, some_safe = _own_neighbours_safe(b, p, c)
    return not some_atari


@hot(inline="always")
def is_true_eye(b, p, c):
    """``is_eye`` with the diagonal test: an eye of ``c`` is false, and may have to be filled to
    connect the stones around it, when the opponent holds two of its diagonal points, or one when
    the point is on the edge (the usual one-point eye rule; Pachi's ``board_is_one_point_eye``).
    The tree uses it (``SearchConfig.tree_eyes``): with ``is_eye`` alone neither side ever fills a
    false eye in the tree, and a reply that saves a group so was never read (docs/benchmarks.md,
    "Where lost games turn"). The playouts keep ``is_eye``."""
    if not is_eye(b, p, c):
        return False
    w = b.scalars[WIDTH]
    opp = 3 - c
    held = 0
    for q in (p - w - 1, p - w + 1, p + w - 1, p + w + 1):
        held += b.color[_u(q)] == opp
    # Every point of the edge has its upper-left or lower-right diagonal off the board.
    edge = b.color[_u(p - w - 1)] == BORDER or b.color[_u(p + w + 1)] == BORDER
    return held + edge < 2


@hot(inline="always")
def simple_legality(b, p, c):
    """Legality of ``c`` playing at ``p`` under simple ko; returns LEGAL or the reason."""
    if p < 0:
        return OFF_BOARD
    cp = b.color[_u(p)]
    if cp != EMPTY:
        return OCCUPIED if cp != BORDER else OFF_BOARD
    if p == b.scalars[KO_POINT] and c == b.scalars[TO_MOVE]:
        return KO
    if b.nbr[_u(p)] & 15 != 0:
        return LEGAL
    return LEGAL if _saving_neighbour(b, p, c) else SUICIDE


@hot(inline="always")
def is_legal(b, p, c):
    return simple_legality(b, p, c) == LEGAL


@hot(inline="always")
def is_valid_move(b, p, c):
    """``is_legal(b, p, c) and not is_eye(b, p, c)`` for an empty point ``p`` and ``c`` to move:
    the playouts' test, decided from ``nbr`` alone for most points."""
    if p == b.scalars[KO_POINT]:
        return False
    n = b.nbr[_u(p)]
    if (n >> (4 * c)) & 15 == 4:
        some_atari, some_safe = _own_neighbours_safe(b, p, c)
        return some_atari and some_safe
    if n & 15 != 0:
        return True
    return _saving_neighbour(b, p, c)


@hot
def hash_after(b, p, c):
    """The stone key after ``c`` plays a legal move at ``p`` (for superko), without playing it."""
    h = b.hash[0] ^ STONE_KEYS[c, p]
    w = b.scalars[WIDTH]
    opp = 3 - c
    gen = _next_mark(b)
    for q in (p - w, p - 1, p + 1, p + w):
        if b.color[q] == opp:
            r = b.root[q]
            if in_atari(b, r) and b.mark[r] != gen:
                b.mark[r] = gen
                s = r
                while True:
                    h ^= STONE_KEYS[opp, s]
                    s = b.next_stone[s]
                    if s == r:
                        break
    return h


@hot
def superko_legality(b, p, c):
    """Legality under positional superko: simple rules, then no repetition of any earlier position."""
    reason = simple_legality(b, p, c)
    if reason != LEGAL:
        return reason
    h = hash_after(b, p, c)
    kept = min(b.scalars[MOVE_NUMBER] + 1, HISTORY_CAPACITY)
    for i in range(kept):
        if b.history[i] == h:
            return SUPERKO
    return LEGAL


@hot(inline="always")
def _next_mark(b):
    b.scalars[MARK_GENERATION] += 1
    return np.int32(b.scalars[MARK_GENERATION])


@hot(inline="always")
def _remove_empty(b, p):
    s = b.scalars
    i = b.empty_index[_u(p)]
    last = b.empties[_u(s[N_EMPTY] - 1)]
    b.empties[_u(i)] = last
    b.empty_index[_u(last)] = i
    s[N_EMPTY] -= 1


@hot(inline="always")
def _add_empty(b, p):
    s = b.scalars
    n = s[N_EMPTY]
    b.empties[_u(n)] = p
    b.empty_index[_u(p)] = n
    s[N_EMPTY] = n + 1


@hot(inline="always")
def _capture_string(b, r):
    """Remove the string rooted at ``r``; its stones become liberties of the strings around them."""
    w = b.scalars[WIDTH]
    color = b.color
    nbr = b.nbr
    c = color[_u(r)]
    opp = 3 - c
    back = NBR_EMPTY - nbr_unit(c)
    h = b.hash[0]
    count = 0
    s = r
    while True:
        color[_u(s)] = EMPTY
        b.root[_u(s)] = NO_POINT
        h ^= STONE_KEYS[_u(c), _u(s)]
        _add_empty(b, s)
        count += 1
        # The other stones of the string are not ``opp``, emptied yet or not.
        for q in (s - w, s - 1, s + 1, s + w):
            nbr[_u(q)] += back
            if color[_u(q)] == opp:
                _add_liberty(b, b.root[_u(q)], s)
        s = b.next_stone[_u(s)]
        if s == r:
            break
    b.hash[0] = h
    return count


@hot(inline="always")
def _merge_strings(b, r1, r2):
    """Merge two strings; the smaller is relabelled. Returns the surviving root."""
    size = b.string_size
    if size[_u(r1)] < size[_u(r2)]:
        r1, r2 = r2, r1
    u1 = _u(r1)
    u2 = _u(r2)
    root = b.root
    nxt = b.next_stone
    s = r2
    while True:
        root[_u(s)] = r1
        s = nxt[_u(s)]
        if s == r2:
            break
    n1 = nxt[u1]
    nxt[u1] = nxt[u2]
    nxt[u2] = n1
    size[u1] += size[u2]
    b.lib_count[u1] += b.lib_count[u2]
    b.lib_sum[u1] += b.lib_sum[u2]
    b.lib_sum_sq[u1] += b.lib_sum_sq[u2]
    return r1


@hot(inline="always")
def _empty_liberty(b, q):
    """(1, q, q*q) when ``q`` is empty, else zeros, without a branch."""
    e = np.int64(b.color[_u(q)] == EMPTY)
    return e, e * q, e * q * q


@hot(inline="always")
def _join_neighbour(b, p, q, c, r):
    """Merge the string of the new stone ``p`` of colour ``c`` (rooted at ``r`` so far) with
    ``q``'s string when that is another string of ``c``; returns the root."""
    uq = _u(q)
    if b.color[uq] == c:
        rq = b.root[uq]
        if rq != r:
            r = _merge_strings(b, r, rq)
    return r


@hot(inline="always")
def _take_neighbour(b, q, opp, captured, ko_candidate):
    """Second step of ``play`` for one neighbour ``q``: capture its ``opp`` string if it has no
    liberty left, or list it as in atari. Returns the updated (captured, ko_candidate)."""
    if b.color[_u(q)] == opp:
        rq = b.root[_u(q)]
        if b.lib_count[_u(rq)] == 0:
            n = _capture_string(b, rq)
            captured += n
            if n == 1:
                ko_candidate = q
        elif in_atari(b, rq):
            _list_atari(b, rq)
    return captured, ko_candidate


@hot(inline="always")
def play(b, p):
    """Play a move for the side to move, which the caller has checked is legal (or PASS).

    Returns the number of stones captured."""
    s = b.scalars
    c = s[TO_MOVE]
    opp = 3 - c
    s[TO_MOVE] = opp
    s[LAST_MOVE] = p
    if p == PASS:
        s[PASSES] += 1
        s[KO_POINT] = NO_POINT
        _record_history(b)
        return 0
    s[PASSES] = 0
    w = s[WIDTH]
    color = b.color
    root = b.root
    nbr = b.nbr
    up = _u(p)
    _remove_empty(b, p)
    color[up] = c
    b.hash[0] ^= STONE_KEYS[_u(c), up]
    root[up] = p
    b.next_stone[up] = p
    b.string_size[up] = 1
    # Neighbours written out one by one: a loop over a tuple of points compiles to an indirect
    # jump. The new stone's liberties and the point taken from the neighbouring strings are
    # counted without branches (empty and border points have root 0, a dummy that absorbs them).
    n1, s1, q1 = _empty_liberty(b, p - w)
    n2, s2, q2 = _empty_liberty(b, p - 1)
    n3, s3, q3 = _empty_liberty(b, p + 1)
    n4, s4, q4 = _empty_liberty(b, p + w)
    b.lib_count[up] = n1 + n2 + n3 + n4
    b.lib_sum[up] = s1 + s2 + s3 + s4
    b.lib_sum_sq[up] = q1 + q2 + q3 + q4
    gain = nbr_unit(c) - NBR_EMPTY
    for q in (p - w, p - 1, p + 1, p + w):
        nbr[_u(q)] += gain
        _remove_liberty(b, root[_u(q)], p)
    # Counted before the move: neighbours of colour c are the four minus those empty or of the
    # other colour or off the board, and so for the other colour.
    near = nbr[up]
    empty = near & 15
    own = 4 - empty - ((near >> (4 * opp)) & 15)
    other = 4 - empty - ((near >> (4 * c)) & 15)
    r = p
    if own > 0:
        r = _join_neighbour(b, p, p - w, c, r)
        r = _join_neighbour(b, p, p - 1, c, r)
        r = _join_neighbour(b, p, p + 1, c, r)
        r = _join_neighbour(b, p, p + w, c, r)
    captured = 0
    ko_candidate = NO_POINT
    if other > 0:
        captured, ko_candidate = _take_neighbour(b, p - w, opp, captured, ko_candidate)
        captured, ko_candidate = _take_neighbour(b, p - 1, opp, captured, ko_candidate)
        captured, ko_candidate = _take_neighbour(b, p + 1, opp, captured, ko_candidate)
        captured, ko_candidate = _take_neighbour(b, p + w, opp, captured, ko_candidate)
    if in_atari(b, r):
        _list_atari(b, r)
        if captured == 1 and b.string_size[_u(r)] == 1:
            s[KO_POINT] = ko_candidate
        else:
            s[KO_POINT] = NO_POINT
    else:
        s[KO_POINT] = NO_POINT
    if captured != 0:
        if c == BLACK:
            s[CAPTURED_WHITE] += captured
        else:
            s[CAPTURED_BLACK] += captured
    _record_history(b)
    return captured


@hot(inline="always")
def _record_history(b):
    s = b.scalars
    m = s[MOVE_NUMBER] + 1
    if m < HISTORY_CAPACITY:
        b.history[_u(m)] = b.hash[0]
    s[MOVE_NUMBER] = m


@hot(inline="always")
def _drop_stale_atari(b):
    """Keep in the atari list only the roots in atari now, once each; returns how many."""
    s = b.scalars
    gen = _next_mark(b)
    n = s[N_ATARI]
    keep = 0
    for i in range(n):
        r = b.atari[i]
        if b.color[r] != EMPTY and b.color[r] != BORDER and b.root[r] == r and b.mark[r] != gen:
            if in_atari(b, r):
                b.mark[r] = gen
                b.atari[keep] = r
                keep += 1
    s[N_ATARI] = keep
    return keep


@hot
def _drop_stale_atari_when_full(b):
    """Called by ``play`` when the list is full (nothing else compacts it in light playouts or in
    a long game); there is room afterwards since the strings in atari are fewer than the points."""
    return _drop_stale_atari(b)


@hot(inline="always")
def _list_atari(b, r):
    s = b.scalars
    n = s[N_ATARI]
    if n >= b.atari.shape[0]:
        n = _drop_stale_atari_when_full(b)
    b.atari[_u(n)] = r
    s[N_ATARI] = n + 1


@hot(inline="always")
def compact_atari(b, c):
    """Drop stale entries from the atari list and return how many strings of colour ``c`` in it
    are in atari now (they come first in ``b.atari`` on return, deduplicated)."""
    keep = _drop_stale_atari(b)
    # Stable partition so that colour c comes first.
    first = 0
    for i in range(keep):
        r = b.atari[i]
        if b.color[r] == c:
            b.atari[i] = b.atari[first]
            b.atari[first] = r
            first += 1
    return first


@hot
def is_game_over(b):
    return b.scalars[PASSES] >= 2


@hot
def area_counts(b):
    """Chinese area: (black stones + empty regions reaching only black, same for white)."""
    w = b.scalars[WIDTH]
    cells = w * w
    black = 0
    white = 0
    gen = _next_mark(b)
    stack = b.stack
    for p in range(cells):
        c = b.color[p]
        if c == BLACK:
            black += 1
        elif c == WHITE:
            white += 1
        elif c == EMPTY and b.mark[p] != gen:
            size = 0
            reaches = 0
            top = 0
            stack[top] = p
            top += 1
            b.mark[p] = gen
            while top > 0:
                top -= 1
                e = stack[top]
                size += 1
                for q in (e - w, e - 1, e + 1, e + w):
                    cq = b.color[q]
                    if cq == EMPTY:
                        if b.mark[q] != gen:
                            b.mark[q] = gen
                            stack[top] = q
                            top += 1
                    elif cq == BLACK:
                        reaches |= 1
                    elif cq == WHITE:
                        reaches |= 2
            if reaches == 1:
                black += size
            elif reaches == 2:
                white += size
    return black, white


@hot
def area_score(b, komi):
    """Black's area minus White's area minus komi (positive: Black wins)."""
    black, white = area_counts(b)
    return black - white - komi


@hot(inline="always")
def settled_area_score(b, komi):
    """Area score for a playout's final position, where every empty point is a single-point region
    (an empty point next to another empty point is always a legal non-eye move, so a playout that
    ended by two passes has none): each empty point belongs to the colour of its neighbours."""
    w = b.scalars[WIDTH]
    color = b.color
    nbr = b.nbr
    score = 0
    # Branch-free: a stone counts for its colour, an empty point for the colour it touches (none
    # if it touches both); touching black means not all neighbours are white, border or empty.
    for p in range(_u(w + 1), _u(w * (w - 1) - 1)):
        v = color[p]
        n = nbr[p]
        empty = n & 15
        black_near = np.int64(((n >> 8) & 15) + empty < 4)
        white_near = np.int64(((n >> 4) & 15) + empty < 4)
        score += np.int64(v == BLACK) - np.int64(v == WHITE)
        score += np.int64(v == EMPTY) * (black_near - white_near)
    return score - komi


@hot
def recompute_hash(b):
    """The stone key computed from scratch (the incremental one must always equal it)."""
    w = b.scalars[WIDTH]
    h = np.uint64(0)
    for p in range(w * w):
        c = b.color[p]
        if c == BLACK or c == WHITE:
            h ^= STONE_KEYS[c, p]
    return h


@hot
def position_key(b):
    """Key of the position as a game state: stones, side to move and the ko point."""
    h = b.hash[0]
    if b.scalars[TO_MOVE] == WHITE:
        h ^= WHITE_TO_MOVE_KEY
    ko = b.scalars[KO_POINT]
    if ko != NO_POINT:
        h ^= STONE_KEYS[0, ko]
    return h


@hot
def real_liberties(b, r):
    """Count the distinct liberties of the string rooted at ``r`` (not for hot loops)."""
    w = b.scalars[WIDTH]
    gen = _next_mark(b)
    n = 0
    s = r
    while True:
        for q in (s - w, s - 1, s + 1, s + w):
            if b.color[q] == EMPTY and b.mark[q] != gen:
                b.mark[q] = gen
                n += 1
        s = b.next_stone[s]
        if s == r:
            break
    return n


assert MAX_POINTS == STONE_KEYS.shape[1]
