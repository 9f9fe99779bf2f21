"""Exact mine probabilities by a transfer-matrix count over the frontier, fast on expert boards.

The belief is the uniform law on consistent layouts (``obook.mines.samplers``). Hidden cells next to a
revealed count form the frontier; it splits into components that share no count, and the interior (hidden
cells next to no count) only matters through how many mines it holds. So a cell's probability needs, per
component, the number of its solutions with k mines (and with k mines and a mine on the cell); the
components are combined by convolution over their mine totals, weighted by C(interior, N - frontier mines).

Enumerating a component's solutions one by one (``samplers.exact_prepare``) is exponential in its size and
gives up on large expert frontiers. Here each component is counted by dynamic programming along an order of
its cells (breadth-first from a far end, so that the order follows the frontier's length): after the first
j cells, the only thing the rest needs to know is the partial sum of every count that has cells on both sides
of the cut ("open" counts), so the partial assignments are merged by that state. A state packs the partial
sums of the open counts into an int64, bit_length(t) bits for a count wanting t mines (``MAX_BITS`` in all). The forward pass counts, per state and
mine number k, the partial assignments; the backward pass carries the weight of the completions, already
folded with the other components and the interior (so no convolution per cell), and gives every cell its
probability. Both passes cost (cells x states x k), and a frontier that runs along a line keeps a handful of
states per cut whatever its length.

Tables are rescaled at every cut (only ratios matter). A cell no consistent layout puts a mine on gets
exactly 0.0 (proved safe), a cell every consistent layout puts a mine on exactly 1.0 (proved mine).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from obook.errors import ObookError
from obook.jit import cold
from obook.mines.game import UNKNOWN, neighbour_table

MAX_BITS = 62  # bits of a state: an open count wanting t mines takes bit_length(t) of them
MAX_TABLE = 30_000_000  # table entries (states x (cells + 1)) per component before giving up
COUNT_OK, COUNT_TOO_WIDE, COUNT_TOO_BIG, COUNT_INCONSISTENT = 0, -1, -2, -3
FREE, SAFE, MINE = -1, 0, 1  # what is known of a hidden cell (``fixed``): nothing, proved safe, proved mine


@cold
def _breadth_first(start, mark, cell_ncons, cell_cons, cons_nvar, cons_var, out, end):
    """Append to ``out`` (from ``end``) the cells marked 1 that ``start`` reaches through shared counts,
    breadth-first, marking them 2; return the new end."""
    out[end] = start
    mark[start] = 2
    head, tail = end, end + 1
    while head < tail:
        x = out[head]
        head += 1
        for a in range(cell_ncons[x]):
            j = cell_cons[x, a]
            for b in range(cons_nvar[j]):
                y = cons_var[j, b]
                if mark[y] == 1:
                    mark[y] = 2
                    out[tail] = y
                    tail += 1
    return tail


@cold
def settle(obs, nbr, deg, fixed):
    """Fix in ``fixed`` (FREE, SAFE or MINE per hidden cell) what single counts prove, until nothing
    changes: a count whose fixed mines reach it makes its other hidden neighbours safe, a count that
    needs all of them makes them mines. Cheap, and it keeps proved mines out of the frontier, where they
    would tie its parts together (a mine walled in by counts is in every one of them). Returns False when
    some count can no longer be met (too many fixed mines around it, or too few cells left)."""
    changed = True
    while changed:
        changed = False
        for c in range(obs.size):
            if obs[c] == UNKNOWN:
                continue
            free = 0
            mines = 0
            for k in range(deg[c]):
                d = nbr[c, k]
                if obs[d] == UNKNOWN:
                    if fixed[d] == MINE:
                        mines += 1
                    elif fixed[d] == FREE:
                        free += 1
            need = obs[c] - mines
            if need < 0 or need > free:
                return False
            if free > 0 and (need == 0 or need == free):
                for k in range(deg[c]):
                    d = nbr[c, k]
                    if obs[d] == UNKNOWN and fixed[d] == FREE:
                        fixed[d] = SAFE if need == 0 else MINE
                changed = True
    return True


@cold
def frontier_constraints(obs, nbr, deg, fixed):
    """The counts, the frontier split into components (breadth-first inside each) and the interior, over
    the hidden cells that ``fixed`` leaves FREE (a count's target drops by its neighbours fixed as mines).

    Returns ``(n_cons, cons_target, cons_nvar, cons_var, cell_ncons, cell_cons, front, comp_start,
    interior)``: count j is shown on a revealed cell, wants ``cons_target[j]`` mines among its
    ``cons_nvar[j]`` hidden neighbours ``cons_var[j, :]``; hidden cell c lies in the ``cell_ncons[c]``
    counts ``cell_cons[c, :]``; component i is ``front[comp_start[i]:comp_start[i+1]]``.
    """
    n = obs.size
    cons_target = np.empty(n, np.int32)
    cons_nvar = np.zeros(n, np.int32)
    cons_var = np.empty((n, 8), np.int32)
    cell_ncons = np.zeros(n, np.int32)
    cell_cons = np.empty((n, 8), np.int32)
    n_cons = 0
    for c in range(n):
        if obs[c] == UNKNOWN:
            continue
        nv = 0
        mines = 0
        for k in range(deg[c]):
            d = nbr[c, k]
            if obs[d] == UNKNOWN and fixed[d] == FREE:
                cons_var[n_cons, nv] = d
                nv += 1
            elif obs[d] == UNKNOWN and fixed[d] == MINE:
                mines += 1
        if nv > 0:
            cons_target[n_cons] = obs[c] - mines
            cons_nvar[n_cons] = nv
            for k in range(nv):
                d = cons_var[n_cons, k]
                cell_cons[d, cell_ncons[d]] = n_cons
                cell_ncons[d] += 1
            n_cons += 1
    front = np.empty(n, np.int32)
    comp_start = np.zeros(n + 1, np.int32)
    n_front = 0
    n_comp = 0
    mark = np.zeros(n, np.int8)
    for c in range(n):
        if obs[c] == UNKNOWN and fixed[c] == FREE and cell_ncons[c] > 0:
            mark[c] = 1
    for c in range(n):
        if mark[c] == 1:
            comp_start[n_comp] = n_front
            n_front = _breadth_first(c, mark, cell_ncons, cell_cons, cons_nvar, cons_var, front, n_front)
            n_comp += 1
    comp_start[n_comp] = n_front
    n_int = 0
    interior = np.empty(n, np.int32)
    for c in range(n):
        if obs[c] == UNKNOWN and fixed[c] == FREE and cell_ncons[c] == 0:
            interior[n_int] = c
            n_int += 1
    return (n_cons, cons_target, cons_nvar, cons_var, cell_ncons, cell_cons, front[:n_front].copy(),
            comp_start[: n_comp + 1].copy(), interior[:n_int].copy())


@cold
def _bits(target):
    """Bits that hold a partial sum 0..target."""
    b = 0
    while (1 << b) <= target:
        b += 1
    return b


@cold
def _mask(target):
    return (np.int64(1) << _bits(target)) - 1


@cold
def _grow(a, need):
    if a.size >= need:
        return a
    b = np.empty(max(need, 2 * a.size), a.dtype)
    b[: a.size] = a
    return b


@cold
def count_component(cells, n, cell_ncons, cell_cons, cons_nvar, cons_var, cons_target, max_table):
    """Forward pass over one component (its cells ``cells``): ``(status, order, cut_start, table, succ,
    log_scale)``.

    ``order`` is the cell order; the states after the first j cells are ``cut_start[j]:cut_start[j+1]``;
    ``table[s * (m+1) + k]`` is the (rescaled) number of assignments of those cells with k mines reaching
    state s; ``succ[2*s + v]`` is the state reached by giving the next cell v mines (-1: impossible). The
    last cut holds one state whose row is the component's count of solutions by mine number, divided by
    exp(``log_scale``).
    """
    m = cells.size
    width = m + 1
    mark = np.zeros(n, np.int8)
    for i in range(m):
        mark[cells[i]] = 1
    order = np.empty(m, np.int32)
    _breadth_first(cells[0], mark, cell_ncons, cell_cons, cons_nvar, cons_var, order, 0)
    for i in range(m):
        mark[cells[i]] = 1
    _breadth_first(order[m - 1], mark, cell_ncons, cell_cons, cons_nvar, cons_var, order, 0)  # from a far end
    pos = np.full(n, -1, np.int32)
    for j in range(m):
        pos[order[j]] = j
    n_cons = cons_target.size
    first = np.full(n_cons, -1, np.int32)
    last = np.full(n_cons, -1, np.int32)
    for j in range(m):
        x = order[j]
        for a in range(cell_ncons[x]):
            c = cell_cons[x, a]
            if first[c] < 0:
                first[c] = j
            last[c] = j
    shift = np.zeros(n_cons, np.int64)
    open_cons = np.empty(n_cons, np.int32)
    n_open = 0
    used = np.int64(0)
    cut_start = np.zeros(m + 2, np.int64)
    keys = np.zeros(64, np.int64)
    table = np.zeros(64 * width)
    succ = np.full(128, -1, np.int64)
    cut_start[1] = 1
    table[0] = 1.0
    log_scale = 0.0
    step_shift = np.empty(8, np.int64)
    step_mask = np.empty(8, np.int64)
    step_target = np.empty(8, np.int64)
    step_rest = np.empty(8, np.int64)
    step_close = np.empty(8, np.bool_)
    for j in range(m):
        x = order[j]
        kept = 0
        for i in range(n_open):
            c = open_cons[i]
            if last[c] < j:
                used &= ~(_mask(cons_target[c]) << shift[c])
            else:
                open_cons[kept] = c
                kept += 1
        n_open = kept
        na = cell_ncons[x]
        for a in range(na):
            c = cell_cons[x, a]
            mask = _mask(cons_target[c])
            if first[c] == j:
                at = -1
                for b in range(MAX_BITS - _bits(cons_target[c]) + 1):
                    if used & (mask << b) == 0:
                        at = b
                        break
                if at < 0:
                    return COUNT_TOO_WIDE, order, cut_start, table, succ, 0.0
                used |= mask << at
                shift[c] = at
                open_cons[n_open] = c
                n_open += 1
            rest = 0
            for b in range(cons_nvar[c]):
                if pos[cons_var[c, b]] > j:
                    rest += 1
            step_shift[a] = shift[c]
            step_mask[a] = mask
            step_target[a] = cons_target[c]
            step_rest[a] = rest
            step_close[a] = last[c] == j
        lo, hi = cut_start[j], cut_start[j + 1]
        n_cand = 2 * (hi - lo)
        cand_key = np.empty(n_cand, np.int64)
        cand_from = np.empty(n_cand, np.int64)
        nc = 0
        for s in range(lo, hi):
            for v in range(2):
                key = keys[s]
                ok = True
                for a in range(na):
                    sh = step_shift[a]
                    now = ((key >> sh) & step_mask[a]) + v
                    if now > step_target[a] or now + step_rest[a] < step_target[a]:
                        ok = False
                        break
                    key &= ~(step_mask[a] << sh)
                    if not step_close[a]:
                        key |= now << sh
                if ok:
                    cand_key[nc] = key
                    cand_from[nc] = 2 * s + v
                    nc += 1
        if nc == 0:
            return COUNT_INCONSISTENT, order, cut_start, table, succ, 0.0
        if (hi + nc) * width > max_table:
            return COUNT_TOO_BIG, order, cut_start, table, succ, 0.0
        keys = _grow(keys, hi + nc)
        table = _grow(table, (hi + nc) * width)
        succ = _grow(succ, 2 * (hi + nc))
        rank = np.argsort(cand_key[:nc], kind="mergesort")
        t = hi - 1
        prev = np.int64(-1)
        for i in range(nc):
            e = rank[i]
            if i == 0 or cand_key[e] != prev:
                t += 1
                prev = cand_key[e]
                keys[t] = prev
                table[t * width : (t + 1) * width] = 0.0
                succ[2 * t] = -1
                succ[2 * t + 1] = -1
            src = cand_from[e] // 2
            v = cand_from[e] % 2
            succ[cand_from[e]] = t
            for k in range(j + 1):
                table[t * width + k + v] += table[src * width + k]
        cut_start[j + 2] = t + 1
        top = 0.0
        for i in range((hi) * width, (t + 1) * width):
            top = max(top, table[i])
        for i in range((hi) * width, (t + 1) * width):
            table[i] /= top
        log_scale += math.log(top)
    return COUNT_OK, order, cut_start, table, succ, log_scale


@cold
def component_probabilities(order, cut_start, table, succ, weight, prob):
    """Backward pass: ``prob[cell]`` for the component's cells, given ``weight[k]``, the weight of
    everything outside the component (the other components and the interior) when it holds k mines."""
    m = order.size
    width = m + 1
    after = np.zeros((1, width))
    for k in range(width):
        after[0, k] = weight[k]
    for j in range(m - 1, -1, -1):
        lo, hi = cut_start[j], cut_start[j + 1]
        nxt = cut_start[j + 1]
        here = np.zeros((hi - lo, width))
        with_mine = 0.0
        without = 0.0
        for s in range(lo, hi):
            for v in range(2):
                t = succ[2 * s + v]
                if t < 0:
                    continue
                for k in range(j + 1):
                    w = after[t - nxt, k + v]
                    here[s - lo, k] += w
                    f = table[s * width + k] * w
                    if v == 1:
                        with_mine += f
                    else:
                        without += f
        prob[order[j]] = with_mine / (with_mine + without) if with_mine > 0.0 else 0.0
        top = here.max()
        if top > 0.0:
            here /= top
        after = here


def _normalised(a: np.ndarray) -> tuple[np.ndarray, float]:
    """``a`` scaled so that its maximum is 1, and the log of the factor taken out."""
    top = a.max()
    return (a / top, math.log(top)) if top > 0 else (a, 0.0)


def _interior_weights(n_interior: int, n_mines: int, size: int) -> tuple[np.ndarray, float]:
    """C(interior, N - t) for t = 0..size-1 frontier mines, scaled so that the largest is 1, and the log
    of the scale."""
    logs = np.array([math.lgamma(n_interior + 1) - math.lgamma(n_mines - t + 1) - math.lgamma(n_interior - n_mines + t + 1)
                     if 0 <= n_mines - t <= n_interior else -np.inf for t in range(size)])
    top = logs.max()
    return (np.exp(logs - top), float(top)) if top > -np.inf else (np.zeros(size), 0.0)


def no_fixed_cells(n: int) -> np.ndarray:
    return np.full(n, FREE, np.int8)


class _Count(NamedTuple):
    """The forward half of the count of one observation (``_count``)."""

    status: int
    prob: np.ndarray  # float64[n]: 1 on the fixed mines so far
    n_mines: int  # mines left for the cells not fixed
    passes: list  # per component: (order, cut_start, table, succ) of ``count_component``
    prefix: list  # prefix[i]: components before i convolved (scaled); prefix[-1] all of them
    suffix: list  # suffix[i]: components from i on convolved (scaled)
    interior: np.ndarray  # int32[I]
    bn: np.ndarray  # float64[F+1]: C(I, N - t), scaled
    log_layouts: float  # log of the number of consistent layouts (-inf when there is none)


def _count(obs, n_mines, nbr, deg, fixed, max_table) -> _Count:
    n = obs.size
    prob = np.zeros(n)
    fixed = no_fixed_cells(n) if fixed is None else fixed.copy()
    consistent = settle(obs, nbr, deg, fixed)
    fixed_mines = (obs == UNKNOWN) & (fixed == MINE)
    n_mines -= int(fixed_mines.sum())
    prob[fixed_mines] = 1.0
    failed = _Count(COUNT_INCONSISTENT, prob, n_mines, [], [], [], np.zeros(0, np.int32), np.zeros(1), -np.inf)
    if n_mines < 0 or not consistent:
        return failed
    (_, cons_target, cons_nvar, cons_var, cell_ncons, cell_cons, front, comp_start,
     interior) = frontier_constraints(obs, nbr, deg, fixed)
    passes = []
    counts = []
    log_total = 0.0
    for i in range(comp_start.size - 1):
        cells = front[comp_start[i] : comp_start[i + 1]]
        status, order, cut_start, table, succ, log_scale = count_component(
            cells, n, cell_ncons, cell_cons, cons_nvar, cons_var, cons_target, max_table)
        if status != COUNT_OK:
            return failed._replace(status=status)
        m = cells.size
        passes.append((order, cut_start, table, succ))
        count, log_top = _normalised(table[cut_start[m] * (m + 1) : (cut_start[m] + 1) * (m + 1)].copy())
        counts.append(count)
        log_total += log_scale + log_top
    bn, log_bn = _interior_weights(interior.size, n_mines, front.size + 1)
    prefix = [np.ones(1)]
    for c in counts:
        conv, log_top = _normalised(np.convolve(prefix[-1], c))
        prefix.append(conv)
        log_total += log_top
    suffix = [np.ones(1)]
    for c in reversed(counts):
        suffix.append(_normalised(np.convolve(suffix[-1], c))[0])
    suffix.reverse()
    total = float(np.dot(prefix[-1], bn[: prefix[-1].size]))
    if not total > 0:
        return failed
    return _Count(COUNT_OK, prob, n_mines, passes, prefix, suffix, interior, bn, log_total + math.log(total) + log_bn)


def log_layouts(obs: np.ndarray, n_mines: int, nbr: np.ndarray, deg: np.ndarray, fixed: np.ndarray | None = None,
                max_table: int = MAX_TABLE) -> tuple[int, float]:
    """``(status, log of the number of layouts consistent with obs)``; ratios of these are the chances
    of what a click will show."""
    counted = _count(obs, n_mines, nbr, deg, fixed, max_table)
    return counted.status, counted.log_layouts


def frontier_probabilities(obs: np.ndarray, n_mines: int, nbr: np.ndarray, deg: np.ndarray,
                           fixed: np.ndarray | None = None, max_table: int = MAX_TABLE) -> tuple[int, np.ndarray]:
    """``(status, prob)`` of ``counted_probabilities``."""
    status, prob, _ = counted_probabilities(obs, n_mines, nbr, deg, fixed, max_table)
    return status, prob


def counted_probabilities(obs: np.ndarray, n_mines: int, nbr: np.ndarray, deg: np.ndarray,
                          fixed: np.ndarray | None = None,
                          max_table: int = MAX_TABLE) -> tuple[int, np.ndarray, float]:
    """``(status, prob, log_layouts)``: the exact mine probability of every cell given ``obs`` (0 on
    revealed cells), and the log of the number of layouts consistent with it.

    ``fixed`` (FREE, SAFE or MINE per cell) may carry what earlier positions of the game proved (a
    proved mine stays one); it is not modified. ``settle`` adds what single counts prove, the rest is
    counted.

    ``status`` is COUNT_OK, or why ``prob`` is not filled: COUNT_TOO_WIDE (the counts open at one cut
    need more than ``MAX_BITS`` bits), COUNT_TOO_BIG (a component's tables passed ``max_table`` entries),
    COUNT_INCONSISTENT.
    """
    counted = _count(obs, n_mines, nbr, deg, fixed, max_table)
    prob, bn, prefix, suffix = counted.prob, counted.bn, counted.prefix, counted.suffix
    if counted.status != COUNT_OK:
        return counted.status, prob, counted.log_layouts
    for i, (order, cut_start, table, succ) in enumerate(counted.passes):
        others = np.convolve(prefix[i], suffix[i + 1])
        m = order.size
        weight = np.array([np.dot(others, bn[k : k + others.size]) for k in range(m + 1)])
        component_probabilities(order, cut_start, table, succ, _normalised(weight)[0], prob)
    interior, everything = counted.interior, prefix[-1]
    if interior.size:
        t = np.arange(everything.size)
        w = everything * bn[: everything.size]
        prob[interior] = float(np.dot(w, counted.n_mines - t)) / float(w.sum()) / interior.size
    return COUNT_OK, prob, counted.log_layouts


def mine_probabilities(obs: np.ndarray, p: int, q: int, n_mines: int) -> np.ndarray:
    """Exact mine probability of every cell given ``obs`` (0 on revealed cells), with the failures of
    ``frontier_probabilities`` turned into clear errors."""
    obs = np.ascontiguousarray(obs, dtype=np.int8)
    nbr, deg = neighbour_table(p, q)
    status, prob = frontier_probabilities(obs, n_mines, nbr, deg)
    if status == COUNT_INCONSISTENT:
        raise ObookError(f"no layout of {n_mines} mines is consistent with the revealed counts")
    if status != COUNT_OK:
        raise ObookError("exact probabilities: the frontier is too tangled to count "
                         f"({'too many counts open at once' if status == COUNT_TOO_WIDE else 'tables too large'})")
    return prob
