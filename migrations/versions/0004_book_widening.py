"""Progressive widening of a book's positions (an exploration option beyond seed 002).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("books") as batch:
        batch.add_column(sa.Column("widening", sa.Float, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("books") as batch:
        batch.drop_column("widening")
