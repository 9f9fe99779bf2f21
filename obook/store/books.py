"""Books: their settings as stored, found by name, and the lock that serialises the creation of a
book's games."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from sqlalchemy import Connection, func, select

from obook.errors import ObookError
from obook.store.db import as_utc
from obook.store.models import Book, utcnow

BOOKS = Book.__table__


class BookNotFound(ObookError):
    """No book of that name in the store."""


@dataclass(frozen=True)
class BookInfo:
    id: int
    name: str
    size: int
    komi: float
    rules: str
    algorithm: str
    threshold: float
    search: str
    seconds_per_move: float
    depth: int
    engine_version: str
    created_at: dt.datetime
    widening: float = 0.0
    expansion: str = "cost"  # minimax books: "cost" (KataGo's) or "reach" (obook.book.minimax)
    play_playouts: int = 0  # minimax books: the play budget whose policy models the opponent (0: S / 100)
    knowledge: str | None = None  # the digest of the learned data its searches read (None: not recorded)
    seed_salt: int = 0  # minimax books: mixed into every expansion's seed (0: the seeds of books before it)
    opponents: str = ""  # reach books: the opponent population (``obook.book.expansion.opponent_configs``)
    reply_temperature: float = 1.0  # reach books: the opponent model's (``obook.book.minimax.tempered``)

    @property
    def superko(self) -> bool:
        return self.rules.endswith("superko")


def book_from_row(row) -> BookInfo:
    m = row._mapping
    return BookInfo(id=m["id"], name=m["name"], size=m["size"], komi=m["komi"], rules=m["rules"],
                    algorithm=m["algorithm"], threshold=m["threshold"], search=m["search"],
                    seconds_per_move=m["seconds_per_move"], depth=m["depth"], engine_version=m["engine_version"],
                    created_at=as_utc(m["created_at"]), widening=m["widening"],
                    expansion=m["expansion"], play_playouts=m["play_playouts"], knowledge=m["knowledge"],
                    seed_salt=m["seed_salt"], opponents=m["opponents"], reply_temperature=m["reply_temperature"])



def create_book(conn: Connection, **fields) -> BookInfo:
    fields.setdefault("created_at", utcnow())
    book_id = conn.execute(BOOKS.insert().values(**fields)).inserted_primary_key[0]
    return book_from_row(conn.execute(select(BOOKS).where(BOOKS.c.id == book_id)).one())


def set_book_engine(conn: Connection, book_id: int, search: str, knowledge: str) -> None:
    """Record the engine that builds the book from now on (its full search spec and knowledge digest)."""
    conn.execute(BOOKS.update().where(BOOKS.c.id == book_id).values(search=search, knowledge=knowledge))


def find_book(conn: Connection, name: str) -> BookInfo | None:
    row = conn.execute(select(BOOKS).where(BOOKS.c.name == name)).one_or_none()
    return book_from_row(row) if row is not None else None


def get_book(conn: Connection, name: str) -> BookInfo:
    book = find_book(conn, name)
    if book is None:
        names = [r[0] for r in conn.execute(select(BOOKS.c.name).order_by(BOOKS.c.name).limit(20))]
        known = f" (books here: {', '.join(names)})" if names else " (the store has no books yet)"
        raise BookNotFound(f"no book named {name!r}{known}")
    return book


def list_books(conn: Connection) -> list[BookInfo]:
    return [book_from_row(r) for r in conn.execute(select(BOOKS).order_by(BOOKS.c.name))]


def lock_book(conn: Connection, book_id: int, shared: bool = False) -> None:
    """Take the book's lock until the caller's transaction ends (PostgreSQL row lock; SQLite's
    ``BEGIN IMMEDIATE`` already serialises every writer). Exclusive: the callers that create a
    book's games, and a repair that replaces its statistics; ``shared``: every transaction that adds
    statistics (a finish, a seed), so that many add at once but none while a repair replaces them.
    The exclusive lock is ``FOR NO KEY UPDATE``, not ``FOR UPDATE``: it excludes the other holders
    just as well, but not the key-share locks that PostgreSQL's foreign-key checks take on the book's
    row, so that a row that merely names the book (a staged result, a heartbeat) is written while
    another transaction holds the lock, instead of queueing behind it."""
    if conn.dialect.name == "postgresql":
        conn.execute(select(BOOKS.c.id).where(BOOKS.c.id == book_id).with_for_update(read=shared,
                                                                                      key_share=not shared))


SCHEDULE_LOCK = 0x0B00C  # PostgreSQL advisory lock class of a book's schedulers (the book's id is the object)


def lock_schedule(conn: Connection, book_id: int) -> None:
    """Take the lock of the book's schedulers until the caller's transaction ends: schedulers take
    turns (none picks what another just picked, the target is never overshot), but a scheduler does
    not hold the book's lock, so that results are applied while it chooses. PostgreSQL advisory
    lock; SQLite's ``BEGIN IMMEDIATE`` already serialises every writer."""
    if conn.dialect.name == "postgresql":
        conn.execute(select(func.pg_advisory_xact_lock(SCHEDULE_LOCK, book_id)))


def try_lock_book(conn: Connection, book_id: int) -> bool:
    """Take the book's exclusive lock if nobody holds it now (True), without waiting (False)."""
    if conn.dialect.name != "postgresql":
        return True  # the transaction's BEGIN IMMEDIATE holds it
    return conn.execute(select(BOOKS.c.id).where(BOOKS.c.id == book_id)
                        .with_for_update(skip_locked=True, key_share=True)).first() is not None
