"""Bad input, on SQLite and PostgreSQL: the review sent control characters, values of
the wrong type, deep nesting, binary frames and huge bodies. PostgreSQL refused a
NUL in text with a server error, the WebSocket handler died with a traceback on
some frames, and booleans passed for numbers. Each is now a 4xx (or, on a socket, an
error message) naming the problem, with nothing stored and the socket still usable.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from nard.server.models import PlayerRow
from nard.server.storage import Storage
from tests.server.conftest import app_on
from tests.server.helpers import guest, new_table

CONTROL = ["\x00", "\x1b", "\x7f", "\u0085", "\u2028"]
"""NUL, escape, delete, next line (C1) and the line separator."""
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def app_client(database_url: str, tmp_path: Path) -> Iterator[tuple[TestClient, Storage]]:
    """A client of an app on SQLite, then on PostgreSQL."""
    app, storage = app_on(database_url, tmp_path)
    with TestClient(app) as client:
        yield client, storage
    storage.close()


def refusal(response: Any) -> tuple[int, str]:
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == {"code", "message"}, body
    assert body["error"]["message"]
    return response.status_code, body["error"]["code"]


def players(storage: Storage) -> int:
    with storage.engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(PlayerRow)).scalar_one())


def no_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    """Nothing logged an error with a traceback (the server's or uvicorn's loggers)."""
    bad = [
        r
        for r in caplog.records
        if r.name.split(".")[0] in ("nard", "uvicorn", "fastapi", "starlette")
        and (r.levelno >= logging.ERROR or r.exc_info)
    ]
    assert bad == [], [f"{r.name}: {r.getMessage()}" for r in bad]


# -- control characters and wrong types over HTTP ---------------------------------------


@pytest.mark.parametrize("char", CONTROL, ids=["nul", "esc", "del", "nel", "ls"])
def test_control_characters_are_refused_and_nothing_is_stored(
    app_client: tuple[TestClient, Storage], char: str, caplog: pytest.LogCaptureFixture
) -> None:
    client, storage = app_client
    headers = guest(client, "ann")
    count = players(storage)
    code = f"U+{ord(char):04X}"

    # A contribution to the dice.
    table = new_table(client, headers, contribution=None)
    response = client.post(
        f"/api/tables/{table['id']}/seed", json={"contribution": f"my{char}seed"}, headers=headers
    )
    assert refusal(response)[0] == 422 and code in response.json()["error"]["message"]
    after = client.get(f"/api/tables/{table['id']}").json()
    assert after["seq"] == table["seq"] and after["you_contribute"] is True

    # A guest's name, a username, a password: no player is made.
    response = client.post("/api/guest", json={"name": f"bob{char}"})
    assert refusal(response)[0] == 422
    for body in (
        {"username": f"bob{char}by", "password": "long enough"},
        {"username": "bobby", "password": f"long{char}enough"},
    ):
        client.cookies.clear()
        response = client.post("/api/register", json=body)
        assert refusal(response)[0] == 422, body
        assert code in response.json()["error"]["message"] or "invalid" in response.text
        response = client.post("/api/login", json=body)
        assert refusal(response)[0] in (401, 422), body
    assert players(storage) == count

    # A play's text.
    client.cookies.clear()
    headers = guest(client, "carol")
    table = new_table(client, headers, match_length=3)
    play = {"action": "play", "play": f"24/18{char} 13/10"}
    response = client.post(f"/api/tables/{table['id']}/actions", json=play, headers=headers)
    assert refusal(response)[0] == 422 and code in response.json()["error"]["message"]
    assert client.get(f"/api/tables/{table['id']}").json()["seq"] == table["seq"]
    no_tracebacks(caplog)


@pytest.mark.parametrize("char", CONTROL, ids=["nul", "esc", "del", "nel", "ls"])
def test_a_name_in_the_path_that_no_player_can_have_is_no_player(
    app_client: tuple[TestClient, Storage], char: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A player's page and blocking by name: a NUL in the name was a 500 on
    PostgreSQL (which cannot hold one in text); no name with a control character
    is looked up, on either database."""
    client, _storage = app_client
    response = client.post("/api/register", json={"username": "bobby", "password": "long enough"})
    assert response.status_code == 200, response.text
    client.cookies.clear()
    headers = guest(client, "ann")
    for name in (f"bob{char}by", f"{char}"):
        quoted = quote(name, safe="")
        response = client.get(f"/api/players/{quoted}")
        assert refusal(response) == (404, "no_such_player"), name
        for method in ("POST", "DELETE"):
            response = client.request(method, f"/api/players/{quoted}/block", headers=headers)
            assert refusal(response) == (404, "no_such_player"), (method, name)
    assert client.get("/api/blocks").json() == {"blocked": []}
    no_tracebacks(caplog)


def test_booleans_and_text_are_not_numbers(
    app_client: tuple[TestClient, Storage], caplog: pytest.LogCaptureFixture
) -> None:
    client, storage = app_client
    headers = guest(client)
    before = storage.count_tables()
    for settings in (
        {"match_length": True},
        {"match_length": "5"},
        {"match_length": 5.0},
        {"cube": "yes"},
        {"automatic_doubles": False},
        {"players": "4", "opponent": "chouette"},
    ):
        body = {"opponent": "computer", "level": "expert", **settings}
        response = client.post("/api/tables", json=body, headers=headers)
        assert response.status_code == 422, (settings, response.text[:200])
        assert refusal(response) == (422, "invalid_request"), settings
    assert storage.count_tables() == before
    table = new_table(client, headers, match_length=3)
    url = f"/api/tables/{table['id']}/actions"
    for action in (
        {"action": "resign", "points": True},
        {"action": "resign", "points": "1"},
        {"action": "roll", "seq": True},
        {"action": "roll", "seq": "0"},
        {"action": True},
        {"action": ["roll"]},
    ):
        response = client.post(url, json=action, headers=headers)
        assert response.status_code == 422, (action, response.text[:200])
        assert refusal(response) == (422, "invalid_request"), action
    assert client.get(f"/api/tables/{table['id']}").json()["seq"] == table["seq"]
    no_tracebacks(caplog)


def test_a_boolean_is_not_a_seat(
    app_client: tuple[TestClient, Storage], caplog: pytest.LogCaptureFixture
) -> None:
    """``"seat": true`` (or 1.0) is not seat 1: the seat is a number 0 or 1, strictly."""
    client, storage = app_client
    headers = guest(client)
    before = storage.count_tables()
    for seat in (True, False, 1.0, "1"):
        body = {"opponent": "person", "seat": seat}
        response = client.post("/api/tables", json=body, headers=headers)
        assert response.status_code == 422, (seat, response.text[:200])
        assert refusal(response) == (422, "invalid_request"), seat
    assert storage.count_tables() == before
    no_tracebacks(caplog)


def test_text_that_is_not_unicode_is_refused(
    app_client: tuple[TestClient, Storage], caplog: pytest.LogCaptureFixture
) -> None:
    """A lone surrogate (valid JSON escape, not a character) never reaches the
    database or argon2, which cannot encode it."""
    client, storage = app_client
    count = players(storage)
    for path, raw in (
        ("/api/guest", '{"name": "ab\\ud800c"}'),
        ("/api/register", '{"username": "ab\\ud800c", "password": "long enough"}'),
        ("/api/register", '{"username": "abc", "password": "long enough\\udfff"}'),
        ("/api/login", '{"username": "ab\\ud800c", "password": "long enough"}'),
    ):
        response = client.post(path, content=raw.encode(), headers=JSON)
        assert refusal(response) == (422, "invalid_request"), raw
    assert players(storage) == count
    headers = guest(client)
    table = new_table(client, headers, contribution=None)
    response = client.post(
        f"/api/tables/{table['id']}/seed",
        content=b'{"contribution": "x\\ud800"}',
        headers={**JSON, **headers},
    )
    assert refusal(response)[0] == 422
    assert client.get(f"/api/tables/{table['id']}").json()["seq"] == table["seq"]
    no_tracebacks(caplog)


def test_deep_nesting_over_http(
    app_client: tuple[TestClient, Storage], caplog: pytest.LogCaptureFixture
) -> None:
    """Nesting past the JSON parser's depth is a malformed request (400, documented)
    or an invalid one (422): never a server error."""
    client, _ = app_client
    headers = {**guest(client), **JSON}
    table = new_table(client, headers, match_length=3)
    for raw in (
        "[" * 3000 + "]" * 3000,
        '{"action": ' + "[" * 3000 + "]" * 3000 + "}",
        '{"action": "roll", "play": ' + '{"a":' * 2000 + "1" + "}" * 2000 + "}",
    ):
        response = client.post(
            f"/api/tables/{table['id']}/actions", content=raw.encode(), headers=headers
        )
        assert refusal(response)[0] in (400, 422), raw[:30]
    assert client.get(f"/api/tables/{table['id']}").json()["seq"] == table["seq"]
    no_tracebacks(caplog)


def test_oversized_bodies_are_refused(
    app_client: tuple[TestClient, Storage], caplog: pytest.LogCaptureFixture
) -> None:
    client, storage = app_client
    headers = {**guest(client), **JSON}
    before = storage.count_tables()
    huge = b'{"opponent": "computer", "level": "' + b"x" * 40_000 + b'"}'
    response = client.post("/api/tables", content=huge, headers=headers)
    assert refusal(response) == (413, "too_large")
    assert storage.count_tables() == before
    no_tracebacks(caplog)


def test_oversized_bodies_without_a_length_are_refused(
    app_client: tuple[TestClient, Storage], caplog: pytest.LogCaptureFixture
) -> None:
    """A body sent in chunks (no Content-Length) is counted as it comes: past the limit
    it is refused like one that announced its size (413 too_large)."""
    client, storage = app_client
    headers = {**guest(client), **JSON}
    before = storage.count_tables()

    def chunks() -> Iterator[bytes]:
        yield b'{"opponent": "computer", "level": "'
        for _ in range(40):
            yield b"x" * 1024
        yield b'"}'

    response = client.post("/api/tables", content=chunks(), headers=headers)
    assert "content-length" not in {k.lower() for k in response.request.headers}
    assert refusal(response) == (413, "too_large")
    assert storage.count_tables() == before
    no_tracebacks(caplog)


# -- the WebSocket -------------------------------------------------------------------------


def error_message(socket: Any) -> dict[str, Any]:
    """The next message: an error (table messages pushed meanwhile are skipped)."""
    while True:
        message = socket.receive_json()
        if message["type"] != "table":
            assert message["type"] == "error", message
            assert set(message["error"]) == {"code", "message"} and message["error"]["message"]
            error: dict[str, Any] = message["error"]
            return error


def still_usable(socket: Any) -> None:
    socket.send_json({"type": "ping"})
    while (message := socket.receive_json())["type"] == "table":
        pass
    assert message == {"type": "pong"}


def test_bad_frames_get_an_error_and_the_socket_stays(
    app_client: tuple[TestClient, Storage], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    client, _ = app_client
    headers = guest(client)
    table = new_table(client, headers, match_length=3)
    with client.websocket_connect(f"/ws/tables/{table['id']}") as socket:
        assert socket.receive_json()["type"] == "table"
        socket.send_bytes(b'{"action": "roll"}')
        assert error_message(socket)["code"] == "invalid_request"
        still_usable(socket)
        frames = [
            "[" * 2000 + "]" * 2000,  # deep, within the size limit
            '{"action": ' + "[" * 1900 + "]" * 1900 + "}",
            '{"action": "roll", "play": ' + '{"a":' * 600 + "1" + "}" * 600 + "}",
            '{"action": {"roll": [1, [2, {"x": null}]]}}',  # small, but not an action
            '{"action": "roll", "points": true}',
            '{"action": "play", "play": "24/18\\u0000 13/10"}',
            '{"action": "play", "play": "24/18\\ud800"}',
            '{"type": "ping", "extra": 1}',
            "[1, 2]",
            "42",
            '"roll"',
            "null",
            "true",
            "",
            "{",
            "\x00",
        ]
        for frame in frames:
            socket.send_text(frame)
            error = error_message(socket)
            assert error["code"] in ("invalid_request", "invalid_action"), (frame[:40], error)
            still_usable(socket)
        for frame in ("[" * 3000 + "]" * 3000, "x" * 100_000, '{"action": "' + "r" * 10**6 + '"}'):
            socket.send_text(frame)
            assert error_message(socket)["code"] == "too_large"
            still_usable(socket)
    assert client.get(f"/api/tables/{table['id']}").json()["seq"] == table["seq"]
    no_tracebacks(caplog)


def test_the_action_route_checks_as_the_documented_one(
    app_client: tuple[TestClient, Storage], caplog: pytest.LogCaptureFixture
) -> None:
    """Actions are served by a lean route (no FastAPI dependency solving), which must
    check what the documented route does, in the same order: the session, the
    origin and the CSRF token before the body, then the body against the schema."""
    client, _ = app_client
    headers = guest(client)
    table = new_table(client, headers, match_length=3)
    url = f"/api/tables/{table['id']}/actions"
    bad_bodies = [b"", b"not json", b"[]", b'"roll"', b"{}", b'{"action": "roll", "x": 1}']
    for raw in bad_bodies:
        response = client.post(url, content=raw, headers={**JSON, **headers})
        assert refusal(response) == (422, "invalid_request"), raw
    # Who sends it is checked first, whatever the body.
    no_csrf = {k: v for k, v in headers.items() if k.lower() != "x-csrf-token"}
    assert refusal(client.post(url, content=b"[]", headers={**JSON, **no_csrf})) == (
        403,
        "csrf",
    )
    foreign = {**JSON, **headers, "Origin": "https://elsewhere.example"}
    assert refusal(client.post(url, json={"action": "roll"}, headers=foreign)) == (
        403,
        "cross_origin",
    )
    assert refusal(client.post(url + "x", json={"action": "roll"}, headers=headers))[0] == 404
    client.cookies.clear()
    assert refusal(client.post(url, content=b"[]", headers=JSON)) == (401, "not_signed_in")
    # The documented route is still the one the OpenAPI document describes.
    operation = client.get("/openapi.json").json()["paths"]["/api/tables/{table_id}/actions"]
    assert set(operation["post"]["responses"]) >= {"200", "401", "403", "404", "409", "422"}
    no_tracebacks(caplog)
