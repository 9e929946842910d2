"""Matchmaking: a table may challenge one player (``challenged_id``) and be the
rematch of another (``rematch_of``).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(
            sa.Column(
                "challenged_id",
                sa.Integer,
                sa.ForeignKey("players.id", name="fk_tables_challenged_id"),
            )
        )
        batch.add_column(sa.Column("rematch_of", sa.String(16)))
    op.create_index("ix_tables_challenged_id", "tables", ["challenged_id"])
    op.create_index("ix_tables_rematch_of", "tables", ["rematch_of"])


def downgrade() -> None:
    op.drop_index("ix_tables_rematch_of", "tables")
    op.drop_index("ix_tables_challenged_id", "tables")
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("rematch_of")
        batch.drop_column("challenged_id")
