"""Sample games through a book move, and the mean final score per book move (issue 20, item 7).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27

- ``ix_games_book_record``: (book_id, status, the first 200 characters of the moves, id), compared
  byte by byte (collation "C" on PostgreSQL), so that the finished games whose record starts with
  a line are one range of the index (``obook.store.games.games_through``, the games list's
  ``through``). Only a prefix is indexed: a whole 19x19 record can exceed PostgreSQL's index
  entry limit.
- ``book_stats.scored`` and ``score_sum``: the games of each row whose final score is known and the
  sum of the mover's scores. They cannot be computed in SQL (the rows are keyed by canonical
  Zobrist keys): the upgrade adds them as 0 and names the books with scored finished games, which
  ``obook verify --book NAME --repair`` recounts (until then their moves show no mean score).
"""

import logging

import sqlalchemy as sa
from alembic import context, op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")


def upgrade() -> None:
    with op.batch_alter_table("book_stats") as batch:
        batch.add_column(sa.Column("scored", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("score_sum", sa.Float, nullable=False, server_default="0"))
    bind = op.get_bind()
    start = 'substr(moves, 1, 200) COLLATE "C"' if bind.dialect.name == "postgresql" else "substr(moves, 1, 200)"
    if bind.dialect.name == "postgresql":  # built beside a live grid: writes are not held up
        with op.get_context().autocommit_block():
            op.execute(f"CREATE INDEX CONCURRENTLY ix_games_book_record ON games (book_id, status, ({start}), id)")
    else:
        op.execute(f"CREATE INDEX ix_games_book_record ON games (book_id, status, ({start}), id)")
    if context.is_offline_mode():  # `alembic upgrade --sql`: no data to read
        return
    scored = bind.execute(sa.text(
        "SELECT b.name, COUNT(*) FROM games g JOIN books b ON b.id = g.book_id "
        "WHERE g.status = 'finished' AND g.score IS NOT NULL GROUP BY b.name ORDER BY b.name")).all()
    for name, count in scored:
        log.warning("book %r has %d finished games with a final score: run `obook verify --book %s --repair` "
                    "to show each move's mean score", name, count, name)


def downgrade() -> None:
    op.drop_index("ix_games_book_record", "games")
    with op.batch_alter_table("book_stats") as batch:
        batch.drop_column("score_sum")
        batch.drop_column("scored")
