"""Compiling the engine ahead of its first use, step by step, with a progress line.

Numba compiles a jitted function the first time it is called and keeps the machine code in its cache
(``obook/jit.py``); a process that finds it there loads it in a fraction of a second. ``warm_up``
calls everything a player needs (the rules, the playouts, the search, the ownership behind scoring)
once on a tiny board, so that the compiling happens here, announced, and not in the middle of a
game, under a lease, or while a GTP GUI waits for an answer. After a complete warm-up it leaves a
marker in the cache folder (whose name is a digest of the engine's sources), which ``is_warm``
reads: a changed engine or another cache folder is cold again.

Each step imports its modules when it runs, so that their loading and compiling is the step's and
shows in its progress line.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable, TextIO

DEFAULT_POLICIES = ("heavy", "light")


def _marker(algorithm: str) -> Path:
    import obook.jit  # (not "from ... import": this module holds no compiled code, see jit._holds_compiled_code)

    return obook.jit.cache_folder() / f"warm-{algorithm}"


def is_warm(algorithm: str = "uct") -> bool:
    """Whether a complete warm-up of this engine for ``algorithm`` already filled the numba cache
    in use (the playout loop is shared by every policy, so the policies do not matter)."""
    return _marker(algorithm).exists()


def _rules() -> None:
    from obook.go.position import Position

    position = Position(size=5)
    for move in ("C3", "pass", "B2", "pass"):
        position.play(move)
    position.legal_moves()
    from obook.go.replay import replay  # the service's lookups

    replay(5, False, [position.point(v) for v in ("C3", "pass", "B2")], every_prefix=True)


def _search(policy: str, algorithm: str) -> None:
    from obook.go.position import Position
    from obook.search.players import make_player

    position = Position(size=5)
    player = make_player(f"algorithm={algorithm},playouts=16,policy={policy},seed=1")
    try:
        for _ in range(3):
            position.play(player.genmove(position).move)
    finally:
        player.close()


def _ownership(policy: str) -> None:
    from obook.go.position import Position
    from obook.playout.ownership import stone_status

    position = Position(size=5)
    for move in ("C3", "D3"):
        position.play(move)
    stone_status(position, 8, policy, seed=1)


def steps(policies: tuple[str, ...] = DEFAULT_POLICIES, algorithm: str = "uct") -> list[tuple[str, Callable[[], None]]]:
    """What ``warm_up`` runs, in order, each with the name the progress line shows: only what the
    search ``algorithm`` uses (none for ``random``). The playout loop takes the policy as a number,
    so the first policy compiles what every policy uses and the others only load it."""
    from functools import partial

    from obook.playout.policies import POLICY_NAMES
    from obook.search.config import ALGORITHMS

    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    for policy in policies:
        if policy not in POLICY_NAMES:
            raise ValueError(f"unknown policy {policy!r}; choose from {', '.join(POLICY_NAMES)}")
    found = [("the rules", _rules)]
    for policy in policies if algorithm != "random" else ():
        found.append((f"the search ({algorithm}, {policy} playouts)", partial(_search, policy, algorithm)))
    found.append(("ownership (scoring)", partial(_ownership, policies[0] if policies else "light")))
    return found


def warm_up(policies: tuple[str, ...] = DEFAULT_POLICIES, progress: TextIO | None = None,
            algorithm: str = "uct") -> float:
    """Compile (or load) the engine's jitted code; with ``progress`` (a text stream such as stderr)
    write one line per step and a last one with the time taken. Returns the seconds taken."""
    started = time.perf_counter()
    todo = steps(policies, algorithm)
    doing = "loading" if is_warm(algorithm) else "compiling"
    for k, (label, step) in enumerate(todo, 1):
        if progress is not None:
            print(f"obook: {doing} the engine [{k}/{len(todo)}] {label} "
                  f"({time.perf_counter() - started:.0f} s so far)", file=progress, flush=True)
        step()
    took = time.perf_counter() - started
    try:
        _marker(algorithm).touch()
    except OSError:
        pass  # a read-only cache still works; it is only never reported warm
    if progress is not None:
        print(f"obook: the engine is ready ({took:.1f} s)", file=progress, flush=True)
    return took


def warm_up_in_background(policies: tuple[str, ...] = DEFAULT_POLICIES, progress: TextIO | None = sys.stderr,
                          algorithm: str = "uct"):
    """When the cache is cold, say so on ``progress`` and start ``warm_up`` in a daemon thread, so
    that a front end (``obook gtp``) keeps answering what needs no search while the engine compiles:
    numba compiles one function at a time under its lock, and the rules, compiled first, are then
    ready for the front end's thread. Returns the thread, or None when the cache is warm."""
    import threading

    if is_warm(algorithm):
        return None
    if progress is not None:
        print("obook: the engine is not compiled yet (numba, first use only): compiling it now, about a "
              "minute; `obook warm-up` does it ahead", file=progress, flush=True)

    def run() -> None:
        try:
            warm_up(policies, progress, algorithm)
        except Exception as exc:  # noqa: BLE001 - the first search will meet it again and report it
            if progress is not None:
                print(f"obook: compiling the engine failed: {exc}", file=progress, flush=True)

    thread = threading.Thread(target=run, name="obook-warm-up", daemon=True)
    thread.start()
    return thread
