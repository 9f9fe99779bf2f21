"""The games list's sort (most recently changed first) by an index (issue 19, item 8): a deep
``games?offset=`` page walks the index instead of sorting every game of the book.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-27
"""

from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":  # built beside a live grid: writes are not held up
        with op.get_context().autocommit_block():
            op.create_index("ix_games_book_updated", "games", ["book_id", "updated_at", "id"],
                            postgresql_concurrently=True)
    else:
        op.create_index("ix_games_book_updated", "games", ["book_id", "updated_at", "id"])


def downgrade() -> None:
    op.drop_index("ix_games_book_updated", "games")
