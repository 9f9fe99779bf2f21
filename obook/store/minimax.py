"""A minimax book in the store: its nodes (each position's search, book moves excluded, and its
backed-up bounds), its edges, and its expansions, the leased units of work that grow it.

Guarantees, as for games (``obook.store.games``):

- an expansion is one row per (book, position, generation = the node's edges when it was
  scheduled): scheduling it twice inserts nothing, so two workers never expand a node at once;
- a worker takes an expansion's lease (free or expired), renews it while it searches, and commits
  the result in one transaction (``commit_expansion``) guarded by its owner and by the node still
  having ``generation`` edges: a duplicate or late delivery writes nothing, and a worker killed
  at any instant loses at most the search it was running;
- the commit recomputes the backed-up bounds of the whole book under the book's lock (PostgreSQL
  row lock; SQLite's ``BEGIN IMMEDIATE``) and writes those that changed, so the stored bounds are
  always ``back_up`` of the stored nodes, which ``obook verify`` checks.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import Connection, and_, func, or_, select, update

from obook.book.minimax import (CONSTANTS, Bounds, MinimaxConstants, Node, RootMove, back_up, format_play_policy,
                                format_root_moves)
from obook.store.books import lock_book
from obook.store.db import as_utc, db_time, dialect_insert, synchronous_commit, to_signed, to_unsigned
from obook.store.models import DONE, PENDING, Expansion, MinimaxEdge, MinimaxNode, utcnow

NODES = MinimaxNode.__table__
EDGES = MinimaxEdge.__table__
JOBS = Expansion.__table__


@dataclass(frozen=True)
class StoredNode:
    """A node with its stored bounds (what lookups read)."""

    node: Node
    bounds: Bounds
    playouts: int
    spec: str
    engine_version: str
    score_mean: float | None = None  # Black's mean score less komi (playouts from the position)


@dataclass(frozen=True)
class ChildBounds(Bounds):
    """A child's stored bounds, with what a lookup shows beside them."""

    visits: int = 0  # behind its own value
    score_mean: float | None = None  # Black's


def _node(row) -> Node:
    from obook.book.minimax import parse_play_policy, parse_root_moves

    return Node(key=to_unsigned(row.position_key), moves=row.moves, root_moves=parse_root_moves(row.policy),
                searched_edges=row.searched_edges, excluded_prior=row.excluded_prior,
                play_policy=parse_play_policy(row.play_policy))


def load_nodes(conn: Connection, book_id: int) -> dict[int, Node]:
    """Every node of the book with its edges."""
    nodes = {}
    for row in conn.execute(select(NODES).where(NODES.c.book_id == book_id)):
        node = _node(row)
        nodes[node.key] = node
    for parent, move, child, prior in conn.execute(select(EDGES.c.parent_key, EDGES.c.move, EDGES.c.child_key,
                                                          EDGES.c.prior).where(EDGES.c.book_id == book_id)):
        node = nodes.get(to_unsigned(parent))
        if node is not None:
            node.edges[move] = (to_unsigned(child), prior)
    return nodes


def stored_bounds(conn: Connection, book_id: int) -> dict[int, Bounds]:
    rows = conn.execute(select(NODES.c.position_key, NODES.c.value, NODES.c.lcb, NODES.c.ucb).where(
        NODES.c.book_id == book_id))
    return {to_unsigned(k): Bounds(v, lo, hi) for k, v, lo, hi in rows}


def read_node(conn: Connection, book_id: int, key: int) -> StoredNode | None:
    """One node with its edges and its own stored bounds (None: not in the book)."""
    row = conn.execute(select(NODES).where(NODES.c.book_id == book_id,
                                           NODES.c.position_key == to_signed(key))).one_or_none()
    if row is None:
        return None
    node = _node(row)
    for move, child, prior in conn.execute(select(EDGES.c.move, EDGES.c.child_key, EDGES.c.prior).where(
            EDGES.c.book_id == book_id, EDGES.c.parent_key == to_signed(key))):
        node.edges[move] = (to_unsigned(child), prior)
    return StoredNode(node, Bounds(row.value, row.lcb, row.ucb), row.playouts, row.spec, row.engine_version,
                      row.score_mean)


def children_bounds(conn: Connection, book_id: int, node: Node) -> dict[int, ChildBounds]:
    keys = [to_signed(child) for child, _ in node.edges.values()]
    if not keys:
        return {}
    rows = conn.execute(select(NODES.c.position_key, NODES.c.value, NODES.c.lcb, NODES.c.ucb, NODES.c.own_visits,
                               NODES.c.score_mean).where(NODES.c.book_id == book_id, NODES.c.position_key.in_(keys)))
    return {to_unsigned(k): ChildBounds(v, lo, hi, n, score) for k, v, lo, hi, n, score in rows}


def node_count(conn: Connection, book_id: int) -> int:
    return conn.execute(select(func.count()).select_from(NODES).where(NODES.c.book_id == book_id)).scalar_one()


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
    attempts: int
    seed: int
    lease_owner: str | None
    lease_until: dt.datetime | None


def _job(row) -> ExpansionRow:
    m = row._mapping
    return ExpansionRow(id=m["id"], book_id=m["book_id"], key=to_unsigned(m["position_key"]),
                        generation=m["generation"], moves=tuple(m["moves"].split()), cost=m["cost"],
                        move=m["move"],
                        status=m["status"], attempts=m["attempts"], seed=to_unsigned(m["seed"]),
                        lease_owner=m["lease_owner"], lease_until=as_utc(m["lease_until"]))


def get_expansion(conn: Connection, job_id: int) -> ExpansionRow | None:
    row = conn.execute(select(JOBS).where(JOBS.c.id == job_id)).one_or_none()
    return _job(row) if row is not None else None


def expansion_counts(conn: Connection, book_id: int) -> dict[str, int]:
    """{status: expansions}; ``leased``: pending ones whose lease is current."""
    counts = {s: n for s, n in conn.execute(select(JOBS.c.status, func.count()).where(
        JOBS.c.book_id == book_id).group_by(JOBS.c.status))}
    counts["leased"] = conn.execute(select(func.count()).select_from(JOBS).where(
        JOBS.c.book_id == book_id, JOBS.c.status == PENDING, JOBS.c.lease_until >= db_time(conn))).scalar_one()
    return counts


def count_done(conn: Connection, book_id: int) -> int:
    return conn.execute(select(func.count()).select_from(JOBS).where(JOBS.c.book_id == book_id,
                                                                     JOBS.c.status == DONE)).scalar_one()


def expansions_running(conn: Connection, book_id: int, limit: int) -> list[ExpansionRow]:
    """Pending expansions whose lease is current (a worker searches them now), newest lease first."""
    rows = conn.execute(select(JOBS).where(JOBS.c.book_id == book_id, JOBS.c.status == PENDING,
                                           JOBS.c.lease_until >= db_time(conn))
                        .order_by(JOBS.c.lease_until.desc(), JOBS.c.id).limit(limit))
    return [_job(r) for r in rows]


def scheduled(conn: Connection, book_id: int) -> set[tuple[int, int]]:
    """(position key, generation) of every expansion ever scheduled."""
    return {(to_unsigned(k), g) for k, g in conn.execute(select(JOBS.c.position_key, JOBS.c.generation).where(
        JOBS.c.book_id == book_id))}


def schedule_expansion(conn: Connection, book_id: int, key: int, generation: int, moves: list[str], cost: float,
                       seed: int, owner: str | None = None, lease_seconds: float = 0.0,
                       move: int | None = None) -> int | None:
    """Insert the expansion of ``key`` at ``generation`` (leased to ``owner`` when given; adding
    ``move``, or the node's best move outside the book); None when it was already scheduled."""
    values = dict(book_id=book_id, position_key=to_signed(key), generation=generation, moves=" ".join(moves),
                  cost=cost, move=move, status=PENDING, attempts=1 if owner else 0, seed=to_signed(seed), created_at=utcnow())
    if owner is not None:
        values.update(lease_owner=owner, lease_until=db_time(conn, lease_seconds))
    insert = dialect_insert(conn)(JOBS).values(**values).on_conflict_do_nothing(
        index_elements=[JOBS.c.book_id, JOBS.c.position_key, JOBS.c.generation])
    result = conn.execute(insert.returning(JOBS.c.id))
    row = result.first()
    return row[0] if row is not None else None


def claim_expansion(conn: Connection, book_id: int, owner: str, lease_seconds: float,
                    job_id: int | None = None) -> ExpansionRow | None:
    """Take the lease of a pending expansion nobody holds (or whose lease expired), cheapest first,
    or of ``job_id``."""
    free = and_(JOBS.c.status == PENDING,
                or_(JOBS.c.lease_until.is_(None), JOBS.c.lease_until < db_time(conn), JOBS.c.lease_owner == owner))
    query = select(JOBS.c.id).where(JOBS.c.book_id == book_id, free).order_by(JOBS.c.cost, JOBS.c.id).limit(8)
    if job_id is not None:
        query = select(JOBS.c.id).where(JOBS.c.id == job_id, JOBS.c.book_id == book_id, free)
    if conn.dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    for (candidate,) in conn.execute(query).all():
        taken = conn.execute(update(JOBS).where(JOBS.c.id == candidate, free).values(
            lease_owner=owner, lease_until=db_time(conn, lease_seconds), attempts=JOBS.c.attempts + 1))
        if taken.rowcount == 1:
            return get_expansion(conn, candidate)
    return None


def pass_expansion(conn: Connection, job_id: int, owner: str, successor: str, lease_seconds: float) -> bool:
    """Hand a pending expansion's lease from ``owner`` (a grid token) to ``successor``."""
    result = conn.execute(update(JOBS).where(JOBS.c.id == job_id, JOBS.c.lease_owner == owner,
                                             JOBS.c.status == PENDING).values(
        lease_owner=successor, lease_until=db_time(conn, lease_seconds)))
    return result.rowcount == 1


def expansions_to_send(conn: Connection, book_id: int) -> list[int]:
    """Pending expansions nobody holds, or whose lease expired (by the database's clock)."""
    return [r[0] for r in conn.execute(select(JOBS.c.id).where(
        JOBS.c.book_id == book_id, JOBS.c.status == PENDING,
        or_(JOBS.c.lease_until.is_(None), JOBS.c.lease_until < db_time(conn))).order_by(JOBS.c.cost, JOBS.c.id))]


def renew_expansion(conn: Connection, job_id: int, owner: str, lease_seconds: float) -> bool:
    result = conn.execute(update(JOBS).where(JOBS.c.id == job_id, JOBS.c.lease_owner == owner,
                                             JOBS.c.status == PENDING).values(
        lease_until=db_time(conn, lease_seconds)))
    return result.rowcount == 1


def held_expansions(conn: Connection) -> list[tuple[int, str]]:
    """(expansion id, owner) of every pending expansion someone holds."""
    return [tuple(r) for r in conn.execute(select(JOBS.c.id, JOBS.c.lease_owner).where(
        JOBS.c.status == PENDING, JOBS.c.lease_owner.is_not(None)))]


def release_expansion(conn: Connection, job_id: int, owner: str) -> None:
    conn.execute(update(JOBS).where(JOBS.c.id == job_id, JOBS.c.lease_owner == owner, JOBS.c.status == PENDING)
                 .values(lease_owner=None, lease_until=None))


@dataclass(frozen=True)
class SearchedNode:
    """A node's new search, as an expansion stores it."""

    key: int
    moves: list[str]
    root_moves: list[RootMove]
    searched_edges: int
    excluded_prior: float
    playouts: int
    spec: str
    seed: int
    engine_version: str
    play_policy: list[tuple[int, float]] | None = None  # None: keep the stored one
    score_mean: float | None = None  # None: keep the stored one


def _write_search(conn: Connection, book_id: int, s: SearchedNode, exists: bool) -> None:
    best = s.root_moves[0] if s.root_moves else None
    values = dict(policy=format_root_moves(s.root_moves), searched_edges=s.searched_edges,
                  excluded_prior=s.excluded_prior, playouts=s.playouts, spec=s.spec, seed=to_signed(s.seed),
                  engine_version=s.engine_version, searched_at=utcnow(),
                  own_value=best.winrate if best else 0.0, own_error=0.0, own_visits=best.visits if best else 0,
                  best_new=best.move if best else -2)
    if s.play_policy is not None:
        values["play_policy"] = format_play_policy(s.play_policy)
    if s.score_mean is not None:
        values["score_mean"] = s.score_mean
    if exists:
        conn.execute(update(NODES).where(NODES.c.book_id == book_id, NODES.c.position_key == to_signed(s.key))
                     .values(**values))
    else:
        conn.execute(NODES.insert().values(book_id=book_id, position_key=to_signed(s.key), moves=" ".join(s.moves),
                                           value=0.0, lcb=0.0, ucb=0.0, **values))


def commit_expansion(conn: Connection, job: ExpansionRow, owner: str, parent: SearchedNode | None,
                     move: int | None, child: SearchedNode | None, child_key: int | None,
                     constants: MinimaxConstants = CONSTANTS) -> bool:
    """Store one expansion once: the parent's new search (None: it was reused), the edge
    ``move`` to ``child_key`` (None: the search found no move to add), the child's search (None:
    the child was already in the book, a transposition), then every changed bound. False, and
    nothing written, when the job is not ours, already done, or the node changed meanwhile.
    Committed synchronously (a grid worker's session commits asynchronously): once the driver
    counts an expansion done, it is on disk."""
    synchronous_commit(conn)
    lock_book(conn, job.book_id)
    mine = conn.execute(select(JOBS.c.id).where(JOBS.c.id == job.id, JOBS.c.lease_owner == owner,
                                                 JOBS.c.status == PENDING)).one_or_none()
    if mine is None:
        return False
    edges = conn.execute(select(func.count()).select_from(EDGES).where(
        EDGES.c.book_id == job.book_id, EDGES.c.parent_key == to_signed(job.key))).scalar_one()
    exists = conn.execute(select(NODES.c.position_key).where(
        NODES.c.book_id == job.book_id, NODES.c.position_key == to_signed(job.key))).one_or_none() is not None
    if edges != job.generation or (parent is None and not exists):
        conn.execute(update(JOBS).where(JOBS.c.id == job.id).values(status=DONE, done_at=utcnow()))
        return True  # stale (cannot happen while jobs are unique per generation): done, nothing added
    if parent is not None:
        _write_search(conn, job.book_id, parent, exists)
    if child is not None:
        child_exists = conn.execute(select(NODES.c.position_key).where(
            NODES.c.book_id == job.book_id, NODES.c.position_key == to_signed(child.key))).one_or_none() is not None
        if not child_exists:
            _write_search(conn, job.book_id, child, False)
    if move is not None and child_key is not None:
        node = load_nodes(conn, job.book_id)[job.key]
        conn.execute(EDGES.insert().values(book_id=job.book_id, parent_key=to_signed(job.key), move=move,
                                           child_key=to_signed(child_key), prior=node.prior(move)))
    write_back_up(conn, job.book_id, constants)
    conn.execute(update(JOBS).where(JOBS.c.id == job.id).values(status=DONE, done_at=utcnow(),
                                                                lease_owner=None, lease_until=None))
    return True


@dataclass(frozen=True)
class NodeFigures:
    """What ``write_back_up`` stores per node, compared as a whole by ``obook verify``."""

    value: float
    lcb: float
    ucb: float
    own_value: float
    own_error: float
    own_visits: int
    best_new: int


def computed_figures(nodes: dict[int, Node], constants: MinimaxConstants = CONSTANTS) -> dict[int, NodeFigures]:
    """Every node's figures as a pure function of the stored searches and edges."""
    from obook.book.minimax import own_bounds, own_error

    values = back_up(nodes, constants)
    out = {}
    for key, b in values.items():
        node = nodes[key]
        best = node.best_new()
        out[key] = NodeFigures(b.value, b.lcb, b.ucb, own_bounds(node, constants).value, own_error(node, constants),
                               best.visits if best else 0, best.move if best else -2)
    return out


def stored_figures(conn: Connection, book_id: int) -> dict[int, NodeFigures]:
    rows = conn.execute(select(NODES.c.position_key, NODES.c.value, NODES.c.lcb, NODES.c.ucb, NODES.c.own_value,
                               NODES.c.own_error, NODES.c.own_visits, NODES.c.best_new).where(
        NODES.c.book_id == book_id))
    return {to_unsigned(r[0]): NodeFigures(*r[1:]) for r in rows}


def write_back_up(conn: Connection, book_id: int, constants: MinimaxConstants = CONSTANTS) -> int:
    """Recompute every node's figures (bounds and own value) from the stored searches and edges;
    write those that changed. Returns how many changed."""
    figures = computed_figures(load_nodes(conn, book_id), constants)
    stored = stored_figures(conn, book_id)
    changed = 0
    for key, f in figures.items():
        if stored.get(key) == f:
            continue
        conn.execute(update(NODES).where(NODES.c.book_id == book_id, NODES.c.position_key == to_signed(key)).values(
            value=f.value, lcb=f.lcb, ucb=f.ucb, own_value=f.own_value, own_error=f.own_error,
            own_visits=f.own_visits, best_new=f.best_new))
        changed += 1
    return changed


def node_reader(conn: Connection, book_id: int):
    """key -> (StoredNode, its children's stored bounds), or None: how a minimax lookup reads the
    book in the caller's transaction."""
    def read(key: int):
        stored = read_node(conn, book_id, key)
        return (stored, children_bounds(conn, book_id, stored.node)) if stored is not None else None

    return read
