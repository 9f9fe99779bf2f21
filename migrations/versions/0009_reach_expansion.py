"""The minimax book's reach expansion (issue 16): the play budget's policy per node, the move an
expansion adds, and the book's expansion rule and play budget.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("books") as batch:
        batch.add_column(sa.Column("expansion", sa.String(10), nullable=False, server_default="cost"))
        batch.add_column(sa.Column("play_playouts", sa.Integer, nullable=False, server_default="0"))
    with op.batch_alter_table("minimax_nodes") as batch:
        batch.add_column(sa.Column("play_policy", sa.Text, nullable=False, server_default=""))
    with op.batch_alter_table("expansions") as batch:
        batch.add_column(sa.Column("move", sa.SmallInteger, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("expansions") as batch:
        batch.drop_column("move")
    with op.batch_alter_table("minimax_nodes") as batch:
        batch.drop_column("play_policy")
    with op.batch_alter_table("books") as batch:
        batch.drop_column("play_playouts")
        batch.drop_column("expansion")
