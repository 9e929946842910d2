"""Matchmaking (docs/server.md): seeks paired automatically, rating ranges, challenges
by name, rematches, the tables in play listed for spectators."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from tests.server.conftest import app_on
from tests.server.helpers import act, guest, join, new_table, simple_command
from tests.server.test_ratings import error_of, register


def _seek(client: TestClient, headers: dict[str, str], **body: Any) -> dict[str, Any]:
    response = client.post("/api/seeks", json=body, headers=headers)
    assert response.status_code == 201, response.text
    table: dict[str, Any] = response.json()
    return table


def test_compatible_seeks_are_paired(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob, TestClient(app) as cat:
        ann_h, bob_h, cat_h = guest(ann, "ann"), guest(bob, "bob"), guest(cat, "cat")
        waiting = _seek(ann, ann_h, match_length=5, time_control="blitz")
        assert waiting["status"] == "waiting" and waiting["seek"] is not None
        lobby = ann.get("/api/tables").json()
        assert [(t["id"], t["time_control"]["delay"]) for t in lobby] == [(waiting["id"], 10.0)]
        other = _seek(cat, cat_h, match_length=5, time_control="bullet")  # not the same
        assert other["id"] != waiting["id"] and other["status"] == "waiting"
        paired = _seek(bob, bob_h, match_length=5, time_control="blitz")
        assert paired["id"] == waiting["id"] and paired["you"] == 1
        assert paired["status"] == "seeding"  # both seated: the contributions are due
        assert [t["id"] for t in ann.get("/api/tables").json()] == [other["id"]]
        assert error_of(ann.post("/api/seeks", json={"match_length": 0}, headers=ann_h))[0] == 422
        bad = ann.post("/api/seeks", json={"min_rating": 1800, "max_rating": 1600}, headers=ann_h)
        assert error_of(bad) == (422, "invalid_seek")
    storage.close()


def test_a_seeks_rating_range_is_kept(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob:
        ann_h, bob_h = register(ann, "ann"), register(bob, "bob")
        picky = _seek(ann, ann_h, match_length=3, rated=True, min_rating=1600)
        # bob (1500) does not fit ann's range: his seek waits apart
        apart = _seek(bob, bob_h, match_length=3, rated=True)
        assert apart["id"] != picky["id"]
        joined = bob.post(f"/api/tables/{picky['id']}/join", json={}, headers=bob_h)
        assert error_of(joined) == (403, "rating_out_of_range")
        lobby = {t["id"]: t for t in ann.get("/api/tables").json()}
        assert lobby[picky["id"]]["host_rating"] == 1500.0
        assert lobby[picky["id"]]["seek"] == {"min_rating": 1600.0, "max_rating": None}
    storage.close()


def test_a_challenge_by_name(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob, TestClient(app) as cat:
        ann_h, bob_h, cat_h = register(ann, "ann"), register(bob, "bob"), register(cat, "cat")
        body = {"opponent": "person", "match_length": 3, "time_control": "standard"}
        sent = ann.post("/api/challenges", json={**body, "username": "bob"}, headers=ann_h)
        assert sent.status_code == 201, sent.text
        table = sent.json()
        assert table["challenged"] is not None and table["status"] == "waiting"
        assert ann.get("/api/tables").json() == []  # private: not in the lobby
        mine = bob.get("/api/challenges").json()
        assert [t["id"] for t in mine] == [table["id"]] and mine[0]["seats"][0]["name"] == "ann"
        assert cat.get("/api/challenges").json() == []
        taken = cat.post(f"/api/tables/{table['id']}/join", json={}, headers=cat_h)
        assert error_of(taken) == (403, "challenge_for_another")
        assert error_of(cat.post(f"/api/tables/{table['id']}/decline", headers=cat_h)) == (
            403,
            "not_challenged",
        )
        joined = bob.post(f"/api/tables/{table['id']}/join", json={}, headers=bob_h)
        assert joined.status_code == 200 and joined.json()["you"] == 1
        assert bob.get("/api/challenges").json() == []
        # declined: the table ends unplayed
        again = ann.post("/api/challenges", json={**body, "username": "cat"}, headers=ann_h)
        declined = cat.post(f"/api/tables/{again.json()['id']}/decline", headers=cat_h)
        assert declined.status_code == 200 and declined.json()["status"] == "finished"
        unknown = ann.post("/api/challenges", json={**body, "username": "nobody"}, headers=ann_h)
        assert error_of(unknown) == (404, "no_such_player")
        me = ann.post("/api/challenges", json={**body, "username": "ann"}, headers=ann_h)
        assert error_of(me) == (422, "invalid_challenge")
        computer = ann.post(
            "/api/challenges",
            json={**body, "opponent": "computer", "username": "bob"},
            headers=ann_h,
        )
        assert error_of(computer) == (422, "invalid_challenge")
    storage.close()


def _play_out(players: dict[int, tuple[TestClient, dict[str, str]]], tid: str) -> None:
    for _ in range(3000):
        state = players[0][0].get(f"/api/tables/{tid}").json()
        if state["status"] != "playing":
            return
        mover, headers = players[state["to_act"]]
        act(mover, tid, headers, simple_command(mover.get(f"/api/tables/{tid}").json()))
    raise AssertionError("the match did not end")


def test_a_rematch_is_offered_and_taken(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob, TestClient(app) as cat:
        ann_h, bob_h, cat_h = guest(ann, "ann"), guest(bob, "bob"), guest(cat, "cat")
        table = new_table(ann, ann_h, opponent="person", match_length=1, time_control="blitz")
        tid = table["id"]
        join(table, bob, bob_h)
        early = ann.post(f"/api/tables/{tid}/rematch", headers=ann_h)
        assert error_of(early) == (409, "not_finished")
        # live: a private table is not listed; a public one in play is
        assert ann.get("/api/live").json() == []
        _play_out({0: (ann, ann_h), 1: (bob, bob_h)}, tid)
        offer = ann.post(f"/api/tables/{tid}/rematch", headers=ann_h)
        assert offer.status_code == 201, offer.text
        offered = offer.json()
        assert offered["rematch_of"] == tid and offered["status"] == "waiting"
        assert offered["clock"]["control"]["delay"] == 10.0  # the same time control
        assert [t["id"] for t in bob.get("/api/challenges").json()] == [offered["id"]]
        assert error_of(cat.post(f"/api/tables/{tid}/rematch", headers=cat_h))[0] == 403
        taken = bob.post(f"/api/tables/{tid}/rematch", headers=bob_h).json()
        assert taken["id"] == offered["id"] and taken["you"] == 1
        # against the computer: a new table at once
        solo = new_table(ann, ann_h, level="beginner", match_length=1)
        from tests.server.helpers import play_until

        play_until(ann, solo, ann_h)
        again = ann.post(f"/api/tables/{solo['id']}/rematch", headers=ann_h).json()
        assert again["id"] != solo["id"] and again["seats"][1]["kind"] == "computer"
        # a public table in play is listed for spectators
        public = new_table(cat, cat_h, opponent="person", match_length=3, public=True)
        bob.post(f"/api/tables/{public['id']}/join", json={"contribution": "x"}, headers=bob_h)
        assert [t["id"] for t in cat.get("/api/live").json()] == [public["id"]]
    storage.close()
