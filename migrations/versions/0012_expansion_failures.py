"""Poison expansions: how often an expansion failed, and why, as games have since 0006 (issue 30): an
expansion that raises is set aside after OBOOK_MAX_GAME_FAILURES instead of being sent for ever.

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("expansions") as batch:
        batch.add_column(sa.Column("failures", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("failure", sa.Text, nullable=True))


def downgrade() -> None:
    op.execute("UPDATE expansions SET status = 'pending' WHERE status = 'set_aside'")  # tried again
    with op.batch_alter_table("expansions") as batch:
        batch.drop_column("failure")
        batch.drop_column("failures")
