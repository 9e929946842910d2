"""Driving the API in tests: sign in, create tables, play whole games."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from fastapi.testclient import TestClient


def guest(client: TestClient, name: str = "ann") -> dict[str, str]:
    """Sign ``client`` in as a guest; returns the CSRF header to send."""
    response = client.post("/api/guest", json={"name": name})
    assert response.status_code == 200, response.text
    return {"X-CSRF-Token": response.json()["csrf_token"]}


def new_table(
    client: TestClient,
    headers: dict[str, str],
    *,
    contribution: str | None = "my contribution",
    **settings: Any,
) -> dict[str, Any]:
    """A new table; the creator then gives ``contribution`` to the dice (None: not yet),
    which starts a table against the computer."""
    body = {"opponent": "computer", "level": "expert", "match_length": 1, **settings}
    response = client.post("/api/tables", json=body, headers=headers)
    assert response.status_code == 201, response.text
    table: dict[str, Any] = response.json()
    if contribution is not None:
        table = contribute(client, table["id"], headers, contribution)
    return table


def contribute(
    client: TestClient, table_id: str, headers: dict[str, str], contribution: str
) -> dict[str, Any]:
    """Give the caller's contribution to the table's dice."""
    response = client.post(
        f"/api/tables/{table_id}/seed", json={"contribution": contribution}, headers=headers
    )
    assert response.status_code == 200, response.text
    table: dict[str, Any] = response.json()
    return table


def join(
    table: dict[str, Any], client: TestClient, headers: dict[str, str], contribution: str = "b"
) -> dict[str, Any]:
    """``client`` takes the open seat of ``table`` by its invite, giving its contribution."""
    response = client.post(
        f"/api/tables/{table['id']}/join",
        json={"invite": table["invite"], "contribution": contribution},
        headers=headers,
    )
    assert response.status_code == 200, response.text
    joined: dict[str, Any] = response.json()
    return joined


def simple_command(table: dict[str, Any]) -> dict[str, Any]:
    """A legal command for the seat to act: the first play listed, take, roll, accept."""
    game = table["game"]
    legal = game["legal_actions"]
    if "play" in legal:
        return {"action": "play", "play": game["legal_plays"][0]["play"]}
    for action in ("roll", "take", "accept"):
        if action in legal:
            return {"action": action}
    raise AssertionError(f"no simple command among {legal}")


def act(
    client: TestClient, table_id: str, headers: dict[str, str], command: dict[str, Any]
) -> dict[str, Any]:
    response = client.post(f"/api/tables/{table_id}/actions", json=command, headers=headers)
    assert response.status_code == 200, response.text
    table: dict[str, Any] = response.json()
    return table


def play_until(
    client: TestClient,
    table: dict[str, Any],
    headers: dict[str, str],
    *,
    actions: int | None = None,
) -> dict[str, Any]:
    """Act for the caller's seat until the table stops waiting for it (or ``actions``)."""
    done = 0
    while table["status"] == "playing" and table["to_act"] == table["you"]:
        if actions is not None and done == actions:
            break
        table = act(client, table["id"], headers, simple_command(table))
        done += 1
        assert done < 2000, "the game did not end"
    return table


def eventually(check: Callable[[], object], what: str = "", limit: float = 20.0) -> None:
    """Wait (bounded) for the server's background work to make ``check`` true."""
    deadline = time.monotonic() + limit
    while not check():
        assert time.monotonic() < deadline, f"never: {what}" if what else "never happened"
        time.sleep(0.02)
