"""The incremental back-up (issue 31, item 1): after any sequence of expansions, in any order, with
searches renewed, transpositions and moves that would close a cycle, the figures each commit wrote
for the changed nodes and their ancestors are exactly those a back-up from scratch computes
(``obook verify``), whether each result is applied alone or with others staged meanwhile (group
commit). Real commits (``stage_result`` under a lease, ``apply_staged``) on SQLite and PostgreSQL,
with random searches in place of the engine's."""

from __future__ import annotations

import random

import pytest

from obook.book.backup import back_up_after, computed_figures, load_nodes
from obook.book.library import BookSettings, ensure_book
from obook.book.minimax import CONSTANTS, MinimaxConstants
from obook.store import jobs
from obook.store.minimax import (NewEdge, SearchedNode, StagedResult, apply_staged, count_done, done_counter,
                                 get_expansion, schedule_expansion, scheduled, set_done_counter, stage_result,
                                 stored_figures)

OWNER = "h:1:test:backup"


def random_search(rng: random.Random, key: int, moves: list[str], excluded: set[int]) -> SearchedNode:
    """A search of random root moves and mean score. Win rates and scores are drawn from few values
    (some 0 and 1), so that lines of equal value with different scores, and searches without a
    score, are common: the backed-up score must not depend on the order the back-up reads them."""
    points = rng.sample([p for p in range(25) if p not in excluded], rng.randint(0, 6))
    policy = " ".join(f"{p}:{rng.randint(1, 3000)}:{rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, rng.random()]):.6f}"
                      for p in points)
    score = rng.choice([None, -2.5, 0.5, 3.5, rng.uniform(-25, 25)])
    return SearchedNode(key, moves, policy, len(excluded), min(0.1 * len(excluded), 1.0), 100, "playouts=100",
                        key, "test", None, score)


def apply(conn, book_id: int, constants=CONSTANTS) -> list[int]:
    return apply_staged(conn, book_id, lambda conn, book_id, changed, seq: back_up_after(conn, book_id, changed,
                                                                                         constants, seq=seq))


def commit(conn, job, parent, edge, child, constants=CONSTANTS) -> list[int]:
    """Stage one result under its lease and apply what is staged: the expansions done."""
    assert stage_result(conn, job, OWNER, StagedResult(parent, edge, child))
    return apply(conn, job.book_id, constants)


def expand(store, book, rng: random.Random, keys: list[int], depth: dict[int, int], constants,
           group: int = 1) -> str:
    """Up to ``group`` random expansions of stored nodes, each maybe searched again, with one new
    edge to a new node or to a stored one; staged one by one, then applied together with the
    incremental back-up. Returns what happened."""
    with store.write() as conn:
        stored = load_nodes(conn, book.id)
    with store.read() as conn:
        taken = scheduled(conn, book.id)
    open_keys = [k for k in keys if (k, len(stored[k].edges)) not in taken]  # a refused edge keeps its generation
    if not open_keys:
        return "nothing to expand"
    staged = []
    for parent_key in rng.sample(open_keys, min(group, len(open_keys))):
        staged.append(stage_random(store, book, rng, keys, depth, stored, parent_key))
    with store.write() as conn:
        assert sorted(apply(conn, book.id, constants)) == sorted(staged)
    return "expanded"


def stage_random(store, book, rng, keys, depth, stored, parent_key) -> int:
    node = stored[parent_key]
    edges = set(node.edges)
    job_id = None
    with store.write() as conn:
        job_id = schedule_expansion(conn, book.id, parent_key, len(edges), ["x"] * depth[parent_key], 0.0, 1)
        assert job_id is not None
        assert jobs.claim(conn, jobs.EXPANSION_JOBS, book.id, OWNER, 60, job_id) == job_id
        job = get_expansion(conn, job_id)
    parent = random_search(rng, parent_key, ["x"] * depth[parent_key], edges) if rng.random() < 0.5 else None
    move = rng.choice([p for p in range(25) if p not in edges])
    child = None
    if rng.random() < 0.3 and len(keys) > 1:
        child_key = rng.choice(keys)  # a transposition, or a move back up the graph (refused)
    else:
        child_key = max(keys) + 1
        depth[child_key] = depth[parent_key] + 1
        child = random_search(rng, child_key, ["x"] * depth[child_key], set())
    with store.write() as conn:
        assert stage_result(conn, job, OWNER, StagedResult(parent, NewEdge(move, child_key, rng.random()), child))
    if child is not None:
        keys.append(child_key)
    return job_id


def seed_book(store, book, rng: random.Random, constants=CONSTANTS, search=None):
    """The book's first expansion: the root (key 1) searched, one edge to its child (key 2).
    Returns the keys and their depths, for ``expand``."""
    search = search or random_search
    with store.write() as conn:
        job_id = schedule_expansion(conn, book.id, 1, 0, [], 0.0, 1)
        jobs.claim(conn, jobs.EXPANSION_JOBS, book.id, OWNER, 60, job_id)
        assert commit(conn, get_expansion(conn, job_id), search(rng, 1, [], set()), NewEdge(0, 2, 0.5),
                      search(rng, 2, ["x"], set()), constants) == [job_id]
    return [1, 2], {1: 0, 2: 1}


@pytest.mark.parametrize("seed, group", [(1, 1), (2, 1), (3, 1), (4, 5)])
def test_the_incremental_back_up_is_the_back_up_from_scratch(store, seed, group):
    rng = random.Random(seed)
    constants = CONSTANTS if seed != 3 else MinimaxConstants(error_floor=0.0, z=1.0)
    book = ensure_book(store, f"inc{seed}", BookSettings(size=5, komi=0.5, algorithm="minimax",
                                                         search="playouts=100", seconds_per_move=0))
    keys, depth = seed_book(store, book, rng, constants)
    for step in range(60):
        expand(store, book, rng, keys, depth, constants, rng.randint(1, group) if group > 1 else 1)
        if step % 10 == 9:
            with store.read() as conn:
                nodes = load_nodes(conn, book.id)
                assert stored_figures(conn, book.id) == computed_figures(nodes, constants), f"after step {step}"
    with store.read() as conn:
        nodes = load_nodes(conn, book.id)
        assert stored_figures(conn, book.id) == computed_figures(nodes, constants)
        assert done_counter(conn, book.id) == count_done(conn, book.id) > 20
    edges = sum(len(n.edges) for n in nodes.values())
    transpositions = edges - (len(nodes) - 1)
    assert len(nodes) > 20 and transpositions > 0, "the random book has shared children"
    assert_acyclic(nodes)
    figures = computed_figures(nodes, constants)
    from_children = [k for k, n in nodes.items() if n.edges and figures[k].backed_up_score is not None
                     and figures[k].backed_up_score != n.score_mean]
    assert from_children, "some node's score is carried up from a child, not its own search's"


def assert_acyclic(nodes) -> None:
    state: dict[int, int] = {}

    def visit(key: int) -> None:
        state[key] = 1
        for child, _ in nodes[key].edges.values():
            assert state.get(child) != 1, f"a cycle through {child}"
            if child in nodes and child not in state:
                visit(child)
        state[key] = 2

    for key in nodes:
        if key not in state:
            visit(key)


def test_a_move_back_up_the_graph_is_not_added(store):
    """A stored node from which the parent is reached: the edge would close a cycle (a position of
    the book repeated through a ko on another path); the expansion is done without it."""
    rng = random.Random(5)
    book = ensure_book(store, "cyc", BookSettings(size=5, komi=0.5, algorithm="minimax", search="playouts=100",
                                                  seconds_per_move=0))

    def expand_once(parent_key, generation, parent, edge, child):
        with store.write() as conn:
            job_id = schedule_expansion(conn, book.id, parent_key, generation, [], 0.0, 1)
            jobs.claim(conn, jobs.EXPANSION_JOBS, book.id, OWNER, 60, job_id)
            assert commit(conn, get_expansion(conn, job_id), parent, edge, child) == [job_id]

    expand_once(1, 0, random_search(rng, 1, [], set()), NewEdge(3, 2, 0.5), random_search(rng, 2, ["x"], set()))
    expand_once(2, 0, None, NewEdge(4, 1, 0.5), None)  # 2 -> 1 would close 1 -> 2 -> 1
    with store.read() as conn:
        nodes = load_nodes(conn, book.id)
        assert set(nodes[1].edges) == {3} and nodes[2].edges == {}
        assert stored_figures(conn, book.id) == computed_figures(nodes)


def test_a_result_is_staged_once_under_its_lease_and_applied_once(store):
    """Staging needs the lease; a second result for the same expansion is refused; whoever applies
    next applies every staged result, once; the book counts its expansions done as it applies them
    (what the driver reads instead of counting), and ``obook verify`` checks and repairs that count."""
    from obook.book.kinds import SEARCH_VALUED
    from obook.book.verification import verify_minimax

    rng = random.Random(9)
    book = ensure_book(store, "staged", BookSettings(size=5, komi=0.5, algorithm="minimax", search="playouts=100",
                                                     seconds_per_move=0))
    seed_book(store, book, rng)
    with store.write() as conn:
        first = schedule_expansion(conn, book.id, 1, 1, [], 0.0, 1)
        second = schedule_expansion(conn, book.id, 2, 0, ["x"], 0.0, 2)
        jobs.claim(conn, jobs.EXPANSION_JOBS, book.id, OWNER, 60, first)
        jobs.claim(conn, jobs.EXPANSION_JOBS, book.id, "h:2:test:other", 60, second)
        one, two = get_expansion(conn, first), get_expansion(conn, second)
    result = StagedResult(None, NewEdge(7, 3, 0.2), random_search(rng, 3, ["x"], set()))
    with store.write() as conn:
        assert not stage_result(conn, two, OWNER, result)  # not our lease
        assert stage_result(conn, one, OWNER, result)
        assert not stage_result(conn, one, OWNER, result)  # staged already
        assert stage_result(conn, two, "h:2:test:other", StagedResult(None, NewEdge(8, 4, 0.3),
                                                                      random_search(rng, 4, ["x", "y"], set())))
    with store.read() as conn:
        assert SEARCH_VALUED.counts(conn, book).done == 1 and SEARCH_VALUED.counts(conn, book).open == 2
    with store.write() as conn:
        assert apply(conn, book.id) == [first, second]
        assert apply(conn, book.id) == []
        assert not stage_result(conn, one, OWNER, result)  # done
    with store.read() as conn:
        counts = SEARCH_VALUED.counts(conn, book)
        assert (counts.done, counts.open) == (3, 0) and count_done(conn, book.id) == 3
        nodes = load_nodes(conn, book.id)
        assert set(nodes) == {1, 2, 3, 4} and stored_figures(conn, book.id) == computed_figures(nodes)
    assert verify_minimax(store, book).clean
    with store.write() as conn:
        set_done_counter(conn, book.id, 5)
    wrong = verify_minimax(store, book, repair=True)
    assert not wrong.clean and (wrong.done_counted, wrong.done_counter) == (3, 5) and wrong.repaired
    assert verify_minimax(store, book).clean


def test_the_books_lock_holds_back_neither_staging_nor_scheduling(postgres_url):
    """While one worker holds the book's lock (applying), another still stages its result and
    writes its heartbeat (rows that only name the book: the foreign-key checks must not queue for
    the lock), and the driver still schedules (schedulers take turns on their own lock). What was
    staged is applied by the next who finds the lock free: here, the next scheduling step."""
    from sqlalchemy import text

    from obook.book.expansion import root_key, schedule
    from obook.book.library import open_book_store
    from obook.store.books import lock_book
    from obook.store.minimax import is_staged
    from obook.store.models import DONE
    from obook.store.workers import heartbeat

    store = open_book_store(postgres_url, create=True)
    book = ensure_book(store, "locked", BookSettings(size=5, komi=0.5, algorithm="minimax", search="playouts=100",
                                                     seconds_per_move=0))
    holder = store.engine.connect()
    holding = holder.begin()
    lock_book(holder, book.id)
    try:
        with store.write() as conn:
            conn.execute(text("SET LOCAL lock_timeout = '3s'"))  # before: a lock timeout here
            created = schedule(conn, book, 1, target=10)
        assert len(created) == 1
        with store.write() as conn:
            conn.execute(text("SET LOCAL lock_timeout = '3s'"))
            jobs.claim(conn, jobs.EXPANSION_JOBS, book.id, OWNER, 60, created[0])
            job = get_expansion(conn, created[0])
            root = random_search(random.Random(1), root_key(book), [], set())
            assert stage_result(conn, job, OWNER, StagedResult(root, None, None))
            heartbeat(conn, OWNER, book_id=book.id, game_id=job.id, moves="")
        with store.read() as conn:
            assert is_staged(conn, job.id) and get_expansion(conn, job.id).status != DONE
    finally:
        holding.rollback()
        holder.close()
    with store.write() as conn:
        schedule(conn, book, 1, target=10)
    with store.read() as conn:
        assert get_expansion(conn, job.id).status == DONE and not is_staged(conn, job.id)
        assert load_nodes(conn, book.id)[root_key(book)].edges == {}
