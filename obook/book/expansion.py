"""Growing a minimax book: one expansion, the function the embedded build and the grid workers share.

An expansion of node X (a leased row of ``expansions``, see ``obook.store.minimax``):

1. the move to add: the expansion's own (a book with ``reach`` expansion names it when it
   schedules the expansion), else X's best move outside the book: the first of its stored search's
   root moves that is not a book move now, when that move has at least ``reuse_min_visits`` visits;
   otherwise X is searched again with its book moves excluded (S playouts, the book's search
   settings);
2. that move becomes an edge; its child is searched (S playouts, nothing excluded) unless it is in
   the book already (a transposition or a symmetric copy); in a ``reach`` book a new node is also
   searched ``play_searches`` times at the play budget (or once by each engine of the book's
   opponent population, ``opponent_configs``), nothing excluded, whose mean visit shares are its
   play policy (the opponent's model);
3. the result (the searches and the edge) is staged while the lease holds, then applied under the
   book's lock with every other result staged meanwhile, in one transaction that runs the back-up
   over the nodes they changed and their ancestors (``obook.store.minimax.apply_staged``,
   ``obook.book.backup.back_up_after``).

An expansion is a unit of leased work like a game (``obook.store.jobs``): ``Expander`` is its
worker (``obook.book.kinds``), run by the same worker loop, grid task and driver as self-play.

Searches are seeded from the expansion's seed, so a repeated expansion (its worker died) searches
as the first would have. The lease is renewed from the search's progress callback; a lost lease
cancels the search and nothing is written.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
from dataclasses import dataclass

from obook.book.backup import back_up_after, load_nodes
from obook.book.keys import ENGINE_VERSION, canonical_move, canonical_view, replay, require_engine, require_keys
from obook.book.minimax import (
    CONSTANTS,
    MinimaxConstants,
    RootMove,
    back_up,
    expansion_costs,
    format_play_policy,
    format_root_moves,
    node_from_row,
)
from obook.book.schedule import ReachIndex
from obook.book.selfplay import move_seed, mutation_config
from obook.config import settings
from obook.errors import ObookError
from obook.go.board import BLACK, PASS
from obook.go.position import Position
from obook.search.config import SearchConfig
from obook.search.player import ROOT_MOVES, CancelToken
from obook.search.players import make_player
from obook.store import jobs
from obook.store.books import BookInfo, lock_schedule, try_lock_book
from obook.store.db import Store
from obook.store.leases import ExpansionLease, LeaseLost, new_worker_id
from obook.store.minimax import (ExpansionRow, NewEdge, NodeRow, SearchedNode, StagedResult, apply_staged,
                                 has_staged, node_exists, read_nodes, schedule_expansion, scheduled)

log = logging.getLogger(__name__)

def play_playouts(book: BookInfo) -> int:
    """The play budget a ``reach`` book models its opponent with: the book's, else S / 100."""
    return book.play_playouts or max(1, SearchConfig.from_spec(book.search or None).playouts // 100)


def opponent_configs(book: BookInfo) -> list[SearchConfig]:
    """The engines a ``reach`` book models its opponents with: its population (``book.opponents``,
    specs separated by ``;``, each applied over the book's search at the play budget, e.g.
    ``playouts=150;playouts=600;prior_model=off``), else the book's search at the play budget. A
    population makes the book cover the replies of several engines, not those of one budget.

    The one home of this rule: a new book's settings are checked by it (``BookSettings.validated``,
    ``book`` being the settings), so that a member this rule refuses is an error naming it there,
    not a failure of the build's first expansion."""
    base = SearchConfig.from_spec(book.search or None).replace(playouts=play_playouts(book), seconds=0.0)
    configs = []
    for spec in opponent_specs(book.opponents) or [""]:
        try:
            configs.append(base.replace(**SearchConfig.parse_spec(spec)))
        except ObookError as exc:
            raise ObookError(f"opponent {spec!r}: {exc}") from None
    return configs


def opponent_specs(opponents: str | None) -> list[str]:
    """The members of an opponent population as written (``--opponents``: search specs separated
    by ``;``), blanks dropped."""
    return [spec.strip() for spec in (opponents or "").split(";") if spec.strip()]


def expansion_seed(key: int, generation: int, move: int | None, salt: int = 0) -> int:
    """The seed of an expansion's searches: a function of what it expands (the position, its number
    of edges, the move to add) and of the book's seed salt, not of when or where it runs, so that two
    builds with the same settings, embedded or on the grid in any order, search every node they
    share alike and differ only in which nodes they reach (``benchmarks/minimax_grid.py`` compares
    them); two builds that differ only in their salt show the spread between builds."""
    text = f"{key}:{generation}:{move}" + (f":{salt}" if salt else "")
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def root_key(book: BookInfo) -> int:
    return canonical_view(Position(size=book.size, komi=book.komi, superko=book.superko))[0]


@dataclass
class HeldExpansion:
    """An expansion this worker holds the lease of."""

    job: ExpansionRow

    @property
    def id(self) -> int:
        return self.job.id


class Expander:
    """Expands one minimax book's nodes for one owner (a local process or a grid worker): the
    worker of a search-valued book (``obook.book.kinds``)."""

    def __init__(self, store: Store, book: BookInfo, owner: str | None = None, lease_seconds: float | None = None,
                 kind: str = "local", constants: MinimaxConstants = CONSTANTS, heartbeat_seconds: float = 0.0):
        require_keys(book, "expand it")
        require_engine(book, "expand it")
        self.store = store
        self.book = book
        self.constants = constants
        self.config = mutation_config(book)
        self.player = make_player(self.config)
        if ROOT_MOVES not in self.player.root_controls:  # a re-search excludes the book's moves at the root

            raise ObookError(f"search {self.config.to_spec()!r} cannot exclude root moves: a minimax book needs uct")
        self.play_players = []  # the opponent model's engines, one per search of a node's play policy
        if book.expansion == "reach":
            configs = opponent_configs(book)
            players = {config: make_player(config) for config in dict.fromkeys(configs)}
            count = constants.play_searches if len(configs) == 1 else len(configs)
            self.play_players = [players[configs[i % len(configs)]] for i in range(count)]
        self.lease = ExpansionLease(store, owner or new_worker_id(kind), lease_seconds or settings().lease_seconds,
                                    kind=kind, engine_version=ENGINE_VERSION, heartbeat_seconds=heartbeat_seconds)

    @property
    def owner(self) -> str:
        return self.lease.owner

    @property
    def lease_seconds(self) -> float:
        return self.lease.lease_seconds

    def claim(self, unit_id: int | None = None, handoff: str | None = None) -> HeldExpansion | None:
        """Take a pending expansion nobody works on (``unit_id``: that one; with ``handoff``, a grid
        token, also when that token holds it)."""
        job = self.lease.claim(self.book.id, unit_id, handoff)
        return HeldExpansion(job) if job is not None else None

    def release(self, held: HeldExpansion) -> None:
        self.lease.release(held.job)

    def advance(self, held: HeldExpansion, more: bool = False) -> bool:
        """Run the held expansion and store it: an expansion is done in one step."""
        self.expand(held.job)
        return True

    # ---- one expansion ---------------------------------------------------------------------------

    def expand(self, job: ExpansionRow) -> bool:
        """Run ``job`` and store it; True when stored, ``LeaseLost`` when it is no longer ours."""
        result = self.prepare(job)
        self.lease.commit(job, result, lambda conn, book_id, changed, seq: back_up_after(
            conn, book_id, changed, self.constants, seq=seq))
        return True

    def prepare(self, job: ExpansionRow) -> StagedResult:
        """``job``'s searches and the edge it adds, read from the book as stored now; nothing written."""
        position = replay(self.book.size, self.book.komi, self.book.superko, list(job.moves))
        key, symmetries = canonical_view(position)
        if key != job.key:
            raise ValueError(f"expansion {job.id}: its moves reach key {key:x}, not {job.key:x}")
        children = {}  # the child of the move to add, when the expansion names it: read with the node
        named = position.from_canonical(job.move, symmetries[0]) if job.move not in (None, PASS) else None
        if named is not None and position.is_legal(named):
            after = position.copy()
            after.play(named)
            children[job.move] = (after, *canonical_view(after))
        with self.store.read() as conn:
            rows = read_nodes(conn, self.book.id, [key] + [child_key for _, child_key, _ in children.values()])
        stored = rows.get(key)
        node = node_from_row(stored) if stored is not None else None
        edges = dict(node.edges) if node is not None else {}
        best = node.best_new() if node is not None else None
        parent = None
        searched = node
        if job.move is not None and node is not None:
            best = RootMove(job.move, 0, 0.0)
        elif best is None or best.visits < self.constants.reuse_min_visits:
            excluded_prior = min(sum(prior for _, prior in edges.values()), 1.0)
            root_moves, score = self.search(job, position, symmetries, set(edges), 0)
            play_policy = self.play_policy(job, position, symmetries) if node is None else None
            parent = SearchedNode(key, list(job.moves), format_root_moves(root_moves), len(edges), excluded_prior,
                                  self.config.playouts, self.config.to_spec(), move_seed(job.seed, 0), ENGINE_VERSION,
                                  format_play_policy(play_policy) if play_policy is not None else None,
                                  score if node is None else None)
            searched = node_from_row(_as_row(parent, edges, stored))
            best = next((m for m in root_moves if m.move not in edges), None)
        edge = child = None
        if best is not None and best.move != PASS and best.move not in edges:
            if best.move in children:
                after, child_key, child_symmetries = children[best.move]
                known = child_key in rows
            else:
                after = position.copy()
                after.play(position.from_canonical(best.move, symmetries[0]))
                child_key, child_symmetries = canonical_view(after)
                with self.store.read() as conn:
                    known = node_exists(conn, self.book.id, child_key)
            edge = NewEdge(best.move, child_key, searched.prior(best.move) if searched is not None else 0.0)
            if not known:
                child_moves, child_score = self.search(job, after, child_symmetries, set(), 1)
                play_policy = self.play_policy(job, after, child_symmetries)
                child = SearchedNode(child_key, [after.vertex(p) for _, p in after.moves],
                                     format_root_moves(child_moves), 0, 0.0,
                                     self.config.playouts, self.config.to_spec(), move_seed(job.seed, 1),
                                     ENGINE_VERSION, format_play_policy(play_policy) if play_policy is not None else None,
                                     child_score)
        return StagedResult(parent, edge, child)

    def play_policy(self, job: ExpansionRow, position: Position, symmetries: list[int]) -> list[tuple[int, float]] | None:
        """The mean visit shares of the opponent model's searches of ``position`` (``play_searches``
        at the play budget, or one by each engine of the population; None: the book does not use
        them). Seeded from the expansion, as its other searches."""
        if not self.play_players:
            return None
        shares: dict[int, float] = {}
        count = len(self.play_players)
        for i, player in enumerate(self.play_players):
            moves, _ = self.search(job, position, symmetries, set(), 10 + i, player)
            total = sum(m.visits for m in moves) or 1
            for m in moves:
                shares[m.move] = shares.get(m.move, 0.0) + m.visits / total / count
        return sorted(((m, s) for m, s in shares.items() if s >= 0.005), key=lambda ms: (-ms[1], ms[0]))

    def search(self, job: ExpansionRow, position: Position, symmetries: list[int], excluded: set[int],
               number: int, player=None) -> tuple[list[RootMove], float | None]:
        """The root moves (canonical) of a search of ``position`` (by ``player``, else the book's
        searcher) that avoids every point whose canonical move is ``excluded``, and the search's
        mean final score, Black's (area less komi; None: the search kept none). Symmetric copies of
        a move are one move, with their visits summed (its prior and its error) and ranked by its
        most visited copy (the search's choice)."""
        player = player or self.player
        avoid = frozenset(p for p in position.points()
                          if excluded and canonical_move(position, p, symmetries) in excluded)
        allowed = (lambda point: point not in avoid) if avoid else None
        player.new_game()
        player.reseed(move_seed(job.seed, number))
        interval = max(1.0, self.lease_seconds / 4)
        cancel = CancelToken()
        lost: list[LeaseLost] = []

        def keep_lease(_result) -> None:
            try:
                self.lease.renew(job)
            except LeaseLost as exc:
                lost.append(exc)
                cancel.cancel()

        result = player.genmove(position, on_progress=keep_lease, progress_interval=interval, cancel=cancel,
                                     root_moves=allowed)
        if lost:
            raise lost[0]
        score = result.score_mean
        if score is not None and position.to_move != BLACK:
            score = -score
        return merge_symmetric([(PASS if s.point == PASS else canonical_move(position, s.point, symmetries),
                                 s.visits, s.winrate) for s in result.moves]), score


def merge_symmetric(copies: list[tuple[int, int, float]]) -> list[RootMove]:
    """A search's root moves (canonical move, visits, win rate), symmetric copies of a move merged
    into one: visits summed (the move's prior, and the error of its value), the win rate their
    mean, ranked by the most visited copy, the search's choice. Ranked by the sum, a move with 4
    copies, among which the search shares its visits, outranked on the empty board the centre
    point that every copy of it trailed."""
    merged: dict[int, tuple[int, float, int]] = {}
    for move, visits, winrate in copies:
        if visits <= 0:
            continue
        total, wins, most = merged.get(move, (0, 0.0, 0))
        merged[move] = (total + visits, wins + winrate * visits, max(most, visits))
    order = sorted(merged, key=lambda m: (-merged[m][2], -merged[m][1] / merged[m][0], m))
    return [RootMove(m, merged[m][0], merged[m][1] / merged[m][0]) for m in order]


def schedule(conn, book: BookInfo, count: int, target: int | None = None,
             constants: MinimaxConstants = CONSTANTS) -> list[int]:
    """Schedule the expansions of the ``count`` cheapest nodes not scheduled at their current
    number of edges (the root first, when the book is empty), never more than ``target`` done,
    pending and set aside in all (an expansion set aside is not replaced, as a game is not).
    Schedulers take turns (``lock_schedule``): two never pick the same node (and the table's
    unique key would refuse it) and the target is never overshot. They do not hold the book's
    lock, so results are applied while a scheduler chooses; an expansion is inserted only if its
    node still has the edges it was chosen with (an apply that lands between the choice and the
    insert makes it stale, and it is skipped). Results staged and not applied (their worker died
    between the two) are applied at the end, when nobody else holds the book's lock (whoever does
    applies them). A ``reach`` book's candidates come from this process's ``ReachIndex``, which
    reads only what changed since it last looked, and repairs it before taking the schedulers'
    lock (then once more under it, for what landed meanwhile); a ``cost`` book (KataGo's order,
    kept as the baseline it was measured against) is reloaded whole. Returns the new ids."""
    created = _schedule(conn, book, count, target, constants)
    if has_staged(conn, book.id) and try_lock_book(conn, book.id):
        apply_staged(conn, book.id, lambda conn, book_id, changed, seq: back_up_after(conn, book_id, changed, constants,
                                                                                      seq=seq), locked=True)
    return created


def book_constants(book: BookInfo, constants: MinimaxConstants = CONSTANTS) -> MinimaxConstants:
    """``constants`` with the book's own part of the rules: its reply temperature."""
    if constants.reply_temperature == book.reply_temperature:
        return constants
    return dataclasses.replace(constants, reply_temperature=book.reply_temperature)


def _schedule(conn, book: BookInfo, count: int, target: int | None, constants: MinimaxConstants) -> list[int]:
    constants = book_constants(book, constants)
    index = None
    if book.expansion == "reach":
        index = reach_index(conn, book, constants)
        index.refresh(conn)  # before the lock: the repair of what changed since the last look waits for nobody
    lock_schedule(conn, book.id)
    if index is not None:
        index.refresh(conn)  # under it: what landed meanwhile (what this transaction inserts, it reads at the next)
    if target is not None:
        if index is not None:  # every expansion ever scheduled is done, pending or set aside: the index counts them
            scheduled_so_far = index.job_count
        else:
            counts = jobs.counts(conn, jobs.EXPANSION_JOBS, book.id)
            scheduled_so_far = counts.done + counts.open + counts.set_aside
        count = min(count, target - scheduled_so_far)
    if count <= 0:
        return []
    root = index.root if index is not None else root_key(book)
    if index is not None:
        is_taken = index.is_taken
        if root not in index.nodes:
            choices = [] if is_taken(root, 0) else [(0.0, root, 0, [], None)]
        else:
            choices = [(cost, key, len(index.nodes[key].edges), index.nodes[key].moves.split(), move)
                       for cost, key, move in index.next(count)]
    else:
        nodes = load_nodes(conn, book.id)
        taken = scheduled(conn, book.id)

        def is_taken(key: int, generation: int) -> bool:
            return (key, generation) in taken

        if root not in nodes:
            choices = [] if is_taken(root, 0) else [(0.0, root, 0, [], None)]
        else:
            choices = ((cost, key, len(nodes[key].edges), nodes[key].moves.split(), None)
                       for cost, key in expansion_costs(nodes, root, back_up(nodes, constants), constants))
    created = []
    for cost, key, generation, moves, move in choices:
        if len(created) >= count:
            break
        if is_taken(key, generation):
            continue
        new_id = schedule_expansion(conn, book.id, key, generation, moves, cost,
                                    expansion_seed(key, generation, move, book.seed_salt), move, if_current=True)
        if new_id is not None:
            created.append(new_id)
    return created


_INDEXES: dict[tuple[str, int, object], ReachIndex] = {}


def reach_index(conn, book: BookInfo, constants: MinimaxConstants = CONSTANTS) -> ReachIndex:
    """This process's ``ReachIndex`` of ``book`` (one per database, book and creation time: a book
    made again under the same id is another book)."""
    key = (str(conn.engine.url), book.id, book.created_at)
    index = _INDEXES.get(key)
    if index is None or index.constants != constants:
        index = _INDEXES[key] = ReachIndex(book.id, root_key(book), constants)
    return index


def _as_row(search: SearchedNode, edges: dict, stored):
    """The node as it will be stored once ``search`` is written (its prior for the new edge)."""
    return NodeRow(key=search.key, moves=" ".join(search.moves), policy=search.policy,
                   searched_edges=search.searched_edges, excluded_prior=search.excluded_prior,
                   play_policy=search.play_policy if search.play_policy is not None else
                   (stored.play_policy if stored is not None else ""),
                   value=0.0, lcb=0.0, ucb=0.0, edges=dict(edges))
