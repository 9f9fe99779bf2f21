"""The search-valued book (``--algorithm minimax``): values backed up by minimax over the book's DAG,
the cost that chooses the next node to expand, and the rule that plays from it. Pure functions of
the nodes and edges; ``obook.store.minimax`` stores them, ``obook.book.backup`` keeps their stored
figures true, ``obook.book.expansion`` grows them.

The method is KataGo's book builder (``cpp/book/book.cpp``) on our engine, and Fuego's before it:

- every node (a canonical position) keeps the root moves of a deep search of it, made with the
  moves already in the book excluded (``RootMove``: visits and win rate of the player to move). Its
  *own* value is the best of those moves not in the book now: what the player to move gets by
  leaving the book here, with an error ``sqrt(w(1-w)/n + floor^2)`` (the floor stands for the
  search's bias, which no number of visits removes);
- values are backed up by minimax (negamax: every value is the player to move's win rate), with
  bounds: ``value(X) = max(own(X), max_c 1 - value(c))``, the lower bound from the children's upper
  bounds and the other way round (``back_up``);
- the score is backed up with the value, along the same line (``line_score``): a node's backed-up
  score is that of the line its value comes from, its best child's backed-up score or, where its own
  search's best move outside the book gives the value, that search's mean score. Unlike values,
  scores are *Black's* (area score less komi, as the search measures them), at every node whichever
  colour is to move, so they pass from child to parent unchanged; a reader turns them to the
  mover's side (``obook.book.lookup``). The back-up does not choose by score: it is shown, not yet
  played on (KataGo's ``utilityPerScore`` as a play rule would change 5% of games at most, since a
  reach book holds one own move at most nodes: ``benchmarks/book_rules.py``, docs/book.md);
- the next node to expand is the cheapest by a cost added up along the path from the root: a cost
  per move, the gap of the move's upper bound to the best move's, its ``-log`` prior (its share of
  the search's visits), less a bonus for an uncertain own value (``expansion_costs``);
- or, with the book's ``reach`` expansion, the next move added is the one likeliest to be reached
  in play (``reach_candidates``): the book player's own move where the book has none, and the
  opponent's replies by the policy of searches at the play budget, the budget of the engine the
  book is for, at the book's reply temperature (``tempered``);
- playing from the book takes the child with the best value, unless the node's own value is
  clearly better (the book move's value below the own value's lower bound), and leaves the book
  then (``book_move``).

The constants are ``MinimaxConstants``, in this one place.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Iterable, Iterator, NamedTuple

from obook.errors import ObookError
from obook.go.board import PASS

NO_MOVE = -2  # a node whose search found no move outside the book


@dataclass(frozen=True)
class MinimaxConstants:
    z: float = 2.0  # bounds: value -/+ z * error
    error_floor: float = 0.03  # the least error of a search's value (its bias, not its sampling noise)
    cost_per_move: float = 1.0  # each move from the root costs this much (depth)
    cost_per_ucb_gap: float = 10.0  # a move whose upper bound is 0.1 below the best's costs one move more
    cost_per_log_policy: float = 0.5  # -log(prior): moves the search rarely visits cost more
    cost_per_moves_expanded: float = 1.0  # adding a new move at a node with n book moves costs n more
    cost_per_squared_moves_expanded: float = 0.1  # ... and this times n^2 (KataGo: a book is deep, not wide)
    min_prior: float = 1e-3  # priors below this count as this in the cost
    bonus_per_error: float = 5.0  # an own value with error 0.1 gets half a move off its expansion cost
    reuse_min_visits: int = 1000  # a stored root move with fewer visits is re-searched, not reused
    max_depth: int = 60  # nodes this many moves deep are not expanded
    play_searches: int = 4  # reach expansion: searches at the play budget whose visit shares are a node's play policy
    reply_temperature: float = 1.0  # reach: a reply's probability is its play-policy share ** (1 / this), normalised


CONSTANTS = MinimaxConstants()

# A new reach book's reply temperature. A play policy is the mean visit share of searches at the play
# budget, but the opponent plays each search's most visited move, so its replies are more concentrated
# than the shares: over 5,608 replies of the engine at 5,000 playouts a move in the book's own recorded
# games, shares ** 2 (temperature 0.5) predict them best (mean log-likelihood -1.86, against -2.16 for
# the shares themselves; ``benchmarks/reply_model.py``). Books made before keep 1.0.
REPLY_TEMPERATURE = 0.5


def tempered(policy: list[tuple[int, float]], temperature: float) -> list[tuple[int, float]]:
    """``policy`` (move, share) with each share raised to ``1 / temperature`` and normalised: the
    probability that a player whose searches have these visit shares plays each move."""
    if temperature == 1.0:
        return policy
    weights = [(move, share ** (1.0 / temperature)) for move, share in policy]
    total = sum(w for _, w in weights)
    return [(move, w / total) for move, w in weights] if total > 0 else policy


@dataclass(frozen=True, slots=True)
class RootMove:
    move: int  # canonical point, PASS
    visits: int
    winrate: float  # of the player to move at the node


def format_root_moves(moves: list[RootMove]) -> str:
    return " ".join(f"{m.move}:{m.visits}:{m.winrate:.6f}" for m in moves)


def format_play_policy(policy: list[tuple[int, float]]) -> str:
    return " ".join(f"{move}:{share:.5f}" for move, share in policy)


def parse_play_policy(text: str) -> list[tuple[int, float]]:
    return [(int(move), float(share)) for move, share in (item.split(":") for item in text.split())]


def iter_root_moves(text: str) -> Iterator[RootMove]:
    """The root moves of a stored search ("move:visits:winrate ..."), parsed one at a time."""
    for item in text.split():
        move, visits, winrate = item.split(":")
        yield RootMove(int(move), int(visits), float(winrate))


def parse_root_moves(text: str) -> list[RootMove]:
    return list(iter_root_moves(text))


def first_new(root_moves: Iterable[RootMove], edges) -> RootMove | None:
    """The first of a search's root moves (ranked by the most visited copy) that is not one of the
    book moves ``edges`` now: the best move outside the book."""
    return next((m for m in root_moves if m.move not in edges), None)


@dataclass(slots=True)
class Node:
    """A node as the functions here read it (``node_from_row``: from ``obook.store.minimax``'s rows)."""

    key: int
    moves: str  # a path from the empty board
    root_moves: list[RootMove]  # of its last search, its choice first (book moves of then excluded)
    searched_edges: int  # edges it had when searched
    excluded_prior: float  # their summed priors
    edges: dict[int, tuple[int, float]] = field(default_factory=dict)  # canonical move -> (child key, prior)
    play_policy: list[tuple[int, float]] = field(default_factory=list)  # (move, share) at the play budget
    score_mean: float | None = None  # of its last search, Black's (None: not measured)

    @property
    def depth(self) -> int:
        return len(self.moves.split())

    @property
    def black_to_move(self) -> bool:
        return black_to_move(self.depth)

    def total_visits(self) -> int:
        return sum(m.visits for m in self.root_moves)

    def best_new(self) -> RootMove | None:
        """The first move of its search (ranked by the most visited copy) not in the book now."""
        return first_new(self.root_moves, self.edges)

    def prior(self, move: int) -> float:
        """A move's share of the visits of a search of this node with nothing excluded, estimated
        as (1 - the excluded moves' priors) x its share of the visits of the last search."""
        total = self.total_visits()
        visits = next((m.visits for m in self.root_moves if m.move == move), 0)
        return max(0.0, 1.0 - self.excluded_prior) * visits / total if total else 0.0

    def play_prior(self, move: int) -> float:
        """How likely a player at the play budget is to play ``move`` here: its share of the visits
        of the play-budget searches (``prior`` when the node has none)."""
        if not self.play_policy:
            return self.prior(move)
        return next((share for m, share in self.play_policy if m == move), 0.0)

    def likely_moves(self, temperature: float = 1.0) -> list[tuple[int, float]]:
        """(move, probability that the opponent plays it), likeliest first: the play policy (the
        search's priors when the node has none) at the book's reply ``temperature`` (``tempered``)."""
        if self.play_policy:
            policy = sorted(self.play_policy, key=lambda ms: (-ms[1], ms[0]))
        else:
            policy = [(m.move, self.prior(m.move)) for m in self.root_moves]
        return tempered(policy, temperature)


def node_from_row(row) -> Node:
    """A stored node (``obook.store.minimax.NodeRow``) as the functions here read it."""
    return Node(key=row.key, moves=row.moves, root_moves=parse_root_moves(row.policy),
                searched_edges=row.searched_edges, excluded_prior=row.excluded_prior, edges=dict(row.edges),
                play_policy=parse_play_policy(row.play_policy), score_mean=row.score_mean)


def stored_best_new(row) -> RootMove | None:
    """``node_from_row(row).best_new()`` of a stored node, its search's root moves parsed only up to
    that move: all a lookup needs of them (a root searched at 78 moves has a few in the book)."""
    return first_new(iter_root_moves(row.policy), row.edges)


def stored_own_prior(row, best: RootMove | None) -> float:
    """``node_from_row(row).prior(best.move)`` of a stored node whose best move outside the book is
    ``best`` (0: none): what ``searched_edge`` weighs that move by."""
    if best is None:
        return 0.0
    total = sum(m.visits for m in iter_root_moves(row.policy))
    return max(0.0, 1.0 - row.excluded_prior) * best.visits / total if total else 0.0


@dataclass(frozen=True, slots=True)
class Bounds:
    value: float
    lcb: float
    ucb: float
    score: float | None = None  # backed up (``back_up``): Black's score on the line of ``value``


def black_to_move(depth: int) -> bool:
    """Whether Black is to move at a node ``depth`` moves (passes included) from the empty board."""
    return depth % 2 == 0


def line_score(value: float, lines: Iterable[tuple[float, float | None]], black: bool) -> float | None:
    """The backed-up score of a node whose backed-up value is ``value``, its ``lines`` (the value
    of each for the player to move, Black's score on it) the moves it chooses among: its own best
    move outside the book (its search's mean score) and its book moves (their children's backed-up
    scores). The score of the line whose value is ``value``; of several (equal values), the best
    score for the player to move (Black to move: ``black``), so that the choice does not depend on
    the order in which the lines are read (the back-up from scratch and the incremental one read
    children in different orders and must agree exactly). Lines with no score are passed over;
    None when none has one."""
    scores = [score for v, score in lines if v == value and score is not None]
    if not scores:
        return None
    return max(scores) if black else min(scores)


def own_error(node: Node, constants: MinimaxConstants = CONSTANTS) -> float:
    """The error of the node's own value: sampling noise and the floor (0 with no move outside)."""
    return own_error_of(node.best_new(), constants)


def own_error_of(best: RootMove | None, constants: MinimaxConstants = CONSTANTS) -> float:
    """``own_error`` of a node whose best move outside the book is ``best``."""
    if best is None:
        return 0.0
    w = best.winrate
    return math.sqrt(w * (1 - w) / max(best.visits, 1) + constants.error_floor ** 2)


def own_bounds(node: Node, constants: MinimaxConstants = CONSTANTS) -> Bounds:
    """What the player to move gets by leaving the book at ``node``: the best move outside it.
    No such move (every legal move is in the book): nothing, 0."""
    return own_bounds_of(node.best_new(), constants)


def own_bounds_of(best: RootMove | None, constants: MinimaxConstants = CONSTANTS) -> Bounds:
    """``own_bounds`` of a node whose best move outside the book is ``best``."""
    if best is None:
        return Bounds(0.0, 0.0, 0.0)
    w, error = best.winrate, own_error_of(best, constants)
    return Bounds(w, max(0.0, w - constants.z * error), min(1.0, w + constants.z * error))


def back_up(nodes: dict[int, Node], constants: MinimaxConstants = CONSTANTS) -> dict[int, Bounds]:
    """Every node's minimax value and bounds (player to move's win rate), children first. An edge
    to a node not stored yet counts as nothing; an edge that closes a cycle (a repeated position)
    is left out."""
    values: dict[int, Bounds] = {}
    on_path: set[int] = set()
    for start in nodes:
        if start in values:
            continue
        stack = [(start, iter(nodes[start].edges.values()))]
        on_path.add(start)
        while stack:
            key, children = stack[-1]
            descended = False
            for child, _prior in children:
                if child in nodes and child not in values and child not in on_path:
                    stack.append((child, iter(nodes[child].edges.values())))
                    on_path.add(child)
                    descended = True
                    break
            if descended:
                continue
            stack.pop()
            on_path.discard(key)
            values[key] = _node_bounds(nodes[key], values, constants)
    return values


def _node_bounds(node: Node, values: dict[int, Bounds], constants: MinimaxConstants) -> Bounds:
    best = node.best_new()
    own = own_bounds_of(best, constants)
    value, lcb, ucb = own.value, own.lcb, own.ucb
    lines = [(own.value, node.score_mean)] if best is not None else []
    for child, _prior in node.edges.values():
        b = values.get(child)
        if b is None:
            continue
        value, lcb, ucb = max(value, 1 - b.value), max(lcb, 1 - b.ucb), max(ucb, 1 - b.lcb)
        lines.append((1 - b.value, b.score))
    return Bounds(value, lcb, ucb, line_score(value, lines, node.black_to_move))


class EdgeView(NamedTuple):
    """A book move from the mover's side: its child's bounds turned around. (A named tuple: a
    lookup makes one per book move, in a third of a frozen dataclass's time.)"""

    move: int
    child: int
    prior: float
    value: float
    lcb: float
    ucb: float


def edge_views(node: Node, values: dict[int, Bounds]) -> list[EdgeView]:
    """The node's book moves, best value first."""
    return book_edges(node.edges, values)


def book_edges(edges: dict[int, tuple[int, float]], values: dict[int, Bounds]) -> list[EdgeView]:
    """``edge_views`` of a node whose book moves are ``edges`` (move -> (child, prior))."""
    out = []
    for move, (child, prior) in edges.items():
        b = values.get(child)
        if b is not None:
            out.append(EdgeView(move, child, prior, 1 - b.value, 1 - b.ucb, 1 - b.lcb))
    out.sort(key=lambda e: (-e.value, -e.lcb, e.move))
    return out


def book_move(node: Node, values: dict[int, Bounds], constants: MinimaxConstants = CONSTANTS) -> EdgeView | None:
    """The book's move at ``node``: the child with the best value, unless the node's own value (the
    search's best move outside the book) is clearly better, the book move's value below the own
    value's lower bound; None: leave the book.

    Not "the best lower bound against the own lower bound" (the first rule, measured in
    docs/book.md): a book move's bounds are backed up through the opponent's best of several noisy
    replies at every level, so the more a move is explored the lower they sink, and a book of 1,300
    expansions left itself at the root for a move searched once. Leaving needs evidence."""
    return chosen_edge(edge_views(node, values), own_bounds(node, constants))


def chosen_edge(edges: list[EdgeView], own: Bounds) -> EdgeView | None:
    """``book_move`` of a node whose book moves are ``edges`` (``edge_views``, best value first) and
    whose own bounds are ``own``."""
    if not edges:
        return None
    best = edges[0]
    return best if best.value >= own.lcb else None


PLAY_CHOICES = ("value", "search")  # how a player picks among a node's moves: ``chosen_edge``, ``searched_edge``
DEFAULT_PLAY_CHOICE = "value"


def check_play_choice(choice: str) -> str:
    """``choice`` if it is one of ``PLAY_CHOICES``; else an error naming them."""
    if choice not in PLAY_CHOICES:
        raise ObookError(f"unknown book choice {choice!r}; choose one of {', '.join(PLAY_CHOICES)}")
    return choice


def searched_edge(edges: list[EdgeView], own_prior: float) -> EdgeView | None:
    """The move the node's deep searches visited most: the book move with the largest prior (its
    share of the visits of the search that added it), unless the best move outside the book has a
    larger one (``own_prior``, its share of the node's last search); None: that move, out of book.

    The back-up's best value (``chosen_edge``) takes the maximum of noisy values, and the values of
    the moves the book explored least are the noisiest (the winner's curse); a deep search's visit
    counts are its own robust choice (the most visited move, not the best mean), and the book keeps
    them at every node. Measured at 0.25 s a move (docs/book.md): on the lines played the two rules
    choose the same moves in 95% of games, so neither is shown better; ``value`` stays the default."""
    if not edges:
        return None
    best = max(edges, key=lambda e: (e.prior, e.value, -e.move))
    return best if best.prior >= own_prior else None


def _cheapest_first(nodes: dict[int, Node], root: int, steps) -> None:
    """Visit every node reachable from ``root`` once, in the order of its least path cost
    (Dijkstra): ``steps(key, cost)`` visits a node and returns (child, the child's cost through
    it) for the edges to follow; children not stored are skipped."""
    least = {root: 0.0}
    heap = [(0.0, root)]
    done: set[int] = set()
    while heap:
        d, key = heapq.heappop(heap)
        if key in done:
            continue
        done.add(key)
        for child, cost in steps(key, d):
            if child in nodes and child not in done and cost < least.get(child, math.inf):
                least[child] = cost
                heapq.heappush(heap, (cost, child))


def expansion_costs(nodes: dict[int, Node], root: int, values: dict[int, Bounds],
                    constants: MinimaxConstants = CONSTANTS) -> list[tuple[float, int]]:
    """(cost, key) of every expandable node reachable from ``root``, cheapest first.

    A node's path cost is the least, over paths from the root, of the sum of its edges' costs;
    an edge costs ``cost_per_move + cost_per_ucb_gap * (best upper bound at the parent - the
    move's upper bound) + cost_per_log_policy * -log(prior)``. Expanding a node (adding its best
    move outside the book) costs its path cost plus such an edge cost for that move, plus
    ``cost_per_moves_expanded * n + cost_per_squared_moves_expanded * n^2`` for its n book moves
    already there, less ``bonus_per_error`` times the error of its own value. Not expandable: too deep, or no move
    outside the book but a pass."""
    if root not in nodes:
        return []
    c = constants
    costs = []

    def steps(key: int, d: float) -> list[tuple[int, float]]:
        node = nodes[key]
        own = own_bounds(node, c)
        edges = edge_views(node, values)
        best_ucb = max([own.ucb] + [e.ucb for e in edges])
        best = node.best_new()
        if best is not None and best.move != PASS and node.depth < c.max_depth:
            gap = max(0.0, best_ucb - own.ucb)
            n = len(node.edges)
            costs.append((d + c.cost_per_move + c.cost_per_ucb_gap * gap
                          + c.cost_per_moves_expanded * n + c.cost_per_squared_moves_expanded * n * n
                          - c.cost_per_log_policy * math.log(max(node.prior(best.move), c.min_prior))
                          - c.bonus_per_error * own_error(node, c), key))
        return [(e.child, d + c.cost_per_move + c.cost_per_ucb_gap * max(0.0, best_ucb - e.ucb)
                 - c.cost_per_log_policy * math.log(max(e.prior, c.min_prior))) for e in edges]

    _cheapest_first(nodes, root, steps)
    costs.sort()
    return costs


def reach_candidates(nodes: dict[int, Node], root: int, values: dict[int, Bounds],
                     constants: MinimaxConstants = CONSTANTS) -> list[tuple[float, int, int]]:
    """(cost, key, move) of every move worth adding to the book, likeliest to be reached first
    (cost: ``-log`` of the probability), for a book that one player (either colour) uses against an
    opponent who plays as the play budget's searches do (``Node.play_policy``).

    For each colour of the book player, a position's reach is the likeliest path from the root on
    which the book player plays the book's move (``book_move``) and the opponent plays a move with
    its play prior. Where it is the book player's turn and the book has no move it would play, the
    candidate is the node's best move outside the book; where it is the opponent's turn, every
    likely reply not in the book is a candidate, at the node's reach times the reply's prior. A
    candidate's cost is the lower of the two colours'. Unlike KataGo's cost, which covers what a
    strong player answers, this covers what the opponent at the play budget answers: the book
    measured in docs/book.md was left at ply 3 of every game because its replies to the opponent's
    likely moves were not in it."""
    if root not in nodes:
        return []
    c = constants
    best: dict[tuple[int, int], float] = {}
    for colour in (0, 1):  # the book player is Black (to move at even depths) or White

        def steps(key: int, d: float, colour: int = colour) -> list[tuple[int, float]]:
            node = nodes[key]
            if node.depth >= c.max_depth:
                return []
            if node.depth % 2 == colour:
                chosen = book_move(node, values, c)
                if chosen is not None:
                    return [(chosen.child, d)]
                new = node.best_new()
                if new is not None and new.move != PASS:
                    best[(key, new.move)] = min(best.get((key, new.move), math.inf), d)
                return []
            out = []
            for move, share in node.likely_moves(c.reply_temperature):
                cost = d - math.log(max(share, c.min_prior))
                if move in node.edges:
                    out.append((node.edges[move][0], cost))
                elif move != PASS:
                    best[(key, move)] = min(best.get((key, move), math.inf), cost)
            return out

        _cheapest_first(nodes, root, steps)
    return sorted((cost, key, move) for (key, move), cost in best.items())
