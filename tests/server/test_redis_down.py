"""Several processes, supervised: a process whose Redis subscription drops serves
correct state from the database meanwhile, says so in readiness, reconnects with
back-off and resynchronises every watched table when Redis comes back.

The review saw a process whose subscription dropped show move 2 of a table at move 8,
silently, with nothing to restart its listener.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi.testclient import TestClient

from nard.server import create_app
from nard.server.storage import Storage
from tests.server.conftest import make_settings, seeded
from tests.server.helpers import act, guest, new_table, simple_command
from tests.server.proxy import TcpProxy

FAST = {"poll_interval": 0.05, "redis_backoff": (0.05, 0.2)}


def eventually(check: Callable[[], bool], what: str, limit: float = 20.0) -> None:
    """Wait for the server's background work to make ``check`` true (bounded)."""
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, f"never: {what}"
        time.sleep(0.02)


def readiness(client: TestClient) -> dict[str, Any]:
    result: dict[str, Any] = client.get("/readyz").json()
    return result


def next_table_message(socket: Any, after: int) -> dict[str, Any]:
    while True:
        message = socket.receive_json()
        if message["type"] == "table" and message["table"]["seq"] > after:
            table: dict[str, Any] = message["table"]
            return table


def test_a_process_cut_off_from_redis_stays_correct_and_recovers(
    sqlite_url: str, redis_url: str, tmp_path: Path
) -> None:
    target = urlsplit(redis_url)
    proxy = TcpProxy((target.hostname or "127.0.0.1", target.port or 6379))
    base = make_settings(sqlite_url, tmp_path)
    stores = [Storage(sqlite_url), Storage(sqlite_url)]
    first = create_app(replace(base, redis_url=redis_url), stores[0], server_seeds=seeded(1))
    second = create_app(
        replace(base, redis_url=proxy.url), stores[1], server_seeds=seeded(2), service_options=FAST
    )
    try:
        with TestClient(first) as one, TestClient(second) as two:
            headers = guest(one, "ann")
            two.cookies.set("nard_session", one.cookies["nard_session"])
            table = new_table(one, headers, match_length=7)
            eventually(lambda: readiness(two)["redis"] == "up", "the subscription is up")
            eventually(lambda: readiness(two)["engine"] == "warm", "the engine is warm")
            with two.websocket_connect(f"/ws/tables/{table['id']}") as socket:
                seen = next_table_message(socket, -1)
                proxy.cut()
                eventually(lambda: readiness(two)["status"] == "degraded", "readiness says so")
                assert readiness(two) == {
                    "status": "degraded",
                    "database": "ok",
                    "redis": "down",
                    "engine": "warm",
                }
                # Changes made elsewhere while the subscription is down...
                for _ in range(3):
                    table = act(one, table["id"], headers, simple_command(table))
                # ...are read from the database by requests and pushed by polling.
                assert two.get(f"/api/tables/{table['id']}").json()["seq"] == table["seq"]
                assert next_table_message(socket, seen["seq"])["seq"] >= seen["seq"] + 1
                proxy.restore()
                eventually(lambda: readiness(two)["status"] == "ready", "the subscription is back")
                before = table["seq"]
                table = act(one, table["id"], headers, simple_command(table))
                pushed = next_table_message(socket, before)
                while pushed["seq"] < table["seq"]:
                    pushed = next_table_message(socket, pushed["seq"])
                assert pushed["seq"] == table["seq"]
            metrics = two.get("/metrics").text
            assert "nard_redis_up 1.0" in metrics
            assert "nard_redis_reconnects_total 1.0" in metrics
    finally:
        proxy.cut()
        for store in stores:
            store.close()
