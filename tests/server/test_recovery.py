"""No stuck tables: whatever the next decision belongs to the computer, loading the
table starts its turn, exactly once across processes (a lease in the database).

The review killed the server (SIGKILL) while the computer was thinking: after a
restart the player got 409 `not_your_turn` for everything, forever (12 of 12 kills,
SQLite and PostgreSQL). Here the database is left exactly as such a crash leaves it
(the player's action committed, the computer's lease held by a process that is gone),
and a new process, its clock moved by hand, must take the turn once the lease has
expired and not before. tests/server/test_chaos.py kills real server processes.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from nard.server import create_app
from nard.server.storage import Lease, Storage
from tests.server.conftest import make_settings, seeded
from tests.server.helpers import act, guest, new_table


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


def until_the_play(client: TestClient, headers: dict[str, str], table: dict[str, Any]) -> Any:
    """Act until the player has dice to play (the computer moves next after the play)."""
    while "play" not in table["game"]["legal_actions"]:
        legal = table["game"]["legal_actions"]
        table = act(client, table["id"], headers, {"action": "take" if "take" in legal else "roll"})
    return table


def test_a_table_left_by_a_dead_process_continues(database_url: str, tmp_path: Path) -> None:
    settings = make_settings(database_url, tmp_path)
    first_store = Storage(database_url)
    first = create_app(settings, first_store, server_seeds=seeded(4))
    with TestClient(first) as client:
        headers = guest(client)
        cookie = client.cookies["nard_session"]
        table = until_the_play(client, headers, new_table(client, headers, match_length=5))
    # The crash: the player's play committed with the lease of a process that then died.
    crashed_at = datetime.now(UTC)
    first_store.commit(
        table["id"],
        table["seq"],
        [(0, {"action": "play", "play": table["game"]["legal_plays"][0]["play"]})],
        status="playing",
        lease=Lease("dead-process", crashed_at + timedelta(seconds=settings.computer_lease)),
    )
    first_store.close()

    clock = Clock()
    second_store = Storage(database_url)
    second = create_app(settings, second_store, service_options={"clock": clock})
    with TestClient(second) as client:
        client.cookies.set("nard_session", cookie)
        # While the dead process's lease may still be live, nobody else thinks...
        clock.now = crashed_at + timedelta(seconds=1)
        waiting = client.get(f"/api/tables/{table['id']}").json()
        assert waiting["seq"] == table["seq"] + 1 and waiting["to_act"] == 1
        refused = client.post(
            f"/api/tables/{table['id']}/actions", json={"action": "roll"}, headers=headers
        )
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "not_your_turn"
        # ...and once it has expired, loading the table starts the computer's turn.
        clock.now = crashed_at + timedelta(seconds=settings.computer_lease + 1)
        resumed = client.get(f"/api/tables/{table['id']}").json()
        assert resumed["seq"] > waiting["seq"]
        assert resumed["to_act"] == 0 or resumed["status"] == "finished"
        if resumed["status"] == "playing":
            act(
                client,
                table["id"],
                headers,
                {"action": "roll"}
                if "roll" in resumed["game"]["legal_actions"]
                else {"action": "take"},
            )
    second_store.close()


def test_a_failing_computer_does_not_strand_the_table(
    sqlite_url: str, tmp_path: Path, monkeypatch: Any
) -> None:
    """A decision that raises is logged, its lease given back, and tried again on the
    next load (the review saw a 500 with the action stored and the table stuck)."""
    import nard.server.service as service_module
    from nard.computer import computer_command as real

    failures = [1]

    def flaky(*args: Any) -> Any:
        if failures:
            failures.pop()
            raise RuntimeError("the engine fell over")
        return real(*args)

    app = create_app(
        make_settings(sqlite_url, tmp_path), Storage(sqlite_url), server_seeds=seeded(4)
    )
    with TestClient(app) as client:
        headers = guest(client)
        table = until_the_play(client, headers, new_table(client, headers, match_length=5))
        monkeypatch.setattr(service_module, "computer_command", flaky)
        played = act(
            client,
            table["id"],
            headers,
            {"action": "play", "play": table["game"]["legal_plays"][0]["play"]},
        )
        assert played["to_act"] == 1 and not failures  # the computer failed once
        again = client.get(f"/api/tables/{table['id']}").json()
        assert again["seq"] > played["seq"] and (
            again["to_act"] == 0 or again["status"] == "finished"
        )
        metrics = client.get("/metrics").text
        assert "nard_computer_failures_total 1.0" in metrics
