"""The book's expansions in id order (issue 31): a scheduler reads the expansions scheduled since the
last one it saw (``obook.store.minimax.scheduled_since``: ``book_id = ? AND id > ?``). With only
``(book_id, status)`` to go by, PostgreSQL read every expansion of the book when its statistics were
stale (18 ms at 7 x 10^4 expansions, never analysed); this index answers it from the last id on.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_expansions_book_id", "expansions", ["book_id", "id"])


def downgrade() -> None:
    op.drop_index("ix_expansions_book_id", table_name="expansions")
