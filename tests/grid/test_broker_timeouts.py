"""Issue 33, item 5: the grid's Redis connections against a broker that stops answering
(``tests/blackhole.py``): a publish (``workers.tasks.send_slice``, what the driver sends each unit
with) fails within a few ``OBOOK_BROKER_TIMEOUT`` instead of waiting for ever, so the driver logs
it and carries on (its token expires and the unit is sent again); the driver's look at the queue
(``redis_pending``) gives up the same way; both work again once the broker answers."""

from __future__ import annotations

import time
import uuid

import pytest

from obook.config import settings
from tests.blackhole import within
from urllib.parse import urlsplit

from tests.grid.gridharness import REDIS_URL, redis_client
from tests.grid.test_grid_faults import redis_ready  # noqa: F401 - fixture

TIMEOUT = 2.0  # OBOOK_BROKER_TIMEOUT of the test
BOUND = 6 * TIMEOUT  # a publish, and Celery's retries of it over new connections


def fresh_connections(app) -> None:
    """Forget the Celery app's broker connections (and its producers), so that the next publish
    connects with the settings of now (as ``Celery._after_fork`` does)."""
    if app._pool is not None:
        app._pool.force_close_all()
    app._after_fork()


@pytest.fixture
def silent_broker(redis_ready, black_hole, monkeypatch):  # noqa: F811 - redis_ready is the fixture
    """(the proxy in front of Redis, the queue): the grid's Celery app publishing through it."""
    from workers.app import app, celery_config

    redis_at = urlsplit(REDIS_URL)
    proxy = black_hole(redis_at.hostname, redis_at.port or 6379)
    queue = f"obook-timeouts-{uuid.uuid4().hex[:8]}"
    monkeypatch.setenv("OBOOK_BROKER_URL", proxy.url_for(REDIS_URL))
    monkeypatch.setenv("OBOOK_BROKER_TIMEOUT", str(TIMEOUT))
    monkeypatch.setenv("OBOOK_QUEUE", queue)
    settings.cache_clear()
    saved = dict(app.conf)
    app.conf.update(celery_config())
    fresh_connections(app)
    yield proxy, queue
    proxy.close()  # first: a publish a failing test left waiting ends with its connection
    fresh_connections(app)
    app.conf.update({key: saved[key] for key in celery_config()})
    settings.cache_clear()
    redis_client().delete(queue)


def timed(call, *args):
    """(what ``call`` raised, or None; seconds it took)."""
    start = time.monotonic()
    try:
        call(*args)
    except Exception as exc:  # noqa: BLE001 - the publish's own error, whichever it is
        return exc, time.monotonic() - start
    return None, time.monotonic() - start


def test_a_publish_to_a_silent_broker_fails_in_bounded_time(silent_broker):
    from workers.tasks import send_slice

    proxy, queue = silent_broker
    send_slice("b", 1, "token-1")
    assert redis_client().llen(queue) == 1
    proxy.black_hole()
    error, seconds = within(120, timed, send_slice, "b", 2, "token-2")
    assert error is not None and seconds < BOUND, (error, seconds)
    print(f"\npublish to a silent broker failed after {seconds:.1f} s ({type(error).__name__})")
    proxy.forward()
    send_slice("b", 3, "token-3")
    sent = b"\n".join(redis_client().lrange(queue, 0, -1))
    # the failed publish's command, held in the silent connection, may still arrive: a duplicate
    # delivery, which the unit's lease makes harmless
    assert sent.count(b"token-1") == 1 and sent.count(b"token-3") == 1


def test_the_drivers_look_at_the_queue_gives_up_on_a_silent_broker(silent_broker):
    from workers.driver import redis_pending

    proxy, queue = silent_broker
    pending = redis_pending(settings().broker_url, queue)
    assert pending() == ""
    proxy.black_hole()
    started = time.monotonic()
    assert within(60, pending) is None
    assert time.monotonic() - started < 2 * TIMEOUT + 1
