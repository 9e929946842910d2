"""Rated matches at the server (docs/ratings.md): who may play them, the FIBS change
applied once when the match ends, whichever way it ends and whichever process ends
it, the profile, the leaderboard."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nard.engine import Level
from nard.match.rating import RatingState, rate_match
from nard.server.ratings import COMPUTER_RATINGS
from nard.server.storage import RatedSide, Storage
from tests.server.conftest import app_on
from tests.server.helpers import act, guest, new_table, play_until, simple_command


def register(client: TestClient, username: str) -> dict[str, str]:
    response = client.post(
        "/api/register", json={"username": username, "password": "correct horse battery"}
    )
    assert response.status_code == 200, response.text
    return {"X-CSRF-Token": response.json()["csrf_token"]}


def error_of(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def _play_out(players: dict[int, tuple[TestClient, dict[str, str]]], tid: str) -> dict[str, Any]:
    """Both seats act (simple commands) until the match ends."""
    for _ in range(3000):
        state: dict[str, Any] = players[0][0].get(f"/api/tables/{tid}").json()
        if state["status"] != "playing":
            return state
        mover, headers = players[state["to_act"]]
        act(mover, tid, headers, simple_command(mover.get(f"/api/tables/{tid}").json()))
    raise AssertionError("the match did not end")


def _rated_pair(
    ann: TestClient, bob: TestClient, length: int = 1
) -> tuple[str, dict[int, tuple[TestClient, dict[str, str]]]]:
    ann_h, bob_h = register(ann, "ann"), register(bob, "bob")
    table = new_table(ann, ann_h, opponent="person", match_length=length, rated=True)
    assert table["rated"] is True
    joined = bob.post(
        f"/api/tables/{table['id']}/join",
        json={"invite": table["invite"], "contribution": "bob"},
        headers=bob_h,
    )
    assert joined.status_code == 200, joined.text
    return table["id"], {0: (ann, ann_h), 1: (bob, bob_h)}


def test_a_rated_match_between_accounts_changes_both_ratings_once(
    database_url: str, tmp_path: Path
) -> None:
    app, storage = app_on(database_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob:
        tid, players = _rated_pair(ann, bob, length=3)
        end = _play_out(players, tid)
        winner, loser = ("ann", "bob") if end["winner"] == 0 else ("bob", "ann")
        expected = rate_match(RatingState(), RatingState(), 3)  # both new: +-4*5*sqrt(3)/2
        won = ann.get(f"/api/players/{winner}").json()
        lost = ann.get(f"/api/players/{loser}").json()
        assert won["rating"] == pytest.approx(expected.winner.rating, abs=0.01)
        assert lost["rating"] == pytest.approx(expected.loser.rating, abs=0.01)
        assert (won["experience"], won["rated_matches"], won["rated_wins"]) == (3, 1, 1)
        assert (lost["rank"], won["rank"]) == (2, 1)
        assert won["history"][0]["opponent"] == loser and won["history"][0]["won"] is True
        assert lost["history"][0]["rating_before"] == 1500.0
        board = ann.get("/api/leaderboard").json()
        assert [(e["rank"], e["username"]) for e in board] == [(1, winner), (2, loser)]
        # Rated once: another process's catch-up (or a second call) changes nothing.
        service = app.state.service
        assert asyncio.run(service.rate_unrated()) == 0
        assert storage.unrated_tables() == []
        again = ann.get(f"/api/players/{winner}").json()
        assert again["rating"] == won["rating"] and again["rated_matches"] == 1
    storage.close()


def test_who_may_play_a_rated_match(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob, TestClient(app) as gus:
        ann_h = register(ann, "ann")
        gus_h = guest(gus, "gus")
        body: dict[str, Any] = {"opponent": "person", "match_length": 3, "rated": True}
        refused = gus.post("/api/tables", json=body, headers=gus_h)
        assert error_of(refused) == (403, "account_required")
        money = ann.post("/api/tables", json={**body, "match_length": 0}, headers=ann_h)
        assert error_of(money) == (422, "unrated_kind")
        chouette = ann.post(
            "/api/tables", json={**body, "opponent": "chouette", "match_length": 0}, headers=ann_h
        )
        assert chouette.status_code == 422
        assert ann.post("/api/tables", json={**body, "rated": 1}, headers=ann_h).status_code == 422
        table = new_table(ann, ann_h, **body)
        join = gus.post(
            f"/api/tables/{table['id']}/join", json={"invite": table["invite"]}, headers=gus_h
        )
        assert error_of(join) == (403, "account_required")  # a guest cannot sit
        bob_h = register(bob, "bob")
        assert (
            bob.post(
                f"/api/tables/{table['id']}/join", json={"invite": table["invite"]}, headers=bob_h
            ).status_code
            == 200
        )
        assert error_of(ann.get("/api/players/nobody")) == (404, "no_such_player")
        assert ann.get("/api/leaderboard", params={"limit": 0}).status_code == 422
    storage.close()


def test_against_the_computer_only_the_person_moves(sqlite_url: str, tmp_path: Path) -> None:
    """The computer counts at its level's fixed rating; leaving the match loses it."""
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann:
        headers = register(ann, "ann")
        table = new_table(ann, headers, level="beginner", match_length=5, rated=True)
        table = play_until(ann, table, headers, actions=6)
        assert table["status"] == "playing"
        left = ann.post(f"/api/tables/{table['id']}/abandon", headers=headers)
        assert left.status_code == 200, left.text
        me = ann.get("/api/players/ann").json()
        fixed = COMPUTER_RATINGS[Level.BEGINNER]
        expected = rate_match(RatingState(fixed, 10**9), RatingState(), 5).loser
        assert me["rating"] == pytest.approx(expected.rating, abs=0.01)
        assert me["history"][0]["won"] is False
        assert me["history"][0]["opponent_rating"] == fixed
        assert ann.get("/api/leaderboard").json()[0]["username"] == "ann"  # no computer
        # An unrated game against the computer changes nothing.
        other = new_table(ann, headers, level="beginner", match_length=1)
        play_until(ann, other, headers)
        assert ann.get("/api/players/ann").json()["rated_matches"] == 1
    storage.close()


def test_a_match_left_unrated_by_a_dead_process_is_rated_at_the_next_start(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rating is written after the match's last action: a process dying between
    the two leaves the match finished and unrated; the next start rates it."""
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob:
        monkeypatch.setattr(Storage, "rate_match", _dies)
        tid, players = _rated_pair(ann, bob)
        _play_out(players, tid)
        assert ann.get("/api/players/ann").json()["rated_matches"] == 0
        assert storage.unrated_tables() == [tid]
    storage.close()
    monkeypatch.undo()
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann:  # the start's catch-up
        for _ in range(100):
            if ann.get("/api/players/ann").json()["rated_matches"]:
                break
            asyncio.run(asyncio.sleep(0.01))
        assert ann.get("/api/players/ann").json()["rated_matches"] == 1
        assert ann.get("/api/players/bob").json()["rated_matches"] == 1
        assert storage.unrated_tables() == []
    storage.close()


def _dies(*_: Any, **__: Any) -> Any:
    raise OSError("the process died here")


def test_two_processes_rating_one_match_rate_it_once(database_url: str, tmp_path: Path) -> None:
    """The rows' key: two storages (two processes) rating the same match at once."""
    app, storage = app_on(database_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob:
        tid, _ = _rated_pair(ann, bob)
        ids = [p["id"] for p in (ann.get("/api/me").json(), bob.get("/api/me").json())]
    other = Storage(database_url)
    try:
        win, lose = RatedSide(ids[0], "ann"), RatedSide(ids[1], "bob")
        first = storage.rate_match(tid, win, lose, 1)
        second = other.rate_match(tid, win, lose, 1)
        assert len(first) == 2 and second == []
        player = storage.player(ids[0])
        assert player is not None and player.rated_matches == 1
        assert player.rating == pytest.approx(1510.0)
    finally:
        other.close()
        storage.close()
