"""Settings read from the environment (``OBOOK_*``), one object for every front end.

The embedded default needs no servers: a SQLite file in the current directory and local processes.
At scale the same variables point at PostgreSQL and Redis (see ``docker-compose.yml``).
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="OBOOK_", extra="ignore")

    database_url: str = "sqlite:///obook.db"  # the store: a SQLite file or postgresql+psycopg://...
    broker_url: str = "redis://127.0.0.1:6379/0"  # the Celery broker of the grid
    admin_token: str = ""  # Bearer token of the admin endpoints (POST /v1/admin/...); empty: they are closed
    lease_seconds: float = 120.0  # how long a claimed game stays with its player without news
    queue: str = "obook"  # the grid's Celery queue (one per deployment or test session)
    slice_seconds: float = 5.0  # a grid task plays moves of one game until this long, then hands it on
    visibility_timeout: float = 4 * 3600.0  # Redis redelivers an unacknowledged task after this long
    soft_shutdown_seconds: float = 60.0  # a worker told to stop finishes its slices within this
    max_game_failures: int = 3  # a game whose play fails this often (an engine bug...) is set aside
    set_aside_workers: int = 2  # on the grid, and only after failing on this many different workers
    quarantine_failures: int = 5  # a grid worker that fails this many units in a row takes no more work
    retry_seconds: float = 2.0  # a failed unit waits this long before it is tried again, doubling per failure
    site: str = ""  # where workers run (a data centre, a lab): the first part of a worker's identity
    db_connect_timeout: float = 10.0  # seconds to open a PostgreSQL connection
    db_statement_timeout: float = 300.0  # longest PostgreSQL statement, seconds (0: no limit)
    db_idle_transaction_timeout: float = 60.0  # PostgreSQL ends a session idle this long inside a transaction
    broker_timeout: float = Field(5.0, ge=2.0)  # seconds a Redis connection may stay silent (publish, consume, connect)
    durable_moves: bool = False  # grid workers wait for the disk at each commit (see workers/tasks.py)
    api_host: str = "127.0.0.1"
    api_port: int = 8000
    api_threads: int = 8  # threads that run the service's blocking work (database, replays)
    api_cache_seconds: float = 600.0  # longest a lookup answer is reused (0: no cache); new games refresh it sooner
    api_fresh_seconds: float = 1.0  # how often the service asks whether a book has new games
    api_db_timeout: float = Field(5.0, gt=0)  # longest a lookup waits for the database's answer (then 503)
    api_cache_size: int = 20000  # lookup answers kept in memory
    api_cache_mb: float = 192.0  # and at most this much memory (estimated) for the three lookup caches
    worker_concurrency: int = 0  # processes of one grid worker (0: the machine's CPU count)
    cors_origins: str = ""  # browser origins allowed to call the service, comma-separated ("*": any); empty: none
    api_export_cache_mb: float = 64.0  # SGF exports kept (per book generation and parameters), in megabytes
    api_export_queue: int = Field(4, ge=0)  # exports waiting for the one being made; more are refused (503)
    # Read by `obook db roles` alone (obook/store/roles.py): the password it gives each role; empty
    # leaves a role's password as it is (a new role then has none: only trust or peer log-ins).
    migrator_password: str = ""
    service_password: str = ""
    worker_password: str = ""
    backup_password: str = ""


@lru_cache(maxsize=1)
def settings() -> Settings:
    return Settings()
