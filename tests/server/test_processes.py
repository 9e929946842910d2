"""Two server processes on one database and one Redis: a change made through one
reaches the other's WebSockets and requests.

Each process is an app of its own (its own TableService, cache and event
loop), as uvicorn workers would be. Redis is the one at ``NARD_TEST_REDIS``
(default ``redis://127.0.0.1:6379/0``); without it the test is skipped,
unless ``NARD_REQUIRE_REDIS=1`` (CI).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from nard.server import create_app
from nard.server.storage import Storage
from tests.server.conftest import make_settings, seeded
from tests.server.helpers import act, guest, new_table, simple_command


def receive_table(socket: Any) -> dict[str, Any]:
    message = socket.receive_json()
    assert message["type"] == "table", message
    table: dict[str, Any] = message["table"]
    return table


def test_two_processes_share_tables_through_redis(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    settings = make_settings(database_url, tmp_path)
    settings = type(settings)(**{**settings.__dict__, "redis_url": redis_url})
    first_storage, second_storage = Storage(database_url), Storage(database_url)
    first = create_app(settings, first_storage, server_seeds=seeded(1))
    second = create_app(settings, second_storage, server_seeds=seeded(2))
    with TestClient(first) as one, TestClient(second) as two:
        headers = guest(one, "ann")
        table = new_table(one, headers, match_length=3)
        # The same browser (cookie) on the other process sees the same table.
        two.cookies.set("nard_session", one.cookies["nard_session"])
        assert two.get(f"/api/tables/{table['id']}").json()["seq"] == table["seq"]
        with two.websocket_connect(f"/ws/tables/{table['id']}") as socket:
            seen = receive_table(socket)
            after = act(one, table["id"], headers, simple_command(table))
            # Process two hears of it through Redis and pushes the new state.
            pushed = receive_table(socket)
            while pushed["seq"] < after["seq"]:
                pushed = receive_table(socket)
            assert pushed["seq"] == after["seq"] > seen["seq"]
            assert pushed["game"]["board"] == after["game"]["board"]
        # And its requests see the new state too; acting there continues the game.
        state = two.get(f"/api/tables/{table['id']}").json()
        assert state["seq"] == after["seq"]
        if state["to_act"] == state["you"]:
            moved = act(two, table["id"], headers, simple_command(state))
            assert moved["seq"] > state["seq"]
    first_storage.close()
    second_storage.close()
