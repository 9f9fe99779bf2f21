"""Books in a store: open the store (creating the schema of a new embedded database), create or
reopen a book with checked settings, look a position up. (Verifying a book: ``obook.book.verification``.)

The settings' checks are shared but for the options one kind of book has and the other refuses:
those are the kind's (``BookKind.check_search``, ``BookKind.options``); which opponents a reach book
models is ``obook.book.expansion.opponent_configs``'s rule, which the checks call."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError

from obook.book.expansion import opponent_configs, opponent_specs
from obook.book.keys import ENGINE_VERSION, require_engine, require_keys
from obook.book.kinds import book_kind
from obook.book.lookup import replay_moves
from obook.book.minimax import REPLY_TEMPERATURE
from obook.book.rules import NEW_BOOK_ALGORITHM, self_play_rule
from obook.config import settings
from obook.errors import ObookError
from obook.go.vertex import split_moves
from obook.search.config import SearchConfig
from obook.search.provenance import engine_differences, knowledge_digest
from obook.store import jobs
from obook.store.books import BookInfo, BookNotFound, create_book, find_book, get_book, set_book_engine
from obook.store.db import Store, StoreError, open_store
from obook.store.migrate import upgrade
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
    algorithm: str = NEW_BOOK_ALGORITHM
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
    reply_temperature: float | None = None  # reach: the opponent model's temperature (None: REPLY_TEMPERATURE)

    def validated(self) -> "BookSettings":
        if not 5 <= self.size <= 19:
            raise ObookError(f"board size {self.size}: a book needs 5 to 19")
        kind = book_kind(self.algorithm)  # an unknown algorithm: an error naming the choices
        rule = self_play_rule(self.algorithm)
        default = rule.threshold if rule is not None else None  # None: the book has no threshold
        if default is None:
            if self.threshold:
                raise ObookError(f"threshold {self.threshold}: the {self.algorithm} book has no threshold")
            threshold = 0.0
        else:
            threshold = default if self.threshold is None else self.threshold
        if not 0 <= threshold < 1:
            raise ObookError(f"threshold {threshold}: must be in [0, 1)")
        if self.depth < 0:
            raise ObookError(f"book depth {self.depth}: must be at least 1, or 0 for no cap")
        if self.seconds_per_move < 0:
            raise ObookError("seconds per move must not be negative")
        if not 0 <= self.widening < 1:
            raise ObookError(f"widening {self.widening}: must be in [0, 1)")
        config = SearchConfig.from_spec(self.search or None)
        spec = config.to_full_spec()
        kind.check_search(config)
        if self.expansion not in (None, "cost", "reach"):
            raise ObookError(f"expansion {self.expansion!r}: choose reach or cost")
        own = kind.options(self)
        if self.play_playouts < 0:
            raise ObookError(f"play playouts {self.play_playouts}: must be positive, or 0 for S / 100")
        if not 0 <= self.seed_salt < 2**63:
            raise ObookError(f"seed salt {self.seed_salt}: must be in [0, 2^63)")
        opponents = ";".join(opponent_specs(self.opponents))
        if opponents and own["expansion"] != "reach":
            raise ObookError("--opponents is an option of a minimax book grown by reach")
        reach = kind.has_play_budget and own["expansion"] == "reach"
        if self.reply_temperature is not None and not reach:
            raise ObookError("--reply-temperature is an option of a minimax book grown by reach")
        temperature = self.reply_temperature if self.reply_temperature is not None else (
            REPLY_TEMPERATURE if reach else 1.0)
        if not 0.05 <= temperature <= 10:
            raise ObookError(f"reply temperature {temperature:g}: must be in [0.05, 10] (1: the play policy's "
                             "shares as they are; below 1 the opponent's likeliest replies count for more)")
        settled = BookSettings(self.size, self.komi, self.algorithm, threshold, spec, self.seconds_per_move,
                               own["depth"], self.superko, self.widening, own["expansion"], self.play_playouts,
                               self.seed_salt, opponents, temperature)
        if opponents:
            opponent_configs(settled)  # each member over the book's search: an error names the one refused
        return settled


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
                                     reply_temperature=s.reply_temperature,
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
                "opponents": book.opponents, "reply_temperature": book.reply_temperature}
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
    kind = book_kind(book)
    with store.read() as conn:
        return kind.lookup(book, position, kind.reader(conn, book.id), min_games)


def retry_set_aside(store: Store, book: BookInfo, unit_ids: list[int] | None = None) -> list[int]:
    """Put the book's set-aside units (games or expansions; or those of ``unit_ids``) back to work
    (``obook verify --retry-set-aside``): open again, their failures forgotten, for the embedded
    build or the grid's driver to take up. Their ids."""
    with store.write() as conn:
        return jobs.retry_set_aside(conn, book_kind(book).jobs, book.id, unit_ids)
