"""The kinds of book, as strategies behind one interface: what a book's algorithm changes, and the one
place that tests the algorithm's name.

A *statistical* book (MBM, MVBM, Beta: the seeds' coevolution) grows by self-play games and answers
from the statistics of its finished games; a *search-valued* book (minimax) grows by expansions
and answers from values backed up over its DAG of searched positions. Everything else is shared:
both kinds' units of work are leased through one protocol (``obook.store.jobs``, ``Lease``), run by
one worker loop (``obook.book.build.run_worker``), one grid task and one driver. Those, the
settings' checks, the CLI, the service, the SGF export and ``BookPlayer`` ask the book's
``BookKind`` for what differs, and none of them tests the algorithm's name or the kind
(``tests/test_architecture.py`` checks the first):

- its options: ``check_search`` (the searches its builds accept) and ``options`` (which of the
  minimax options it takes, their defaults, its depth cap), hooks of ``BookSettings.validated``;
- ``lease_type``: how a unit is held (its ``jobs``: where its units live); ``unit``: what one is
  called ("game", "expansion");
- ``worker``: a worker of one owner over one book: ``claim`` a unit (``Held``), ``advance`` it
  (True: it is done), ``release`` it, and its ``lease``;
- ``top_up``: create up to ``count`` units while the book is short of ``target`` (games, or the
  next expansions to schedule);
- ``counts``, ``progress``: the book's units by state, and what the service's progress page shows
  of its build;
- ``reader``, ``read_position`` (and its async twin), ``export_reader``: what a position's record is
  (statistics rows, a node) and how a transaction, the service's readers or a walk over the whole
  book read it; ``lookup``: the book's answer from those records; ``document``, ``answer_document``,
  ``describe_lookup``: that answer as ``obook lookup --json``, the service and ``obook lookup`` show it;
- ``book_result``, ``gives_priors``: how ``BookPlayer`` plays from it (``gives_priors``: its answers
  are values a search can start from, the player's soft mode);
- ``rule``, ``listing``, ``build_summary``: how ``obook books`` and ``obook build`` describe it;
- ``verify``, ``export``: the kind's own checks and SGF; ``browser_view``: which figures of its
  lookup documents the offline book browser shows (``export_html``, the same walk for every kind).

The implementations stay in their modules (``selfplay``, ``expansion``, ``lookup``, ``sgfio``,
``verification``): this module only picks. So it imports them and none of them imports it: the
modules that dispatch on the kind (``library``, ``player``, the CLI, the service) sit above it.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import NamedTuple, Protocol

from sqlalchemy import Connection

from obook.book import htmlexport, sgfio
from obook.book.expansion import Expander, schedule
from obook.book.lookup import (book_lookup, describe_lookup, describe_minimax_lookup, lookup_document,
                               minimax_answer_document, minimax_document, minimax_lookup, minimax_move_infos,
                               statistics_move_infos)
from obook.book.minimax import DEFAULT_PLAY_CHOICE
from obook.book.rules import ALGORITHMS, BETA, MBM, MINIMAX, MVBM, self_play_rule
from obook.book.selfplay import SelfPlayer, games_at_move_cap, max_moves, start_games
from obook.book.verification import verify, verify_minimax
from obook.errors import ObookError
from obook.search.config import SearchConfig
from obook.store import jobs
from obook.store import reporting
from obook.store.books import BookInfo
from obook.store.db import Store
from obook.store.jobs import UnitCounts
from obook.store.leases import ExpansionLease, GameLease
from obook.store.minimax import get_expansion, node_count, node_reader, whole_book_node_reader
from obook.store.stats import rows_reader


class Held(Protocol):
    """A unit a worker holds the lease of."""

    @property
    def id(self) -> int: ...


class UnitWorker(Protocol):
    """What the worker loop, a grid slice and the tests ask of a worker, whatever the kind."""

    lease: object  # obook.store.leases.Lease

    def claim(self, unit_id: int | None = None, handoff: str | None = None) -> Held | None: ...

    def advance(self, held: Held, more: bool = False) -> bool: ...

    def release(self, held: Held) -> None: ...


class UnitInFlight(NamedTuple):
    """A unit someone works on now, as the progress page shows it: the position it is at."""

    id: int
    moves: list[str]
    n_moves: int
    owner: str | None
    updated_at: dt.datetime | None


@dataclass
class BuildProgress:
    """What the service's progress page shows of one book's build (``BookKind.progress``)."""

    rate: list  # obook.store.reporting's rate points: units done in slices of the last hour
    growth: list  # its growth points: units done over the book's life
    in_flight: list[UnitInFlight]
    in_flight_total: int
    set_aside: list[tuple[int, int, str]]  # (unit, failures, last reason), at most 20
    units: UnitCounts  # the book's units by state
    at_move_cap: int = 0  # finished self-play games the move cap ended
    games_series: bool = False  # the series are games: the progress page's older game fields show them too


def describe_depth(depth: int) -> str:
    return str(depth) if depth > 0 else "unlimited"


class BookKind:
    name: str  # what the CLI and the documents call the algorithm's family
    unit: str
    lease_type: type  # GameLease, ExpansionLease: the lease a worker or a grid token holds a unit by
    gives_priors: bool  # its answers are values a search can take as its root's priors (BookPlayer's soft mode)
    has_play_budget: bool  # it is built for play at a budget (``--for``: P playouts a move, S a node; obook.book.budget)

    @property
    def jobs(self) -> jobs.JobTable:
        return self.lease_type.jobs

    # ---- settings -------------------------------------------------------------------------------------

    def check_search(self, config: SearchConfig) -> None:
        """Refuse a search the kind's builds cannot use (``BookSettings.validated``)."""

    def options(self, settings) -> dict:
        """The kind's own settings of a new book (``BookSettings.validated``, after the shared checks of
        the search and the expansion rule's name): ``expansion`` (the minimax options' defaults, or
        their refusal) and ``depth``."""
        raise NotImplementedError

    # ---- building ---------------------------------------------------------------------------------------

    def worker(self, store: Store, book: BookInfo, owner: str | None = None, kind: str = "local",
               lease_seconds: float | None = None, seconds: float | None = None,
               heartbeat_seconds: float = 0.0) -> UnitWorker:
        raise NotImplementedError

    def top_up(self, store: Store, book: BookInfo, target: int, count: int = 1) -> list[int]:
        raise NotImplementedError

    def counts(self, conn: Connection, book: BookInfo) -> UnitCounts:
        return jobs.counts(conn, self.jobs, book.id)

    def token_lease(self, store: Store, token: str, seconds: float):
        """A grid token's lease on this kind's units (no heartbeat: a token is no worker)."""
        return self.lease_type(store, token, seconds, kind=None)

    def progress(self, conn: Connection, counts: reporting.BookCounts, now: dt.datetime,
                 limit: int) -> BuildProgress:
        """The build of ``counts.book`` as the progress page shows it, read in ``conn``; at most
        ``limit`` units in flight."""
        raise NotImplementedError

    def nodes(self, conn: Connection, book: BookInfo) -> int | None:
        """The book's positions, where it counts them (None: a statistical book's are its games')."""
        raise NotImplementedError

    def unit_counts(self, conn: Connection, counts: reporting.BookCounts) -> UnitCounts:
        """The book's units by state (``counts``: the book's games, counted already)."""
        raise NotImplementedError

    # ---- answers ----------------------------------------------------------------------------------------

    def reader(self, conn: Connection, book_id: int):
        """key -> the position's record in the caller's transaction (what ``lookup`` reads)."""
        raise NotImplementedError

    def export_reader(self, conn: Connection, book_id: int):
        """``reader`` for a walk over every position (``export_html``): the same records, read as the
        kind reads a whole book best."""
        return self.reader(conn, book_id)

    def read_position(self, reader, book_id: int, key: int):
        """A position's record from the service's pool of readers (``obook.store.readers.StatsReader``)."""
        raise NotImplementedError

    async def read_position_async(self, reader, book_id: int, key: int):
        """The same from the event loop's reader (``obook.store.readers.AsyncStatsReader``)."""
        raise NotImplementedError

    def lookup(self, book: BookInfo, position, read, min_games: int = 1, choice: str = DEFAULT_PLAY_CHOICE):
        """The book's answer in ``position``, its records from ``read`` (key -> record); ``choice``:
        how a search-valued book picks its move (``minimax.PLAY_CHOICES``; the others have one rule)."""
        raise NotImplementedError

    def document(self, found, brief: bool = False) -> dict:
        """The answer as data (``obook lookup --json``; ``brief``: its smaller form, where there is one)."""
        raise NotImplementedError

    def answer_document(self, found) -> dict:
        """The answer in the common form of every kind's (the service's ``LookupOut`` fields)."""
        raise NotImplementedError

    def describe_lookup(self, found) -> list[str]:
        """The answer as ``obook lookup`` prints it under the position's lines."""
        raise NotImplementedError

    def move_infos(self, found, size: int) -> tuple[list[dict], dict]:
        """The answer as KataGo's move infos and root info (``obook analysis``), marked ``book``."""
        raise NotImplementedError

    def book_result(self, player, found, started: float):
        """The move ``BookPlayer`` plays from the answer ``found``, with the book's figures (None:
        out of book): the player's reading for this kind (``started``: when the player began, for the
        result's time)."""
        raise NotImplementedError

    # ---- description, checks, export ---------------------------------------------------------------------

    def rule(self, book: BookInfo) -> str:
        """The book's rule in a few words (``obook books``, the SGF header)."""
        raise NotImplementedError

    def listing(self, store: Store, book: BookInfo, counts: dict) -> str:
        """The book's line of ``obook books`` after its name (``counts``: its games by status)."""
        raise NotImplementedError

    def build_summary(self, store: Store, book: BookInfo) -> list[str]:
        """Lines ``obook build`` adds to its result."""
        return []

    def verify(self, store: Store, book: BookInfo, repair: bool = False):
        """The kind's check of the book (a ``Verification``, ``MinimaxVerification``)."""
        raise NotImplementedError

    def export(self, store: Store, book: BookInfo, min_games: int = 1, depth: int | None = None,
               max_nodes: int = 100_000) -> tuple[bytes, int]:
        """The book as one SGF game tree, and its number of move nodes."""
        raise NotImplementedError

    def export_parameters(self, book: BookInfo, min_games: int, depth: int | None) -> tuple[int, int | None]:
        """(min_games, depth) as ``export`` reads them: two requests that differ only where the export
        does not are one export (the service's cache key)."""
        raise NotImplementedError

    def browser_view(self) -> dict:
        """Which fields of ``document`` the offline browser shows, how, and which figure ``--min-games``
        applies to (``obook.book.htmlexport``)."""
        raise NotImplementedError

    def export_html(self, store: Store, book: BookInfo, directory, min_games: int = 1, depth: int | None = None,
                    max_positions: int = 100_000, force: bool = False) -> htmlexport.HtmlExport:
        """The book as static pages one browses offline: each position once, with its ``document``."""
        return htmlexport.export_html(store, book, self, directory, min_games=min_games, depth=depth,
                                      max_positions=max_positions, force=force)


@dataclass(frozen=True)
class SelfPlayKind(BookKind):
    """MBM, MVBM, Beta: the population of self-play games is the book."""

    name: str = "self-play"
    unit: str = "game"
    lease_type: type = GameLease
    gives_priors: bool = False
    has_play_budget: bool = False

    def nodes(self, conn, book):
        return None

    def options(self, settings) -> dict:
        if settings.expansion is not None or settings.play_playouts:
            raise ObookError("--expansion and --play-playouts are options of a minimax book")
        if settings.seed_salt:
            raise ObookError("--seed-salt is an option of a minimax book (self-play games draw their seeds at random)")
        return {"expansion": "cost", "depth": settings.depth}  # "cost": unused

    def worker(self, store, book, owner=None, kind="local", lease_seconds=None, seconds=None, heartbeat_seconds=0.0):
        return SelfPlayer(store, book, owner=owner, lease_seconds=lease_seconds, seconds=seconds, kind=kind,
                          heartbeat_seconds=heartbeat_seconds)

    def top_up(self, store, book, target, count=1):
        return start_games(store, book, target, count)

    def progress(self, conn, counts, now, limit):
        book = counts.book
        playing = reporting.in_flight_games(conn, book.id, limit)
        return BuildProgress(
            reporting.rate_series(conn, book.id, now=now), reporting.growth_series(conn, book, now=now),
            [UnitInFlight(g.id, list(g.moves), g.n_moves, g.lease_owner, g.updated_at) for g in playing],
            reporting.count_in_flight(conn, book.id) if len(playing) >= limit else len(playing),
            jobs.set_aside(conn, self.jobs, book.id, limit=20) if counts.set_aside else [],
            self.unit_counts(conn, counts), reporting.count_at_move_cap(conn, book.id, max_moves(book.size)),
            games_series=True)

    def unit_counts(self, conn, counts):
        return UnitCounts(counts.finished, counts.in_progress, counts.set_aside)  # seeds among the finished

    def reader(self, conn, book_id):
        return rows_reader(conn, book_id)

    def read_position(self, reader, book_id, key):
        return tuple(reader.position_stats(book_id, key))

    async def read_position_async(self, reader, book_id, key):
        return tuple(await reader.position_stats(book_id, key))

    def lookup(self, book, position, read, min_games=1, choice=DEFAULT_PLAY_CHOICE):
        return book_lookup(book, position, read, min_games)

    def document(self, found, brief=False):
        return lookup_document(found, brief=brief)

    def answer_document(self, found):
        return lookup_document(found)

    def describe_lookup(self, found):
        return describe_lookup(found)

    def move_infos(self, found, size):
        return statistics_move_infos(found, size)

    def book_result(self, player, found, started):
        return player.statistics_result(found, started)

    def rule(self, book):
        return self_play_rule(book).label(book)

    def listing(self, store, book, counts):
        return (f"{book.size}x{book.size} komi {book.komi:g} {book.algorithm.upper()} depth "
                f"{describe_depth(book.depth)}, {counts.get('finished', 0)} finished "
                f"({games_at_move_cap(store, book)} at the move cap), {counts.get('in_progress', 0)} in progress")

    def build_summary(self, store, book):
        return [f"  {games_at_move_cap(store, book)} of them ended at the move cap ({max_moves(book.size)} moves)"]

    def verify(self, store, book, repair=False):
        return verify(store, book, repair=repair)

    def export(self, store, book, min_games=1, depth=None, max_nodes=100_000):
        return sgfio.export_statistical_book(store, book, min_games, depth, max_nodes)

    def export_parameters(self, book, min_games, depth):
        return max(1, min_games), sgfio.statistical_export_depth(book, depth)

    def browser_view(self):
        return htmlexport.STATISTICAL_VIEW


@dataclass(frozen=True)
class MinimaxKind(BookKind):
    """The search-valued book: expansions of searched positions, values backed up by minimax."""

    name: str = "search-valued"
    unit: str = "expansion"
    lease_type: type = ExpansionLease
    gives_priors: bool = True
    has_play_budget: bool = True

    def nodes(self, conn, book):
        return node_count(conn, book.id)

    def check_search(self, config):
        if config.algorithm != "uct":
            raise ObookError(f"search algorithm={config.algorithm}: a minimax book's searches are uct")

    def options(self, settings):
        return {"expansion": settings.expansion or "reach", "depth": 0}  # a minimax book has no depth cap

    def worker(self, store, book, owner=None, kind="local", lease_seconds=None, seconds=None, heartbeat_seconds=0.0):
        return Expander(store, book, owner=owner, lease_seconds=lease_seconds, kind=kind,
                        heartbeat_seconds=heartbeat_seconds)

    def top_up(self, store, book, target, count=1):
        with store.write() as conn:
            return schedule(conn, book, count, target)

    def progress(self, conn, counts, now, limit):
        book = counts.book
        units = self.counts(conn, book)
        running = [get_expansion(conn, i) for i in jobs.running(conn, self.jobs, book.id, limit)]
        return BuildProgress(
            reporting.unit_rate_series(conn, self.jobs, book.id, now=now),
            reporting.unit_growth_series(conn, self.jobs, book, now=now),
            [UnitInFlight(j.id, list(j.moves), len(j.moves), j.lease_owner, j.lease_until) for j in running],
            units.leased, jobs.set_aside(conn, self.jobs, book.id, limit=20) if units.set_aside else [], units)

    def unit_counts(self, conn, counts):
        return self.counts(conn, counts.book)

    def reader(self, conn, book_id):
        return node_reader(conn, book_id)

    def export_reader(self, conn, book_id):
        return whole_book_node_reader(conn, book_id)  # a statistical book's rows may be millions: read by key

    def read_position(self, reader, book_id, key):
        return reader.minimax_node(book_id, key)

    async def read_position_async(self, reader, book_id, key):
        return await reader.minimax_node(book_id, key)

    def lookup(self, book, position, read, min_games=1, choice=DEFAULT_PLAY_CHOICE):
        return minimax_lookup(book, position, read, choice)

    def document(self, found, brief=False):
        return minimax_document(found)

    def answer_document(self, found):
        return {**minimax_answer_document(found), "kind": self.name}

    def describe_lookup(self, found):
        return describe_minimax_lookup(found)

    def move_infos(self, found, size):
        return minimax_move_infos(found, size)

    def book_result(self, player, found, started):
        return player.minimax_result(found, started)

    def rule(self, book):
        return "MINIMAX search values"

    def listing(self, store, book, counts):
        with store.read() as conn:
            units, nodes = self.counts(conn, book), node_count(conn, book.id)
        aside = f", {units.set_aside} set aside" if units.set_aside else ""
        return (f"{book.size}x{book.size} komi {book.komi:g} {self.rule(book)}, "
                f"{nodes} nodes, {units.done} expansions done, {units.open} pending{aside}")

    def verify(self, store, book, repair=False):
        return verify_minimax(store, book, repair=repair)

    def export(self, store, book, min_games=1, depth=None, max_nodes=100_000):
        return sgfio.export_minimax_book(store, book, depth, max_nodes)

    def export_parameters(self, book, min_games, depth):
        return 1, depth or None  # every move is written, whatever its games

    def browser_view(self):
        return htmlexport.MINIMAX_VIEW


SELF_PLAY = SelfPlayKind()
SEARCH_VALUED = MinimaxKind()
_KINDS = {MBM: SELF_PLAY, MVBM: SELF_PLAY, BETA: SELF_PLAY, MINIMAX: SEARCH_VALUED}
assert set(_KINDS) == set(ALGORITHMS)


def book_kind(book: BookInfo | str) -> BookKind:
    """The kind of ``book`` (or of an algorithm's name; an unknown name is an error naming the choices)."""
    algorithm = book if isinstance(book, str) else book.algorithm
    kind = _KINDS.get(algorithm)
    if kind is None:
        raise ObookError(f"algorithm {algorithm!r}: choose one of {', '.join(ALGORITHMS)}")
    return kind
