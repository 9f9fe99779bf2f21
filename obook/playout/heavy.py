"""The ``heavy`` playout policy: MoGo-style local answers instead of uniform moves.

In order, the first rule that yields a candidate chooses the move (uniformly among its candidates):

1. save-atari: capture the last move's string when it is in atari; when an own string next to the
   last move is in atari, capture a neighbouring string in atari, or extend at the liberty when
   that leaves at least two liberties (``heavy-ladder``: unless that only crawls along the first
   line into capture, ``first_line_ladder``);
2. low liberties (Fuego's rule): extend an own string the last move left with two liberties when
   that gives it three; atari the last move's string when it has two liberties and could not run;
3. patterns: the empty points around the last move that match a 3x3 shape (hane, cut, edge moves
   of Gelly, Wang, Munos & Teytaud 2006), unless the move is a self-atari;
4. capture: any capture on the board (as atari-50 does, but deterministic priority);
5. random: uniform among legal non-eye moves, refusing self-ataris of more than one stone (a single
   stone may be a throw-in or a nakade, so it is allowed).

``heavy-moggy`` adds three rules of Pachi's moggy playout policy, each missing from ``heavy`` in
games obook lost (docs/benchmarks.md, "Ko, nakade and false eyes in the playouts"):

0. ko: within three moves of a ko capture whose ban has ended, 40% of the time play at the ko point
   (the taker connects, the other side takes back), unless that is a bad self-atari; without it
   rule 4 always takes back and nobody ever connects;
2b. nakade: after rule 2, 80% of the time, play the vital point of a 3 to 5 point eye space the
   last move closed (``nakade_vital_point``);
5. the random rule also plays a self-atari of a group that is a nakade (``nakade_self_atari``),
   and rules 3 and 5 fill false eyes (only true eyes, ``is_true_eye``, are refused).

``heavy-semeai`` (an option) adds to ``heavy-moggy`` the defender's side of Pachi's 2-liberty check:
when rule 2 finds an own string with two liberties next to the last move that cannot run, it
captures a neighbouring opponent string in atari or ataris one with two liberties too
(``_semeai_moves``). It costs 1-2% of the playouts' speed and was undecided at equal time
(docs/benchmarks.md, "A 2-liberty capture race in the playouts, tried").

The 3x3 neighbourhood is coded as 2 bits per neighbour (EMPTY, BLACK, WHITE, BORDER) in the order
N, NE, E, SE, S, SW, W, NW; ``PATTERN_TABLE[code]`` says whether some shape matches, in any of the
8 orientations and with either colour to move (shapes are good moves for both sides); the playouts
read it as bits (``pattern_matches``).
"""

from __future__ import annotations

import itertools

import numpy as np

from obook.go.board import (
    BLACK,
    BORDER,
    EMPTY,
    KO_POINT,
    LAST_MOVE,
    MOVE_NUMBER,
    N_EMPTY,
    NO_POINT,
    PASS,
    TO_MOVE,
    WHITE,
    WIDTH,
    _next_mark,
    atari_liberty,
    compact_atari,
    in_atari,
    is_eye,
    is_legal,
    is_true_eye,
)
from obook.go.tactics import (
    N_PATTERNS,
    liberties_after,
    liberties_after_extending,
    nakade_self_atari,
    nakade_vital_point,
    pattern_code,
    string_liberties,
    touches_own,
)
from obook.jit import hot
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
# The same table as bits, 64 codes a word: 8 kB stays in the L1 cache beside the board while the
# search's descent evicts the 64 kB of booleans.
PATTERN_BITS = np.packbits(PATTERN_TABLE.reshape(-1, 64)[:, ::-1], axis=1).view(">u8").astype(np.uint64).ravel()


@hot(inline="always")
def pattern_matches(code):
    return (PATTERN_BITS[code >> 6] >> np.uint64(code & 63)) & np.uint64(1) != np.uint64(0)


@hot(inline="always")
def _playable(b, p, c):
    return b.color[p] == EMPTY and is_legal(b, p, c) and not is_eye(b, p, c)


@hot(inline="always")
def _playable_eyes(b, p, c, true_eyes):
    """``_playable``, or with ``true_eyes`` refusing only true eyes (``is_true_eye``)."""
    if true_eyes:
        return b.color[p] == EMPTY and is_legal(b, p, c) and not is_true_eye(b, p, c)
    return _playable(b, p, c)


@hot(inline="always")
def _push(out, n, p):
    for i in range(n):
        if out[i] == p:
            return n
    out[n] = p
    return n + 1


@hot(inline="always")
def _adjacent(b, p, q):
    w = b.scalars[WIDTH]
    d = p - q
    return d == 1 or d == -1 or d == w or d == -w


@hot(inline="always")
def first_line_ladder(b, lib, c, libs):
    """True when ``c``'s string in atari whose liberty ``lib`` is on the first line, touching one
    stone of it on the second line, would only crawl along the edge into capture by extending
    there: the opponent's stones beside that stone on the second line have liberties to spare and
    no own stone two points along the edge from ``lib`` on both sides breaks the chase (Pachi's
    cheap check of the ladders its playouts meet most, ``is_border_ladder``). Counter-captures are
    the caller's to rule out. ``libs``: three cells of scratch."""
    w = b.scalars[WIDTH]
    opp = 3 - c
    inward = 0
    borders = 0
    own = 0
    for q in (lib - w, lib - 1, lib + 1, lib + w):
        v = b.color[q]
        if v == BORDER:
            borders += 1
            inward = lib - q
        elif v == c:
            own += 1
    s = lib + inward
    if borders != 1 or own != 1 or b.color[s] != c:
        return False
    along = 1 if inward == w or inward == -w else w
    if b.color[lib + 2 * along] == c and b.color[lib - 2 * along] == c:
        return False
    for d in (along, -along):
        g = s + d
        if b.color[g] != opp:
            return False
        n = string_liberties(b, b.root[g], libs)
        if n < 2:
            return False
        # Blocking at lib + d must not put that string in atari itself.
        if n == 2 and (b.color[lib + 2 * d] != EMPTY or _adjacent(b, libs[0], libs[1])):
            return False
    return True


@hot(inline="always")
def _save_atari_moves(b, last, c, out, ladders):
    """Moves that save an own string in atari next to the last move. With ``ladders`` an extension
    that only crawls along the first line into capture (``first_line_ladder``) is not one, unless
    a counter-capture could save the string instead."""
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
        extension = n
        if _playable(b, lib, c) and liberties_after(b, lib, c) >= 2:
            n = _push(out, n, lib)
        # Capturing a neighbour of the string in atari also saves it.
        counter = False
        s = r
        while True:
            for e in (s - w, s - 1, s + 1, s + w):
                if b.color[e] == opp and in_atari(b, b.root[e]):
                    cap = atari_liberty(b, b.root[e])
                    if _playable(b, cap, c):
                        n = _push(out, n, cap)
                        counter = True
            s = b.next_stone[s]
            if s == r:
                break
        if ladders and not counter and n > extension and first_line_ladder(b, lib, c, out[out.shape[0] - 3:]):
            n = extension  # the extension, pushed last, is withdrawn
    return n


@hot(inline="always")
def _semeai_moves(b, r, c, out, n, libs):
    """The defender's counter-attack of Pachi's ``group_2lib_check`` for the own string ``r`` with
    two liberties: capture a neighbouring opponent string in atari, or atari one that has two
    liberties too (a capture race of two liberties each, which extending alone loses). Each
    neighbour is read once (a mark on its root; nothing read here marks the board); ``libs`` is
    three cells of scratch, ``out[n:]`` takes the moves; returns the new count."""
    w = b.scalars[WIDTH]
    opp = 3 - c
    ko = b.scalars[KO_POINT]
    gen = _next_mark(b)
    s = r
    while True:
        for e in (s - w, s - 1, s + 1, s + w):
            if b.color[e] != opp:
                continue
            g = b.root[e]
            if b.mark[g] == gen:
                continue
            b.mark[g] = gen
            if in_atari(b, g):
                cap = atari_liberty(b, g)
                if cap != ko and is_legal(b, cap, c):
                    n = _push(out, n, cap)
            elif string_liberties(b, g, libs) == 2:
                for k in range(2):
                    x = libs[k]
                    if _playable(b, x, c) and liberties_after(b, x, c) >= 2:
                        n = _push(out, n, x)
        s = b.next_stone[s]
        if s == r:
            break
    return n


@hot(inline="always")
def _low_liberty_moves(b, last, c, out, libs, semeai=False):
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
        before = n
        # Extending at one liberty keeps the other: three or more in all.
        if _playable(b, x0, c) and 1 + liberties_after_extending(b, x0, x1, r, c) >= 3:
            n = _push(out, n, x0)
        if _playable(b, x1, c) and 1 + liberties_after_extending(b, x1, x0, r, c) >= 3:
            n = _push(out, n, x1)
        if semeai and n == before:
            # It cannot run: a capture race, if a neighbour is as short of liberties.
            n = _semeai_moves(b, r, c, out, n, libs)
    return n


@hot(inline="always")
def _pattern_moves(b, last, c, out, true_eyes):
    w = b.scalars[WIDTH]
    n = 0
    for p in (last - w - 1, last - w, last - w + 1, last - 1, last + 1, last + w - 1, last + w, last + w + 1):
        if b.color[p] == EMPTY and pattern_matches(pattern_code(b, p)) and _playable_eyes(b, p, c, true_eyes):
            if liberties_after(b, p, c) >= 2:
                out[n] = p
                n += 1
    return n


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
def _random_move(b, c, rng, out, moggy):
    """Uniform among legal non-eye moves that are not self-ataris of two stones or more."""
    k = b.scalars[N_EMPTY]
    empties = b.empties
    index = b.empty_index
    while k > 0:
        i = rand_below(rng, k)
        p = empties[i]
        if _playable_eyes(b, p, c, moggy):
            libs = liberties_after(b, p, c)
            if libs >= 2:
                return p
            # A self-atari: fine for a lone stone (throw-in, nakade), not for a group unless a nakade.
            if not touches_own(b, p, c):
                return p
            if moggy and nakade_self_atari(b, p, c, out):
                return p
        k -= 1
        last = empties[k]
        empties[i] = last
        index[last] = i
        empties[k] = p
        index[p] = k
    return PASS


@hot(inline="always")
def _good_self_atari(b, p, c, out):
    """Not a self-atari of a group, or a nakade (``nakade_self_atari``)."""
    return liberties_after(b, p, c) >= 2 or not touches_own(b, p, c) or nakade_self_atari(b, p, c, out)


@hot(inline="always")
def _ko_move(b, c, rng, out):
    """Pachi's ko-fight rule (``korate`` 40, ``koage`` 3): within two moves after the move that
    followed a ko capture (the ban's), 40% of the time the side to move plays at the ko point: the
    taker connects, the other side takes back. Without it a playout always takes back (rule 4,
    any capture) and never connects, and misjudges every ko. The ko point and the move number of
    the ban are kept in the scratch's last five and fourth-last cells (the board does not keep
    them: a store in ``play`` cost the other policies 2-3%), noted when a side to move finds
    itself banned; a note left by an earlier playout can only name a point that is empty and
    legal now, where a move is harmless."""
    end = out.shape[0]
    ko = b.scalars[KO_POINT]
    if ko != NO_POINT:
        out[end - 5] = ko
        out[end - 4] = b.scalars[MOVE_NUMBER]
        return PASS
    k = out[end - 5]
    age = b.scalars[MOVE_NUMBER] - out[end - 4]
    if k == NO_POINT or age <= 0 or age >= 3 or b.color[k] != EMPTY or rand_below(rng, 100) >= 40:
        return PASS
    if is_legal(b, k, c) and _good_self_atari(b, k, c, out):
        return k
    return PASS


@hot(inline="always")
def heavy_move(b, rng, out, ladders, moggy, semeai=False):
    """The ``heavy`` policy's move for the side to move (see the module docstring); ``ladders``: the
    ``heavy-ladder`` variant (rule 1 reads first-line ladders); ``moggy``: the ``heavy-moggy``
    variant (three rules of Pachi's moggy: ko fights, nakade, false eyes); ``semeai``: with
    ``moggy``, the ``heavy-semeai`` variant (an own string with two liberties next to the last move
    also counter-attacks its neighbours, ``_semeai_moves``)."""
    c = b.scalars[TO_MOVE]
    last = b.scalars[LAST_MOVE]
    if moggy:
        p = _ko_move(b, c, rng, out)
        if p != PASS:
            return p
    if last != PASS and last != NO_POINT and b.color[last] != EMPTY:
        n = _save_atari_moves(b, last, c, out, ladders)
        if b.color[last] == 3 - c and in_atari(b, b.root[last]):
            cap = atari_liberty(b, b.root[last])
            if cap != b.scalars[KO_POINT] and is_legal(b, cap, c):
                n = _push(out, n, cap)
        if n > 0:
            return out[rand_below(rng, n)]
        n = _low_liberty_moves(b, last, c, out, out[out.shape[0] - 3:], semeai)
        if n > 0:
            return out[rand_below(rng, n)]
        if moggy:
            p = nakade_vital_point(b, last, out)
            if p != NO_POINT and is_legal(b, p, c) and rand_below(rng, 100) < 80:
                return p
        n = _pattern_moves(b, last, c, out, moggy)
        if n > 0:
            return out[rand_below(rng, n)]
    n = _capture_anywhere(b, c, out)
    if n > 0:
        return out[rand_below(rng, n)]
    p = _random_move(b, c, rng, out, moggy)
    if p == PASS:
        # Only self-ataris of groups are left: play them rather than pass with moves on the board.
        k = b.scalars[N_EMPTY]
        for i in range(k):
            q = b.empties[i]
            if _playable_eyes(b, q, c, moggy):
                return q
    return p


__all__ = ["first_line_ladder", "heavy_move", "PATTERN_TABLE", "pattern_code", "liberties_after", "SHAPES", "WHITE"]
