"""Checking a book against what it was computed from, and repairing it (``obook verify``): a
statistical book's statistics against the recount of its finished games, a search-valued book's
backed-up values against its stored searches. Each result says what it found in the lines ``obook
verify`` prints (``headline``, ``report``); the book's kind (``obook.book.kinds``) picks the check."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from obook.book.backup import computed_figures, load_nodes, write_back_up
from obook.book.keys import BookGameError, Scores, Stats, game_outcome, opening_record
from obook.store.books import BookInfo, lock_book
from obook.store.db import Store
from obook.store.faults import kill_point
from obook.store.games import finished_games
from obook.store.minimax import count_done, done_counter, set_done_counter, stored_figures
from obook.store.stats import all_scores, all_stats, replace_stats


# ---- verify ----------------------------------------------------------------------------------------


@dataclass
class Verification:
    games: int
    rows: int
    missing: list[tuple[int, int, tuple[int, int, int]]]  # in the recomputation, not (or not equal) in the store
    extra: list[tuple[int, int, tuple[int, int, int]]]  # in the store only
    bad_games: list[tuple[int, str]]
    # (key, move, recomputed, stored) (scored games, score sum) that differ
    scores: list[tuple[int, int, tuple[int, float], tuple[int, float]]] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.missing or self.extra or self.bad_games or self.scores)

    def headline(self, name: str) -> str:
        return f"book {name!r}: {self.games} finished games, {self.rows} statistics rows"

    def report(self, repair: bool) -> tuple[list[str], bool]:
        """What ``obook verify`` prints after the headline, and whether the book is sound now."""
        lines = [f"  game {game_id} does not replay: {why}" for game_id, why in self.bad_games[:20]]
        lines += [f"  position {key:016x} move {move}: should be games/wins/draws {value[0]}/{value[1]}/{value[2]}"
                  for key, move, value in self.missing[:20]]
        lines += [f"  position {key:016x} move {move}: stored {value[0]}/{value[1]}/{value[2]} but no finished game "
                  "has it" for key, move, value in self.extra[:20]]
        lines += [f"  position {key:016x} move {move}: should be scored games/score sum {counted[0]}/{counted[1]:g}, "
                  f"stored {stored[0]}/{stored[1]:g}" for key, move, counted, stored in self.scores[:20]]
        if self.clean:
            return lines + ["  statistics match the games"], True
        lines.append(f"  {len(self.missing)} wrong or missing rows, {len(self.extra)} extra rows, "
                     f"{len(self.scores)} rows with wrong scores, "
                     f"{len(self.bad_games)} bad games" + ("; repaired" if repair else ""))
        if repair and not self.bad_games:
            return lines + ["  statistics repaired: they now match the games"], True
        if repair:
            lines.append(f"  the statistics are repaired; the {len(self.bad_games)} games that do not replay remain "
                         "(they are left out of the statistics)")
        return lines, False


@dataclass
class Recount:
    stats: Stats
    games: int  # finished games counted
    bad: list[tuple[int, str]]  # finished games that do not replay: (id, why)
    seen: set[int]  # ids of every finished game read (counted or bad)
    scores: Scores = field(default_factory=dict)


def recount(conn, book: BookInfo, skip: set[int] = frozenset()) -> Recount:
    """The statistics as a pure function of the finished games the caller's transaction sees
    (leaving out the ids in ``skip``)."""
    result = Recount({}, 0, [], set())
    for game_id, moves, winner, result_text, score in finished_games(conn, book.id):
        if game_id in skip:
            continue
        result.seen.add(game_id)
        try:
            contribution, scores = opening_record(book.size, book.komi, book.superko, moves.split(),
                                                  game_outcome(winner, result_text), score, book.depth)
        except BookGameError as exc:
            result.bad.append((game_id, str(exc)))
            continue
        result.games += 1
        add_to(result.stats, contribution)
        add_to(result.scores, scores)
    return result


def add_to(totals: dict, more: dict) -> None:
    """Add ``more``'s tuples to ``totals``'s, element by element (statistics or scores)."""
    for k, figures in more.items():
        old = totals.get(k)
        totals[k] = figures if old is None else tuple(a + b for a, b in zip(old, figures))


def recompute_stats(store: Store, book: BookInfo) -> tuple[Stats, int, list[tuple[int, str]]]:
    """(statistics, games counted, bad games) recomputed from one snapshot of the finished games."""
    with store.snapshot() as conn:
        result = recount(conn, book)
    return result.stats, result.games, result.bad


def verify(store: Store, book: BookInfo, repair: bool = False) -> Verification:
    """Compare the stored statistics with the recount of the finished games, both read from one
    snapshot, so that games finishing meanwhile (a live build) make no false difference. The
    repair replaces them under the book's exclusive lock (finishes wait for it, ``add_stats``),
    after counting the games that finished since the snapshot: every finish is counted once,
    in the replacement or after it."""
    with store.snapshot() as conn:
        counted = recount(conn, book)
        stored = all_stats(conn, book.id)
        stored_scores = all_scores(conn, book.id)
    expected = counted.stats
    missing = [(k, m, v) for (k, m), v in expected.items() if stored.get((k, m)) != v]
    extra = [(k, m, v) for (k, m), v in stored.items() if (k, m) not in expected]
    none = (0, 0.0)
    scores = [(k, m, counted.scores.get((k, m), none), stored_scores.get((k, m), none))
              for k, m in sorted(set(counted.scores) | set(stored_scores))
              if counted.scores.get((k, m), none) != stored_scores.get((k, m), none)]
    if repair and (missing or extra or scores):
        with store.write() as conn:
            lock_book(conn, book.id)
            late = recount(conn, book, skip=counted.seen)
            replacement, replacement_scores = dict(expected), dict(counted.scores)
            add_to(replacement, late.stats)
            add_to(replacement_scores, late.scores)
            kill_point("repair")
            replace_stats(conn, book.id, replacement, replacement_scores)
    return Verification(counted.games, len(stored), missing, extra, counted.bad, scores)


# ---- verify a minimax book ------------------------------------------------------------------------------


@dataclass
class MinimaxVerification:
    nodes: int
    edges: int
    differences: list[tuple[int, object, object]]  # (key, recomputed figures, stored figures)
    dangling: list[tuple[int, int, int]]  # edges to a node that is not stored: (parent key, move, child key)
    repaired: bool = False
    done_counted: int = 0  # expansions done, counted
    done_counter: int = 0  # the book's count of them (``books.expansions_done``)

    @property
    def clean(self) -> bool:
        return not (self.differences or self.dangling) and self.done_counted == self.done_counter

    def scores_missing(self) -> int:
        """How many nodes differ only by a backed-up score not stored."""
        return sum(1 for _, computed, stored in self.differences
                   if stored is not None and stored.backed_up_score is None
                   and replace(stored, backed_up_score=computed.backed_up_score) == computed)

    def headline(self, name: str) -> str:
        return f"book {name!r}: {self.nodes} nodes, {self.edges} edges (search-valued)"

    def report(self, repair: bool) -> tuple[list[str], bool]:
        """What ``obook verify`` prints after the headline, and whether the book is sound now."""
        lines = [f"  node {key:016x}: stored {stored}, recomputed {computed}"
                 for key, computed, stored in self.differences[:20]]
        lines += [f"  edge {parent:016x} move {move} leads to {child:016x}, which is not stored"
                  for parent, move, child in self.dangling[:20]]
        miscounted = self.done_counted != self.done_counter
        if miscounted:
            lines.append(f"  the book counts {self.done_counter} expansions done; {self.done_counted} are")
        unscored = self.scores_missing()
        if unscored:
            lines.append(f"  {unscored} of the nodes that differ only lack their backed-up score (a book backed up "
                         "before migration 0018): --repair fills them")
        if self.clean:
            return lines + ["  every backed-up value matches the stored searches (and every backed-up score)"], True
        lines.append(f"  {len(self.differences)} nodes differ, {len(self.dangling)} dangling edges"
                     + (", a wrong count of expansions done" if miscounted else "")
                     + ("; repaired" if self.repaired else ""))
        if repair and not self.dangling:
            return lines + ["  repaired: every backed-up value now matches the stored searches"], True
        if repair:
            lines.append(f"  the values are repaired; the {len(self.dangling)} dangling edges remain (--repair does "
                         "not remove them)")
        return lines, False


def verify_minimax(store: Store, book: BookInfo, repair: bool = False) -> MinimaxVerification:
    """Recompute every node's backed-up figures from the stored searches and edges (one snapshot:
    the book's lock, so no expansion commits meanwhile) and compare with the stored ones, and the
    book's count of expansions done with the done ones; with ``repair`` write the recomputed ones
    in the same transaction."""
    with store.write() as conn:
        lock_book(conn, book.id)
        nodes = load_nodes(conn, book.id)
        figures = computed_figures(nodes)
        stored = stored_figures(conn, book.id)
        differences = [(k, f, stored.get(k)) for k, f in figures.items() if stored.get(k) != f]
        dangling = [(k, m, c) for k, n in nodes.items() for m, (c, _) in n.edges.items() if c not in nodes]
        counted, counter = count_done(conn, book.id), done_counter(conn, book.id)
        if repair and differences:
            write_back_up(conn, book.id)
        if repair and counted != counter:
            set_done_counter(conn, book.id, counted)
    return MinimaxVerification(len(nodes), sum(len(n.edges) for n in nodes.values()), differences, dangling,
                               repair and (bool(differences) or counted != counter), counted, counter)
