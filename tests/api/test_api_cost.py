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


def test_expensive_requests_leave_the_lookup_threads_free(store, book):
    """Exports, progress and game pages run in their own threads (a quarter of ``threads``): while
    as many of them as clients like are running or waiting, a lookup still gets a thread."""
    import threading

    import anyio

    service = BookService(store, threads=4, cache_seconds=0)
    release = threading.Event()
    running = {"now": 0, "most": 0}
    lock = threading.Lock()

    def expensive() -> None:
        with lock:
            running["now"] += 1
            running["most"] = max(running["most"], running["now"])
        release.wait(60)
        with lock:
            running["now"] -= 1

    async def scenario() -> bytes:
        async with anyio.create_task_group() as group:
            for _ in range(8):
                group.start_soon(service.run_heavy, expensive)
            await anyio.sleep(0.2)
            with anyio.fail_after(30):  # the lookup does not wait for the expensive ones
                body, _ = await service.lookup_body("demo", "E5", 1)
            release.set()
        return body

    body = anyio.run(scenario)
    assert b'"in_book":true' in body.replace(b" ", b"")
    assert service.heavy_threads == 1 and running["most"] == 1


def test_progress_is_computed_once_per_interval_for_every_client(store, book, monkeypatch):
    from api import views

    calls = []
    real = views.progress
    monkeypatch.setattr(views, "progress", lambda *args: calls.append(args) or real(*args))
    service = BookService(store, threads=2, fresh_seconds=30)
    answers = [service.progress(20, 0, 8, 50) for _ in range(20)]
    assert len(calls) == 1 and all(a == answers[0] for a in answers)
    service.progress(10, 0, 8, 50)  # other parameters: their own computation
    assert len(calls) == 2
