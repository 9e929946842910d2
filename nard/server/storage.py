"""The database: SQLite by default, PostgreSQL by URL, migrated by Alembic.

:class:`Storage` is the only code that talks SQL. Every write is one
transaction; a table's actions are appended with their sequence numbers, and
the primary key ``(table_id, seq)`` refuses a second writer that raced for
the same number (:class:`ConflictError`), so nothing stored is ever
overwritten.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, event, func, or_, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from nard.core import NardError
from nard.server.models import AuthSession, PlayerRow, TableActionRow, TableRow, TableSeatRow

__all__ = ["ConflictError", "Storage", "StoredTable", "UsernameTakenError"]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
SESSION_LIFETIME = timedelta(days=180)
"""How long a sign-in lasts (the cookie's age matches it)."""


class ConflictError(NardError):
    """Another writer changed the table first: reload it and try again."""


class UsernameTakenError(NardError, ValueError):
    """An account with that username exists."""


@dataclass(frozen=True)
class StoredTable:
    """A table as stored: its row, its seats and its actions in order."""

    row: TableRow
    seats: list[TableSeatRow]
    actions: list[TableActionRow]


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class Storage:
    """Players, sign-in sessions and tables in the database at ``url``."""

    def __init__(self, url: str) -> None:
        self.url = url
        if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        self.engine: Engine = create_engine(url)
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def migrate(self) -> None:
        """Bring the schema up to date (Alembic ``upgrade head``)."""
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def close(self) -> None:
        self.engine.dispose()

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with self._sessions() as session, session.begin():
            yield session

    # -- players -------------------------------------------------------------
    def create_player(
        self, display_name: str, username: str | None = None, password_hash: str | None = None
    ) -> PlayerRow:
        row = PlayerRow(
            display_name=display_name,
            username=username,
            password_hash=password_hash,
            created_at=datetime.now(UTC),
        )
        try:
            with self._session() as s:
                s.add(row)
        except IntegrityError:
            raise UsernameTakenError(f"the username {username!r} is taken") from None
        return row

    def player(self, player_id: int) -> PlayerRow | None:
        with self._session() as s:
            return s.get(PlayerRow, player_id)

    def player_by_username(self, username: str) -> PlayerRow | None:
        with self._session() as s:
            return s.scalars(select(PlayerRow).where(PlayerRow.username == username)).first()

    def upgrade_guest(self, player_id: int, username: str, password_hash: str) -> PlayerRow:
        """Turn a guest into an account, keeping its games."""
        try:
            with self._session() as s:
                row = s.get(PlayerRow, player_id)
                assert row is not None
                row.username = username
                row.display_name = username
                row.password_hash = password_hash
        except IntegrityError:
            raise UsernameTakenError(f"the username {username!r} is taken") from None
        return row

    # -- sign-in sessions ------------------------------------------------------
    def new_auth_session(self, player_id: int) -> tuple[str, str]:
        """A new session for the player: (cookie token, CSRF token). Only the token's
        hash is stored."""
        token = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        with self._session() as s:
            s.add(
                AuthSession(
                    token_hash=_hash_token(token),
                    player_id=player_id,
                    csrf_token=csrf,
                    created_at=datetime.now(UTC),
                )
            )
        return token, csrf

    def auth_session(self, token: str) -> tuple[PlayerRow, str] | None:
        """The player and CSRF token of a cookie token, or None (unknown or expired:
        an expired session is deleted)."""
        with self._session() as s:
            found = s.get(AuthSession, _hash_token(token))
            if found is None:
                return None
            created = found.created_at
            if created.tzinfo is None:  # SQLite gives naive datetimes back
                created = created.replace(tzinfo=UTC)
            if datetime.now(UTC) - created > SESSION_LIFETIME:
                s.delete(found)
                return None
            player = s.get(PlayerRow, found.player_id)
            return None if player is None else (player, found.csrf_token)

    def set_password(self, player_id: int, password_hash: str) -> None:
        with self._session() as s:
            row = s.get(PlayerRow, player_id)
            assert row is not None
            row.password_hash = password_hash

    def end_other_sessions(self, player_id: int, keep_token: str) -> int:
        """Sign the player out everywhere but the session of ``keep_token``; how many."""
        keep = _hash_token(keep_token)
        with self._session() as s:
            rows = s.scalars(select(AuthSession).where(AuthSession.player_id == player_id))
            ended = 0
            for row in rows:
                if row.token_hash != keep:
                    s.delete(row)
                    ended += 1
            return ended

    def end_auth_session(self, token: str) -> None:
        with self._session() as s:
            found = s.get(AuthSession, _hash_token(token))
            if found is not None:
                s.delete(found)

    # -- tables ----------------------------------------------------------------
    def create_table(
        self,
        table_id: str,
        *,
        status: str,
        settings: dict[str, Any],
        seats: Sequence[dict[str, Any]],
        server_seed: str,
        client_seed: str,
        commitment: str,
        invite_token: str,
        creator_id: int,
        public: bool = False,
    ) -> None:
        with self._session() as s:
            s.add(
                TableRow(
                    id=table_id,
                    created_at=datetime.now(UTC),
                    status=status,
                    settings=settings,
                    server_seed=server_seed,
                    client_seed=client_seed,
                    commitment=commitment,
                    invite_token=invite_token,
                    public=public,
                    creator_id=creator_id,
                    action_count=0,
                )
            )
            s.flush()
            for number, seat in enumerate(seats):
                s.add(TableSeatRow(table_id=table_id, seat=number, **seat))

    def table_row(self, table_id: str) -> TableRow | None:
        """The table's own row (no seats or actions)."""
        with self._session() as s:
            return s.get(TableRow, table_id)

    def load_table(self, table_id: str) -> StoredTable | None:
        with self._session() as s:
            row = s.get(TableRow, table_id)
            if row is None:
                return None
            seats = list(
                s.scalars(
                    select(TableSeatRow)
                    .where(TableSeatRow.table_id == table_id)
                    .order_by(TableSeatRow.seat)
                )
            )
            actions = list(
                s.scalars(
                    select(TableActionRow)
                    .where(TableActionRow.table_id == table_id)
                    .order_by(TableActionRow.seq)
                )
            )
            return StoredTable(row, seats, actions)

    def append_actions(
        self,
        table_id: str,
        first_seq: int,
        entries: Sequence[tuple[int, dict[str, Any]]],
        *,
        status: str,
    ) -> None:
        """Store ``entries`` (seat, command) as actions ``first_seq``, ``first_seq + 1``...

        The table's action count must still be ``first_seq``; otherwise
        :class:`ConflictError` and nothing is written.
        """
        now = datetime.now(UTC)
        try:
            with self._session() as s:
                changed = s.execute(
                    update(TableRow)
                    .where(TableRow.id == table_id, TableRow.action_count == first_seq)
                    .values(
                        action_count=first_seq + len(entries),
                        status=status,
                        finished_at=now if status == "finished" else None,
                    )
                ).rowcount  # type: ignore[attr-defined]
                if changed != 1:
                    raise ConflictError(f"table {table_id} changed since action {first_seq}")
                for offset, (seat, cmd) in enumerate(entries):
                    s.add(
                        TableActionRow(
                            table_id=table_id,
                            seq=first_seq + offset,
                            seat=seat,
                            command=cmd,
                            created_at=now,
                        )
                    )
        except IntegrityError:
            raise ConflictError(f"table {table_id} changed since action {first_seq}") from None

    def take_seat(self, table_id: str, seat: int, player_id: int, name: str) -> bool:
        """Seat ``player_id`` in an open seat; False when someone sat there first."""
        with self._session() as s:
            changed = s.execute(
                update(TableSeatRow)
                .where(
                    TableSeatRow.table_id == table_id,
                    TableSeatRow.seat == seat,
                    TableSeatRow.player_id.is_(None),
                    TableSeatRow.level.is_(None),
                )
                .values(player_id=player_id, name=name)
            ).rowcount  # type: ignore[attr-defined]
            if changed == 1:
                s.execute(update(TableRow).where(TableRow.id == table_id).values(status="playing"))
            return bool(changed == 1)

    def set_status(self, table_id: str, status: str) -> None:
        with self._session() as s:
            s.execute(
                update(TableRow)
                .where(TableRow.id == table_id)
                .values(
                    status=status,
                    finished_at=datetime.now(UTC) if status == "finished" else None,
                )
            )

    def open_tables(self, limit: int = 50) -> list[StoredTable]:
        """Tables waiting for a second person, newest first (no actions loaded)."""
        with self._session() as s:
            rows = list(
                s.scalars(
                    select(TableRow)
                    .where(TableRow.status == "waiting", TableRow.public.is_(True))
                    .order_by(TableRow.created_at.desc())
                    .limit(limit)
                )
            )
            return [StoredTable(r, self._seats(s, r.id), []) for r in rows]

    def tables_of(self, player_id: int, limit: int = 100) -> list[StoredTable]:
        """The player's tables, newest first (no actions loaded)."""
        with self._session() as s:
            ids = select(TableSeatRow.table_id).where(TableSeatRow.player_id == player_id)
            rows = list(
                s.scalars(
                    select(TableRow)
                    .where(or_(TableRow.id.in_(ids), TableRow.creator_id == player_id))
                    .order_by(TableRow.created_at.desc())
                    .limit(limit)
                )
            )
            return [StoredTable(r, self._seats(s, r.id), []) for r in rows]

    def count_tables(self) -> int:
        with self._session() as s:
            return int(s.scalar(select(func.count()).select_from(TableRow)) or 0)

    @staticmethod
    def _seats(s: Session, table_id: str) -> list[TableSeatRow]:
        return list(
            s.scalars(
                select(TableSeatRow)
                .where(TableSeatRow.table_id == table_id)
                .order_by(TableSeatRow.seat)
            )
        )


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    # WAL with synchronous=NORMAL: a commit is safe from a crash of the server
    # (what the restart test checks) without an fsync per action; only a power
    # loss could drop the last commits, never corrupt the file.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA busy_timeout=5000")
    cursor.close()
