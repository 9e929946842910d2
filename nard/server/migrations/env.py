"""Alembic's environment for nard's database: run by :func:`nard.server.storage.migrate`."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from nard.server.models import Base

config = context.config
connection: Connection | None = config.attributes.get("connection")
if connection is None:  # pragma: no cover - nard always hands over a connection
    raise RuntimeError("run nard's migrations through nard.server.storage.migrate")
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
