"""How well does a reach book's opponent model predict the opponent's replies? (issue 32)

A reach book's node keeps a play policy: the mean visit shares of searches at the play budget. The
opponent plays each search's most visited move, so its replies are more concentrated than the
shares; the book's schedule reads them at a temperature T (a reply's probability is share ** (1/T),
normalised: ``obook.book.minimax.tempered``). This fits T to the replies the opponent really played
in a book's recorded games (``benchmarks/minimax_book.py``'s JSON lines and SGFs): at every position
of the book where the opponent was to move, the log-likelihood of its reply under each T, and how
often it played the policy's first move against the probability the model gives that move.
``--opponent gnugo`` reads instead the games against an opponent no model saw (a series
``book vs gtp:...gnugo...``): how far its replies are from what the book was grown for.

``--coverage`` measures a book as it is: the expected number of the book player's own moves from
the book a game (book moves, and a node's deep-search move where it has no book move), for each
colour, against an opponent replying at the fitted temperature through the nodes' play policies
(``--truth`` another). It reads no game but the fit's (with ``--truth``, none: a book with no
recorded games can be measured), so two books of the same size compare at once.

``--simulate`` then asks what the fit is worth in coverage: a book of N expansions grown by
reach for one colour of the book player over a tree whose nodes draw their play policies from the
book's, with the opponent replying as the fitted model says, is grown once with the shares as they
are and once with the fitted temperature; printed is the expected number of the book player's own
moves from the book a game (one expansion a node, no transpositions: a model, not a measurement).

    python benchmarks/reply_model.py --db sqlite:///b025-1000.db --book b025 --checkpoint 1000 --simulate
"""

from __future__ import annotations

import argparse
import heapq
import math
import random
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from minimax_book import DEFAULT_OUT, base_book, load, replayed, series_opponent  # noqa: E402

TEMPERATURES = (1.0, 0.7, 0.5, 0.35, 0.25, 0.18)


def book_series(name: str, book: str, opponent: str = "") -> bool:
    """Whether the series ``name`` played ``book`` against the plain engine (``opponent`` "") or
    against an opponent whose name holds ``opponent``; a series without the book never."""
    against = series_opponent(name)
    return base_book(name) == book and "[no book]" not in name and (opponent in against if opponent else against == "")


def observed_replies(url: str, book: str, out: Path, checkpoint: int | None, playouts: int | None,
                     max_ply: int = 30, series: str | None = None,
                     opponent: str = "") -> list[tuple[list[tuple[int, float]], int, int]]:
    """(play policy, canonical reply, ply) at every position of ``book`` where the opponent (B) was
    to move, in the recorded games of the book's series, or of ``series`` (the games of another store
    of the same book, e.g. one rebuilt), with the book. ``opponent`` "" takes the games against the
    plain engine, whose replies are what the model is of; else the games against an opponent whose
    name holds it (e.g. ``gnugo``): how well the model predicts an engine it never saw."""
    from obook.book.keys import canonical_move, canonical_view
    from obook.book.library import open_book_store
    from obook.book.minimax import parse_play_policy
    from obook.store.books import get_book
    from obook.store.minimax import load_node_rows

    store = open_book_store(url)
    with store.read() as conn:
        info = get_book(conn, book)
        policies = {key: parse_play_policy(row.play_policy) for key, row in load_node_rows(conn, info.id).items()
                    if row.play_policy}
    rows = [r for r in load(out) if r.get("kind") == "game" and book_series(r["book"], series or book, opponent)
            and (checkpoint is None or r["checkpoint"] == checkpoint) and (playouts is None or r["playouts"] == playouts)]
    found = []
    for r in rows:
        opponent = "W" if r["a_color"] == "B" else "B"
        for ply, position, point in replayed(r, max_ply):
            key, symmetries = canonical_view(position)
            if ("B" if ply % 2 == 0 else "W") == opponent:
                if key not in policies:
                    break  # the game left the book
                found.append((policies[key], canonical_move(position, point, symmetries), ply))
    return found


def mean_log_likelihood(observed, temperature: float) -> float:
    from obook.book.minimax import tempered

    total = 0.0
    for policy, reply, _ in observed:
        p = dict(tempered(policy, temperature)).get(reply, 0.0)
        total += math.log(max(p, 1e-4))
    return total / len(observed)


def simulate(policies: list[list[float]], expansions: int, model: float, truth: float, seed: int,
             repeats: int = 3) -> float:
    """Expected own book moves a game of a reach book of ``expansions`` nodes for one colour, grown
    by the model at temperature ``model``, the opponent replying at temperature ``truth``."""
    from obook.book.minimax import tempered

    total = 0.0
    for r in range(repeats):
        rng = random.Random(seed + r)
        heap = [(0.0, 0, 1.0)]  # (model cost, tie, true probability of reaching the node)
        tie = 0
        for _ in range(expansions):
            if not heap:
                break
            cost, _, reach = heapq.heappop(heap)
            total += reach / repeats  # an own move from the book here, as often as play reaches it
            shares = [(i, s) for i, s in enumerate(rng.choice(policies))]
            true, modelled = dict(tempered(shares, truth)), dict(tempered(shares, model))
            for move, _ in shares[:40]:
                tie += 1
                heapq.heappush(heap, (cost - math.log(max(modelled[move], 1e-3)), tie, reach * true[move]))
    return total


def expected_own_moves(url: str, book: str, truth: float, floor: float = 1e-6,
                       error_floor: float | None = None) -> dict[str, float]:
    """Expected own moves from ``book`` a game, for a book player of each colour, the opponent
    replying at temperature ``truth`` through the play policies (``docstring``: ``--coverage``);
    with ``error_floor``, the book backed up again with that floor (``benchmarks/error_floor.py``)."""
    import dataclasses

    from obook.book.backup import load_nodes
    from obook.book.expansion import root_key
    from obook.book.library import open_book_store
    from obook.book.minimax import CONSTANTS, back_up, book_move
    from obook.store.books import get_book
    from obook.store.minimax import stored_figures

    store = open_book_store(url)
    with store.read() as conn:
        info = get_book(conn, book)
        nodes = load_nodes(conn, info.id)
        figures = stored_figures(conn, info.id)
    constants = CONSTANTS
    if error_floor is not None:
        constants = dataclasses.replace(CONSTANTS, error_floor=error_floor)
        figures = back_up(nodes, constants)
    root = root_key(info)

    def choose(node):
        return book_move(node, figures, constants)

    return {"black": own_moves_from(nodes, root, True, truth, choose, floor),
            "white": own_moves_from(nodes, root, False, truth, choose, floor)}


def own_moves_from(nodes: dict, start: int, book_to_move: bool, truth: float, choose, floor: float = 1e-6) -> float:
    """Expected own moves from the book a game from the node ``start`` on (``book_to_move``: the book
    player's turn there), the book player playing ``choose(node)`` (an ``EdgeView``, None: the
    node's deep-search move, then out of the book) and the opponent replying at temperature
    ``truth`` through the play policies (0 where ``start`` is not in the book)."""
    from obook.book.minimax import tempered

    total = 0.0
    frontier = {start: 1.0} if start in nodes else {}
    for step in range(60):  # each step is one ply; a DAG's mass moves down by depth
        after: dict[int, float] = {}
        own_turn = (step % 2 == 0) == book_to_move
        for key, mass in frontier.items():
            node = nodes[key]
            if own_turn:
                chosen = choose(node)
                if chosen is not None:
                    total += mass
                    if chosen.child in nodes:
                        after[chosen.child] = after.get(chosen.child, 0.0) + mass
                elif node.best_new() is not None:
                    total += mass  # the node's deep search's move; play then leaves the book
            else:
                for move, p in tempered(node.likely_moves(), truth):
                    child = node.edges.get(move)
                    if child is not None and child[0] in nodes and mass * p > floor:
                        after[child[0]] = after.get(child[0], 0.0) + mass * p
        frontier = after
        if not frontier:
            break
    return total


def fit(observed: list, book: str) -> float:
    """Print how well each temperature predicts the observed replies; return the best."""
    from obook.book.minimax import tempered

    print(f"{len(observed)} replies of the opponent at positions of book {book!r}")
    ranks = Counter(next((i for i, (m, _) in enumerate(sorted(p, key=lambda ms: -ms[1])) if m == reply), -1)
                    for p, reply, _ in observed)
    print("rank of the reply in the play policy (0: its first move; -1: not in it): "
          + ", ".join(f"{k}: {v}" for k, v in sorted(ranks.items())[:8]))
    print("| T | mean log-likelihood | the first move's probability (mean) |")
    print("| --- | --- | --- |")
    fits = {}
    for t in TEMPERATURES:
        fits[t] = mean_log_likelihood(observed, t)
        first = statistics.mean(max(s for _, s in tempered(p, t)) for p, _, _ in observed)
        print(f"| {t:g} | {fits[t]:.4f} | {first:.3f} |")
    best = max(fits, key=fits.get)
    played_first = ranks[0] / len(observed)
    print(f"best T {best:g}; the opponent played the policy's first move in {played_first:.1%} of them")
    by_ply = defaultdict(list)
    for p, reply, ply in observed:
        by_ply[ply].append((p, reply))
    print("| ply | replies | played the first move | its probability at T=1 | at the best T |")
    print("| --- | --- | --- | --- | --- |")
    for ply in sorted(by_ply):
        items = by_ply[ply]
        if len(items) < 30:
            continue
        top = sum(max(p, key=lambda ms: ms[1])[0] == reply for p, reply in items) / len(items)
        raw = statistics.mean(max(s for _, s in p) for p, _ in items)
        cold = statistics.mean(max(s for _, s in tempered(p, best)) for p, _ in items)
        print(f"| {ply} | {len(items)} | {top:.3f} | {raw:.3f} | {cold:.3f} |")
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True, help="the book's store")
    parser.add_argument("--book", required=True)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--checkpoint", type=int, default=None, help="only the games at this checkpoint")
    parser.add_argument("--playouts", type=int, default=None, help="only the games at this play budget")
    parser.add_argument("--simulate", action="store_true", help="also the coverage the fit is worth (a model)")
    parser.add_argument("--coverage", nargs="*", metavar="URL:BOOK",
                        help="the expected own book moves a game of these books (and of --db's) at the fitted T")
    parser.add_argument("--truth", type=float, default=None, help="with --coverage: the opponent's T (default: fitted)")
    parser.add_argument("--error-floor", type=float, default=None,
                        help="with --coverage: back the books up again with this error floor (default: as stored)")
    parser.add_argument("--series", default=None, help="the recorded games of this book name (default: --book)")
    parser.add_argument("--opponent", default="",
                        help="the games against an opponent whose name holds this (e.g. gnugo), not the plain engine")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    observed = observed_replies(args.db, args.book, args.out, args.checkpoint, args.playouts, series=args.series,
                                opponent=args.opponent)
    fit_needed = args.simulate or args.coverage is None or args.truth is None
    if not observed and fit_needed:
        print("no recorded reply of the opponent in a position of the book (only --coverage with --truth "
              "needs none)", file=sys.stderr)
        return 1
    best = fit(observed, args.book) if observed else None
    if args.coverage is not None:
        truth = args.truth or best
        print(f"expected own moves from the book a game, the opponent replying at T={truth:g}:")
        print("| book | as Black | as White | mean |")
        print("| --- | --- | --- | --- |")
        for item in [f"{args.db}:{args.book}"] + args.coverage:
            url, name = item.rsplit(":", 1)
            own = expected_own_moves(url, name, truth, error_floor=args.error_floor)
            print(f"| {name} ({url}) | {own['black']:.2f} | {own['white']:.2f} | {(own['black'] + own['white']) / 2:.2f} |")
    if args.simulate:
        policies = [sorted((s for _, s in p), reverse=True) for p, _, _ in observed]
        print(f"simulated own book moves a game, one colour, the opponent replying at T={best:g}:")
        print(f"| expansions (both colours) | grown at T=1 | grown at T={best:g} |")
        print("| --- | --- | --- |")
        for n in (250, 500, 1000, 2000, 4000, 8000):
            flat = simulate(policies, n // 2, 1.0, best, args.seed)
            cold = simulate(policies, n // 2, best, best, args.seed)
            print(f"| {n} | {flat:.2f} | {cold:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
