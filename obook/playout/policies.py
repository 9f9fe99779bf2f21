"""Playout policies and the playout loop, all in numba.

Contract of a policy: ``select_move(board, policy, rng, scratch)`` returns a point that is legal for the side
to move under simple ko and is not one of its own eyes (``is_eye``), or ``PASS`` when no such move
exists. It may reorder ``board.empties`` (an unordered set) and mark scratch cells, nothing else.
New policies get a new constant below and a branch in ``select_move``; the loop never changes.

- ``LIGHT``: uniform among legal non-eye moves (Bouzy & Helmstetter's and the seed's BASIC).
  Sampling is without replacement from the empty points until a valid one appears, which is exactly
  uniform and touches only as many points as needed.
- ``ATARI50``: the seed's atari-50 (Yoshimoto et al.): if N1 capturing moves exist they share 50% of
  the probability (50/N1 % each) and the N2 other valid moves share the other 50% (all of it goes to
  captures when N2 = 0).
- ``HEAVY``: MoGo-style local answers (save-atari, 3x3 shapes, captures, no big self-atari); see
  ``heavy.py``. ``HEAVY_LADDER`` (``heavy-ladder``): the same, except that a string in atari is not
  extended along the first line into a ladder that captures it (Pachi's default border-ladder check).
  ``HEAVY_MOGGY`` (``heavy-moggy``, the search's default): ``heavy`` plus three rules of Pachi's moggy
  (ko fights, nakade, false eyes; see ``heavy.py``). Its moves may fill a false eye of their own
  (``is_true_eye``), so the contract's "own eyes" are true eyes for it. ``HEAVY_SEMEAI``
  (``heavy-semeai``, an option): ``heavy-moggy`` whose own string with two liberties that cannot run
  also counter-attacks a neighbour as short of liberties (Pachi's 2-liberty capture race).
"""

from __future__ import annotations

import numpy as np

from obook.go.board import (
    KO_POINT,
    N_EMPTY,
    PASS,
    SIZE,
    TO_MOVE,
    _next_mark,
    _u,
    area_score,
    atari_liberty,
    compact_atari,
    copy_board,
    is_valid_move,
    play,
    settled_area_score,
)
from obook.jit import hot
from obook.playout.heavy import heavy_move
from obook.rng import advance, below, rand_below, rand_float

LIGHT = 0
ATARI50 = 1
HEAVY = 2
HEAVY_LADDER = 3
HEAVY_MOGGY = 4
HEAVY_SEMEAI = 5
POLICY_NAMES = {"light": LIGHT, "atari50": ATARI50, "heavy": HEAVY, "heavy-ladder": HEAVY_LADDER,
                "heavy-moggy": HEAVY_MOGGY, "heavy-semeai": HEAVY_SEMEAI}


def policy_code(name: str) -> int:
    """The number the playout loop takes for the policy ``name``."""
    return POLICY_NAMES[name]


@hot(inline="always")
def _uniform_valid_move(b, c, rng, excluded_gen):
    """Uniform among legal non-eye moves of ``c`` whose mark is not ``excluded_gen`` (0: none)."""
    k = b.scalars[N_EMPTY]
    empties = b.empties
    index = b.empty_index
    x = rng[0]
    while k > 0:
        x = advance(x)
        i = below(x, k)
        p = empties[_u(i)]
        if (excluded_gen < 0 or b.mark[_u(p)] != excluded_gen) and is_valid_move(b, p, c):
            rng[0] = x
            return p
        k -= 1
        last = empties[_u(k)]
        empties[_u(i)] = last
        index[_u(last)] = i
        empties[_u(k)] = p
        index[_u(p)] = k
    rng[0] = x
    return PASS


@hot(inline="always")
def _capture_moves(b, c, out):
    """Write the distinct legal capturing moves of ``c`` to ``out``; return how many. Each is marked
    with the returned generation so that the uniform part can exclude them."""
    opp = 3 - c
    n_opp = compact_atari(b, opp)
    gen = _next_mark(b)
    ko = b.scalars[KO_POINT]
    n = 0
    for i in range(n_opp):
        lib = atari_liberty(b, b.atari[i])
        if b.mark[lib] != gen and lib != ko:
            b.mark[lib] = gen
            out[n] = lib
            n += 1
    return n, gen


@hot(inline="always")
def select_move(b, policy, rng, scratch):
    """A move for the side to move under ``policy`` (see the module contract)."""
    c = b.scalars[TO_MOVE]
    if policy == ATARI50:
        n1, gen = _capture_moves(b, c, scratch)
        if n1 > 0:
            if rand_float(rng) < 0.5:
                return scratch[rand_below(rng, n1)]
            p = _uniform_valid_move(b, c, rng, gen)
            if p == PASS:
                return scratch[rand_below(rng, n1)]
            return p
        return _uniform_valid_move(b, c, rng, np.int32(-1))
    # One call per variant, its flags constants: each inlined copy compiles without the others' rules.
    if policy == HEAVY:
        return heavy_move(b, rng, scratch, False, False)
    if policy == HEAVY_MOGGY:
        return heavy_move(b, rng, scratch, False, True)
    if policy == HEAVY_LADDER:
        return heavy_move(b, rng, scratch, True, False)
    if policy == HEAVY_SEMEAI:
        return heavy_move(b, rng, scratch, False, True, True)
    return _uniform_valid_move(b, c, rng, np.int32(-1))


@hot
def max_playout_moves(size):
    """A cap that only cycles (triple ko and the like) can reach."""
    return 3 * size * size + 20


@hot(inline="always")
def weighted_move(b, c, weights, rng):
    """A legal non-eye move of ``c`` with probability proportional to ``weights[c, p]`` (PASS if
    none): the seeds' temperature playouts (``obook/search/montecarlo.py``)."""
    n = b.scalars[N_EMPTY]
    total = 0.0
    for i in range(n):
        p = b.empties[i]
        if is_valid_move(b, p, c):
            total += weights[c, p]
    if total <= 0.0:
        return PASS
    r = rand_float(rng) * total
    last = PASS
    for i in range(n):
        p = b.empties[i]
        if is_valid_move(b, p, c):
            last = p
            r -= weights[c, p]
            if r < 0.0:
                return p
    return last


@hot
def run_playout(b, policy, rng, scratch, moves, colors, n_recorded, weights, temperature):
    """The playout loop every caller shares (``playout`` below, the MCTS kernel, the pure
    Monte-Carlo samplers, ownership): play ``b`` until two passes in a row or the move cap.

    Each move comes from ``policy``, or, when ``weights`` is given and ``temperature`` is positive,
    from ``weighted_move``. With ``moves`` given each move is written to ``moves`` from index
    ``n_recorded`` on while there is room, and with ``colors`` given who played it; pass None for
    what is not needed (numba then compiles the loop without it).
    Returns (moves played, index after the last recorded move, ended by two passes)."""
    limit = max_playout_moves(b.scalars[SIZE])
    played = 0
    passes = 0
    n = n_recorded
    while passes < 2 and played < limit:
        color = b.scalars[TO_MOVE]
        if weights is not None and temperature > 0.0:
            p = weighted_move(b, color, weights, rng)
        else:
            p = select_move(b, policy, rng, scratch)
        play(b, p)
        if moves is not None:
            if n < moves.shape[0]:
                moves[n] = p
                if colors is not None:
                    colors[n] = color
                n += 1
        played += 1
        if p == PASS:
            passes += 1
        else:
            passes = 0
    return played, n, passes >= 2


@hot(inline="always")
def playout_score(b, komi, two_passes):
    """Black's score at the end of a playout: area minus komi, settled (dead eyes' owners known)
    when it ended by two passes; a game cut by the move cap is scored as it stands."""
    if two_passes:
        return settled_area_score(b, komi)
    return area_score(b, komi)


@hot
def playout(b, policy, rng, komi, scratch):
    """Play ``b`` to the end under ``policy``; return (score for Black, moves played)."""
    played, _, two_passes = run_playout(b, policy, rng, scratch, None, None, 0, None, 0.0)
    return playout_score(b, komi, two_passes), played


def new_scratch(board) -> np.ndarray:
    """Scratch space a policy needs for one board (capture lists and the like)."""
    return np.zeros(board.color.shape[0], np.int32)


@hot
def playout_batch(start, work, policy, rng, komi, scratch, count):
    """Run ``count`` playouts from ``start`` (copied into ``work`` each time), all in one call.

    Returns (Black wins, total moves, sum of scores): the benchmark's and the pure Monte-Carlo
    players' inner loop."""
    wins = 0
    moves = 0
    total = 0.0
    for _ in range(count):
        copy_board(work, start)
        score, m = playout(work, policy, rng, komi, scratch)
        moves += m
        total += score
        if score > 0:
            wins += 1
    return wins, moves, total
