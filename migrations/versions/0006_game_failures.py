"""Poison games: how often a game's play failed, and why (issue 19, item 5).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("failures", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("failure", sa.Text, nullable=True))


def downgrade() -> None:
    op.execute("UPDATE games SET status = 'in_progress' WHERE status = 'set_aside'")  # played again
    with op.batch_alter_table("games") as batch:
        batch.drop_column("failure")
        batch.drop_column("failures")
