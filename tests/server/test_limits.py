"""Abuse limits, through the app: the review found none, and a single client could
create guests, accounts, tables, hints and actions without end, open any number of
WebSockets, hold the server up by not reading its socket, and fill its memory with
tables. Each limit now refuses the one request past it (429 ``rate_limited`` with
``Retry-After``; sockets closed with 4429) and leaves everyone else alone.

The memory limits run on a clock the tests move (``create_app`` builds its
:class:`RateLimits` with the wall clock: the tests replace the class the app module
uses); Redis keeps its own time, so the shared limits count per day.
"""

from __future__ import annotations

import asyncio
import functools
import re
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import redis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

import nard.server.app as app_module
from nard.server import create_app
from nard.server.abuse import RateLimits
from nard.server.service import NewTable, TableService, Watcher
from nard.server.storage import Storage
from nard.server.tables import TableRules
from tests.server.conftest import make_settings, seeded
from tests.server.helpers import eventually, guest, new_table

LIMITS = "guest=5/minute register=2/minute table=3/minute hint=2/minute action=20/minute"
START = 20_000 * 86_400.0  # on every window's boundary
ANN, BOB = "203.0.113.7", "198.51.100.20"


class Clock:
    """The time the memory rate limits see; the test moves it."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def refusal(response: Any) -> tuple[int, str]:
    body = response.json()
    assert set(body["error"]) == {"code", "message"} and body["error"]["message"], body
    return response.status_code, body["error"]["code"]


def rate_limited(response: Any) -> int:
    """The seconds a 429 says to wait (and that it is one)."""
    assert refusal(response) == (429, "rate_limited"), response.text
    seconds = int(response.headers["Retry-After"])
    assert seconds >= 1
    return seconds


def metric(exposition: str, name: str) -> float:
    """A sample's value in Prometheus's text format."""
    found = re.search(rf"^{re.escape(name)} (\S+)$", exposition, re.MULTILINE)
    assert found is not None, f"no {name} in the metrics"
    return float(found.group(1))


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(app_module, "RateLimits", functools.partial(RateLimits, clock=clock))
    return clock


@pytest.fixture
def limited(sqlite_url: str, tmp_path: Path, clock: Clock) -> Iterator[FastAPI]:
    """An app with the limits on, taking client addresses from X-Forwarded-For."""
    storage = Storage(sqlite_url)
    settings = replace(make_settings(sqlite_url, tmp_path, trust_proxy=True), limits=LIMITS)
    yield create_app(settings, storage, server_seeds=seeded(1))
    storage.close()


def client_at(app: FastAPI, address: str) -> TestClient:
    return TestClient(app, headers={"X-Forwarded-For": address})


# -- per address, per player -------------------------------------------------------------


def test_guests_per_address(limited: FastAPI, clock: Clock) -> None:
    with client_at(limited, ANN) as ann, client_at(limited, BOB) as bob:
        for n in range(5):
            assert ann.post("/api/guest", json={"name": f"guest {n}"}).status_code == 200
        wait = rate_limited(ann.post("/api/guest", json={"name": "one more"}))
        assert bob.post("/api/guest", json={"name": "bob"}).status_code == 200
        clock.now += wait
        assert ann.post("/api/guest", json={"name": "later"}).status_code == 200


def test_registrations_per_address(limited: FastAPI) -> None:
    with client_at(limited, ANN) as ann, client_at(limited, BOB) as bob:
        for name in ("ann1", "ann2"):
            ann.cookies.clear()
            me = ann.post("/api/register", json={"username": name, "password": "long enough"})
            assert me.status_code == 200, me.text
        ann.cookies.clear()
        third = ann.post("/api/register", json={"username": "ann3", "password": "long enough"})
        rate_limited(third)
        ok = bob.post("/api/register", json={"username": "bob", "password": "long enough"})
        assert ok.status_code == 200
        # The refused name was not taken.
        assert ann.post("/api/login", json={"username": "ann3", "password": "long enough"}).json()[
            "error"
        ]["code"] == ("bad_credentials")


def test_tables_per_player_and_address(limited: FastAPI) -> None:
    body = {"opponent": "computer", "level": "expert", "match_length": 1}
    with (
        client_at(limited, ANN) as ann,
        client_at(limited, BOB) as bob,
        client_at(limited, ANN) as ann_flatmate,
    ):
        headers = guest(ann, "ann")
        for _ in range(3):
            assert ann.post("/api/tables", json=body, headers=headers).status_code == 201
        rate_limited(ann.post("/api/tables", json=body, headers=headers))
        assert len(ann.get("/api/my-tables").json()) == 3
        # Another player elsewhere is not affected...
        bob_headers = guest(bob, "bob")
        assert bob.post("/api/tables", json=body, headers=bob_headers).status_code == 201
        # ...but tables are counted per address as well: a second guest from ann's
        # address does not get three more.
        flatmate = guest(ann_flatmate, "carol")
        rate_limited(ann_flatmate.post("/api/tables", json=body, headers=flatmate))


def test_hints_per_player(limited: FastAPI) -> None:
    with client_at(limited, ANN) as ann, client_at(limited, BOB) as bob:
        headers = guest(ann, "ann")
        table = new_table(ann, headers, match_length=5)
        for _ in range(2):
            assert ann.get(f"/api/tables/{table['id']}/hint").status_code == 200
        rate_limited(ann.get(f"/api/tables/{table['id']}/hint"))
        bob_headers = guest(bob, "bob")
        bob_table = new_table(bob, bob_headers, match_length=5)
        assert bob.get(f"/api/tables/{bob_table['id']}/hint").status_code == 200


def test_actions_per_player(limited: FastAPI) -> None:
    """Every request that changes a table counts (a contribution, a refused action),
    over HTTP and over the socket alike."""
    with client_at(limited, ANN) as ann, client_at(limited, ANN) as carol:
        headers = guest(ann, "ann")
        table = new_table(ann, headers, match_length=5)  # its contribution: 1 action
        url = f"/api/tables/{table['id']}/actions"
        stale = {"action": "roll", "seq": 0}
        for _ in range(19):
            assert refusal(ann.post(url, json=stale, headers=headers)) == (409, "stale")
        rate_limited(ann.post(url, json=stale, headers=headers))
        with ann.websocket_connect(f"/ws/tables/{table['id']}") as socket:
            assert socket.receive_json()["type"] == "table"
            socket.send_json(stale)
            message = socket.receive_json()
            assert message["type"] == "error" and message["error"]["code"] == "rate_limited"
        assert ann.get(f"/api/tables/{table['id']}").json()["seq"] == table["seq"]
        # Another player, even from the same address, acts at their own pace.
        carol_headers = guest(carol, "carol")
        carol_table = new_table(carol, carol_headers, match_length=5)
        carol_url = f"/api/tables/{carol_table['id']}/actions"
        assert refusal(carol.post(carol_url, json=stale, headers=carol_headers)) == (
            409,
            "stale",
        )


# -- shared by processes through Redis --------------------------------------------------


@pytest.fixture
def fresh_redis_counts(redis_url: str) -> Iterator[str]:
    """Redis without this test's table counts (player ids repeat from one fresh
    database to the next, and Redis keeps their counts for a day)."""
    client = redis.Redis.from_url(redis_url, socket_connect_timeout=2)

    def clear() -> None:
        for key in client.scan_iter(match="nard:limits:{LIMITER/table/*"):
            client.delete(key)

    clear()
    yield redis_url
    clear()
    client.close()


def test_limits_are_shared_by_processes_through_redis(
    sqlite_url: str, fresh_redis_counts: str, tmp_path: Path
) -> None:
    """Two processes on one database and one Redis: three tables on one, and the
    fourth on the other is refused."""
    limits = "table=3/day guest= register= login= hint= action="
    settings = replace(
        make_settings(sqlite_url, tmp_path, trust_proxy=True),
        limits=limits,
        redis_url=fresh_redis_counts,
    )
    stores = [Storage(sqlite_url), Storage(sqlite_url)]
    first = create_app(settings, stores[0], server_seeds=seeded(1))
    second = create_app(settings, stores[1], server_seeds=seeded(2))
    address = f"ann-{uuid.uuid4().hex[:12]}"  # an address no other run has counted
    elsewhere = {"X-Forwarded-For": f"bob-{uuid.uuid4().hex[:12]}"}
    body = {"opponent": "computer", "level": "expert", "match_length": 1}
    # One client per process: each process's Redis connections belong to its event loop.
    with client_at(first, address) as one, client_at(second, address) as two:
        headers = guest(one, "ann")
        two.cookies.set("nard_session", one.cookies["nard_session"])
        for _ in range(3):
            assert one.post("/api/tables", json=body, headers=headers).status_code == 201
        rate_limited(two.post("/api/tables", json=body, headers=headers))
        rate_limited(one.post("/api/tables", json=body, headers=headers))
        # Another player from another address is not affected.
        two.cookies.clear()
        bob = two.post("/api/guest", json={"name": "bob"}, headers=elsewhere)
        bob_headers = {**elsewhere, "X-CSRF-Token": bob.json()["csrf_token"]}
        assert two.post("/api/tables", json=body, headers=bob_headers).status_code == 201
    for store in stores:
        store.close()


# -- WebSockets -------------------------------------------------------------------------


def refused_socket(client: TestClient, url: str, address: str) -> int:
    """Open a socket that the server must refuse; its close code."""
    with (
        pytest.raises(WebSocketDisconnect) as refused,
        client.websocket_connect(url, headers={"X-Forwarded-For": address}) as socket,
    ):
        socket.receive_json()
    return refused.value.code


@pytest.fixture
def few_sockets(sqlite_url: str, tmp_path: Path) -> Iterator[FastAPI]:
    storage = Storage(sqlite_url)
    settings = make_settings(
        sqlite_url, tmp_path, trust_proxy=True, sockets_per_table=2, sockets_per_client=3
    )
    yield create_app(settings, storage, server_seeds=seeded(1))
    storage.close()


def test_sockets_per_table(few_sockets: FastAPI) -> None:
    with TestClient(few_sockets) as client:
        headers = guest(client)
        table = new_table(client, headers, contribution=None)
        other = new_table(client, headers, contribution=None)
        url = f"/ws/tables/{table['id']}"
        service = few_sockets.state.service
        with (
            client.websocket_connect(url, headers={"X-Forwarded-For": "10.0.0.1"}) as first,
            client.websocket_connect(url, headers={"X-Forwarded-For": "10.0.0.2"}) as second,
        ):
            assert first.receive_json()["type"] == "table"
            assert second.receive_json()["type"] == "table"
            assert refused_socket(client, url, "10.0.0.3") == 4429
            # Another table is not affected.
            other_url = f"/ws/tables/{other['id']}"
            with client.websocket_connect(
                other_url, headers={"X-Forwarded-For": "10.0.0.3"}
            ) as third:
                assert third.receive_json()["type"] == "table"
        # Once they are closed, there is room again.
        eventually(lambda: service.watchers(table["id"]) == 0)
        with client.websocket_connect(url, headers={"X-Forwarded-For": "10.0.0.3"}) as again:
            assert again.receive_json()["type"] == "table"


def test_sockets_per_client_address(few_sockets: FastAPI) -> None:
    with TestClient(few_sockets) as client:
        headers = guest(client)
        tables = [new_table(client, headers, contribution=None)["id"] for _ in range(4)]
        here = {"X-Forwarded-For": "10.0.0.1"}
        with (
            client.websocket_connect(f"/ws/tables/{tables[0]}", headers=here) as a,
            client.websocket_connect(f"/ws/tables/{tables[1]}", headers=here) as b,
            client.websocket_connect(f"/ws/tables/{tables[2]}", headers=here) as c,
        ):
            for socket in (a, b, c):
                assert socket.receive_json()["type"] == "table"
            assert refused_socket(client, f"/ws/tables/{tables[3]}", "10.0.0.1") == 4429
            elsewhere = {"X-Forwarded-For": "10.0.0.2"}
            with client.websocket_connect(f"/ws/tables/{tables[3]}", headers=elsewhere) as d:
                assert d.receive_json()["type"] == "table"


# -- a watcher that does not read ---------------------------------------------------------


def test_a_slow_watcher_is_dropped_not_waited_for(sqlite_url: str) -> None:
    """The review watched a table from a client that never read its socket: the server
    queued its messages without end (or waited on it). A watcher's queue is bounded
    now; the one that overflows is dropped (its queue then holds only the sign to
    close), and the players and the other watchers go on as before."""

    async def scenario() -> None:
        storage = Storage(sqlite_url)
        storage.migrate()
        service = TableService(storage, engine_workers=1)
        ann = storage.create_player("ann")
        bob = storage.create_player("bob")
        table = await service.create(ann, NewTable(rules=TableRules(match_length=1), level=None))
        # Ann's sockets get every state at once (spectators get the latest now and then).
        slow = Watcher(ann, None, limit=3)
        reader = Watcher(ann, None, limit=100)
        spectator = Watcher(None, None, limit=3)
        for watcher in (slow, reader, spectator):
            service.watch(table.id, watcher)
        try:
            changes = 0
            for _ in range(4):
                joined = await asyncio.wait_for(
                    service.join(table.id, bob, table.invite_token), timeout=10
                )
                assert joined.seats[1].player_id == bob.id
                left = await asyncio.wait_for(service.leave(table.id, bob), timeout=10)
                assert left.seats[1].is_open
                changes += 2
            assert slow.closed_because is not None and "slow" in slow.closed_because
            assert slow.queue.qsize() == 1 and slow.queue.get_nowait() is None
            assert reader.closed_because is None
            seen = [reader.queue.get_nowait() for _ in range(reader.queue.qsize())]
            assert len(seen) == changes and None not in seen
            assert spectator.closed_because is None and spectator.queue.qsize() >= 1
            # One watcher was dropped, however many changes came after it.
            exposition = service.metrics.exposition().decode()
            assert metric(exposition, "nard_dropped_sockets_total") == 1
        finally:
            service.close()
            storage.close()

    asyncio.run(scenario())


# -- tables in memory ----------------------------------------------------------------------


def test_idle_tables_are_evicted_and_reloaded(sqlite_url: str, tmp_path: Path) -> None:
    storage = Storage(sqlite_url)
    app = create_app(make_settings(sqlite_url, tmp_path), storage, server_seeds=seeded(1))
    service = app.state.service
    with TestClient(app) as client:
        headers = guest(client)
        idle = new_table(client, headers, match_length=3)
        watched = new_table(client, headers, match_length=3)
        before = client.get(f"/api/tables/{idle['id']}").json()
        assert service.cached_tables == 2
        with client.websocket_connect(f"/ws/tables/{watched['id']}") as socket:
            assert socket.receive_json()["type"] == "table"
            assert service._evict(idle=0) == 1  # the watched table stays
            assert service.cached_tables == 1
            assert client.get(f"/api/tables/{idle['id']}").json() == before
            assert service.cached_tables == 2
        assert metric(client.get("/metrics").text, "nard_tables_loaded_total") == 1
    storage.close()


def test_the_cache_holds_at_most_its_size(sqlite_url: str, tmp_path: Path) -> None:
    storage = Storage(sqlite_url)
    settings = make_settings(sqlite_url, tmp_path, table_cache=2)
    app = create_app(settings, storage, server_seeds=seeded(1))
    with TestClient(app) as client:
        headers = guest(client)
        tables = [new_table(client, headers, match_length=3) for _ in range(5)]
        assert app.state.service.cached_tables <= 2
        for table in tables:
            assert client.get(f"/api/tables/{table['id']}").json() == table
        assert app.state.service.cached_tables <= 2
    storage.close()


def test_the_server_evicts_idle_tables_by_itself(sqlite_url: str, tmp_path: Path) -> None:
    storage = Storage(sqlite_url)
    settings = make_settings(sqlite_url, tmp_path, table_idle=0.05)
    app = create_app(settings, storage, server_seeds=seeded(1))
    service = app.state.service
    with TestClient(app) as client:
        headers = guest(client)
        idle = new_table(client, headers, match_length=3)
        watched = new_table(client, headers, match_length=3)
        with client.websocket_connect(f"/ws/tables/{watched['id']}") as socket:
            assert socket.receive_json()["type"] == "table"
            eventually(lambda: service.cached_tables == 1)
            assert client.get(f"/api/tables/{idle['id']}").json() == idle
    storage.close()
