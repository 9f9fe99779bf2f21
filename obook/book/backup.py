"""The minimax back-up over a stored book: what keeps every node's stored figures (value, bounds,
own value) equal to ``obook.book.minimax.back_up`` of the stored searches and edges. An
expansion's commit runs it in its own transaction (``obook.store.leases.ExpansionLease.commit``);
``obook verify`` runs it from scratch and compares.
"""

from __future__ import annotations

from sqlalchemy import Connection

from obook.book.minimax import CONSTANTS, MinimaxConstants, Node, back_up, node_from_row, own_bounds, own_error
from obook.store.minimax import NodeFigures, load_node_rows, stored_figures, write_figures


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
                               best.visits if best else 0, best.move if best else -2)
    return out


def write_back_up(conn: Connection, book_id: int, constants: MinimaxConstants = CONSTANTS) -> int:
    """Recompute every node's figures from the stored searches and edges; write those that changed.
    Returns how many changed."""
    figures = computed_figures(load_nodes(conn, book_id), constants)
    stored = stored_figures(conn, book_id)
    changed = {key: f for key, f in figures.items() if stored.get(key) != f}
    write_figures(conn, book_id, changed)
    return len(changed)
