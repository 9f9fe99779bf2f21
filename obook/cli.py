"""The ``obook`` command.

Each feature registers its own sub-commands with a ``register(subparsers)`` function so that this
module stays a thin dispatcher; errors caused by the user (``ObookError``) are printed without a
traceback and exit with status 2. The engine's own commands are listed here; the front ends built on
top of it (``obook serve`` in ``api``, ``obook grid``/``obook worker`` in ``workers``) register
themselves as ``obook.commands`` entry points (``pyproject.toml``), so that ``obook`` never imports them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from obook import __version__
from obook.errors import ObookError

# Each command module and the sub-commands it registers: ``obook CMD`` imports only CMD's module,
# since importing them all (the store, numba, the grid) costs about a second before any work starts.
COMMAND_MODULES = {
    "obook.commands.bench": ("bench",),
    "obook.commands.play": ("playout",),
    "obook.commands.gtp": ("gtp",),
    "obook.commands.analysis": ("analysis",),
    "obook.commands.match": ("match",),
    "obook.commands.book": ("build", "seed", "export", "lookup", "verify", "audit", "books", "db"),
    "obook.commands.mines": ("mines",),
    "obook.commands.learn": ("learn",),
    "obook.commands.warmup": ("warm-up",),
}
# What `obook --help` shows: plain text for a terminal (the module docstring is for developers).
DESCRIPTION = """\
obook builds opening books for Go by Monte-Carlo self-play and search, looks positions up in them,
serves them over HTTP and plays with them over GTP in GUIs such as Sabaki and GoGui. Books live in
a database: ./obook.db unless --db or OBOOK_DATABASE_URL names another. `obook COMMAND --help`
describes each command."""
EXAMPLES = """examples:
  obook build --book demo --for 300 --target 40
                                        build a minimax book for play at 300 playouts a move in
                                        ./obook.db (run it again to continue; --for 0.25s: seconds)
  obook lookup --book demo "E5 G5"      the book's moves after E5 G5
  obook serve                           the API, /docs and the dashboard on http://127.0.0.1:8000
  obook gtp --book demo --config "seconds=2"
                                        play over GTP with the book (a GUI's engine command)
  obook analysis --book demo            KataGo's JSON analysis protocol on stdin/stdout
"""
ENTRY_POINT_GROUP = "obook.commands"
# The extra (pyproject.toml) that installs a package the engine alone does not have.
EXTRAS = {"fastapi": "service", "fastapi_offline": "service", "starlette": "service", "uvicorn": "service",
          "celery": "grid", "kombu": "grid", "redis": "grid", "psycopg": "postgres"}


def command_modules(command: str | None = None) -> list[str]:
    """The modules that register ``command``: its own when it is known (an engine command, or a front
    end's entry point, named by the command), else every one (the engine's, then the front ends')."""
    from importlib.metadata import entry_points  # lazy: read once, when the sub-commands are registered

    front_ends = {ep.name: ep.value.split(":")[0] for ep in entry_points(group=ENTRY_POINT_GROUP)}
    for module, commands in COMMAND_MODULES.items():
        if command in commands:
            return [module]
    if command in front_ends:
        return [front_ends[command]]
    return list(COMMAND_MODULES) + sorted(set(front_ends.values()))


def _command_named(argv: list[str]) -> str | None:
    """The sub-command ``argv`` names: its first word when that is not an option."""
    return argv[0] if argv and not argv[0].startswith("-") else None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of ``obook``; given the command line, with only the sub-command it names (all of
    them for ``obook --help``, an unknown command or none)."""
    parser = argparse.ArgumentParser(prog="obook", description=DESCRIPTION, epilog=EXAMPLES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"obook {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in command_modules(None if argv is None else _command_named(argv)):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ObookError as exc:
        print(f"obook: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader stopped early (`obook lookup ... | head`): no traceback, none at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except ModuleNotFoundError as exc:
        extra = EXTRAS.get((exc.name or "").split(".")[0])
        if extra is None:
            raise
        print(f"obook: error: `obook {args.command}` needs {exc.name}, which is not installed: "
              f"pip install 'obook[{extra}]' (in a clone of the repository: pip install -e '.[{extra}]')",
              file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - only a refused privilege is handled, the rest raised
        refused = _refused_privilege(exc)
        if refused is None:
            raise
        print(f"obook: error: `obook {args.command}`: the database refused this role: {refused} "
              "(see \"Database roles\" in the README for which role may do what)", file=sys.stderr)
        return 2


def _refused_privilege(exc: BaseException) -> str | None:
    """PostgreSQL's message when ``exc`` is its refusal of a privilege (SQLSTATE 42501, a store
    opened with a role that may not do this: obook/store/roles.py), else None."""
    orig = getattr(exc, "orig", None)
    if getattr(orig, "sqlstate", None) == "42501":
        return str(orig).strip().splitlines()[0]
    return None


if __name__ == "__main__":
    sys.exit(main())
