"""Time controls at the server (docs/clocks.md), on an injected clock: the reserves
charged from the server's times, kept across a restart, a player out of time losing
(by the opponent's flag, by the background check, or on their own late action), in
a match and in money play, and rated as such."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from nard.server.storage import Storage
from tests.server.conftest import app_on
from tests.server.helpers import act, guest, join, new_table, simple_command


class Clock:
    """The server's time, moved by the test (never real waiting)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


def _app(url: str, tmp_path: Path, clock: Clock) -> tuple[FastAPI, Storage]:
    return app_on(url, tmp_path, clock=clock)


@pytest.fixture
def clock() -> Clock:
    return Clock()


def _online(
    ann: TestClient, bob: TestClient, **settings: Any
) -> tuple[str, dict[int, tuple[TestClient, dict[str, str]]]]:
    ann_h, bob_h = guest(ann, "ann"), guest(bob, "bob")
    table = new_table(ann, ann_h, opponent="person", **settings)
    joined = bob.post(
        f"/api/tables/{table['id']}/join",
        json={"invite": table["invite"], "contribution": "bob"},
        headers=bob_h,
    )
    assert joined.status_code == 200, joined.text
    return table["id"], {0: (ann, ann_h), 1: (bob, bob_h)}


def _state(client: TestClient, tid: str) -> dict[str, Any]:
    state: dict[str, Any] = client.get(f"/api/tables/{tid}").json()
    return state


def test_the_reserve_pays_what_a_wait_takes_beyond_the_delay(
    database_url: str, tmp_path: Path, clock: Clock
) -> None:
    app, storage = _app(database_url, tmp_path, clock)
    with TestClient(app) as ann, TestClient(app) as bob:
        tid, players = _online(ann, bob, match_length=3, time_control="blitz")
        state = _state(ann, tid)
        c = state["clock"]
        assert c["control"] == {"delay": 10.0, "reserve": 60.0, "per_point": True}
        assert c["reserve_ms"] == [180_000, 180_000] and c["delay_ms"] == 10_000
        mover = c["running"]
        assert mover == state["to_act"] and c["started_ms"] == c["now_ms"]
        assert c["deadline_ms"] == c["started_ms"] + 10_000 + 180_000
        clock.advance(4)  # within the delay: free
        client, headers = players[mover]
        state = act(client, tid, headers, simple_command(_state(client, tid)))
        assert state["clock"]["reserve_ms"][mover] == 180_000
        # the next wait (same player to move, or the other to roll): 25 s, 15 s charged
        waiting = state["clock"]["running"]
        clock.advance(25)
        client, headers = players[waiting]
        state = act(client, tid, headers, simple_command(_state(client, tid)))
        assert state["clock"]["reserve_ms"][waiting] == 180_000 - 15_000
        kept = state["clock"]
    storage.close()
    # A restart: the clocks come back from the stored actions' times, exactly.
    app, storage = _app(database_url, tmp_path, clock)
    with TestClient(app) as ann:
        guest(ann, "carol")  # a spectator
        again = _state(ann, tid)["clock"]
        assert {k: again[k] for k in ("reserve_ms", "running", "started_ms", "deadline_ms")} == {
            k: kept[k] for k in ("reserve_ms", "running", "started_ms", "deadline_ms")
        }
    storage.close()


def test_out_of_time_loses_the_match(sqlite_url: str, tmp_path: Path, clock: Clock) -> None:
    """The opponent's page flags at the deadline; before it, the flag changes nothing;
    the late player's own action is refused and ends the match."""
    app, storage = _app(sqlite_url, tmp_path, clock)
    with TestClient(app) as ann, TestClient(app) as bob:
        tid, players = _online(
            ann, bob, match_length=5, time_control={"delay": 2, "reserve": 3, "per_point": False}
        )
        late = _state(ann, tid)["to_act"]
        other_client, other_h = players[1 - late]
        clock.advance(4.9)  # 2 s delay + 3 s reserve: not yet
        early = other_client.post(f"/api/tables/{tid}/flag", headers=other_h)
        assert early.status_code == 200 and early.json()["status"] == "playing"
        clock.advance(0.1)
        flagged = other_client.post(f"/api/tables/{tid}/flag", headers=other_h).json()
        assert flagged["status"] == "finished" and flagged["timed_out"] == late
        assert flagged["winner"] == 1 - late and flagged["clock"]["reserve_ms"][late] <= 0
        assert flagged["server_seed"]  # the match is over: the seed is revealed
        client, headers = players[late]
        refused = client.post(
            f"/api/tables/{tid}/actions", json={"action": "roll"}, headers=headers
        )
        assert refused.status_code == 409
    storage.close()


def test_a_late_action_is_refused_and_the_background_check_ends_idle_tables(
    sqlite_url: str, tmp_path: Path, clock: Clock
) -> None:
    app, storage = _app(sqlite_url, tmp_path, clock)
    with TestClient(app) as ann, TestClient(app) as bob:
        tid, players = _online(ann, bob, match_length=1, time_control="bullet")
        late = _state(ann, tid)["to_act"]
        client, headers = players[late]
        command = simple_command(_state(client, tid))
        clock.advance(6 + 30 + 0.001)
        refused = client.post(f"/api/tables/{tid}/actions", json=command, headers=headers)
        assert refused.status_code == 409
        assert refused.json()["error"]["code"] == "out_of_time"
        assert _state(ann, tid)["timed_out"] == late
        # another table, nobody asks: the server's own check ends it
        tid2, _ = _online(TestClient(app), TestClient(app), match_length=1, time_control="bullet")
        clock.advance(37)
        service = app.state.service
        assert ann.portal is not None
        ended = ann.portal.call(service.enforce_clocks)
        assert ended == [tid2]
        assert _state(ann, tid2)["status"] == "finished"
    storage.close()


def test_money_play_loses_the_game_at_the_cube(
    sqlite_url: str, tmp_path: Path, clock: Clock
) -> None:
    """A gammon when the player out of time has borne off nothing; the session ends."""
    app, storage = _app(sqlite_url, tmp_path, clock)
    with TestClient(app) as ann, TestClient(app) as bob:
        tid, players = _online(ann, bob, match_length=0, time_control="blitz")
        late = _state(ann, tid)["to_act"]
        clock.advance(10 + 60 + 1)
        other, other_h = players[1 - late]
        end = other.post(f"/api/tables/{tid}/flag", headers=other_h).json()
        assert end["status"] == "finished" and end["timed_out"] == late
        result = end["results"][-1]
        assert result["points"] == 2, result  # nothing borne off: a gammon at cube 1
    storage.close()


def test_bad_time_controls_are_refused(sqlite_url: str, tmp_path: Path, clock: Clock) -> None:
    app, storage = _app(sqlite_url, tmp_path, clock)
    with TestClient(app) as ann:
        headers = guest(ann)
        for bad in (
            "lightning",
            {"delay": -1, "reserve": 10},
            {"delay": 1, "reserve": 10, "extra": 1},
            {"delay": 0, "reserve": 0},
            {"delay": "5", "reserve": 10},
            {"delay": 5, "reserve": 1e9},
        ):
            response = ann.post(
                "/api/tables",
                json={"opponent": "person", "match_length": 3, "time_control": bad},
                headers=headers,
            )
            assert response.status_code == 422, (bad, response.text)
        chouette = ann.post(
            "/api/tables",
            json={"opponent": "chouette", "match_length": 0, "time_control": "blitz"},
            headers=headers,
        )
        assert chouette.status_code == 422
    storage.close()


def test_a_rated_match_lost_on_time_is_rated_as_lost(
    sqlite_url: str, tmp_path: Path, clock: Clock
) -> None:
    from tests.server.test_ratings import register

    app, storage = _app(sqlite_url, tmp_path, clock)
    with TestClient(app) as ann, TestClient(app) as bob:
        ann_h, bob_h = register(ann, "ann"), register(bob, "bob")
        table = new_table(
            ann, ann_h, opponent="person", match_length=7, rated=True, time_control="bullet"
        )
        join(table, bob, bob_h)
        late = _state(ann, table["id"])["to_act"]
        clock.advance(6 + 7 * 30 + 1)
        assert ann.portal is not None
        ann.portal.call(app.state.service.enforce_clocks)
        names = ("ann", "bob")
        loser = ann.get(f"/api/players/{names[late]}").json()
        winner = ann.get(f"/api/players/{names[1 - late]}").json()
        assert loser["history"][0]["won"] is False and winner["history"][0]["won"] is True
        assert winner["rating"] > 1500 > loser["rating"]
    storage.close()
