"""The moderators' sanctions (``nard moderate``, docs/server.md "Moderation"): reports
were stored and listed, and nobody could act on them. A muted player cannot chat; a
suspended one is signed out everywhere and cannot sign in; each until its time is up
or it is lifted."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from nard.cli.main import main
from nard.cli.moderate import parse_duration
from nard.core import NardError
from nard.server import create_app
from nard.server.app import COOKIE
from nard.server.storage import Storage
from tests.server.conftest import app_on, make_settings, seeded
from tests.server.helpers import eventually, guest, join, new_table
from tests.server.test_accounts import closed_code, csrf, login, register, subscribed
from tests.server.test_chat import _say, _texts


class Clock:
    """The service's time; the test moves it."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


def moderate(url: str, *args: str) -> int:
    """``nard moderate ARGS`` on the database at ``url``: its exit status (argparse's
    refusals exit as the command line would, 2)."""
    try:
        return main(["moderate", *args, "--database-url", url])
    except SystemExit as exc:
        return int(exc.code or 0)


def test_a_muted_player_cannot_chat_until_the_mute_ends(
    database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = Clock()
    app, storage = app_on(database_url, tmp_path, clock=clock)
    with TestClient(app) as ann, TestClient(app) as bob:
        ann_h, bob_h = csrf(register(ann, "ann")), csrf(register(bob, "bob"))
        table = new_table(ann, ann_h, opponent="person", match_length=3)
        tid = table["id"]
        join(table, bob, bob_h)
        assert _say(bob, bob_h, tid, "hello").status_code == 201
        report = {"reason": "spam", "username": "bob"}
        assert ann.post("/api/reports", json=report, headers=ann_h).status_code == 201
        [filed] = storage.reports()
        assert moderate(database_url, "mute", "BOB", "--reason", "spam", "--for", "1h",
                        "--report", str(filed.id)) == 0  # fmt: skip
        said = capsys.readouterr().out
        assert said.startswith("muted bob until ") and said.rstrip().endswith(
            ": spam (sanction #1)"
        )
        refused = _say(bob, bob_h, tid, "buy gold")
        body = refused.json()["error"]
        assert (refused.status_code, body["code"]) == (403, "muted")
        assert "until " in body["message"] and body["message"].endswith("UTC (spam)")
        assert _say(ann, ann_h, tid, "thanks").status_code == 201  # only bob is muted
        clock.now += timedelta(hours=1, minutes=1)  # the mute is over
        assert _say(bob, bob_h, tid, "sorry").status_code == 201
        assert moderate(database_url, "mute", "bob", "--reason", "again") == 0
        assert "until lifted" in capsys.readouterr().out
        assert (
            _say(bob, bob_h, tid, "x")
            .json()["error"]["message"]
            .endswith("until a moderator lifts it (again)")
        )
        assert moderate(database_url, "lift", "2") == 0
        assert capsys.readouterr().out.strip() == "lifted sanction #2 (mute of bob)"
        assert _say(bob, bob_h, tid, "better now").status_code == 201
        assert _texts(ann, tid) == ["hello", "thanks", "sorry", "better now"]
        assert moderate(database_url, "lift", "2") == 0
        assert "was lifted already" in capsys.readouterr().out
    assert moderate(database_url, "list", "--all", "--json") == 0
    listed = json.loads(capsys.readouterr().out)["sanctions"]
    assert [(s["id"], s["kind"], s["player"], s["report"]) for s in listed] == [
        (2, "mute", "bob", None),
        (1, "mute", "bob", filed.id),
    ]
    # The service's clock was moved on; the command's is the real one, where the first
    # mute lasts another hour.
    assert moderate(database_url, "list") == 0
    assert capsys.readouterr().out.startswith("#1 ")
    assert moderate(database_url, "lift", "1") == 0
    assert capsys.readouterr().out.strip() == "lifted sanction #1 (mute of bob)"
    storage.close()


def test_a_moderator_removes_chat_messages(
    database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A muted player's earlier messages stayed listed to everyone at the table
    (noticed 2026-12-07). ``nard moderate remove`` takes messages away, by number (as
    ``nard reports`` shows a reported one's) or every one ``--from`` a player: kept
    with when, by whom and why (and in the report, as it was), no longer listed."""
    app, storage = app_on(database_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob, TestClient(app) as cat:
        ann_h, bob_h, cat_h = csrf(register(ann, "ann")), csrf(register(bob, "bob")), guest(cat)
        table = new_table(ann, ann_h, opponent="person", match_length=3)
        tid = table["id"]
        join(table, bob, bob_h)
        rude = _say(bob, bob_h, tid, "rude").json()
        assert _say(ann, ann_h, tid, "please stop").status_code == 201
        assert _say(bob, bob_h, tid, "buy gold").status_code == 201
        spectators = _say(cat, cat_h, tid, "watching").json()  # the other channel
        report = {"reason": "insults", "message_id": rude["id"]}
        assert ann.post("/api/reports", json=report, headers=ann_h).status_code == 201
        assert main(["reports", "--database-url", database_url]) == 0
        assert f"message #{rude['id']} " in capsys.readouterr().out
        assert moderate(database_url, "remove", str(rude["id"]), "--reason", "insults",
                        "--by", "mod-1") == 0  # fmt: skip
        assert capsys.readouterr().out.strip() == (
            "removed 1 message(s) at 1 table(s): insults; pages open now show them until "
            "reloaded (with --redis-url, at once)"
        )
        assert _texts(ann, tid) == _texts(bob, tid) == ["please stop", "buy gold"]
        [kept] = [storage.chat_message(rude["id"])]
        assert kept is not None and kept.text == "rude"
        assert (kept.removed_by, kept.removed_reason) == ("mod-1", "insults")
        assert storage.reports()[0].message_text == "rude"  # the report keeps it
        # Again, with another that is not there: refused, nothing changes.
        assert moderate(database_url, "remove", str(rude["id"]), "99999", "--reason", "x") == 2
        assert "no chat message #99999 (nard reports shows" in capsys.readouterr().err
        assert moderate(database_url, "remove", str(rude["id"]), "--reason", "x") == 0
        assert "removed 0 message(s) at 0 table(s) (1 removed before)" in capsys.readouterr().out
        # Every message of a player, wherever it was said.
        assert moderate(database_url, "remove", "--from", "BOB", "--reason", "spam") == 0
        assert capsys.readouterr().out.startswith("removed 1 message(s) of bob at 1 table(s)")
        assert _texts(ann, tid) == ["please stop"]
        assert _texts(cat, tid) == ["watching"]
        assert storage.chat_message(spectators["id"]).removed_at is None  # type: ignore[union-attr]
        for wrong in (
            ["remove", "--reason", "x"],
            ["remove", "1", "--from", "bob", "--reason", "x"],
            ["remove", "1", "--reason", "bad\x00reason"],
            ["remove", "--from", "nobody", "--reason", "x"],
        ):
            assert moderate(database_url, *wrong) == 2, wrong
            assert capsys.readouterr().err.startswith("nard: error: ")
    storage.close()


def test_removed_messages_leave_the_pages_through_redis(
    sqlite_url: str, redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With ``--redis-url`` every process takes the removed messages from the pages it
    serves at their tables: ``{"type": "chat_removed", "ids"}`` on their sockets."""
    settings = replace(make_settings(sqlite_url, tmp_path), redis_url=redis_url)
    storage = Storage(sqlite_url)
    app = create_app(settings, storage, server_seeds=seeded(1))
    with TestClient(app) as ann, TestClient(app) as bob:
        eventually(lambda: subscribed(ann))
        ann_h, bob_h = csrf(register(ann, "ann")), csrf(register(bob, "bob"))
        table = new_table(ann, ann_h, opponent="person", match_length=3)
        join(table, bob, bob_h)
        rude = _say(bob, bob_h, table["id"], "rude").json()
        with ann.websocket_connect(f"/ws/tables/{table['id']}") as socket:
            assert socket.receive_json()["type"] == "table"
            assert main(["moderate", "remove", str(rude["id"]), "--reason", "insults",
                         "--database-url", sqlite_url, "--redis-url", redis_url]) == 0  # fmt: skip
            assert (
                capsys.readouterr()
                .out.rstrip()
                .endswith("the pages open at those tables were told through Redis")
            )
            while (message := socket.receive_json())["type"] != "chat_removed":
                pass
            assert message == {"type": "chat_removed", "ids": [rude["id"]]}
    storage.close()


def test_a_suspended_player_is_signed_out_and_cannot_sign_in(
    database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = make_settings(database_url, tmp_path)
    storage = Storage(database_url)
    app = create_app(settings, storage, server_seeds=seeded(1))
    with TestClient(app) as bob, TestClient(app) as phone:
        register(bob, "bob")
        assert login(phone, "bob").status_code == 200
        cookies = [bob.cookies[COOKIE], phone.cookies[COOKIE]]
        assert moderate(database_url, "suspend", "bob", "--reason", "abuse", "--for", "7d") == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0].startswith("suspended bob until ") and out[0].endswith(
            ": abuse (sanction #1)"
        )
        assert out[1].startswith("2 session(s) ended; servers forget them within 10 s")
        refused = login(phone, "bob")
        assert (refused.status_code, refused.json()["error"]["code"]) == (403, "suspended")
        assert refused.json()["error"]["message"].endswith("UTC (abuse)")
        wrong = login(phone, "bob", "not the password")
        assert (wrong.status_code, wrong.json()["error"]["code"]) == (401, "bad_credentials")
    # A process that never saw the sessions (or whose cache forgot them) knows none.
    fresh = create_app(settings, storage, server_seeds=seeded(2))
    with TestClient(fresh) as client:
        for cookie in cookies:
            client.cookies.set(COOKIE, cookie)
            assert client.get("/api/me").json() is None
        # A session made while the suspension lasts (a sign-in racing it) is none either.
        bob_row = storage.player_by_username("bob")
        assert bob_row is not None
        token, _csrf = storage.new_auth_session(bob_row.id)
        client.cookies.set(COOKIE, token)
        assert client.get("/api/me").json() is None
        assert moderate(database_url, "lift", "1") == 0
        assert login(client, "bob").status_code == 200
        assert client.get("/api/me").json()["name"] == "bob"
    storage.close()


def test_a_suspension_closes_the_players_sockets_through_redis(
    sqlite_url: str, redis_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = replace(make_settings(sqlite_url, tmp_path), redis_url=redis_url)
    storage = Storage(sqlite_url)
    app = create_app(settings, storage, server_seeds=seeded(1))
    with TestClient(app) as bob, TestClient(app) as ann:
        eventually(lambda: subscribed(bob))
        headers = csrf(register(bob, "bob"))
        guest(ann, "ann")
        table = new_table(bob, headers, match_length=3)
        with (
            bob.websocket_connect(f"/ws/tables/{table['id']}") as socket,
            ann.websocket_connect(f"/ws/tables/{table['id']}") as watching,
        ):
            assert socket.receive_json()["table"]["you"] == 0
            assert watching.receive_json()["table"]["you"] is None
            assert main(["moderate", "suspend", "bob", "--reason", "abuse",
                         "--database-url", sqlite_url, "--redis-url", redis_url]) == 0  # fmt: skip
            assert capsys.readouterr().out.splitlines()[1] == (
                "1 session(s) ended; the servers were told through Redis"
            )
            assert closed_code(socket) == 4401  # at once, not when the cache forgets it
            assert bob.get("/api/me").json() is None
            watching.send_json({"type": "ping"})  # a spectator's socket stays
            assert watching.receive_json() == {"type": "pong"}
    storage.close()


def test_a_suspended_players_seeks_and_challenges_close(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A suspended player's open tables would start matches nobody plays for them: they
    leave the lobby, their challenges leave the challenged player's list, nobody can
    join them or be paired with their seek; lifted, all is back."""
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as bob, TestClient(app) as ann:
        bob_h, ann_h = csrf(register(bob, "bob")), csrf(register(ann, "ann"))
        seek = bob.post("/api/seeks", json={"match_length": 5}, headers=bob_h).json()
        body = {"opponent": "person", "match_length": 3, "username": "ann"}
        challenge = bob.post("/api/challenges", json=body, headers=bob_h).json()
        assert [t["id"] for t in ann.get("/api/tables").json()] == [seek["id"]]
        assert [t["id"] for t in ann.get("/api/challenges").json()] == [challenge["id"]]
        assert moderate(sqlite_url, "suspend", "bob", "--reason", "abuse") == 0
        capsys.readouterr()
        assert ann.get("/api/tables").json() == []
        assert ann.get("/api/challenges").json() == []
        for table in (seek, challenge):
            joined = ann.post(f"/api/tables/{table['id']}/join", json={}, headers=ann_h)
            body = joined.json()["error"]
            assert (joined.status_code, body["code"]) == (403, "host_suspended"), body
        paired = ann.post("/api/seeks", json={"match_length": 5}, headers=ann_h).json()
        assert paired["id"] != seek["id"] and paired["status"] == "waiting"  # her own
        assert moderate(sqlite_url, "lift", "1") == 0
        assert {t["id"] for t in bob.get("/api/tables").json()} == {seek["id"], paired["id"]}
        assert [t["id"] for t in ann.get("/api/challenges").json()] == [challenge["id"]]
    storage.close()


def test_the_lobby_asks_the_services_clock_whether_a_host_is_suspended(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Joining asked the service's clock and the lobby lists the real one: past the
    suspension's end on the service's clock, its tables were refused nobody and listed
    to nobody. Both lists now ask the service's clock, as joining does."""
    clock = Clock()
    app, storage = app_on(sqlite_url, tmp_path, clock=clock)
    with TestClient(app) as bob, TestClient(app) as ann:
        bob_h, ann_h = csrf(register(bob, "bob")), csrf(register(ann, "ann"))
        seek = bob.post("/api/seeks", json={"match_length": 5}, headers=bob_h).json()
        body = {"opponent": "person", "match_length": 3, "username": "ann"}
        challenge = bob.post("/api/challenges", json=body, headers=bob_h).json()
        assert moderate(sqlite_url, "suspend", "bob", "--reason", "abuse", "--for", "1h") == 0
        capsys.readouterr()
        assert ann.get("/api/tables").json() == []
        clock.now += timedelta(hours=1, minutes=1)  # the suspension is over
        assert [t["id"] for t in ann.get("/api/tables").json()] == [seek["id"]]
        assert [t["id"] for t in ann.get("/api/challenges").json()] == [challenge["id"]]
        paired = ann.post("/api/seeks", json={"match_length": 5}, headers=ann_h).json()
        assert paired["id"] == seek["id"]  # the seek pairs again
        clock.now -= timedelta(minutes=30)  # back inside it
        assert ann.get("/api/challenges").json() == []
    storage.close()


def test_a_guest_is_named_by_number(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as cat:
        ann_h, cat_h = guest(ann, "ann"), guest(cat, "cat")
        table = new_table(ann, ann_h, opponent="person", match_length=3)
        join(table, cat, cat_h)
        cat_id = cat.get("/api/me").json()["id"]
        said = _say(cat, cat_h, table["id"], "buy gold").json()
        body = {"reason": "spam", "message_id": said["id"]}
        assert ann.post("/api/reports", json=body, headers=ann_h).status_code == 201
        # nard reports named the guest "cat (guest 2)", which nard moderate did not take.
        assert main(["reports", "--database-url", sqlite_url]) == 0
        assert f"reported cat (guest #{cat_id}) at table" in capsys.readouterr().out
        assert moderate(sqlite_url, "mute", f"#{cat_id}", "--reason", "spam") == 0
        assert capsys.readouterr().out.startswith(f"muted cat (guest #{cat_id}) until lifted")
        assert _say(cat, cat_h, table["id"], "hi").status_code == 403
        assert moderate(sqlite_url, "list") == 0
        [line] = capsys.readouterr().out.splitlines()
        assert (
            line.startswith("#1 ")
            and f'mute cat (guest #{cat_id}) until lifted by moderator: "spam"' in line
        )
    storage.close()


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["mute", "nobody", "--reason", "x"], "no player 'nobody' (a username, or #ID"),
        (["mute", "#999", "--reason", "x"], "no player '#999'"),
        (["mute", "ann", "--reason", "x", "--for", "3 days"], "--for '3 days': give a whole"),
        (["mute", "ann", "--reason", "x", "--for", "0h"], "--for '0h': give a whole"),
        (["mute", "ann", "--reason", "x", "--for", "99999w"], "at most 100 years"),
        (["mute", "ann", "--reason", "   "], "--reason: give one"),
        (["mute", "ann", "--reason", "x\u202ey"], "--reason: direction override U+202E at"),
        (["mute", "ann", "--reason", "x\x07"], "--reason: control character U+0007 at"),
        (["suspend", "ann", "--reason", "x", "--report", "7"], "--report 7: no such report"),
        (["lift", "5"], "no sanction #5"),
        (["list", "--limit", "0"], "--limit 0: give 1 or more"),
        # Numbers past a 64-bit column were a traceback from the database driver.
        (["lift", "99999999999999999999"], "argument SANCTION: 99999999999999999999 is out"),
        (["list", "--limit", "9" * 20], "argument --limit: 99999999999999999999 is out of range"),
        (["mute", "ann", "--reason", "x", "--report", "9" * 19], "argument --report: 9999"),
        (["lift", "x"], "argument SANCTION: 'x' is not a whole number"),
    ],
)
def test_moderation_refuses_what_it_cannot_do(
    sqlite_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    error: str,
) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann:
        register(ann, "ann")
    assert moderate(sqlite_url, *args) == 2
    err = capsys.readouterr().err
    assert err.startswith("nard: error: ") and error in err and err.count("\n") == 1
    assert storage.sanctions() == []
    storage.close()


def test_a_report_about_someone_else_is_refused(
    sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as ann, TestClient(app) as bob:
        ann_h = csrf(register(ann, "ann"))
        register(bob, "bob")
        body = {"reason": "rude", "username": "bob"}
        assert ann.post("/api/reports", json=body, headers=ann_h).status_code == 201
    assert moderate(sqlite_url, "mute", "ann", "--reason", "x", "--report", "1") == 2
    assert "report #1 is about bob, not ann" in capsys.readouterr().err
    assert storage.sanctions() == []
    storage.close()


def test_moderation_does_not_make_a_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "none" / "nard.db"
    assert moderate(f"sqlite:///{missing}", "list") == 2
    assert "no database at" in capsys.readouterr().err
    assert not missing.parent.exists()
    made = tmp_path / "nard.db"
    made.touch()  # not nard's database
    assert main(["moderate", "list", "--data-dir", str(tmp_path)]) == 2
    assert "cannot moderate in " in capsys.readouterr().err


def test_durations() -> None:
    assert parse_duration("30m") == timedelta(minutes=30)
    assert parse_duration(" 2w ") == timedelta(weeks=2)
    for bad in ("", "1", "1.5h", "-1d", "1y", "01h"):
        with pytest.raises(NardError):
            parse_duration(bad)
