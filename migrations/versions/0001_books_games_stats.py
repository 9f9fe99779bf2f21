"""Books, games (the population) and the book statistics.

Revision ID: 0001
Revises:
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "books",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(100), nullable=False, unique=True),
        sa.Column("size", sa.SmallInteger, nullable=False),
        sa.Column("komi", sa.Float, nullable=False),
        sa.Column("rules", sa.String(40), nullable=False),
        sa.Column("algorithm", sa.String(10), nullable=False),
        sa.Column("threshold", sa.Float, nullable=False),
        sa.Column("search", sa.Text, nullable=False),
        sa.Column("seconds_per_move", sa.Float, nullable=False),
        sa.Column("depth", sa.Integer, nullable=False),
        sa.Column("engine_version", sa.String(100), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "games",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("book_id", sa.Integer, sa.ForeignKey("books.id", ondelete="CASCADE"), nullable=False),
        sa.Column("moves", sa.Text, nullable=False),
        sa.Column("n_moves", sa.Integer, nullable=False),
        sa.Column("origins", sa.Text, nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("result", sa.String(20)),
        sa.Column("winner", sa.String(1)),
        sa.Column("score", sa.Float),
        sa.Column("source", sa.String(10), nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("fingerprint", sa.String(64)),
        sa.Column("lease_owner", sa.String(200)),
        sa.Column("lease_until", sa.DateTime(timezone=True)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.UniqueConstraint("book_id", "fingerprint", name="uq_games_book_fingerprint"),
    )
    op.create_index("ix_games_book_status", "games", ["book_id", "status"])
    op.create_index("ix_games_book_finished", "games", ["book_id", "finished_at"])
    op.create_table(
        "book_stats",
        sa.Column("book_id", sa.Integer, sa.ForeignKey("books.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("position_key", sa.BigInteger, primary_key=True),
        sa.Column("move", sa.SmallInteger, primary_key=True),
        sa.Column("games", sa.Integer, nullable=False),
        sa.Column("wins", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("book_stats")
    op.drop_index("ix_games_book_finished", "games")
    op.drop_index("ix_games_book_status", "games")
    op.drop_table("games")
    op.drop_table("books")
