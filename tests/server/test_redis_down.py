"""Several processes, supervised: a process whose Redis subscription drops serves
correct state from the database meanwhile, says so in readiness, reconnects with
back-off and resynchronises every watched table when Redis comes back.

The review saw a process whose subscription dropped show move 2 of a table at move 8,
silently, with nothing to restart its listener.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi.testclient import TestClient
from redis import Redis

from nard import __version__
from nard.server import create_app
from nard.server.storage import Storage
from tests.server.conftest import make_settings, seeded
from tests.server.helpers import act, eventually, guest, new_table, simple_command
from tests.server.proxy import TcpProxy

FAST = {"poll_interval": 0.05, "redis_backoff": (0.05, 0.2)}


def readiness(client: TestClient) -> dict[str, Any]:
    result: dict[str, Any] = client.get("/readyz").json()
    return result


def next_table_message(socket: Any, after: int) -> dict[str, Any]:
    while True:
        message = socket.receive_json()
        if message["type"] == "table" and message["table"]["seq"] > after:
            table: dict[str, Any] = message["table"]
            return table


def test_a_process_cut_off_from_redis_stays_correct_and_recovers(
    sqlite_url: str, redis_url: str, tmp_path: Path
) -> None:
    target = urlsplit(redis_url)
    proxy = TcpProxy((target.hostname or "127.0.0.1", target.port or 6379))
    base = make_settings(sqlite_url, tmp_path)
    stores = [Storage(sqlite_url), Storage(sqlite_url)]
    first = create_app(replace(base, redis_url=redis_url), stores[0], server_seeds=seeded(1))
    second = create_app(
        replace(base, redis_url=proxy.url), stores[1], server_seeds=seeded(2), service_options=FAST
    )
    try:
        with TestClient(first) as one, TestClient(second) as two:
            headers = guest(one, "ann")
            two.cookies.set("nard_session", one.cookies["nard_session"])
            table = new_table(one, headers, match_length=7)
            eventually(lambda: readiness(two)["redis"] == "up", "the subscription is up")
            eventually(lambda: readiness(two)["engine"] == "warm", "the engine is warm")
            with two.websocket_connect(f"/ws/tables/{table['id']}") as socket:
                seen = next_table_message(socket, -1)
                proxy.cut()
                eventually(lambda: readiness(two)["status"] == "degraded", "readiness says so")
                assert readiness(two) == {
                    "status": "degraded",
                    "version": __version__,
                    "database": "ok",
                    "migration": "current",
                    "redis": "down",
                    "engine": "warm",
                }
                # Changes made elsewhere while the subscription is down...
                for _ in range(3):
                    table = act(one, table["id"], headers, simple_command(table))
                # ...are read from the database by requests and pushed by polling.
                assert two.get(f"/api/tables/{table['id']}").json()["seq"] == table["seq"]
                assert next_table_message(socket, seen["seq"])["seq"] >= seen["seq"] + 1
                proxy.restore()
                eventually(lambda: readiness(two)["status"] == "ready", "the subscription is back")
                before = table["seq"]
                table = act(one, table["id"], headers, simple_command(table))
                pushed = next_table_message(socket, before)
                while pushed["seq"] < table["seq"]:
                    pushed = next_table_message(socket, pushed["seq"])
                assert pushed["seq"] == table["seq"]
            metrics = two.get("/metrics").text
            assert "nard_redis_up 1.0" in metrics
            assert "nard_redis_reconnects_total 1.0" in metrics
    finally:
        proxy.cut()
        for store in stores:
            store.close()


def test_publishing_to_the_other_processes_never_holds_up_a_request(
    sqlite_url: str, redis_url: str, tmp_path: Path, monkeypatch: Any
) -> None:
    """A committed change was announced on Redis by a synchronous round trip on the
    event loop: every request in flight waited for it (with two processes on two
    cores, about 40% of a process's active time). Now a thread of its own publishes
    the announcements, in order, after the answer is on its way: here Redis's
    answers to publishing are held back, and the action is answered meanwhile."""
    import threading

    import nard.server.service as service_module
    from nard.server.service import CHANNEL, TABLE_CHANNEL

    release = threading.Event()
    published: list[str] = []

    class HeldBack:
        """A Redis client whose publishing completes only once ``release`` is set,
        published directly or through a pipeline."""

        def __init__(self) -> None:
            self.pending: list[str] = []

        def pipeline(self, transaction: bool = True) -> HeldBack:
            return HeldBack()

        def publish(self, channel: str, message: str) -> None:
            assert channel.startswith(TABLE_CHANNEL) or channel == CHANNEL
            self.pending.append(message)
            if self is client_itself:  # a direct publish waits for the answer
                self.execute()

        def execute(self) -> None:
            release.wait(15)
            published.extend(self.pending)
            self.pending.clear()

        def close(self) -> None:
            pass

    client_itself = HeldBack()

    class Factory:
        @staticmethod
        def from_url(url: str, **options: Any) -> HeldBack:
            return client_itself

    monkeypatch.setattr(service_module, "SyncRedis", Factory)
    store = Storage(sqlite_url)
    app = create_app(
        replace(make_settings(sqlite_url, tmp_path), redis_url=redis_url),
        store,
        server_seeds=seeded(1),
    )
    try:
        with TestClient(app) as client:
            eventually(lambda: readiness(client)["status"] == "ready", "ready")
            headers = guest(client, "ann")
            table = new_table(client, headers, match_length=3)
            before = table["seq"]
            # Another process follows the table (a table nobody else follows is not
            # announced at all).
            service = app.state.service
            other = Redis.from_url(redis_url)
            other.publish(CHANNEL, f"follow other {table['id']}")
            other.close()
            eventually(lambda: service._followers.get(table["id"]), "the follow heard")
            table = act(client, table["id"], headers, simple_command(table))
            assert table["seq"] > before
            answered_while_held = list(published)
            release.set()
            eventually(
                lambda: "table " in " ".join(published) and table["id"] in " ".join(published),
                "the announcement is published once Redis answers",
            )
        assert answered_while_held == []  # the answer did not wait for Redis
        mine = [m for m in published if m.startswith("table ") and table["id"] in m]
        seqs = [int(m.split()[3]) for m in mine]
        assert seqs == sorted(seqs) and seqs[-1] >= before + 1  # in order, none lost
    finally:
        release.set()
        store.close()
