"""Belief-state samplers: mine layouts drawn given what the player has seen.

Under the first-click rule every layout consistent with the observation is equally likely, so the belief is
the uniform law on consistent layouts (N mines, none on a revealed cell, every revealed count matched).
Four samplers, one interface (``draw_layout``, dispatched on an integer kind):

- ``rejection`` (Alg. 1): draw N mines uniformly among the hidden cells, keep the layout if every revealed
  count matches. Exact, but the acceptance rate collapses as the frontier grows.
- ``metropolis`` (Alg. 3): a chain from a random layout; each step re-draws every mine with probability
  1/N (at least one) among the hidden cells, a symmetric proposal. The 0/1 likelihood gives 0/0 from an
  inconsistent start, so the chain uses its limit exp(-beta * violations) with beta -> infinity: a move is
  accepted when it does not increase the number of violated counts. Once consistent the chain targets the
  uniform law exactly; it is consistent only as the number of steps grows.
- ``metropolis-inherit`` (Alg. 4): the same chain started from where the previous call stopped.
- ``exact``: enumerate the frontier (hidden cells next to a revealed count) component by component, weight
  each combination by C(interior cells, mines left) and sample it exactly; then place the remaining mines
  uniformly in the interior. ``exact_prepare`` does the enumeration once per observation; each draw is then
  linear in the frontier size. Counts and probabilities are always exact; the solutions themselves are
  kept up to a reservoir per (component, mine count), so on the rare huge frontier (expert boards) a draw
  picks among a uniform random subset of them (reported as EXACT_SAMPLED).

Scratch arrays are bundled in a ``SamplerWork`` (``make_work``) so that a draw allocates nothing; the exact
sampler's enumeration is an ``ExactTables``. Random numbers come from an ``obook.rng`` state owned by the
caller (the search, or ``sample_layouts``), so every draw is reproducible from its seed.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from obook.errors import ObookError
from obook.jit import cold, hot
from obook.mines.frontier import FREE, frontier_constraints
from obook.mines.game import UNKNOWN, copy_cells, neighbour_table
from obook.rng import make_rng, rand_below, rand_float

REJECTION, METROPOLIS, METROPOLIS_INHERIT, EXACT = 0, 1, 2, 3
SAMPLERS = {"rejection": REJECTION, "metropolis": METROPOLIS, "metropolis-inherit": METROPOLIS_INHERIT, "exact": EXACT}

DEFAULT_MAX_TRIES = 50_000_000  # rejection gives up (and reports it) after this many rejected layouts
DEFAULT_RESERVOIR = 4096  # exact sampler: solutions kept per (component, mine count)
RESERVOIR_CELLS = 1 << 22  # exact sampler: cap on the cells kept per component (shrinks its reservoir)
DEFAULT_MAX_STEPS = 50_000_000  # exact sampler: backtracking steps before giving up on a frontier
EXACT_OK, EXACT_SAMPLED, EXACT_TOO_BIG, EXACT_INCONSISTENT = 0, 1, -1, -2


def sampler_kind(name: str) -> int:
    """Map a sampler name to its kind, with a clear error for unknown names."""
    try:
        return SAMPLERS[name]
    except KeyError:
        raise ObookError(f"unknown sampler {name!r}; choose one of {', '.join(SAMPLERS)}") from None


class SamplerWork(NamedTuple):
    """Scratch of the samplers for a board of n cells and N mines."""

    hidden: np.ndarray  # int32[n]: hidden cells (reordered freely by the samplers)
    cons_cell: np.ndarray  # int32[n]: revealed cells with hidden neighbours (the constraints)
    cons_target: np.ndarray  # int32[n]: their counts
    mine_cell: np.ndarray  # int32[N]: Metropolis state: the cell of each mine
    moved: np.ndarray  # int32[N]: Metropolis proposal: the mines that move
    moved_from: np.ndarray  # int32[N]: their cells before the move
    moved_to: np.ndarray  # int32[N]: their cells after it
    has_chain: np.ndarray  # int64[1]: 1 when ``mine_cell`` holds a state to inherit (Alg. 4)
    interior: np.ndarray  # int32[n]: the exact sampler's copy of the interior cells, shuffled in place


class ExactTables(NamedTuple):
    """The exact sampler's enumeration of one observation (``exact_prepare``): F frontier cells in C
    components, I interior cells (hidden, next to no revealed count)."""

    status: int  # EXACT_OK, EXACT_SAMPLED (draws come from the reservoirs), EXACT_TOO_BIG or EXACT_INCONSISTENT
    front: np.ndarray  # int32[F]: frontier cells, component after component, breadth-first inside each
    comp_start: np.ndarray  # int32[C+1]: first index into ``front`` of each component, then F
    pool: np.ndarray  # uint8[]: kept solutions; component c with k mines, slot s, starts at
    #                   res_base[c] + (k * res_cap[c] + s) * m, m the component's size
    res_base: np.ndarray  # int64[C+1]: where each component's reservoirs start in ``pool``
    res_cap: np.ndarray  # int64[C+1]: solutions kept per (component, mine count)
    count: np.ndarray  # float64[C, F+1]: solutions of component c with k mines (exact)
    completions: np.ndarray  # float64[C+1, F+1]: weight of every completion after component c when r
    #                          mines are used so far, interior included (scaled)
    interior: np.ndarray  # int32[I]: the interior cells
    interior_weight: np.ndarray  # float64[F+1]: C(I, N - t) for t frontier mines (scaled)
    cell_count: np.ndarray  # float64[F, F+1]: solutions of f's component with k mines and a mine on f


def make_work(n: int, n_mines: int) -> SamplerWork:
    m = max(n_mines, 1)
    return SamplerWork(
        hidden=np.zeros(n, np.int32),
        cons_cell=np.zeros(n, np.int32),
        cons_target=np.zeros(n, np.int32),
        mine_cell=np.zeros(m, np.int32),
        moved=np.zeros(m, np.int32),
        moved_from=np.zeros(m, np.int32),
        moved_to=np.zeros(m, np.int32),
        has_chain=np.zeros(1, np.int64),
        interior=np.zeros(n, np.int32),
    )


@hot
def _constraints(obs, nbr, deg, unk, cons_cell, cons_target):
    """Fill the hidden-cell list and the constraint list; return ``(n_unk, n_cons)``."""
    n_unk = 0
    n_cons = 0
    for c in range(obs.size):
        if obs[c] == UNKNOWN:
            unk[n_unk] = c
            n_unk += 1
        else:
            for k in range(deg[c]):
                if obs[nbr[c, k]] == UNKNOWN:
                    cons_cell[n_cons] = c
                    cons_target[n_cons] = obs[c]
                    n_cons += 1
                    break
    return n_unk, n_cons


@hot
def _violations(obs, z, nbr, deg, cons_cell, cons_target, n_cons, mpos, n_mines):
    """Mines on revealed cells plus the total miss of every revealed count: 0 iff ``z`` is consistent."""
    v = 0
    for i in range(n_mines):
        if obs[mpos[i]] != UNKNOWN:
            v += 1
    for j in range(n_cons):
        c = cons_cell[j]
        s = 0
        for k in range(deg[c]):
            s += z[nbr[c, k]]
        v += abs(s - cons_target[j])
    return v


@hot
def _consistent(z, nbr, deg, cons_cell, cons_target, n_cons):
    for j in range(n_cons):
        c = cons_cell[j]
        s = 0
        for k in range(deg[c]):
            s += z[nbr[c, k]]
        if s != cons_target[j]:
            return False
    return True


@hot
def _scatter_mines(unk, n_unk, n_mines, z, rng):
    """Put the mines on a uniform random subset of the ``n_unk`` unknown cells (a partial
    Fisher-Yates shuffle: the chosen cells end up in ``unk[:n_mines]``) and mark them in ``z``."""
    for i in range(n_mines):
        j = i + rand_below(rng, n_unk - i)
        c = unk[j]
        unk[j] = unk[i]
        unk[i] = c
        z[c] = 1


@hot
def draw_rejection(obs, n_mines, nbr, deg, work, z, max_tries, rng):
    """Alg. 1: return the number of layouts drawn until one was consistent, or -1 after ``max_tries``."""
    unk, cons_cell, cons_target = work.hidden, work.cons_cell, work.cons_target
    n_unk, n_cons = _constraints(obs, nbr, deg, unk, cons_cell, cons_target)
    z[:] = 0
    for t in range(max_tries):
        _scatter_mines(unk, n_unk, n_mines, z, rng)
        if _consistent(z, nbr, deg, cons_cell, cons_target, n_cons):
            return t + 1
        for i in range(n_mines):
            z[unk[i]] = 0
    return -1


@hot
def draw_metropolis(obs, n_mines, nbr, deg, work, z, trials, inherit, rng):
    """Alg. 3 (``inherit`` False) or Alg. 4 (True): run ``trials`` Metropolis steps, leave the layout in ``z``.

    Returns the number of violated counts of the returned layout (0 when it is consistent).
    """
    unk, cons_cell, cons_target = work.hidden, work.cons_cell, work.cons_target
    mpos, mark, old, new = work.mine_cell, work.moved, work.moved_from, work.moved_to
    n_unk, n_cons = _constraints(obs, nbr, deg, unk, cons_cell, cons_target)
    z[:] = 0
    if inherit and work.has_chain[0] == 1:
        for i in range(n_mines):
            z[mpos[i]] = 1
    else:
        _scatter_mines(unk, n_unk, n_mines, z, rng)
        copy_cells(mpos, unk, n_mines)
        work.has_chain[0] = 1
    v = _violations(obs, z, nbr, deg, cons_cell, cons_target, n_cons, mpos, n_mines)
    p_move = 1.0 / n_mines
    for _ in range(trials):
        k = 0
        for i in range(n_mines):
            if rand_float(rng) < p_move:
                mark[k] = i
                k += 1
        if k == 0:
            mark[0] = rand_below(rng, n_mines)
            k = 1
        for j in range(k):
            old[j] = mpos[mark[j]]
            z[old[j]] = 0
        for j in range(k):
            c = unk[rand_below(rng, n_unk)]
            while z[c]:
                c = unk[rand_below(rng, n_unk)]
            z[c] = 1
            new[j] = c
            mpos[mark[j]] = c
        v2 = _violations(obs, z, nbr, deg, cons_cell, cons_target, n_cons, mpos, n_mines)
        if v2 <= v:
            v = v2
        else:
            for j in range(k):
                z[new[j]] = 0
            for j in range(k):
                z[old[j]] = 1
                mpos[mark[j]] = old[j]
    return v


# ---------------------------------------------------------------- exact sampler


@hot
def _log_binom(n, k):
    if k < 0 or k > n:
        return -np.inf
    return math.lgamma(n + 1.0) - math.lgamma(k + 1.0) - math.lgamma(n - k + 1.0)


@hot
def _convolve_normalised(a, la, b, lb, out):
    """out[0 : la+lb-1] = a * b scaled so that its maximum is 1 (only ratios matter)."""
    for t in range(la + lb - 1):
        out[t] = 0.0
    for i in range(la):
        if a[i] == 0.0:
            continue
        for j in range(lb):
            out[i + j] += a[i] * b[j]
    mx = 0.0
    for t in range(la + lb - 1):
        mx = max(mx, out[t])
    if mx > 0.0:
        for t in range(la + lb - 1):
            out[t] /= mx
    return la + lb - 1


@cold
def exact_prepare(obs, n_mines, nbr, deg, reservoir, max_steps, rng):
    """Enumerate the frontier of ``obs`` into the ``ExactTables`` that ``exact_draw`` samples from.

    The counts are exact, so probabilities are exact whatever the size. Solutions themselves are kept in
    a reservoir of ``res_cap[c]`` per (component, k), a uniform random subset (drawn with ``rng``) once a
    class overflows: ``status`` is then EXACT_SAMPLED instead of EXACT_OK. EXACT_TOO_BIG: more than
    ``max_steps`` backtracking steps; EXACT_INCONSISTENT: no layout fits.
    """
    (n_cons, cons_target, cons_nvar, cons_var, cell_ncons, cell_cons, front, comp_start,
     interior) = frontier_constraints(obs, nbr, deg, np.full(obs.size, FREE, np.int8))
    n_comp = comp_start.size - 1
    n_front = front.size
    n_int = interior.size

    # reservoirs: res_cap[c] solutions of m cells for each k in 0..m
    res_cap = np.zeros(n_comp + 1, np.int64)
    res_base = np.zeros(n_comp + 1, np.int64)
    for ci in range(n_comp):
        m = comp_start[ci + 1] - comp_start[ci]
        res_cap[ci] = max(1, min(reservoir, RESERVOIR_CELLS // ((m + 1) * m)))
        res_base[ci + 1] = res_base[ci] + (m + 1) * m * res_cap[ci]
    pool = np.empty(max(res_base[n_comp], 1), np.uint8)
    cnt = np.zeros((n_comp, n_front + 1))
    cellk = np.zeros((n_front, n_front + 1))
    cm = np.zeros(n_cons, np.int32)
    cu = cons_nvar[:n_cons].copy()
    val = np.empty(n_front + 1, np.int32)
    status = EXACT_OK
    steps = 0
    for ci in range(n_comp):
        s0 = comp_start[ci]
        m = comp_start[ci + 1] - s0
        cap = res_cap[ci]
        kk = 0
        j = 0
        val[0] = -1
        while j >= 0:
            steps += 1
            if steps > max_steps:
                status = EXACT_TOO_BIG
                break
            if j == m:
                cnt[ci, kk] += 1.0
                for i in range(m):
                    if val[i]:
                        cellk[s0 + i, kk] += 1.0
                seen = np.int64(cnt[ci, kk])
                slot = seen - 1
                if seen > cap:
                    if status == EXACT_OK:
                        status = EXACT_SAMPLED
                    slot = rand_below(rng, seen)
                if slot < cap:
                    off = res_base[ci] + (kk * cap + slot) * m
                    for i in range(m):
                        pool[off + i] = val[i]
                j -= 1
                continue
            x = front[s0 + j]
            if val[j] >= 0:
                kk -= val[j]
                for a in range(cell_ncons[x]):
                    cc = cell_cons[x, a]
                    cu[cc] += 1
                    cm[cc] -= val[j]
            val[j] += 1
            if val[j] > 1:
                j -= 1
                continue
            ok = kk + val[j] <= n_mines
            kk += val[j]
            for a in range(cell_ncons[x]):
                cc = cell_cons[x, a]
                cu[cc] -= 1
                cm[cc] += val[j]
                if cm[cc] > cons_target[cc] or cm[cc] + cu[cc] < cons_target[cc]:
                    ok = False
            if ok:
                j += 1
                if j < m:
                    val[j] = -1
        if status == EXACT_TOO_BIG:
            break

    # weights: suffix convolutions of the component counts against the interior binomials
    bn = np.zeros(n_front + 1)
    mx = -np.inf
    for t in range(n_front + 1):
        bn[t] = _log_binom(n_int, n_mines - t)
        mx = max(mx, bn[t])
    for t in range(n_front + 1):
        bn[t] = math.exp(bn[t] - mx) if mx > -np.inf else 0.0
    suffix = np.zeros((n_comp + 1, n_front + 1))
    suffix[n_comp, 0] = 1.0
    lengths = np.ones(n_comp + 1, np.int64)
    for ci in range(n_comp - 1, -1, -1):
        m = comp_start[ci + 1] - comp_start[ci]
        lengths[ci] = _convolve_normalised(cnt[ci], m + 1, suffix[ci + 1], lengths[ci + 1], suffix[ci])
    H = np.zeros((n_comp + 1, n_front + 1))
    for ci in range(n_comp + 1):
        for r in range(n_front + 1):
            if ci == n_comp:
                H[ci, r] = bn[r]
            else:
                s = 0.0
                for t in range(min(lengths[ci + 1], n_front + 1 - r)):
                    s += suffix[ci + 1, t] * bn[r + t]
                H[ci, r] = s
    if status != EXACT_TOO_BIG:
        total = 0.0
        if n_comp == 0:
            total = bn[0]
        else:
            for k in range(comp_start[1] - comp_start[0] + 1):
                total += cnt[0, k] * H[0, k]
        if not total > 0.0:
            status = EXACT_INCONSISTENT
    return ExactTables(status, front, comp_start, pool, res_base, res_cap, cnt, H, interior, bn, cellk)


@hot
def exact_draw(ex, n_mines, z, scratch, rng):
    """Draw one layout from the tables of ``exact_prepare`` into ``z``: the number of mines in each
    component and in the interior follows the belief exactly, then a kept solution with that count."""
    front, comp_start, pool, res_base, res_cap = ex.front, ex.comp_start, ex.pool, ex.res_base, ex.res_cap
    cnt, H, interior = ex.count, ex.completions, ex.interior
    n_comp = comp_start.size - 1
    z[:] = 0
    r = 0
    for ci in range(n_comp):
        s0 = comp_start[ci]
        m = comp_start[ci + 1] - s0
        tot = 0.0
        for k in range(m + 1):
            tot += cnt[ci, k] * H[ci, r + k]
        u = rand_float(rng) * tot
        acc = 0.0
        chosen = -1
        for k in range(m + 1):
            w = cnt[ci, k] * H[ci, r + k]
            if w > 0.0:
                chosen = k
                acc += w
                if u < acc:
                    break
        k = chosen
        cap = res_cap[ci]
        idx = rand_below(rng, min(np.int64(cnt[ci, k]), cap))
        off = res_base[ci] + (k * cap + idx) * m
        for i in range(m):
            z[front[s0 + i]] = pool[off + i]
        r += k
    n_int = interior.size
    copy_cells(scratch, interior, n_int)
    _scatter_mines(scratch, n_int, n_mines - r, z, rng)


@cold
def exact_probabilities(ex, n_mines, n):
    """Mine probability of every cell under the exact belief (0 on revealed cells)."""
    front, comp_start, cnt, interior = ex.front, ex.comp_start, ex.count, ex.interior
    bn, cellk = ex.interior_weight, ex.cell_count
    prob = np.zeros(n)
    n_comp = comp_start.size - 1
    n_front = front.size
    prefix = np.zeros((n_comp + 1, n_front + 1))
    prefix[0, 0] = 1.0
    plen = np.ones(n_comp + 1, np.int64)
    for ci in range(n_comp):
        m = comp_start[ci + 1] - comp_start[ci]
        plen[ci + 1] = _convolve_normalised(prefix[ci], plen[ci], cnt[ci], m + 1, prefix[ci + 1])
    suffix = np.zeros((n_comp + 1, n_front + 1))
    suffix[n_comp, 0] = 1.0
    slen = np.ones(n_comp + 1, np.int64)
    for ci in range(n_comp - 1, -1, -1):
        m = comp_start[ci + 1] - comp_start[ci]
        slen[ci] = _convolve_normalised(cnt[ci], m + 1, suffix[ci + 1], slen[ci + 1], suffix[ci])
    others = np.zeros(n_front + 1)
    wk = np.zeros(n_front + 1)
    for ci in range(n_comp):
        s0 = comp_start[ci]
        m = comp_start[ci + 1] - s0
        lo = _convolve_normalised(prefix[ci], plen[ci], suffix[ci + 1], slen[ci + 1], others)
        total = 0.0
        for k in range(m + 1):
            s = 0.0
            for t in range(lo):
                if k + t <= n_front:
                    s += others[t] * bn[k + t]
            wk[k] = s
            total += cnt[ci, k] * s
        for i in range(m):
            acc = 0.0
            for k in range(m + 1):
                acc += cellk[s0 + i, k] * wk[k]
            prob[front[s0 + i]] = acc / total
    if interior.size > 0:
        num = 0.0
        den = 0.0
        for t in range(slen[0]):
            w = suffix[0, t] * bn[t]
            num += (n_mines - t) * w
            den += w
        for c in interior:
            prob[c] = num / den / interior.size
    return prob


def empty_exact() -> ExactTables:
    """Exact tables of the right types for searches whose sampler is not ``exact`` (never read)."""
    i32, i64, f2 = np.zeros(1, np.int32), np.zeros(1, np.int64), np.zeros((1, 1))
    return ExactTables(EXACT_OK, i32, i32.copy(), np.zeros(1, np.uint8), i64, i64.copy(), f2, f2.copy(),
                       i32.copy(), np.zeros(1), f2.copy())


def prepare_exact(obs: np.ndarray, n_mines: int, nbr: np.ndarray, deg: np.ndarray,
                  reservoir: int = DEFAULT_RESERVOIR, max_steps: int = DEFAULT_MAX_STEPS,
                  rng: np.ndarray | None = None) -> ExactTables:
    """``exact_prepare`` with its failures turned into clear errors (``rng`` defaults to seed 0)."""
    ex = exact_prepare(obs, n_mines, nbr, deg, reservoir, max_steps, make_rng(0) if rng is None else rng)
    if ex.status == EXACT_TOO_BIG:
        raise ObookError(
            f"exact sampler: enumerating the frontier took more than {max_steps} steps; use another sampler"
        )
    if ex.status == EXACT_INCONSISTENT:
        raise ObookError(f"no layout of {n_mines} mines is consistent with the revealed counts")
    return ex


# ---------------------------------------------------------------- the interface


@hot
def draw_layout(kind, obs, n_mines, nbr, deg, work, ex, z, trials, max_tries, rng):
    """Draw one layout given ``obs`` into ``z`` with the sampler ``kind``, random numbers from ``rng``.

    ``trials`` is the Metropolis step count; ``ex`` the exact tables of this very ``obs``. Returns 0 on
    success, -1 when rejection gave up, and for Metropolis the violations left in the returned layout.
    """
    if kind == REJECTION:
        return 0 if draw_rejection(obs, n_mines, nbr, deg, work, z, max_tries, rng) > 0 else -1
    if kind == METROPOLIS:
        return draw_metropolis(obs, n_mines, nbr, deg, work, z, trials, False, rng)
    if kind == METROPOLIS_INHERIT:
        return draw_metropolis(obs, n_mines, nbr, deg, work, z, trials, True, rng)
    exact_draw(ex, n_mines, z, work.interior, rng)
    return 0


@hot
def _sample_many(kind, obs, n_mines, nbr, deg, work, ex, count, trials, burn_in, max_tries, rng, out):
    """Draw ``count`` layouts into the rows of ``out``; return how many were drawn (fewer when rejection
    gave up)."""
    for i in range(count):
        steps = trials + burn_in if i == 0 else trials
        z = out[i]
        if draw_layout(kind, obs, n_mines, nbr, deg, work, ex, z, steps, max_tries, rng) == -1 and kind == REJECTION:
            return i
    return count


def check_observation(obs: np.ndarray, n_mines: int) -> None:
    """Reject observations no sampler can serve (wrong dtype, too few hidden cells)."""
    if obs.dtype != np.int8 or obs.ndim != 1:
        raise ObookError("observation must be a flat int8 array")
    hidden = int((obs == UNKNOWN).sum())
    if hidden <= n_mines:
        raise ObookError(f"{hidden} hidden cells cannot hide {n_mines} mines with a safe cell left to find")


def sample_layouts(obs: np.ndarray, p: int, q: int, n_mines: int, sampler: str, count: int, seed: int = 0,
                   trials: int = 100, burn_in: int = 0, max_tries: int = DEFAULT_MAX_TRIES) -> np.ndarray:
    """Draw ``count`` layouts (rows of a ``(count, p*q)`` uint8 array) with the named sampler.

    For ``metropolis`` every layout is a fresh chain of ``trials`` steps; for ``metropolis-inherit`` one
    chain runs on, ``trials`` steps between layouts, after ``burn_in`` extra steps before the first.
    """
    kind = sampler_kind(sampler)
    obs = np.ascontiguousarray(obs, dtype=np.int8)
    check_observation(obs, n_mines)
    nbr, deg = neighbour_table(p, q)
    rng = make_rng(seed)
    ex = prepare_exact(obs, n_mines, nbr, deg, rng=rng) if kind == EXACT else empty_exact()
    out = np.zeros((count, p * q), np.uint8)
    got = _sample_many(kind, obs, n_mines, nbr, deg, make_work(p * q, n_mines), ex, count, trials, burn_in,
                       max_tries, rng, out)
    if got < count:
        raise ObookError(f"rejection sampler gave up after {max_tries} layouts without a consistent one")
    return out
