"""Two server processes on one database and one Redis: a change made through one
reaches the other's WebSockets and requests.

Each process is an app of its own (its own TableService, cache and event
loop), as uvicorn workers would be. Redis is the one at ``NARD_TEST_REDIS``
(default ``redis://127.0.0.1:6379/0``); without it the test is skipped,
unless ``NARD_REQUIRE_REDIS=1`` (CI).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from redis import Redis

from nard.server import create_app
from nard.server.service import table_channel
from nard.server.storage import Storage
from tests.server.conftest import make_settings, seeded
from tests.server.helpers import act, guest, new_table, simple_command


def receive_table(socket: Any) -> dict[str, Any]:
    message = socket.receive_json()
    assert message["type"] == "table", message
    table: dict[str, Any] = message["table"]
    return table


def test_two_processes_share_tables_through_redis(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    settings = make_settings(database_url, tmp_path)
    settings = type(settings)(**{**settings.__dict__, "redis_url": redis_url})
    first_storage, second_storage = Storage(database_url), Storage(database_url)
    first = create_app(settings, first_storage, server_seeds=seeded(1))
    second = create_app(settings, second_storage, server_seeds=seeded(2))
    with TestClient(first) as one, TestClient(second) as two:
        headers = guest(one, "ann")
        table = new_table(one, headers, match_length=3)
        # The same browser (cookie) on the other process sees the same table.
        two.cookies.set("nard_session", one.cookies["nard_session"])
        assert two.get(f"/api/tables/{table['id']}").json()["seq"] == table["seq"]
        with two.websocket_connect(f"/ws/tables/{table['id']}") as socket:
            seen = receive_table(socket)
            after = act(one, table["id"], headers, simple_command(table))
            # Process two hears of it through Redis and pushes the new state.
            pushed = receive_table(socket)
            while pushed["seq"] < after["seq"]:
                pushed = receive_table(socket)
            assert pushed["seq"] == after["seq"] > seen["seq"]
            assert pushed["game"]["board"] == after["game"]["board"]
        # And its requests see the new state too; acting there continues the game.
        state = two.get(f"/api/tables/{table['id']}").json()
        assert state["seq"] == after["seq"]
        if state["to_act"] == state["you"]:
            moved = act(two, table["id"], headers, simple_command(state))
            assert moved["seq"] > state["seq"]
    first_storage.close()
    second_storage.close()


def service_origin(app: Any) -> str:
    origin: str = app.state.service.origin
    return origin


def test_a_process_hears_only_of_the_tables_it_has_sockets_on(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    """Every commit was announced on one channel that every process read, so each
    process paid for every other process's actions (with two processes on two cores,
    about 0.3 ms of CPU an action). Now a commit goes to its table's channel, which a
    process follows while it has sockets on the table: the other hears nothing of a
    table it does not watch, and hears at once of one it starts watching."""
    import time

    settings = make_settings(database_url, tmp_path)
    settings = type(settings)(**{**settings.__dict__, "redis_url": redis_url})
    stores = [Storage(database_url), Storage(database_url)]
    first = create_app(settings, stores[0], server_seeds=seeded(1))
    second = create_app(settings, stores[1], server_seeds=seeded(2))
    heard: list[str] = []  # what process two hears on Redis
    service = second.state.service
    on_message = service._on_message

    async def hearing(data: Any) -> None:
        heard.append(data.decode() if isinstance(data, bytes) else str(data))
        await on_message(data)

    service._on_message = hearing
    redis = Redis.from_url(redis_url)

    def subscribers() -> int:
        """Processes following the table's channel."""
        counts = dict(redis.pubsub_numsub(table_channel(table["id"])))
        return int(next(iter(counts.values())))

    with TestClient(first) as one, TestClient(second) as two:
        deadline = time.monotonic() + 20
        while two.get("/readyz").json()["redis"] != "up":
            assert time.monotonic() < deadline, "process two never subscribed"
            time.sleep(0.02)
        headers = guest(one, "ann")
        table = new_table(one, headers, match_length=7)
        for _ in range(6):
            table = act(one, table["id"], headers, simple_command(table))
        # Process one has published six commits; two, with no socket there, heard none.
        # A socket on two follows the table from then on.
        assert [m for m in heard if m.startswith(("table ", "chat "))] == []
        two.cookies.set("nard_session", one.cookies["nard_session"])
        with two.websocket_connect(f"/ws/tables/{table['id']}") as socket:
            seen = receive_table(socket)
            after = act(one, table["id"], headers, simple_command(table))
            pushed = receive_table(socket)
            while pushed["seq"] < after["seq"]:
                pushed = receive_table(socket)
            assert pushed["seq"] == after["seq"] > seen["seq"]
            assert subscribers() == 1
        # The socket closed, two leaves the table's channel.
        while subscribers() != 0:
            assert time.monotonic() < deadline + 20, "process two never left the channel"
            time.sleep(0.02)
        assert any(m.startswith(f"table {service_origin(first)} {table['id']} ") for m in heard)
        counted = [
            float(line.split()[1])
            for line in two.get("/metrics").text.splitlines()
            if line.startswith("nard_redis_messages_total ")
        ]
        assert counted and counted[0] >= 1.0  # operators see what a process hears
    redis.close()
    for store in stores:
        store.close()


def test_a_table_nobody_else_follows_costs_redis_nothing(
    database_url: str, redis_url: str, tmp_path: Path
) -> None:
    """Every commit was published on its table's channel even when no other process
    followed the table: a round trip to Redis, a thread's wake-up and the fight for
    Python's lock, about a quarter of a serving process's time with two processes
    (py-spy, ``bench/server_load.py --processes 2``). Now a process announces a table
    only while another says it follows it; a commit made before it heard so is
    announced when it hears; a follower killed outright is forgotten."""
    import time

    from nard.server.service import CHANNEL

    settings = make_settings(database_url, tmp_path)
    settings = type(settings)(**{**settings.__dict__, "redis_url": redis_url})
    stores = [Storage(database_url), Storage(database_url)]
    first = create_app(settings, stores[0], server_seeds=seeded(1))
    second = create_app(settings, stores[1], server_seeds=seeded(2))
    announcing = first.state.service
    redis = Redis.from_url(redis_url)
    spy = redis.pubsub()  # a pattern: not counted among a channel's subscribers
    spy.psubscribe(table_channel("*"))
    deadline = time.monotonic() + 30

    def published(table_id: str) -> list[str]:
        """What was announced on the table's channel since last asked."""
        found = []
        while (message := spy.get_message(timeout=0.3)) is not None:
            if message["type"] == "pmessage" and message["channel"].decode() == table_channel(
                table_id
            ):
                found.append(message["data"].decode())
        return found

    def until(condition: Any, what: str) -> None:
        while not condition():
            assert time.monotonic() < deadline, what
            time.sleep(0.02)

    with TestClient(first) as one, TestClient(second) as two:
        for client in (one, two):
            until(lambda c=client: c.get("/readyz").json()["redis"] == "up", "not subscribed")
        headers = guest(one, "ann")
        table = new_table(one, headers, match_length=7)
        for _ in range(4):
            table = act(one, table["id"], headers, simple_command(table))
        assert published(table["id"]) == []  # nobody else follows it
        announced = [
            line
            for line in one.get("/metrics").text.splitlines()
            if line.startswith("nard_redis_published_total ")
        ]
        assert announced  # operators see what a process publishes
        # Process two follows the table (a socket there); process one hears of it
        # late, after a commit: that commit is announced when it hears.
        held: list[tuple[str, list[str]]] = []  # follows heard by process one, held back
        hear_follow = announcing._heard_follow

        def holding(origin: str, tables: list[str]) -> None:
            held.append((origin, list(tables)))

        announcing._heard_follow = holding
        two.cookies.set("nard_session", one.cookies["nard_session"])
        with two.websocket_connect(f"/ws/tables/{table['id']}") as socket:
            seen = receive_table(socket)
            until(lambda: held, "process one never heard that two follows the table")
            after = act(one, table["id"], headers, simple_command(table))
            assert published(table["id"]) == []
            assert one.portal is not None
            for origin, tables in held:
                one.portal.call(hear_follow, origin, tables)
            announcing._heard_follow = hear_follow
            pushed = receive_table(socket)
            while pushed["seq"] < after["seq"]:
                pushed = receive_table(socket)
            assert pushed["seq"] == after["seq"] > seen["seq"]
            # Followed: every commit is announced now.
            table = act(one, table["id"], headers, simple_command(after))
            until(lambda: published(table["id"]), "a followed table's commit not announced")
        # The socket closed: two unfollows, one stops announcing.
        until(lambda: not announcing._followers.get(table["id"]), "never heard unfollow")
        published(table["id"])
        table = act(one, table["id"], headers, simple_command(table))
        assert published(table["id"]) == []
        # A follower that dies without a word (a process killed outright): its
        # subscription is gone, and the check forgets it.
        ghost = redis.pubsub()
        ghost.subscribe(table_channel(table["id"]))
        ghost.get_message(timeout=1)
        redis.publish(CHANNEL, f"follow ghost {table['id']}")
        until(lambda: announcing._followers.get(table["id"]), "never heard the ghost")
        assert one.portal.call(announcing.check_followers) == 0  # still subscribed
        # Each process that had the table in hand announced it once for the ghost.
        assert published(table["id"])
        ghost.close()
        until(
            lambda: (
                not dict(redis.pubsub_numsub(table_channel(table["id"])))
                or not any(dict(redis.pubsub_numsub(table_channel(table["id"]))).values())
            ),
            "the ghost never left",
        )
        assert one.portal.call(announcing.check_followers) == 1
        table = act(one, table["id"], headers, simple_command(table))
        assert published(table["id"]) == []
        # A follow lost on its way (Redis failed to take it): the follower's reminder
        # (every minute) brings the announcements back.
        lost: list[str] = []
        announcing._heard_follow = lambda origin, tables, reminder=False: lost.append(origin)
        with two.websocket_connect(f"/ws/tables/{table['id']}") as socket:
            seen = receive_table(socket)
            until(lambda: lost, "the follow never came")
            announcing._heard_follow = hear_follow
            after = act(one, table["id"], headers, simple_command(table))
            assert published(table["id"]) == []  # one does not know two follows
            assert two.portal is not None
            two.portal.call(second.state.service.remind_followed)
            pushed = receive_table(socket)
            while pushed["seq"] < after["seq"]:
                pushed = receive_table(socket)
            assert pushed["seq"] == after["seq"] > seen["seq"]
    spy.close()
    redis.close()
    for store in stores:
        store.close()
