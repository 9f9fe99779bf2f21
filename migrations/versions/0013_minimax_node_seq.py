"""A minimax node's change sequence (issue 31, item 2): the book's commit that last wrote the row,
indexed, so that a scheduler reads what changed since it last looked instead of the whole book.

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("minimax_nodes") as batch:
        batch.add_column(sa.Column("seq", sa.BigInteger, nullable=False, server_default="0"))
    op.create_index("ix_minimax_nodes_book_seq", "minimax_nodes", ["book_id", "seq"])


def downgrade() -> None:
    op.drop_index("ix_minimax_nodes_book_seq", table_name="minimax_nodes")
    with op.batch_alter_table("minimax_nodes") as batch:
        batch.drop_column("seq")
