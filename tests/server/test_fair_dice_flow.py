"""The fair-dice promise (docs/fair-dice.md, seed 004): the server commits to its seed
before anything else; each seated person's contribution comes after, in its own
request; no die is rolled until all of them are in (or their deadline passed, which
the record states); the seed is revealed only when the table has finished.

The review found the client seed given in the request that created the table (before
the commitment existed), and picked by the server when empty (the page's default).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from nard.match.verify import verify_record
from nard.notation.json_record import read_json
from nard.server import create_app
from nard.server.storage import Storage
from tests.server.conftest import make_settings, seeded
from tests.server.helpers import (
    act,
    contribute,
    guest,
    new_table,
    play_until,
    simple_command,
)


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def error(response: Any) -> tuple[int, str]:
    return response.status_code, response.json()["error"]["code"]


def test_the_client_seed_is_not_taken_with_the_new_table(client: TestClient) -> None:
    headers = guest(client)
    body = {"opponent": "computer", "match_length": 1, "client_seed": "chosen before"}
    refused = client.post("/api/tables", json=body, headers=headers)
    assert error(refused) == (422, "invalid_request")
    assert "POST /api/tables/{id}/seed" in refused.json()["error"]["message"]


def test_nothing_is_rolled_before_the_contribution(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, match_length=3, contribution=None)
    # The commitment is there; no client seed, no game, no die.
    assert table["status"] == "seeding" and len(table["dice_commitment"]) == 64
    assert table["client_seed"] is None and table["game"] is None and table["server_seed"] is None
    assert table["you_contribute"] is True
    assert table["contributions"] == [{"seat": 0, "given": False, "seed": None, "source": None}]
    tid = table["id"]
    assert error(
        client.post(f"/api/tables/{tid}/actions", json={"action": "roll"}, headers=headers)
    ) == (
        409,
        "table_closed",
    )
    assert client.get(f"/api/tables/{tid}/record.json").json()["dice"]["log"] == []
    started = contribute(client, tid, headers, "ann's own words")
    assert started["status"] == "playing" and started["client_seed"] == "ann's own words"
    assert started["dice_commitment"] == table["dice_commitment"]
    assert started["you_contribute"] is False and started["game"] is not None
    again = client.post(f"/api/tables/{tid}/seed", json={"contribution": "x"}, headers=headers)
    assert error(again) == (409, "contribution_closed")


def test_bad_contributions_are_refused_and_change_nothing(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, contribution=None)
    tid = table["id"]
    for bad in ("", "a\x00b", "line\nbreak", "x" * 65, 7, None, True):
        response = client.post(
            f"/api/tables/{tid}/seed", json={"contribution": bad}, headers=headers
        )
        assert error(response) == (422, "invalid_request"), (bad, response.text)
    assert client.get(f"/api/tables/{tid}").json()["seq"] == table["seq"]


def test_every_seated_person_contributes_and_the_record_says_so(
    sqlite_url: str, tmp_path: Path
) -> None:
    app, storage = create_app(make_settings(sqlite_url, tmp_path), Storage(sqlite_url)), None
    with TestClient(app) as ann, TestClient(app) as bob:
        ann_h, bob_h = guest(ann, "ann"), guest(bob, "bob")
        table = new_table(ann, ann_h, opponent="person", match_length=1, contribution="ann-7f3a")
        assert table["status"] == "waiting"
        tid = table["id"]
        joined = bob.post(
            f"/api/tables/{tid}/join", json={"invite": table["invite"]}, headers=bob_h
        )
        assert joined.json()["status"] == "seeding" and joined.json()["you_contribute"] is True
        # Ann cannot start without Bob before the deadline.
        early = ann.post(f"/api/tables/{tid}/start", headers=ann_h)
        assert error(early) == (409, "contributions_pending")
        started = contribute(bob, tid, bob_h, "bob-19c2")
        assert started["status"] == "playing"
        assert started["client_seed"] == "ann-7f3a\nbob-19c2"
        players = {0: (ann, ann_h), 1: (bob, bob_h)}
        state = started
        while state["status"] == "playing":
            client, headers = players[state["to_act"]]
            state = play_until(client, client.get(f"/api/tables/{tid}").json(), headers, actions=1)
        record, dice = read_json(ann.get(f"/api/tables/{tid}/record.json").text)
        assert dice is not None and dice.server_seed is not None
        assert [(c.seat, c.player, c.seed, c.source) for c in dice.contributions] == [
            (0, "ann", "ann-7f3a", "player"),
            (1, "bob", "bob-19c2", "player"),
        ]
        assert verify_record(record, dice).ok
    assert storage is None


def test_a_missing_contribution_times_out_and_the_record_states_it(
    sqlite_url: str, tmp_path: Path
) -> None:
    clock = Clock()
    settings = make_settings(sqlite_url, tmp_path)
    app = create_app(
        settings, Storage(sqlite_url), server_seeds=seeded(3), service_options={"clock": clock}
    )
    with TestClient(app) as ann, TestClient(app) as bob:
        ann_h, bob_h = guest(ann, "ann"), guest(bob, "bob")
        table = new_table(ann, ann_h, opponent="person", match_length=1, contribution="ann")
        tid = table["id"]
        joined = bob.post(
            f"/api/tables/{tid}/join", json={"invite": table["invite"]}, headers=bob_h
        ).json()
        deadline = datetime.fromisoformat(joined["seed_deadline"])
        assert deadline == clock.now + timedelta(seconds=settings.contribution_timeout)
        clock.now = deadline - timedelta(seconds=1)
        assert error(ann.post(f"/api/tables/{tid}/start", headers=ann_h)) == (
            409,
            "contributions_pending",
        )
        clock.now = deadline + timedelta(seconds=1)
        started = ann.post(f"/api/tables/{tid}/start", headers=ann_h).json()
        assert started["status"] == "playing" and started["client_seed"] == "ann\n"
        assert started["contributions"][1] == {
            "seat": 1,
            "given": True,
            "seed": "",
            "source": "timeout",
        }
        late = bob.post(f"/api/tables/{tid}/seed", json={"contribution": "bob"}, headers=bob_h)
        assert error(late) == (409, "contribution_closed")
        dice = ann.get(f"/api/tables/{tid}/record.json").json()["dice"]
        assert dice["contributions"][1]["source"] == "timeout"


def test_leaving_before_the_first_roll_frees_the_seat(client: TestClient) -> None:
    headers = guest(client, "ann")
    table = new_table(client, headers, opponent="person", public=True, contribution="ann")
    tid = table["id"]
    app = client.app
    with TestClient(app) as bob:
        bob_h = guest(bob, "bob")
        bob.post(f"/api/tables/{tid}/join", json={"contribution": "bob"}, headers=bob_h)
        # Bob's contribution made the table start: too late to leave.
        assert error(bob.post(f"/api/tables/{tid}/leave", headers=bob_h)) == (409, "table_closed")
    table = new_table(client, headers, opponent="person", public=True, contribution="ann")
    tid = table["id"]
    with TestClient(app) as cem:
        cem_h = guest(cem, "cem")
        assert (
            cem.post(f"/api/tables/{tid}/join", json={}, headers=cem_h).json()["status"]
            == "seeding"
        )
        left = cem.post(f"/api/tables/{tid}/leave", headers=cem_h).json()
        assert left["status"] == "waiting" and left["seats"][1]["kind"] == "open"
        assert [t["id"] for t in client.get("/api/tables").json()] == [tid]


def test_a_26_point_match_against_the_computer(client: TestClient) -> None:
    """Matches over 25 points answered 500 at the computer's first cube decision (the
    match equity table stopped at 25), the action stored and the table stuck."""
    headers = guest(client)
    for length in (26, 64):
        table = new_table(client, headers, match_length=length, level="expert")
        for _ in range(12):
            if table["status"] != "playing":
                break
            table = act(client, table["id"], headers, simple_command(table))
            assert table["match_length"] == length
            assert table["to_act"] == 0 or table["status"] == "finished"
