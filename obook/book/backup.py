"""The minimax back-up over a stored book: what keeps every node's stored figures (value, bounds,
own value, backed-up score) equal to ``obook.book.minimax.back_up`` of the stored searches and edges. An
expansion's commit runs it incrementally in its own transaction (``back_up_after``: the changed
nodes and their ancestors, as far as a figure changes); ``obook verify`` runs it from scratch
(``write_back_up``) and compares.
"""

from __future__ import annotations

import heapq

from sqlalchemy import Connection

from obook.book.minimax import (CONSTANTS, NO_MOVE, Bounds, MinimaxConstants, Node, back_up, black_to_move,
                                line_score, node_from_row, own_bounds, own_error)
from obook.store.minimax import (NodeFigures, back_up_rows, load_node_rows, next_seq, read_nodes,
                                 stored_figures, write_figures)


def load_nodes(conn: Connection, book_id: int) -> dict[int, Node]:
    """Every node of the book with its edges."""
    return {key: node_from_row(row) for key, row in load_node_rows(conn, book_id).items()}


def computed_figures(nodes: dict[int, Node], constants: MinimaxConstants = CONSTANTS) -> dict[int, NodeFigures]:
    """Every node's figures as a pure function of the stored searches and edges."""
    values = back_up(nodes, constants)
    out = {}
    for key, b in values.items():
        node = nodes[key]
        best = node.best_new()
        out[key] = NodeFigures(b.value, b.lcb, b.ucb, own_bounds(node, constants).value, own_error(node, constants),
                               best.visits if best else 0, best.move if best else NO_MOVE, b.score)
    return out


def write_back_up(conn: Connection, book_id: int, constants: MinimaxConstants = CONSTANTS) -> int:
    """Recompute every node's figures from the stored searches and edges; write those that changed.
    Returns how many changed."""
    figures = computed_figures(load_nodes(conn, book_id), constants)
    stored = stored_figures(conn, book_id)
    changed = {key: f for key, f in figures.items() if stored.get(key) != f}
    write_figures(conn, book_id, changed)
    return len(changed)


def back_up_after(conn: Connection, book_id: int, changed: list[int], constants: MinimaxConstants = CONSTANTS,
                  limit: int = 32, seq: int | None = None) -> int:
    """Bring the stored figures up to date after the nodes ``changed`` got a new search or a new
    edge, in time bounded by what changed, not by the book: each changed node's figures are
    recomputed from its search and its children's stored bounds, then every parent of a node whose
    figures changed, deepest first, until nothing changes. On the book's acyclic graph (the commit
    keeps it so) this is ``back_up`` exactly: a node's figures are a function of its own search and
    its children's. The nodes of one depth are read with their parents and written together (two
    statements a level, however many expansions are applied at once). Returns how many nodes
    it wrote. A book that already holds a cycle (stored before edges were kept acyclic) is
    recomputed whole once a node comes back ``limit`` times. Its writes are change ``seq`` (None:
    the book's next)."""
    if not changed:
        return 0
    searched = {key: node_from_row(row) for key, row in read_nodes(conn, book_id, list(set(changed))).items()}
    heap = []
    queued = set()
    for key, node in searched.items():
        heapq.heappush(heap, (-node.depth, key))
        queued.add(key)
    written = 0
    visits: dict[int, int] = {}
    while heap:
        depth = heap[0][0]
        level = []
        while heap and heap[0][0] == depth:
            key = heapq.heappop(heap)[1]
            queued.discard(key)
            visits[key] = visits.get(key, 0) + 1
            if visits[key] > limit:  # around a cycle
                return written + write_back_up(conn, book_id, constants)
            level.append(key)
        stored_rows = back_up_rows(conn, book_id, level)
        figures = {}
        for key in level:
            stored = stored_rows.get(key)
            if stored is None:
                continue
            new = _figures(searched.get(key), stored, constants)
            if new != stored.figures:
                figures[key] = new
        if not figures:
            continue
        seq = next_seq(conn, book_id) if seq is None else seq
        write_figures(conn, book_id, figures, seq)
        written += len(figures)
        for key in figures:
            for parent, parent_depth in stored_rows[key].parents:
                if parent not in queued:
                    heapq.heappush(heap, (-parent_depth, parent))
                    queued.add(parent)
    return written


def _figures(node: Node | None, stored, constants: MinimaxConstants) -> NodeFigures:
    """A node's figures from its own search (``node``: searched again or given an edge) or its
    stored own figures and search's mean score, and its children's stored bounds and backed-up
    scores: ``back_up``'s rule for one node."""
    if node is not None:
        own = own_bounds(node, constants)
        best = node.best_new()
        own_figures = (own.value, own_error(node, constants), best.visits if best else 0,
                       best.move if best else NO_MOVE)
        score_mean = node.score_mean
    else:
        f = stored.figures
        own_figures = (f.own_value, f.own_error, f.own_visits, f.best_new)
        w, error = f.own_value, f.own_error
        own = Bounds(w, max(0.0, w - constants.z * error), min(1.0, w + constants.z * error)) \
            if (f.best_new != NO_MOVE) else Bounds(0.0, 0.0, 0.0)
        score_mean = stored.score_mean
    value, lcb, ucb = own.value, own.lcb, own.ucb
    best_new = own_figures[3]
    lines = [(own.value, score_mean)] if best_new != NO_MOVE else []  # the own line, where there is a move outside
    for b in stored.children:
        value, lcb, ucb = max(value, 1 - b.value), max(lcb, 1 - b.ucb), max(ucb, 1 - b.lcb)
        lines.append((1 - b.value, b.backed_up_score))
    return NodeFigures(value, lcb, ucb, *own_figures, line_score(value, lines, black_to_move(stored.depth)))
