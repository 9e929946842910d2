"""The server's settings: one object, read from the environment (or ``nard serve``'s
options) once.

Every setting is listed in :data:`SETTINGS` with its environment variable, its
default and what it means; ``nard serve --help`` prints the same list, and
docs/server.md repeats it.

>>> s = Settings.from_env({"NARD_DATA_DIR": "/tmp/nard-doc"})
>>> s.database_url, s.port, s.redis_url
('sqlite:////tmp/nard-doc/nard.db', 8000, None)
>>> Settings.from_env({"NARD_PORT": "eighty"})
Traceback (most recent call last):
...
ValueError: NARD_PORT: 'eighty' is not a whole number
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

__all__ = ["SETTINGS", "Setting", "Settings"]


@dataclass(frozen=True)
class Setting:
    """One setting: the field of :class:`Settings`, its variable and its help."""

    name: str
    env: str
    help: str


def _setting(env: str, help: str, default: Any = None, **kwargs: Any) -> Any:
    return field(default=default, metadata={"env": env, "help": help}, **kwargs)


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to know about where and how it runs."""

    database_url: str = _setting(
        "NARD_DATABASE_URL",
        "SQLAlchemy URL of the database; PostgreSQL as postgresql+psycopg://user:pw@host/db "
        "(default: SQLite nard.db in the data directory)",
        "",
    )
    data_dir: Path = _setting(  # noqa: RUF009 - a frozen Path
        "NARD_DATA_DIR",
        "where the SQLite file lives (default: the user's data directory, "
        "e.g. ~/.local/share/nard)",
        Path("."),
    )
    host: str = _setting("NARD_HOST", "address to listen on", "127.0.0.1")
    port: int = _setting("NARD_PORT", "port to listen on", 8000)
    secure_cookies: bool = _setting(
        "NARD_SECURE_COOKIES", "1 to mark cookies Secure (behind HTTPS)", False
    )
    engine_workers: int = _setting(
        "NARD_ENGINE_WORKERS",
        "threads for the computer's thinking, hints and the engine API, without worker processes",
        2,
    )
    engine_processes: int = _setting(
        "NARD_ENGINE_PROCESSES",
        "worker processes the computer thinks in (0: in the server's own process)",
        1,
    )
    redis_url: str | None = _setting(
        "NARD_REDIS_URL",
        "Redis shared by several server processes on one database, and by their limits "
        "(e.g. redis://127.0.0.1:6379/0; default: none, one process)",
    )
    queue_path: str = _setting(
        "NARD_QUEUE_PATH",
        "the SQLite file analysis jobs wait in when there is no Redis "
        "(default: in the database when it is PostgreSQL, else queue.db in the data directory)",
        "",
    )
    analysis_workers: int = _setting(
        "NARD_ANALYSIS_WORKERS",
        "analysis worker processes nard serve runs itself (0: run `nard worker` instead)",
        1,
    )
    trust_proxy: bool = _setting(
        "NARD_TRUST_PROXY",
        "1 to take the client's address from X-Forwarded-For (only behind a proxy that sets it)",
        False,
    )
    limits: str = _setting(
        "NARD_LIMITS",
        "rate limits per client, as policy=LIMITS pairs separated by spaces, e.g. "
        "'table=20/minute;200/day action=10/second' (default: the built-in ones, "
        "docs/server.md)",
        "",
    )
    contribution_timeout: float = _setting(
        "NARD_CONTRIBUTION_TIMEOUT",
        "seconds the seated players have to give their dice contributions, after which "
        "the table may start without the missing ones",
        120.0,
    )
    away_grace: float = _setting(
        "NARD_AWAY_GRACE",
        "seconds a player may be disconnected from a match against a person before the "
        "opponent may claim it",
        60.0,
    )
    computer_lease: float = _setting(
        "NARD_COMPUTER_LEASE",
        "seconds a process holds the computer's turn; after a crash another process "
        "takes it over when this has passed",
        15.0,
    )
    table_cache: int = _setting(
        "NARD_TABLE_CACHE", "tables kept in memory at most (the rest reload on demand)", 2000
    )
    table_idle: float = _setting(
        "NARD_TABLE_IDLE", "seconds an unwatched table stays in memory after its last use", 600.0
    )
    sockets_per_table: int = _setting(
        "NARD_SOCKETS_PER_TABLE", "WebSockets watching one table at most", 300
    )
    sockets_per_client: int = _setting(
        "NARD_SOCKETS_PER_CLIENT", "WebSockets open from one client address at most", 30
    )
    socket_idle: float = _setting(
        "NARD_SOCKET_IDLE",
        "seconds a WebSocket may stay silent (no message, no keep-alive) before it is closed",
        900.0,
    )
    ping_interval: float = _setting(
        "NARD_PING_INTERVAL",
        "seconds between WebSocket pings; a socket that does not answer within the same "
        "time is closed (half-open connections)",
        20.0,
    )
    metrics: bool = _setting("NARD_METRICS", "1 to serve Prometheus metrics at /metrics", True)
    log_format: str = _setting("NARD_LOG_FORMAT", "json (one object per line) or text", "json")
    log_level: str = _setting("NARD_LOG_LEVEL", "debug, info, warning or error", "info")
    shutdown_grace: float = _setting(
        "NARD_SHUTDOWN_GRACE",
        "seconds to let requests in flight finish after SIGTERM or Ctrl-C",
        10.0,
    )

    def __post_init__(self) -> None:
        if not self.database_url:
            object.__setattr__(self, "database_url", f"sqlite:///{self.data_dir / 'nard.db'}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """The settings from ``env`` (default ``os.environ``) and ``overrides`` (the
        command line's), with the defaults above; ``ValueError`` names a bad value."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for spec in dataclasses.fields(cls):
            raw = overrides.get(spec.name)
            if raw is None:
                raw = env.get(spec.metadata["env"]) or None
            if raw is None:
                continue
            values[spec.name] = _parse(spec, raw)
        if "data_dir" not in values:
            values["data_dir"] = Path(platformdirs.user_data_dir("nard"))
        settings = cls(**values)
        settings.check()
        return settings

    def check(self) -> None:
        """Refuse values that cannot work (``ValueError`` naming the setting)."""
        if not 0 < self.port < 65536:
            raise ValueError(f"NARD_PORT: {self.port} is not a port (1-65535)")
        positive = (
            "engine_workers",
            "contribution_timeout",
            "away_grace",
            "computer_lease",
            "table_cache",
            "table_idle",
            "sockets_per_table",
            "sockets_per_client",
            "socket_idle",
            "ping_interval",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise ValueError(f"{_env(name)}: must be more than 0, not {getattr(self, name)}")
        if self.analysis_workers < 0:
            raise ValueError(f"NARD_ANALYSIS_WORKERS: 0 or more, not {self.analysis_workers}")
        if self.engine_processes < 0:
            raise ValueError(f"NARD_ENGINE_PROCESSES: 0 or more, not {self.engine_processes}")
        if self.log_format not in ("json", "text"):
            raise ValueError(f"NARD_LOG_FORMAT: json or text, not {self.log_format!r}")
        if self.log_level.lower() not in ("debug", "info", "warning", "error"):
            raise ValueError(
                f"NARD_LOG_LEVEL: debug, info, warning or error, not {self.log_level!r}"
            )


SETTINGS: tuple[Setting, ...] = tuple(
    Setting(f.name, f.metadata["env"], f.metadata["help"]) for f in dataclasses.fields(Settings)
)
"""Every setting, in order."""


def _env(name: str) -> str:
    return next(s.env for s in SETTINGS if s.name == name)


def _parse(spec: dataclasses.Field[Any], raw: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    kind = spec.type if isinstance(spec.type, str) else getattr(spec.type, "__name__", "")
    env = spec.metadata["env"]
    try:
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
    except ValueError:
        what = "a whole number" if kind == "int" else "a number"
        raise ValueError(f"{env}: {raw!r} is not {what}") from None
    if kind == "bool":
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError(f"{env}: {raw!r} is not 1 or 0")
    if kind == "Path":
        return Path(raw).expanduser()
    return raw
