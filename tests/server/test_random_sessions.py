"""Random sessions: three people using the API at once, in an order no test wrote.

Two registered players and a guest create tables of every kind (against the
computer, money and match; against each other, timed and rated; chouettes with
and without computers), contribute to the dice, join, start, play (mostly legal
actions, sometimes not, sometimes with a stale sequence number), double,
resign, end, abandon, ask for the next game, rematch, chat, and read records,
hints and replays, chosen by a seeded generator, while the server's clock
(moved by the test, never waited for) runs out delays, reserves and the away
grace. Whatever they do, no request is answered with a server error and nothing
is logged as one; every table stays readable by everyone, and a restarted
server rebuilds each table from its log to the same state. Driving the API at
random (so, by its schema and by random WebSocket frames) found three faults
that fixed tests had missed: an action between two money games (an assertion),
a chouette whose members all passed the box's double (every view of the table
failed, for good), and a name with a NUL in a path (PostgreSQL).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nard.server.app import create_app
from nard.server.storage import Storage
from tests.server.conftest import make_settings, seeded
from tests.server.test_clocks import Clock

PLAYERS = ("ann", "bob", "cem")
ACTIONS = ("roll", "double", "take", "pass", "beaver", "raccoon", "accept", "reject")


class Session:
    """The three people, the tables they made, and what went wrong.

    The people share one client, so that the app runs on one event loop as it does
    when served (a test client each would give each its own loop, and a request
    waiting on another loop's work would wait for ever): each request carries its
    sender's session cookie and CSRF token, and the client keeps no cookie."""

    def __init__(self, client: TestClient, rng: random.Random, clock: Clock | None = None) -> None:
        self.client = client
        self.rng = rng
        self.clock = clock
        self.cookies: dict[str, str] = {}
        self.headers: dict[str, dict[str, str]] = {}
        self.tables: list[str] = []
        self.faults: list[str] = []
        for name in PLAYERS:
            self.cookies[name] = ""
            self.headers[name] = {}
            if name == "cem":
                response = self.send(name, "POST", "/api/guest", json={"name": name})
            else:
                body = {"username": f"{name}_r", "password": "a long password"}
                response = self.send(name, "POST", "/api/register", json=body)
            assert response.status_code == 200, response.text
            self.headers[name] = {"X-CSRF-Token": response.json()["csrf_token"]}

    def send(self, who: str, method: str, path: str, **kwargs: Any) -> Any:
        self.client.cookies.clear()
        headers = dict(self.headers[who])
        if self.cookies[who]:
            headers["Cookie"] = f"nard_session={self.cookies[who]}"
        response = self.client.request(method, path, headers=headers, **kwargs)
        given = response.cookies.get("nard_session")
        if given:
            self.cookies[who] = given
        self.client.cookies.clear()
        if response.status_code >= 500:
            self.faults.append(f"{who} {method} {path} {kwargs}: {response.text[:200]}")
        return response

    def view(self, who: str, table_id: str) -> dict[str, Any] | None:
        response = self.send(who, "GET", f"/api/tables/{table_id}")
        if response.status_code != 200:
            return None
        seen: dict[str, Any] = response.json()
        return seen

    def some_table(self) -> str:
        if self.tables and self.rng.random() < 0.95:
            return self.rng.choice(self.tables[-12:])
        return "no-such-table"

    # -- what people do ----------------------------------------------------------------
    def create(self, who: str) -> None:
        rng = self.rng
        kind = rng.choice(["computer", "computer", "person", "chouette"])
        body: dict[str, Any] = {"opponent": kind, "match_length": rng.choice([0, 0, 1, 3])}
        if kind == "chouette":
            body |= {"match_length": 0, "players": rng.choice([3, 4]), "computers": 0}
            body["computers"] = rng.choice([0, 1, body["players"] - 1])
        for option in ("jacoby", "beavers", "raccoons", "holland", "crawford", "cube"):
            if rng.random() < 0.15:
                body[option] = rng.random() < 0.5
        if kind != "chouette" and rng.random() < 0.3:
            body["time_control"] = rng.choice(
                ["bullet", "blitz", "standard", {"delay": 1, "reserve": 2}]
            )
        if kind == "person" and who != "cem" and rng.random() < 0.3:
            body["rated"] = True
        response = self.send(who, "POST", "/api/tables", json=body)
        if response.status_code != 201:
            return
        table = response.json()
        self.tables.append(table["id"])
        self.send(who, "POST", f"/api/tables/{table['id']}/seed", json={"contribution": who})
        others = [n for n in PLAYERS if n != who]
        if table.get("invite"):
            for other in rng.sample(others, rng.choice([1, 2])):
                self.send(
                    other,
                    "POST",
                    f"/api/tables/{table['id']}/join",
                    json={"invite": table["invite"], "contribution": other},
                )
            if rng.random() < 0.3:
                self.send(who, "POST", f"/api/tables/{table['id']}/start")

    def act(self, who: str) -> None:
        """Mostly a legal action by whoever the table waits for."""
        rng = self.rng
        table_id = self.some_table()
        for name in rng.sample(PLAYERS, 3):
            seen = self.view(name, table_id)
            if seen is not None and seen.get("you_act"):
                who = name
                break
        seen = self.view(who, table_id)
        game = (seen or {}).get("game")
        if seen is not None and game and rng.random() < 0.85:
            action = rng.choice(game["legal_actions"] or ["roll"])
            body: dict[str, Any] = {"action": action}
            if action == "play" and game["legal_plays"]:
                body["play"] = rng.choice(game["legal_plays"])["play"]
            if action == "resign":
                body["points"] = rng.choice([1, 2, 3])
            if rng.random() < 0.15:
                body["seq"] = seen["seq"] + rng.choice([-1, 0, 1])
        else:
            body = {"action": rng.choice(ACTIONS)}
        self.send(who, "POST", f"/api/tables/{table_id}/actions", json=body)

    def table_step(self, who: str) -> None:
        step = self.rng.choice(
            ["next-game", "next-game", "end", "abandon", "leave", "flag", "claim", "rematch"]
        )
        response = self.send(who, "POST", f"/api/tables/{self.some_table()}/{step}")
        if step == "rematch" and response.status_code == 201:
            self.tables.append(response.json()["id"])

    def wait(self, _who: str) -> None:
        """Time passes (on the clock the test moves): delays, reserves, the away grace."""
        if self.clock is not None:
            self.clock.advance(self.rng.choice([1, 5, 20, 70, 400, 4000]))

    def look(self, who: str) -> None:
        table_id = self.some_table()
        path = self.rng.choice(
            ["hint", "replay", "presence", "chat", "record.json", "record.mat", "record.sgf"]
        )
        self.send(who, "GET", f"/api/tables/{table_id}/{path}")
        if self.rng.random() < 0.2:
            self.send(who, "POST", f"/api/tables/{table_id}/chat", json={"text": "سلام"})


def run_session(client: TestClient, seed: int, steps: int, clock: Clock | None = None) -> Session:
    rng = random.Random(seed)
    session = Session(client, rng, clock)
    act: Callable[[str], None] = session.act
    moves: list[Callable[[str], None]] = [act] * 12
    moves += [session.create, session.create, session.table_step, session.look, session.wait]
    for _ in range(steps):
        rng.choice(moves)(rng.choice(PLAYERS))
    return session


@pytest.mark.parametrize("seed", [5, 11])
def test_random_sessions_never_fail_and_every_table_survives_a_restart(
    database_url: str, tmp_path: Path, seed: int, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()

    def app_at(seed: int) -> tuple[Any, Storage]:
        storage = Storage(database_url)
        settings = make_settings(database_url, tmp_path)
        options = {"clock": clock}
        return create_app(
            settings, storage, server_seeds=seeded(seed), service_options=options
        ), storage

    app, storage = app_at(seed)
    with TestClient(app, raise_server_exceptions=False) as client, caplog.at_level(logging.WARNING):
        session = run_session(client, seed, steps=700, clock=clock)
        tables = session.tables
        # A table whose clock ran out at the session's last moves is ended by the
        # server's clock check, every half second of real time: before the states are
        # taken, or else once one was taken and before the server stopped, which the
        # restarted server then showed (a timed table "playing" at 4 actions, then
        # "finished" at 5: once in a CI run on 2026-12-07). The check now runs first.
        assert client.portal is not None
        client.portal.call(app.state.service.enforce_clocks)
        states = {}
        for table_id in tables:
            for name in PLAYERS:
                seen = session.view(name, table_id)
                assert seen is not None, (name, table_id)
            states[table_id] = session.view("ann", table_id)
    storage.close()
    assert session.faults == []
    errors = [
        f"{r.name}: {r.getMessage()}"
        for r in caplog.records
        if r.name.split(".")[0] in ("nard", "uvicorn", "fastapi", "starlette")
        and (r.levelno >= logging.ERROR or r.exc_info)
    ]
    assert errors == []
    assert len(tables) >= 20
    played = [s for s in states.values() if s is not None and s["seq"] > 10]
    assert len(played) >= 5  # games were played, not only tables made
    app, storage = app_at(seed + 1)
    with TestClient(app) as client:
        for table_id, before in states.items():
            after = client.get(f"/api/tables/{table_id}").json()
            assert before is not None
            for key in ("seq", "status", "score", "game_number", "roles"):
                assert after.get(key) == before.get(key), (table_id, key)
    storage.close()
