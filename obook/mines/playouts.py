"""The two playout policies of BSR-UCT: finish a game from the observation ``obs`` in the layout ``z``.

Both return the number of safe cells revealed at the end (the game stops at the first mine) and allocate
nothing: their working arrays are the search's ``Scratch``. ``uniform`` is the paper's: reveal uniformly
random hidden cells. ``safe-first`` first reveals cells proven safe by single-count deduction, else a
uniform hidden cell not proven to be a mine; it deduces from ``obs`` only, never from ``z``.
Before the first click (nothing revealed) both place the mines after a uniform first click, as the game does.
"""

from __future__ import annotations

from obook.errors import ObookError
from obook.jit import hot
from obook.mines.game import UNKNOWN, place_mines, reveal
from obook.rng import rand_below

UNIFORM, SAFE_FIRST = 0, 1
POLICIES = {"uniform": UNIFORM, "safe-first": SAFE_FIRST}


def policy_kind(name: str) -> int:
    """Map a policy name to its kind, with a clear error for unknown names."""
    try:
        return POLICIES[name]
    except KeyError:
        raise ObookError(f"unknown playout policy {name!r}; choose one of {', '.join(POLICIES)}") from None


@hot
def first_click(obs, z, n_mines, cell, nbr, deg, scratch, rng):
    """Place the mines for a first click on ``cell`` (the Gnomine rule) and reveal it."""
    place_mines(z, n_mines, cell, nbr, deg, scratch.place_work, rng)
    return reveal(obs, z, cell, nbr, deg, scratch.shown)


@hot
def playout(policy, obs, z, revealed, safe_total, n_mines, nbr, deg, scratch, rng):
    """Run the playout ``policy`` (UNIFORM or SAFE_FIRST) from ``revealed`` safe cells shown."""
    if policy == UNIFORM:
        return playout_uniform(obs, z, revealed, safe_total, n_mines, nbr, deg, scratch, rng)
    return playout_safe_first(obs, z, revealed, safe_total, n_mines, nbr, deg, scratch, rng)


@hot
def playout_uniform(obs, z, revealed, safe_total, n_mines, nbr, deg, scratch, rng):
    out, cand = scratch.shown, scratch.candidates
    n = obs.size
    if revealed == 0:
        revealed += first_click(obs, z, n_mines, rand_below(rng, n), nbr, deg, scratch, rng)
    m = 0
    for c in range(n):
        if obs[c] == UNKNOWN:
            cand[m] = c
            m += 1
    while revealed < safe_total and m > 0:
        i = rand_below(rng, m)
        c = cand[i]
        m -= 1
        cand[i] = cand[m]
        if obs[c] != UNKNOWN:
            continue
        if z[c]:
            break
        revealed += reveal(obs, z, c, nbr, deg, out)
    return revealed


@hot(inline="always")
def _push(c, wl, n_wl, queued):
    if not queued[c]:
        queued[c] = 1
        wl[n_wl] = c
        n_wl += 1
    return n_wl


@hot
def playout_safe_first(obs, z, revealed, safe_total, n_mines, nbr, deg, scratch, rng):
    out, known, queued, wl = scratch.shown, scratch.known_mine, scratch.queued, scratch.worklist
    safe_flag, safe, cand = scratch.proven_safe, scratch.safe_stack, scratch.candidates
    n = obs.size
    if revealed == 0:
        revealed += first_click(obs, z, n_mines, rand_below(rng, n), nbr, deg, scratch, rng)
    known[:] = 0
    queued[:] = 0
    safe_flag[:] = 0
    n_wl = 0
    n_safe = 0
    m = 0
    for c in range(n):
        if obs[c] == UNKNOWN:
            cand[m] = c
            m += 1
        else:
            n_wl = _push(c, wl, n_wl, queued)
    while revealed < safe_total:
        while n_wl > 0:
            n_wl -= 1
            c = wl[n_wl]
            queued[c] = 0
            free = 0
            flagged = 0
            for k in range(deg[c]):
                d = nbr[c, k]
                if obs[d] == UNKNOWN:
                    if known[d]:
                        flagged += 1
                    else:
                        free += 1
            if free == 0:
                continue
            if obs[c] == flagged:
                for k in range(deg[c]):
                    d = nbr[c, k]
                    if obs[d] == UNKNOWN and not known[d] and not safe_flag[d]:
                        safe_flag[d] = 1
                        safe[n_safe] = d
                        n_safe += 1
            elif obs[c] - flagged == free:
                for k in range(deg[c]):
                    d = nbr[c, k]
                    if obs[d] == UNKNOWN and not known[d]:
                        known[d] = 1
                        for k2 in range(deg[d]):
                            e = nbr[d, k2]
                            if obs[e] != UNKNOWN:
                                n_wl = _push(e, wl, n_wl, queued)
        c = -1
        if n_safe > 0:
            n_safe -= 1
            c = safe[n_safe]
            if obs[c] != UNKNOWN:
                continue
        else:
            while m > 0:
                i = rand_below(rng, m)
                x = cand[i]
                m -= 1
                cand[i] = cand[m]
                if obs[x] == UNKNOWN and not known[x]:
                    c = x
                    break
            if c < 0:
                break
        if z[c]:
            break
        k = reveal(obs, z, c, nbr, deg, out)
        revealed += k
        for i in range(k):
            x = out[i]
            n_wl = _push(x, wl, n_wl, queued)
            for k2 in range(deg[x]):
                e = nbr[x, k2]
                if obs[e] != UNKNOWN:
                    n_wl = _push(e, wl, n_wl, queued)
    return revealed
