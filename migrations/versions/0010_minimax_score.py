"""A minimax node's mean score (issue 16, item 4): Black's mean area score less komi over playouts
from the position, shown per book move by lookups.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("minimax_nodes") as batch:
        batch.add_column(sa.Column("score_mean", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("minimax_nodes") as batch:
        batch.drop_column("score_mean")
