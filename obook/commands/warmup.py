"""``obook warm-up``: compile the engine into the numba cache ahead of its first use (a Docker
image's build step, a new machine, a fresh clone), with a progress line on stderr.

Imports are lazy, inside each command: ``obook --help`` and every command load only what they use.
"""

from __future__ import annotations

import argparse
import sys

from obook.errors import ObookError


def register(subparsers) -> None:
    parser = subparsers.add_parser("warm-up", help="compile the engine into the numba cache ahead of use")
    parser.add_argument("--policies", default="heavy,light",
                        help="playout policies the players will use, comma separated (default heavy,light)")
    parser.add_argument("--algorithm", default="uct", help="the search algorithm the players will use (default uct)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from obook.search.warmup import warm_up

    policies = tuple(p.strip() for p in args.policies.split(",") if p.strip())
    if not policies:
        raise ObookError("--policies names no policy")
    try:
        warm_up(policies, progress=None if args.quiet else sys.stderr, algorithm=args.algorithm)
    except ValueError as exc:
        raise ObookError(str(exc)) from None
    return 0
