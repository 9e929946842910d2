"""One authority per table: two server processes on one database (and one Redis),
conflicting operations sent to both at the same instant, many times.

The review that found the fault: `end` sent to one process and `next-game` to the
other at once both answered 200, the `end` answer held the dice seed and the table
stayed in play (7 of 20 tries); ending a waiting table on one process while someone
joined on the other revealed the seed of a table in play (29 of 30). Here exactly
one of two conflicting operations wins, the loser gets 409 with the table as it now
is, and the seed is never revealed while the table can still roll.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
from fastapi.testclient import TestClient

from nard.server import create_app
from nard.server.storage import Storage
from tests.server.conftest import make_settings, seeded
from tests.server.helpers import act, contribute, guest, new_table

ROUNDS = 8


@pytest.fixture
def processes(
    database_url: str, redis_url: str, tmp_path: Path
) -> Iterator[tuple[TestClient, TestClient]]:
    """Two apps (server processes) on one database and one Redis, one client each."""
    settings = replace(make_settings(database_url, tmp_path), redis_url=redis_url)
    stores = [Storage(database_url), Storage(database_url)]
    apps = [create_app(settings, stores[i], server_seeds=seeded(i + 1)) for i in range(2)]
    with TestClient(apps[0]) as one, TestClient(apps[1]) as two:
        yield one, two
    for store in stores:
        store.close()


def race(*calls: Callable[[], httpx.Response]) -> list[httpx.Response]:
    """Send the requests at the same instant (threads released by one barrier)."""
    barrier = threading.Barrier(len(calls))

    def run(call: Callable[[], httpx.Response]) -> httpx.Response:
        barrier.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def same_browser(one: TestClient, two: TestClient) -> None:
    two.cookies.set("nard_session", one.cookies["nard_session"])


def one_won(responses: list[httpx.Response], seen: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Exactly one answer is 200; the other is a 409 with the fresh table, which has the
    winner's change (the state both saw was number ``seen``). Returns (the winner's
    table, the loser's body)."""
    codes = sorted(r.status_code for r in responses)
    assert codes == [200, 409], [r.text[:300] for r in responses]
    won = next(r for r in responses if r.status_code == 200).json()
    lost = next(r for r in responses if r.status_code == 409).json()
    # The loser sees the winner's change (the winner's answer may be later still: it
    # comes after the computer's reply).
    assert won["seq"] >= lost["table"]["seq"] > seen, (lost["error"], lost["table"]["seq"], seen)
    return won, lost


def no_early_seed(table: dict[str, Any]) -> None:
    assert (table["server_seed"] is None) == (table["status"] != "finished"), table["status"]


def between_games(client: TestClient, headers: dict[str, str], table: dict[str, Any]) -> Any:
    """Resign the money game in progress (the computer accepts a single game)."""
    while not table["between_games"]:
        legal = table["game"]["legal_actions"]
        command = {"action": "resign", "points": 1} if "resign" in legal else {"action": "roll"}
        table = act(client, table["id"], headers, command)
    return table


def test_end_and_next_game_at_once_on_two_processes(
    processes: tuple[TestClient, TestClient],
) -> None:
    one, two = processes
    headers = guest(one, "ann")
    same_browser(one, two)
    outcomes = {"end": 0, "next-game": 0}
    table = new_table(one, headers, match_length=0)
    for _ in range(ROUNDS):
        table = between_games(one, headers, table)
        tid, seq = table["id"], table["seq"]
        responses = race(
            lambda: one.post(f"/api/tables/{tid}/end", headers=headers),  # noqa: B023
            lambda: two.post(f"/api/tables/{tid}/next-game", headers=headers),  # noqa: B023
        )
        won, lost = one_won(responses, seq)
        no_early_seed(won)
        no_early_seed(lost["table"])
        assert "server_seed" not in str(lost["error"])
        stored = one.get(f"/api/tables/{tid}").json()
        assert stored == two.get(f"/api/tables/{tid}").json()
        no_early_seed(stored)
        if won["status"] == "finished":
            outcomes["end"] += 1
            assert lost["error"]["code"] == "table_closed"
            table = new_table(one, headers, match_length=0)
        else:
            outcomes["next-game"] += 1
            assert lost["error"]["code"] == "game_in_progress"
            assert stored["status"] == "playing" and not stored["between_games"]
            table = stored
    assert sum(outcomes.values()) == ROUNDS


def test_end_and_join_at_once_on_two_processes(processes: tuple[TestClient, TestClient]) -> None:
    one, two = processes
    ann = guest(one, "ann")
    with TestClient(two.app) as bob_client:
        bob = guest(bob_client, "bob")
        for _ in range(ROUNDS):
            table = new_table(one, ann, opponent="person", public=True, contribution="ann")
            tid, seq = table["id"], table["seq"]
            # Both saw the same state: whichever commits first, the other is stale.
            responses = race(
                lambda: one.post(f"/api/tables/{tid}/end?seq={seq}", headers=ann),  # noqa: B023
                lambda: bob_client.post(
                    f"/api/tables/{tid}/join?seq={seq}",  # noqa: B023
                    json={"contribution": "bob"},
                    headers=bob,
                ),
            )
            won, lost = one_won(responses, seq)
            assert lost["error"]["code"] == "stale"
            no_early_seed(won)
            final = one.get(f"/api/tables/{tid}").json()
            no_early_seed(final)
            assert final["status"] in ("finished", "playing")
            if final["status"] == "playing":  # bob sat and the first die was rolled
                assert final["seats"][1]["name"] == "bob" and final["server_seed"] is None


def test_two_people_join_the_last_seat_at_once(processes: tuple[TestClient, TestClient]) -> None:
    one, two = processes
    ann = guest(one, "ann")
    with TestClient(one.app) as bob_client, TestClient(two.app) as cem_client:
        bob, cem = guest(bob_client, "bob"), guest(cem_client, "cem")
        for _ in range(ROUNDS):
            table = new_table(one, ann, opponent="person", public=True, contribution="ann")
            tid = table["id"]
            responses = race(
                lambda: bob_client.post(f"/api/tables/{tid}/join", json={}, headers=bob),  # noqa: B023
                lambda: cem_client.post(f"/api/tables/{tid}/join", json={}, headers=cem),  # noqa: B023
            )
            won, lost = one_won(responses, table["seq"])
            assert lost["error"]["code"] == "table_full"
            assert won["seats"][1]["name"] in ("bob", "cem") and won["status"] == "seeding"


def test_the_same_action_sent_to_both_processes_is_taken_once(
    processes: tuple[TestClient, TestClient],
) -> None:
    one, two = processes
    headers = guest(one, "ann")
    same_browser(one, two)
    table = new_table(one, headers, match_length=5)
    for _ in range(ROUNDS):
        while table["to_act"] != table["you"] or "roll" not in table["game"]["legal_actions"]:
            legal = table["game"]["legal_actions"]
            command = (
                {"action": "play", "play": table["game"]["legal_plays"][0]["play"]}
                if "play" in legal
                else {"action": "take" if "take" in legal else legal[0]}
            )
            table = act(one, table["id"], headers, command)
            if table["status"] != "playing":
                table = new_table(one, headers, match_length=5)
        tid, seq = table["id"], table["seq"]
        body = {"action": "roll", "seq": seq}
        responses = race(
            lambda: one.post(f"/api/tables/{tid}/actions", json=body, headers=headers),  # noqa: B023
            lambda: two.post(f"/api/tables/{tid}/actions", json=body, headers=headers),  # noqa: B023
        )
        won, lost = one_won(responses, seq)
        assert lost["error"]["code"] == "stale"
        record = one.get(f"/api/tables/{tid}/record.json").json()
        rolls = [a for g in record["games"] for a in g["actions"] if a.get("dice")]
        assert len(record["dice"]["log"]) >= 2 * len(rolls) - 2  # no roll was made twice
        table = won


def test_a_contribution_and_the_end_of_the_table_at_once(
    processes: tuple[TestClient, TestClient],
) -> None:
    one, two = processes
    headers = guest(one, "ann")
    same_browser(one, two)
    for _ in range(ROUNDS):
        table = new_table(one, headers, match_length=3, contribution=None)
        tid, seq = table["id"], table["seq"]
        responses = race(
            lambda: one.post(f"/api/tables/{tid}/end?seq={seq}", headers=headers),  # noqa: B023
            lambda: two.post(
                f"/api/tables/{tid}/seed?seq={seq}",  # noqa: B023
                json={"contribution": "ann"},
                headers=headers,
            ),
        )
        won, _lost = one_won(responses, seq)
        no_early_seed(won)
        final = two.get(f"/api/tables/{tid}").json()
        no_early_seed(final)
        if final["status"] == "finished":
            assert final["game"] is None  # ended before any die was rolled
        else:
            assert final["client_seed"] == "ann"
            contribute_again = two.post(
                f"/api/tables/{tid}/seed", json={"contribution": "again"}, headers=headers
            )
            assert contribute_again.status_code == 409


def test_contributions_are_taken_once(processes: tuple[TestClient, TestClient]) -> None:
    one, two = processes
    headers = guest(one, "ann")
    same_browser(one, two)
    table = new_table(one, headers, match_length=3, contribution=None)
    tid = table["id"]
    responses = race(
        lambda: one.post(f"/api/tables/{tid}/seed", json={"contribution": "a"}, headers=headers),
        lambda: two.post(f"/api/tables/{tid}/seed", json={"contribution": "b"}, headers=headers),
    )
    won, lost = one_won(responses, table["seq"])
    assert lost["error"]["code"] in ("contribution_closed", "stale")
    assert won["client_seed"] in ("a", "b") and lost["table"]["client_seed"] == won["client_seed"]
    assert contribute is not None
