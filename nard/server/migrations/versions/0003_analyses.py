"""Analyses of finished matches and rollouts of positions, queued by the page and
made by worker processes.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "analyses",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column(
            "table_id",
            sa.String(16),
            sa.ForeignKey("tables.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("plies", sa.Integer, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False, server_default="match"),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("done", sa.Integer, nullable=False, server_default="0"),
        sa.Column("total", sa.Integer, nullable=False, server_default="0"),
        sa.Column("result", sa.JSON),
        sa.Column("error", sa.Text),
        sa.Column("requested_by", sa.Integer, sa.ForeignKey("players.id")),
        sa.Column("record", sa.Text),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True)),
        sa.Column("heartbeat", sa.DateTime(timezone=True)),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_analyses_table_id", "analyses", ["table_id"])


def downgrade() -> None:
    op.drop_index("ix_analyses_table_id", "analyses")
    op.drop_table("analyses")
