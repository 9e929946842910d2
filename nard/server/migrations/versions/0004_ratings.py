"""Ratings: each player's FIBS rating and experience, and every rated match's change.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("rating", sa.Float, nullable=False, server_default="1500"))
        batch.add_column(sa.Column("experience", sa.Integer, nullable=False, server_default="0"))
        batch.add_column(sa.Column("rated_matches", sa.Integer, nullable=False, server_default="0"))
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("rated", sa.Boolean, nullable=False, server_default=sa.false()))
    op.create_table(
        "rating_changes",
        sa.Column(
            "table_id",
            sa.String(16),
            sa.ForeignKey("tables.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("player_id", sa.Integer, sa.ForeignKey("players.id"), primary_key=True),
        sa.Column("won", sa.Boolean, nullable=False),
        sa.Column("match_length", sa.Integer, nullable=False),
        sa.Column("opponent_id", sa.Integer, sa.ForeignKey("players.id")),
        sa.Column("opponent_name", sa.String(32), nullable=False),
        sa.Column("opponent_rating", sa.Float, nullable=False),
        sa.Column("rating_before", sa.Float, nullable=False),
        sa.Column("rating_after", sa.Float, nullable=False),
        sa.Column("experience_before", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_rating_changes_player_id", "rating_changes", ["player_id"])
    op.create_index("ix_players_rating", "players", ["rating"])


def downgrade() -> None:
    op.drop_index("ix_players_rating", "players")
    op.drop_index("ix_rating_changes_player_id", "rating_changes")
    op.drop_table("rating_changes")
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("rated")
    with op.batch_alter_table("players") as batch:
        batch.drop_column("rated_matches")
        batch.drop_column("experience")
        batch.drop_column("rating")
