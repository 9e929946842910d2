"""One authority per table: the computer's lease, the dice contributions' deadline,
and usernames compared by their canonical key.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("tables") as batch:
        batch.add_column(sa.Column("seed_deadline", sa.DateTime(timezone=True)))
        batch.add_column(sa.Column("lease_owner", sa.String(32)))
        batch.add_column(sa.Column("lease_until", sa.DateTime(timezone=True)))
    with op.batch_alter_table("players") as batch:
        batch.add_column(sa.Column("username_key", sa.String(100)))
        batch.create_unique_constraint("uq_players_username_key", ["username_key"])
    _fill_username_keys()


def _fill_username_keys() -> None:
    """Existing accounts get their canonical key; where two collide, the older keeps
    it and the newer signs in by its exact username only."""
    from nard.server.usernames import canonical_username

    bind = op.get_bind()
    players = sa.table(
        "players",
        sa.column("id", sa.Integer),
        sa.column("username", sa.String),
        sa.column("username_key", sa.String),
    )
    taken: set[str] = set()
    rows = bind.execute(
        sa.select(players.c.id, players.c.username)
        .where(players.c.username.is_not(None))
        .order_by(players.c.id)
    ).all()
    for player_id, username in rows:
        key = canonical_username(username)
        if key in taken:
            continue
        taken.add(key)
        bind.execute(players.update().where(players.c.id == player_id).values(username_key=key))


def downgrade() -> None:
    with op.batch_alter_table("players") as batch:
        batch.drop_constraint("uq_players_username_key", type_="unique")
        batch.drop_column("username_key")
    with op.batch_alter_table("tables") as batch:
        batch.drop_column("lease_until")
        batch.drop_column("lease_owner")
        batch.drop_column("seed_deadline")
