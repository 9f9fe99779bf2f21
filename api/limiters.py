"""How many of the service's threads each kind of blocking work may hold at once.

Why three limits: a lookup takes a fraction of a millisecond, while an export can take seconds of
replays and a progress or games page many queries. Sharing one limit, a queue of expensive
requests would keep every lookup waiting; with a limit each, however many expensive requests
clients send, the lookups keep their threads.
"""

from __future__ import annotations

from typing import Callable, TypeVar

import anyio
import anyio.to_thread

T = TypeVar("T")


class ServiceBusy(Exception):
    """Too many requests of one kind wait already: this one is refused (HTTP 503 with Retry-After)
    rather than queued without bound, each waiter holding its connection and memory."""


class ThreadLimits:
    """Runs blocking work in threads: lookups in up to ``threads`` at once, expensive pages in a
    quarter of that (at least one), exports one at a time with at most ``export_queue`` waiting
    (``OBOOK_API_EXPORT_QUEUE``; more are refused: ``ServiceBusy``). The limiters are made on first
    use, in the event loop that runs the app."""

    def __init__(self, threads: int, export_queue: int = 4):
        self.threads = max(threads, 1)
        self.heavy_threads = max(1, self.threads // 4)
        self.export_queue = max(export_queue, 0)
        self.exports_pending = 0  # running or waiting; counted on the event loop
        self._lookups: anyio.CapacityLimiter | None = None
        self._heavy: anyio.CapacityLimiter | None = None
        self._exports: anyio.CapacityLimiter | None = None

    async def run(self, function: Callable[..., T], *args) -> T:
        """Lookups and other short work (a book's row, one game)."""
        if self._lookups is None:
            self._lookups = anyio.CapacityLimiter(self.threads)
        return await anyio.to_thread.run_sync(function, *args, limiter=self._lookups)

    async def run_heavy(self, function: Callable[..., T], *args) -> T:
        """Progress and game pages: many queries and replays each."""
        if self._heavy is None:
            self._heavy = anyio.CapacityLimiter(self.heavy_threads)
        return await anyio.to_thread.run_sync(function, *args, limiter=self._heavy)

    async def run_export(self, function: Callable[..., T], *args) -> T:
        """Exports, one at a time, so that a queue of them delays neither the lookups nor the pages;
        one more than ``export_queue`` waiting is refused."""
        if self._exports is None:
            self._exports = anyio.CapacityLimiter(1)
        if self.exports_pending > self.export_queue:
            raise ServiceBusy(f"{self.exports_pending} exports are being made or waiting, the most this service "
                              f"queues (OBOOK_API_EXPORT_QUEUE={self.export_queue}): try again in a few seconds")
        self.exports_pending += 1
        try:
            return await anyio.to_thread.run_sync(function, *args, limiter=self._exports)
        finally:
            self.exports_pending -= 1
