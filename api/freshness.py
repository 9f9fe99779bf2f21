"""Whether a book changed since its answers were cached: each book's generation, checked about every
``fresh_seconds``.

Why a generation: the service caches answers under it and serves them while it holds, so a
repeated question costs no query. It changes when the book does (its finished games, or a minimax
book's last change: ``StatsReader.changes``), which one indexed count or probe tells. A statistical
book repaired by ``obook verify --repair`` keeps its count: ``renew`` (``POST /v1/admin/cache/clear``)
covers that (a minimax book's repair is a change).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import anyio.to_thread

from api.caching import book_tag
from obook.store.books import BookInfo

log = logging.getLogger(__name__)


@dataclass
class BookVersion:
    """When the answers about a book were last known fresh: ``generation`` changes whenever the
    book's ``changes`` do."""

    book_id: int
    changes: int = -1
    generation: int = 0
    tag: str | None = None  # the ETag of answers about the book (``api.caching.book_tag``)
    checked: float = -math.inf
    refreshing: bool = False  # a check is on its way (started by a cache hit)
    lock: threading.Lock = field(default_factory=threading.Lock)


class BookVersions:
    """The books' versions. A cached answer is served while its book was checked less than
    ``fresh_seconds`` ago; past that, it is still served while a check runs in the background,
    until the last check is two ``fresh_seconds`` old with none on its way, or ten in any case:
    then the request checks the book itself. So an answer is about ``fresh_seconds`` behind the book."""

    def __init__(self, changes: Callable[[int], int], fresh_seconds: float):
        self.changes = changes  # the book's id -> a number that grows when its answers change
        self.fresh_seconds = fresh_seconds
        self._versions: dict[str, BookVersion] = {}
        self._generations = itertools.count(1)  # unique across books and their re-creations

    def current(self, book: BookInfo) -> BookVersion:
        """The book's version, asking the database when the last check is stale (blocking)."""
        version = self._versions.get(book.name)
        if version is None or version.book_id != book.id:
            version = self._versions[book.name] = BookVersion(book.id)
        if time.monotonic() - version.checked >= self.fresh_seconds:
            self._check(version)
        return version

    def fresh(self, book: BookInfo) -> BookVersion | None:
        """The book's version if it was checked less than ``fresh_seconds`` ago, ``None`` otherwise
        (on the event loop: no query)."""
        version = self._versions.get(book.name)
        if version is None or version.book_id != book.id or time.monotonic() - version.checked >= self.fresh_seconds:
            return None
        return version

    def serving(self, book: str) -> BookVersion | None:
        """The version of ``book`` if its cached answers may be served now, starting a check in the
        background when it is due; ``None``: the request checks the book itself (on the event loop)."""
        version = self._versions.get(book)
        if version is None:
            return None
        age = time.monotonic() - version.checked
        if age >= self.fresh_seconds:
            if age >= 10 * self.fresh_seconds or (age >= 2 * self.fresh_seconds and not version.refreshing):
                return None
            self._check_soon(version)
        return version

    def renew(self) -> None:
        """A new generation for every book: what was cached under the old ones is not served."""
        for version in list(self._versions.values()):
            version.generation = next(self._generations)

    def _check(self, version: BookVersion) -> None:
        with version.lock:
            if time.monotonic() - version.checked < self.fresh_seconds:
                return  # another thread just did
            changes = self.changes(version.book_id)
            if changes != version.changes:
                version.changes = changes
                version.tag = book_tag(version.book_id, changes)
                version.generation = next(self._generations)
            version.checked = time.monotonic()

    def _check_soon(self, version: BookVersion) -> None:
        """Start a check in the background (from the event loop), unless one is on its way."""
        if version.refreshing:
            return
        version.refreshing = True

        async def check() -> None:
            try:  # not in the lookups' threads: behind a queue of them, the check would come late
                await anyio.to_thread.run_sync(self._check, version)
            except Exception as exc:  # noqa: BLE001 - the next request checks in its own time
                log.warning("checking book %s for new games: %s", version.book_id, exc)
            finally:
                version.refreshing = False

        asyncio.get_running_loop().create_task(check())
