"""The search-valued book (issue 16): minimax nodes, edges and expansion jobs.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-26
"""

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "minimax_nodes",
        sa.Column("book_id", sa.Integer, sa.ForeignKey("books.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("position_key", sa.BigInteger, primary_key=True),
        sa.Column("moves", sa.Text, nullable=False, server_default=""),
        sa.Column("own_value", sa.Float, nullable=False),
        sa.Column("own_error", sa.Float, nullable=False),
        sa.Column("own_visits", sa.Integer, nullable=False),
        sa.Column("best_new", sa.SmallInteger, nullable=False),
        sa.Column("policy", sa.Text, nullable=False, server_default=""),
        sa.Column("searched_edges", sa.Integer, nullable=False, server_default="0"),
        sa.Column("excluded_prior", sa.Float, nullable=False, server_default="0"),
        sa.Column("playouts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("spec", sa.Text, nullable=False, server_default=""),
        sa.Column("seed", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("engine_version", sa.String(100), nullable=False, server_default=""),
        sa.Column("searched_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("lcb", sa.Float, nullable=False),
        sa.Column("ucb", sa.Float, nullable=False),
    )
    op.create_table(
        "minimax_edges",
        sa.Column("book_id", sa.Integer, sa.ForeignKey("books.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("parent_key", sa.BigInteger, primary_key=True),
        sa.Column("move", sa.SmallInteger, primary_key=True),
        sa.Column("child_key", sa.BigInteger, nullable=False),
        sa.Column("prior", sa.Float, nullable=False, server_default="0"),
    )
    op.create_index("ix_minimax_edges_child", "minimax_edges", ["book_id", "child_key"])
    op.create_table(
        "expansions",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("book_id", sa.Integer, sa.ForeignKey("books.id", ondelete="CASCADE"), nullable=False),
        sa.Column("position_key", sa.BigInteger, nullable=False),
        sa.Column("generation", sa.Integer, nullable=False),
        sa.Column("moves", sa.Text, nullable=False, server_default=""),
        sa.Column("cost", sa.Float, nullable=False, server_default="0"),
        sa.Column("status", sa.String(12), nullable=False, server_default="pending"),
        sa.Column("attempts", sa.Integer, nullable=False, server_default="0"),
        sa.Column("seed", sa.BigInteger, nullable=False, server_default="0"),
        sa.Column("lease_owner", sa.String(200), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.UniqueConstraint("book_id", "position_key", "generation", name="uq_expansions_node_generation"),
    )
    op.create_index("ix_expansions_book_status", "expansions", ["book_id", "status"])


def downgrade() -> None:
    op.drop_table("expansions")
    op.drop_index("ix_minimax_edges_child", table_name="minimax_edges")
    op.drop_table("minimax_edges")
    op.drop_table("minimax_nodes")
