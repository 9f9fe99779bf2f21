"""The ``heavy`` playout policy: MoGo-style local answers instead of uniform moves.

In order, the first rule that yields a candidate chooses the move (uniformly among its candidates):

1. save-atari: capture the last move's string when it is in atari; when an own string next to the
   last move is in atari, capture a neighbouring string in atari, or extend at the liberty when
   that leaves at least two liberties;
2. low liberties (Fuego's rule): extend an own string the last move left with two liberties when
   that gives it three; atari the last move's string when it has two liberties and could not run;
3. patterns: the empty points around the last move that match a 3x3 shape (hane, cut, edge moves
   of Gelly, Wang, Munos & Teytaud 2006), unless the move is a self-atari;
4. capture: any capture on the board (as atari-50 does, but deterministic priority);
5. random: uniform among legal non-eye moves, refusing self-ataris of more than one stone (a single
   stone may be a throw-in or a nakade, so it is allowed).

With the nakade rule (``nakade=on``, Pachi's and Fuego's), between rules 1 and 2: when the last move
leaves an eye space of 3 to 5 empty points next to it enclosed by its own colour (after closing it, or
after a capture), in a shape one move kills (straight or bent three, pyramid four, bulky or crossed
five), play its vital point: the point of the space with the most neighbours in it.

With the model rule (``playout_model=on``), rule 3 draws instead among the 8 empty neighbours of the last
move that are legal, not own eyes and not self-ataris, each in proportion to its strength under the
learned move model (its 3x3 shape, its distance to the last move and its line: ``weights.py``), with
every other empty point standing for the model's strength of a far move: so a strong local shape is
played almost always, a weak one seldom, and otherwise rules 4 and 5 choose (as CrazyStone draws its
playout moves by Coulom's strengths, here only near the last move so that a move costs 8 lookups).

The 3x3 neighbourhood is coded as 2 bits per neighbour (EMPTY, BLACK, WHITE, BORDER) in the order
N, NE, E, SE, S, SW, W, NW; ``PATTERN_TABLE[code]`` says whether some shape matches, in any of the
8 orientations and with either colour to move (shapes are good moves for both sides).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from obook.go.board import (
    BLACK,
    BORDER,
    EMPTY,
    KO_POINT,
    LAST_MOVE,
    N_EMPTY,
    NO_POINT,
    PASS,
    TO_MOVE,
    WHITE,
    WIDTH,
    atari_liberty,
    compact_atari,
    in_atari,
    is_eye,
    is_legal,
)
from obook.go.tactics import (
    N_PATTERNS,
    edge_line,
    liberties_after,
    liberties_after_extending,
    mover_code,
    pattern_code,
    string_liberties,
    touches_own,
)
from obook.jit import hot
from obook.playout.weights import load_weights
from obook.rng import rand_below

# Shapes with the move at the centre. X and O are the two colours (both assignments are tried),
# '.' empty, '#' off board, 'x' anything but X, 'o' anything but O, '?' anything.
SHAPES = (
    ("XOX", "...", "???"),  # hane enclosing a stone
    ("XO.", "...", "?.?"),  # hane, non-cutting
    ("XO?", "X..", "x.?"),  # hane (magari)
    ("XOO", "...", "?.?"),  # thin hane
    ("XO?", "O.o", "?o?"),  # cut
    ("XO?", "O.X", "???"),  # cut after a peep
    ("?X?", "O.O", "ooo"),  # cut (de)
    ("X.?", "O.?", "###"),  # edge: chase
    ("OX?", "X.O", "###"),  # edge: block the side cut
    ("?X?", "x.O", "###"),  # edge: block the connection
    ("?XO", "x.x", "###"),  # edge: sagari
    ("?OX", "X.O", "###"),  # edge: cut
)

_CELLS = {".": (EMPTY,), "#": (BORDER,), "?": (EMPTY, BLACK, WHITE, BORDER)}
# Neighbour order of the code, as (row, col) in the 3x3 shape (row 0 on top).
_ORDER = ((0, 1), (0, 2), (1, 2), (2, 2), (2, 1), (2, 0), (1, 0), (0, 0))


def _orientations(shape: tuple[str, str, str]):
    grid = [list(row) for row in shape]
    for _ in range(4):
        grid = [list(row) for row in zip(*grid[::-1])]
        yield grid
        yield [row[::-1] for row in grid]


def _cell_values(ch: str, x_color: int) -> tuple[int, ...]:
    o_color = 3 - x_color
    if ch == "X":
        return (x_color,)
    if ch == "O":
        return (o_color,)
    if ch == "x":
        return tuple(v for v in (EMPTY, BLACK, WHITE, BORDER) if v != x_color)
    if ch == "o":
        return tuple(v for v in (EMPTY, BLACK, WHITE, BORDER) if v != o_color)
    return _CELLS[ch]


def build_pattern_table() -> np.ndarray:
    table = np.zeros(N_PATTERNS, dtype=np.bool_)
    for shape in SHAPES:
        for grid in _orientations(shape):
            if grid[1][1] != ".":
                continue
            for x_color in (BLACK, WHITE):
                choices = [_cell_values(grid[r][c], x_color) for r, c in _ORDER]
                for values in itertools.product(*choices):
                    code = 0
                    for k, v in enumerate(values):
                        code |= v << (2 * k)
                    table[code] = True
    return table


PATTERN_TABLE = build_pattern_table()


@hot(inline="always")
def _playable(b, p, c):
    return b.color[p] == EMPTY and is_legal(b, p, c) and not is_eye(b, p, c)


@hot(inline="always")
def _push(out, n, p):
    for i in range(n):
        if out[i] == p:
            return n
    out[n] = p
    return n + 1


@hot(inline="always")
def _save_atari_moves(b, last, c, out):
    """Moves that save an own string in atari next to the last move."""
    w = b.scalars[WIDTH]
    opp = 3 - c
    n = 0
    for q in (last - w, last - 1, last + 1, last + w):
        if b.color[q] != c:
            continue
        r = b.root[q]
        if not in_atari(b, r):
            continue
        lib = atari_liberty(b, r)
        if _playable(b, lib, c) and liberties_after(b, lib, c) >= 2:
            n = _push(out, n, lib)
        # Capturing a neighbour of the string in atari also saves it.
        s = r
        while True:
            for e in (s - w, s - 1, s + 1, s + w):
                if b.color[e] == opp and in_atari(b, b.root[e]):
                    cap = atari_liberty(b, b.root[e])
                    if _playable(b, cap, c):
                        n = _push(out, n, cap)
            s = b.next_stone[s]
            if s == r:
                break
    return n


@hot(inline="always")
def _low_liberty_moves(b, last, c, out, libs):
    """Two-liberty tactics around the last move (Fuego's "low liberty" rule): extend an own string
    the last move left with two liberties when that gives it three or more, and atari the last
    move's string when it has two liberties and could not run away from the atari."""
    w = b.scalars[WIDTH]
    opp = 3 - c
    n = 0
    rl = b.root[last]
    if b.color[last] == opp and not in_atari(b, rl) and (b.string_size[rl] > 1 or b.nbr[last] & 15 == 2) \
            and string_liberties(b, rl, libs) == 2:
        for k in range(2):
            x = libs[k]
            y = libs[1 - k]
            # After the atari at x, extending at y must leave the string in atari again.
            if _playable(b, x, c) and liberties_after(b, x, c) >= 2 \
                    and liberties_after_extending(b, y, x, rl, opp) <= 1:
                n = _push(out, n, x)
    for q in (last - w, last - 1, last + 1, last + w):
        if b.color[q] != c:
            continue
        r = b.root[q]
        if in_atari(b, r) or string_liberties(b, r, libs) != 2:
            continue
        x0 = libs[0]
        x1 = libs[1]
        # Extending at one liberty keeps the other: three or more in all.
        if _playable(b, x0, c) and 1 + liberties_after_extending(b, x0, x1, r, c) >= 3:
            n = _push(out, n, x0)
        if _playable(b, x1, c) and 1 + liberties_after_extending(b, x1, x0, r, c) >= 3:
            n = _push(out, n, x1)
    return n


@hot(inline="always")
def _pattern_moves(b, last, c, out):
    w = b.scalars[WIDTH]
    n = 0
    for p in (last - w - 1, last - w, last - w + 1, last - 1, last + 1, last + w - 1, last + w, last + w + 1):
        if b.color[p] == EMPTY and PATTERN_TABLE[pattern_code(b, p)] and _playable(b, p, c):
            if liberties_after(b, p, c) >= 2:
                out[n] = p
                n += 1
    return n


_WEIGHTS = load_weights()
# Strengths (not logarithms) of the model rule, baked into the compiled code (the cache's digest
# covers the weights file: obook/jit.py). FIXED is the fixed-point scale they are drawn at.
MODEL_PATTERN = np.exp(_WEIGHTS.pattern).astype(np.float32)
MODEL_NEAR = np.exp(_WEIGHTS.near)
MODEL_LINE = np.exp(_WEIGHTS.line)
MODEL_FAR = math.exp(_WEIGHTS.far)
FIXED = 64.0


@hot(inline="always")
def _model_move(b, last, c, rng, out):
    """Rule 3 with the model (see the module docstring): a point, or NO_POINT to go on to rule 4.
    Uses ``out[0:16]`` for the candidates and their strengths in fixed point. The legality and
    self-atari checks cost more than the strengths, so only a drawn point is checked (a point that
    fails is taken out and the draw repeated)."""
    w = b.scalars[WIDTH]
    n = 0
    total = 0
    k = 0
    for p in (last - w, last - 1, last + 1, last + w, last - w - 1, last - w + 1, last + w - 1, last + w + 1):
        near = MODEL_NEAR[0] if k < 4 else MODEL_NEAR[1]  # the first four are orthogonal
        k += 1
        if b.color[p] != EMPTY:
            continue
        strength = MODEL_PATTERN[mover_code(pattern_code(b, p), c)] * near * MODEL_LINE[min(edge_line(b, p), 4)]
        weight = np.int64(strength * FIXED) + 1
        out[n] = p
        out[8 + n] = weight
        total += weight
        n += 1
    far = np.int64((b.scalars[N_EMPTY] - n) * MODEL_FAR * FIXED)
    while total > 0:
        r = rand_below(rng, total + far)
        if r >= total:
            return NO_POINT
        i = 0
        while r >= out[8 + i]:
            r -= out[8 + i]
            i += 1
        p = out[i]
        if _playable(b, p, c) and liberties_after(b, p, c) >= 2:
            return p
        total -= out[8 + i]
        out[8 + i] = 0
    return NO_POINT


NAKADE_MAX = 5  # eye spaces above this size are not read


@hot(inline="always")
def _in_region(region, n, x):
    for j in range(n):
        if region[j] == x:
            return True
    return False


@hot(inline="always")
def _enclosed_by(b, x, owner):
    """Whether the empty point ``x`` touches no stone of the colour other than ``owner`` (one load)."""
    n = b.nbr[x]
    return (n & 15) + ((n >> (4 * owner)) & 15) == 4


@hot(inline="always")
def _eye_space(b, q, owner, region):
    """The empty region at ``q`` into ``region`` when it has at most NAKADE_MAX points and touches no
    stone of the colour other than ``owner``; returns its size, or 0 when it is not such a space."""
    if not _enclosed_by(b, q, owner):
        return 0
    w = b.scalars[WIDTH]
    region[0] = q
    n = 1
    # Twice the region's inner edges: at most 10 in the shapes of 5 points or fewer (bulky five).
    degrees = b.nbr[q] & 15
    i = 0
    while i < n:
        e = region[i]
        for x in (e - w, e - 1, e + 1, e + w):
            if b.color[x] == EMPTY and not _in_region(region, n, x):
                d = b.nbr[x] & 15
                # Four empty neighbours: only the centre of a crossed five, whose arms have one.
                if n == NAKADE_MAX or (d == 4 and degrees > n) or not _enclosed_by(b, x, owner):
                    return 0
                degrees += d
                if degrees > 2 * NAKADE_MAX:
                    return 0
                region[n] = x
                n += 1
        i += 1
    return n


@hot(inline="always")
def vital_point(b, region, n):
    """The vital point of the eye space ``region[:n]`` when one move there kills it (straight or
    bent three, pyramid four, bulky or crossed five), else NO_POINT."""
    if n < 3:
        return NO_POINT
    w = b.scalars[WIDTH]
    best = NO_POINT
    top = 0
    ties = 0
    square = False
    for i in range(n):
        e = region[i]
        d = 0
        for x in (e - w, e - 1, e + 1, e + w):
            if _in_region(region, n, x):
                d += 1
        if d > top:
            top = d
            best = e
            ties = 1
        elif d == top:
            ties += 1
        if _in_region(region, n, e + 1) and _in_region(region, n, e + w) and _in_region(region, n, e + w + 1):
            square = True
    if ties != 1:
        return NO_POINT
    if n == 3 or (n == 4 and top == 3) or (n == 5 and (top == 4 or square)):
        return best
    return NO_POINT


@hot(inline="always")
def _nakade_move(b, last, c, region):
    """The vital point of an eye space the last move left next to it (see the module docstring), or
    NO_POINT."""
    w = b.scalars[WIDTH]
    owner = b.color[last]
    if (b.nbr[last] >> (4 * owner)) & 15 == 0:
        return NO_POINT  # a lone stone in the open closes no eye space
    for q in (last - w, last - 1, last + 1, last + w):
        if b.color[q] == EMPTY:
            n = _eye_space(b, q, owner, region)
            v = vital_point(b, region, n)
            if v != NO_POINT and _playable(b, v, c):
                return v
    return NO_POINT


@hot(inline="always")
def _capture_anywhere(b, c, out):
    opp = 3 - c
    n_opp = compact_atari(b, opp)
    ko = b.scalars[KO_POINT]
    n = 0
    for i in range(n_opp):
        lib = atari_liberty(b, b.atari[i])
        if lib != ko and is_legal(b, lib, c):
            n = _push(out, n, lib)
    return n


@hot(inline="always")
def _random_move(b, c, rng):
    """Uniform among legal non-eye moves that are not self-ataris of two stones or more."""
    k = b.scalars[N_EMPTY]
    empties = b.empties
    index = b.empty_index
    while k > 0:
        i = rand_below(rng, k)
        p = empties[i]
        if _playable(b, p, c):
            libs = liberties_after(b, p, c)
            if libs >= 2:
                return p
            # A self-atari: fine for a lone stone (throw-in, nakade), not for a group.
            if not touches_own(b, p, c):
                return p
        k -= 1
        last = empties[k]
        empties[i] = last
        index[last] = i
        empties[k] = p
        index[p] = k
    return PASS


@hot(inline="always")
def heavy_move(b, rng, out, nakade, model):
    """The ``heavy`` policy's move for the side to move (see the module docstring); ``nakade`` turns
    the nakade rule on, ``model`` the model rule."""
    c = b.scalars[TO_MOVE]
    last = b.scalars[LAST_MOVE]
    if last != PASS and last != NO_POINT and b.color[last] != EMPTY:
        n = _save_atari_moves(b, last, c, out)
        if b.color[last] == 3 - c and in_atari(b, b.root[last]):
            cap = atari_liberty(b, b.root[last])
            if cap != b.scalars[KO_POINT] and is_legal(b, cap, c):
                n = _push(out, n, cap)
        if n > 0:
            return out[rand_below(rng, n)]
        if nakade:
            v = _nakade_move(b, last, c, out)
            if v != NO_POINT:
                return v
        n = _low_liberty_moves(b, last, c, out, out[out.shape[0] - 3:])
        if n > 0:
            return out[rand_below(rng, n)]
        if model:
            p = _model_move(b, last, c, rng, out)
            if p != NO_POINT:
                return p
        else:
            n = _pattern_moves(b, last, c, out)
            if n > 0:
                return out[rand_below(rng, n)]
    n = _capture_anywhere(b, c, out)
    if n > 0:
        return out[rand_below(rng, n)]
    p = _random_move(b, c, rng)
    if p == PASS:
        # Only self-ataris of groups are left: play them rather than pass with moves on the board.
        k = b.scalars[N_EMPTY]
        for i in range(k):
            q = b.empties[i]
            if _playable(b, q, c):
                return q
    return p


__all__ = ["heavy_move", "PATTERN_TABLE", "pattern_code", "liberties_after", "SHAPES", "WHITE"]
