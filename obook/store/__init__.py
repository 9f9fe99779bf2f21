"""The SQL store: books, the population of games, book statistics and worker heartbeats."""

from obook.store.db import Store, StoreError, open_store

__all__ = ["Store", "StoreError", "open_store"]
