"""The HTTP API with an in-process client: players, tables, games, bad input."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from nard.match import GameAction
from nard.match.commands import Command
from nard.match.verify import verify_record
from nard.notation.json_record import read_json
from nard.notation.mat import read_mat
from nard.notation.sgf import read_sgf
from nard.server.chouette import parse_command
from nard.server.schemas import has_control_characters
from nard.server.usernames import MAX_LENGTH, MIN_LENGTH
from tests.server.conftest import app_on
from tests.server.helpers import act, guest, new_table, play_until, simple_command


def error_of(response: object) -> tuple[int, str]:
    body = response.json()  # type: ignore[attr-defined]
    assert set(body) <= {"error", "table"} and set(body["error"]) == {"code", "message"}, body
    if "table" in body:  # a refusal about the table's state: the fresh state comes with it
        assert response.status_code == 409 and body["table"]["seq"] >= 0  # type: ignore[attr-defined]
    assert body["error"]["message"]
    return response.status_code, body["error"]["code"]  # type: ignore[attr-defined]


# -- players -------------------------------------------------------------------


def test_guest_signs_in_and_sees_itself(client: TestClient) -> None:
    assert client.get("/api/me").json() is None
    headers = guest(client, "ann")
    me = client.get("/api/me").json()
    assert me["name"] == "ann" and me["guest"] is True
    assert me["csrf_token"] == headers["X-CSRF-Token"]
    cookie = client.cookies.get("nard_session")
    assert cookie and len(cookie) > 30


def test_changes_need_the_csrf_token_and_the_same_origin(client: TestClient) -> None:
    headers = guest(client)
    body = {"opponent": "computer", "match_length": 1}
    assert error_of(client.post("/api/tables", json=body)) == (403, "csrf")
    assert error_of(client.post("/api/tables", json=body, headers={"X-CSRF-Token": "x"})) == (
        403,
        "csrf",
    )
    evil = {**headers, "Origin": "https://evil.example"}
    assert error_of(client.post("/api/tables", json=body, headers=evil)) == (403, "cross_origin")
    assert error_of(client.post("/api/guest", json={}, headers=evil)) == (403, "cross_origin")
    assert client.post("/api/tables", json=body, headers=headers).status_code == 201


def test_visitors_must_sign_in_to_act(client: TestClient) -> None:
    code = error_of(client.post("/api/tables", json={}, headers={"X-CSRF-Token": "x"}))
    assert code == (401, "not_signed_in")


def test_accounts_register_log_out_and_log_in(client: TestClient) -> None:
    headers = guest(client, "visitor")
    table = new_table(client, headers)
    me = client.post("/api/register", json={"username": "ann", "password": "correct horse"})
    assert me.status_code == 200 and me.json()["guest"] is False
    headers = {"X-CSRF-Token": me.json()["csrf_token"]}
    # The guest's tables stay with the account it became.
    assert [t["id"] for t in client.get("/api/my-tables").json()] == [table["id"]]
    assert client.post("/api/logout", headers=headers).status_code == 204
    assert client.get("/api/me").json() is None
    wrong = client.post("/api/login", json={"username": "ann", "password": "wrong horse"})
    assert error_of(wrong) == (401, "bad_credentials")
    unknown = client.post("/api/login", json={"username": "bob", "password": "whatever1"})
    assert error_of(unknown) == (401, "bad_credentials")
    ok = client.post("/api/login", json={"username": "ann", "password": "correct horse"})
    assert ok.status_code == 200 and ok.json()["name"] == "ann"
    assert [t["id"] for t in client.get("/api/my-tables").json()] == [table["id"]]
    client.cookies.clear()
    taken = client.post("/api/register", json={"username": "ann", "password": "another one"})
    assert error_of(taken) == (409, "username_taken")


def test_passwords_are_stored_hashed(client: TestClient) -> None:
    client.post("/api/register", json={"username": "ann", "password": "correct horse"})
    storage = client.app.state.storage  # type: ignore[attr-defined]
    row = storage.player_by_username("ann")
    assert row.password_hash.startswith("$argon2") and "correct horse" not in row.password_hash


# -- a game against the computer ------------------------------------------------


def test_a_whole_match_against_the_computer(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, match_length=3, contribution="ann's seed")
    assert table["status"] == "playing" and table["you"] == 0
    assert table["seats"][1] == {"name": "nard (expert)", "kind": "computer", "level": "expert"}
    assert table["server_seed"] is None and len(table["dice_commitment"]) == 64
    table = play_until(client, table, headers)
    assert table["status"] == "finished" and max(table["score"]) >= 3
    assert table["winner"] in (0, 1) and table["to_act"] is None
    # The seed is revealed at the end and every die checks out against the commitment.
    assert table["server_seed"] is not None
    record, dice = read_json(client.get(f"/api/tables/{table['id']}/record.json").text)
    assert dice is not None and dice.server_seed == table["server_seed"]
    assert dice.client_seed == "ann's seed"
    assert verify_record(record, dice).ok
    assert record.match_length == 3 and record.players == ("ann", "nard (expert)")


def test_the_computer_acts_at_once_and_the_history_shows_it(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, match_length=5)
    table = act(client, table["id"], headers, simple_command(table))
    while table["to_act"] == 0 and table["game"]["decision"] != "roll":
        table = act(client, table["id"], headers, simple_command(table))
    history = table["game"]["history"]
    assert {entry["seat"] for entry in history} == {0, 1}
    assert table["to_act"] == 0  # the computer has played and it is our turn again


def test_records_download_in_three_formats(client: TestClient) -> None:
    headers = guest(client)
    table = play_until(client, new_table(client, headers, match_length=1), headers)
    base = f"/api/tables/{table['id']}/record"
    mat = client.get(base + ".mat")
    assert mat.status_code == 200 and "attachment" in mat.headers["content-disposition"]
    assert read_mat(mat.text).match_length == 1
    assert read_sgf(client.get(base + ".sgf").text).match_length == 1
    assert error_of(client.get(base + ".pdf")) == (404, "no_such_format")


def test_hints_for_the_seat_to_act(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, match_length=5)
    hint = client.get(f"/api/tables/{table['id']}/hint")
    assert hint.status_code == 200, hint.text
    body = hint.json()
    if table["game"]["decision"] == "play":
        assert body["kind"] == "plays" and body["plays"][0]["play"]
        assert body["plays"] == sorted(body["plays"], key=lambda p: -p["equity"])
    else:
        assert body["kind"] == "cube" and body["action"]


def test_money_sessions_start_games_on_request_and_end_between_games(
    client: TestClient,
) -> None:
    headers = guest(client)
    table = new_table(client, headers, match_length=0, jacoby=True, beavers=True)
    assert table["rules"]["jacoby"] is True
    tid = table["id"]
    refused = client.post(f"/api/tables/{tid}/end", headers=headers)
    assert error_of(refused) == (409, "game_in_progress")
    table = play_until(client, table, headers)
    assert table["between_games"] is True and table["game"]["result"] is not None
    assert table["results"] == [table["game"]["result"]]
    table = client.post(f"/api/tables/{tid}/next-game", headers=headers).json()
    assert table["game_number"] == 2 and table["between_games"] is False
    assert len(table["results"]) == 1  # the finished game's result stays with the table
    assert error_of(client.post(f"/api/tables/{tid}/next-game", headers=headers)) == (
        409,
        "game_in_progress",
    )
    table = play_until(client, table, headers)
    ended = client.post(f"/api/tables/{tid}/end", headers=headers).json()
    assert ended["status"] == "finished" and ended["server_seed"]
    assert sum(ended["score"]) > 0


def test_actions_between_money_games_are_refused_with_the_table(client: TestClient) -> None:
    """Between two games of a money session (the next starts when asked) an action,
    a second click on roll as the game ended, was a 500 (an assertion in the table),
    and on a socket a traceback; now 409 ``between_games`` with the state, nothing stored."""
    headers = guest(client)
    table = new_table(client, headers, match_length=0)
    tid = table["id"]
    table = play_until(client, table, headers)
    assert table["between_games"] is True
    for command in (
        {"action": "roll"},
        {"action": "beaver"},
        {"action": "resign", "points": 1},
        {"action": "play", "play": "24/18"},
    ):
        refused = client.post(f"/api/tables/{tid}/actions", json=command, headers=headers)
        assert error_of(refused) == (409, "between_games"), command
        assert "next game" in refused.json()["error"]["message"]
        assert refused.json()["table"]["seq"] == table["seq"]
    with client.websocket_connect(f"/ws/tables/{tid}") as socket:
        assert socket.receive_json()["type"] == "table"
        socket.send_json({"action": "roll"})
        answer = socket.receive_json()
        assert answer["type"] == "error" and answer["error"]["code"] == "between_games"
        assert socket.receive_json()["table"]["seq"] == table["seq"]
        socket.send_json({"type": "ping"})
        assert socket.receive_json() == {"type": "pong"}  # the socket stays
    table = client.post(f"/api/tables/{tid}/next-game", headers=headers).json()
    assert table["game_number"] == 2 and table["between_games"] is False


def test_resignation_is_answered_by_the_computer(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, match_length=1)
    table = act(client, table["id"], headers, {"action": "resign", "points": 3})
    # Resigning a backgammon at the start is an offer the computer takes.
    assert table["status"] == "finished" and table["winner"] == 1
    assert table["game"]["result"]["kind"] == "resign"


# -- bad input -------------------------------------------------------------------


def test_illegal_actions_leave_the_table_unchanged(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, match_length=3)
    table = play_until(client, table, headers, actions=0)
    tid, seq = table["id"], table["seq"]
    if table["game"]["decision"] != "play":
        table = act(client, tid, headers, {"action": "roll"})
        seq = table["seq"]
    bad = [
        ({"action": "play", "play": "24/12 24/12 24/12"}, (422, "illegal_action")),
        ({"action": "play", "play": "x" * 150}, (422, "illegal_action")),
        ({"action": "double"}, (422, "illegal_action")),
        ({"action": "take"}, (422, "illegal_action")),
        ({"action": "opening roll"}, (422, "illegal_action")),
        ({"action": "fly"}, (422, "invalid_action")),
        ({"action": "play"}, (422, "invalid_action")),
        ({"action": "resign", "points": 7}, (422, "invalid_action")),
        ({"action": "roll", "extra": 1}, (422, "invalid_request")),
        ({"action": "play", "play": 5}, (422, "invalid_request")),
    ]
    for body, expected in bad:
        response = client.post(f"/api/tables/{tid}/actions", json=body, headers=headers)
        assert error_of(response) == expected, body
    after = client.get(f"/api/tables/{tid}").json()
    assert after["seq"] == seq and after["game"] == table["game"]
    stale = client.post(
        f"/api/tables/{tid}/actions",
        json={**simple_command(after), "seq": seq - 1},
        headers=headers,
    )
    assert error_of(stale) == (409, "stale")


def test_malformed_and_oversized_requests(client: TestClient) -> None:
    headers = guest(client)
    tid = new_table(client, headers)["id"]
    raw = {**headers, "Content-Type": "application/json"}
    response = client.post(f"/api/tables/{tid}/actions", content=b"{not json", headers=raw)
    assert error_of(response) == (422, "invalid_request")
    response = client.post(f"/api/tables/{tid}/actions", content=b"[1, 2]", headers=raw)
    assert error_of(response) == (422, "invalid_request")
    huge = b'{"action": "roll", "play": "' + b"x" * 40_000 + b'"}'
    response = client.post(f"/api/tables/{tid}/actions", content=huge, headers=raw)
    assert error_of(response) == (413, "too_large")
    assert error_of(client.get("/api/tables/nope")) == (404, "no_such_table")
    assert error_of(client.get("/api/tables/" + "x" * 300)) == (404, "no_such_table")
    assert error_of(client.get("/api/tables/a%00b")) == (404, "no_such_table")
    refused = client.delete(f"/api/tables/{tid}")
    assert error_of(refused) == (405, "method_not_allowed")
    # RFC 9110: a 405 names the methods the path takes (it had no Allow, found by
    # schemathesis on 2026-12-07).
    assert refused.headers["allow"] == "GET"
    # ... every method of the path, where each has a route of its own (only the first
    # route's were named).
    refused = client.put("/api/challenges", headers=headers)
    assert error_of(refused) == (405, "method_not_allowed")
    assert refused.headers["allow"] == "GET, POST"
    assert client.delete(f"/api/tables/{tid}/chat").headers["allow"] == "GET, POST"
    bad_rules = {"opponent": "computer", "match_length": 0, "raccoons": True}
    assert error_of(client.post("/api/tables", json=bad_rules, headers=headers)) == (
        422,
        "invalid_rules",
    )
    assert error_of(client.post("/api/tables", json={"match_length": 65}, headers=headers)) == (
        422,
        "invalid_request",
    )
    assert error_of(client.post("/api/guest", json={"name": "<script>"})) == (
        422,
        "invalid_request",
    )


def test_the_openapi_document_describes_the_api(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert "/api/tables/{table_id}/actions" in doc["paths"]
    assert "TableView" in doc["components"]["schemas"]
    # What the answers are (found by schemathesis on 2026-12-07): an analysis already
    # made or on its way is a 200 beside the 202 of one queued; a record is a match
    # file, in the media type of its format, not the JSON the document said.
    analyses = doc["paths"]["/api/tables/{table_id}/analyses"]["post"]["responses"]
    assert {"200", "202"} <= set(analyses)
    record = doc["paths"]["/api/tables/{table_id}/record.{fmt}"]["get"]["responses"]
    assert set(record["200"]["content"]) == {
        "text/plain",
        "application/x-go-sgf",
        "application/json",
    }


def test_the_openapi_document_states_the_rules_it_can(client: TestClient) -> None:
    """The rules a schema can carry are in the document, so that a client generated
    from it refuses what the server would: the actions a seat may send, the control
    characters no text takes (and the direction overrides no shown text takes), a new
    username's length. The server still checks each itself, with its own message."""
    doc = client.get("/openapi.json").json()
    schemas = doc["components"]["schemas"]
    action = schemas["ActionRequest"]["properties"]["action"]
    seat_actions = {a.value for a in GameAction} - {GameAction.OPENING_ROLL.value}
    assert set(action["enum"]) == seat_actions | {"agree", "refuse"}  # a chouette's too
    for name in action["enum"]:  # each is one the rules take by that name
        command = {"action": name, "play": "8/5 6/5"} if name == "play" else {"action": name}
        if name in ("agree", "refuse"):
            assert parse_command(command)["action"] == name
        else:
            assert Command.from_json(command).action.value == name
    headers = guest(client)
    table = new_table(client, headers, match_length=1)
    refused = client.post(
        f"/api/tables/{table['id']}/actions", json={"action": "fly"}, headers=headers
    )
    assert refused.status_code == 422 and "unknown action 'fly'" in refused.text

    def pattern(schema: dict[str, Any]) -> str:
        found = [s["pattern"] for s in schema.get("anyOf", [schema]) if "pattern" in s]
        assert len(found) == 1, schema
        text: str = found[0]
        return text

    plain = pattern(schemas["ActionRequest"]["properties"]["play"])
    shown = pattern(schemas["ChatRequest"]["properties"]["text"])
    for model, field in [
        ("CredentialsRequest", "username"),
        ("CredentialsRequest", "password"),
        ("JoinRequest", "contribution"),
        ("ContributionRequest", "contribution"),
        ("ReportRequest", "reason"),
        ("EngineMoveRequest", "position"),
    ]:
        assert pattern(schemas[model]["properties"][field]) == plain, (model, field)
    # The patterns say what the server's own check says, character by character.
    for code in [*range(0x3000), *range(0xFE00, 0x10000)]:
        char = chr(code)
        if 0xD800 <= code < 0xE000:
            continue
        text = f"a{char}b"
        assert (re.fullmatch(plain, text) is None) == has_control_characters(text), hex(code)
        bidi = 0x202A <= code <= 0x202E
        assert (re.fullmatch(shown, text) is None) == (has_control_characters(text) or bidi)
    registration = doc["paths"]["/api/register"]["post"]["requestBody"]["content"]
    name = schemas[registration["application/json"]["schema"]["$ref"].split("/")[-1]]
    username = name["properties"]["username"]
    assert (username["minLength"], username["maxLength"]) == (MIN_LENGTH, MAX_LENGTH)
    short = client.post("/api/register", json={"username": "ab", "password": "long enough"})
    assert short.status_code == 422 and "usernames have 3 to 24" in short.text


# -- people against each other --------------------------------------------------------


def test_an_online_game_between_two_people(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob, TestClient(app) as eve:
        ann_h, bob_h, eve_h = guest(ann, "ann"), guest(bob, "bob"), guest(eve, "eve")
        table = new_table(ann, ann_h, opponent="person", match_length=1)
        assert table["status"] == "waiting" and table["invite"]
        tid = table["id"]
        assert ann.get("/api/tables").json() == []  # not public: not in the lobby
        refused = bob.post(f"/api/tables/{tid}/join", json={}, headers=bob_h)
        assert error_of(refused) == (403, "invite_required")
        wrong = bob.post(f"/api/tables/{tid}/join", json={"invite": "guess"}, headers=bob_h)
        assert error_of(wrong) == (403, "invite_required")
        joined = bob.post(
            f"/api/tables/{tid}/join",
            json={"invite": table["invite"], "contribution": "bob's seed"},
            headers=bob_h,
        ).json()
        assert joined["status"] == "playing" and joined["you"] == 1
        assert joined["client_seed"] == "my contribution\nbob's seed"
        full = eve.post(f"/api/tables/{tid}/join", json={"invite": table["invite"]}, headers=eve_h)
        assert error_of(full) == (409, "table_full")
        # Eve watches but cannot act in anyone's seat.
        watched = eve.get(f"/api/tables/{tid}").json()
        assert watched["you"] is None and watched["game"]["legal_actions"] == []
        assert error_of(
            eve.post(f"/api/tables/{tid}/actions", json={"action": "roll"}, headers=eve_h)
        ) == (403, "not_seated")
        players = {0: (ann, ann_h), 1: (bob, bob_h)}
        turns = 0
        while True:
            state = ann.get(f"/api/tables/{tid}").json()
            if state["status"] != "playing":
                break
            seat = state["to_act"]
            other, other_h = players[1 - seat]
            out_of_turn = other.post(
                f"/api/tables/{tid}/actions", json={"action": "roll"}, headers=other_h
            )
            assert error_of(out_of_turn) == (409, "not_your_turn")
            mover, mover_h = players[seat]
            mine = mover.get(f"/api/tables/{tid}").json()
            act(mover, tid, mover_h, simple_command(mine))
            turns += 1
            assert turns < 2000
        assert state["status"] == "finished" and state["winner"] in (0, 1)
    storage.close()


def test_public_tables_are_listed_in_the_lobby(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, opponent="person", public=True)
    lobby = client.get("/api/tables").json()
    assert [t["id"] for t in lobby] == [table["id"]]
    assert lobby[0]["seats"][1]["kind"] == "open"
    ended = client.post(f"/api/tables/{table['id']}/end", headers=headers)
    assert ended.json()["status"] == "finished"
    assert client.get("/api/tables").json() == []


def test_pages_are_served(client: TestClient) -> None:
    for path in ("/", "/play/abc", "/verify", "/archive", "/rules"):
        response = client.get(path)
        assert response.status_code == 200 and "<html" in response.text.lower()


def test_changing_the_password_signs_out_the_other_sessions(
    sqlite_url: str, tmp_path: Path
) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as laptop, TestClient(app) as phone:
        me = laptop.post("/api/register", json={"username": "ann", "password": "correct horse"})
        headers = {"X-CSRF-Token": me.json()["csrf_token"]}
        assert phone.post("/api/login", json={"username": "ann", "password": "correct horse"})
        assert phone.get("/api/me").json()["name"] == "ann"
        wrong = laptop.post(
            "/api/password",
            json={"current": "wrong horse", "new": "battery staple"},
            headers=headers,
        )
        assert error_of(wrong) == (403, "bad_credentials")
        short = laptop.post(
            "/api/password", json={"current": "correct horse", "new": "short"}, headers=headers
        )
        assert error_of(short) == (422, "invalid_request")
        done = laptop.post(
            "/api/password",
            json={"current": "correct horse", "new": "battery staple"},
            headers=headers,
        )
        assert done.status_code == 204
        assert laptop.get("/api/me").json()["name"] == "ann"  # this session stays
        assert phone.get("/api/me").json() is None  # the others are signed out
        old = phone.post("/api/login", json={"username": "ann", "password": "correct horse"})
        assert error_of(old) == (401, "bad_credentials")
        new = phone.post("/api/login", json={"username": "ann", "password": "battery staple"})
        assert new.status_code == 200
    storage.close()


def test_sign_ins_expire(client: TestClient) -> None:
    guest(client)
    assert client.get("/api/me").json() is not None
    storage = client.app.state.storage  # type: ignore[attr-defined]
    with storage.engine.begin() as connection:
        connection.exec_driver_sql(
            "UPDATE auth_sessions SET created_at = '2020-01-01 00:00:00.000000'"
        )
    client.app.state.sessions.clear()  # type: ignore[attr-defined]  # as after its 10 s
    assert client.get("/api/me").json() is None
    with storage.engine.connect() as connection:
        assert connection.exec_driver_sql("SELECT count(*) FROM auth_sessions").scalar() == 0


def test_each_replay_step_has_its_own_caption(client: TestClient) -> None:
    """Tried on 2026-12-05: a roll's step repeated the previous move's text (the
    replay viewer showed each play twice, never the roll)."""
    headers = guest(client)
    table = new_table(client, headers, match_length=1)
    table = play_until(client, table, headers)
    steps = client.get(f"/api/tables/{table['id']}/replay").json()["steps"]
    captions = [s["caption"] for s in steps]
    assert captions[0]["kind"] == "opening" and len(captions[0]["dice"]) == 2
    assert steps[0]["text"].startswith("Opening roll ")
    kinds = {c["kind"] for c in captions}
    assert {"opening", "roll", "play"} <= kinds
    for before, step in itertools.pairwise(steps):
        assert step["text"] != before["text"] or step["caption"]["kind"] == "no_play", step
        caption = step["caption"]
        if caption["kind"] in ("roll", "no_play"):
            assert step["text"].startswith(f"{caption['who']} rolls "), step
            assert caption["dice"] and len(caption["dice"]) == 2
        if caption["kind"] == "play":
            assert caption["play"] and caption["play"] in step["text"]
    # The record's rolls and the replay's agree: each play follows its roll's dice.
    for roll, play in itertools.pairwise(captions):
        if roll["kind"] == "roll" and play["kind"] == "play":
            assert play["dice"] == roll["dice"] and play["who"] == roll["who"]


def test_a_match_against_the_computer_is_abandoned(client: TestClient) -> None:
    """Tried on 2026-12-05: an unwanted match could only be ended by resigning every
    game."""
    headers = guest(client)
    table = play_until(client, new_table(client, headers, match_length=7), headers, actions=2)
    tid = table["id"]
    assert table["status"] == "playing" and table["abandoned"] is False
    left = client.post(f"/api/tables/{tid}/abandon", headers=headers)
    assert left.status_code == 200, left.text
    table = left.json()
    assert table["status"] == "finished" and table["abandoned"] is True
    assert table["winner"] is None and len(table["server_seed"]) == 64
    assert client.post(f"/api/tables/{tid}/abandon", headers=headers).json()["seq"] == table["seq"]
    refused = client.post(f"/api/tables/{tid}/actions", json={"action": "roll"}, headers=headers)
    assert error_of(refused) == (409, "table_closed")
    assert client.get(f"/api/tables/{tid}/record.json").status_code == 200
    # Against a person, one resigns instead.
    other = client.post(
        "/api/tables", json={"opponent": "person", "match_length": 3}, headers=headers
    ).json()
    refused = client.post(f"/api/tables/{other['id']}/abandon", headers=headers)
    assert error_of(refused) == (409, "not_against_computer")
