"""Issue 19, item 8 (part): the lookup caches are bounded by bytes, not only by entries, so that
anonymous questions of 722 pass-padded moves cannot fill the memory. The per-entry estimates are
checked against what tracemalloc measures, on the real store."""

from __future__ import annotations

import gc
import tracemalloc

from api.service import BookService
from tests.api.test_api import book  # noqa: F401 - fixture

LONG = 722


def long_questions(n: int) -> list[str]:
    """Distinct 722-move questions: two opening moves, then passes."""
    first = [f"{c}{r}" for c in "ABCDEFGHJ" for r in range(1, 10)]
    return [",".join([first[i % 81], first[(i * 7 + 1) % 81]] + ["pass"] * (LONG - 2)) for i in range(n)
            if first[i % 81] != first[(i * 7 + 1) % 81]]


def cached_bytes(service: BookService) -> int:
    return service.answers.bytes + service.positions.bytes + service.stats.bytes


async def ask(service: BookService, questions: list[str]) -> None:
    for moves in questions:
        await service.lookup_body("demo", moves, 1)


def test_the_estimates_do_not_undercount_what_the_caches_hold(store, book):
    import anyio

    service = BookService(store, threads=1, cache_seconds=600, cache_size=10_000, cache_mb=1024)
    questions = long_questions(60)
    anyio.run(ask, service, questions[:5])  # warm up: compiled code, pools, pydantic
    service.clear()
    service.positions.clear()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        anyio.run(ask, service, questions)
        gc.collect()
        full = tracemalloc.get_traced_memory()[0]
        estimated = cached_bytes(service)
        service.clear()
        service.positions.clear()
        gc.collect()
        emptied = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    held = full - emptied
    print(f"\n{len(questions)} questions of {LONG} moves: caches hold {held / 1e6:.2f} MB (tracemalloc), "
          f"estimated {estimated / 1e6:.2f} MB; {(full - before) / 1e6:.2f} MB grown in all")
    assert held > 0 and estimated >= 0.8 * held


def test_long_questions_cannot_grow_the_caches_past_their_budget(store, book):
    import anyio

    budget_mb = 0.5
    service = BookService(store, threads=1, cache_seconds=600, cache_size=10_000, cache_mb=budget_mb)
    questions = long_questions(80)
    anyio.run(ask, service, questions)
    assert cached_bytes(service) <= budget_mb * 2**20
    assert len(service.answers) < len(questions) and len(service.positions) < len(questions)
    anyio.run(ask, service, questions[-3:])  # the newest are still answered from memory
    assert len(service.answers) > 0
