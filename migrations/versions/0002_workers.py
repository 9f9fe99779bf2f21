"""Worker heartbeats: who is playing which game right now.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "workers",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("host", sa.String(200), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("engine_version", sa.String(100), nullable=False),
        sa.Column("book_id", sa.Integer),
        sa.Column("game_id", sa.Integer),
        sa.Column("moves", sa.Text, nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_workers_last_seen", "workers", ["last_seen"])


def downgrade() -> None:
    op.drop_index("ix_workers_last_seen", "workers")
    op.drop_table("workers")
