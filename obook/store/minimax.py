"""A minimax book in the store: its nodes (each position's search, book moves excluded, and its
backed-up figures), its edges, and its expansions, the leased units of work that grow it. Rows
only: the book's rules (what a node's value is, which node to expand) are ``obook.book.minimax``'s,
and the back-up that keeps the stored figures true is ``obook.book.backup``'s.

Guarantees, as for games (``obook.store.jobs``):

- an expansion is one row per (book, position, generation = the node's edges when it was
  scheduled): scheduling it twice inserts nothing, so two workers never expand a node at once;
- a worker takes an expansion's lease (free or expired), renews it while it searches, and stages
  the result (``stage_result``: one row, no lock) while it holds the lease: a duplicate or late
  delivery stages nothing, and a worker killed at any instant loses at most the search it was
  running;
- staged results are applied under the book's lock (PostgreSQL row lock; SQLite's ``BEGIN
  IMMEDIATE``) by whoever takes it next, every staged result at once (``apply_staged``): the
  worker that staged, right after, or another that staged meanwhile, or the next scheduling step
  (a worker killed between the two). The apply is guarded by the node still having ``generation``
  edges, marks the expansions done, and runs the book's back-up once for them all, so the stored
  figures are always those of the stored searches, which ``obook verify`` checks. Many workers
  committing at once thus share the book's serial work (group commit) instead of queueing for it
  one by one.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
from dataclasses import dataclass, field
from typing import Callable, NamedTuple

from sqlalchemy import Connection, bindparam, delete, func, literal, null, select, union_all, update

from obook.store.books import lock_book
from obook.store.db import as_utc, dialect_insert, synchronous_commit, to_signed, to_unsigned
from obook.store.models import DONE, PENDING, Book, Expansion, ExpansionResult, MinimaxEdge, MinimaxNode, utcnow

NODES = MinimaxNode.__table__
EDGES = MinimaxEdge.__table__
JOBS = Expansion.__table__
RESULTS = ExpansionResult.__table__
BOOKS = Book.__table__


@dataclass
class NodeRow:
    """A stored node as rows hold it (``obook.book.minimax.node_from_row`` reads it as a ``Node``)."""

    key: int
    moves: str  # a path from the empty board
    policy: str  # its search's root moves, "move:visits:winrate ..."
    searched_edges: int
    excluded_prior: float
    play_policy: str  # "move:share ..."
    value: float
    lcb: float
    ucb: float
    playouts: int = 0
    spec: str = ""
    engine_version: str = ""
    score_mean: float | None = None  # Black's mean score less komi (its search's simulations)
    backed_up_score: float | None = None  # Black's, on the line of ``value`` (``obook.book.minimax.line_score``)
    edges: dict[int, tuple[int, float]] = field(default_factory=dict)  # move -> (child key, prior)


class ChildBounds(NamedTuple):
    """A child's stored bounds, with what a lookup shows beside them (a named tuple: a lookup reads
    one per book move)."""

    value: float
    lcb: float
    ucb: float
    visits: int = 0  # behind its own value
    score_mean: float | None = None  # Black's, of its own search
    backed_up_score: float | None = None  # Black's, on the line of its value


def _node_row(row) -> NodeRow:
    return NodeRow(key=to_unsigned(row.position_key), moves=row.moves, policy=row.policy,
                   searched_edges=row.searched_edges, excluded_prior=row.excluded_prior,
                   play_policy=row.play_policy, value=row.value, lcb=row.lcb, ucb=row.ucb, playouts=row.playouts,
                   spec=row.spec, engine_version=row.engine_version, score_mean=row.score_mean,
                   backed_up_score=row.backed_up_score)


def load_node_rows(conn: Connection, book_id: int) -> dict[int, NodeRow]:
    """Every node of the book with its edges."""
    nodes = {}
    for row in conn.execute(select(NODES).where(NODES.c.book_id == book_id)):
        node = _node_row(row)
        nodes[node.key] = node
    for parent, move, child, prior in conn.execute(select(EDGES.c.parent_key, EDGES.c.move, EDGES.c.child_key,
                                                          EDGES.c.prior).where(EDGES.c.book_id == book_id)):
        node = nodes.get(to_unsigned(parent))
        if node is not None:
            node.edges[move] = (to_unsigned(child), prior)
    return nodes


def read_node(conn: Connection, book_id: int, key: int) -> NodeRow | None:
    """One node with its edges (None: not in the book)."""
    return read_nodes(conn, book_id, [key]).get(key)


_READ_NODES = select(NODES, EDGES.c.move, EDGES.c.child_key, EDGES.c.prior).select_from(NODES.outerjoin(
    EDGES, (EDGES.c.book_id == NODES.c.book_id) & (EDGES.c.parent_key == NODES.c.position_key))).where(
    NODES.c.book_id == bindparam("book"), NODES.c.position_key.in_(bindparam("keys", expanding=True)))
_NODE_EXISTS = select(NODES.c.position_key).where(NODES.c.book_id == bindparam("book"),
                                                  NODES.c.position_key == bindparam("key"))


def read_nodes(conn: Connection, book_id: int, keys: list[int]) -> dict[int, NodeRow]:
    """The nodes of ``keys`` that are in the book, with their edges, in one query (a node's row
    joined to its edges): an expansion and its back-up read a few nodes each, and round trips are
    most of their cost."""
    nodes: dict[int, NodeRow] = {}
    for row in conn.execute(_READ_NODES, {"book": book_id, "keys": [to_signed(k) for k in keys]}):
        key = to_unsigned(row.position_key)
        node = nodes.get(key)
        if node is None:
            node = nodes[key] = _node_row(row)
        if row.move is not None:
            node.edges[row.move] = (to_unsigned(row.child_key), row.prior)
    return nodes


def node_exists(conn: Connection, book_id: int, key: int) -> bool:
    return conn.execute(_NODE_EXISTS, {"book": book_id, "key": to_signed(key)}).first() is not None


_CHILD_BOUNDS_COLUMNS = (NODES.c.position_key, NODES.c.value, NODES.c.lcb, NODES.c.ucb, NODES.c.own_visits,
                         NODES.c.score_mean, NODES.c.backed_up_score)  # the key, then ChildBounds's fields


def children_bounds(conn: Connection, book_id: int, node: NodeRow) -> dict[int, ChildBounds]:
    keys = [to_signed(child) for child, _ in node.edges.values()]
    if not keys:
        return {}
    rows = conn.execute(select(*_CHILD_BOUNDS_COLUMNS).where(NODES.c.book_id == book_id,
                                                             NODES.c.position_key.in_(keys)))
    return {to_unsigned(k): ChildBounds(*bounds) for k, *bounds in rows}


def node_reader(conn: Connection, book_id: int):
    """key -> (NodeRow, its children's stored bounds), or None: how a minimax lookup reads the
    book in the caller's transaction."""
    def read(key: int):
        stored = read_node(conn, book_id, key)
        return (stored, children_bounds(conn, book_id, stored)) if stored is not None else None

    return read


def whole_book_node_reader(conn: Connection, book_id: int):
    """``node_reader`` over the whole book read at once, in three queries rather than two a node: what
    a reader of every node (the HTML export) takes. It holds the book in memory: a minimax book's
    nodes are its searches, thousands to hundreds of thousands."""
    nodes = load_node_rows(conn, book_id)
    bounds = {to_unsigned(k): ChildBounds(*b) for k, *b in conn.execute(
        select(*_CHILD_BOUNDS_COLUMNS).where(NODES.c.book_id == book_id))}

    def read(key: int):
        stored = nodes.get(key)
        if stored is None:
            return None
        return stored, {child: bounds[child] for child, _ in stored.edges.values() if child in bounds}

    return read


def node_count(conn: Connection, book_id: int) -> int:
    return conn.execute(select(func.count()).select_from(NODES).where(NODES.c.book_id == book_id)).scalar_one()


@dataclass(frozen=True)
class NodeFigures:
    """What the back-up stores per node, compared as a whole by ``obook verify``."""

    value: float
    lcb: float
    ucb: float
    own_value: float
    own_error: float
    own_visits: int
    best_new: int
    backed_up_score: float | None  # Black's (``obook.book.minimax.line_score``)


_FIGURE_COLUMNS = [NODES.c[name] for name in NodeFigures.__dataclass_fields__]


def stored_figures(conn: Connection, book_id: int) -> dict[int, NodeFigures]:
    rows = conn.execute(select(NODES.c.position_key, *_FIGURE_COLUMNS).where(NODES.c.book_id == book_id))
    return {to_unsigned(r[0]): NodeFigures(*r[1:]) for r in rows}


_WRITE_FIGURES = update(NODES).where(NODES.c.book_id == bindparam("b_book"), NODES.c.position_key == bindparam("b_key"))
def _last_seq(book_id):
    """The book's last change number (NULL: none), for ``book_id`` a value or a bound parameter."""
    return select(func.max(NODES.c.seq)).where(NODES.c.book_id == book_id)


_LAST_CHANGE = _last_seq(bindparam("b_book"))


def write_figures(conn: Connection, book_id: int, figures: dict[int, NodeFigures], seq: int | None = None) -> None:
    """Store ``figures`` as change ``seq`` (None: the next change)."""
    if not figures:
        return
    seq = next_seq(conn, book_id) if seq is None else seq
    conn.execute(_WRITE_FIGURES, [dict(b_book=book_id, b_key=to_signed(key), **vars(f), seq=seq)
                                  for key, f in figures.items()])


def next_seq(conn: Connection, book_id: int) -> int:
    """The change sequence number of a write now (under the book's lock: writers take turns)."""
    return last_change(conn, book_id) + 1


def last_change(conn: Connection, book_id: int) -> int:
    """The change sequence number of the book's last write (0: none yet). Every write of a node's
    search, edges or figures raises it (an expansion's commit, its back-up, ``obook verify
    --repair``), so it tells whether the book's answers changed in one probe of
    ``ix_minimax_nodes_book_seq``: counting the book's done expansions reads them all (80-100 ms at
    10^6 in PostgreSQL)."""
    return conn.execute(_LAST_CHANGE, {"b_book": book_id}).scalar_one() or 0


_CHILD_OF_EDGE = NODES.alias("edge_child")
_GENERATIONS = select(JOBS.c.position_key, func.max(JOBS.c.generation)).where(
    JOBS.c.book_id == bindparam("book"), JOBS.c.position_key.in_(bindparam("keys", expanding=True))).group_by(
    JOBS.c.position_key)
_JOBS_SO_FAR = select(func.count(), func.coalesce(func.max(JOBS.c.id), 0)).where(JOBS.c.book_id == bindparam("book"))


@dataclass
class IndexRow:
    """What the reach index reads of a node it starts to hold: its row with its edges, its children's
    stored bounds (absent: not stored), and the highest generation it was scheduled at (None: never)."""

    node: NodeRow
    children: dict[int, tuple[float, float, float]]
    taken: int | None


_INDEX_NODES = select(NODES, select(func.max(JOBS.c.generation)).where(
    JOBS.c.book_id == NODES.c.book_id, JOBS.c.position_key == NODES.c.position_key).scalar_subquery().label(
    "taken_generation"))
_INDEX_NODES_BY_KEY = _INDEX_NODES.where(NODES.c.book_id == bindparam("book"),
                                         NODES.c.position_key.in_(bindparam("keys", expanding=True)))
_INDEX_NODES_CHANGED = _INDEX_NODES.where(NODES.c.book_id == bindparam("book"), NODES.c.seq > bindparam("since"))
# the nodes' edges with their children's bounds, by the edges' primary key: a statement of its own, not a
# join of the nodes' statement, whose plan (a hash join over every edge of the book) the planner chose on
# stale statistics
_INDEX_EDGES = select(EDGES.c.parent_key, EDGES.c.move, EDGES.c.child_key, EDGES.c.prior, _CHILD_OF_EDGE.c.value,
                      _CHILD_OF_EDGE.c.lcb, _CHILD_OF_EDGE.c.ucb).select_from(EDGES.outerjoin(
    _CHILD_OF_EDGE, (_CHILD_OF_EDGE.c.book_id == EDGES.c.book_id)
    & (_CHILD_OF_EDGE.c.position_key == EDGES.c.child_key))).where(
    EDGES.c.book_id == bindparam("book"), EDGES.c.parent_key.in_(bindparam("keys", expanding=True)))


def read_index_rows(conn: Connection, book_id: int, keys) -> dict[int, IndexRow]:
    """``IndexRow`` of those of ``keys`` that are in the book, in two queries a thousand keys."""
    keys = [to_signed(k) for k in keys]
    out: dict[int, IndexRow] = {}
    for start in range(0, len(keys), 1000):
        _index_rows(conn, book_id, conn.execute(_INDEX_NODES_BY_KEY, {"book": book_id, "keys": keys[start:start + 1000]}),
                    out)
    return out


def changed_index_rows(conn: Connection, book_id: int, since: int) -> tuple[dict[int, IndexRow], int]:
    """``IndexRow`` of the nodes written after change ``since``, and the last change seen: what a
    scheduler that saw the book at ``since`` must read (``ix_minimax_nodes_book_seq``)."""
    out: dict[int, IndexRow] = {}
    return out, _index_rows(conn, book_id, conn.execute(_INDEX_NODES_CHANGED, {"book": book_id, "since": since}),
                            out, since)


def _index_rows(conn: Connection, book_id: int, rows, out: dict[int, IndexRow], last: int = 0) -> int:
    new = []
    for row in rows:
        key = to_unsigned(row.position_key)
        out[key] = IndexRow(_node_row(row), {}, row.taken_generation)
        new.append(row.position_key)
        last = max(last, row.seq)
    for start in range(0, len(new), 1000):
        for parent, move, child, prior, value, lcb, ucb in conn.execute(
                _INDEX_EDGES, {"book": book_id, "keys": new[start:start + 1000]}):
            found = out[to_unsigned(parent)]
            child = to_unsigned(child)
            found.node.edges[move] = (child, prior)
            if value is not None:
                found.children[child] = (value, lcb, ucb)
    return last


def scheduled_generations(conn: Connection, book_id: int, keys) -> dict[int, int]:
    """The highest generation at which each of ``keys`` was ever scheduled (absent: never)."""
    keys = [to_signed(k) for k in keys]
    if not keys:
        return {}
    out = {}
    for start in range(0, len(keys), 1000):
        for key, generation in conn.execute(_GENERATIONS, {"book": book_id, "keys": keys[start:start + 1000]}):
            out[to_unsigned(key)] = generation
    return out


def jobs_so_far(conn: Connection, book_id: int) -> tuple[int, int]:
    """(how many expansions were ever scheduled, the last one's id), read at one instant."""
    count, last = conn.execute(_JOBS_SO_FAR, {"book": book_id}).one()
    return count, last


def scheduled_since(conn: Connection, book_id: int, after: int) -> list[tuple[int, int, int]]:
    """(id, position key, generation) of the book's expansions scheduled after expansion ``after``."""
    return [(i, to_unsigned(k), g) for i, k, g in conn.execute(
        select(JOBS.c.id, JOBS.c.position_key, JOBS.c.generation).where(JOBS.c.book_id == book_id, JOBS.c.id > after)
        .order_by(JOBS.c.id))]



@dataclass(frozen=True)
class BackUpRow:
    """What the incremental back-up reads of one node: its stored figures, its search's mean score,
    its depth (moves of its first path), its children's stored bounds (with their backed-up scores),
    and its parents (key, depth): where the back-up goes next if its figures change, read with them
    to save a round trip a level."""

    figures: NodeFigures
    score_mean: float | None
    depth: int
    children: list[ChildBounds]
    parents: list[tuple[int, int]]


_CHILD = NODES.alias("child")
# statements the back-up runs at every level it visits, built once (building one costs more than running it)
_BACK_UP_ROWS = select(NODES.c.position_key, *_FIGURE_COLUMNS, NODES.c.score_mean, NODES.c.moves,
                       _CHILD.c.value, _CHILD.c.lcb, _CHILD.c.ucb, _CHILD.c.backed_up_score).select_from(
    NODES.outerjoin(EDGES, (EDGES.c.book_id == NODES.c.book_id) & (EDGES.c.parent_key == NODES.c.position_key))
    .outerjoin(_CHILD, (_CHILD.c.book_id == EDGES.c.book_id) & (_CHILD.c.position_key == EDGES.c.child_key))).where(
    NODES.c.book_id == bindparam("book"), NODES.c.position_key.in_(bindparam("keys", expanding=True)))
# the same nodes' parents, as rows of _BACK_UP_ROWS's shape: (child key, NULL figures and score, parent's
# moves, NULL bounds and score, parent key), so that one statement reads both
_PARENT = NODES.alias("parent")
_PARENT_ROWS = select(EDGES.c.child_key, *[null() for _ in NodeFigures.__dataclass_fields__], null(), _PARENT.c.moves,
                      null(), null(), null(), null(), _PARENT.c.position_key).select_from(
    EDGES.join(_PARENT, (_PARENT.c.book_id == EDGES.c.book_id) & (_PARENT.c.position_key == EDGES.c.parent_key))).where(
    EDGES.c.book_id == bindparam("book"), EDGES.c.child_key.in_(bindparam("keys", expanding=True)))
_BACK_UP_AND_PARENT_ROWS = union_all(_BACK_UP_ROWS.add_columns(null().label("parent_key")), _PARENT_ROWS)


def back_up_rows(conn: Connection, book_id: int, keys: list[int]) -> dict[int, BackUpRow]:
    """One query: the nodes' rows joined to their edges and their children's rows (absent: not
    stored), and their parents."""
    out: dict[int, BackUpRow] = {}
    parents: dict[int, list[tuple[int, int]]] = {}
    for key, *figures, score_mean, moves, v, lo, hi, score, parent in conn.execute(_BACK_UP_AND_PARENT_ROWS, {
            "book": book_id, "keys": [to_signed(k) for k in keys]}):
        key = to_unsigned(key)
        if parent is not None:
            parents.setdefault(key, []).append((to_unsigned(parent), len(moves.split())))
            continue
        row = out.get(key)
        if row is None:
            row = out[key] = BackUpRow(NodeFigures(*figures), score_mean, len(moves.split()), [], [])
        if v is not None:
            row.children.append(ChildBounds(v, lo, hi, backed_up_score=score))
    for key, row in out.items():
        row.parents.extend(parents.get(key, ()))
    return out


def reaches(conn: Connection, book_id: int, start: int, target: int) -> bool:
    """Whether ``target`` can be reached from ``start`` along the book's edges (a recursive query:
    the nodes below ``start``, each once)."""
    if start == target:
        return True
    return conn.execute(_REACHES, {"book": book_id, "start": to_signed(start),
                                   "target": to_signed(target)}).first() is not None


def _reaches_statement():
    below = select(EDGES.c.child_key.label("key")).where(EDGES.c.book_id == bindparam("book"),
                                                         EDGES.c.parent_key == bindparam("start")).cte(recursive=True)
    below = below.union(select(EDGES.c.child_key).where(EDGES.c.book_id == bindparam("book"),
                                                        EDGES.c.parent_key == below.c.key))
    return select(below.c.key).where(below.c.key == bindparam("target")).limit(1)


_REACHES = _reaches_statement()

# ---- expansions ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExpansionRow:
    id: int
    book_id: int
    key: int
    generation: int
    moves: tuple[str, ...]
    cost: float
    move: int | None  # the move to add (reach expansion); None: the node's best move outside the book
    status: str
    attempts: int  # leases taken
    seed: int
    lease_owner: str | None
    lease_until: dt.datetime | None
    failures: int = 0
    failure: str | None = None


def _job(row) -> ExpansionRow:
    m = row._mapping
    return ExpansionRow(id=m["id"], book_id=m["book_id"], key=to_unsigned(m["position_key"]),
                        generation=m["generation"], moves=tuple(m["moves"].split()), cost=m["cost"],
                        move=m["move"],
                        status=m["status"], attempts=m["attempts"], seed=to_unsigned(m["seed"]),
                        lease_owner=m["lease_owner"], lease_until=as_utc(m["lease_until"]),
                        failures=m["failures"], failure=m["failure"])


_GET_EXPANSION = select(JOBS).where(JOBS.c.id == bindparam("id"))


def get_expansion(conn: Connection, job_id: int) -> ExpansionRow | None:
    row = conn.execute(_GET_EXPANSION, {"id": job_id}).one_or_none()
    return _job(row) if row is not None else None


def count_done(conn: Connection, book_id: int) -> int:
    """The book's expansions done, counted (``books.expansions_done`` keeps the same number)."""
    return conn.execute(select(func.count()).select_from(JOBS).where(JOBS.c.book_id == book_id,
                                                                     JOBS.c.status == DONE)).scalar_one()


def done_counter(conn: Connection, book_id: int) -> int:
    return conn.execute(select(BOOKS.c.expansions_done).where(BOOKS.c.id == book_id)).scalar_one()


def set_done_counter(conn: Connection, book_id: int, done: int) -> None:
    conn.execute(update(BOOKS).where(BOOKS.c.id == book_id).values(expansions_done=done))


def scheduled(conn: Connection, book_id: int) -> set[tuple[int, int]]:
    """(position key, generation) of every expansion ever scheduled."""
    return {(to_unsigned(k), g) for k, g in conn.execute(select(JOBS.c.position_key, JOBS.c.generation).where(
        JOBS.c.book_id == book_id))}


def schedule_expansion(conn: Connection, book_id: int, key: int, generation: int, moves: list[str], cost: float,
                       seed: int, move: int | None = None, if_current: bool = False) -> int | None:
    """Insert the expansion of ``key`` at ``generation`` (adding ``move``, or the node's best move
    outside the book); None when it was already scheduled, or with ``if_current`` when the node no
    longer has ``generation`` edges (an expansion landed since it was chosen)."""
    values = dict(book_id=book_id, position_key=to_signed(key), generation=generation, moves=" ".join(moves),
                  cost=cost, move=move, status=PENDING, attempts=0, seed=to_signed(seed), created_at=utcnow())
    if if_current:
        edges = select(func.count()).select_from(EDGES).where(EDGES.c.book_id == book_id,
                                                              EDGES.c.parent_key == to_signed(key)).scalar_subquery()
        insert = dialect_insert(conn)(JOBS).from_select(list(values), select(
            *[literal(v, JOBS.c[name].type) for name, v in values.items()]).where(edges == generation))
    else:
        insert = dialect_insert(conn)(JOBS).values(**values)
    insert = insert.on_conflict_do_nothing(index_elements=[JOBS.c.book_id, JOBS.c.position_key, JOBS.c.generation])
    result = conn.execute(insert.returning(JOBS.c.id))
    row = result.first()
    return row[0] if row is not None else None



@dataclass(frozen=True)
class SearchedNode:
    """A node's new search, as an expansion stores it (its root moves and play policy in their
    stored text form, ``obook.book.minimax.format_root_moves``)."""

    key: int
    moves: list[str]
    policy: str
    searched_edges: int
    excluded_prior: float
    playouts: int
    spec: str
    seed: int
    engine_version: str
    play_policy: str | None = None  # None: keep the stored one
    score_mean: float | None = None  # None: keep the stored one


@dataclass(frozen=True)
class NewEdge:
    move: int  # canonical
    child_key: int
    prior: float  # the move's share of the parent's search visits


# an apply's statements, built once (their columns come from the parameters): building a statement
# costs more Python time than running it
_INSERT_NODE = NODES.insert()
_INSERT_EDGE = EDGES.insert()
_MARK_DONE = update(JOBS).where(JOBS.c.id.in_(bindparam("ids", expanding=True))).values(
    status=DONE, done_at=bindparam("now"), lease_owner=None, lease_until=None,
    done_by=select(RESULTS.c.worker_id).where(RESULTS.c.job_id == JOBS.c.id).scalar_subquery())
_COUNT_DONE = update(BOOKS).where(BOOKS.c.id == bindparam("book")).values(
    expansions_done=BOOKS.c.expansions_done + bindparam("applied"))
_UNSTAGE = delete(RESULTS).where(RESULTS.c.job_id.in_(bindparam("ids", expanding=True)))


def _write_search(conn: Connection, book_id: int, s: SearchedNode, exists: bool, seq: int,
                  searched_by: str | None = None) -> None:
    """The search's rows; its figures (value, bounds, own value) are the back-up's to write."""
    values = dict(policy=s.policy, searched_edges=s.searched_edges, excluded_prior=s.excluded_prior,
                  playouts=s.playouts, spec=s.spec, seed=to_signed(s.seed), engine_version=s.engine_version,
                  searched_at=utcnow(), seq=seq, searched_by=searched_by)
    if s.play_policy is not None:
        values["play_policy"] = s.play_policy
    if s.score_mean is not None:
        values["score_mean"] = s.score_mean
    if exists:
        conn.execute(_WRITE_FIGURES, dict(b_book=book_id, b_key=to_signed(s.key), **values))
    else:
        conn.execute(_INSERT_NODE, dict(book_id=book_id, position_key=to_signed(s.key), moves=" ".join(s.moves),
                                        value=0.0, lcb=0.0, ucb=0.0, own_value=0.0, own_error=0.0, own_visits=0,
                                        best_new=-2, **values))


@dataclass(frozen=True)
class StagedResult:
    """What one expansion adds to its book: the parent's new search (None: it was reused), the
    ``edge`` (None: the search found no move to add), the child's search (None: the child was in
    the book already, a transposition). Staged as JSON (``expansion_results``) until applied."""

    parent: SearchedNode | None
    edge: NewEdge | None
    child: SearchedNode | None

    def to_json(self) -> str:
        return json.dumps({name: dataclasses.asdict(part) if part is not None else None
                           for name, part in (("parent", self.parent), ("edge", self.edge), ("child", self.child))})

    @classmethod
    def from_json(cls, text: str) -> "StagedResult":
        parts = json.loads(text)
        return cls(SearchedNode(**parts["parent"]) if parts["parent"] else None,
                   NewEdge(**parts["edge"]) if parts["edge"] else None,
                   SearchedNode(**parts["child"]) if parts["child"] else None)


def stage_result(conn: Connection, job: ExpansionRow, owner: str, result: StagedResult,
                 worker_id: str | None = None) -> bool:
    """Stage ``result`` as ``job``'s while ``owner`` holds its lease and it is pending: one
    statement, no lock, so that workers stage at once. False, and nothing written, when the job is
    not ours, is no longer pending, or has a result staged already (a late or repeated delivery)."""
    staged = conn.execute(_stage_statement(conn.dialect.name), {
        "job": job.id, "book": job.book_id, "owner": owner, "worker": worker_id, "now": utcnow(),
        "result": result.to_json()}).first()
    return staged is not None


@functools.cache
def _stage_statement(dialect: str):
    """``stage_result``'s statement for a dialect, built once."""
    mine = select(JOBS.c.id).where(JOBS.c.id == bindparam("job"), JOBS.c.lease_owner == bindparam("owner"),
                                   JOBS.c.status == PENDING)
    return dialect_insert(dialect)(RESULTS).from_select(
        ["job_id", "book_id", "owner", "worker_id", "staged_at", "result"],
        select(mine.scalar_subquery(), bindparam("book", type_=RESULTS.c.book_id.type),
               bindparam("owner", type_=RESULTS.c.owner.type), bindparam("worker", type_=RESULTS.c.worker_id.type),
               bindparam("now", type_=RESULTS.c.staged_at.type),
               bindparam("result", type_=RESULTS.c.result.type)).where(mine.exists())).on_conflict_do_nothing(
        index_elements=[RESULTS.c.job_id]).returning(RESULTS.c.job_id)


def has_staged(conn: Connection, book_id: int) -> bool:
    """Whether any result of the book waits to be applied."""
    return conn.execute(select(RESULTS.c.job_id).where(RESULTS.c.book_id == book_id).limit(1)).first() is not None


_EXPANSION_STATE = select(JOBS.c.status == DONE, select(RESULTS.c.job_id).where(
    RESULTS.c.job_id == bindparam("id")).exists()).where(JOBS.c.id == bindparam("id"))


def expansion_state(conn: Connection, job_id: int) -> tuple[bool, bool]:
    """(done, a result staged and not applied) of expansion ``job_id``, in one statement."""
    row = conn.execute(_EXPANSION_STATE, {"id": job_id}).first()
    return (bool(row[0]), bool(row[1])) if row is not None else (False, False)


def is_staged(conn: Connection, job_id: int) -> bool:
    """Whether a result of expansion ``job_id`` waits to be applied."""
    return conn.execute(select(RESULTS.c.job_id).where(RESULTS.c.job_id == job_id)).first() is not None


_STAGED = select(RESULTS.c.job_id, RESULTS.c.result, JOBS.c.position_key, JOBS.c.generation, JOBS.c.status,
                RESULTS.c.worker_id).join(
    JOBS, JOBS.c.id == RESULTS.c.job_id).where(RESULTS.c.book_id == bindparam("book")).order_by(RESULTS.c.job_id)


BackUp = Callable[[Connection, int, list[int], int], object]  # (conn, book, changed nodes, change number)


def apply_staged(conn: Connection, book_id: int, back_up: BackUp, locked: bool = False) -> list[int]:
    """Apply every staged result of the book once, under the book's lock (taken here unless the
    caller holds it: ``locked``), in the caller's transaction, and mark their expansions done;
    ``back_up(conn, book_id, changed nodes, seq)`` (the book's) runs once for all of them and writes
    its figures as the same change ``seq``. The ids of the expansions done.

    A result whose expansion is no longer pending is dropped. A result whose node no longer has
    the expansion's ``generation`` edges is done with nothing added (stale: cannot happen while
    expansions are unique per generation). The book's graph stays acyclic: an edge to a stored
    node from which the parent can be reached (a move that repeats a position of the book, possible
    on another path through a ko) is not added, so that every node's value is a function of its
    descendants' and the back-up can be incremental. Committed synchronously (a grid worker's
    session commits asynchronously): once the driver counts an expansion done, it is on disk."""
    synchronous_commit(conn)
    if not locked:
        lock_book(conn, book_id)
    rows = conn.execute(_STAGED, {"book": book_id}).all()
    if not rows:
        return []
    seq = last_change(conn, book_id) + 1  # one change for every result applied here
    applied, changed = [], []
    for job_id, text, key, generation, status, worker_id in rows:
        if status != PENDING:
            continue
        changed.extend(_store_result(conn, book_id, to_unsigned(key), generation, StagedResult.from_json(text), seq,
                                     job_id, worker_id))
        applied.append(job_id)
    if applied:
        conn.execute(_MARK_DONE, {"ids": applied, "now": utcnow()})
        conn.execute(_COUNT_DONE, {"book": book_id, "applied": len(applied)})
    conn.execute(_UNSTAGE, {"ids": [row[0] for row in rows]})
    back_up(conn, book_id, changed, seq)
    return applied


def _store_result(conn: Connection, book_id: int, key: int, generation: int, result: StagedResult,
                  seq: int, job_id: int | None = None, worker_id: str | None = None) -> list[int]:
    """Write one result (``apply_staged``'s rules); the nodes it changed."""
    parent, edge, child = result.parent, result.edge, result.child
    edges, exists, child_stored = conn.execute(_RESULT_STATE, {
        "book": book_id, "key": to_signed(key), "child": to_signed(edge.child_key if edge is not None else key)}).one()
    exists, child_stored = exists > 0, edge is not None and child_stored > 0
    if edges != generation or (parent is None and not exists):
        return []
    changed = [key]
    if parent is not None:
        _write_search(conn, book_id, parent, exists, seq, worker_id)
    if child is not None and not child_stored:
        _write_search(conn, book_id, child, False, seq, worker_id)
        changed.append(child.key)
    if edge is not None and not (child_stored and reaches(conn, book_id, edge.child_key, key)):
        conn.execute(_INSERT_EDGE, dict(book_id=book_id, parent_key=to_signed(key), move=edge.move,
                                        child_key=to_signed(edge.child_key), prior=edge.prior, added_by=job_id))
        if parent is None:  # the parent's new search carries the change already
            conn.execute(_WRITE_FIGURES, dict(b_book=book_id, b_key=to_signed(key), seq=seq))
    return changed


def _count_rows(table, key_column, key: str):
    return select(func.count()).select_from(table).where(
        table.c.book_id == bindparam("book"), key_column == bindparam(key)).scalar_subquery()


# a result's node: its edges now, whether it is stored, whether the child is
_RESULT_STATE = select(_count_rows(EDGES, EDGES.c.parent_key, "key"), _count_rows(NODES, NODES.c.position_key, "key"),
                       _count_rows(NODES, NODES.c.position_key, "child"))


def revert_expansion(conn: Connection, book_id: int, job_id: int, worker_id: str, seq: int) -> str | None:
    """Take expansion ``job_id`` (done, with ``worker_id``'s result) out of the book, under the book's
    lock held by the caller, and schedule it again: the edge it added is deleted, with its child
    when the expansion created it and nothing else reaches it; its node's search, when it is
    ``worker_id``'s, is dropped (``policy`` emptied and the expansion's named move forgotten: the
    redo searches the node again and adds its best new move; meanwhile the node has no move
    outside the book); the expansion is pending again, the book's count of
    expansions done one less. The caller backs the book up afterwards. None when reverted, else why
    not (nothing written): a later expansion of its node is done, or its child was expanded since
    (revert those first: ``obook.book.audit`` goes newest first)."""
    job = conn.execute(select(JOBS.c.position_key, JOBS.c.generation, JOBS.c.status, JOBS.c.done_by)
                       .where(JOBS.c.id == job_id, JOBS.c.book_id == book_id)).first()
    if job is None or job.status != DONE or job.done_by != worker_id:
        return "not a done expansion of this worker"
    key, generation = job.position_key, job.generation
    later = conn.execute(select(func.count()).select_from(JOBS).where(
        JOBS.c.book_id == book_id, JOBS.c.position_key == key, JOBS.c.generation > generation,
        JOBS.c.status == DONE)).scalar_one()
    if later:
        return "a later expansion of its node is done"
    edge = conn.execute(select(EDGES.c.move, EDGES.c.child_key).where(
        EDGES.c.book_id == book_id, EDGES.c.parent_key == key, EDGES.c.added_by == job_id)).first()
    if edge is not None:
        child = edge.child_key
        grown = conn.execute(select(func.count()).select_from(EDGES).where(
            EDGES.c.book_id == book_id, EDGES.c.parent_key == child)).scalar_one()
        if grown:
            return f"its child {to_unsigned(child):016x} was expanded since"
        conn.execute(delete(EDGES).where(EDGES.c.book_id == book_id, EDGES.c.parent_key == key,
                                         EDGES.c.move == edge.move))
        reached = conn.execute(select(func.count()).select_from(EDGES).where(
            EDGES.c.book_id == book_id, EDGES.c.child_key == child)).scalar_one()
        if not reached and child != key:  # nothing leads to it: its search was this expansion's
            conn.execute(delete(JOBS).where(JOBS.c.book_id == book_id, JOBS.c.position_key == child,
                                            JOBS.c.status != DONE))
            conn.execute(delete(NODES).where(NODES.c.book_id == book_id, NODES.c.position_key == child))
    dropped = conn.execute(update(NODES).where(
        NODES.c.book_id == book_id, NODES.c.position_key == key, NODES.c.searched_by == worker_id).values(
        policy="", searched_by=None, seq=seq)).rowcount
    conn.execute(update(NODES).where(NODES.c.book_id == book_id, NODES.c.position_key == key).values(seq=seq))
    # a dropped search is made again by the redo, which then adds its best new move (not a move named
    # by the schedule from the dropped search)
    conn.execute(update(JOBS).where(JOBS.c.id == job_id).values(
        status=PENDING, done_by=None, done_at=None, lease_owner=None, lease_until=None, failures=0, failed_by="",
        **({"move": None} if dropped else {})))
    conn.execute(update(BOOKS).where(BOOKS.c.id == book_id).values(expansions_done=BOOKS.c.expansions_done - 1))
    return None
