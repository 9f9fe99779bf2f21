"""The service's in-memory caches: ``cachetools.TTLCache`` bounded by entries and by bytes.

Why bytes: a 722-move question costs a hundred times a short one, so a count of entries alone lets
anonymous requests fill gigabytes. ``TTLCache`` bounds the sum of ``getsizeof``; this adds the
bound on entries, the lock that lets the event loop and the worker threads share it (cachetools'
caches are not thread-safe), and a cost that may depend on the key (a question's moves).
"""

from __future__ import annotations

import math
import threading
from operator import itemgetter
from typing import Any, Callable, Hashable

from cachetools import TTLCache


class BoundedCache:
    """An LRU whose entries expire ``seconds`` after they were stored (0: stores nothing), bounded
    by ``size`` entries and by ``max_bytes`` of what ``weigh(key, value)`` estimates."""

    def __init__(self, size: int, seconds: float, max_bytes: float = math.inf,
                 weigh: Callable[[Hashable, Any], int] | None = None):
        self.size = max(size, 0)
        self.seconds = seconds
        self.max_bytes = max_bytes
        self.weigh = weigh or (lambda _key, _value: 0)
        # each entry is (value, its cost): TTLCache's getsizeof sees the value only
        self._items = TTLCache(max_bytes, max(seconds, 0), getsizeof=itemgetter(1))
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any | None:
        with self._lock:
            entry = self._items.get(key)
        return None if entry is None else entry[0]

    def put(self, key: Hashable, value: Any) -> None:
        if self.seconds <= 0 or self.size == 0:
            return
        cost = self.weigh(key, value)
        if cost > self.max_bytes:
            return  # larger than the whole cache: not kept
        with self._lock:
            self._items[key] = (value, cost)
            while len(self._items) > self.size:
                self._items.popitem()

    @property
    def bytes(self) -> int:
        """The estimated size of what is kept."""
        with self._lock:
            return self._items.currsize

    def clear(self) -> int:
        with self._lock:
            n = len(self._items)
            self._items.clear()
            return n

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
