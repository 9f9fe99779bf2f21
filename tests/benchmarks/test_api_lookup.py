"""``benchmarks/api_lookup.py --algorithm minimax``: the bulk-loaded minimax book is one the book's own
code accepts, so that the benchmark measures real lookups."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))

from api_lookup import DEPTH, MINIMAX_BOOK, build_minimax_book  # noqa: E402


def test_the_bulk_loaded_minimax_book_verifies_and_plays_its_book_move_along_every_opening(postgres_url):
    from obook.book.library import lookup, open_book_store
    from obook.book.verification import verify_minimax
    from obook.store.books import get_book
    from obook.store.minimax import count_done, node_count

    openings = build_minimax_book(postgres_url, rows=1500, games=12)
    store = open_book_store(postgres_url)
    with store.read() as conn:
        book = get_book(conn, MINIMAX_BOOK)
        nodes, expansions = node_count(conn, book.id), count_done(conn, book.id)
    result = verify_minimax(store, book)
    assert result.clean  # the stored figures are the back-up of the stored searches and edges
    assert nodes == 1500 and result.edges == expansions  # filler up to the rows, an expansion per edge
    for moves in openings:
        for depth in range(DEPTH + 1):
            found = lookup(store, book, moves[:depth])
            assert found.value is not None  # every prefix is a node
            if depth < DEPTH:  # the best-valued book move (minimax.book_move), not the own value's
                assert found.usage is not None and found.usage.vertex == found.candidates[0].vertex
