# ruff: noqa: RUF002, RUF003 (look-alike characters are what some of these tests are about)
"""Sessions and accounts, as the security review found them and as they must be now:
sockets bound to the sign-in session, a new session id at every sign-in, the sign-in
back-off per account and address, the same work for unknown and known names, and
usernames compared by their UTS #39 key.

Client addresses are simulated with ``X-Forwarded-For`` on an app that trusts its
proxy. The sign-in throttle's clock is a fake one the tests move (``create_app``
builds its :class:`LoginThrottle` itself, with the wall clock and no way to pass
another: the tests replace the class the app module uses).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import func, select
from starlette.websockets import WebSocketDisconnect

import nard.server.app as app_module
from nard.server import create_app
from nard.server.abuse import LoginThrottle
from nard.server.models import PlayerRow
from nard.server.storage import Storage
from tests.server.conftest import app_on, make_settings, seeded
from tests.server.helpers import eventually, guest, new_table

COOKIE = "nard_session"
PASSWORD = "correct horse"
FREE_PER_USER = 5
"""Wrong passwords for one account from one address that cost nothing (LoginThrottle's
default); the next one starts the back-off."""
FREE_PER_ADDRESS = 20
"""Wrong passwords for any accounts from one address that cost nothing."""


def refusal(response: Any) -> tuple[int, str]:
    """A refusal's status and code (and the one error shape)."""
    body = response.json()
    assert set(body["error"]) == {"code", "message"} and body["error"]["message"], body
    return response.status_code, body["error"]["code"]


def from_address(address: str) -> dict[str, str]:
    return {"X-Forwarded-For": address}


def register(client: TestClient, username: str, password: str = PASSWORD) -> Any:
    return client.post("/api/register", json={"username": username, "password": password})


def login(
    client: TestClient, username: str, password: str = PASSWORD, address: str | None = None
) -> Any:
    headers = from_address(address) if address else {}
    return client.post(
        "/api/login", json={"username": username, "password": password}, headers=headers
    )


def csrf(response: Any) -> dict[str, str]:
    assert response.status_code == 200, response.text
    return {"X-CSRF-Token": response.json()["csrf_token"]}


def me_with_cookie(app: FastAPI, cookie: str) -> Any:
    """``GET /api/me`` from another browser holding ``cookie``."""
    with TestClient(app) as other:
        other.cookies.set(COOKIE, cookie)
        return other.get("/api/me").json()


def subscribed(client: TestClient) -> bool:
    """Whether the client's process listens on Redis (and so hears of other processes)."""
    return bool(client.get("/readyz").json()["redis"] == "up")


def closed_code(socket: Any) -> int:
    """Read the socket until the server closes it; the close code."""
    with pytest.raises(WebSocketDisconnect) as closed:
        for _ in range(100):
            socket.receive_json()
    return closed.value.code


class Clock:
    """The time the sign-in throttle sees; the test moves it."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def throttle_clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """The apps created in this test get a sign-in throttle on a fake clock."""
    clock = Clock()
    monkeypatch.setattr(app_module, "LoginThrottle", functools.partial(LoginThrottle, clock=clock))
    return clock


@pytest.fixture
def behind_proxy(sqlite_url: str, tmp_path: Path, throttle_clock: Clock) -> Iterator[TestClient]:
    """An app that takes client addresses from X-Forwarded-For, with a client."""
    storage = Storage(sqlite_url)
    settings = make_settings(sqlite_url, tmp_path, trust_proxy=True)
    app = create_app(settings, storage, server_seeds=seeded(1))
    with TestClient(app) as client:
        yield client
    storage.close()


# -- sockets bound to the session -------------------------------------------------------


def test_a_socket_opened_before_logout_is_closed_by_it(sqlite_url: str, tmp_path: Path) -> None:
    """The review opened a table's WebSocket, signed out over HTTP, and went on playing
    through the socket: sockets were not bound to the session. Now logout closes
    them (4401), and the socket of another session of the same player stays."""
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as laptop, TestClient(app) as phone:
        headers = csrf(register(laptop, "ann"))
        assert login(phone, "ann").status_code == 200
        table = new_table(laptop, headers, match_length=3, contribution=None)
        with (
            laptop.websocket_connect(f"/ws/tables/{table['id']}") as socket,
            phone.websocket_connect(f"/ws/tables/{table['id']}") as other,
        ):
            assert socket.receive_json()["table"]["you"] == 0
            assert other.receive_json()["table"]["you"] == 0
            assert laptop.post("/api/logout", headers=headers).status_code == 204
            assert closed_code(socket) == 4401
            other.send_json({"type": "ping"})
            assert other.receive_json() == {"type": "pong"}
        assert laptop.get("/api/me").json() is None
    storage.close()


def test_a_logout_closes_the_sockets_of_the_session_on_other_processes(
    sqlite_url: str, redis_url: str, tmp_path: Path
) -> None:
    """Two processes on one database and one Redis: a logout on one closes the
    session's socket on the other (4401), and the other no longer knows the cookie."""
    settings = replace(make_settings(sqlite_url, tmp_path), redis_url=redis_url)
    stores = [Storage(sqlite_url), Storage(sqlite_url)]
    first = create_app(settings, stores[0], server_seeds=seeded(1))
    second = create_app(settings, stores[1], server_seeds=seeded(2))
    with TestClient(first) as one, TestClient(second) as two:
        eventually(lambda: subscribed(one) and subscribed(two))
        headers = guest(one, "ann")
        two.cookies.set(COOKIE, one.cookies[COOKIE])
        assert two.get("/api/me").json()["name"] == "ann"
        table = new_table(one, headers, match_length=3)
        with two.websocket_connect(f"/ws/tables/{table['id']}") as socket:
            seen = socket.receive_json()["table"]
            assert seen["you"] == 0
            assert one.post("/api/logout", headers=headers).status_code == 204
            assert closed_code(socket) == 4401
        assert two.get("/api/me").json() is None
        assert two.get(f"/api/tables/{table['id']}").json()["seq"] == seen["seq"]
    for store in stores:
        store.close()


def test_a_password_change_closes_the_other_sessions_sockets(
    sqlite_url: str, tmp_path: Path
) -> None:
    """POST /api/password ends the player's other sessions: the review saw their
    sockets stay open and keep acting. They are closed now; the changer's stays."""
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as laptop, TestClient(app) as phone:
        headers = csrf(register(laptop, "ann"))
        assert login(phone, "ann").status_code == 200
        table = new_table(laptop, headers, match_length=3, contribution=None)
        with (
            phone.websocket_connect(f"/ws/tables/{table['id']}") as stolen,
            laptop.websocket_connect(f"/ws/tables/{table['id']}") as mine,
        ):
            assert stolen.receive_json()["table"]["you"] == 0
            assert mine.receive_json()["table"]["you"] == 0
            changed = laptop.post(
                "/api/password",
                json={"current": PASSWORD, "new": "battery staple"},
                headers=headers,
            )
            assert changed.status_code == 204
            assert closed_code(stolen) == 4401
            mine.send_json({"type": "ping"})
            assert mine.receive_json() == {"type": "pong"}
        assert phone.get("/api/me").json() is None
        assert laptop.get("/api/me").json()["name"] == "ann"
    storage.close()


def test_a_message_that_crosses_the_close_is_dropped_quietly(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A client's message can be on its way when the server closes the socket (the
    session ended, the client was too slow). The review found the server answering it
    on the closed socket: the handler died with "Cannot call send once a close message
    has been sent" and a traceback in the logs. Such a message must be dropped."""
    caplog.set_level(logging.INFO)
    headers = guest(client)
    table = new_table(client, headers, contribution=None)
    with client.websocket_connect(f"/ws/tables/{table['id']}") as socket:
        socket.receive_json()
        assert client.post("/api/logout", headers=headers).status_code == 204
        assert closed_code(socket) == 4401
        socket.send_json({"type": "ping"})  # sent before the client saw the close
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]


# -- a new session id at every sign-in --------------------------------------------------


def test_registering_a_guest_changes_the_session_cookie(client: TestClient) -> None:
    """The review registered a guest and found the guest's cookie still signed in to
    the new account (session fixation). Registration now starts a new session."""
    guest(client, "visitor")
    old = client.cookies[COOKIE]
    me = register(client, "ann")
    assert me.status_code == 200 and me.json()["guest"] is False
    new = client.cookies[COOKIE]
    assert new != old
    assert me_with_cookie(client.app, old) is None  # type: ignore[arg-type]
    assert me_with_cookie(client.app, new)["name"] == "ann"  # type: ignore[arg-type]


def test_signing_in_from_a_session_changes_the_session_cookie(client: TestClient) -> None:
    """A login from a browser that already has a session (say a cookie planted by
    someone else) gets a new session; the old cookie signs nobody in."""
    assert register(client, "ann").status_code == 200
    client.cookies.clear()
    guest(client, "visitor")
    old = client.cookies[COOKIE]
    assert login(client, "ann").status_code == 200
    new = client.cookies[COOKIE]
    assert new != old
    assert me_with_cookie(client.app, old) is None  # type: ignore[arg-type]
    assert me_with_cookie(client.app, new)["name"] == "ann"  # type: ignore[arg-type]
    # Signing in again, already signed in to the account, renews it too.
    assert login(client, "ann").status_code == 200
    assert client.cookies[COOKIE] != new
    assert me_with_cookie(client.app, new) is None  # type: ignore[arg-type]


def test_a_new_guest_changes_the_session_cookie(client: TestClient) -> None:
    guest(client, "first")
    old = client.cookies[COOKIE]
    guest(client, "second")
    new = client.cookies[COOKIE]
    assert new != old
    assert me_with_cookie(client.app, old) is None  # type: ignore[arg-type]
    assert me_with_cookie(client.app, new)["name"] == "second"  # type: ignore[arg-type]


# -- the sign-in back-off ---------------------------------------------------------------


def test_wrong_passwords_back_off_per_account_and_address(
    behind_proxy: TestClient, throttle_clock: Clock
) -> None:
    """The review found no limit on guessing one account's password. Now wrong
    passwords for one account from one address back off (429 with Retry-After) after
    the free ones, but only from that address: the owner elsewhere signs in, so an
    attacker cannot lock the victim out. The back-off ends when its time has passed."""
    client = behind_proxy
    assert register(client, "victim").status_code == 200
    client.cookies.clear()
    attacker, owner = "203.0.113.7", "198.51.100.20"
    for _ in range(FREE_PER_USER + 1):
        assert refusal(login(client, "victim", "guess 1234", attacker)) == (401, "bad_credentials")
    blocked = login(client, "victim", PASSWORD, attacker)  # even the right password waits
    assert refusal(blocked) == (429, "rate_limited")
    assert int(blocked.headers["Retry-After"]) >= 1
    # The same name however written is the same account.
    assert refusal(login(client, "VICTIM", PASSWORD, attacker)) == (429, "rate_limited")
    # The owner, from their own address, is not locked out.
    assert login(client, "victim", PASSWORD, owner).status_code == 200
    # Once the back-off has passed, the attacker's address may try again.
    throttle_clock.now += int(blocked.headers["Retry-After"]) + 0.5
    assert refusal(login(client, "victim", "guess 5678", attacker)) == (401, "bad_credentials")
    # ... and the next wrong password doubles the wait.
    again = login(client, "victim", PASSWORD, attacker)
    assert refusal(again) == (429, "rate_limited")
    assert int(again.headers["Retry-After"]) >= 2


def test_a_flood_of_names_backs_off_its_address_and_keeps_the_victims_back_off(
    behind_proxy: TestClient,
) -> None:
    """The review flooded the sign-in with made-up names from one address. That address
    must back off, and the flood must not reset or drop the back-off of a victim
    account being guessed from another address."""
    client = behind_proxy
    assert register(client, "victim").status_code == 200
    client.cookies.clear()
    guesser, flooder, owner = "203.0.113.7", "203.0.113.99", "198.51.100.20"
    for _ in range(FREE_PER_USER + 1):
        login(client, "victim", "guess 1234", guesser)
    assert refusal(login(client, "victim", PASSWORD, guesser)) == (429, "rate_limited")
    statuses = [login(client, f"nobody{n}", "whatever 1", flooder).status_code for n in range(300)]
    assert set(statuses) == {401, 429}
    first_refused = statuses.index(429)
    assert first_refused <= FREE_PER_ADDRESS + 1  # the flooder's address backed off...
    assert set(statuses[first_refused:]) == {429}  # ... and stayed so
    # The victim's back-off from the guesser's address is still there.
    assert refusal(login(client, "victim", PASSWORD, guesser)) == (429, "rate_limited")
    assert login(client, "victim", PASSWORD, owner).status_code == 200


def test_a_throttle_full_of_flood_drops_no_back_off(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Failures from many addresses fill the throttle's memory: new attempts are
    refused, but the victim's back-off is never dropped to make room."""
    clock = Clock()
    small = functools.partial(LoginThrottle, clock=clock, max_entries=40)
    monkeypatch.setattr(app_module, "LoginThrottle", small)
    storage = Storage(sqlite_url)
    app = create_app(make_settings(sqlite_url, tmp_path, trust_proxy=True), storage)
    with TestClient(app) as client:
        assert register(client, "victim").status_code == 200
        client.cookies.clear()
        guesser = "203.0.113.7"
        for _ in range(FREE_PER_USER + 1):
            login(client, "victim", "guess 1234", guesser)
        assert refusal(login(client, "victim", PASSWORD, guesser)) == (429, "rate_limited")
        statuses = [
            login(client, f"nobody{n}", "whatever 1", f"10.0.{n // 250}.{n % 250}").status_code
            for n in range(100)
        ]
        assert statuses.count(429) > 0  # the memory filled up
        assert refusal(login(client, "victim", PASSWORD, guesser)) == (429, "rate_limited")
    storage.close()


def test_unknown_and_known_names_cost_one_argon2_verification(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The review timed sign-ins: an unknown name was answered at once, a known one
    after an argon2 verification, which told which names exist. Both verify once now."""
    assert register(client, "ann").status_code == 200
    client.cookies.clear()
    calls: list[str] = []
    original = PasswordHasher.verify

    def counting(self: PasswordHasher, hash: str | bytes, password: str | bytes) -> bool:
        calls.append(str(password))
        return original(self, hash, password)

    monkeypatch.setattr(PasswordHasher, "verify", counting)
    assert refusal(login(client, "nobody", "whatever 1")) == (401, "bad_credentials")
    assert calls == ["whatever 1"]
    assert refusal(login(client, "ann", "wrong horse")) == (401, "bad_credentials")
    assert calls == ["whatever 1", "wrong horse"]
    assert login(client, "ann", PASSWORD).status_code == 200
    assert len(calls) == 3


# -- usernames --------------------------------------------------------------------------


def player_count(storage: Storage) -> int:
    with storage.engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(PlayerRow)).scalar_one())


def test_usernames_that_look_alike_cannot_both_register(database_url: str, tmp_path: Path) -> None:
    """The review registered "ANN", "ａｎｎ" (full-width) and "аnn" (Cyrillic а) beside
    "ann": four accounts nobody can tell apart. Names are now compared by their UTS #39
    key (409 username_taken), and a name mixing scripts is refused as invalid."""
    app, storage = app_on(database_url, tmp_path)
    with TestClient(app) as client:
        assert register(client, "ann").status_code == 200
        assert register(client, "ape").status_code == 200
        count = player_count(storage)
        for name in ("ANN", "Ann", "\uff41\uff4e\uff4e", "\u0430\u0440\u0435"):  # ... "аре"
            client.cookies.clear()
            assert refusal(register(client, name)) == (409, "username_taken"), name
        client.cookies.clear()
        # "аnn" mixes a Cyrillic а with Latin n: refused before it is even compared.
        mixed = register(client, "\u0430nn")
        assert refusal(mixed) == (422, "invalid_username")
        assert "mixes scripts" in mixed.json()["error"]["message"]
        assert player_count(storage) == count
    storage.close()


def test_invisible_and_mixed_script_usernames_are_refused(client: TestClient) -> None:
    for name in ("an\u200dn", "a\u200bnn", "\u200eann", "ann\u0430", "bob\u03bf"):
        response = register(client, name)
        assert refusal(response) == (422, "invalid_username"), name
        assert repr(name) in response.json()["error"]["message"]


def test_persian_and_arabic_usernames_register(database_url: str, tmp_path: Path) -> None:
    app, storage = app_on(database_url, tmp_path)
    with TestClient(app) as client:
        for name in ("نرد_باز", "بازیکن۱۲", "لاعب", "لاعب١٢"):
            client.cookies.clear()
            me = register(client, name)
            assert me.status_code == 200, (name, me.text)
            assert me.json()["name"] == name
            client.cookies.clear()
            assert login(client, name).json()["name"] == name
        # Persian yeh and Arabic yeh: one name however it was typed.
        client.cookies.clear()
        assert register(client, "علی").status_code == 200
        client.cookies.clear()
        assert refusal(register(client, "علي")) == (409, "username_taken")
    storage.close()


def test_login_is_case_insensitive(client: TestClient) -> None:
    assert register(client, "ann").status_code == 200
    client.cookies.clear()
    for written in ("ANN", "Ann", "\uff41\uff4e\uff4e"):
        me = login(client, written)
        assert me.status_code == 200, (written, me.text)
        assert me.json()["name"] == "ann"
        client.cookies.clear()


def test_a_guest_who_signs_in_keeps_their_games(client: TestClient) -> None:
    """Tried on 2026-12-05: a guest who signed in to an existing account lost the game
    in progress (and every game before it)."""
    from tests.server.helpers import act, play_until, simple_command

    assert register(client, "Nadia").status_code == 200
    client.post("/api/logout", headers={"X-CSRF-Token": client.get("/api/me").json()["csrf_token"]})
    client.cookies.clear()
    headers = guest(client, "visitor")
    finished = new_table(client, headers, match_length=1)
    finished = act(client, finished["id"], headers, {"action": "resign", "points": 3})
    assert finished["status"] == "finished"
    playing = new_table(client, headers, match_length=5)
    playing = play_until(client, playing, headers, actions=3)
    assert playing["status"] == "playing"
    seq = playing["seq"]

    signed = client.post("/api/login", json={"username": "Nadia", "password": PASSWORD})
    assert signed.status_code == 200 and signed.json()["guest"] is False
    headers = {"X-CSRF-Token": signed.json()["csrf_token"]}
    mine = {t["id"] for t in client.get("/api/my-tables").json()}
    assert {finished["id"], playing["id"]} <= mine
    table = client.get(f"/api/tables/{playing['id']}").json()
    assert table["you"] == 0 and table["seats"][0]["name"] == "Nadia"
    assert table["seq"] == seq + 1  # the claim is in the table's log
    # The game goes on, in the account's seat, and its record carries the account's name.
    if table["you_act"]:
        table = act(client, table["id"], headers, simple_command(table))
    assert table["seq"] > seq + 1 or not table["you_act"]
    record = client.get(f"/api/tables/{playing['id']}/record.mat").text
    assert "Nadia" in record and "visitor" not in record
    assert client.get(f"/api/tables/{finished['id']}").json()["you"] == 0
