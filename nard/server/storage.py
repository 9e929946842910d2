"""The database: SQLite by default, PostgreSQL by URL, migrated by Alembic.

:class:`Storage` is the only code that talks SQL. Every write is one
transaction. A table changes only by :meth:`Storage.commit`, which appends its
actions and advances the table's sequence number (``action_count``) with a
compare-and-set in the same transaction: of two writers that raced from the
same state, whichever process they run in, exactly one commits and the other
gets :class:`ConflictError`, so nothing stored is ever overwritten and no
state is reached that was not checked against the one before it. The primary
key ``(table_id, seq)`` of the actions backs the same guarantee.

The computer's seat is run by one process at a time: :meth:`Storage.acquire_lease`
takes the table's lease for one sequence number (the next commit ends it), and
a lease whose holder died expires.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import secrets
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

from alembic import command
from alembic.config import Config
from sqlalchemy import (
    Table,
    create_engine,
    delete,
    event,
    exists,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from nard.core import NardError
from nard.match.rating import INITIAL_RATING, RatingState, rate_match
from nard.server.models import (
    AnalysisRow,
    AuthSession,
    ChatMessageRow,
    PlayerBlockRow,
    PlayerRow,
    RatingChangeRow,
    ReportRow,
    SanctionRow,
    TableActionRow,
    TableRow,
    TableSeatRow,
)
from nard.server.usernames import canonical_username

__all__ = [
    "KEEP",
    "SANCTION_KINDS",
    "ConflictError",
    "Lease",
    "RatedSide",
    "Storage",
    "StoredAction",
    "StoredTable",
    "UsernameTakenError",
    "aware",
    "sanction_lasts",
]

MIGRATIONS = Path(__file__).resolve().parent / "migrations"


@functools.cache
def schema_revisions() -> tuple[str, frozenset[str]]:
    """The schema revision this code migrates to (Alembic's head) and every revision
    it knows (a database at another one was migrated by newer code)."""
    from alembic.script import ScriptDirectory

    scripts = ScriptDirectory(str(MIGRATIONS))
    head = scripts.get_current_head()
    assert head is not None
    return head, frozenset(r.revision for r in scripts.walk_revisions())


SESSION_LIFETIME = timedelta(days=180)
"""How long a sign-in lasts (the cookie's age matches it)."""
_MIGRATION_LOCK = 0x6E617264  # "nard": PostgreSQL advisory lock held while migrating


class ConflictError(NardError):
    """Another writer changed the table first: reload it and try again."""


class UsernameTakenError(NardError, ValueError):
    """An account with that username (or one that looks the same) exists."""


@dataclass(frozen=True)
class StoredAction:
    """One stored action: its sequence number, seat and command (JSON object)."""

    seq: int
    seat: int
    command: dict[str, Any]


@dataclass(frozen=True)
class StoredTable:
    """A table as stored: its row, its seats and its actions in order."""

    row: TableRow
    seats: list[TableSeatRow]
    actions: list[StoredAction]


@dataclass(frozen=True)
class Lease:
    """A process's hold on a table's computer turn: ``owner`` until ``until``."""

    owner: str
    until: datetime


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def aware(moment: datetime | None) -> datetime | None:
    """A stored time as an aware datetime: SQLite gives naive ones back, and they are UTC."""
    if moment is not None and moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment


KEEP: Any = object()
"""A :meth:`Storage.commit` argument left as it is stored."""
_UNSET = KEEP


@dataclass(frozen=True)
class RatedSide:
    """One side of a rated match: a person's account (``player_id``) or the computer
    (``player_id`` None, rated at ``fixed_rating``)."""

    player_id: int | None
    name: str
    fixed_rating: float | None = None


SANCTION_KINDS = ("mute", "suspend")
"""What a moderator can do to a player: ``mute`` (no chat messages) and ``suspend``
(no sign-in: every session ends, and none is taken while it lasts)."""


def _in_force(at: datetime) -> Any:
    """The condition on :class:`SanctionRow` of being in force at ``at``."""
    return SanctionRow.lifted_at.is_(None) & (
        SanctionRow.until.is_(None) | (SanctionRow.until > at)
    )


def _suspended(player_id: Any, at: datetime) -> Any:
    """The condition that the player ``player_id`` (a column) is suspended at ``at``."""
    return exists().where(
        SanctionRow.player_id == player_id, SanctionRow.kind == "suspend", _in_force(at)
    )


def sanction_lasts(row: SanctionRow, at: datetime) -> bool:
    """Whether the sanction ``row`` is in force at ``at`` (:func:`_in_force` in SQL)."""
    until = aware(row.until)
    return row.lifted_at is None and (until is None or until > at)


_players = cast(Table, PlayerRow.__table__)
_sessions = cast(Table, AuthSession.__table__)
_tables = cast(Table, TableRow.__table__)
_seats = cast(Table, TableSeatRow.__table__)
_actions = cast(Table, TableActionRow.__table__)


class Storage:
    """Players, sign-in sessions and tables in the database at ``url``."""

    def __init__(self, url: str) -> None:
        self.url = url
        if url.startswith("sqlite:///") and url != "sqlite:///:memory:":
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
        # A PostgreSQL connection may have died with its server: check it when taken
        # from the pool. An SQLite file has nothing to check.
        self.engine: Engine = create_engine(url, pool_pre_ping=not url.startswith("sqlite"))
        if self.engine.dialect.name == "sqlite":
            event.listen(self.engine, "connect", _sqlite_pragmas)
        self._orm = sessionmaker(self.engine, expire_on_commit=False)
        self._raw = _RawStatements(self.engine)
        self._async = _AsyncCommits(
            self.engine.url.set(drivername="postgresql").render_as_string(hide_password=False),
            self._raw.update_and_insert,
        )

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    def migrate(self) -> None:
        """Bring the schema up to date (Alembic ``upgrade head``); several processes
        starting at once on PostgreSQL migrate one after the other."""
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        with self._migration_lock(), self.engine.begin() as connection:
            if connection.dialect.name == "postgresql":
                connection.execute(text(f"SELECT pg_advisory_xact_lock({_MIGRATION_LOCK})"))
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    @contextmanager
    def _migration_lock(self) -> Iterator[None]:
        """Processes starting together on one SQLite file migrate one at a time (a lock
        on a file beside it; PostgreSQL's advisory lock does this for PostgreSQL)."""
        path = self.url.removeprefix("sqlite:///")
        if not self.url.startswith("sqlite:///") or path == ":memory:":
            yield
            return
        import fcntl

        with open(f"{path}.migrate-lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def ping(self) -> str | None:
        """One round trip to the database (raises when it cannot be reached): the
        revision of its schema (Alembic's), None before any migration."""
        with self.engine.connect() as connection:
            try:
                found = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
            except SQLAlchemyError:  # no such table (never migrated), or unreachable
                connection.rollback()
                connection.execute(text("SELECT 1"))  # raises if unreachable
                return None
            return str(found) if found is not None else None

    def close(self) -> None:
        self._raw.close()
        self._async.close()
        self.engine.dispose()

    @contextmanager
    def _session(self) -> Iterator[Session]:
        with self._orm() as session, session.begin():
            yield session

    # -- players -------------------------------------------------------------
    def create_player(
        self,
        display_name: str,
        username: str | None = None,
        password_hash: str | None = None,
        *,
        username_key: str | None = None,
    ) -> PlayerRow:
        row = PlayerRow(
            display_name=display_name,
            username=username,
            username_key=username_key,
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
        """The account whose username is exactly ``username``, else the one called so
        as usernames are compared (its canonical key: "ANN" finds "ann"). The exact
        name first: of two accounts made before keys whose keys collide, only the
        older has the key (migration 0002), and the newer is found by its own name."""
        with self._session() as s:
            found = s.scalars(select(PlayerRow).where(PlayerRow.username == username)).first()
            if found is not None:
                return found
            key = canonical_username(username)
            return s.scalars(select(PlayerRow).where(PlayerRow.username_key == key)).first()

    def upgrade_guest(
        self, player_id: int, username: str, password_hash: str, *, username_key: str | None = None
    ) -> PlayerRow:
        """Turn a guest into an account, keeping its games."""
        try:
            with self._session() as s:
                row = s.get(PlayerRow, player_id)
                assert row is not None
                row.username = username
                row.username_key = username_key
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
        with self.engine.begin() as c:
            c.execute(
                insert(_sessions).values(
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
        found = self._raw.session(_hash_token(token))
        if found is None:
            return None
        player_id, username, key, display_name, password_hash, player_created, csrf, created = found
        if datetime.now(UTC) - self._raw.moment(created) > SESSION_LIFETIME:
            self.end_auth_session(token)
            return None
        player = PlayerRow(
            id=player_id,
            username=username,
            username_key=key,
            display_name=display_name,
            password_hash=password_hash,
            created_at=self._raw.moment(player_created),
        )
        return player, str(csrf)

    def set_password(self, player_id: int, password_hash: str) -> None:
        with self.engine.begin() as c:
            c.execute(
                update(_players)
                .where(_players.c.id == player_id)
                .values(password_hash=password_hash)
            )

    def end_other_sessions(self, player_id: int, keep_token: str) -> list[str]:
        """Sign the player out everywhere but the session of ``keep_token``; the hashes
        of the sessions ended."""
        return self.end_sessions(player_id, keep=_hash_token(keep_token))

    def end_sessions(self, player_id: int, *, keep: str | None = None) -> list[str]:
        """Sign the player out everywhere (but the session whose hash is ``keep``); the
        hashes of the sessions ended."""
        condition = _sessions.c.player_id == player_id
        if keep is not None:
            condition &= _sessions.c.token_hash != keep
        with self.engine.begin() as c:
            ended = list(c.scalars(select(_sessions.c.token_hash).where(condition)))
            c.execute(delete(_sessions).where(_sessions.c.token_hash.in_(ended)))
        return ended

    def end_auth_session(self, token: str) -> str:
        """Sign out the session of ``token``; its hash (what its sockets are bound to)."""
        token_hash = _hash_token(token)
        with self.engine.begin() as c:
            c.execute(delete(_sessions).where(_sessions.c.token_hash == token_hash))
        return token_hash

    @staticmethod
    def token_hash(token: str) -> str:
        return _hash_token(token)

    # -- tables ----------------------------------------------------------------
    def create_table(
        self,
        table_id: str,
        *,
        status: str,
        settings: dict[str, Any],
        seats: Sequence[dict[str, Any]],
        server_seed: str,
        commitment: str,
        invite_token: str,
        creator_id: int,
        client_seed: str = "",
        public: bool = False,
        seed_deadline: datetime | None = None,
        rated: bool = False,
        challenged_id: int | None = None,
        rematch_of: str | None = None,
    ) -> None:
        now = datetime.now(UTC)
        with self.engine.begin() as c:
            c.execute(
                insert(_tables).values(
                    id=table_id,
                    created_at=now,
                    status=status,
                    settings=settings,
                    server_seed=server_seed,
                    client_seed=client_seed,
                    commitment=commitment,
                    invite_token=invite_token,
                    public=public,
                    rated=rated,
                    challenged_id=challenged_id,
                    rematch_of=rematch_of,
                    creator_id=creator_id,
                    action_count=0,
                    seed_deadline=seed_deadline,
                )
            )
            c.execute(
                insert(_seats),
                [{"table_id": table_id, "seat": n, **seat} for n, seat in enumerate(seats)],
            )

    def table_row(self, table_id: str) -> TableRow | None:
        """The table's own row (no seats or actions)."""
        with self._session() as s:
            return s.get(TableRow, table_id)

    def table_state(self, table_id: str) -> tuple[int, str] | None:
        """The table's sequence number and status, or None if there is no such table."""
        return self._raw.table_state(table_id)

    def table_states(self, table_ids: Sequence[str]) -> dict[str, int]:
        """The sequence numbers of several tables (those that exist)."""
        if not table_ids:
            return {}
        with self.engine.connect() as c:
            rows = c.execute(
                select(_tables.c.id, _tables.c.action_count).where(_tables.c.id.in_(table_ids))
            ).all()
        return {str(r[0]): int(r[1]) for r in rows}

    def load_table(self, table_id: str) -> StoredTable | None:
        with self._session() as s:
            row = s.get(TableRow, table_id)
            if row is None:
                return None
            seats = self._seats_of(s, table_id)
            actions = [
                StoredAction(a.seq, a.seat, a.command)
                for a in s.execute(
                    select(_actions.c.seq, _actions.c.seat, _actions.c.command)
                    .where(_actions.c.table_id == table_id)
                    .order_by(_actions.c.seq)
                )
            ]
            return StoredTable(row, seats, actions)

    def actions_since(self, table_id: str, seq: int) -> list[StoredAction]:
        """The table's actions numbered ``seq`` and later, in order."""
        with self.engine.connect() as c:
            return [
                StoredAction(a.seq, a.seat, a.command)
                for a in c.execute(
                    select(_actions.c.seq, _actions.c.seat, _actions.c.command)
                    .where(_actions.c.table_id == table_id, _actions.c.seq >= seq)
                    .order_by(_actions.c.seq)
                )
            ]

    def commit(
        self,
        table_id: str,
        first_seq: int,
        entries: Sequence[tuple[int, dict[str, Any]]],
        *,
        status: str,
        seats: Mapping[int, dict[str, Any]] | None = None,
        client_seed: str | None = None,
        seed_deadline: datetime | None = _UNSET,
        lease: Lease | None = None,
    ) -> None:
        """Append ``entries`` (seat, command) as actions ``first_seq``, ``first_seq + 1``...
        and set the table's ``status`` (and ``seats``, ``client_seed``,
        ``seed_deadline`` where given), all in one transaction.

        The table's sequence number must still be ``first_seq``; otherwise
        :class:`ConflictError` and nothing is written. The computer's lease ends
        with the commit, unless ``lease`` gives the next one (the computer acts
        next, and this process will think for it).
        """
        now = datetime.now(UTC)
        if not seats and client_seed is None and seed_deadline is _UNSET:
            # The common case (a move, the computer's turn): straight to the driver.
            if not self._raw.commit(table_id, first_seq, entries, status, lease, now):
                raise ConflictError(f"table {table_id} changed since action {first_seq}")
            return
        values: dict[str, Any] = {
            "action_count": first_seq + len(entries),
            "status": status,
            "finished_at": now if status == "finished" else None,
            "lease_owner": lease.owner if lease else None,
            "lease_until": lease.until if lease else None,
        }
        if client_seed is not None:
            values["client_seed"] = client_seed
        if seed_deadline is not _UNSET:
            values["seed_deadline"] = seed_deadline
        try:
            with self.engine.begin() as c:
                changed = c.execute(
                    update(_tables)
                    .where(_tables.c.id == table_id, _tables.c.action_count == first_seq)
                    .values(**values)
                ).rowcount
                if changed != 1:
                    raise ConflictError(f"table {table_id} changed since action {first_seq}")
                for seat, change in (seats or {}).items():
                    c.execute(
                        update(_seats)
                        .where(_seats.c.table_id == table_id, _seats.c.seat == seat)
                        .values(**change)
                    )
                if entries:
                    c.execute(
                        insert(_actions),
                        [
                            {
                                "table_id": table_id,
                                "seq": first_seq + offset,
                                "seat": seat,
                                "command": cmd,
                                "created_at": now,
                            }
                            for offset, (seat, cmd) in enumerate(entries)
                        ],
                    )
        except IntegrityError:
            raise ConflictError(f"table {table_id} changed since action {first_seq}") from None

    async def commit_async(
        self,
        table_id: str,
        first_seq: int,
        entries: Sequence[tuple[int, dict[str, Any]]],
        *,
        status: str,
        seats: Mapping[int, dict[str, Any]] | None = None,
        client_seed: str | None = None,
        seed_deadline: datetime | None = _UNSET,
        lease: Lease | None = None,
    ) -> None:
        """:meth:`commit`, awaited. On SQLite it runs at once (quicker than any
        hand-over). On PostgreSQL a move or the computer's turn is one statement
        on the event loop's own connection, so the loop serves other tables while
        the database answers; anything else runs in a thread."""
        changes: dict[str, Any] = {
            "status": status,
            "seats": seats,
            "client_seed": client_seed,
            "seed_deadline": seed_deadline,
            "lease": lease,
        }
        if self.dialect == "sqlite":
            self.commit(table_id, first_seq, entries, **changes)
            return
        if entries and not seats and client_seed is None and seed_deadline is _UNSET:
            parameters = self._raw.parameters(
                table_id, first_seq, entries, status, lease, datetime.now(UTC)
            )
            if not await self._async.commit(parameters, len(entries)):
                raise ConflictError(f"table {table_id} changed since action {first_seq}")
            return
        await asyncio.to_thread(self.commit, table_id, first_seq, entries, **changes)

    def append_actions(
        self,
        table_id: str,
        first_seq: int,
        entries: Sequence[tuple[int, dict[str, Any]]],
        *,
        status: str,
    ) -> None:
        """:meth:`commit` of actions alone."""
        self.commit(table_id, first_seq, entries, status=status)

    def acquire_lease(
        self, table_id: str, seq: int, lease: Lease, now: datetime | None = None
    ) -> bool:
        """Take the table's computer turn at sequence number ``seq`` for ``lease.owner``:
        False when the table moved on or another holder's lease has not expired by
        ``now`` (default: the current time)."""
        now = now or datetime.now(UTC)
        with self.engine.begin() as c:
            changed = c.execute(
                update(_tables)
                .where(
                    _tables.c.id == table_id,
                    _tables.c.action_count == seq,
                    or_(
                        _tables.c.lease_owner.is_(None),
                        _tables.c.lease_owner == lease.owner,
                        _tables.c.lease_until < now,
                    ),
                )
                .values(lease_owner=lease.owner, lease_until=lease.until)
            ).rowcount
        return bool(changed == 1)

    def release_lease(self, table_id: str, owner: str) -> None:
        """Give up ``owner``'s lease (its thinking failed, or the process stops)."""
        with self.engine.begin() as c:
            c.execute(
                update(_tables)
                .where(_tables.c.id == table_id, _tables.c.lease_owner == owner)
                .values(lease_owner=None, lease_until=None)
            )

    def release_leases(self, owner: str) -> int:
        """Give up every lease ``owner`` holds (a process shutting down); how many."""
        with self.engine.begin() as c:
            return int(
                c.execute(
                    update(_tables)
                    .where(_tables.c.lease_owner == owner)
                    .values(lease_owner=None, lease_until=None)
                ).rowcount
            )

    def open_tables(self, at: datetime, limit: int = 50) -> list[StoredTable]:
        """Tables waiting for another person, newest first (no actions loaded); not those
        of a player suspended at ``at`` (the service's clock)."""
        return self._tables_where(
            (TableRow.status == "waiting")
            & TableRow.public.is_(True)
            & ~_suspended(TableRow.creator_id, at),
            limit,
        )

    def seen(self, table_id: str, seats: Sequence[int], at: datetime) -> None:
        """The players of ``seats`` are connected to the table at ``at``."""
        if not seats:
            return
        with self.engine.begin() as c:
            c.execute(
                update(_seats)
                .where(_seats.c.table_id == table_id, _seats.c.seat.in_(list(seats)))
                .values(last_seen=at)
            )

    def last_seen(self, table_id: str) -> dict[int, datetime | None]:
        """When each seat's player was last connected (None: never)."""
        with self.engine.connect() as c:
            rows = c.execute(
                select(_seats.c.seat, _seats.c.last_seen).where(_seats.c.table_id == table_id)
            )
            return {int(seat): aware(moment) for seat, moment in rows}

    # -- chat, blocks, reports ----------------------------------------------------
    def add_chat(
        self, table_id: str, player_id: int, name: str, channel: str, text: str, at: datetime
    ) -> ChatMessageRow:
        with self._session() as s:
            row = ChatMessageRow(
                table_id=table_id,
                player_id=player_id,
                name=name,
                channel=channel,
                text=text,
                created_at=at,
            )
            s.add(row)
            s.flush()
            return row

    def chat_message(self, message_id: int) -> ChatMessageRow | None:
        with self._session() as s:
            return s.get(ChatMessageRow, message_id)

    def remove_chat(
        self,
        reason: str,
        by: str,
        at: datetime,
        *,
        message_ids: Sequence[int] = (),
        player_id: int | None = None,
    ) -> list[ChatMessageRow]:
        """A moderator removes the messages ``message_ids``, or every message of
        ``player_id``: kept, marked with when, by whom and why, no longer listed.
        The messages removed now (not those removed before)."""
        with self._session() as s:
            query = select(ChatMessageRow)
            if player_id is not None:
                query = query.where(ChatMessageRow.player_id == player_id)
            else:
                query = query.where(ChatMessageRow.id.in_(list(message_ids)))
            found = list(s.scalars(query.order_by(ChatMessageRow.id)))
            removed = [row for row in found if row.removed_at is None]
            for row in removed:
                row.removed_at, row.removed_by, row.removed_reason = at, by, reason
        return removed

    def chat(
        self, table_id: str, channel: str, hidden: set[int], limit: int = 100
    ) -> list[ChatMessageRow]:
        """The last ``limit`` messages of a table's channel, oldest first, without those
        of the players in ``hidden``."""
        with self._session() as s:
            query = select(ChatMessageRow).where(
                ChatMessageRow.table_id == table_id,
                ChatMessageRow.channel == channel,
                ChatMessageRow.removed_at.is_(None),
            )
            if hidden:
                query = query.where(ChatMessageRow.player_id.not_in(list(hidden)))
            rows = list(s.scalars(query.order_by(ChatMessageRow.id.desc()).limit(limit)))
        return rows[::-1]

    def usernames_of(self, player_ids: Iterable[int]) -> dict[int, str]:
        """The usernames of the accounts among ``player_ids``."""
        return {i: str(u) for i, u in self._of_accounts(player_ids, _players.c.username).items()}

    def _of_accounts(self, player_ids: Iterable[int], column: Any) -> dict[int, Any]:
        """``column`` of each account (a player with a username) among ``player_ids``."""
        ids = list(player_ids)
        if not ids:
            return {}
        with self.engine.connect() as c:
            rows = c.execute(
                select(_players.c.id, column).where(
                    _players.c.id.in_(ids), _players.c.username.is_not(None)
                )
            )
            return {int(i): value for i, value in rows}

    def block(self, blocker_id: int, blocked_id: int, at: datetime) -> None:
        try:
            with self._session() as s:
                if s.get(PlayerBlockRow, (blocker_id, blocked_id)) is None:
                    s.add(
                        PlayerBlockRow(blocker_id=blocker_id, blocked_id=blocked_id, created_at=at)
                    )
        except Exception as exc:
            if not _is_integrity_error(exc):  # blocked twice at once: blocked
                raise

    def unblock(self, blocker_id: int, blocked_id: int) -> None:
        with self.engine.begin() as c:
            c.execute(
                delete(PlayerBlockRow).where(
                    PlayerBlockRow.blocker_id == blocker_id, PlayerBlockRow.blocked_id == blocked_id
                )
            )

    def blocked_by(self, blocker_id: int) -> set[int]:
        """The players ``blocker_id`` blocks."""
        with self.engine.connect() as c:
            rows = c.execute(
                select(PlayerBlockRow.blocked_id).where(PlayerBlockRow.blocker_id == blocker_id)
            )
            return {int(r[0]) for r in rows}

    def blockers_of(self, blocked_id: int) -> set[int]:
        """The players who block ``blocked_id``."""
        with self.engine.connect() as c:
            rows = c.execute(
                select(PlayerBlockRow.blocker_id).where(PlayerBlockRow.blocked_id == blocked_id)
            )
            return {int(r[0]) for r in rows}

    def report(
        self,
        reporter_id: int,
        reported_id: int,
        reason: str,
        at: datetime,
        *,
        table_id: str | None = None,
        message: ChatMessageRow | None = None,
    ) -> ReportRow:
        with self._session() as s:
            row = ReportRow(
                reporter_id=reporter_id,
                reported_id=reported_id,
                table_id=table_id,
                message_id=message.id if message else None,
                message_text=message.text if message else None,
                reason=reason,
                created_at=at,
            )
            s.add(row)
            s.flush()
            return row

    def reports(self, limit: int = 100) -> list[ReportRow]:
        with self._session() as s:
            return list(s.scalars(select(ReportRow).order_by(ReportRow.id.desc()).limit(limit)))

    def report_row(self, report_id: int) -> ReportRow | None:
        with self._session() as s:
            return s.get(ReportRow, report_id)

    # -- moderation ------------------------------------------------------------------
    def sanction(
        self,
        player_id: int,
        kind: str,
        reason: str,
        issued_by: str,
        at: datetime,
        *,
        until: datetime | None = None,
        report_id: int | None = None,
    ) -> SanctionRow:
        """A moderator's sanction (``mute`` or ``suspend``) of ``player_id`` from ``at``
        until ``until`` (None: until lifted)."""
        if kind not in SANCTION_KINDS:
            raise ValueError(f"no sanction {kind!r}: {' or '.join(SANCTION_KINDS)}")
        with self._session() as s:
            row = SanctionRow(
                player_id=player_id,
                kind=kind,
                reason=reason,
                issued_by=issued_by,
                report_id=report_id,
                created_at=at,
                until=until,
            )
            s.add(row)
            s.flush()
            return row

    def lift_sanction(self, sanction_id: int, at: datetime) -> SanctionRow | None:
        """End sanction ``sanction_id`` at ``at`` (one already over stays as it was);
        the sanction, or None when there is none of that number."""
        with self._session() as s:
            row = s.get(SanctionRow, sanction_id)
            if row is not None and sanction_lasts(row, at):
                row.lifted_at = at
            return row

    def sanctions(
        self, *, in_force_at: datetime | None = None, limit: int = 100
    ) -> list[SanctionRow]:
        """The sanctions, newest first; only those in force at ``in_force_at`` if given."""
        with self._session() as s:
            query = select(SanctionRow)
            if in_force_at is not None:
                query = query.where(_in_force(in_force_at))
            return list(s.scalars(query.order_by(SanctionRow.id.desc()).limit(limit)))

    def sanction_in_force(self, player_id: int, kind: str, at: datetime) -> SanctionRow | None:
        """The sanction of ``kind`` on ``player_id`` in force at ``at`` that lasts longest
        (one until lifted first), or None."""
        with self._session() as s:
            rows = list(
                s.scalars(
                    select(SanctionRow).where(
                        SanctionRow.player_id == player_id,
                        SanctionRow.kind == kind,
                        _in_force(at),
                    )
                )
            )
        if not rows:
            return None
        return max(rows, key=lambda r: (r.until is None, aware(r.until) or at, r.id))

    def suspended_among(self, player_ids: Iterable[int], at: datetime) -> set[int]:
        """Those of ``player_ids`` suspended at ``at``."""
        ids = list(player_ids)
        if not ids:
            return set()
        with self.engine.connect() as c:
            rows = c.execute(
                select(SanctionRow.player_id).where(
                    SanctionRow.player_id.in_(ids),
                    SanctionRow.kind == "suspend",
                    _in_force(at),
                )
            )
            return {int(r[0]) for r in rows}

    def challenges_for(self, player_id: int, at: datetime, limit: int = 50) -> list[StoredTable]:
        """Tables waiting for ``player_id`` to accept their challenge, newest first; not
        those of a challenger suspended at ``at`` (the service's clock)."""
        return self._tables_where(
            (TableRow.status == "waiting")
            & (TableRow.challenged_id == player_id)
            & ~_suspended(TableRow.creator_id, at),
            limit,
        )

    def rematch_offer(self, of: str, creator_id: int) -> StoredTable | None:
        """The waiting rematch of table ``of`` that ``creator_id`` offered, if any."""
        found = self._tables_where(
            (TableRow.status == "waiting")
            & (TableRow.rematch_of == of)
            & (TableRow.creator_id == creator_id),
            1,
        )
        return found[0] if found else None

    def live_tables(self, limit: int = 50) -> list[StoredTable]:
        """Tables in play that spectators may find: lobby tables and rated matches."""
        return self._tables_where(
            (TableRow.status == "playing")
            & or_(TableRow.public.is_(True), TableRow.rated.is_(True)),
            limit,
        )

    def _tables_where(self, condition: Any, limit: int) -> list[StoredTable]:
        """The tables meeting ``condition``, newest first, with their seats (no actions)."""
        with self._session() as s:
            rows = list(
                s.scalars(
                    select(TableRow)
                    .where(condition)
                    .order_by(TableRow.created_at.desc())
                    .limit(limit)
                )
            )
            return [StoredTable(r, self._seats_of(s, r.id), []) for r in rows]

    def tables_of(self, player_id: int, limit: int = 100) -> list[StoredTable]:
        """The player's tables, newest first (no actions loaded)."""
        ids = select(TableSeatRow.table_id).where(TableSeatRow.player_id == player_id)
        return self._tables_where(
            or_(TableRow.id.in_(ids), TableRow.creator_id == player_id), limit
        )

    # -- analyses ------------------------------------------------------------
    def queue_analysis(
        self,
        table_id: str,
        plies: int,
        player_id: int | None,
        record: str | None = None,
        kind: str = "match",
    ) -> AnalysisRow:
        """A new job of ``kind`` for ``table_id`` (its input ``record``), ``queued``."""
        with self._session() as s:
            row = AnalysisRow(
                table_id=table_id,
                plies=plies,
                kind=kind,
                status="queued",
                done=0,
                total=0,
                requested_by=player_id,
                record=record,
                created_at=datetime.now(UTC),
            )
            s.add(row)
            s.flush()
            return row

    def analyses_of(
        self, table_id: str, kind: str = "match", player_id: int | None = None
    ) -> list[AnalysisRow]:
        """The table's jobs of ``kind`` (those ``player_id`` asked for, if given),
        newest first."""
        query = select(AnalysisRow).where(
            AnalysisRow.table_id == table_id, AnalysisRow.kind == kind
        )
        if player_id is not None:
            query = query.where(AnalysisRow.requested_by == player_id)
        with self._session() as s:
            return list(s.scalars(query.order_by(AnalysisRow.id.desc()).limit(50)))

    def analysis(self, analysis_id: int) -> AnalysisRow | None:
        with self._session() as s:
            return s.get(AnalysisRow, analysis_id)

    def analysed_tables(self, table_ids: Sequence[str]) -> dict[str, int]:
        """The deepest finished analysis of each of ``table_ids`` that has one (plies)."""
        if not table_ids:
            return {}
        with self.engine.connect() as c:
            rows = c.execute(
                select(AnalysisRow.table_id, func.max(AnalysisRow.plies))
                .where(
                    AnalysisRow.table_id.in_(list(table_ids)),
                    AnalysisRow.status == "done",
                    AnalysisRow.kind == "match",
                )
                .group_by(AnalysisRow.table_id)
            )
            return {str(t): int(p) for t, p in rows}

    def update_analysis(self, analysis_id: int, **values: Any) -> bool:
        """Set the analysis's ``values`` (status, done, total, result, error, started_at,
        finished_at); False when it no longer exists (its table was deleted)."""
        allowed = {
            "status",
            "done",
            "total",
            "result",
            "error",
            "started_at",
            "heartbeat",
            "finished_at",
        }
        unknown = set(values) - allowed
        if unknown:
            raise ValueError(f"not analysis fields: {sorted(unknown)}")
        with self._session() as s:
            row = s.get(AnalysisRow, analysis_id)
            if row is None:
                return False
            for name, value in values.items():
                setattr(row, name, value)
            return True

    def reclaim_stale_analyses(self, before: datetime) -> list[AnalysisRow]:
        """Analyses ``running`` with no progress written since ``before`` (their worker
        died), set back to ``queued`` for the caller to queue again. Each row is claimed
        by a compare-and-set, so of several workers looking at once only one gets it."""
        claimed = []
        with self._session() as s:
            stale = list(
                s.scalars(
                    select(AnalysisRow.id).where(
                        AnalysisRow.status == "running",
                        or_(AnalysisRow.heartbeat.is_(None), AnalysisRow.heartbeat < before),
                    )
                )
            )
        for analysis_id in stale:
            with self.engine.begin() as c:
                changed = c.execute(
                    update(AnalysisRow)
                    .where(
                        AnalysisRow.id == analysis_id,
                        AnalysisRow.status == "running",
                        or_(AnalysisRow.heartbeat.is_(None), AnalysisRow.heartbeat < before),
                    )
                    .values(status="queued", done=0, heartbeat=None)
                ).rowcount
            if changed:
                row = self.analysis(analysis_id)
                if row is not None:
                    claimed.append(row)
        return claimed

    # -- ratings ---------------------------------------------------------------
    def rate_match(
        self,
        table_id: str,
        winner: RatedSide,
        loser: RatedSide,
        length: int,
        now: datetime | None = None,
    ) -> list[RatingChangeRow]:
        """Rate the finished match at ``table_id`` (docs/ratings.md): each person's
        rating and experience change by the FIBS formula and a ``rating_changes`` row
        records it; a computer side counts at its fixed rating and does not change.
        One transaction; the rows' key makes a second call (another process, or the
        start-up catch-up) a no-op that returns []."""
        moment = now or datetime.now(UTC)
        people = [side.player_id for side in (winner, loser) if side.player_id is not None]
        try:
            with self._session() as s:
                if s.scalar(
                    select(func.count())
                    .select_from(RatingChangeRow)
                    .where(RatingChangeRow.table_id == table_id)
                ):
                    return []
                found = {
                    p.id: p
                    for p in s.scalars(
                        select(PlayerRow)
                        .where(PlayerRow.id.in_(people))
                        .order_by(PlayerRow.id)
                        .with_for_update()
                    )
                }
                if len(found) != len(set(people)):
                    raise ValueError(f"table {table_id}: a rated player no longer exists")

                def state(side: RatedSide) -> RatingState:
                    if side.player_id is None:
                        return RatingState(side.fixed_rating or INITIAL_RATING, 10**9)
                    p = found[side.player_id]
                    return RatingState(float(p.rating), int(p.experience))

                before = (state(winner), state(loser))
                change = rate_match(before[0], before[1], length)
                rows = []
                for side, other, old, new, won in (
                    (winner, loser, before[0], change.winner, True),
                    (loser, winner, before[1], change.loser, False),
                ):
                    if side.player_id is None:
                        continue
                    player = found[side.player_id]
                    player.rating = new.rating
                    player.experience = new.experience
                    player.rated_matches = int(player.rated_matches or 0) + 1
                    row = RatingChangeRow(
                        table_id=table_id,
                        player_id=side.player_id,
                        won=won,
                        match_length=length,
                        opponent_id=other.player_id,
                        opponent_name=other.name,
                        opponent_rating=state(other).rating,
                        rating_before=old.rating,
                        rating_after=new.rating,
                        experience_before=old.experience,
                        created_at=moment,
                    )
                    s.add(row)
                    rows.append(row)
                s.flush()
            return rows
        except Exception as exc:
            if _is_integrity_error(exc):  # rated at the same moment elsewhere
                return []
            raise

    def ratings_of(self, player_ids: Iterable[int]) -> dict[int, float]:
        """The ratings of the accounts among ``player_ids``."""
        return {i: float(r) for i, r in self._of_accounts(player_ids, _players.c.rating).items()}

    def rank_of(self, player_id: int) -> int | None:
        """The player's place on :meth:`leaderboard` (None before a rated match)."""
        with self._session() as s:
            me = s.get(PlayerRow, player_id)
            if me is None or not me.rated_matches or me.username is None:
                return None
            ahead = s.scalar(
                select(func.count())
                .select_from(PlayerRow)
                .where(
                    PlayerRow.username.is_not(None),
                    PlayerRow.rated_matches > 0,
                    or_(
                        PlayerRow.rating > me.rating,
                        (PlayerRow.rating == me.rating) & (PlayerRow.id < me.id),
                    ),
                )
            )
            return int(ahead or 0) + 1

    def count_finished(self, player_id: int) -> int:
        """The finished tables the player sat at."""
        with self.engine.connect() as c:
            ids = select(_seats.c.table_id).where(_seats.c.player_id == player_id)
            return int(
                c.scalar(
                    select(func.count())
                    .select_from(_tables)
                    .where(_tables.c.id.in_(ids), _tables.c.status == "finished")
                )
                or 0
            )

    def error_rates_of(self, player_id: int, limit: int = 50) -> list[float]:
        """The player's overall error rate (mEMG) in each of its last ``limit`` analysed
        matches (the deepest analysis of each), from its seat in the analysis. A match
        in which the player had no decision to make counts for nothing (its rate of 0
        made the average look better for every such match analysed)."""
        with self._session() as s:
            rows = s.execute(
                select(AnalysisRow.table_id, AnalysisRow.plies, AnalysisRow.result, _seats.c.seat)
                .join(_seats, _seats.c.table_id == AnalysisRow.table_id)
                .where(
                    _seats.c.player_id == player_id,
                    AnalysisRow.status == "done",
                    AnalysisRow.kind == "match",
                )
                .order_by(AnalysisRow.created_at.desc())
                .limit(limit * 3)
            ).all()
        deepest: dict[str, tuple[int, float]] = {}
        for table_id, plies, result, seat in rows:
            try:
                mine = result["players"][seat]
                rate = float(mine["error_rate"])
                decided = int(mine["unforced_moves"]) + int(mine["cube_decisions"])
            except (KeyError, IndexError, TypeError, ValueError):
                continue
            if not decided:
                continue
            if table_id not in deepest or plies > deepest[table_id][0]:
                deepest[table_id] = (plies, rate)
        return [rate for _, rate in list(deepest.values())[:limit]]

    def unrated_tables(self, limit: int = 200) -> list[str]:
        """Finished rated tables with no rating change recorded: a process that ended
        the match died before it rated it (or the match had no result to rate)."""
        with self.engine.connect() as c:
            rated = select(RatingChangeRow.table_id).where(RatingChangeRow.table_id == _tables.c.id)
            rows = c.execute(
                select(_tables.c.id)
                .where(_tables.c.rated.is_(True), _tables.c.status == "finished", ~rated.exists())
                .order_by(_tables.c.finished_at)
                .limit(limit)
            )
            return [str(r[0]) for r in rows]

    def rating_history(self, player_id: int, limit: int = 500) -> list[RatingChangeRow]:
        """The player's rated matches, oldest first (the last ``limit``)."""
        with self._session() as s:
            newest = list(
                s.scalars(
                    select(RatingChangeRow)
                    .where(RatingChangeRow.player_id == player_id)
                    .order_by(RatingChangeRow.created_at.desc(), RatingChangeRow.table_id)
                    .limit(limit)
                )
            )
        return newest[::-1]

    def leaderboard(self, limit: int = 50, offset: int = 0) -> list[PlayerRow]:
        """Accounts with at least one rated match, best rating first."""
        with self._session() as s:
            return list(
                s.scalars(
                    select(PlayerRow)
                    .where(PlayerRow.username.is_not(None), PlayerRow.rated_matches > 0)
                    .order_by(PlayerRow.rating.desc(), PlayerRow.id)
                    .limit(limit)
                    .offset(offset)
                )
            )

    def count_tables(self) -> int:
        with self.engine.connect() as c:
            return int(c.scalar(select(func.count()).select_from(_tables)) or 0)

    @staticmethod
    def _seats_of(s: Session, table_id: str) -> list[TableSeatRow]:
        return list(
            s.scalars(
                select(TableSeatRow)
                .where(TableSeatRow.table_id == table_id)
                .order_by(TableSeatRow.seat)
            )
        )


class _RawStatements:
    """The statements of every action, sent to the database driver as they are: the
    same rows SQLAlchemy would write (its SQLite format for times, JSON as text),
    without its per-statement work, which was most of an action's storage time
    (0.30 against 0.06 ms a commit on SQLite, 0.8 against 0.4 on PostgreSQL)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.sqlite = engine.dialect.name == "sqlite"
        p = "?" if self.sqlite else "%s"
        self.update = (
            f"UPDATE tables SET action_count = {p}, status = {p}, finished_at = {p}, "
            f"lease_owner = {p}, lease_until = {p} WHERE id = {p} AND action_count = {p}"
        )
        self.insert = (
            "INSERT INTO table_actions (table_id, seq, seat, command, created_at) "
            f"VALUES ({p}, {p}, {p}, {p}, {p})"
        )
        # The server's commit on PostgreSQL (Storage.commit_async): the compare-and-set
        # and the inserts in one statement, sent in autocommit: one round trip a
        # change, where three statements and a COMMIT took four (0.49 against 0.8 ms
        # a change, half the client's CPU). The entries come as one JSON array of
        # [seat, command] (each command's text as json.dumps writes it, kept as is
        # by the json type), numbered from the first sequence number.
        self.update_and_insert = (
            "WITH moved AS (UPDATE tables SET action_count = $1, status = $2, "
            "finished_at = $3, lease_owner = $4, lease_until = $5 "
            "WHERE id = $6 AND action_count = $7 RETURNING id) "
            "INSERT INTO table_actions (table_id, seq, seat, command, created_at) "
            "SELECT moved.id, $7 + e.n::int - 1, (e.entry ->> 0)::int, e.entry -> 1, $8 "
            "FROM moved, json_array_elements($9) WITH ORDINALITY AS e(entry, n)"
        )
        self.state = f"SELECT action_count, status FROM tables WHERE id = {p}"
        self._kept: tuple[int, Any] | None = None
        # A session of a suspended player is no session (nard moderate also ends them,
        # but a sign-in racing the suspension could have made one).
        self.session_sql = (
            "SELECT p.id, p.username, p.username_key, p.display_name, p.password_hash, "
            "p.created_at, s.csrf_token, s.created_at FROM auth_sessions s "
            f"JOIN players p ON p.id = s.player_id WHERE s.token_hash = {p} "
            "AND NOT EXISTS (SELECT 1 FROM sanctions x WHERE x.player_id = p.id "
            f"AND x.kind = 'suspend' AND x.lifted_at IS NULL "
            f"AND (x.until IS NULL OR x.until > {p}))"
        )

    def close(self) -> None:
        """Give the kept connection back (before the engine is disposed)."""
        kept, self._kept = self._kept, None
        if kept is not None:
            kept[1].close()

    def stored(self, moment: datetime | None) -> Any:
        """A time as SQLAlchemy stores it: SQLite's text (UTC, no zone), else as is."""
        if moment is None or not self.sqlite:
            return moment
        # strftime's "%Y-%m-%d %H:%M:%S.%f", at two thirds of its cost
        return moment.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")

    def moment(self, value: Any) -> datetime:
        """A stored time back as an aware UTC datetime (SQLite's comes as text)."""
        found = aware(datetime.fromisoformat(value) if isinstance(value, str) else value)
        assert found is not None
        return found

    @contextmanager
    def _cursor(self, write: bool) -> Iterator[Any]:
        kept = self._kept_connection()
        connection = kept if kept is not None else self.engine.raw_connection()
        try:
            cursor = connection.cursor()
            try:
                yield cursor
            finally:
                cursor.close()
            if write:
                connection.commit()
        except BaseException:
            connection.rollback()
            raise
        finally:
            if kept is None:
                connection.close()

    def _kept_connection(self) -> Any:
        """On SQLite, the connection kept for the thread that sends most statements (the
        event loop's): a checkout from the pool and its return cost more than a SQLite
        commit. ``None`` elsewhere: other threads, and PostgreSQL, use the pool."""
        if not self.sqlite:
            return None
        if self._kept is None:
            self._kept = (threading.get_ident(), self.engine.raw_connection())
        return self._kept[1] if self._kept[0] == threading.get_ident() else None

    def commit(
        self,
        table_id: str,
        first_seq: int,
        entries: Sequence[tuple[int, dict[str, Any]]],
        status: str,
        lease: Lease | None,
        now: datetime,
    ) -> bool:
        """The compare-and-set and the actions in one transaction; False (nothing
        written) when the table is no longer at ``first_seq``."""
        written = self.stored(now)
        try:
            with self._cursor(write=True) as cursor:
                cursor.execute(
                    self.update,
                    (
                        first_seq + len(entries),
                        status,
                        written if status == "finished" else None,
                        lease.owner if lease else None,
                        self.stored(lease.until) if lease else None,
                        table_id,
                        first_seq,
                    ),
                )
                if cursor.rowcount != 1:
                    raise _Lost
                if entries:
                    cursor.executemany(
                        self.insert,
                        [
                            (table_id, first_seq + n, seat, json.dumps(cmd), written)
                            for n, (seat, cmd) in enumerate(entries)
                        ],
                    )
        except _Lost:
            return False
        except Exception as exc:
            if _is_integrity_error(exc):
                return False
            raise
        return True

    @staticmethod
    def parameters(
        table_id: str,
        first_seq: int,
        entries: Sequence[tuple[int, dict[str, Any]]],
        status: str,
        lease: Lease | None,
        now: datetime,
    ) -> tuple[bytes | None, ...]:
        """The parameters of :attr:`update_and_insert` (PostgreSQL), as the text
        PostgreSQL reads for its types (:data:`COMMIT_TYPES`)."""
        moment = now.isoformat().encode()
        return (
            str(first_seq + len(entries)).encode(),
            status.encode(),
            moment if status == "finished" else None,
            lease.owner.encode() if lease else None,
            lease.until.isoformat().encode() if lease else None,
            table_id.encode(),
            str(first_seq).encode(),
            moment,
            (
                "[" + ", ".join(f"[{seat}, {json.dumps(cmd)}]" for seat, cmd in entries) + "]"
            ).encode(),
        )

    def table_state(self, table_id: str) -> tuple[int, str] | None:
        with self._cursor(write=False) as cursor:
            cursor.execute(self.state, (table_id,))
            found = cursor.fetchone()
        return None if found is None else (int(found[0]), str(found[1]))

    def session(self, token_hash: str) -> tuple[Any, ...] | None:
        with self._cursor(write=False) as cursor:
            cursor.execute(self.session_sql, (token_hash, self.stored(datetime.now(UTC))))
            found = cursor.fetchone()
        return None if found is None else tuple(found)


class _AsyncCommits:
    """PostgreSQL connections of the event loop (at most ``size`` at once, kept open)
    for the statement that commits a change: psycopg's own asynchronous connections,
    in autocommit. A thread per commit waited for Python's lock and for the loop
    twice over, ten times the statement's own time under load.

    Connections belong to the loop that opened them; another loop (a test starting
    the app again) gets new ones. A kept connection that fails is dropped and the
    statement sent once more on a new one: the compare-and-set makes a statement
    that did commit fail the second time (a conflict), never apply twice.
    """

    def __init__(self, conninfo: str, statement: str, size: int = 4) -> None:
        self.conninfo = conninfo
        self.statement = statement
        self.size = size
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots = asyncio.Semaphore(size)
        self._idle: list[Any] = []

    async def commit(self, parameters: Sequence[bytes | None], expected: int) -> bool:
        """Whether the statement inserted ``expected`` rows (False: the table moved on).

        The statement is prepared once a connection and sent through libpq itself
        (psycopg's ``pgconn``), its parameters already text: psycopg's cursor
        (adapting each value, converting the query, loading the result) took 0.29
        ms of the event loop's CPU a commit, this 0.1."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            self.close()
            self._loop = loop
            self._slots = asyncio.Semaphore(self.size)
        async with self._slots:
            for attempt in (1, 2):
                reused = bool(self._idle)
                connection = self._idle.pop() if reused else await self._connect()
                try:
                    inserted = await self._run(connection, parameters)
                except BaseException as exc:
                    connection.finish()  # its state is unknown: never reused
                    if isinstance(exc, _PostgresError) and exc.sqlstate.startswith("23"):
                        return False  # a unique key: another writer took that number
                    broke = isinstance(exc, _PostgresError) and exc.connection_broke
                    if attempt == 1 and reused and broke:
                        continue
                    raise
                self._idle.append(connection)
                return inserted == expected
        raise AssertionError("unreachable")  # pragma: no cover

    async def _connect(self) -> Any:
        """A new connection (libpq's, through psycopg), the statement prepared on it."""
        from psycopg import pq

        loop = asyncio.get_running_loop()
        connection = pq.PGconn.connect_start(self.conninfo.encode())
        try:
            while True:
                state = connection.connect_poll()
                if state == pq.PollingStatus.OK:
                    break
                if state == pq.PollingStatus.FAILED:
                    raise _PostgresError(connection.get_error_message())
                await _ready(loop, connection.socket, state == pq.PollingStatus.WRITING)
            connection.nonblocking = 1
            connection.send_prepare(_COMMIT, self.statement.encode(), COMMIT_TYPES)
            await self._results(connection)
        except BaseException:
            connection.finish()
            raise
        return connection

    async def _run(self, connection: Any, parameters: Sequence[bytes | None]) -> int:
        """Send the prepared commit; the rows it changed."""
        try:
            connection.send_query_prepared(_COMMIT, parameters)
        except Exception as exc:  # psycopg's pq raises on a dead connection
            raise _PostgresError(str(exc), connection_broke=True) from exc
        result = await self._results(connection)
        return int(result.command_tuples or 0)

    async def _results(self, connection: Any) -> Any:
        """Wait for the statement's answer: its last result (an error raised)."""
        import psycopg

        loop = asyncio.get_running_loop()
        try:
            while connection.flush():
                await _ready(loop, connection.socket, True)
            found = None  # the last result, or the first error
            while True:
                connection.consume_input()
                while not connection.is_busy():
                    result = connection.get_result()
                    if result is None:
                        if found is None:
                            raise _PostgresError("no answer", connection_broke=True)
                        return _checked(found)
                    if found is None or not _failed(found):
                        found = result
                await _ready(loop, connection.socket, False)
        except psycopg.OperationalError as exc:  # libpq's: the connection broke
            raise _PostgresError(str(exc), connection_broke=True) from exc

    def close(self) -> None:
        """Close the kept connections (whatever loop they belong to)."""
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.finish()


_COMMIT = b"nard_commit"
COMMIT_TYPES = [23, 25, 1184, 25, 1184, 25, 23, 1184, 114]
"""The PostgreSQL types (OIDs) of :meth:`_RawStatements.parameters`: int4, text,
timestamptz, text, timestamptz, text, int4, timestamptz, json."""


class _PostgresError(Exception):
    """A statement PostgreSQL refused (``sqlstate``), or a connection that broke."""

    def __init__(self, message: str, sqlstate: str = "", connection_broke: bool = False) -> None:
        super().__init__(message)
        self.sqlstate = sqlstate
        self.connection_broke = connection_broke


def _failed(result: Any) -> bool:
    from psycopg import pq

    return bool(result.status == pq.ExecStatus.FATAL_ERROR)


def _checked(result: Any) -> Any:
    """``result``, or the error it holds raised."""
    from psycopg import pq

    if result.status in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
        return result
    sqlstate = (result.error_field(pq.DiagnosticField.SQLSTATE) or b"").decode()
    message = (result.error_message or b"").decode(errors="replace").strip()
    # Class 08 (connection exception) and 57P (operator intervention: the server
    # shutting down) leave the connection useless.
    broke = sqlstate.startswith(("08", "57P"))
    raise _PostgresError(message or f"PostgreSQL error {sqlstate}", sqlstate, broke)


async def _ready(loop: asyncio.AbstractEventLoop, socket: int, writing: bool) -> None:
    """Wait until ``socket`` can be written (or read)."""
    waiter = loop.create_future()

    def wake() -> None:
        if not waiter.done():
            waiter.set_result(None)

    if writing:
        loop.add_writer(socket, wake)
    else:
        loop.add_reader(socket, wake)
    try:
        await waiter
    finally:
        if writing:
            loop.remove_writer(socket)
        else:
            loop.remove_reader(socket)


class _Lost(Exception):
    """The compare-and-set found the table moved on."""


def _is_integrity_error(exc: Exception) -> bool:
    """A driver's unique-key violation (two writers of the same sequence number)."""
    import sqlite3

    import psycopg

    return isinstance(exc, sqlite3.IntegrityError | psycopg.IntegrityError)


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
