"""Server test fixtures: the app on a fresh database, SQLite or PostgreSQL.

Storage tests run on both databases. PostgreSQL is the one at
``NARD_TEST_POSTGRES`` (default ``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``,
the server ``.ci/run`` starts); each test gets a database of its own, dropped
after it. Without a server the PostgreSQL cases are skipped, unless
``NARD_REQUIRE_POSTGRES=1`` (CI), where they fail.
"""

from __future__ import annotations

import os
import random
import uuid
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

from nard.server import Settings, create_app
from nard.server.storage import Storage

POSTGRES = os.environ.get(
    "NARD_TEST_POSTGRES", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)


def _postgres_database() -> Iterator[str]:
    admin = create_engine(POSTGRES, isolation_level="AUTOCOMMIT")
    name = f"nard_test_{uuid.uuid4().hex[:12]}"
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except OperationalError as exc:
        admin.dispose()
        if os.environ.get("NARD_REQUIRE_POSTGRES") == "1":
            pytest.fail(f"PostgreSQL at {POSTGRES} is required here: {exc}")
        pytest.skip(f"no PostgreSQL at {POSTGRES}")
    try:
        yield make_url(POSTGRES).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


REDIS = os.environ.get("NARD_TEST_REDIS", "redis://127.0.0.1:6379/0")


@pytest.fixture
def redis_url() -> str:
    """The Redis at ``NARD_TEST_REDIS``; skipped without it unless ``NARD_REQUIRE_REDIS=1``."""
    import redis

    try:
        redis.Redis.from_url(REDIS, socket_connect_timeout=2).ping()
    except redis.RedisError as exc:
        if os.environ.get("NARD_REQUIRE_REDIS") == "1":
            pytest.fail(f"Redis at {REDIS} is required here: {exc}")
        pytest.skip(f"no Redis at {REDIS}")
    return REDIS


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A fresh PostgreSQL database (skipped without a server, as above)."""
    yield from _postgres_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty database: an SQLite file, then a PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'nard.db'}"
    else:
        yield from _postgres_database()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'nard.db'}"


NO_LIMITS = "register= guest= login= table= hint= action= analysis= chat= engine="
"""The abuse limits switched off: tests play whole matches as fast as they can (the
limits have tests of their own)."""


def make_settings(url: str, tmp_path: Path, **overrides: Any) -> Settings:
    """Test settings: one engine thread and no worker processes (the computer thinks
    in-process; test_thinking has the worker processes), the limits off."""
    values: dict[str, Any] = {
        "database_url": url,
        "data_dir": tmp_path,
        "engine_workers": 1,
        "engine_processes": 0,
        "limits": NO_LIMITS,
        "metrics": True,
        **overrides,
    }
    return Settings(**values)


def seeded(seed: int) -> Callable[[], bytes]:
    """Deterministic secret dice seeds for the tables of one test."""
    rng = random.Random(seed)
    return lambda: rng.randbytes(32)


def app_on(
    url: str, tmp_path: Path, seed: int = 1, clock: Callable[[], datetime] | None = None
) -> tuple[FastAPI, Storage]:
    """The app on the database at ``url`` and its storage; ``clock`` is the service's
    time where a test moves it."""
    storage = Storage(url)
    options = {} if clock is None else {"service_options": {"clock": clock}}
    app = create_app(make_settings(url, tmp_path), storage, server_seeds=seeded(seed), **options)
    return app, storage


@pytest.fixture
def client(sqlite_url: str, tmp_path: Path) -> Iterator[TestClient]:
    """The app on a fresh SQLite database, with a client (not signed in)."""
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as c:
        yield c
    storage.close()
