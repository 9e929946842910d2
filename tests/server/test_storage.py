"""Storage on SQLite and PostgreSQL: migrations, appends that never overwrite, seats."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from nard.server.models import Base
from nard.server.storage import ConflictError, Lease, Storage, UsernameTakenError


@pytest.fixture
def storage(database_url: str) -> Iterator[Storage]:
    store = Storage(database_url)
    store.migrate()
    yield store
    store.close()


def make_table(storage: Storage, table_id: str = "t1") -> int:
    player = storage.create_player("ann")
    storage.create_table(
        table_id,
        status="playing",
        settings={"match_length": 1},
        seats=[
            {"player_id": player.id, "level": None, "name": "ann"},
            {"player_id": None, "level": "expert", "name": "nard"},
        ],
        server_seed="00" * 32,
        client_seed="c",
        commitment="ab" * 32,
        invite_token="invite",
        creator_id=player.id,
    )
    return player.id


def test_the_migrations_build_exactly_the_models(storage: Storage) -> None:
    storage.migrate()  # a second run changes nothing
    with storage.engine.connect() as connection:
        context = MigrationContext.configure(connection)
        assert compare_metadata(context, Base.metadata) == []


def test_actions_are_appended_in_order_and_never_overwritten(storage: Storage) -> None:
    make_table(storage)
    storage.append_actions("t1", 0, [(-1, {"action": "opening roll"})], status="playing")
    storage.append_actions(
        "t1",
        1,
        [(0, {"action": "play", "play": "8/5 6/5"}), (1, {"action": "roll"})],
        status="playing",
    )
    with pytest.raises(ConflictError):
        storage.append_actions("t1", 1, [(0, {"action": "double"})], status="playing")
    with pytest.raises(ConflictError):
        storage.append_actions("t1", 7, [(0, {"action": "double"})], status="playing")
    stored = storage.load_table("t1")
    assert stored is not None
    assert [(a.seq, a.seat, a.command["action"]) for a in stored.actions] == [
        (0, -1, "opening roll"),
        (1, 0, "play"),
        (2, 1, "roll"),
    ]
    assert stored.row.action_count == 3


def test_a_seat_is_taken_once(storage: Storage) -> None:
    make_table(storage)
    bob = storage.create_player("bob")
    storage.create_table(
        "t2",
        status="waiting",
        settings={},
        seats=[
            {"player_id": bob.id, "level": None, "name": "bob"},
            {"player_id": None, "level": None, "name": "open seat"},
        ],
        server_seed="00" * 32,
        commitment="ab" * 32,
        invite_token="i",
        creator_id=bob.id,
        public=True,
    )
    assert [t.row.id for t in storage.open_tables(datetime.now(UTC))] == ["t2"]
    carol = storage.create_player("carol")
    dave = storage.create_player("dave")

    def sit(player_id: int, name: str) -> None:
        storage.commit(
            "t2",
            0,
            [(1, {"action": "sit", "player_id": player_id, "name": name})],
            status="seeding",
            seats={1: {"player_id": player_id, "name": name}},
        )

    sit(carol.id, "carol")
    with pytest.raises(ConflictError):  # raced from the same state: nothing written
        sit(dave.id, "dave")
    stored = storage.load_table("t2")
    assert stored is not None and stored.seats[1].player_id == carol.id
    assert [a.command["name"] for a in stored.actions] == ["carol"]
    assert stored.row.status == "seeding" and storage.open_tables(datetime.now(UTC)) == []
    assert {t.row.id for t in storage.tables_of(carol.id)} == {"t2"}


def test_one_process_at_a_time_thinks_for_the_computer(storage: Storage) -> None:
    make_table(storage)
    now = datetime.now(UTC)
    first, second = Lease("first", now + timedelta(seconds=30)), Lease("second", now)
    assert storage.acquire_lease("t1", 0, first)
    assert not storage.acquire_lease("t1", 0, Lease("second", now + timedelta(seconds=30)))
    assert storage.acquire_lease("t1", 0, first)  # its holder may take it again
    assert not storage.acquire_lease("t1", 1, first)  # not at a number the table is not at
    # The next commit ends the lease, unless it hands over the next one.
    storage.commit("t1", 0, [(-1, {"action": "opening roll"})], status="playing", lease=first)
    assert not storage.acquire_lease("t1", 1, second)
    storage.commit("t1", 1, [(0, {"action": "roll"})], status="playing")
    assert storage.acquire_lease("t1", 2, second)  # expires at once: a dead holder's
    assert storage.acquire_lease("t1", 2, Lease("third", now + timedelta(seconds=30)))
    assert storage.release_leases("third") == 1
    assert storage.acquire_lease("t1", 2, first)


def test_usernames_are_unique(storage: Storage) -> None:
    storage.create_player("ann", "ann", "hash")
    with pytest.raises(UsernameTakenError, match="'ann'"):
        storage.create_player("ann", "ann", "hash")
    guest = storage.create_player("guest")
    with pytest.raises(UsernameTakenError):
        storage.upgrade_guest(guest.id, "ann", "hash")
    assert storage.player(guest.id) is not None
    assert storage.player_by_username("ann") is not None


def test_sign_in_tokens_are_stored_hashed(storage: Storage) -> None:
    player = storage.create_player("ann")
    token, csrf = storage.new_auth_session(player.id)
    found = storage.auth_session(token)
    assert found is not None and found[0].id == player.id and found[1] == csrf
    with storage.engine.connect() as connection:
        rows = connection.exec_driver_sql("SELECT token_hash FROM auth_sessions").all()
    assert rows and all(token not in row[0] for row in rows)
    storage.end_auth_session(token)
    assert storage.auth_session(token) is None
    assert storage.auth_session("made up") is None


def test_the_awaited_commit_appends_checks_and_survives_a_dropped_connection(
    storage: Storage,
) -> None:
    """``commit_async`` (the server's path: on PostgreSQL one statement on the loop's
    own connection) writes what ``commit`` writes, refuses a stale sequence number,
    works again on a new event loop, and a kept connection the database dropped is
    replaced without losing or doubling the change."""
    import asyncio

    from sqlalchemy import text

    make_table(storage)
    roll = (0, {"action": "roll"})
    asyncio.run(storage.commit_async("t1", 0, [roll, (0, {"action": "play"})], status="playing"))
    with pytest.raises(ConflictError):
        asyncio.run(storage.commit_async("t1", 1, [roll], status="playing"))

    async def twice() -> None:  # a new loop: new connections
        await storage.commit_async("t1", 2, [roll], status="playing")
        if storage.dialect == "postgresql":  # the server drops every other connection
            with storage.engine.connect() as c:
                c.execute(
                    text(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
                )
        await storage.commit_async("t1", 3, [roll], status="finished")

    asyncio.run(twice())
    assert storage.table_state("t1") == (4, "finished")
    assert [a.seq for a in storage.actions_since("t1", 0)] == [0, 1, 2, 3]
    assert storage.actions_since("t1", 0)[1].command == {"action": "play"}


def test_the_awaited_commit_stores_what_the_thread_commit_stores(storage: Storage) -> None:
    """The server's commit (on PostgreSQL sent through libpq with its parameters as
    text) stores the same rows as ``commit``: commands with quotes, backslashes and
    letters beyond ASCII unchanged, the seats, the lease and the finishing time, the
    status; a second writer of the same numbers is a conflict."""
    import asyncio
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import text

    from nard.server.storage import Lease

    make_table(storage, "t1")
    odd = {"action": "resign", "note": 'a "quoted" back\\slash, نرد, {braces}', "n": [1, 2]}
    until = datetime(2026, 12, 7, 3, 0, 0, 123456, tzinfo=UTC)
    lease = Lease("origin-1", until)
    before = datetime.now(UTC) - timedelta(seconds=5)
    asyncio.run(
        storage.commit_async(
            "t1", 0, [(1, odd), (0, {"action": "roll"})], status="playing", lease=lease
        )
    )
    actions = storage.actions_since("t1", 0)
    assert [(a.seq, a.seat, a.command) for a in actions] == [
        (0, 1, odd),
        (1, 0, {"action": "roll"}),
    ]
    with storage.engine.connect() as c:
        row = c.execute(
            text("SELECT lease_owner, lease_until, finished_at, status FROM tables WHERE id = 't1'")
        ).one()
        created = c.execute(text("SELECT min(created_at) FROM table_actions")).scalar_one()
    assert row[0] == "origin-1" and row[2] is None and row[3] == "playing"
    stored_until = row[1] if isinstance(row[1], datetime) else datetime.fromisoformat(row[1])
    assert stored_until.replace(tzinfo=UTC) == until
    moment = created if isinstance(created, datetime) else datetime.fromisoformat(created)
    assert moment.replace(tzinfo=UTC) >= before
    asyncio.run(storage.commit_async("t1", 2, [(0, {"action": "pass"})], status="finished"))
    with storage.engine.connect() as c:
        row = c.execute(
            text("SELECT lease_owner, lease_until, finished_at, status FROM tables WHERE id = 't1'")
        ).one()
    assert row[0] is None and row[1] is None and row[2] is not None and row[3] == "finished"
    with pytest.raises(ConflictError):
        asyncio.run(storage.commit_async("t1", 2, [(0, {"action": "pass"})], status="finished"))
    assert storage.table_state("t1") == (3, "finished")


def test_the_raw_statements_store_times_as_sqlalchemy_does_on_sqlite() -> None:
    """The commit path writes times itself (not through the ORM); on SQLite they must be
    the text SQLAlchemy writes and reads back, to the microsecond, whatever the zone."""
    from hypothesis import given, settings
    from hypothesis import strategies as st
    from sqlalchemy.dialects import sqlite

    storage = Storage("sqlite://")
    try:
        raw = storage._raw
        assert raw.sqlite
        to_text = sqlite.DATETIME().bind_processor(sqlite.dialect())  # type: ignore[no-untyped-call]
        assert to_text is not None

        @settings(max_examples=300, deadline=None)
        @given(
            st.datetimes(timezones=st.timezones()),
            st.sampled_from([0, 1, 999_999]) | st.integers(0, 999_999),
        )
        def same(moment: datetime, micro: int) -> None:
            moment = moment.replace(microsecond=micro)
            expected = to_text(moment.astimezone(UTC).replace(tzinfo=None))
            assert raw.stored(moment) == expected
            assert raw.moment(raw.stored(moment)) == moment.astimezone(UTC)

        same()
    finally:
        storage.close()
