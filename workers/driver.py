"""The driver over Celery: ``obook.grid.driver.Driver`` with the broker's send and queue length."""

from __future__ import annotations

import logging

from obook.config import settings
from obook.grid.driver import Driver, DriverPlan
from obook.store.db import Store

log = logging.getLogger(__name__)

KOMBU_PRIORITY_SEPARATOR = "\x06\x16"  # kombu's Redis transport keeps priorities 3, 6, 9 in lists queue+sep+n


def redis_pending(broker_url: str, queue: str):
    """A function returning the raw text of every message waiting in ``queue`` or reserved by a
    worker (kombu's ``unacked`` hash), where the task arguments appear in the ``argsrepr`` header;
    None when Redis cannot be asked (within ``OBOOK_BROKER_TIMEOUT``)."""
    import redis  # lazy: the grid extra; the driver's tests run without a broker

    timeout = settings().broker_timeout
    client = redis.Redis.from_url(broker_url, socket_timeout=timeout, socket_connect_timeout=timeout,
                                  socket_keepalive=True)
    names = [queue] + [f"{queue}{KOMBU_PRIORITY_SEPARATOR}{p}" for p in (3, 6, 9)]

    def pending() -> str | None:
        try:
            pipe = client.pipeline(transaction=False)
            for name in names:
                pipe.lrange(name, 0, -1)
            pipe.hvals("unacked")
            chunks = [item for items in pipe.execute() for item in items]
        except redis.RedisError as exc:
            log.warning("cannot read the broker's messages: %s", exc)
            return None
        return "\n".join(c.decode("utf-8", "replace") for c in chunks)

    return pending


def celery_driver(store: Store, plan: DriverPlan) -> Driver:
    """Every unit (a game, an expansion) goes out as an ``advance_unit`` task."""
    from workers.tasks import send_slice  # lazy: the Celery tasks start an app: only when the driver sends

    s = settings()
    return Driver(store, plan, send=lambda unit_id, token: send_slice(plan.book, unit_id, token),
                  pending=redis_pending(s.broker_url, s.queue))
