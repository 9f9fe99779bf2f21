"""The tables of the store. The population of games is the book; the statistics are a cache of it.

- ``books``: one opening book: the rules it is played under, the coevolution algorithm and its
  threshold, the mutation player's search settings, how deep statistics go, and the engine version
  (rules and Zobrist keys) its keys were made with.
- ``games``: the individuals. Moves so far as GTP vertices, status, result, where the game came
  from, the seed of its randomness, and the lease: who is playing it, until when. ``searches``
  counts the mutation searches started on it, so searches whose move was never stored (a worker
  killed while thinking) are measurable: searches - search moves stored - a search that resigned.
  ``failures`` counts the times its play failed with an error that is neither a lost lease nor the
  database's (an engine bug); at ``OBOOK_MAX_GAME_FAILURES`` it is ``set_aside`` with its reason
  (``failure``), no longer played nor replaced, and shown by ``obook verify`` and ``/v1/progress``.
- ``book_stats``: per (book, canonical position key, canonical move): games, wins and draws of the
  player who moved (a draw counts as half a win for both players; a row of 0 games is a move of an
  unscored seed), and how many of those games have a final score with the sum of the mover's scores. A pure function of the finished games (``obook verify`` recomputes it).
- ``minimax_nodes``, ``minimax_edges``, ``expansions``, ``expansion_results``: a search-valued
  (``minimax``) book's DAG, its units of work and the results staged to be applied to it; see
  ``obook.store.minimax``.
- ``workers``: heartbeats of whoever plays games (local processes or grid workers).
- ``worker_records``: one row per worker identity (``obook.store.workers.worker_identity``), kept
  after the worker stops: units it finished, its failures (in all, and in a row), and whether it
  quarantined itself (``OBOOK_QUARANTINE_FAILURES`` failures in a row) and why. A unit's
  ``failed_by`` lists the identities of the workers it failed on: on the grid it is set aside only
  after failing on ``OBOOK_SET_ASIDE_WORKERS`` different workers.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import (
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from obook.store.faults import clock_offset

IN_PROGRESS = "in_progress"
FINISHED = "finished"
ABANDONED = "abandoned"
SET_ASIDE = "set_aside"  # its play failed OBOOK_MAX_GAME_FAILURES times (games.failure says why)
GAME_STATUSES = (IN_PROGRESS, FINISHED, ABANDONED, SET_ASIDE)

SELFPLAY = "selfplay"
SEED = "seed"

def utcnow() -> dt.datetime:
    """This process's clock (shifted by the test hook ``OBOOK_TEST_CLOCK_OFFSET``). For display and
    records only: leases and heartbeats use the database's (``obook.store.db.db_time``)."""
    return dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=clock_offset())


class Base(DeclarativeBase):
    pass


class Book(Base):
    __tablename__ = "books"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(100), unique=True)
    size: Mapped[int] = mapped_column(SmallInteger)
    komi: Mapped[float] = mapped_column(Float)
    rules: Mapped[str] = mapped_column(String(40), default="chinese")  # area scoring; "chinese-superko" forbids superko
    algorithm: Mapped[str] = mapped_column(String(10))  # mbm, mvbm, beta or minimax
    threshold: Mapped[float] = mapped_column(Float)  # play the book move when its success rate exceeds this
    search: Mapped[str] = mapped_column(Text, default="")  # SearchConfig spec of the mutation player (every option since 0016)
    # the digest of the learned data its searches read (obook.search.provenance); None: made before 0016
    knowledge: Mapped[str | None] = mapped_column(String(80), nullable=True)
    seed_salt: Mapped[int] = mapped_column(BigInteger, default=0, server_default="0")  # minimax: mixed into every expansion's seed
    # reach books: the opponent population, search specs over the book's at the play budget, ";"-separated
    opponents: Mapped[str] = mapped_column(Text, default="", server_default="")
    # reach books: a reply's probability is its play-policy share ** (1 / this), normalised (1.0: before 0019)
    reply_temperature: Mapped[float] = mapped_column(Float, default=1.0, server_default="1.0")
    seconds_per_move: Mapped[float] = mapped_column(Float, default=1.0)
    depth: Mapped[int] = mapped_column(Integer, default=20)  # statistics are kept for the first `depth` moves (0: all)
    widening: Mapped[float] = mapped_column(Float, default=0.0)  # b: mutate while a position has < 1 + N^b moves (0: off)
    # minimax books: which node to expand next ("cost": KataGo's cost; "reach": the likeliest to be
    # reached in play) and the play budget whose policy models the opponent (playouts; 0: S / 100)
    expansion: Mapped[str] = mapped_column(String(10), default="reach")  # books made before it: "cost"
    play_playouts: Mapped[int] = mapped_column(Integer, default=0)
    # a minimax book's expansions done, kept by the apply that marks them done (under the book's
    # lock): counting them reads every one (38 ms at 10^5), and a driver counts at every step
    expansions_done: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    engine_version: Mapped[str] = mapped_column(String(100))
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Game(Base):
    __tablename__ = "games"
    __table_args__ = (
        Index("ix_games_book_status", "book_id", "status"),
        Index("ix_games_book_finished", "book_id", "finished_at"),
        Index("ix_games_book_updated", "book_id", "updated_at", "id"),  # the games list's order (list_games)
        # ix_games_book_record (book_id, status, the moves' first characters, id): games through a line
        # (obook.store.games.games_through); an expression index, made by migration 0011
        UniqueConstraint("book_id", "fingerprint", name="uq_games_book_fingerprint"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"))
    moves: Mapped[str] = mapped_column(Text, default="")  # "E5 G5 pass ..."
    n_moves: Mapped[int] = mapped_column(Integer, default=0)
    origins: Mapped[str] = mapped_column(Text, default="")  # per move: b book, m mutation (search), s seed
    status: Mapped[str] = mapped_column(String(12), default=IN_PROGRESS)
    result: Mapped[str | None] = mapped_column(String(20), nullable=True)  # "B+3.5", "W+R", "0" (draw), "?"
    # "B", "W" or None: a draw when the result is "0" (or a seed's "Draw"/"Jigo"), else unscored or unfinished
    winner: Mapped[str | None] = mapped_column(String(1), nullable=True)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)  # black's area score minus komi
    source: Mapped[str] = mapped_column(String(10), default=SELFPLAY)
    seed: Mapped[int] = mapped_column(BigInteger, default=0)
    fingerprint: Mapped[str | None] = mapped_column(String(64), nullable=True)  # seeds: the moves' digest
    searches: Mapped[int] = mapped_column(Integer, default=0)  # mutation searches started (kept or lost)
    failures: Mapped[int] = mapped_column(Integer, default=0)  # times its play failed (not a lost lease)
    failure: Mapped[str | None] = mapped_column(Text, nullable=True)  # the last failure's reason
    # the worker identities it failed on, one a line (at most a few: the set-aside rule needs two)
    failed_by: Mapped[str] = mapped_column(Text, default="", server_default="")
    finished_by: Mapped[str | None] = mapped_column(String(200), nullable=True)  # the worker identity that finished it
    lease_owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    lease_until: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class BookStat(Base):
    __tablename__ = "book_stats"

    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"), primary_key=True)
    position_key: Mapped[int] = mapped_column(BigInteger, primary_key=True)  # canonical Zobrist key, signed
    move: Mapped[int] = mapped_column(SmallInteger, primary_key=True)  # canonical point, -1 pass
    games: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)  # won by the player who made the move
    draws: Mapped[int] = mapped_column(Integer, default=0)  # drawn (jigo): half a win for each player
    # of these games, those whose final score is known (not resigned), and the sum of the mover's
    # final scores (area score less komi, from the mover's side): lookups show their mean
    scored: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    score_sum: Mapped[float] = mapped_column(Float, default=0.0, server_default="0")


class Worker(Base):
    __tablename__ = "workers"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)
    host: Mapped[str] = mapped_column(String(200), default="")
    pid: Mapped[int] = mapped_column(Integer, default=0)
    kind: Mapped[str] = mapped_column(String(20), default="local")  # local (obook build) or celery
    engine_version: Mapped[str] = mapped_column(String(100), default="")
    book_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    game_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    moves: Mapped[str] = mapped_column(Text, default="")  # the sequence it is thinking about now
    worker_id: Mapped[str | None] = mapped_column(String(200), nullable=True)  # its identity (worker_records)
    started_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class GameSlice(Base):
    """Who wrote a game's moves: one row each time a worker starts writing moves of a game (its
    first move of a slice), kept after the finish: moves ``first_move`` (1-based) onwards, until the
    next row's, are that worker's."""

    __tablename__ = "game_slices"
    __table_args__ = (Index("ix_game_slices_worker", "worker_id", "written_at"),)

    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), primary_key=True)
    first_move: Mapped[int] = mapped_column(Integer, primary_key=True)
    worker_id: Mapped[str] = mapped_column(String(200))
    written_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class WorkerRecord(Base):
    """A worker's identity and its record, kept after it stops (heartbeats are not): what it finished,
    what it failed, and whether it quarantined itself."""

    __tablename__ = "worker_records"

    id: Mapped[str] = mapped_column(String(200), primary_key=True)  # site:host:pid:started:engine version
    site: Mapped[str] = mapped_column(String(100), default="")
    host: Mapped[str] = mapped_column(String(200), default="")
    pid: Mapped[int] = mapped_column(Integer, default=0)
    kind: Mapped[str] = mapped_column(String(20), default="local")
    engine_version: Mapped[str] = mapped_column(String(100), default="")
    first_seen: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    units_done: Mapped[int] = mapped_column(Integer, default=0)  # games finished, expansions committed
    failures: Mapped[int] = mapped_column(Integer, default=0)  # units it failed, in all
    failures_in_row: Mapped[int] = mapped_column(Integer, default=0)  # since its last unit worked without error
    quarantined_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    quarantine_reason: Mapped[str | None] = mapped_column(Text, nullable=True)


PENDING = "pending"
DONE = "done"


class MinimaxNode(Base):
    """A position of a minimax book: its own search (book moves excluded) and its backed-up values.
    Every value is the win rate of the player to move in this position."""

    __tablename__ = "minimax_nodes"
    __table_args__ = (Index("ix_minimax_nodes_book_seq", "book_id", "seq"),)

    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"), primary_key=True)
    position_key: Mapped[int] = mapped_column(BigInteger, primary_key=True)  # canonical Zobrist key, signed
    moves: Mapped[str] = mapped_column(Text, default="")  # the path that first reached it ("E5 G5 ...")
    # the search of this position with the book's moves (its edges then) excluded
    own_value: Mapped[float] = mapped_column(Float)  # value of the best move not in the book
    own_error: Mapped[float] = mapped_column(Float)  # its standard error (with the floor of MinimaxConstants)
    own_visits: Mapped[int] = mapped_column(Integer)  # the visits behind own_value
    best_new: Mapped[int] = mapped_column(SmallInteger)  # canonical move of that value, -1 pass, -2 none
    # the search's root moves, its choice first: "move:visits:winrate ..." (canonical moves, symmetric
    # copies merged: visits summed, ranked by the most visited copy)
    policy: Mapped[str] = mapped_column(Text, default="")
    searched_edges: Mapped[int] = mapped_column(Integer, default=0)  # edges the search excluded
    # visit shares of searches at the book's play budget, nothing excluded: "move:share ..." (reach expansion)
    play_policy: Mapped[str] = mapped_column(Text, default="")
    # Black's mean area score less komi over playouts from the position (None: searched before 0010)
    score_mean: Mapped[float | None] = mapped_column(Float, nullable=True)
    excluded_prior: Mapped[float] = mapped_column(Float, default=0.0)  # their summed priors (edges.prior)
    playouts: Mapped[int] = mapped_column(Integer, default=0)  # of the search
    spec: Mapped[str] = mapped_column(Text, default="")  # SearchConfig spec of the search
    seed: Mapped[int] = mapped_column(BigInteger, default=0)
    engine_version: Mapped[str] = mapped_column(String(100), default="")
    searched_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    # the book's commit that last wrote this row (its search, edges or figures): a scheduler reads
    # what changed since the commit it saw last (obook.book.schedule), not the whole book
    seq: Mapped[int] = mapped_column(BigInteger, default=0)
    searched_by: Mapped[str | None] = mapped_column(String(200), nullable=True)  # the worker identity of its search
    # backed up by minimax over the DAG (obook.book.minimax.back_up), recomputed by obook verify
    value: Mapped[float] = mapped_column(Float)
    lcb: Mapped[float] = mapped_column(Float)
    ucb: Mapped[float] = mapped_column(Float)
    # Black's score on the line ``value`` comes from (obook.book.minimax.line_score; None: no score on
    # that line, or not backed up since 0018)
    backed_up_score: Mapped[float | None] = mapped_column(Float, nullable=True)


class MinimaxEdge(Base):
    """A move of the book: from a position (canonical key) by a canonical move to the position it
    leads to (canonical key)."""

    __tablename__ = "minimax_edges"
    __table_args__ = (Index("ix_minimax_edges_child", "book_id", "child_key"),)

    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"), primary_key=True)
    parent_key: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    move: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    child_key: Mapped[int] = mapped_column(BigInteger)
    prior: Mapped[float] = mapped_column(Float, default=0.0)  # the move's share of the parent's search visits
    added_by: Mapped[int | None] = mapped_column(Integer, nullable=True)  # the expansion that added it


class Expansion(Base):
    """One unit of work of a minimax book: expand the position ``position_key`` when it has
    ``generation`` edges. Unique per (book, position, generation), so scheduling it twice or a
    duplicate delivery does nothing; leased like a game (``obook.store.jobs``): ``pending``, then
    ``done`` or ``set_aside``."""

    __tablename__ = "expansions"
    __table_args__ = (
        UniqueConstraint("book_id", "position_key", "generation", name="uq_expansions_node_generation"),
        Index("ix_expansions_book_status", "book_id", "status"),
        Index("ix_expansions_book_id", "book_id", "id"),  # what a scheduler has not read yet
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"))
    position_key: Mapped[int] = mapped_column(BigInteger)
    generation: Mapped[int] = mapped_column(Integer)
    moves: Mapped[str] = mapped_column(Text, default="")  # a path from the empty board to the position
    cost: Mapped[float] = mapped_column(Float, default=0.0)  # its expansion cost when scheduled
    move: Mapped[int | None] = mapped_column(SmallInteger, nullable=True)  # the move to add (None: the best new one)
    status: Mapped[str] = mapped_column(String(12), default=PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)  # leases taken (more than 1: a worker died)
    # failed attempts (an error that is neither a lost lease nor the database's); at
    # OBOOK_MAX_GAME_FAILURES it is set_aside with the reason of the last (as a game, obook.store.jobs)
    failures: Mapped[int] = mapped_column(Integer, default=0)
    failure: Mapped[str | None] = mapped_column(Text, nullable=True)
    failed_by: Mapped[str] = mapped_column(Text, default="", server_default="")  # as games.failed_by
    done_by: Mapped[str | None] = mapped_column(String(200), nullable=True)  # the worker identity whose result it is
    seed: Mapped[int] = mapped_column(BigInteger, default=0)
    lease_owner: Mapped[str | None] = mapped_column(String(200), nullable=True)
    lease_until: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    created_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    done_at: Mapped[dt.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class ExpansionResult(Base):
    """An expansion's result, staged by the worker that held its lease and not yet applied to the
    book: its searches and its edge (``obook.store.minimax.StagedResult`` as JSON). Staging needs no
    lock, so workers stage at once; whoever holds the book's lock next applies every staged result
    in one transaction and deletes them (``apply_staged``). At most one per expansion."""

    __tablename__ = "expansion_results"
    __table_args__ = (Index("ix_expansion_results_book", "book_id", "job_id"),)

    job_id: Mapped[int] = mapped_column(ForeignKey("expansions.id", ondelete="CASCADE"), primary_key=True)
    book_id: Mapped[int] = mapped_column(ForeignKey("books.id", ondelete="CASCADE"))
    owner: Mapped[str] = mapped_column(String(200))  # the lease owner that staged it
    worker_id: Mapped[str | None] = mapped_column(String(200), nullable=True)  # and its worker identity
    staged_at: Mapped[dt.datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    result: Mapped[str] = mapped_column(Text)
