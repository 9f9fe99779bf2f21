"""Workers' identities and records (issue 33): failures charged to workers (counts, quarantine),
the workers each unit failed on (``failed_by``: on the grid a unit is set aside only after failing
on two different workers), and provenance (who finished a game, who wrote each slice of its
moves, whose result an expansion is, who searched a minimax node, which expansion added an edge),
kept after the finish.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "worker_records",
        sa.Column("id", sa.String(200), primary_key=True),
        sa.Column("site", sa.String(100), nullable=False, server_default=""),
        sa.Column("host", sa.String(200), nullable=False, server_default=""),
        sa.Column("pid", sa.Integer, nullable=False, server_default="0"),
        sa.Column("kind", sa.String(20), nullable=False, server_default="local"),
        sa.Column("engine_version", sa.String(100), nullable=False, server_default=""),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("units_done", sa.Integer, nullable=False, server_default="0"),
        sa.Column("failures", sa.Integer, nullable=False, server_default="0"),
        sa.Column("failures_in_row", sa.Integer, nullable=False, server_default="0"),
        sa.Column("quarantined_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("quarantine_reason", sa.Text, nullable=True),
    )
    op.create_table(
        "game_slices",
        sa.Column("game_id", sa.Integer, sa.ForeignKey("games.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("first_move", sa.Integer, primary_key=True),
        sa.Column("worker_id", sa.String(200), nullable=False),
        sa.Column("written_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_game_slices_worker", "game_slices", ["worker_id", "written_at"])
    with op.batch_alter_table("games") as batch:
        batch.add_column(sa.Column("failed_by", sa.Text, nullable=False, server_default=""))
        batch.add_column(sa.Column("finished_by", sa.String(200), nullable=True))
    with op.batch_alter_table("expansions") as batch:
        batch.add_column(sa.Column("failed_by", sa.Text, nullable=False, server_default=""))
        batch.add_column(sa.Column("done_by", sa.String(200), nullable=True))
    with op.batch_alter_table("expansion_results") as batch:
        batch.add_column(sa.Column("worker_id", sa.String(200), nullable=True))
    with op.batch_alter_table("workers") as batch:
        batch.add_column(sa.Column("worker_id", sa.String(200), nullable=True))
    with op.batch_alter_table("minimax_nodes") as batch:
        batch.add_column(sa.Column("searched_by", sa.String(200), nullable=True))
    with op.batch_alter_table("minimax_edges") as batch:
        batch.add_column(sa.Column("added_by", sa.Integer, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("minimax_edges") as batch:
        batch.drop_column("added_by")
    with op.batch_alter_table("minimax_nodes") as batch:
        batch.drop_column("searched_by")
    with op.batch_alter_table("workers") as batch:
        batch.drop_column("worker_id")
    with op.batch_alter_table("expansion_results") as batch:
        batch.drop_column("worker_id")
    with op.batch_alter_table("expansions") as batch:
        batch.drop_column("done_by")
        batch.drop_column("failed_by")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("finished_by")
        batch.drop_column("failed_by")
    op.drop_index("ix_game_slices_worker", table_name="game_slices")
    op.drop_table("game_slices")
    op.drop_table("worker_records")
