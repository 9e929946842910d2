"""Presence: when each seat's player was last connected to the table.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("table_seats") as batch:
        batch.add_column(sa.Column("last_seen", sa.DateTime(timezone=True)))


def downgrade() -> None:
    with op.batch_alter_table("table_seats") as batch:
        batch.drop_column("last_seen")
