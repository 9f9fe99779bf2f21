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


def test_a_minimax_books_position_out_of_book_is_cached_as_nothing(store):
    """A minimax book's record of a position it does not hold is None: the cache keeps it (so that
    the question is not read again until the book changes) and weighs it as an empty record,
    rather than failing the lookup."""
    import anyio

    from obook.book.library import BookSettings, ensure_book

    ensure_book(store, "mm", BookSettings(size=9, algorithm="minimax", search="playouts=300", seconds_per_move=0))
    service = BookService(store, threads=1, cache_seconds=600)
    body, _ = anyio.run(service.lookup_body, "mm", "E5", 1)
    assert b'"in_book":false' in body and b'"algorithm":"minimax"' in body
    assert service.stats.bytes == 500  # one entry, no rows
    assert anyio.run(service.lookup_body, "mm", "E5", 1)[0] == body


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
    # other parameters (issue 33: each used to be computed, and to evict the dashboard's entry): cut
    # from the same computation, and what a computation of their own would answer
    for limit, offset, games_limit, workers_limit in [(10, 0, 8, 50), (1, 0, 0, 0), (50, 0, 20, 200), (5, 3, 2, 1)]:
        cut = service.progress(limit, offset, games_limit, workers_limit)
        own = real(store, limit, offset, games_limit, workers_limit)
        timeless = {"generated_at": True, "books": {"__all__": {"rate", "growth", "unit_rate", "unit_growth"}}}
        assert cut.model_dump(exclude=timeless) == own.model_dump(exclude=timeless)  # series: of their instant
    assert len(calls) == 1  # none by the service
    service.progress(20, 50, 8, 50)  # the next page of books: its own computation
    assert len(calls) == 2


def test_an_export_is_made_once_per_generation_of_the_book_and_bounded_by_bytes(store, book, monkeypatch):
    """``export.sgf`` replays and queries up to 20,000 nodes: it is made once for every client until
    the book gets a new game, and the kept exports stay within their byte budget."""
    from obook.book.kinds import SelfPlayKind
    from tests.api.test_api import add_game

    calls = []
    real = SelfPlayKind.export
    monkeypatch.setattr(SelfPlayKind, "export", lambda *a, **k: calls.append(k) or real(*a, **k))
    service = BookService(store, threads=2, fresh_seconds=0)
    first = [service.export_sgf("demo", 1, None, 5000) for _ in range(5)]
    assert len(calls) == 1 and first[0].startswith(b"(;") and all(e == first[0] for e in first)
    assert service.export_sgf("demo", 2, None, 5000) != first[0]  # other parameters: their own export
    assert len(calls) == 2
    add_game(store, book, "E5 D4 C3", "B")  # a new game: a new generation, the export is made again
    again = service.export_sgf("demo", 1, None, 5000)
    assert len(calls) == 3 and again != first[0]
    assert service.exports.bytes <= service.exports.max_bytes

    small = BookService(store, threads=2, fresh_seconds=0, export_cache_mb=len(again) / 2**20 / 2)
    for _ in range(3):
        assert small.export_sgf("demo", 1, None, 5000) == again
    assert len(calls) == 6 and small.exports.bytes == 0  # larger than the budget: never kept


def test_parameters_an_export_does_not_read_make_no_new_export(store, book, monkeypatch):
    """Issue 33: varying a parameter made a new export each time (up to 20,000 nodes replayed and
    queried) and evicted the others. A depth past the book's, any cap above the whole tree once it
    has been written, a minimax book's ``min_games``: the same export, made once."""
    from obook.book.kinds import MinimaxKind, SelfPlayKind
    from obook.book.library import BookSettings, ensure_book

    calls = []
    for kind in (SelfPlayKind, MinimaxKind):
        monkeypatch.setattr(kind, "export", lambda *a, real=kind.export, **k: calls.append(k) or real(*a, **k))
    service = BookService(store, threads=2, fresh_seconds=0)
    whole = service.export_sgf("demo", 1, None, 5000)
    for depth, max_nodes in ((20, 5000), (400, 5000), (None, 20000), (None, 7777), (25, 12345)):
        assert service.export_sgf("demo", 1, depth, max_nodes) == whole, (depth, max_nodes)
    assert len(calls) == 1  # the demo book's depth is 20 and its tree smaller than every cap
    cut = service.export_sgf("demo", 1, None, 2)
    assert len(calls) == 2 and cut != whole and service.export_sgf("demo", 1, 30, 2) == cut
    assert len(calls) == 2

    ensure_book(store, "mm", BookSettings(size=5, komi=0.5, algorithm="minimax", search="playouts=50",
                                          seconds_per_move=0, play_playouts=5))
    first = service.export_sgf("mm", 1, None, 5000)
    assert all(service.export_sgf("mm", m, None, 5000) == first for m in (2, 7, 10**9))
    assert len(calls) == 3


def test_exports_past_the_queue_are_refused_not_queued(store_url, book, monkeypatch):
    """Issue 33: exports waited for the one being made without bound, each request holding its
    connection. Past ``OBOOK_API_EXPORT_QUEUE`` waiting, one is refused: 503 with Retry-After and
    the reason; the queue takes exports again once it drains."""
    import threading

    from obook.book.kinds import SelfPlayKind
    from tests.api.test_api import make_client
    from tests.grid.gridharness import wait_until

    release = threading.Event()
    real = SelfPlayKind.export
    monkeypatch.setattr(SelfPlayKind, "export", lambda *a, **k: release.wait(30) and real(*a, **k))
    with make_client(store_url, api_export_queue=1) as client:
        limits = client.app.state.service.limits
        answers = []
        askers = [threading.Thread(target=lambda n=n: answers.append(
            client.get("/v1/books/demo/export.sgf", params={"max_nodes": 100 + n}).status_code)) for n in range(2)]
        for asker in askers:  # one being made, one waiting
            asker.start()
            wait_until(lambda: limits.exports_pending == askers.index(asker) + 1, 10, step=0.02, what="the export")
        refused = client.get("/v1/books/demo/export.sgf", params={"max_nodes": 200})
        assert refused.status_code == 503 and refused.headers["retry-after"] == "5", refused.text
        assert "OBOOK_API_EXPORT_QUEUE=1" in refused.json()["detail"]
        release.set()
        for asker in askers:
            asker.join(30)
        assert answers == [200, 200] and limits.exports_pending == 0
        assert client.get("/v1/books/demo/export.sgf", params={"max_nodes": 200}).status_code == 200


def test_deep_games_pages_walk_an_index_instead_of_sorting_the_book(postgres_url):
    """``games?offset=`` pages (most recently changed first, with or without a status) are read
    along ``ix_games_book_updated`` on PostgreSQL: no sort of every game of the book."""
    from sqlalchemy.dialects import postgresql

    from obook.book.library import BookSettings, ensure_book, open_book_store
    from obook.store.games import list_games
    from obook.store.migrate import upgrade

    upgrade(postgres_url)
    store = open_book_store(postgres_url)
    book = ensure_book(store, "paged", BookSettings(size=9, algorithm="mvbm"))
    with store.write() as conn:
        conn.exec_driver_sql(
            "INSERT INTO games (book_id, moves, n_moves, origins, status, source, seed, created_at, updated_at, "
            f"finished_at, searches, failures) SELECT {book.id}, 'E5', 1, 'm', CASE WHEN mod(i, 50) = 0 THEN 'in_progress' "
            "ELSE 'finished' END, 'selfplay', i, now(), now() - i * interval '1 second', now(), 1, 0 "
            "FROM generate_series(1, 20000) AS i")
        conn.exec_driver_sql("ANALYZE games")
    captured = []

    class Capture:
        dialect = postgresql.dialect()

        def execute(self, query):
            captured.append(query)
            return []

    for status in (None, "finished"):
        captured.clear()
        list_games(Capture(), book.id, status=status, limit=50, offset=15000)
        sql = str(captured[0].compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True}))
        with store.read() as conn:
            plan = "\n".join(r[0] for r in conn.exec_driver_sql(f"EXPLAIN {sql}"))
        assert "ix_games_book_updated" in plan and "Sort" not in plan, plan
        with store.read() as conn:
            page = list_games(conn, book.id, status=status, limit=50, offset=15000)
        assert [g.seed for g in page][:2] in ([15001, 15002], [15307, 15308])  # 15000 newer games before it


def test_games_through_a_line_walk_their_index_in_order(store):
    """``games?through=`` (each lookup candidate's ``games_url``) reads each symmetric image of the
    line as one range of ``ix_games_book_record`` in its order from the cursor: on a 20,000-game
    book, whether the line is in every game (E5) or in few, the plans name the index and sort
    nothing, so a page costs its own rows however big the book."""
    from sqlalchemy import event

    from obook.book.keys import record_images
    from obook.book.library import BookSettings, ensure_book
    from obook.store.games import GAMES, games_through

    book = ensure_book(store, "lines", BookSettings(size=9, algorithm="mvbm"))
    points = [f"{c}{r}" for c in "ABCDEFGHJ" for r in range(1, 10) if f"{c}{r}" != "E5"]
    with store.write() as conn:
        conn.execute(GAMES.insert(), [
            {"book_id": book.id, "moves": f"E5 {points[i % 80]} {points[(i // 80) % 80]}", "n_moves": 3,
             "origins": "mmm", "status": "finished" if i % 50 else "in_progress", "source": "selfplay", "seed": i}
            for i in range(20_000)])
        conn.exec_driver_sql("ANALYZE")
    statements = []
    capture = lambda _c, _cursor, statement, parameters, _context, _many: statements.append((statement, parameters))  # noqa: E731
    event.listen(store.engine, "before_cursor_execute", capture)
    try:
        with store.read() as conn:
            for line in (["E5"], ["E5", "C3"]):
                first = games_through(conn, book.id, record_images(9, line), 50)
                second = games_through(conn, book.id, record_images(9, line), 50, after=first[-1].id)
                assert len(first) == 50 and second and first[-1].id not in {g.id for g in second}
    finally:
        event.remove(store.engine, "before_cursor_execute", capture)
    walks = [(s, p) for s, p in statements if "substr" in s and "ORDER BY" in s]
    assert len(walks) >= 4
    with store.engine.connect() as conn:
        for statement, parameters in walks:
            if store.is_sqlite:
                rows = conn.exec_driver_sql("EXPLAIN QUERY PLAN " + statement, parameters)
                plan = " ".join(str(row[-1]) for row in rows)
                assert "ix_games_book_record" in plan and "TEMP B-TREE" not in plan, plan
            else:
                plan = " ".join(row[0] for row in conn.exec_driver_sql("EXPLAIN " + statement, parameters))
                assert "ix_games_book_record" in plan and "Sort" not in plan, plan
