"""Books in a store: open the store (creating the schema of a new embedded database), create or
reopen a book with checked settings, look a position up, recompute and verify the statistics."""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy.exc import IntegrityError

from obook.book.backup import computed_figures, load_nodes, write_back_up
from obook.book.keys import (ENGINE_VERSION, BookGameError, Scores, Stats, game_outcome, opening_record, require_engine,
                             require_keys)
from obook.book.kinds import book_kind, is_search_valued
from obook.book.lookup import book_lookup, minimax_lookup, replay_moves
from obook.book.rules import ALGORITHMS, MVBM, THRESHOLDS, has_threshold
from obook.config import settings
from obook.errors import ObookError
from obook.go.vertex import split_moves
from obook.search.config import SearchConfig
from obook.search.provenance import engine_differences, knowledge_digest
from obook.store import jobs
from obook.store.books import BookInfo, BookNotFound, create_book, find_book, get_book, lock_book, set_book_engine
from obook.store.db import Store, StoreError, open_store
from obook.store.faults import kill_point
from obook.store.games import finished_games
from obook.store.migrate import upgrade
from obook.store.minimax import count_done, done_counter, node_reader, set_done_counter, stored_figures
from obook.store.stats import all_scores, all_stats, replace_stats, rows_reader
from obook.store.urls import missing_sqlite_file


def open_book_store(url: str | None = None, create: bool = False) -> Store:
    """The store at ``url``; a database with no tables at all gets the schema when ``create``
    (the embedded default just works), one at another schema revision is refused. Without ``create``
    a SQLite file that does not exist is an error, not a new empty file."""
    if not create:
        missing = missing_sqlite_file(url or settings().database_url)
        if missing is not None:
            raise StoreError(f"no book database at {missing}: the file does not exist")
    store = open_store(url, check=False)
    if create and store.revision() is None:
        if store.table_names() - {"alembic_version"}:
            raise StoreError(f"the database {store.name} holds tables that are not obook's: refusing to use it")

        upgrade(store.url)
    store.check_schema()
    return store


def open_keyed_book(store: Store, name: str, use: str) -> BookInfo:
    """The book ``name`` for a use that computes its position keys (a lookup, verify, seed, export,
    playing from it): ``EngineMismatch`` naming both versions when another engine version made it
    (``keys.require_keys``). Listing or reading its games does not need this."""
    with store.read() as conn:
        book = get_book(conn, name)
    require_keys(book, use)
    return book


@dataclass(frozen=True)
class BookSettings:
    size: int = 9
    komi: float = 7.5
    algorithm: str = MVBM  # the library's; a new book of `obook build`: budget.NEW_BOOK_ALGORITHM
    threshold: float | None = None  # default: the algorithm's (MBM 0.5, MVBM 0.1; BETA has none: 0)
    search: str = ""  # SearchConfig spec of the mutation player
    seconds_per_move: float = 1.0
    depth: int = 20  # 0: no cap (every move of every game counts, as in the seed)
    superko: bool = False
    widening: float = 0.0  # progressive widening exponent of the book rule (0: the seed's rule)
    expansion: str | None = None  # minimax: the next node to expand by "reach" in play (default) or KataGo's "cost"
    play_playouts: int = 0  # minimax: the play budget that models the opponent in "reach" (0: S / 100)
    seed_salt: int = 0  # minimax: mixed into every expansion's seed, so that two builds can differ
    opponents: str = ""  # reach: the opponent population, search specs separated by ";" ("": the play budget's)

    def validated(self) -> "BookSettings":
        if not 5 <= self.size <= 19:
            raise ObookError(f"board size {self.size}: a book needs 5 to 19")
        if self.algorithm not in ALGORITHMS:
            raise ObookError(f"algorithm {self.algorithm!r}: choose one of {', '.join(ALGORITHMS)}")
        if not has_threshold(self.algorithm):
            if self.threshold:
                raise ObookError(f"threshold {self.threshold}: the {self.algorithm} book has no threshold")
            threshold = 0.0
        else:
            threshold = THRESHOLDS[self.algorithm] if self.threshold is None else self.threshold
        if not 0 <= threshold < 1:
            raise ObookError(f"threshold {threshold}: must be in [0, 1)")
        if self.depth < 0:
            raise ObookError(f"book depth {self.depth}: must be at least 1, or 0 for no cap")
        if self.seconds_per_move < 0:
            raise ObookError("seconds per move must not be negative")
        if not 0 <= self.widening < 1:
            raise ObookError(f"widening {self.widening}: must be in [0, 1)")
        spec = SearchConfig.from_spec(self.search or None).to_full_spec()
        if is_search_valued(self.algorithm):
            config = SearchConfig.from_spec(self.search or None)
            if config.algorithm != "uct":
                raise ObookError(f"search algorithm={config.algorithm}: a minimax book's searches are uct")
        if self.expansion not in (None, "cost", "reach"):
            raise ObookError(f"expansion {self.expansion!r}: choose reach or cost")
        if not is_search_valued(self.algorithm) and (self.expansion is not None or self.play_playouts):
            raise ObookError("--expansion and --play-playouts are options of a minimax book")
        expansion = (self.expansion or "reach") if is_search_valued(self.algorithm) else "cost"  # "cost": unused
        if self.play_playouts < 0:
            raise ObookError(f"play playouts {self.play_playouts}: must be positive, or 0 for S / 100")
        if self.seed_salt and not is_search_valued(self.algorithm):
            raise ObookError("--seed-salt is an option of a minimax book (self-play games draw their seeds at random)")
        if not 0 <= self.seed_salt < 2**63:
            raise ObookError(f"seed salt {self.seed_salt}: must be in [0, 2^63)")
        opponents = ";".join(spec.strip() for spec in self.opponents.split(";") if spec.strip())
        if opponents and expansion != "reach":
            raise ObookError("--opponents is an option of a minimax book grown by reach")
        for member in opponents.split(";") if opponents else []:
            try:
                SearchConfig.from_spec(spec or None).replace(**SearchConfig.parse_spec(member))
            except ObookError as exc:
                raise ObookError(f"opponent {member!r}: {exc}") from None
        depth = 0 if is_search_valued(self.algorithm) else self.depth  # a minimax book has no depth cap
        return BookSettings(self.size, self.komi, self.algorithm, threshold, spec, self.seconds_per_move, depth,
                            self.superko, self.widening, expansion, self.play_playouts, self.seed_salt, opponents)


def ensure_book(store: Store, name: str, wanted: BookSettings | None, explicit: set[str] = frozenset(),
                allow_engine_change: bool = False) -> BookInfo:
    """The book ``name``, created with ``wanted`` when it does not exist. When it does, a setting the
    caller gave explicitly (``explicit``) must agree with the book's: a book's games are only
    comparable under one set of rules and one mutation player. And a build (``wanted`` given) does
    not continue a book whose recorded engine differs from this obook's (``require_engine``), unless
    ``allow_engine_change``: then the book's record becomes this engine's, and says so."""
    if not name or len(name) > 100 or any(c.isspace() for c in name):
        raise ObookError(f"book name {name!r}: use 1 to 100 characters without spaces")
    try:
        with store.write() as conn:
            book = find_book(conn, name)
            if book is None:
                if wanted is None:
                    raise BookNotFound(f"no book named {name!r}")
                if any(c in "/\\?#%" or not c.isprintable() for c in name):  # books made before stay usable
                    raise ObookError(f"book name {name!r}: a new book's name has none of / \\ ? # % or control "
                                     "characters (it is a path segment of the service's URLs)")
                s = wanted.validated()
                return create_book(conn, name=name, size=s.size, komi=s.komi,
                                     rules="chinese-superko" if s.superko else "chinese", algorithm=s.algorithm,
                                     threshold=s.threshold, search=s.search, seconds_per_move=s.seconds_per_move,
                                     depth=s.depth, widening=s.widening, expansion=s.expansion,
                                     play_playouts=s.play_playouts, seed_salt=s.seed_salt, opponents=s.opponents,
                                     engine_version=ENGINE_VERSION,
                                     knowledge=knowledge_digest())
    except IntegrityError:  # another builder created it a moment ago: use theirs
        with store.read() as conn:
            book = get_book(conn, name)
    if wanted is not None:
        s = wanted.validated()
        have = {"size": book.size, "komi": book.komi, "algorithm": book.algorithm, "threshold": book.threshold,
                "search": book.search, "depth": book.depth, "superko": book.superko, "widening": book.widening,
                "expansion": book.expansion, "play_playouts": book.play_playouts, "seed_salt": book.seed_salt,
                "opponents": book.opponents}
        for key in sorted(explicit & have.keys()):
            mine, theirs = getattr(s, key), have[key]
            if key == "search":  # the same search, however written
                mine, theirs = SearchConfig.from_spec(mine or None), SearchConfig.from_spec(theirs or None)
            if mine != theirs:
                raise ObookError(f"book {name!r} exists with {key}={have[key]!r}, not {getattr(s, key)!r}: "
                                 "use another book name or leave the option out")
        if allow_engine_change and engine_differences(book.search, book.knowledge):
            book = adopt_engine(store, book)
        require_engine(book, "continue it")
    return book


def adopt_engine(store: Store, book: BookInfo) -> BookInfo:
    """Record this obook's engine as the book's (``--allow-engine-change``): its search with every
    option as this obook reads it, and this obook's knowledge. What was built before stays as it
    was; the record names the engine of what comes next."""
    spec = SearchConfig.from_spec(book.search or None).to_full_spec()
    with store.write() as conn:
        set_book_engine(conn, book.id, spec, knowledge_digest())
        return get_book(conn, book.name)


def lookup(store: Store, book: BookInfo, moves: str | list[str], min_games: int = 1):
    """The book's answer after ``moves`` (``obook lookup``): a ``BookLookup``, or for a minimax book
    a ``MinimaxLookup``, about a ``ReplayedPosition`` (the service's compiled replay)."""
    position = replay_moves(book.size, book.superko, split_moves(moves) if isinstance(moves, str) else list(moves))
    with store.read() as conn:
        if is_search_valued(book):
            return minimax_lookup(book, position, node_reader(conn, book.id))
        return book_lookup(book, position, rows_reader(conn, book.id), min_games)


# ---- verify ----------------------------------------------------------------------------------------


@dataclass
class Verification:
    games: int
    rows: int
    missing: list[tuple[int, int, tuple[int, int, int]]]  # in the recomputation, not (or not equal) in the store
    extra: list[tuple[int, int, tuple[int, int, int]]]  # in the store only
    bad_games: list[tuple[int, str]]
    # (key, move, recomputed, stored) (scored games, score sum) that differ
    scores: list[tuple[int, int, tuple[int, float], tuple[int, float]]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.missing or self.extra or self.bad_games or self.scores)


@dataclass
class Recount:
    stats: Stats
    games: int  # finished games counted
    bad: list[tuple[int, str]]  # finished games that do not replay: (id, why)
    seen: set[int]  # ids of every finished game read (counted or bad)
    scores: Scores = field(default_factory=dict)


def recount(conn, book: BookInfo, skip: set[int] = frozenset()) -> Recount:
    """The statistics as a pure function of the finished games the caller's transaction sees
    (leaving out the ids in ``skip``)."""
    result = Recount({}, 0, [], set())
    for game_id, moves, winner, result_text, score in finished_games(conn, book.id):
        if game_id in skip:
            continue
        result.seen.add(game_id)
        try:
            contribution, scores = opening_record(book.size, book.komi, book.superko, moves.split(),
                                                  game_outcome(winner, result_text), score, book.depth)
        except BookGameError as exc:
            result.bad.append((game_id, str(exc)))
            continue
        result.games += 1
        add_to(result.stats, contribution)
        add_to(result.scores, scores)
    return result


def add_to(totals: dict, more: dict) -> None:
    """Add ``more``'s tuples to ``totals``'s, element by element (statistics or scores)."""
    for k, figures in more.items():
        old = totals.get(k)
        totals[k] = figures if old is None else tuple(a + b for a, b in zip(old, figures))


def recompute_stats(store: Store, book: BookInfo) -> tuple[Stats, int, list[tuple[int, str]]]:
    """(statistics, games counted, bad games) recomputed from one snapshot of the finished games."""
    with store.snapshot() as conn:
        result = recount(conn, book)
    return result.stats, result.games, result.bad


def verify(store: Store, book: BookInfo, repair: bool = False) -> Verification:
    """Compare the stored statistics with the recount of the finished games, both read from one
    snapshot, so that games finishing meanwhile (a live build) make no false difference. The
    repair replaces them under the book's exclusive lock (finishes wait for it, ``add_stats``),
    after counting the games that finished since the snapshot: every finish is counted once,
    in the replacement or after it."""
    with store.snapshot() as conn:
        counted = recount(conn, book)
        stored = all_stats(conn, book.id)
        stored_scores = all_scores(conn, book.id)
    expected = counted.stats
    missing = [(k, m, v) for (k, m), v in expected.items() if stored.get((k, m)) != v]
    extra = [(k, m, v) for (k, m), v in stored.items() if (k, m) not in expected]
    none = (0, 0.0)
    scores = [(k, m, counted.scores.get((k, m), none), stored_scores.get((k, m), none))
              for k, m in sorted(set(counted.scores) | set(stored_scores))
              if counted.scores.get((k, m), none) != stored_scores.get((k, m), none)]
    if repair and (missing or extra or scores):
        with store.write() as conn:
            lock_book(conn, book.id)
            late = recount(conn, book, skip=counted.seen)
            replacement, replacement_scores = dict(expected), dict(counted.scores)
            add_to(replacement, late.stats)
            add_to(replacement_scores, late.scores)
            kill_point("repair")
            replace_stats(conn, book.id, replacement, replacement_scores)
    return Verification(counted.games, len(stored), missing, extra, counted.bad, scores)


# ---- verify a minimax book ------------------------------------------------------------------------------


@dataclass
class MinimaxVerification:
    nodes: int
    edges: int
    differences: list[tuple[int, object, object]]  # (key, recomputed figures, stored figures)
    dangling: list[tuple[int, int, int]]  # edges to a node that is not stored: (parent key, move, child key)
    repaired: bool = False
    done_counted: int = 0  # expansions done, counted
    done_counter: int = 0  # the book's count of them (``books.expansions_done``)

    @property
    def clean(self) -> bool:
        return not (self.differences or self.dangling) and self.done_counted == self.done_counter


def verify_minimax(store: Store, book: BookInfo, repair: bool = False) -> MinimaxVerification:
    """Recompute every node's backed-up figures from the stored searches and edges (one snapshot:
    the book's lock, so no expansion commits meanwhile) and compare with the stored ones, and the
    book's count of expansions done with the done ones; with ``repair`` write the recomputed ones
    in the same transaction."""
    with store.write() as conn:
        lock_book(conn, book.id)
        nodes = load_nodes(conn, book.id)
        figures = computed_figures(nodes)
        stored = stored_figures(conn, book.id)
        differences = [(k, f, stored.get(k)) for k, f in figures.items() if stored.get(k) != f]
        dangling = [(k, m, c) for k, n in nodes.items() for m, (c, _) in n.edges.items() if c not in nodes]
        counted, counter = count_done(conn, book.id), done_counter(conn, book.id)
        if repair and differences:
            write_back_up(conn, book.id)
        if repair and counted != counter:
            set_done_counter(conn, book.id, counted)
    return MinimaxVerification(len(nodes), sum(len(n.edges) for n in nodes.values()), differences, dangling,
                               repair and (bool(differences) or counted != counter), counted, counter)


def retry_set_aside(store: Store, book: BookInfo, unit_ids: list[int] | None = None) -> list[int]:
    """Put the book's set-aside units (games or expansions; or those of ``unit_ids``) back to work
    (``obook verify --retry-set-aside``): open again, their failures forgotten, for the embedded
    build or the grid's driver to take up. Their ids."""
    with store.write() as conn:
        return jobs.retry_set_aside(conn, book_kind(book).jobs, book.id, unit_ids)
