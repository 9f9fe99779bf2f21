"""The book commands: ``obook build``, ``seed``, ``export``, ``lookup``, ``verify``, ``books`` and
``db`` (schema and PostgreSQL roles). Each is a thin layer over ``obook.book``; the store is ``--db`` or OBOOK_DATABASE_URL.

Imports are lazy, inside each command: ``obook --help`` and every command load only what they use.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from obook.book.rules import ALGORITHMS, NEW_BOOK_ALGORITHM
from obook.errors import ObookError


def _db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=None, metavar="URL",
                        help="database URL or SQLite path (default: OBOOK_DATABASE_URL, else sqlite:///obook.db)")


def register(subparsers) -> None:
    p = subparsers.add_parser("build", help="build an opening book with local processes: a minimax book of deep "
                                            f"searches, or MBM/MVBM/Beta self-play (default {NEW_BOOK_ALGORITHM})")
    p.add_argument("--book", default="default", help="book name (created when new)")
    p.add_argument("--size", type=int, default=None, help="board size (new book: 9)")
    p.add_argument("--komi", type=float, default=None, help="komi (new book: 7.5)")
    p.add_argument("--algorithm", choices=ALGORITHMS, default=None,
                   help=f"new book (default {NEW_BOOK_ALGORITHM}): minimax, search values backed up by minimax (its "
                        "unit: expansions); the seed papers' self-play rules mbm, mvbm, and beta (Thompson sampling "
                        "on Beta(w+1, l+1) with a new-move arm), whose unit is games. An existing book keeps its own")
    p.add_argument("--for", dest="play_budget", default=None, metavar="BUDGET",
                   help="new minimax book: the play budget it is for, seconds a move (0.25s) or playouts a move "
                        "(5000): P playouts a move of play (0.25s: 5,000), each node a search of S = 30 x P "
                        "(default 0.25s; --search, --play-playouts, --seconds-per-move override their part)")
    p.add_argument("--threshold", type=float, default=None,
                   help="book-move threshold (default 0.5 MBM, 0.1 MVBM; beta has none)")
    p.add_argument("--depth", type=int, default=None,
                   help="moves of each game that count in the book (new: 20; 0: every move, no cap)")
    p.add_argument("--search", default=None,
                   help="search options (SearchConfig spec) of the mutation player, or of a minimax book's nodes "
                        "(over --for's playouts=S)")
    p.add_argument("--superko", action="store_true", default=None, help="forbid positional superko")
    p.add_argument("--widening", type=float, default=None,
                   help="new book: mutate while a position with N games has fewer than 1+N^W moves (0: off)")
    p.add_argument("--expansion", choices=("cost", "reach"), default=None,
                   help="new minimax book: add the move likeliest to be reached in play against an engine of "
                        "--play-playouts (reach, the default), or expand the cheapest node by KataGo's cost (cost)")
    p.add_argument("--play-playouts", type=int, default=None,
                   help="new minimax book, reach: playouts a move of the play that the book is for (default: --for's P; "
                        "S/100 when --search is given without --for)")
    p.add_argument("--opponents", default=None, metavar="SPEC;SPEC;...",
                   help="new reach book: the opponent population whose replies the book covers, search options "
                        "over the book's at the play budget, e.g. 'playouts=150;playouts=600;prior_model=off' "
                        "(default: the book's search at --play-playouts, 4 times)")
    p.add_argument("--seed-salt", type=int, default=None,
                   help="new minimax book: mixed into every expansion's seed, so that two builds with the same "
                        "settings differ (default 0)")
    p.add_argument("--reply-temperature", type=float, default=None, metavar="T",
                   help="new reach book: the opponent model plays a reply with probability proportional to its "
                        "play-policy share ** (1/T) (default 0.5, fitted to the engine's replies; 1: the shares)")
    p.add_argument("--allow-engine-change", action="store_true",
                   help="continue a book whose recorded search or learned knowledge differs from this obook's "
                        "(the book then records this engine)")
    p.add_argument("--target", "--expansions", "--games", dest="target", type=int, default=20, metavar="N",
                   help="units done the book should have: expansions of a minimax book, finished self-play games "
                        "of the others (seed games not counted); default 20")
    p.add_argument("--workers", type=int, default=None, help="local worker processes (default: CPU count)")
    p.add_argument("--seconds-per-move", type=float, default=None,
                   help="thinking time of a mutation (new self-play book: 1.0; a minimax book searches by playouts: 0)")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    _db(p)
    p.set_defaults(func=cmd_build)

    p = subparsers.add_parser("seed", help="add SGF games to a book as seed individuals")
    p.add_argument("--book", required=True, help="name of the book to add the games to")
    p.add_argument("files", nargs="+", type=Path, metavar="FILE.sgf",
                   help="SGF files (every game of a collection) or directories of them")
    komi = p.add_mutually_exclusive_group()
    komi.add_argument("--moves-only", action="store_true",
                      help="a game whose result is at another komi than the book's: add its moves without the result")
    komi.add_argument("--accept-komi", action="store_true",
                      help="a game whose result is at another komi than the book's: count the result as it is")
    _db(p)
    p.set_defaults(func=cmd_seed)

    p = subparsers.add_parser("export", help="write a book as one SGF game tree, or as static pages to browse offline")
    p.add_argument("--book", required=True, help="name of the book to export")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--sgf", help="file to write, or - for standard output")
    target.add_argument("--html", type=Path, metavar="DIR",
                        help="directory to write the book browser to (index.html and data/; opens from the file system)")
    p.add_argument("--force", action="store_true", help="--html: write over a directory that is not empty")
    p.add_argument("--min-games", type=int, default=1, help="leave out (--html: do not follow) moves with fewer games")
    p.add_argument("--depth", type=int, default=None,
                   help="moves from the root (default and 0: the book's depth; at most 100,000 moves (--html: "
                        "positions) are written)")
    _db(p)
    p.set_defaults(func=cmd_export)

    p = subparsers.add_parser("lookup", help="the book's moves in a position")
    p.add_argument("--book", required=True, help="name of the book to look in")
    p.add_argument("moves", nargs="?", default="", help='moves from the empty board, e.g. "E5 G5" or E5,G5')
    p.add_argument("--min-games", type=int, default=1, help="the usage rule ignores moves with fewer games")
    p.add_argument("--json", action="store_true", help="print the answer as one JSON object")
    _db(p)
    p.set_defaults(func=cmd_lookup)

    p = subparsers.add_parser("verify", help="recompute a book's statistics from its finished games and compare")
    p.add_argument("--book", required=True, help="name of the book to check")
    p.add_argument("--repair", action="store_true",
                   help="replace the statistics by the recomputed ones (exit 0 when everything is repaired)")
    p.add_argument("--retry-set-aside", action="store_true",
                   help="put the book's set-aside games or expansions back to work (their failures forgotten), "
                        "then verify; `obook build` or `obook grid run` takes them up")
    _db(p)
    p.set_defaults(func=cmd_verify)

    p = subparsers.add_parser("audit", help="what a worker wrote to a book between two times, and its revert; "
                                            "without --worker, the workers the store knows")
    p.add_argument("--book", default=None, help="the book (required with --worker)")
    p.add_argument("--worker", default=None, metavar="ID",
                   help="the worker's identity (SITE:HOST:PID:STARTED:ENGINE, from `obook audit` or its log)")
    p.add_argument("--since", default=None, metavar="TIME", help="ISO 8601 (UTC unless it names a zone; default: ever)")
    p.add_argument("--until", default=None, metavar="TIME", help="ISO 8601 (default: now)")
    p.add_argument("--revert", action="store_true",
                   help="abandon the games it wrote moves of or finished in the window and recount the statistics "
                        "(`obook build` / `obook grid run` then play new ones in their place); a minimax book: take its "
                        "expansions out of the book and schedule them again")
    p.add_argument("--dry-run", action="store_true",
                   help="with --revert: say what it would revert and keep, by the same rules, and write nothing")
    _db(p)
    p.set_defaults(func=cmd_audit)

    p = subparsers.add_parser("books", help="list the books of a store")
    _db(p)
    p.set_defaults(func=cmd_books)

    p = subparsers.add_parser("db", help="database schema: upgrade or show the revision; PostgreSQL roles and grants")
    p.add_argument("action", choices=("upgrade", "current", "roles", "grant"),
                   help="upgrade: bring the schema to this obook's; current: show the schema's revision; "
                        "roles (a superuser's --db): create or update the migrator, service, worker and backup "
                        "roles (passwords from OBOOK_MIGRATOR_PASSWORD... when set), hand --database to the "
                        "migrator and grant its tables; grant (the migrator's --db): grant the tables again, "
                        "after every upgrade")
    p.add_argument("--roles", default="obook", metavar="PREFIX",
                   help="roles and grant: the roles are PREFIX_migrator, PREFIX_service, PREFIX_worker and "
                        "PREFIX_backup (default obook)")
    p.add_argument("--database", default=None, metavar="NAME",
                   help="roles: the database to create or take over (default: the one --db names)")
    _db(p)
    p.set_defaults(func=cmd_db)


def cmd_audit(args) -> int:
    import datetime as dt

    from obook.book.audit import as_text, audit, parse_time, revert_expansions, revert_games

    store = _store(args)
    if args.worker is None:
        if args.revert:
            raise ObookError("--revert needs --worker and --book")
        from obook.store.workers import worker_records

        with store.read() as conn:
            records = worker_records(conn, limit=200)
        for r in records:
            state = f"QUARANTINED {r['quarantined_at']:%Y-%m-%d %H:%M:%S}: {r['quarantine_reason']}" \
                if r["quarantined_at"] else "healthy"
            print(f"{r['id']}  {r['kind']}  first seen {r['first_seen']:%Y-%m-%d %H:%M:%S}  last seen "
                  f"{r['last_seen']:%Y-%m-%d %H:%M:%S}  {r['units_done']} done  {r['failures']} failures  {state}")
        if not records:
            print("no worker has written to this store yet")
        return 0
    if args.book is None:
        raise ObookError("--worker needs --book")
    book = _keyed_book(store, args.book, "audit it")
    since = parse_time(args.since, "--since") if args.since else dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    until = parse_time(args.until, "--until") if args.until else dt.datetime.now(dt.timezone.utc)
    found = audit(store, book, args.worker, since, until)
    for line in as_text(found):
        print(line)
    if args.dry_run and not args.revert:
        raise ObookError("--dry-run goes with --revert")
    if not args.revert:
        return 0
    done = "would be" if args.dry_run else "reverted"
    if found.expansions:
        reverted, again, kept = revert_expansions(store, book, found, dry_run=args.dry_run)
        print(f"{done}: {len(reverted)} expansions taken out of the book"
              + (f" ({', '.join(map(str, reverted[:50]))})" if reverted else "")
              + f", {len(again)} of them scheduled again (the others' nodes left the book with them); "
              + ("the book backed up from scratch" if not args.dry_run else "nothing written"))
        for job_id, why in kept:
            print(f"  expansion {job_id} kept: {why}")
        return 1 if kept else 0
    abandoned = revert_games(store, book, found, dry_run=args.dry_run)
    print(f"{done}: {len(abandoned)} games abandoned"
          + (f" ({', '.join(map(str, abandoned[:50]))})" if abandoned else "")
          + ("; statistics recounted from the finished games left" if not args.dry_run else "; nothing written"))
    return 0


def _store(args, create: bool = False):
    from obook.book.library import open_book_store

    return open_book_store(args.db, create=create)


def _keyed_book(store, name, use):
    from obook.book.library import open_keyed_book

    return open_keyed_book(store, name, use)


# ---- build -----------------------------------------------------------------------------------------


def cmd_build(args) -> int:
    from obook.book.budget import build_settings, parse_play_budget
    from obook.book.build import BuildPlan, build
    from obook.book.kinds import book_kind
    from obook.book.library import BookSettings, ensure_book
    from obook.errors import ObookError

    if args.target < 1:
        raise ObookError("--target (--expansions, --games) must be at least 1")
    workers = args.workers or os.cpu_count() or 1
    if workers < 1:
        raise ObookError("--workers must be at least 1")
    budget = parse_play_budget(args.play_budget) if args.play_budget is not None else None
    given = {k: v for k, v in {"size": args.size, "komi": args.komi, "algorithm": args.algorithm,
                                "threshold": args.threshold, "depth": args.depth, "search": args.search,
                                "superko": args.superko, "seconds_per_move": args.seconds_per_move,
                                "widening": args.widening, "expansion": args.expansion,
                                "play_playouts": args.play_playouts, "seed_salt": args.seed_salt,
                                "opponents": args.opponents, "reply_temperature": args.reply_temperature}.items()
             if v is not None}
    store = _store(args, create=True)
    given, budget = build_settings(store, args.book, given, budget)
    book = ensure_book(store, args.book, BookSettings(**given), explicit=set(given) - {"seconds_per_move"},
                       allow_engine_change=args.allow_engine_change)
    seconds = given.get("seconds_per_move")
    kind = book_kind(book)
    plan = BuildPlan(url=store.url, book=book.name, target=args.target, workers=workers, seconds=seconds)
    err = sys.stderr
    if kind.has_play_budget:
        _print_minimax_plan(store, book, plan, budget, err)
    else:
        widening = f", widening {book.widening:g}" if book.widening else ""
        print(f"obook build: book {book.name!r} ({book.size}x{book.size}, komi {book.komi:g}, {_rule(book)}, "
              f"depth {_depth(book.depth)}{widening}) in {store.name}", file=err)
        print(f"  {workers} worker process(es), {seconds if seconds is not None else book.seconds_per_move:g} s per "
              f"mutation move, target {args.target} {kind.unit}s done (Ctrl-C stops; run again to continue)", file=err)
    started = time.time()
    print("  loading the engine (the first run compiles it: about a minute)...", file=err)
    try:
        if args.quiet:
            final = build(plan)
        else:
            final = _build_with_display(plan, build, kind.unit)
            print(file=err)
    except KeyboardInterrupt:
        print(f"\ninterrupted: {kind.unit}s in progress are taken up again; run the same command to continue",
              file=err)
        return 130
    minutes = (time.time() - started) / 60
    if final.set_aside:
        print(f"stopped: {final.finished} {kind.unit}s done in book {book.name!r} ({minutes:.1f} min); "
              f"{final.set_aside} {kind.unit}(s) set aside (see `obook verify --book {book.name}`)", file=err)
        _print_set_aside(store, book, file=err)
        return 1
    nodes = f", {final.nodes} nodes" if final.nodes is not None else ""
    print(f"done: {final.finished} {kind.unit}s done in book {book.name!r}{nodes} ({minutes:.1f} min)")
    for line in kind.build_summary(store, book):
        print(line)
    _print_next_steps(store, book, args.target, f" --db {args.db}" if args.db else "")
    return 0


def _print_minimax_plan(store, book, plan, budget, err) -> None:
    """What a minimax build is about to do, in its own unit: expansions, nodes, the budgets."""
    from obook.book.budget import play_search
    from obook.book.kinds import book_kind
    from obook.book.selfplay import mutation_config

    with store.read() as conn:
        kind = book_kind(book)
        done, nodes = kind.counts(conn, book).done, kind.nodes(conn, book)
    deep = mutation_config(book, plan.seconds)
    search = f"{deep.seconds:g} s" if deep.seconds > 0 else f"{deep.playouts:,} playouts"
    asked = f" (--for {budget.text})" if budget is not None else ""
    print(f"obook build: book {book.name!r} ({book.size}x{book.size}, komi {book.komi:g}, {_rule(book)}, "
          f"grown by {book.expansion}) in {store.name}", file=err)
    print(f"  for play at {play_search(book).playouts:,} playouts a move{asked}; each node a search of {search}",
          file=err)
    print(f"  {plan.workers} worker process(es), target {plan.target} expansions: {done} done, "
          f"{max(plan.target - done, 0)} to go, {nodes} nodes (Ctrl-C stops; run again to continue)", file=err)


def _print_next_steps(store, book, target: int, db: str = "") -> None:
    """Where the book is and what to do with it: look, play (the GTP engine command), grow, export, check."""
    from obook.book.budget import play_search
    from obook.book.kinds import book_kind

    config = play_search(book).to_spec()
    print(f"  store:  {store.name}")
    print(f"  look:   obook lookup{db} --book {book.name} \"\"        (the book's moves on the empty board)")
    print(f"  play:   {_obook_command()} gtp --book {book.name} --book-db {_absolute_url(store)}"
          + (f' --config "{config}"' if config else ""))
    budget = "the play budget it is for" if book_kind(book).has_play_budget else "its mutation player's search"
    print(f"          (the engine command for Sabaki or GoGui: the book's moves, then searches at {budget})")
    print(f"  grow:   obook build{db} --book {book.name} --target {2 * target}     (the book keeps its settings)")
    print(f"  export: obook export{db} --book {book.name} --sgf {book.name}.sgf")
    print(f"  check:  obook verify{db} --book {book.name}")


def _obook_command() -> str:
    """This obook as a GUI starts it, by absolute path (GUIs start engines in their own directory)."""
    script = Path(sys.argv[0])
    if script.name == "obook" and script.exists():
        return str(script.resolve())
    return f"{sys.executable} -m obook.cli"


def _absolute_url(store) -> str:
    """The store's URL with a SQLite file's absolute path, so that it names the same file from anywhere."""
    from sqlalchemy.engine import make_url

    url = make_url(store.url)
    if url.get_backend_name() == "sqlite" and url.database and url.database != ":memory:":
        return f"sqlite:///{Path(url.database).resolve()}"
    return store.name


def _build_with_display(plan, build, unit: str) -> object:
    from rich.console import Console, Group
    from rich.live import Live
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    console = Console(stderr=True)
    progress = Progress(TextColumn(f"[bold]{unit}s"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                        TextColumn("{task.fields[rate]}"), console=console)
    task = progress.add_task(unit, total=plan.target, rate="")
    state = {"table": Table()}

    def render():
        return Group(progress, state["table"])

    # Started at the first status, after the build has forked its workers: its refresh thread must
    # not exist in the process they are copied from (obook.book.build.process_context).
    live = Live(render(), console=console, refresh_per_second=4, transient=False)

    def on_status(s) -> None:
        if not live.is_started:
            live.start()
        eta = s.eta_seconds
        progress.update(task, completed=min(s.finished, plan.target),
                        rate=f"{s.rate_per_hour:.0f} {unit}s/hour"
                             + (f", ETA {_duration(eta)}" if eta is not None and eta > 0 else "")
                             + (f", {s.nodes} nodes" if s.nodes is not None else "")
                             + f", {s.in_progress} in progress")
        table = Table(show_header=bool(s.sequences), header_style="bold", box=None, padding=(0, 1))
        table.add_column("worker")
        table.add_column(unit)
        table.add_column("position being searched" if unit == "expansion" else "sequence being explored")
        for worker, game_id, moves in sorted(s.sequences)[:8]:
            words = moves.split()
            shown = " ".join(words[:14]) + (f" … ({len(words)} moves)" if len(words) > 14 else "")
            table.add_row(worker, str(game_id), shown or "(empty board)")
        state["table"] = table
        live.update(render())

    try:
        return build(plan, on_status=on_status)
    finally:
        live.stop()


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


# ---- seed, export, lookup, verify, books, db --------------------------------------------------------


def _rule(book) -> str:
    from obook.book.kinds import book_kind

    return book_kind(book).rule(book)


def _depth(depth: int) -> str:
    from obook.book.kinds import describe_depth

    return describe_depth(depth)


def _sgf_files(paths: list[Path]) -> list[Path]:
    from obook.errors import ObookError

    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(sorted(path.rglob("*.sgf")))
        elif path.exists():
            files.append(path)
        else:
            raise ObookError(f"{path}: no such file or directory")
    return files


def cmd_seed(args) -> int:
    from collections import Counter

    from obook.book.sgfio import ACCEPT, MOVES_ONLY, REFUSE, seed_book

    files = _sgf_files(args.files)
    store = _store(args)
    book = _keyed_book(store, args.book, "seed it")
    policy = MOVES_ONLY if args.moves_only else ACCEPT if args.accept_komi else REFUSE
    report = seed_book(store, book, files, policy)
    for path, entries in report.by_file().items():
        counts = Counter(e.status for e in entries)
        komis = sorted({"no KM" if e.komi is None else f"{e.komi:g}" for e in entries if e.status != "skipped"})
        rules = sorted({e.rules for e in entries if e.rules})
        read = (f" (komi {', '.join(komis)}" + (f"; rules {', '.join(rules)}" if rules else "") + ")") if komis else ""
        print(f"{path}: {len(entries)} game(s){read}: {counts['added']} seeded with their result, "
              f"{counts['unscored']} seeded without a result, {counts['duplicate']} already present, "
              f"{counts['skipped']} skipped", file=sys.stderr)
        for e in entries:
            if e.why and e.status != "duplicate":
                label = e.game[len(path):].strip().strip("()") or "the game"
                verb = {"skipped": "skipped", "unscored": "no result counted", "added": "result counted"}[e.status]
                print(f"  {label}: {verb}: {e.why}", file=sys.stderr)
    print(f"book {book.name!r}: {len(report.scored)} seed games added with their result, {len(report.unscored)} "
          f"without a result (unscored), {len(report.duplicates)} already present, {len(report.skipped)} skipped")
    return 0


def cmd_export(args) -> int:
    from obook.book.kinds import book_kind
    from obook.errors import ObookError

    if args.html is not None:
        return _export_html(args)
    store = _store(args)
    book = _keyed_book(store, args.book, "export it")
    data, nodes = book_kind(book).export(store, book, min_games=args.min_games, depth=args.depth)
    if args.sgf == "-":  # the SGF alone on stdout, for a pipe; the count goes to stderr
        try:
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        except BrokenPipeError:  # the reader stopped early (`| head`): no traceback, and none at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 1
        print(f"wrote the SGF to standard output: {nodes} book moves", file=sys.stderr)
        return 0
    try:
        Path(args.sgf).write_bytes(data)
    except OSError as exc:
        raise ObookError(f"cannot write {args.sgf}: {exc.strerror or exc}") from None
    print(f"wrote {args.sgf}: {nodes} book moves")
    return 0


def _export_html(args) -> int:
    from obook.book.htmlexport import check_directory
    from obook.book.kinds import book_kind

    check_directory(args.html, args.force)  # before opening the store: a mistyped directory costs nothing
    store = _store(args)
    book = _keyed_book(store, args.book, "export it")
    done = book_kind(book).export_html(store, book, args.html, min_games=args.min_games, depth=args.depth,
                                       force=args.force)
    cut = " (stopped at 100,000 positions)" if done.truncated else ""
    print(f"wrote {done.directory / 'index.html'}: {done.positions} positions{cut}, {done.book_moves} book moves, "
          f"{done.files} data files in {done.seconds:.1f} s")
    return 0


def cmd_lookup(args) -> int:
    from obook.book.keys import engine_line
    from obook.book.kinds import book_kind
    from obook.book.library import lookup

    store = _store(args)
    book = _keyed_book(store, args.book, "look positions up in it")
    kind = book_kind(book)
    found = lookup(store, book, args.moves, min_games=args.min_games)
    if args.json:
        print(json.dumps({**kind.document(found, brief=True), "engine": _engine_document(book)}, indent=2))
        return 0
    moves = " ".join(found.position.vertex(p) for _, p in found.position.moves) or "(empty board)"
    side = "Black" if found.position.to_move == 1 else "White"
    print(f"book {book.name!r}, after {moves}: {side} to play")
    print(f"  engine: {engine_line(book)}")
    for line in kind.describe_lookup(found):
        print(line)
    return 0


def _engine_document(book) -> dict:
    """The book's engine record (issue 32): its search, every option, and its knowledge digest."""
    from obook.search.provenance import engine_differences

    return {"search": book.search, "knowledge": book.knowledge, "seed_salt": book.seed_salt, "opponents": book.opponents,
            "reply_temperature": book.reply_temperature,
            "differences_from_this_obook": engine_differences(book.search, book.knowledge)}


def cmd_verify(args) -> int:
    from obook.book.kinds import book_kind

    store = _store(args)
    book = _keyed_book(store, args.book, "repair it" if args.repair else "verify it")
    kind = book_kind(book)
    if args.retry_set_aside:
        from obook.book.library import retry_set_aside

        back = retry_set_aside(store, book)
        print(f"book {book.name!r}: {len(back)} set-aside {kind.unit}(s) put back to work"
              + (f" ({', '.join(map(str, back[:20]))}{', ...' if len(back) > 20 else ''})" if back else "")
              + (f"; run `obook build` or `obook grid run` for the book to take them up" if back else ""))
    result = kind.verify(store, book, repair=args.repair)
    print(result.headline(book.name))
    _print_set_aside(store, book)
    lines, sound = result.report(args.repair)
    for line in lines:
        print(line)
    return 0 if sound else 1


def _print_set_aside(store, book, file=None) -> int:
    """List the book's units set aside (they failed OBOOK_MAX_GAME_FAILURES times) with the last
    reason; returns how many there are."""
    from obook.book.kinds import book_kind
    from obook.store import jobs

    kind = book_kind(book)
    with store.read() as conn:
        units = jobs.set_aside(conn, kind.jobs, book.id, limit=20)
        total = kind.counts(conn, book).set_aside if units else 0
    if total:
        print(f"  {total} {kind.unit}(s) set aside, not worked on nor counted (they failed repeatedly):", file=file)
        for unit_id, failures, reason in units:
            print(f"  {kind.unit} {unit_id} set aside after {failures} failures: {reason}", file=file)
    return total


def cmd_books(args) -> int:
    from obook.book.keys import ENGINE_VERSION, engine_line
    from obook.book.kinds import book_kind
    from obook.store.books import list_books
    from obook.store.games import game_counts

    store = _store(args)
    with store.read() as conn:
        books = list_books(conn)
        counts = game_counts(conn)
    if not books:
        print(f"no books in {store.name}")
    for b in books:
        c = counts.get(b.id, {})
        other = (f"; engine version {b.engine_version}, not this obook's {ENGINE_VERSION}: its keys cannot be used"
                 if b.engine_version != ENGINE_VERSION else "")
        print(f"{b.name}: {book_kind(b).listing(store, b, c)}{other}")
        print(f"  {engine_line(b)}")
    return 0


def cmd_db(args) -> int:
    from obook.store.db import open_store
    from obook.store.migrate import head_revision, upgrade

    if args.action in ("roles", "grant"):
        return _db_roles(args)
    store = open_store(args.db, check=False)
    if args.action == "upgrade":
        before = store.revision()
        upgrade(store.url)
        print(f"{store.name}: schema {before or 'empty'} -> {store.revision()}")
    else:
        current = store.revision()
        print(f"{store.name}: schema {current or 'empty'} (this obook needs {head_revision()})")
    return 0


def _db_roles(args) -> int:
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import DBAPIError

    from obook.config import settings
    from obook.store.roles import RoleNames, ensure_roles, grant
    from obook.store.urls import describe_url, normalise_url

    url = normalise_url(args.db or settings().database_url)
    names = RoleNames(args.roles)
    try:
        if args.action == "grant":
            if args.database:
                raise ObookError("--database is for `obook db roles`; `grant` works on the database --db names")
            lines = grant(url, names)
        else:
            s = settings()
            passwords = {"migrator": s.migrator_password, "service": s.service_password,
                         "worker": s.worker_password, "backup": s.backup_password}
            lines = ensure_roles(url, args.database or make_url(url).database, names, passwords)
    except DBAPIError as exc:  # refused (not a superuser, not the owner) or out of reach
        raise ObookError(f"`obook db {args.action}` on {describe_url(url)}: {str(exc.orig).strip()}") from None
    for line in lines:
        print(line)
    return 0
