"""Who wrote what (issue 33, item 1): what one worker wrote between two times, and its revert.

Every write a worker makes to a unit is recorded with its identity
(``obook.store.workers.worker_identity``), kept after the finish: the first move of each slice of
a game's moves it wrote (``game_slices``), the games it finished (``games.finished_by``), the
expansions whose result it computed (``expansions.done_by``). ``audit`` lists them between two
times; ``revert_games`` abandons the games (finished or in progress) the worker wrote moves of or
finished in that window and recounts the book's statistics in the same transaction, under the
book's exclusive lock (finishes wait for it), so that ``obook verify`` agrees at once; the
abandoned games no longer count towards the target, and the next ``obook build`` or ``obook grid
run`` plays new games in their place.

``revert_expansions`` takes a minimax book's expansions with the worker's result out of the DAG,
newest first, in one transaction under the book's lock (``obook.store.minimax.revert_expansion``:
the edge each added, its child when it created it, the node's search when it is the worker's),
schedules them again (pending: the grid redoes them, searching their node again; those whose node
left the book with them are gone, and the schedule chooses afresh) and backs the
whole book up from scratch, so that ``obook verify`` agrees at once. An expansion whose node was
expanded again since, or whose child was, by another worker, is kept (and named): taking it out
would take theirs. A running driver's schedule does not see deleted nodes: stop it while
reverting, or restart it after. With ``dry_run`` both do all their work under the lock in a
transaction rolled back (``Store.trial``): what a revert would do, by the very rules it applies, with nothing written.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from sqlalchemy import or_, select, update

from obook.book.verification import recount
from obook.errors import ObookError
from obook.store.books import BookInfo, lock_book
from obook.store.db import Store, as_utc, db_time
from obook.store.games import GAMES, SLICES
from obook.book.backup import write_back_up
from obook.store.minimax import JOBS as EXPANSIONS
from obook.store.minimax import last_change, revert_expansion
from obook.store.models import ABANDONED, FINISHED, IN_PROGRESS
from obook.store.stats import replace_stats


@dataclass
class AuditGame:
    id: int
    status: str
    slices: list[int]  # the first move of each slice the worker wrote in the window
    finished: bool  # it finished the game in the window


@dataclass
class Audit:
    book: str
    worker_id: str
    since: dt.datetime
    until: dt.datetime
    games: list[AuditGame] = field(default_factory=list)
    expansions: list[int] = field(default_factory=list)  # done with the worker's result in the window

    @property
    def moves_slices(self) -> int:
        return sum(len(g.slices) for g in self.games)


def parse_time(text: str, what: str) -> dt.datetime:
    """An ISO 8601 time (UTC when it names no zone); a clear error otherwise."""
    try:
        value = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise ObookError(f"{what}: {text!r} is not a time; use ISO 8601, e.g. 2026-11-28T01:00:00+00:00") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.timezone.utc)


def audit(store: Store, book: BookInfo, worker_id: str, since: dt.datetime, until: dt.datetime) -> Audit:
    """What ``worker_id`` wrote to ``book`` between ``since`` and ``until`` (database times)."""
    if until < since:
        raise ObookError(f"the window ends ({until.isoformat()}) before it starts ({since.isoformat()})")
    found = Audit(book.name, worker_id, since, until)
    with store.snapshot() as conn:
        slices: dict[int, list[int]] = {}
        for game_id, first in conn.execute(
                select(SLICES.c.game_id, SLICES.c.first_move).join(GAMES, GAMES.c.id == SLICES.c.game_id).where(
                    GAMES.c.book_id == book.id, SLICES.c.worker_id == worker_id,
                    SLICES.c.written_at >= since, SLICES.c.written_at <= until).order_by(SLICES.c.game_id,
                                                                                          SLICES.c.first_move)):
            slices.setdefault(game_id, []).append(first)
        finished = {r[0] for r in conn.execute(select(GAMES.c.id).where(
            GAMES.c.book_id == book.id, GAMES.c.finished_by == worker_id,
            GAMES.c.finished_at >= since, GAMES.c.finished_at <= until))}
        ids = sorted(set(slices) | finished)
        statuses = dict(conn.execute(select(GAMES.c.id, GAMES.c.status).where(GAMES.c.id.in_(ids))).all()) if ids else {}
        found.games = [AuditGame(i, statuses[i], slices.get(i, []), i in finished) for i in ids]
        found.expansions = [r[0] for r in conn.execute(select(EXPANSIONS.c.id).where(
            EXPANSIONS.c.book_id == book.id, EXPANSIONS.c.done_by == worker_id,
            EXPANSIONS.c.done_at >= since, EXPANSIONS.c.done_at <= until).order_by(EXPANSIONS.c.id))]
    return found


def revert_games(store: Store, book: BookInfo, found: Audit, dry_run: bool = False) -> list[int]:
    """Abandon the games of ``found`` still finished or in progress (their ``failure`` says why) and
    recount the book's statistics from the finished games left, in one transaction under the book's
    exclusive lock. The ids abandoned (``dry_run``: that would be, nothing written)."""
    ids = [g.id for g in found.games if g.status in (FINISHED, IN_PROGRESS)]
    if not ids:
        return []
    why = f"reverted by obook audit: written by worker {found.worker_id}"[:2000]
    with store.trial() if dry_run else store.write() as conn:
        lock_book(conn, book.id)
        done = conn.execute(update(GAMES).where(
            GAMES.c.id.in_(ids), GAMES.c.book_id == book.id, or_(GAMES.c.status == FINISHED,
                                                                GAMES.c.status == IN_PROGRESS))
            .values(status=ABANDONED, failure=why, lease_owner=None, lease_until=None, updated_at=db_time(conn))
            .returning(GAMES.c.id)).scalars().all()
        counted = recount(conn, book)
        replace_stats(conn, book.id, counted.stats, counted.scores)
    return sorted(done)


def revert_expansions(store: Store, book: BookInfo, found: Audit,
                      dry_run: bool = False) -> tuple[list[int], list[int], list[tuple[int, str]]]:
    """Revert the expansions of ``found`` (newest first), back the book up; (reverted, those of them
    scheduled again, kept with why). A reverted expansion of a node that left the book with it (the
    child of an older one reverted) is gone: the schedule chooses afresh from the book left.
    ``dry_run``: the same answer, nothing written."""
    if not found.expansions:
        return [], [], []
    reverted, kept = [], []
    with store.trial() if dry_run else store.write() as conn:
        lock_book(conn, book.id)
        seq = last_change(conn, book.id) + 1
        for job_id in sorted(found.expansions, reverse=True):
            why = revert_expansion(conn, book.id, job_id, found.worker_id, seq)
            if why is None:
                reverted.append(job_id)
            else:
                kept.append((job_id, why))
        rescheduled = []
        if reverted:
            write_back_up(conn, book.id)
            rescheduled = list(conn.execute(select(EXPANSIONS.c.id).where(EXPANSIONS.c.id.in_(reverted))).scalars())
    return sorted(reverted), sorted(rescheduled), sorted(kept)


def as_text(found: Audit) -> list[str]:
    lines = [f"worker {found.worker_id} in book {found.book!r} from {as_utc(found.since).isoformat()} "
             f"to {as_utc(found.until).isoformat()}: {len(found.games)} games ({found.moves_slices} slices of moves, "
             f"{sum(g.finished for g in found.games)} finished by it), {len(found.expansions)} expansions"]
    for g in found.games[:50]:
        lines.append(f"  game {g.id} ({g.status}): moves from {', '.join(map(str, g.slices)) or '-'}"
                     + ("; finished it" if g.finished else ""))
    if found.expansions:
        lines.append(f"  expansions: {', '.join(map(str, found.expansions[:50]))}")
    return lines
