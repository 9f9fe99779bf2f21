"""Draws in the book statistics: a jigo counts as half a win for both players.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-26

Before this revision a drawn game (result "0", or a seed's "Draw"/"Jigo") was counted as a game
without a win for either player, and its draws cannot be recomputed in SQL (the statistics are
keyed by canonical Zobrist keys). The upgrade therefore adds the column with 0 draws and names the
books that hold drawn games: ``obook verify --book NAME --repair`` recounts them.
"""

import logging

import sqlalchemy as sa
from alembic import context, op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

log = logging.getLogger("alembic.runtime.migration")


def upgrade() -> None:
    with op.batch_alter_table("book_stats") as batch:
        batch.add_column(sa.Column("draws", sa.Integer, nullable=False, server_default="0"))
    if context.is_offline_mode():  # `alembic upgrade --sql`: no data to read
        return
    drawn = op.get_bind().execute(sa.text(
        "SELECT b.name, COUNT(*) FROM games g JOIN books b ON b.id = g.book_id "
        "WHERE g.status = 'finished' AND g.winner IS NULL AND UPPER(TRIM(g.result)) IN ('0', 'DRAW', 'JIGO') "
        "GROUP BY b.name ORDER BY b.name")).all()
    for name, count in drawn:
        log.warning("book %r has %d drawn games counted without their draws: run "
                    "`obook verify --book %s --repair` to count each as half a win", name, count, name)


def downgrade() -> None:
    with op.batch_alter_table("book_stats") as batch:
        batch.drop_column("draws")
