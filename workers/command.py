"""The grid commands: ``obook grid run`` (the driver) and ``obook worker`` (a Celery worker).

Both read ``OBOOK_DATABASE_URL`` and ``OBOOK_BROKER_URL`` (or ``--db`` / ``--broker``); a worker on
another machine needs nothing else.

The driver's exit status says whether starting it again can help (compose restarts it on failure):
0 done, 1 gave up (``--max-seconds``) or crashed, 2 misconfigured or bad input (``ObookError``,
``obook.cli``; restarting changes nothing), 3 stopped with units set aside (an operator must put them
back: ``obook verify --retry-set-aside``; ``--wait-set-aside`` waits for that instead of exiting).
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import socket
import sys
import time

from obook.book.budget import build_settings, parse_play_budget
from obook.book.library import BookSettings, ensure_book, open_book_store
from obook.book.rules import ALGORITHMS, NEW_BOOK_ALGORITHM
from obook.config import settings
from obook.errors import ObookError
from obook.grid.driver import DriverPlan
from obook.store import jobs
from obook.store.db import StoreError

EXIT_DONE, EXIT_GAVE_UP, EXIT_SET_ASIDE = 0, 1, 3  # and 2: misconfigured or bad input (obook.cli)


def register(subparsers) -> None:
    p = subparsers.add_parser("grid", help="build a book on the grid of Celery workers")
    actions = p.add_subparsers(dest="grid_action", metavar="ACTION")
    r = actions.add_parser("run", help="the driver: keep games in play until the book has its target")
    r.add_argument("--book", required=True, help="book name (created when new, with the options below)")
    r.add_argument("--target", "--target-games", "--expansions", dest="target_games", type=int, required=True,
                   metavar="N", help="units done the book should have: expansions of a minimax book, finished "
                                     "self-play games of the others (seed games not counted)")
    r.add_argument("--size", type=int, default=None, help="new book: board size (9)")
    r.add_argument("--komi", type=float, default=None, help="new book: komi (7.5)")
    r.add_argument("--algorithm", type=_algorithm_or_empty, default=None, metavar="{" + ",".join(ALGORITHMS) + "}",
                   help=f"new book (default {NEW_BOOK_ALGORITHM}, as obook build): minimax, or the seed papers' "
                        "mbm, mvbm, beta (empty: not given); an existing book keeps its own")
    r.add_argument("--for", dest="play_budget", default=None, metavar="BUDGET",
                   help="new minimax book: the play budget it is for, seconds (0.25s) or playouts (5000) a move: "
                        "P playouts a move, each node a search of S = 30 x P (default 0.25s; as obook build; "
                        "empty: not given)")
    r.add_argument("--depth", type=int, default=None, help="new book: moves of each game that count (20; 0: all)")
    r.add_argument("--search", default=None, help="new book: search options of the mutation player")
    r.add_argument("--seconds-per-move", type=_float_or_empty, default=None,
                   help="new book: thinking time (1.0; empty: not given, for compose's variables)")
    r.add_argument("--expansion", choices=("cost", "reach"), default=None,
                   help="new minimax book: the next move to add by reach in play (default) or KataGo's cost")
    r.add_argument("--play-playouts", type=int, default=None,
                   help="new minimax book, reach: playouts a move of the play the book is for (default S/100)")
    r.add_argument("--opponents", default=None, metavar="SPEC;SPEC;...",
                   help="new reach book: the opponent population (search options over the book's at the play budget)")
    r.add_argument("--seed-salt", type=int, default=None,
                   help="new minimax book: mixed into every expansion's seed, so that two builds can differ (0)")
    r.add_argument("--reply-temperature", type=_float_or_empty, default=None, metavar="T",
                   help="new reach book: replies modelled by play-policy share ** (1/T) (0.5; 1: the shares)")
    r.add_argument("--allow-engine-change", action="store_true",
                   help="continue a book whose recorded search or learned knowledge differs from this obook's")
    r.add_argument("--poll", type=float, default=0.5, help="seconds between two looks at the store")
    r.add_argument("--db", default=None, metavar="URL", help="database URL (default: OBOOK_DATABASE_URL)")
    r.add_argument("--broker", default=None, metavar="URL", help="broker URL (default: OBOOK_BROKER_URL)")
    r.add_argument("--max-seconds", type=float, default=None, help="give up after this long (exit 1)")
    r.add_argument("--wait-set-aside", action="store_true",
                   help="with units set aside (they failed on several workers) and nothing else to do, wait for "
                        "an operator to put them back (obook verify --retry-set-aside) and take them up, instead "
                        "of exiting with status 3 (compose's driver, which would otherwise be restarted)")
    r.set_defaults(func=cmd_grid_run)
    h = actions.add_parser("health", help="a worker's health: exit 1 when it quarantined itself (failed "
                                          "OBOOK_QUARANTINE_FAILURES units in a row), 0 when healthy; with "
                                          "--book, the book's: exit 1 while units are set aside")
    h.add_argument("--worker", default=None, metavar="ID", help="the worker's identity (its log's first lines)")
    h.add_argument("--host", default=None, help="the newest worker of this host (default: this machine)")
    h.add_argument("--book", default=None, help="the health of this book's build instead (compose's driver): "
                                                "exit 1 while units are set aside, waiting for an operator")
    h.add_argument("--db", default=None, metavar="URL", help="database URL (default: OBOOK_DATABASE_URL)")
    h.set_defaults(func=cmd_grid_health, broker=None)
    p.set_defaults(func=lambda _args: p.print_help() or 2)

    w = subparsers.add_parser("worker", help="start a grid worker (Celery) that plays games of any book")
    w.add_argument("--concurrency", type=int, default=None,
                   help="processes (default: OBOOK_WORKER_CONCURRENCY, else the CPU count)")
    w.add_argument("--pool", choices=("prefork", "solo"), default="prefork",
                   help="Celery pool: prefork (processes, the default) or solo (one game at a time in this process)")
    w.add_argument("--soft-shutdown-timeout", type=float, default=None,
                   help="seconds a stopping worker gives its slices (default: OBOOK_SOFT_SHUTDOWN_SECONDS, 60)")
    w.add_argument("--loglevel", default="INFO", help="Celery's log level (default INFO)")
    w.add_argument("--name", default=None, help="Celery node name (default: obook-<pid>@host)")
    w.add_argument("--db", default=None, metavar="URL", help="database URL (default: OBOOK_DATABASE_URL)")
    w.add_argument("--broker", default=None, metavar="URL", help="broker URL (default: OBOOK_BROKER_URL)")
    w.set_defaults(func=cmd_worker)


def _algorithm_or_empty(text: str) -> str:
    """One of ALGORITHMS, or "" (not given) for an empty argument: compose passes ``${OBOOK_ALGORITHM-}``
    left empty, so that the default stays NEW_BOOK_ALGORITHM's."""
    name = text.strip()
    if name and name not in ALGORITHMS:
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {', '.join(ALGORITHMS)})")
    return name


def _float_or_empty(text: str) -> float | None:
    """A number, or None for an empty argument (compose passes ``${OBOOK_...-}`` left empty)."""
    if not text.strip():
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None


def _environment(args) -> None:
    """Command-line URLs override the environment, for this process and the ones it starts."""
    if args.db:
        os.environ["OBOOK_DATABASE_URL"] = args.db
    if args.broker:
        os.environ["OBOOK_BROKER_URL"] = args.broker
    if getattr(args, "soft_shutdown_timeout", None) is not None:
        os.environ["OBOOK_SOFT_SHUTDOWN_SECONDS"] = str(args.soft_shutdown_timeout)
    settings.cache_clear()


def cmd_grid_run(args) -> int:
    if args.target_games < 1:
        raise ObookError("--target must be at least 1")
    _environment(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s driver: %(message)s")
    logging.getLogger("alembic").setLevel(logging.WARNING)
    from workers.driver import celery_driver  # lazy: Celery and Redis, loaded when `obook grid run` runs

    s = settings()
    given = {k: v for k, v in {"size": args.size, "komi": args.komi, "algorithm": args.algorithm,
                                "depth": args.depth, "search": args.search,
                                "seconds_per_move": args.seconds_per_move, "expansion": args.expansion,
                                "play_playouts": args.play_playouts, "seed_salt": args.seed_salt,
                                "opponents": args.opponents, "reply_temperature": args.reply_temperature}.items()
             if v is not None and v != ""}  # empty: not given (compose's variables left empty)
    log = logging.getLogger("obook.driver")

    budget = parse_play_budget(args.play_budget) if args.play_budget else None

    def start():
        store = open_book_store(s.database_url, create=True)
        wanted, _ = build_settings(store, args.book, given, budget)  # a new book: NEW_BOOK_ALGORITHM, as obook build's
        book = ensure_book(store, args.book, BookSettings(**wanted), explicit=set(wanted),
                           allow_engine_change=args.allow_engine_change)
        plan = DriverPlan(book=book.name, target=args.target_games, token_seconds=s.lease_seconds, poll=args.poll)
        return store, book, plan, celery_driver(store, plan)

    store, book, plan, driver = _retrying_store_errors(start, log)
    unit = driver.kind.unit
    log.info("book %r in %s, target %d %ss done, queue %r", book.name, store.name, plan.target, unit, s.queue)
    last = {"line": None}

    def report(step) -> None:
        line = (f"{step.finished}/{plan.target} {unit}s done, {step.in_progress} in progress, "
                f"{step.live_workers} live workers" + (f", {step.set_aside} set aside" if step.set_aside else ""))
        if line != last["line"] or step.created or step.sent:
            log.info("%s%s%s", line, f", created {len(step.created)}" if step.created else "",
                     f", sent {len(step.sent)}" if step.sent else "")
            last["line"] = line

    def set_aside_line(step) -> str:
        try:
            with store.read() as conn:
                aside = jobs.set_aside(conn, driver.kind.jobs, book.id, limit=10)
        except StoreError as exc:  # the store went away meanwhile: the counts still say what to do
            log.warning("cannot list the units set aside: %s", exc)
            aside = []
        return (f"book {book.name!r} has {step.finished} {unit}s done and {step.set_aside} {unit}(s) set aside "
                f"after repeated failures: " + "; ".join(f"{unit} {i} after {n} failures: {why}" for i, n, why in aside)
                + f". Once the cause is fixed, `obook verify --book {book.name} --retry-set-aside` puts them back")

    def report_or_wait(step) -> None:
        report(step)
        if args.wait_set_aside and step.needs_operator and step.durable and step.set_aside != last.get("aside"):
            log.error("waiting for an operator: %s; this driver then takes them up", set_aside_line(step))
        last["aside"] = step.set_aside if step.needs_operator else None

    final = driver.run(on_step=report_or_wait, max_seconds=args.max_seconds, wait_on_set_aside=args.wait_set_aside)
    if not final.done:
        log.error("stopped after %.0f s before the target", args.max_seconds)
        return EXIT_GAVE_UP
    if final.set_aside:
        log.error("stopped: %s and run `obook grid run` again", set_aside_line(final))
        return EXIT_SET_ASIDE
    print(f"done: book {book.name!r} has {final.finished} {unit}s done, confirmed on disk")
    return EXIT_DONE


def cmd_grid_health(args) -> int:
    from obook.grid.health import book_health, worker_health  # lazy: as the other commands' modules

    _environment(args)
    store = open_book_store(settings().database_url)
    if args.book is not None:
        if args.worker is not None or args.host is not None:
            raise ObookError("--book gives a book's health: not with --worker or --host")
        health = book_health(store, args.book)
    else:
        health = worker_health(store, worker_id=args.worker, host=args.host)
    print(health.line())
    return 0 if health.healthy else 1


def _retrying_store_errors(start, log, attempts: int = 6):
    """``start()``, tried again after a store error (a connection dropped while the driver starts, a
    database restarting) with a doubling wait: 0.5 s ... 8 s, about 15 s in all; the last error is
    raised (a wrong URL still fails with its message)."""
    for attempt in range(attempts):
        try:
            return start()
        except StoreError as exc:
            if attempt + 1 == attempts:
                raise
            log.warning("store error while starting, retrying: %s", exc)
            time.sleep(0.5 * 2 ** attempt)


def cmd_worker(args) -> int:
    """Replace this process by ``celery worker`` so that signals reach Celery directly."""
    if importlib.util.find_spec("celery") is None:  # said here, not by the process that replaces this one
        raise ModuleNotFoundError("No module named 'celery'", name="celery")

    _environment(args)
    name = args.name or f"obook-{os.getpid()}@{socket.gethostname()}"
    argv = worker_argv(args, settings(), name)
    sys.stdout.flush()
    os.execv(sys.executable, argv)
    return 0  # not reached


def worker_argv(args, s, name: str) -> list[str]:
    """The ``celery worker`` command line of ``obook worker``: one process per core unless
    ``--concurrency`` or ``OBOOK_WORKER_CONCURRENCY`` says otherwise (a container scaled N times
    should not start N times the host's cores)."""
    if args.concurrency is not None and args.concurrency < 1:
        raise ObookError(f"--concurrency must be at least 1, not {args.concurrency}")
    concurrency = args.concurrency or s.worker_concurrency or os.cpu_count() or 1
    return [sys.executable, "-m", "celery", "-A", "workers", "worker", "-Q", s.queue,
            "--pool", args.pool, "--concurrency", str(concurrency), "--prefetch-multiplier", "1", "-O", "fair",
            "--without-gossip", "--without-mingle", "--loglevel", args.loglevel, "-n", name]
