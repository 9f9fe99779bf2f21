"""A minimax node's backed-up score (issue 32, item 6): Black's score on the line its backed-up
value comes from, kept by the back-up beside the value and checked by ``obook verify``. Null in a
book backed up before: ``obook verify --repair`` fills it (and the next back-up, for the nodes it
reaches).

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("minimax_nodes") as batch:
        batch.add_column(sa.Column("backed_up_score", sa.Float, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("minimax_nodes") as batch:
        batch.drop_column("backed_up_score")
