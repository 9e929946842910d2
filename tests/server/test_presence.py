"""Abandonment (docs/server.md): a player away from a match against a person longer
than the grace period lets the opponent claim it; a connected player cannot be
claimed against; a player who leaves a match loses it (rated as lost). On an injected
clock."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from tests.server.helpers import guest, join, new_table
from tests.server.test_clocks import Clock, _app, _online, _state
from tests.server.test_ratings import error_of, register


def test_an_away_player_loses_the_match_when_claimed(sqlite_url: str, tmp_path: Path) -> None:
    clock = Clock()
    app, storage = _app(sqlite_url, tmp_path, clock)
    with TestClient(app) as ann, TestClient(app) as bob:
        tid, players = _online(ann, bob, match_length=3)
        ann_h = players[0][1]
        seats = {s["seat"]: s for s in ann.get(f"/api/tables/{tid}/presence").json()["seats"]}
        assert seats[0]["connected"] and seats[1]["connected"]  # both just sat down
        clock.advance(30)  # nobody's socket is open: both look away now
        seats = {s["seat"]: s for s in ann.get(f"/api/tables/{tid}/presence").json()["seats"]}
        assert not seats[1]["connected"] and seats[1]["claimable_at"]
        early = ann.post(f"/api/tables/{tid}/claim", headers=ann_h)
        assert error_of(early) == (409, "not_away")  # away 30 s of the 60 s grace
        # Ann's page is open (her socket), Bob's is not
        with ann.websocket_connect(f"/ws/tables/{tid}") as socket:
            socket.receive_json()
            clock.advance(31)
            assert ann.portal is not None
            ann.portal.call(app.state.service.mark_present)
            bob_h = players[1][1]
            refused = bob.post(f"/api/tables/{tid}/claim", headers=bob_h)
            assert error_of(refused) == (409, "not_away")  # Ann is connected
            won = ann.post(f"/api/tables/{tid}/claim", headers=ann_h)
            assert won.status_code == 200, won.text
            end = won.json()
            assert (end["status"], end["timed_out"], end["forfeit"], end["winner"]) == (
                "finished",
                1,
                "disconnected",
                0,
            )
    storage.close()


def test_leaving_a_match_against_a_person_loses_it(sqlite_url: str, tmp_path: Path) -> None:
    clock = Clock()
    app, storage = _app(sqlite_url, tmp_path, clock)
    with TestClient(app) as ann, TestClient(app) as bob:
        ann_h, bob_h = register(ann, "ann"), register(bob, "bob")
        table = new_table(ann, ann_h, opponent="person", match_length=5, rated=True)
        join(table, bob, bob_h)
        left = bob.post(f"/api/tables/{table['id']}/abandon", headers=bob_h).json()
        assert (left["timed_out"], left["forfeit"], left["winner"]) == (1, "left", 0)
        assert bob.get("/api/players/bob").json()["history"][0]["won"] is False
        assert ann.get("/api/players/ann").json()["rating"] > 1500
        # a table that has not started is closed with end, not abandoned
        waiting = new_table(ann, ann_h, opponent="person", match_length=3)
        refused = ann.post(f"/api/tables/{waiting['id']}/abandon", headers=ann_h)
        assert error_of(refused)[0] == 409
        guest(TestClient(app), "x")
        assert _state(ann, table["id"])["status"] == "finished"
    storage.close()
