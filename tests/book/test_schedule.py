"""The reach index (issue 31, item 2): as expansions land in any order (new searches, transpositions,
book moves that change with the values, moves refused because they would close a cycle), the
candidates it keeps by reading only what changed are, cost for cost, those ``reach_candidates``
computes over the whole book (each node's cheapest: a schedule takes at most one a node); and
``schedule`` takes them in that order."""

from __future__ import annotations

import dataclasses
import random

import pytest

from obook.book.backup import load_nodes
from obook.book.library import BookSettings, ensure_book
from obook.book.minimax import CONSTANTS, reach_candidates
from obook.book.schedule import ReachIndex
from obook.store.minimax import stored_figures
from tests.book.test_backup import expand, random_search, seed_book


def cheapest_of_each_node(candidates: list[tuple[float, int, int]]) -> list[tuple[float, int, int]]:
    seen: set[int] = set()
    return [c for c in candidates if not (c[1] in seen or seen.add(c[1]))]


def with_play_policy(rng: random.Random, search):
    """A search with a play policy (the opponent's model) half of the time."""
    if rng.random() < 0.5:
        return search
    moves = rng.sample(range(25), rng.randint(1, 6))
    weights = [rng.random() for _ in moves]
    total = sum(weights)
    return dataclasses.replace(search, play_policy=" ".join(f"{m}:{w / total:.5f}" for m, w in zip(moves, weights)))


@pytest.mark.parametrize("seed, slack, temperature", [(1, 256, 1.0), (2, 256, 0.5), (3, 0, 1.0), (4, 0, 0.5)])
def test_the_index_keeps_the_candidates_of_the_whole_book(store, seed, slack, temperature, monkeypatch):
    import tests.book.test_backup as backup_test

    rng = random.Random(seed)
    monkeypatch.setattr(backup_test, "random_search",
                        lambda r, key, moves, excluded: with_play_policy(r, random_search(r, key, moves, excluded)))
    book = ensure_book(store, f"reach{seed}", BookSettings(size=5, komi=0.5, algorithm="minimax",
                                                           search="playouts=100", seconds_per_move=0))
    root = 1
    keys, depth = seed_book(store, book, rng, search=backup_test.random_search)
    constants = dataclasses.replace(CONSTANTS, reply_temperature=temperature)
    index = ReachIndex(book.id, root, constants, slack=slack)  # slack 0: nodes no longer reached are dropped at once
    compared = forgotten = 0
    for step in range(80):
        expand(store, book, rng, keys, depth, CONSTANTS)
        if step % 4 == 3:
            with store.read() as conn:
                index.refresh(conn)
                nodes = load_nodes(conn, book.id)
                figures = stored_figures(conn, book.id)
            whole = cheapest_of_each_node(reach_candidates(nodes, root, figures, constants))
            assert index.candidates() == whole, f"after step {step}"
            compared += len(whole)
            if slack == 0:
                reached = index.dist[0].keys() | index.dist[1].keys()
                assert set(index.nodes) == reached
                forgotten += len(nodes) - len(reached)
    assert compared > 25
    if slack == 0:
        assert forgotten > 0  # lines left by the book were dropped and the candidates stayed right


def test_a_fresh_index_reads_what_the_root_reaches_then_only_changes(store):
    rng = random.Random(9)
    book = ensure_book(store, "fresh", BookSettings(size=5, komi=0.5, algorithm="minimax", search="playouts=100",
                                                    seconds_per_move=0))
    keys, depth = seed_book(store, book, rng)
    for _ in range(30):
        expand(store, book, rng, keys, depth, CONSTANTS)
    index = ReachIndex(book.id, 1, slack=0)
    with store.read() as conn:
        first = index.refresh(conn)
        book_nodes = len(load_nodes(conn, book.id))
        reached = len(index.dist[0].keys() | index.dist[1].keys())
        assert first == reached < book_nodes  # the nodes read are those the root reaches, not the book
        assert index.refresh(conn) == 0  # nothing changed
    expand(store, book, rng, keys, depth, CONSTANTS)
    with store.read() as conn:
        assert index.refresh(conn) <= 2 + 20  # the held nodes among the expanded one and its ancestors, new ones reached
