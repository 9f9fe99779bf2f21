"""A book's engine record (issue 32): the digest of the learned knowledge its searches read (the move
model and the shape counts), beside its search, which new books store with every option, defaults
included (``SearchConfig.to_full_spec``). Books made before it have no digest: a build refuses to
continue them with this obook's engine unless told to (``--allow-engine-change``). And a minimax
book's seed salt, mixed into every expansion's seed, so that two builds with the same settings can
differ (0, the books before it: the seeds as they were). And a reach book's opponent population: the
engines whose replies its opponent model averages ("": the book's search at the play budget).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-28
"""

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("books") as batch:
        batch.add_column(sa.Column("knowledge", sa.String(80), nullable=True))
        batch.add_column(sa.Column("seed_salt", sa.BigInteger, nullable=False, server_default="0"))
        batch.add_column(sa.Column("opponents", sa.Text, nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("books") as batch:
        batch.drop_column("opponents")
        batch.drop_column("seed_salt")
        batch.drop_column("knowledge")
