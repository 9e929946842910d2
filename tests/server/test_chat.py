"""Chat at a table (docs/server.md, "Chat"): the players' channel and the spectators',
delivered on the sockets, blocks, reports, length and rate limits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nard.cli.main import main
from nard.server import create_app
from nard.server.storage import Storage
from tests.server.conftest import app_on, make_settings, seeded
from tests.server.helpers import guest, join, new_table
from tests.server.test_ratings import error_of, register


def _say(client: TestClient, headers: dict[str, str], tid: str, text: str) -> Any:
    return client.post(f"/api/tables/{tid}/chat", json={"text": text}, headers=headers)


def _texts(client: TestClient, tid: str) -> list[str]:
    return [m["text"] for m in client.get(f"/api/tables/{tid}/chat").json()["messages"]]


def test_players_and_spectators_each_have_their_channel(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob, TestClient(app) as cat:
        ann_h, bob_h, cat_h = register(ann, "ann"), register(bob, "bob"), guest(cat, "cat")
        table = new_table(ann, ann_h, opponent="person", match_length=3)
        tid = table["id"]
        join(table, bob, bob_h)
        with bob.websocket_connect(f"/ws/tables/{tid}") as socket:
            assert socket.receive_json()["type"] == "table"
            said = _say(ann, ann_h, tid, "good luck <b>bob</b> 🎲")
            assert said.status_code == 201, said.text
            pushed = socket.receive_json()
            assert pushed["type"] == "chat"
            assert pushed["message"]["text"] == "good luck <b>bob</b> 🎲"  # kept as typed
            assert pushed["message"]["channel"] == "players"
        assert _say(cat, cat_h, tid, "nice opening").status_code == 201
        assert _texts(bob, tid) == ["good luck <b>bob</b> 🎲"]  # not the spectators'
        assert _texts(cat, tid) == ["nice opening"]  # not the players'
        for bad, code in (("   ", "empty_message"), ("x" * 301, None), ("a\u0007b", None)):
            response = _say(ann, ann_h, tid, bad)
            assert response.status_code == 422, (bad, response.text)
            if code:
                assert error_of(response) == (422, code)
        anonymous = TestClient(app).post(f"/api/tables/{tid}/chat", json={"text": "hi"})
        assert anonymous.status_code in (401, 403)
    storage.close()


def test_a_blocked_player_is_not_heard_and_cannot_challenge(
    sqlite_url: str, tmp_path: Path
) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob:
        ann_h, bob_h = register(ann, "ann"), register(bob, "bob")
        table = new_table(ann, ann_h, opponent="person", match_length=3)
        tid = table["id"]
        join(table, bob, bob_h)
        _say(ann, ann_h, tid, "first")
        assert bob.post("/api/players/ann/block", headers=bob_h).status_code == 204
        assert bob.post("/api/players/ann/block", headers=bob_h).status_code == 204  # twice
        assert bob.get("/api/blocks").json()["blocked"][0]["username"] == "ann"
        with bob.websocket_connect(f"/ws/tables/{tid}") as socket:
            socket.receive_json()
            _say(ann, ann_h, tid, "you will not hear this")
            _say(bob, bob_h, tid, "quiet here")
            assert socket.receive_json()["message"]["text"] == "quiet here"  # not ann's
        assert _texts(bob, tid) == ["quiet here"]
        assert _texts(ann, tid) == ["first", "you will not hear this", "quiet here"]
        body = {"opponent": "person", "match_length": 1, "username": "bob"}
        assert error_of(ann.post("/api/challenges", json=body, headers=ann_h)) == (
            403,
            "blocked",
        )
        bobs = new_table(bob, bob_h, opponent="person", match_length=1)
        joined = ann.post(
            f"/api/tables/{bobs['id']}/join", json={"invite": bobs["invite"]}, headers=ann_h
        )
        assert error_of(joined) == (403, "blocked")
        assert bob.delete("/api/players/ann/block", headers=bob_h).status_code == 204
        assert "first" in _texts(bob, tid)
        assert error_of(bob.post("/api/players/bob/block", headers=bob_h)) == (422, "yourself")
        assert error_of(bob.post("/api/players/nobody/block", headers=bob_h))[0] == 404
    storage.close()


def test_a_player_is_named_as_usernames_are_compared(sqlite_url: str, tmp_path: Path) -> None:
    """A profile, a block, a challenge and a report find the account whatever the case
    or look-alike letters it is named with, as logging in does (they looked the
    username up exactly: "/api/players/ANN" was 404 for the account "Ann")."""
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob:
        ann_h, bob_h = register(ann, "Ann"), register(bob, "bob")
        for name in ("Ann", "ann", "ANN", "\u0410nn"):  # the last with a Cyrillic A
            found = bob.get(f"/api/players/{name}")
            assert found.status_code == 200, (name, found.text)
            assert found.json()["username"] == "Ann"
        assert bob.post("/api/players/aNN/block", headers=bob_h).status_code == 204
        assert bob.get("/api/blocks").json()["blocked"][0]["username"] == "Ann"
        assert bob.delete("/api/players/ANN/block", headers=bob_h).status_code == 204
        assert bob.get("/api/blocks").json()["blocked"] == []
        assert error_of(ann.post("/api/players/ANN/block", headers=ann_h)) == (422, "yourself")
        body = {"opponent": "person", "match_length": 1, "username": "ANN"}
        challenge = bob.post("/api/challenges", json=body, headers=bob_h)
        assert challenge.status_code == 201, challenge.text
        tid = challenge.json()["id"]
        join(challenge.json(), ann, ann_h)
        rude = _say(ann, ann_h, tid, "something rude").json()
        report = {"username": "ANN", "reason": "insults", "message_id": rude["id"]}
        assert bob.post("/api/reports", json=report, headers=bob_h).status_code == 201
        by_name = {**report, "message_id": None}
        assert bob.post("/api/reports", json=by_name, headers=bob_h).status_code == 201
        assert [r.reason for r in storage.reports()] == ["insults", "insults"]
    storage.close()


def test_accounts_from_before_keys_keep_their_own_names(sqlite_url: str, tmp_path: Path) -> None:
    """Two accounts made before usernames had keys, "Ann" and "ann": the migration gave
    the key to the older; the newer signs in, and is found, by its own exact name."""
    from nard.server.app import _hasher

    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as newer:
        register(ann, "Ann")
        storage.create_player("ann", "ann", _hasher.hash("another secret"), username_key=None)
        login = newer.post("/api/login", json={"username": "ann", "password": "another secret"})
        assert login.status_code == 200, login.text
        assert newer.get("/api/players/ann").json()["username"] == "ann"
        assert newer.get("/api/players/Ann").json()["username"] == "Ann"
        assert newer.get("/api/players/ANN").json()["username"] == "Ann"  # by the key
        login = ann.post(
            "/api/login", json={"username": "ANN", "password": "correct horse battery"}
        )
        assert login.status_code == 200, login.text
    storage.close()


def test_reports_keep_the_message(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob:
        ann_h, bob_h = register(ann, "ann"), register(bob, "bob")
        table = new_table(ann, ann_h, opponent="person", match_length=3)
        tid = table["id"]
        join(table, bob, bob_h)
        rude = _say(bob, bob_h, tid, "something rude").json()
        mine = _say(ann, ann_h, tid, "mine").json()
        body = {"username": "bob", "reason": "insults", "message_id": rude["id"]}
        assert ann.post("/api/reports", json=body, headers=ann_h).status_code == 201
        wrong = {**body, "message_id": mine["id"]}  # not bob's message
        assert error_of(ann.post("/api/reports", json=wrong, headers=ann_h)) == (
            404,
            "no_such_message",
        )
        [report] = storage.reports()
        assert (report.message_text, report.table_id, report.reason) == (
            "something rude",
            tid,
            "insults",
        )
    storage.close()


def test_the_moderators_read_the_reports_with_nard_reports(
    database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``nard reports`` lists what players reported, newest first, on either database
    (they were stored and nothing read them but SQL)."""
    app, storage = app_on(database_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob:
        ann_h, bob_h = register(ann, "ann"), register(bob, "bob")
        table = new_table(ann, ann_h, opponent="person", match_length=3)
        join(table, bob, bob_h)
        rude = _say(bob, bob_h, table["id"], 'سلام "rude"').json()
        body = {"reason": "insults", "message_id": rude["id"]}
        assert ann.post("/api/reports", json=body, headers=ann_h).status_code == 201
        body = {"reason": "cheating?", "username": "ann"}
        assert bob.post("/api/reports", json=body, headers=bob_h).status_code == 201
    storage.close()
    assert main(["reports", "--database-url", database_url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("#2 ") and 'bob reported ann ("cheating?")' in lines[0]
    assert (
        f'ann reported bob at table {table["id"]} ("insults"): message #{rude["id"]} '
        '"سلام \\"rude\\""'
    ) in lines[1]
    assert main(["reports", "--database-url", database_url, "--json", "--limit", "1"]) == 0
    [only] = json.loads(capsys.readouterr().out)["reports"]
    assert (only["reporter"], only["reported"], only["message"]) == ("bob", "ann", None)
    assert main(["reports", "--database-url", database_url, "--limit", "0"]) == 2
    assert capsys.readouterr().err.startswith("nard: error: --limit 0")
    # Past a 64-bit column: a traceback from the database driver, until 2026-12-07.
    with pytest.raises(SystemExit) as refused:
        main(["reports", "--database-url", database_url, "--limit", "9" * 20])
    assert refused.value.code == 2
    assert "argument --limit: 99999999999999999999 is out of range" in capsys.readouterr().err


def test_nard_reports_does_not_make_a_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "none" / "nard.db"
    assert main(["reports", "--database-url", f"sqlite:///{missing}"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"nard: error: no database at {missing} (is that the server's data directory?)"
    )
    assert not missing.parent.exists()
    made = tmp_path / "nard.db"
    made.touch()  # not (yet) nard's database: an error that says so
    assert main(["reports", "--data-dir", str(tmp_path)]) == 2
    assert "cannot read the reports in " in capsys.readouterr().err
    storage = Storage(f"sqlite:///{made}")
    storage.migrate()
    storage.close()
    assert main(["reports", "--data-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith("no reports in sqlite:///")


def test_chat_has_a_rate_limit(sqlite_url: str, tmp_path: Path) -> None:
    storage = Storage(sqlite_url)
    settings = make_settings(sqlite_url, tmp_path, limits="table= guest= chat=3/minute")
    app = create_app(settings, storage, server_seeds=seeded(1))
    with TestClient(app) as ann:
        headers = guest(ann, "ann")
        tid = new_table(ann, headers, opponent="person", match_length=1)["id"]
        codes = [_say(ann, headers, tid, f"message {n}").status_code for n in range(5)]
        assert codes == [201, 201, 201, 429, 429]
    storage.close()


def test_direction_overrides_are_refused(sqlite_url: str, tmp_path: Path) -> None:
    """U+202E would turn the rest of the line around in the page (and in reports)."""
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann:
        headers = guest(ann, "ann")
        tid = new_table(ann, headers, opponent="person", match_length=1)["id"]
        assert _say(ann, headers, tid, "gg \u202eevil").status_code == 422
        assert _say(ann, headers, tid, "سلام hello").status_code == 201  # mixed scripts: fine
    storage.close()


def test_a_message_said_on_one_process_reaches_a_socket_on_another(
    sqlite_url: str, redis_url: str, tmp_path: Path
) -> None:
    """Two server processes share Redis: Ann's socket is on the first, Bob says
    something on the second; the first hears of it and pushes it."""
    settings = make_settings(sqlite_url, tmp_path, redis_url=redis_url)
    first_storage, second_storage = Storage(sqlite_url), Storage(sqlite_url)
    first = create_app(settings, first_storage, server_seeds=seeded(1))
    second = create_app(settings, second_storage, server_seeds=seeded(2))
    with TestClient(first) as ann, TestClient(second) as bob:
        ann_h, bob_h = guest(ann, "ann"), guest(bob, "bob")
        table = new_table(ann, ann_h, opponent="person", match_length=3)
        join(table, bob, bob_h)
        with ann.websocket_connect(f"/ws/tables/{table['id']}") as socket:
            socket.receive_json()
            assert _say(bob, bob_h, table["id"], "hello from the other process").status_code == 201
            for _ in range(20):
                message = socket.receive_json()
                if message["type"] == "chat":
                    break
            assert message["message"]["text"] == "hello from the other process"
    first_storage.close()
    second_storage.close()
