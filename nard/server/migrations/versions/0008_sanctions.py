"""The moderators' sanctions: players muted or suspended (``nard moderate``).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "sanctions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("player_id", sa.Integer, sa.ForeignKey("players.id"), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("issued_by", sa.String(64), nullable=False),
        sa.Column("report_id", sa.Integer),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True)),
        sa.Column("lifted_at", sa.DateTime(timezone=True)),
    )
    op.create_index("ix_sanctions_player_id", "sanctions", ["player_id"])


def downgrade() -> None:
    op.drop_index("ix_sanctions_player_id", "sanctions")
    op.drop_table("sanctions")
