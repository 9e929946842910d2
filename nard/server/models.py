"""The database tables (SQLAlchemy 2 ORM); migrations in ``nard/server/migrations``.

A table's game is stored as what happened, not as a snapshot: its settings,
its seats, its dice seeds and every command in order (``table_actions``, one
row per action, written as it happens). The game is rebuilt by replaying the
commands on the same fair dice, so a server restarted mid-game continues
exactly where it was, and nothing needs the engine to restore a game.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = [
    "AnalysisRow",
    "AuthSession",
    "Base",
    "ChatMessageRow",
    "PlayerBlockRow",
    "PlayerRow",
    "RatingChangeRow",
    "ReportRow",
    "SanctionRow",
    "TableActionRow",
    "TableRow",
    "TableSeatRow",
]


def _now() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    pass


class PlayerRow(Base):
    """A person: a guest (no username) or an account (username and password hash)."""

    __tablename__ = "players"
    __table_args__ = (UniqueConstraint("username_key", name="uq_players_username_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    username: Mapped[str | None] = mapped_column(String(32), unique=True)
    username_key: Mapped[str | None] = mapped_column(String(100))
    """The username as compared (:func:`nard.server.usernames.canonical_username`):
    no two accounts share it."""
    display_name: Mapped[str] = mapped_column(String(32))
    password_hash: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    rating: Mapped[float] = mapped_column(Float, default=1500.0, index=True)
    """The FIBS rating (docs/ratings.md): 1500 before the first rated match."""
    experience: Mapped[int] = mapped_column(Integer, default=0)
    """The sum of the lengths of the rated matches finished."""
    rated_matches: Mapped[int] = mapped_column(Integer, default=0)


class AuthSession(Base):
    """A signed-in browser: the SHA-256 of its cookie token, and its CSRF token."""

    __tablename__ = "auth_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id", ondelete="CASCADE"))
    csrf_token: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class TableRow(Base):
    """A match or money session at one table, from creation to its end."""

    __tablename__ = "tables"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    status: Mapped[str] = mapped_column(String(16), index=True)
    settings: Mapped[dict[str, Any]] = mapped_column(JSON)
    server_seed: Mapped[str] = mapped_column(String(64))
    client_seed: Mapped[str] = mapped_column(String(64))
    commitment: Mapped[str] = mapped_column(String(64))
    invite_token: Mapped[str] = mapped_column(String(32))
    public: Mapped[bool] = mapped_column(Boolean, default=False)
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    """A rated match (docs/ratings.md): its result changes the players' ratings."""
    challenged_id: Mapped[int | None] = mapped_column(
        ForeignKey("players.id", name="fk_tables_challenged_id"), index=True
    )
    """The one player this table challenges (docs/server.md, "Matchmaking")."""
    rematch_of: Mapped[str | None] = mapped_column(String(16), index=True)
    """The finished table this one is the rematch of."""
    creator_id: Mapped[int] = mapped_column(ForeignKey("players.id"), index=True)
    action_count: Mapped[int] = mapped_column(Integer, default=0)
    """The table's sequence number: every change appends actions and advances it
    with a compare-and-set, whichever process makes the change."""
    seed_deadline: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """When the seats' dice contributions are due (set once every seat is filled)."""
    lease_owner: Mapped[str | None] = mapped_column(String(32))
    """The server process thinking for the computer's seat, while it does."""
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class TableSeatRow(Base):
    """Who sits in one seat: a person (``player_id``, none while the seat is open)
    or the computer (``level``)."""

    __tablename__ = "table_seats"

    table_id: Mapped[str] = mapped_column(
        ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True
    )
    seat: Mapped[int] = mapped_column(Integer, primary_key=True)
    player_id: Mapped[int | None] = mapped_column(ForeignKey("players.id"), index=True)
    level: Mapped[str | None] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(32))
    last_seen: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """When the seat's player was last connected to the table (a socket open)."""


class TableActionRow(Base):
    """One command at a table, numbered from 0; (table, seq) is unique."""

    __tablename__ = "table_actions"

    table_id: Mapped[str] = mapped_column(
        ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    seat: Mapped[int] = mapped_column(Integer)
    command: Mapped[dict[str, Any]] = mapped_column(JSON)
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class RatingChangeRow(Base):
    """What one rated match did to one player's rating; (table, player) is unique, so a
    match is rated once whichever process ends it."""

    __tablename__ = "rating_changes"

    table_id: Mapped[str] = mapped_column(
        ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True
    )
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True, index=True)
    won: Mapped[bool] = mapped_column(Boolean)
    match_length: Mapped[int] = mapped_column(Integer)
    opponent_id: Mapped[int | None] = mapped_column(ForeignKey("players.id"))
    """The opponent's account; None for the computer (rated at its level's fixed rating)."""
    opponent_name: Mapped[str] = mapped_column(String(32))
    opponent_rating: Mapped[float] = mapped_column(Float)
    rating_before: Mapped[float] = mapped_column(Float)
    rating_after: Mapped[float] = mapped_column(Float)
    experience_before: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class ChatMessageRow(Base):
    """One chat message at a table, in the players' channel or the spectators'."""

    __tablename__ = "chat_messages"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id", ondelete="CASCADE"), index=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    name: Mapped[str] = mapped_column(String(32))
    channel: Mapped[str] = mapped_column(String(12))
    """``players`` (the seated players') or ``spectators``."""
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    removed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), default=None)
    """When a moderator removed it (``nard moderate remove``): no longer listed or sent."""
    removed_by: Mapped[str | None] = mapped_column(String(64), default=None)
    removed_reason: Mapped[str | None] = mapped_column(Text, default=None)


class PlayerBlockRow(Base):
    """``blocker`` blocks ``blocked``: no chat from them, no challenges, no seat at the
    blocker's tables."""

    __tablename__ = "player_blocks"

    blocker_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True)
    blocked_id: Mapped[int] = mapped_column(ForeignKey("players.id"), primary_key=True, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class ReportRow(Base):
    """A player reported to the moderators (a chat message kept as it was)."""

    __tablename__ = "reports"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    reporter_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    reported_id: Mapped[int] = mapped_column(ForeignKey("players.id"))
    table_id: Mapped[str | None] = mapped_column(String(16))
    message_id: Mapped[int | None] = mapped_column(Integer)
    message_text: Mapped[str | None] = mapped_column(Text)
    reason: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)


class SanctionRow(Base):
    """A moderator's sanction of a player (``nard moderate``): ``mute`` (no chat) or
    ``suspend`` (no sign-in: every session ended), until ``until`` (None: until
    lifted) or until ``lifted_at``; ``report_id`` is the report it answers, if any."""

    __tablename__ = "sanctions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    player_id: Mapped[int] = mapped_column(ForeignKey("players.id"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(Text)
    issued_by: Mapped[str] = mapped_column(String(64))
    report_id: Mapped[int | None] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    lifted_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class AnalysisRow(Base):
    """An analysis of a finished table's match (``nard.analysis``), queued by the page
    and made by a worker process: ``status`` is ``queued``, ``running``, ``done`` or
    ``failed``; ``done`` of ``total`` turns judged so far; ``result`` the analysis
    (``MatchAnalysis.to_json`` with each decision's board and better play) once done."""

    __tablename__ = "analyses"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("tables.id", ondelete="CASCADE"), index=True)
    plies: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(16), default="match")
    """``match`` (the finished match analysed) or ``rollout`` (a position of the game
    rolled out, from the hint: ``record`` then holds the request)."""
    status: Mapped[str] = mapped_column(String(16))
    done: Mapped[int] = mapped_column(Integer, default=0)
    total: Mapped[int] = mapped_column(Integer, default=0)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)
    requested_by: Mapped[int | None] = mapped_column(ForeignKey("players.id"))
    record: Mapped[str | None] = mapped_column(Text)
    """The job's input: the match record analysed (nard's JSON) or the rollout's
    request, kept so that a job lost with its worker can be queued again."""
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=_now)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    heartbeat: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    """When the worker making it last wrote its progress."""
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
