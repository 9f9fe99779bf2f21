"""Issue 33, item 5: the service against a PostgreSQL connection that stops answering
(``tests/blackhole.py``). A lookup, whether the event loop reads it (``AsyncStatsReader``) or a
thread (``StatsReader``, the book's freshness check that holds the book's lock), answers 503 within
``OBOOK_API_DB_TIMEOUT`` plus a connect timeout instead of hanging, and the service answers again
once the database does."""

from __future__ import annotations

import time
from contextlib import contextmanager

import pytest
from sqlalchemy.engine import make_url

from obook.book.library import open_book_store
from obook.config import settings
from tests.api.test_api import book, make_client  # noqa: F401 - book: the same fixture, over this module's store
from tests.blackhole import within

TIMEOUT = 1.0  # OBOOK_API_DB_TIMEOUT of these tests
BOUND = TIMEOUT + 2 * 2 + 1.5  # and OBOOK_DB_CONNECT_TIMEOUT=2 for new connections (measured: 3-4 s in all)


@pytest.fixture
def store(postgres_url):
    return open_book_store(postgres_url, create=True)


@pytest.fixture
def proxied_url(postgres_url, book, black_hole, monkeypatch):
    """(the database's URL through a ``BlackHoleProxy``, the proxy)."""
    monkeypatch.setenv("OBOOK_DB_CONNECT_TIMEOUT", "2")
    settings.cache_clear()
    url = make_url(postgres_url)
    proxy = black_hole(url.host, url.port)
    yield proxy.url_for(postgres_url), proxy
    proxy.forward()
    settings.cache_clear()


@contextmanager
def closing_at_exit(proxy):
    """Close the proxy before the client's shutdown, which waits for every request still running: a
    failing test's hung request ends with its connection."""
    try:
        yield
    finally:
        proxy.close()


def timed_get(client, path: str, params: dict):
    start = time.monotonic()
    answer = client.get(path, params=params)
    return answer, time.monotonic() - start


def test_a_lookup_on_the_event_loop_fails_in_bounded_time(proxied_url):
    url, proxy = proxied_url
    with make_client(url, api_cache_seconds=600, api_fresh_seconds=60, api_db_timeout=TIMEOUT) as client, \
            closing_at_exit(proxy):
        assert client.get("/v1/books/demo/lookup", params={"moves": "E5"}).status_code == 200
        proxy.black_hole()
        # the book's row and generation are in memory: the loop reads the statistics itself
        answer, seconds = within(30, timed_get, client, "/v1/books/demo/lookup", {"moves": "C3"})
        assert answer.status_code == 503, answer.text
        assert seconds < BOUND, seconds
        print(f"\nevent loop: 503 after {seconds:.1f} s")
        assert client.get("/v1/books/demo/lookup", params={"moves": "E5"}).status_code == 200  # still cached
        proxy.forward()
        answer = within(30, client.get, "/v1/books/demo/lookup?moves=C3")
        assert answer.status_code == 200, answer.text


def test_a_lookup_in_the_threads_fails_in_bounded_time_and_frees_the_book(proxied_url):
    """The generation is stale: a thread checks the book (``BookVersions._check``, under the book's
    lock) and fails; the next lookup is not stuck behind the lock."""
    url, proxy = proxied_url
    with make_client(url, api_cache_seconds=600, api_fresh_seconds=0.2, api_db_timeout=TIMEOUT) as client, \
            closing_at_exit(proxy):
        assert client.get("/v1/books/demo/lookup", params={"moves": "E5"}).status_code == 200
        proxy.black_hole()
        time.sleep(0.5)
        for moves in ("C3", "G7"):
            answer, seconds = within(30, timed_get, client, "/v1/books/demo/lookup", {"moves": moves})
            assert answer.status_code == 503, answer.text
            assert seconds < BOUND, seconds
            print(f"\nthreads ({moves}): 503 after {seconds:.1f} s")
        proxy.forward()
        answer = within(30, client.get, "/v1/books/demo/lookup?moves=C3")
        assert answer.status_code == 200, answer.text


def test_the_other_pages_and_the_health_check_fail_in_bounded_time(proxied_url):
    """Issue 33: the books, games, progress and export pages and ``/healthz`` read through the
    service's store, whose statements waited for the TCP user timeout (a minute) or, against a
    kernel that still acknowledges, for ever; they now have ``OBOOK_API_DB_TIMEOUT`` as the
    lookups do, and answer again once the database does."""
    url, proxy = proxied_url
    pages = ["/healthz", "/v1/books", "/v1/books/demo/games", "/v1/games/1", "/v1/progress",
             "/v1/books/demo/export.sgf"]
    with make_client(url, api_cache_seconds=600, api_fresh_seconds=0.2, api_db_timeout=TIMEOUT) as client, \
            closing_at_exit(proxy):
        for path in pages:
            assert client.get(path).status_code == 200, path
        proxy.black_hole()
        time.sleep(0.6)  # past the progress page's and the book's freshness
        for path in pages:
            answer, seconds = within(30, timed_get, client, path, {})
            assert answer.status_code == 503, (path, answer.text)
            assert seconds < BOUND, (path, seconds)
            print(f"\n{path}: 503 after {seconds:.1f} s")
        proxy.forward()
        for path in pages:
            answer = within(30, client.get, path)
            assert answer.status_code == 200, (path, answer.text)
