"""A reach book's reply temperature (issue 32): the opponent model plays a reply with probability
proportional to its play-policy share raised to ``1 / T``. Books made before it were scheduled with
the shares themselves: 1.0.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-01
"""

import sqlalchemy as sa
from alembic import op

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("books") as batch:
        batch.add_column(sa.Column("reply_temperature", sa.Float, nullable=False, server_default="1.0"))


def downgrade() -> None:
    with op.batch_alter_table("books") as batch:
        batch.drop_column("reply_temperature")
