"""Chouette tables over the API: seating, team doubles by consent, individual takes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from nard.match.replay import replay
from nard.match.verify import verify_record
from nard.notation.json_record import read_json
from tests.server.conftest import app_on
from tests.server.helpers import contribute, guest


def create(
    client: TestClient, headers: dict[str, str], contribution: str = "ann's seed", **body: Any
) -> dict[str, Any]:
    """A chouette; its creator gives ``contribution`` to the dice at once."""
    request = {"opponent": "chouette", "match_length": 0, "level": "expert", **body}
    response = client.post("/api/tables", json=request, headers=headers)
    assert response.status_code == 201, response.text
    table: dict[str, Any] = response.json()
    return contribute(client, table["id"], headers, contribution)


def send(client: TestClient, table_id: str, headers: dict[str, str], **command: Any) -> Any:
    return client.post(f"/api/tables/{table_id}/actions", json=command, headers=headers)


def simple(table: dict[str, Any]) -> dict[str, Any]:
    """Never double; play the first play; take; agree with the captain."""
    legal = table["game"]["legal_actions"]
    if "play" in legal:
        return {"action": "play", "play": table["game"]["legal_plays"][0]["play"]}
    for action in ("roll", "take", "agree"):
        if action in legal:
            return {"action": action}
    raise AssertionError(legal)


def three_people(clients: list[TestClient]) -> tuple[str, list[dict[str, str]]]:
    """A chouette of three people (ann, bob and cem, each on one of ``clients``): its
    id once the two others have joined, and each one's CSRF header."""
    headers = [guest(c, n) for c, n in zip(clients, ("ann", "bob", "cem"), strict=True)]
    table = create(clients[0], headers[0], players=3, computers=0)
    assert table["status"] == "waiting"
    for c, h, name in zip(clients[1:], headers[1:], ("bob", "cem"), strict=True):
        joined = c.post(
            f"/api/tables/{table['id']}/join",
            json={"invite": table["invite"], "contribution": f"{name}'s seed"},
            headers=h,
        )
        assert joined.status_code == 200, joined.text
    return table["id"], headers


def test_a_chouette_with_the_computer_plays_games_and_rotates(
    sqlite_url: str, tmp_path: Path
) -> None:
    app, storage = app_on(sqlite_url, tmp_path, seed=3)
    with TestClient(app) as client:
        headers = guest(client, "ann")
        table = create(client, headers, players=4, computers=3)
        assert table["kind"] == "chouette" and table["status"] == "playing"
        assert sorted(table["roles"]) == ["box", "captain", "crew", "crew"]
        first_roles = table["roles"]
        tid = table["id"]
        for _ in range(500):
            if table["between_games"]:
                break
            if table["you_act"]:
                response = send(client, tid, headers, **simple(table))
                assert response.status_code == 200, response.text
                table = response.json()
            else:
                table = client.get(f"/api/tables/{tid}").json()
                assert table["you_act"] or table["between_games"], table["waiting_for"]
        assert table["between_games"] and table["game"]["result"] is not None
        assert table["results"] == [table["game"]["result"]]
        assert sum(table["score"]) == 0 and any(table["score"])
        # Mid-table, the record cannot be verified yet: the seed is secret.
        _, dice = read_json(client.get(f"/api/tables/{tid}/record.json").text)
        assert dice is not None and dice.server_seed is None and dice.preamble >= 4  # a die each
        assert client.get(f"/api/tables/{tid}/record.mat").status_code == 404
        table = client.post(f"/api/tables/{tid}/next-game", headers=headers).json()
        assert table["game_number"] == 2 and table["roles"] != first_roles
        before = client.get(f"/api/tables/{tid}").json()
    storage.close()
    # A restarted server rebuilds the chouette from its log.
    app, storage = app_on(sqlite_url, tmp_path, seed=4)
    with TestClient(app) as client:
        after = client.get(f"/api/tables/{tid}").json()  # watched, not signed in
        for key in ("seq", "roles", "score", "waiting_for", "game_number", "dice_commitment"):
            assert after[key] == before[key], key
        assert after["game"]["board"] == before["game"]["board"]
        assert after["game"]["dice"] == before["game"]["dice"]
    storage.close()


def test_team_doubles_need_everyone_and_each_member_answers_the_box(
    sqlite_url: str, tmp_path: Path
) -> None:
    app, storage = app_on(sqlite_url, tmp_path, seed=8)
    with TestClient(app) as ann, TestClient(app) as bob, TestClient(app) as cem:
        clients = [ann, bob, cem]
        tid, headers = three_people(clients)

        def state(i: int) -> dict[str, Any]:
            result: dict[str, Any] = clients[i].get(f"/api/tables/{tid}").json()
            return result

        seen = {"refused": False, "agreed": False, "box_double": False}
        for _ in range(2000):
            views = [state(i) for i in range(3)]
            if all(seen.values()):
                break
            if views[0]["between_games"]:
                ann.post(f"/api/tables/{tid}/next-game", headers=headers[0])
                continue
            actor = next(i for i in range(3) if views[i]["you_act"])
            view = views[actor]
            legal = view["game"]["legal_actions"]
            role = view["roles"][view["you"]]
            crew_in = "crew" in view["roles"]
            if "double" in legal and role == "captain" and crew_in and not seen["agreed"]:
                assert send(clients[actor], tid, headers[actor], action="double").status_code == 200
                crew = next(i for i in range(3) if state(i)["you_act"])
                assert state(crew)["roles"][state(crew)["you"]] == "crew"
                assert state(crew)["votes"] == [view["you"]]
                # The captain cannot roll while the crew decides.
                refused = send(clients[actor], tid, headers[actor], action="roll")
                assert refused.status_code == 409, refused.text
                answer = "agree" if seen["refused"] else "refuse"
                assert send(clients[crew], tid, headers[crew], action=answer).status_code == 200
                if answer == "refuse":
                    seen["refused"] = True
                    after = state(actor)
                    assert "double" not in after["game"]["legal_actions"]
                    assert after["game"]["legal_actions"] == ["roll"]
                else:
                    seen["agreed"] = True
                    box = next(i for i in range(3) if state(i)["you_act"])
                    assert state(box)["roles"][state(box)["you"]] == "box"
                    assert send(clients[box], tid, headers[box], action="take").status_code == 200
                    assert state(0)["game"]["cube"] == 2
                continue
            box_may = seen["agreed"] and crew_in and not seen["box_double"]
            if "double" in legal and role == "box" and box_may:
                assert send(clients[actor], tid, headers[actor], action="double").status_code == 200
                members = [i for i in range(3) if state(i)["you_act"]]
                assert len(members) == 2
                assert (
                    send(clients[members[0]], tid, headers[members[0]], action="pass").status_code
                    == 200
                )
                # Not out until every member has answered.
                assert state(members[0])["roles"][state(members[0])["you"]] in ("captain", "crew")
                assert (
                    send(clients[members[1]], tid, headers[members[1]], action="take").status_code
                    == 200
                )
                roles = state(0)["roles"]
                assert roles[state(members[0])["you"]] == "out"
                seen["box_double"] = True
                continue
            command = simple(view)
            response = send(clients[actor], tid, headers[actor], **command)
            assert response.status_code == 200, response.text
        assert all(seen.values()), seen
        standings = state(0)["score"]
        assert sum(standings) == 0
    storage.close()


def test_a_finished_chouette_record_verifies(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path, seed=12)
    with TestClient(app) as client:
        headers = guest(client, "ann")
        table = create(client, headers, "chouette", players=3, computers=2)
        tid = table["id"]
        for _game in range(2):
            while not table["between_games"]:
                if table["you_act"]:
                    table = send(client, tid, headers, **simple(table)).json()
                else:
                    table = client.get(f"/api/tables/{tid}").json()
            if _game == 0:
                table = client.post(f"/api/tables/{tid}/next-game", headers=headers).json()
        ended = client.post(f"/api/tables/{tid}/end", headers=headers).json()
        assert ended["status"] == "finished" and ended["server_seed"]
        record, dice = read_json(client.get(f"/api/tables/{tid}/record.json").text)
        assert dice is not None and dice.server_seed == ended["server_seed"]
        result = verify_record(record, dice)
        assert result.ok, result.problems
        replay(record)  # each game is legal as recorded (what `nard verify` checks too)
        assert len(record.games) == 2 and record.metadata["event"] == "chouette"
        steps = client.get(f"/api/tables/{tid}/replay").json()["steps"]
        assert steps[0]["game"] == 1 and steps[-1]["game"] == 2
        assert steps[-1]["score"] == ended["score"]
        assert any(s["text"].startswith("ann: ") for s in steps)
        assert all(len(s["board"]) == 26 for s in steps)
        assert record.metadata["game 1"].startswith("box ")
    storage.close()


def test_every_member_passing_the_box_ends_the_game_and_the_table_goes_on(
    sqlite_url: str, tmp_path: Path
) -> None:
    """When every member still in passed the box's double, the game ended with no one
    left in the team, and every view of the table (and so every request to it)
    failed on the team's captain: the table was stuck for good."""
    app, storage = app_on(sqlite_url, tmp_path, seed=8)
    with TestClient(app) as ann, TestClient(app) as bob, TestClient(app) as cem:
        clients = [ann, bob, cem]
        tid, headers = three_people(clients)

        def state(i: int) -> dict[str, Any]:
            response = clients[i].get(f"/api/tables/{tid}")
            assert response.status_code == 200, response.text
            result: dict[str, Any] = response.json()
            return result

        for _ in range(200):
            views = [state(i) for i in range(3)]
            actor = next(i for i in range(3) if views[i]["you_act"])
            view = views[actor]
            if view["roles"][view["you"]] == "box" and "double" in view["game"]["legal_actions"]:
                break
            response = send(clients[actor], tid, headers[actor], **simple(view))
            assert response.status_code == 200, response.text
        else:
            raise AssertionError("the box never had the cube")
        box = actor
        assert send(clients[box], tid, headers[box], action="double").status_code == 200
        members = [i for i in range(3) if state(i)["you_act"]]
        assert len(members) == 2 and box not in members
        for member in members:
            response = send(clients[member], tid, headers[member], action="pass")
            assert response.status_code == 200, response.text
        after = [state(i) for i in range(3)]
        assert after[0]["between_games"] is True
        result = after[0]["game"]["result"]
        assert result is not None and result["kind"] == "pass"
        score = after[0]["score"]
        assert score[after[box]["you"]] == 2 and sum(score) == 0  # 1 from each member
        assert all(after[i]["roles"][after[i]["you"]] == "out" for i in members)
        table = ann.post(f"/api/tables/{tid}/next-game", headers=headers[0]).json()
        assert table["game_number"] == 2 and table["status"] == "playing"
        before = state(0)
    storage.close()
    app, storage = app_on(sqlite_url, tmp_path, seed=9)  # restarted: rebuilt from the log
    with TestClient(app) as client:
        rebuilt = client.get(f"/api/tables/{tid}").json()
        for key in ("seq", "roles", "score", "game_number"):
            assert rebuilt[key] == before[key], key
    storage.close()
