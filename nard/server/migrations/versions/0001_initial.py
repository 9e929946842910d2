"""Players, sign-in sessions, tables, their seats and their actions.

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "players",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("username", sa.String(32), unique=True),
        sa.Column("display_name", sa.String(32), nullable=False),
        sa.Column("password_hash", sa.String(200)),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "auth_sessions",
        sa.Column("token_hash", sa.String(64), primary_key=True),
        sa.Column(
            "player_id",
            sa.Integer(),
            sa.ForeignKey("players.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("csrf_token", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "tables",
        sa.Column("id", sa.String(16), primary_key=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True)),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("server_seed", sa.String(64), nullable=False),
        sa.Column("client_seed", sa.String(64), nullable=False),
        sa.Column("commitment", sa.String(64), nullable=False),
        sa.Column("invite_token", sa.String(32), nullable=False),
        sa.Column("public", sa.Boolean(), nullable=False),
        sa.Column("creator_id", sa.Integer(), sa.ForeignKey("players.id"), nullable=False),
        sa.Column("action_count", sa.Integer(), nullable=False),
    )
    op.create_table(
        "table_seats",
        sa.Column(
            "table_id",
            sa.String(16),
            sa.ForeignKey("tables.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column("player_id", sa.Integer(), sa.ForeignKey("players.id")),
        sa.Column("level", sa.String(16)),
        sa.Column("name", sa.String(32), nullable=False),
    )
    op.create_table(
        "table_actions",
        sa.Column(
            "table_id",
            sa.String(16),
            sa.ForeignKey("tables.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("seq", sa.Integer(), primary_key=True),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("command", sa.JSON(), nullable=False),
        sa.Column("note", sa.Text()),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_tables_status", "tables", ["status"])
    op.create_index("ix_tables_creator_id", "tables", ["creator_id"])
    op.create_index("ix_table_seats_player_id", "table_seats", ["player_id"])


def downgrade() -> None:
    for name in ("table_actions", "table_seats", "tables", "auth_sessions", "players"):
        op.drop_table(name)
