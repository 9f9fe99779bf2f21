"""Which expansions come next in a ``reach`` book, kept up to date as expansions land instead of
recomputed over the whole book at every choice (issue 31, item 2).

``obook.book.minimax.reach_candidates`` defines the order: for each colour of the book player, a
node's reach cost is its cheapest path from the root on which the book player follows the book's
move (cost 0) and the opponent plays a likely reply (cost ``-log`` of its play prior); a candidate
is a move worth adding, at its node's cost plus its own, the lower of the two colours'.

``ReachIndex`` holds that shortest-path problem in memory for one book and one process (a build's
worker, the grid's driver), for the nodes a path from the root reaches (in either colour), not for
the whole book: for each colour the followed edges, the shortest-path tree, and every candidate in
a heap. ``refresh`` reads the figures of the nodes written since the change it saw last
(``minimax_nodes.seq``), and in full only the held nodes among them; it repairs the distances where
they changed: a node whose followed edges changed (a new edge, a new search, a child's value that
changes the book's move) is re-evaluated; a distance can fall along new or cheaper edges (relaxed,
as Dijkstra does), or rise when an edge it came by is no longer followed (its subtree of the
shortest-path tree is reset and recomputed from the edges into it). A node that a path newly
reaches is read then (with every node waiting in Dijkstra's heap, in one query); nodes no path
reaches any more (lines the book left as its values moved: 95% of a 10^4-node book with tiny
searches) are dropped once they outnumber the ``slack``. The next candidates are then the first of
a heap of candidates, O(log N) each, and the same, cost for cost, as a ``reach_candidates`` over
the whole book (``tests/book/test_schedule.py``, with nodes dropped at once and not).

The index keeps a node's cheapest candidate only, not all of them: a schedule takes at most one
expansion a node at its number of edges (``next``), and a node scheduled there offers nothing more
until an edge is added, when its rule is read again. A node is held as an ``IndexNode``, what the
rule reads of it (its book moves, its best move outside the book, its opponent's likely replies
folded into followed edges and one cheapest reply), not its parsed search.
"""

from __future__ import annotations

import heapq
import math

from sqlalchemy import Connection

from dataclasses import dataclass

from obook.book.minimax import (CONSTANTS, Bounds, MinimaxConstants, RootMove, book_edges, chosen_edge,
                                node_from_row, own_bounds_of)
from obook.go.board import PASS
from obook.store.minimax import (IndexRow, changed_index_rows, jobs_so_far, last_change, read_index_rows,
                                 scheduled_generations, scheduled_since)

COLOURS = (0, 1)


@dataclass(slots=True)
class IndexNode:
    """What the reach rule reads of a node, for either colour of the book player (``_rule``)."""

    moves: str  # a path from the empty board (what a scheduled expansion replays)
    depth: int
    edges: dict[int, tuple[int, float]]  # canonical move -> (child key, prior)
    best_new: RootMove | None  # the search's best move outside the book: the book player's candidate
    replies: dict[int, float]  # the opponent's likely replies in the book: child -> cost (-log of prior)
    reply: tuple[float, int] | None  # the cheapest likely reply not in the book: (cost, move)

    @classmethod
    def from_row(cls, row, constants: MinimaxConstants) -> IndexNode:
        node = node_from_row(row)  # parsed whole once, then dropped
        replies: dict[int, float] = {}
        reply = None
        for move, share in node.likely_moves(constants.reply_temperature):
            cost = -math.log(max(share, constants.min_prior))
            if move in node.edges:
                child = node.edges[move][0]
                if cost < replies.get(child, math.inf):
                    replies[child] = cost
            elif move != PASS and (reply is None or (cost, move) < reply):
                reply = (cost, move)
        return cls(node.moves, node.depth, node.edges, node.best_new(), replies, reply)


class ReachIndex:
    """The reach candidates of one book, maintained from the store's changes (module docstring)."""

    def __init__(self, book_id: int, root: int, constants: MinimaxConstants = CONSTANTS, slack: int = 5000):
        self.book_id = book_id
        self.slack = slack  # nodes held though no longer reached, before they are all dropped
        self.root = root
        self.constants = constants
        self.nodes: dict[int, IndexNode] = {}  # the nodes held: reached in either colour, or lately
        self.values: dict[int, Bounds] = {}  # the stored figures of the nodes held and of their children
        self.parents: dict[int, set[int]] = {}  # a held node's children -> their held parents
        self.searches: dict[int, tuple[int, int, int, int]] = {}  # what a node was read from (``_search_of``)
        self.started = False
        self.seq = 0  # the last change of the store read
        self.last_job = 0  # the last expansion id read
        self.taken: dict[int, int] = {}  # a held node (and the root) -> the highest generation scheduled
        self.job_count = 0  # expansions scheduled (every row of ``expansions``: none is ever deleted)
        self.dist: list[dict[int, float]] = [{}, {}]
        self.via: list[dict[int, int | None]] = [{}, {}]  # shortest-path tree: a node's predecessor
        self.tree: list[dict[int, set[int]]] = [{}, {}]  # the tree's children
        self.out: list[dict[int, dict[int, float]]] = [{}, {}]  # followed edges: node -> child -> cost
        self.into: list[dict[int, dict[int, float]]] = [{}, {}]
        self.extra: list[dict[int, tuple[float, int]]] = [{}, {}]  # a node's cheapest candidate: (cost beyond it, move)
        self.best: dict[int, tuple[float, int]] = {}  # node -> its candidate (cost, move), the lower colour's
        # (cost, node, move), a heap with lazy deletion: an entry that is no longer its node's ``best``
        # is dropped when met. Re-ranking a subtree whose reach changed is then a push a node, not a
        # removal and an insertion in a sorted list (a quarter of the driver's time at 6 x 10^4)
        self.heap: list[tuple[float, int, int]] = []
        self.rows_read = 0  # nodes read in full by the last refresh

    # ---- reading the store ---------------------------------------------------------------------

    def refresh(self, conn: Connection) -> int:
        """Read what changed since the last refresh and repair the candidates; returns how many nodes
        were read in full (the first time, those reached from the root; then the held ones that
        changed and those newly reached)."""
        self.rows_read = 0
        review: set[int] = set()
        if not self.started:
            self.seq = last_change(conn, self.book_id)
            self.job_count, self.last_job = jobs_so_far(conn, self.book_id)
            self.started = True
            self.taken.update(scheduled_generations(conn, self.book_id, [self.root]))
            review |= self._read(conn, [self.root])
        else:
            # every changed node is read in full, in one query: the new ones (an expansion's child, most
            # often reached at once) are not yet known as anybody's child; those no path reaches are
            # dropped with the others
            rows, self.seq = changed_index_rows(conn, self.book_id, self.seq)
            for _, key, generation in self._new_jobs(conn):
                self.job_count += 1
                if key in self.nodes or key == self.root:
                    self.taken[key] = max(self.taken.get(key, -1), generation)
            for key in rows:
                review.update(self.parents.get(key, ()))  # a child's value may change its parent's book move
            review |= self._hold(rows)
        for colour in COLOURS:
            self._repair(conn, colour, review)
        if len(self.nodes) > self.slack and len(self.nodes) > self._reached() + self.slack:
            self._forget_unreached()
        return self.rows_read

    def _read(self, conn: Connection, keys) -> set[int]:
        """Read ``keys`` in full (held or newly reached); returns those whose rule may have changed (a
        new search or new edges, or newly held)."""
        return self._hold(read_index_rows(conn, self.book_id, keys)) if keys else set()

    def _hold(self, rows: dict[int, IndexRow]) -> set[int]:
        """Hold the nodes read (``_read``)."""
        self.rows_read += len(rows)
        touched = set()
        for key, found in rows.items():
            row = found.node
            self.values[key] = Bounds(row.value, row.lcb, row.ucb)
            for child, bounds in found.children.items():
                self.values[child] = Bounds(*bounds)
            if found.taken is not None:
                self.taken[key] = max(self.taken.get(key, -1), found.taken)
            search = _search_of(row)
            if self.searches.get(key) == search:
                continue
            node = IndexNode.from_row(row, self.constants)
            for child, _prior in node.edges.values():
                self.parents.setdefault(child, set()).add(key)
            self.nodes[key] = node
            self.searches[key] = search
            touched.add(key)
        return touched

    def _new_jobs(self, conn: Connection) -> list[tuple[int, int, int]]:
        jobs = scheduled_since(conn, self.book_id, self.last_job)
        if jobs:
            self.last_job = jobs[-1][0]
        return jobs

    def _reached(self) -> int:
        return len(self.dist[0].keys() | self.dist[1].keys())

    def _forget_unreached(self) -> None:
        """Drop the nodes neither colour reaches (lines the book left): a node is read again when a
        path reaches it, so the index holds what the schedule can reach, not the whole book."""
        gone = [key for key in self.nodes if key not in self.dist[0] and key not in self.dist[1]]
        for key in gone:
            for colour in COLOURS:
                for child in self.out[colour].pop(key, {}):
                    into = self.into[colour].get(child)
                    if into is not None:
                        into.pop(key, None)
                        if not into:
                            del self.into[colour][child]
                self.extra[colour].pop(key, None)
                self.tree[colour].pop(key, None)
            del self.nodes[key]
            del self.searches[key]
            self.best.pop(key, None)
            if key != self.root:
                self.taken.pop(key, None)
        self.parents = {}
        for key, node in self.nodes.items():
            for child, _prior in node.edges.values():
                self.parents.setdefault(child, set()).add(key)
        self.values = {key: b for key, b in self.values.items() if key in self.nodes or key in self.parents}

    # ---- the next expansions -------------------------------------------------------------------

    def next(self, count: int):
        """(cost, key, move) of the ``count`` cheapest candidates whose node is not scheduled at its
        number of edges now, cheapest first (as ``expansion.schedule`` takes them)."""
        out, chosen, kept = [], set(), []
        heap, best = self.heap, self.best
        while heap and len(out) < count:
            entry = heapq.heappop(heap)
            cost, key, move = entry
            if best.get(key) != (cost, move):
                continue  # stale
            kept.append(entry)  # still a candidate, chosen or not: back in the heap below
            generation = len(self.nodes[key].edges)
            if self.is_taken(key, generation) or (key, generation) in chosen:
                continue
            chosen.add((key, generation))
            out.append(entry)
        for entry in kept:
            heapq.heappush(heap, entry)
        if len(heap) > 2 * len(best) + 1024:  # mostly stale: rebuilt from the live costs
            self.heap = [(cost, key, move) for key, (cost, move) in best.items()]
            heapq.heapify(self.heap)
        return out

    def is_taken(self, key: int, generation: int) -> bool:
        """Whether the expansion of ``key`` at ``generation`` edges was scheduled (``key`` held, or the root)."""
        return self.taken.get(key, -1) >= generation

    def candidates(self) -> list[tuple[float, int, int]]:
        """Each node's cheapest candidate (cost, key, move), cheapest first (the first of each node in
        what ``reach_candidates`` computes over the whole book)."""
        return sorted((cost, key, move) for key, (cost, move) in self.best.items())

    # ---- the shortest paths --------------------------------------------------------------------

    def _rule(self, key: int, colour: int) -> tuple[dict[int, float], tuple[float, int] | None]:
        """The node's followed edges (child -> cost) and its cheapest candidate (cost, move) for the
        book player of ``colour`` (``reach_candidates``'s step)."""
        node, stored = self.nodes[key], self.values
        if node.depth >= self.constants.max_depth:
            return {}, None
        if node.depth % 2 == colour:
            chosen = chosen_edge(book_edges(node.edges, self.values), own_bounds_of(node.best_new, self.constants))
            if chosen is not None:
                return ({chosen.child: 0.0} if chosen.child in stored else {}), None
            new = node.best_new
            return {}, ((0.0, new.move) if new is not None and new.move != PASS else None)
        return {child: cost for child, cost in node.replies.items() if child in stored}, node.reply

    def _apply_rule(self, colour: int, key: int, raised: list[int], cheaper: set[int], dirty: set[int]) -> None:
        """Bring the node's followed edges and candidate up to date for ``colour``: children whose path
        came by an edge no longer followed go to ``raised``, a node with an edge new or cheaper to
        ``cheaper``, a node whose candidate changed to ``dirty``."""
        out, into, extra, via = self.out[colour], self.into[colour], self.extra[colour], self.via[colour]
        new_out, new_extra = self._rule(key, colour)
        old_out = out.get(key, {})
        for child, w in old_out.items():
            if new_out.get(child, math.inf) > w:
                edges_in = into.get(child)
                if edges_in is not None:
                    edges_in.pop(key, None)
                    if not edges_in:
                        del into[child]
                if via.get(child) == key:
                    raised.append(child)
        for child, w in new_out.items():
            into.setdefault(child, {})[key] = w
            if w < old_out.get(child, math.inf):
                cheaper.add(key)
        if new_out:
            out[key] = new_out
        else:
            out.pop(key, None)
        if extra.get(key) != new_extra:
            if new_extra is None:
                del extra[key]
            else:
                extra[key] = new_extra
            dirty.add(key)

    def _repair(self, conn: Connection, colour: int, review: set[int]) -> None:
        dist, via, tree = self.dist[colour], self.via[colour], self.tree[colour]
        out, into = self.out[colour], self.into[colour]
        raised: list[int] = []
        heap: list[tuple[float, int, int | None]] = []
        dirty: set[int] = set()
        cheaper: set[int] = set()  # nodes with an edge new or cheaper: relaxed once the resets are done
        for key in review:
            if key in self.nodes:
                self._apply_rule(colour, key, raised, cheaper, dirty)
        if self.root in self.nodes and self.root not in dist:
            heapq.heappush(heap, (0.0, self.root, None))
        # a distance that rises: reset the subtree of the shortest-path tree below the edges no longer
        # followed (or dearer), then reach it again from the edges into it
        reset: set[int] = set()
        stack = [k for k in raised if k != self.root]
        while stack:
            key = stack.pop()
            if key in reset:
                continue
            reset.add(key)
            stack.extend(tree.get(key, ()))
        for key in reset:
            self._unlink(colour, key)
            del dist[key]
            dirty.add(key)
        for key in reset:
            for parent, w in into.get(key, {}).items():
                if parent in dist:
                    heapq.heappush(heap, (dist[parent] + w, key, parent))
        for key in cheaper:
            if key in dist:
                for child, w in out.get(key, {}).items():
                    heapq.heappush(heap, (dist[key] + w, child, key))
        while heap:
            d, key, parent = heapq.heappop(heap)
            if d >= dist.get(key, math.inf):
                continue
            if key not in self.nodes:
                self._read_reached(conn, colour, {k for _, k, _ in heap if k not in self.nodes} | {key}, dirty)
                if key not in self.nodes:
                    continue  # not stored after all
            self._unlink(colour, key)
            dist[key], via[key] = d, parent
            if parent is not None:
                tree.setdefault(parent, set()).add(key)
            dirty.add(key)
            for child, w in out.get(key, {}).items():
                if d + w < dist.get(child, math.inf):
                    heapq.heappush(heap, (d + w, child, key))
        for key in dirty:
            self._rank(key)

    def _read_reached(self, conn: Connection, colour: int, keys: set[int], dirty: set[int]) -> None:
        """Read nodes that a path newly reaches in ``colour`` (every node waiting in Dijkstra's heap will
        be reached), and the nodes their followed edges lead to, a level a query: a line the book
        comes back to is read in as many queries as it is deep, not one a node."""
        out = self.out[colour]
        while keys:
            for new in self._read(conn, keys):
                for either in COLOURS:
                    self._apply_rule(either, new, [], set(), dirty)
            keys = {child for key in keys for child in out.get(key, ()) if child not in self.nodes}

    def _unlink(self, colour: int, key: int) -> None:
        parent = self.via[colour].pop(key, None)
        if parent is not None:
            self.tree[colour].get(parent, set()).discard(key)

    def _rank(self, key: int) -> None:
        """Bring ``key``'s candidate up to date (the cheaper colour's)."""
        cheapest = None
        for colour in COLOURS:
            d = self.dist[colour].get(key)
            candidate = self.extra[colour].get(key)
            if d is not None and candidate is not None and (cheapest is None or (d + candidate[0], candidate[1]) < cheapest):
                cheapest = (d + candidate[0], candidate[1])
        if cheapest is None:
            self.best.pop(key, None)
        elif self.best.get(key) != cheapest:
            self.best[key] = cheapest
            heapq.heappush(self.heap, (cheapest[0], key, cheapest[1]))


def _search_of(row) -> tuple[int, int, int, int]:
    """What a node's rule is read from, as a key that changes when it does (its search's text, its
    play policy, its edges: edges are only ever added): most nodes a refresh reads have only new
    figures, which the back-up writes along every path up from an expansion, and need not be parsed
    again."""
    return hash(row.policy), hash(row.play_policy), row.searched_edges, len(row.edges)
