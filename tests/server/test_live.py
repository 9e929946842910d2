"""WebSockets of live tables, and a server restarted in the middle of a game."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from nard.match.verify import verify_record
from nard.notation.json_record import read_json
from tests.server.conftest import app_on
from tests.server.helpers import act, guest, new_table, play_until, simple_command


def receive_table(socket: Any) -> dict[str, Any]:
    message = socket.receive_json()
    assert message["type"] == "table", message
    table: dict[str, Any] = message["table"]
    return table


def test_the_socket_sends_the_table_and_takes_actions(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, match_length=3)
    with client.websocket_connect(f"/ws/tables/{table['id']}") as socket:
        first = receive_table(socket)
        assert first["seq"] == table["seq"] and first["you"] == 0
        socket.send_json(simple_command(first))
        after = receive_table(socket)
        assert after["seq"] == first["seq"] + 1
        # Then the computer's actions, if it is its turn, one message each.
        while after["to_act"] == 1:
            after = receive_table(socket)
        assert after["seq"] > first["seq"]
        socket.send_text("not json")
        assert socket.receive_json()["error"]["code"] == "invalid_request"
        socket.send_text("x" * 5000)
        assert socket.receive_json()["error"]["code"] == "too_large"
        socket.send_json({"action": "play", "play": "24/1"})
        assert socket.receive_json()["error"]["code"] == "illegal_action"
        socket.send_json({"action": "roll", "seq": 0})
        assert socket.receive_json()["error"]["code"] == "stale"
    state = client.get(f"/api/tables/{table['id']}").json()
    assert state["seq"] == after["seq"]


def test_spectators_watch_but_cannot_act(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as eve:
        headers = guest(ann)
        table = new_table(ann, headers, match_length=3)
        with eve.websocket_connect(f"/ws/tables/{table['id']}") as socket:
            seen = receive_table(socket)
            assert seen["you"] is None and seen["game"]["legal_plays"] == []
            socket.send_json({"action": "roll"})
            assert socket.receive_json()["error"]["code"] == "not_signed_in"
            # Ann acts over HTTP; Eve's socket is told.
            act(ann, table["id"], headers, simple_command(table))
            assert receive_table(socket)["seq"] == seen["seq"] + 1
    storage.close()


def test_sockets_from_other_sites_and_to_unknown_tables_are_refused(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers)
    with (
        pytest.raises(WebSocketDisconnect) as refused,
        client.websocket_connect(
            f"/ws/tables/{table['id']}", headers={"Origin": "https://evil.example"}
        ) as socket,
    ):
        socket.receive_json()
    assert refused.value.code == 4403
    with (
        pytest.raises(WebSocketDisconnect) as missing,
        client.websocket_connect("/ws/tables/nosuchtable") as socket,
    ):
        socket.receive_json()
    assert missing.value.code == 4404


def test_a_restarted_server_continues_the_game(database_url: str, tmp_path: Path) -> None:
    """Stop the server mid-game, start another on the same database: nothing is lost."""
    app, storage = app_on(database_url, tmp_path, seed=5)
    with TestClient(app) as client:
        headers = guest(client)
        cookie = client.cookies.get("nard_session")
        table = new_table(client, headers, match_length=5, contribution="restart")
        table = play_until(client, table, headers, actions=12)
        assert table["status"] == "playing"
        before = client.get(f"/api/tables/{table['id']}").json()
    storage.close()

    app, storage = app_on(database_url, tmp_path, seed=99)
    with TestClient(app) as client:
        assert cookie is not None
        client.cookies.set("nard_session", cookie)
        after = client.get(f"/api/tables/{table['id']}").json()
        assert after == before
        # The same dice go on: finish the match and check every die against the seed.
        finished = play_until(client, after, headers)
        assert finished["status"] == "finished"
        record, dice = read_json(client.get(f"/api/tables/{table['id']}/record.json").text)
        assert dice is not None and verify_record(record, dice).ok
    storage.close()
