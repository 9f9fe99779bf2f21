"""Ladder reading: does chasing a string with ataris capture it?

A ladder is read as a small game between the string's owner (the defender) and the other colour (the
attacker), played on a scratch board (``LadderScratch``):

- the defender, its string in atari, may extend at the liberty or capture an attacker string next to
  it that is in atari (a counter-capture);
- the attacker, facing a string with two liberties, may atari it on either one; a string with one
  liberty is captured (the attacker wins), with three or more it has escaped (the defender wins).

Both sides try every option (an AND-OR search, as Pachi's and Fuego's ladder readers do), depth first.
The board has no undo, so going back to an earlier ply copies the starting position again and
replays the moves of the current line: in a ladder the lines rarely branch, and a reading stops at
``LADDER_BUDGET`` plays (then the chase is taken as not working: the reader never claims a capture
it has not read out). Positional superko is ignored; simple ko is kept.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from obook.go.board import (
    KO_POINT,
    NO_POINT,
    TO_MOVE,
    WIDTH,
    Board,
    atari_liberty,
    copy_board,
    in_atari,
    is_legal,
    new_board,
    play,
)
from obook.go.tactics import edge_line, liberties_after_extending, string_liberties
from obook.jit import hot

MAX_PLIES = 96  # a ladder across a 19x19 board is under 80 plies
MAX_OPTIONS = 8  # a defender's counter-captures beyond these are not tried
LADDER_BUDGET = 200  # plays in one reading


class LadderScratch(NamedTuple):
    """Working memory of one ladder reader (one per search; allocated once)."""

    board: Board  # the board the chase is played on (same size as the position read)
    seq: np.ndarray  # int32[MAX_PLIES]: the move played at each ply of the current line
    options: np.ndarray  # int32[MAX_PLIES * MAX_OPTIONS]: each ply's moves to try
    n_options: np.ndarray  # int32[MAX_PLIES]
    next_option: np.ndarray  # int32[MAX_PLIES]
    libs: np.ndarray  # int32[3]: scratch of string_liberties


def new_ladder_scratch(size: int) -> LadderScratch:
    return LadderScratch(
        board=new_board(size),
        seq=np.zeros(MAX_PLIES, np.int32),
        options=np.zeros(MAX_PLIES * MAX_OPTIONS, np.int32),
        n_options=np.zeros(MAX_PLIES, np.int32),
        next_option=np.zeros(MAX_PLIES, np.int32),
        libs=np.zeros(3, np.int32),
    )


@hot(inline="always")
def _reset(work, b, first, mover):
    """``work`` := ``b`` with ``mover`` to move, then ``first`` played (NO_POINT: nothing played)."""
    copy_board(work, b)
    if work.scalars[TO_MOVE] != mover:
        work.scalars[TO_MOVE] = mover
        work.scalars[KO_POINT] = NO_POINT  # the ko ban was the other side's
    if first != NO_POINT:
        play(work, first)


@hot(inline="always")
def _add_option(sc, base, k, p):
    for i in range(k):
        if sc.options[base + i] == p:
            return k
    if k < MAX_OPTIONS:
        sc.options[base + k] = p
        return k + 1
    return k


@hot
def _open(work, sc, ply, target, defender):
    """The verdict for the side to move at ``ply`` on ``work``: 1 it wins, 0 it loses, or -1 when the
    reading goes on (its moves are then in ``sc`` at ``ply``)."""
    c = work.scalars[TO_MOVE]
    if work.color[target] != defender:
        return np.int64(c != defender)  # captured: a win for the attacker
    r = work.root[target]
    n = string_liberties(work, r, sc.libs)
    base = ply * MAX_OPTIONS
    k = 0
    if c != defender:
        if n >= 3:
            return 0
        if n == 1:
            return np.int64(is_legal(work, sc.libs[0], c))
        # Atari first from the side that leaves the extension fewer liberties, then the one that
        # pushes it along the edge: the chase's usual line.
        x0 = sc.libs[0]
        x1 = sc.libs[1]
        e0 = liberties_after_extending(work, x1, x0, r, defender)
        e1 = liberties_after_extending(work, x0, x1, r, defender)
        if e1 < e0 or (e1 == e0 and edge_line(work, x0) < edge_line(work, x1)):
            x0, x1 = x1, x0
        if is_legal(work, x0, c):
            k = _add_option(sc, base, k, x0)
        if is_legal(work, x1, c):
            k = _add_option(sc, base, k, x1)
    else:
        if n >= 2:
            return 1
        lib = sc.libs[0]
        if is_legal(work, lib, c):
            k = _add_option(sc, base, k, lib)
        w = work.scalars[WIDTH]
        s = r
        while True:
            for q in (s - w, s - 1, s + 1, s + w):
                if work.color[q] == 3 - defender:
                    rq = work.root[q]
                    if in_atari(work, rq):
                        x = atari_liberty(work, rq)
                        if is_legal(work, x, c):
                            k = _add_option(sc, base, k, x)
            s = work.next_stone[s]
            if s == r:
                break
    sc.n_options[ply] = k
    sc.next_option[ply] = 0
    return -1 if k > 0 else 0


@hot
def read_ladder(b, first, mover, target, defender, sc, budget):
    """True when the attacker (the colour other than ``defender``) captures the defender's string at
    ``target`` by the chase, whatever the defender does, after ``mover`` plays ``first`` on ``b``
    (``first`` NO_POINT: from ``b`` as it is with ``mover`` to move). False when the string escapes
    or the reading needs more than ``budget`` plays. ``b`` is not changed."""
    work = sc.board
    _reset(work, b, first, mover)
    side = work.scalars[TO_MOVE]
    v = _open(work, sc, 0, target, defender)
    if v >= 0:
        return (v == 1) == (side != defender)
    at = 0  # the ply the board shows
    ply = 0
    plays = 0
    while True:
        i = sc.next_option[ply]
        if i >= sc.n_options[ply]:
            v = 0  # every move of the side at ply fails
        elif plays >= budget or ply + 1 >= MAX_PLIES:
            return False
        else:
            sc.next_option[ply] = i + 1
            if at != ply:
                _reset(work, b, first, mover)
                for j in range(ply):
                    play(work, sc.seq[j])
                plays += ply
            m = sc.options[ply * MAX_OPTIONS + i]
            play(work, m)
            sc.seq[ply] = m
            plays += 1
            at = ply + 1
            v = _open(work, sc, ply + 1, target, defender)
            if v < 0:
                ply += 1
                continue
            if v == 1:
                continue  # the reply wins: try the next move
            v = 1
        # The side to move at ``ply`` is decided (v); tell its parents.
        while True:
            if ply == 0:
                return (v == 1) == (side != defender)
            ply -= 1
            if v == 1:
                break  # the parent's move failed: it tries its next one
            v = 1


@hot(inline="always")
def _open_points(b, p, taken):
    """The empty neighbours of ``p`` other than the empty point ``taken`` (the board keeps their
    count): liberties a string extended at ``p`` has at least, whatever else it joins or captures."""
    w = b.scalars[WIDTH]
    n = b.nbr[p] & 15
    if taken == p - w or taken == p - 1 or taken == p + 1 or taken == p + w:
        n -= 1
    return n


@hot
def escape_is_laddered(b, p, c, sc):
    """True when ``c`` extending at ``p`` (the liberty of an own string in atari) runs into a ladder
    that works: the other colour then captures the string by the chase. An extension into three
    open points has escaped: no reading (the reader would stop at its first ply)."""
    if _open_points(b, p, NO_POINT) >= 3:
        return False
    return read_ladder(b, p, c, p, c, sc, LADDER_BUDGET)


@hot
def atari_ladders(b, p, c, target, sc):
    """True when ``c`` playing ``p`` ataris the opponent's string at ``target`` and the chase that
    follows captures it (a working ladder, or a plain capture)."""
    return read_ladder(b, p, c, target, 3 - c, sc, LADDER_BUDGET)


@hot(inline="always")
def ladder_units(b, p, c, sc):
    """Ladder evidence for the legal move ``p`` of ``c``: -1 when it extends an own string in atari
    into a working ladder, +1 when it starts one (ataris a two-liberty opponent string that the chase
    captures), 0 otherwise (or both)."""
    w = b.scalars[WIDTH]
    opp = 3 - c
    escape = False
    starts = False
    done = False
    read = NO_POINT
    for q in (p - w, p - 1, p + 1, p + w):
        v = b.color[q]
        r = b.root[q]
        if v == c and not done and in_atari(b, r):
            escape = escape_is_laddered(b, p, c, sc)
            done = True
        elif v == opp and not starts and r != read and not in_atari(b, r):
            read = r
            if string_liberties(b, r, sc.libs) == 2:
                # The string extends at its other liberty; into three open points it has escaped.
                other = sc.libs[1] if sc.libs[0] == p else sc.libs[0]
                if _open_points(b, other, p) < 3:
                    starts = atari_ladders(b, p, c, q, sc)
    return np.int64(starts) - np.int64(escape)


__all__ = ["LADDER_BUDGET", "LadderScratch", "atari_ladders", "escape_is_laddered", "ladder_units",
           "new_ladder_scratch", "read_ladder"]
