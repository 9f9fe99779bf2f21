"""Database URLs as the user writes them and as SQLAlchemy needs them (shared by the store and its migrations)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError


def normalise_url(url: str) -> str:
    """Accept a bare path for SQLite and plain ``postgresql://`` URLs (psycopg 3 is the driver)."""
    if "://" not in url:
        return f"sqlite:///{Path(url).expanduser()}"
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


def describe_url(url: str) -> str:
    """The URL without its password, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return url


def missing_sqlite_file(url: str) -> Path | None:
    """The file a SQLite URL names when it does not exist (None for other databases, in-memory ones
    and files that exist): opening it would create an empty database where the user meant a book."""
    try:
        parsed = make_url(normalise_url(url))
    except ArgumentError:
        return None
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    path = Path(parsed.database)
    return None if path.exists() else path
