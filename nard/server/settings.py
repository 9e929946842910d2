"""The server's settings: one object, read from the environment once.

=====================  ==================================================
variable               meaning (default)
=====================  ==================================================
``NARD_DATABASE_URL``  SQLAlchemy URL of the database (an SQLite file
                       ``nard.db`` in the data directory); PostgreSQL with
                       ``postgresql+psycopg://user@host/db``
``NARD_DATA_DIR``      where the SQLite file and the secret key live (the
                       user's data directory, e.g. ``~/.local/share/nard``)
``NARD_HOST``          address to listen on (``127.0.0.1``)
``NARD_PORT``          port (``8000``)
``NARD_SECURE_COOKIES`` ``1`` to mark cookies Secure (behind HTTPS)
``NARD_ENGINE_WORKERS`` threads for the computer's thinking (``2``)
``NARD_REDIS_URL``     Redis, when several server processes share the
                       tables (``redis://127.0.0.1:6379/0``; none)
=====================  ==================================================
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import platformdirs

__all__ = ["Settings"]


@dataclass(frozen=True)
class Settings:
    """Everything the server needs to know about where it runs."""

    database_url: str
    data_dir: Path
    host: str = "127.0.0.1"
    port: int = 8000
    secure_cookies: bool = False
    engine_workers: int = 2
    redis_url: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """The settings from ``env`` (default ``os.environ``), with the defaults above.

        >>> s = Settings.from_env({"NARD_DATA_DIR": "/tmp/nard-doc"})
        >>> s.database_url, s.port
        ('sqlite:////tmp/nard-doc/nard.db', 8000)
        """
        env = os.environ if env is None else env
        data_dir = Path(env.get("NARD_DATA_DIR") or platformdirs.user_data_dir("nard"))
        url = env.get("NARD_DATABASE_URL") or f"sqlite:///{data_dir / 'nard.db'}"
        try:
            port = int(env.get("NARD_PORT", "8000"))
            workers = int(env.get("NARD_ENGINE_WORKERS", "2"))
        except ValueError as exc:
            raise ValueError(f"NARD_PORT and NARD_ENGINE_WORKERS are numbers: {exc}") from None
        return cls(
            database_url=url,
            data_dir=data_dir,
            host=env.get("NARD_HOST", "127.0.0.1"),
            port=port,
            secure_cookies=env.get("NARD_SECURE_COOKIES", "") == "1",
            engine_workers=max(1, workers),
            redis_url=env.get("NARD_REDIS_URL") or None,
        )
