"""Chat messages a moderator removed (``nard moderate remove``): kept, with when, by
whom and why, and no longer listed or delivered.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-07
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chat_messages") as batch:
        batch.add_column(sa.Column("removed_at", sa.DateTime(timezone=True)))
        batch.add_column(sa.Column("removed_by", sa.String(64)))
        batch.add_column(sa.Column("removed_reason", sa.Text))


def downgrade() -> None:
    with op.batch_alter_table("chat_messages") as batch:
        batch.drop_column("removed_reason")
        batch.drop_column("removed_by")
        batch.drop_column("removed_at")
