"""Chaos: the real server killed (SIGKILL) at random moments, on SQLite and PostgreSQL.

The review killed ``nard serve`` while the computer was thinking and the table was
stuck forever after the restart (tests/server/test_recovery.py rebuilds that state by
hand). Here a guest plays a few tables against the computer over HTTP, and the server
process is killed at seeded random moments: mostly just after a play was sent (the
player's action being stored, or the computer deciding, rolling or playing its
answer), sometimes while idle. After each restart on the same database:

1. no acknowledged action is lost: the table's sequence number is at least the one
   the last 200 answer gave, and the record shows exactly the player's plays (and
   takes) that were acknowledged, in order;
2. no table waits forever: a table waiting for the computer is answered within a few
   loads (the dead process's lease, ``NARD_COMPUTER_LEASE`` = 0.2 s, has expired by
   the time the new process answers, so loading it starts the computer's turn);
3. the table continues: the player acts again and gets 200;
4. an action cut off before its answer took effect entirely (stored, in the record,
   and answered by the computer) or not at all;
5. the killed server's own processes (its engine workers) do not outlive it.

The summary line (``pytest -s``) counts the kills that left the computer's turn
pending in the database (its lease held by the dead process) and the actions cut off.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import httpx2 as httpx
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from tests.server.conftest import NO_LIMITS
from tests.server.helpers import simple_command
from tests.server.servers import ServerProcess

KILLS = 8
"""Kills per database. Each costs about 3.5 s here: the restart, and the engine
worker's start before the computer's first decision."""
LEVELS = ("world-class", "expert", "world-class")
"""One table per level: world-class thinks longer (30-500 ms a play), so more kills
land while it does; the expert answers in a few milliseconds, so more actions are
acknowledged just before a kill."""
MAX_DELAY = 0.08
"""The longest wait, in seconds, between sending an action and the kill."""
IDLE_KILLS = 0.12
"""The share of kills with no request in flight."""
SETTLE_LOADS = 10
"""Loads of a table waiting for the computer before it counts as stranded."""
NAME = "ann"
SEED = 20261203
"""The kills' random moments (the dice are the server's own: each run plays other games)."""


class Stored(NamedTuple):
    """A table's row as the killed server left it."""

    seq: int
    status: str
    lease_owner: str | None


@dataclass
class Tracked:
    """One table as the player knows it: what the server acknowledged."""

    id: str
    level: str
    seat: int
    seq: int
    done: list[str] = field(default_factory=list)
    """The player's plays and takes the record must show, in order."""


@dataclass
class Tally:
    """What the kills hit, for the summary line and the failure messages."""

    kills: int = 0
    idle: int = 0
    acknowledged: int = 0
    cut_off_stored: int = 0
    cut_off_not_stored: int = 0
    computer_pending: int = 0
    settle_loads: list[int] = field(default_factory=list)
    log: list[str] = field(default_factory=list)

    def count(self, kill: Kill) -> None:
        assert kill.left is not None
        self.kills += 1
        self.log.append(str(kill))
        if kill.left.status == "playing" and kill.left.lease_owner is not None:
            self.computer_pending += 1  # the dead process held the computer's lease
        if kill.command is None:
            self.idle += 1
        elif kill.answer is not None:
            self.acknowledged += 1
        elif kill.left.seq > kill.seq_before:
            self.cut_off_stored += 1
        else:
            self.cut_off_not_stored += 1

    def why(self, server: ServerProcess) -> str:
        """For a failure: the kills so far (the last one just checked) and the server's
        last words."""
        kills = "\n".join(self.log)
        return f"the kills so far (seed {SEED}):\n{kills}\nthe server's log:\n{server.log_tail()}"


class Player:
    """The guest's side: requests to whichever server process runs now."""

    def __init__(self, server: ServerProcess) -> None:
        self.server = server
        self.client = httpx.Client(timeout=60.0)  # keeps the session cookie across restarts
        self.headers: dict[str, str] = {}

    def close(self) -> None:
        self.client.close()

    def log(self) -> str:
        return f"the server's log:\n{self.server.log_tail()}"

    def url(self, path: str) -> str:
        return self.server.url + path

    def get(self, path: str) -> dict[str, Any]:
        response = self.client.get(self.url(path))
        assert response.status_code == 200, f"GET {path}: {response.text}\n{self.log()}"
        body: dict[str, Any] = response.json()
        return body

    def post(self, path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
        response = self.client.post(self.url(path), json=body, headers=self.headers)
        assert response.status_code == status, f"POST {path} {body}: {response.text}\n{self.log()}"
        answer: dict[str, Any] = response.json()
        return answer

    def sign_in(self) -> None:
        self.headers = {"X-CSRF-Token": self.post("/api/guest", {"name": NAME})["csrf_token"]}

    def new_table(self, level: str) -> Tracked:
        body = {"opponent": "computer", "level": level, "match_length": 5}
        created = self.post("/api/tables", body, status=201)
        view = self.post(f"/api/tables/{created['id']}/seed", {"contribution": f"chaos {level}"})
        assert view["status"] == "playing" and view["to_act"] in (view["you"], None), view
        return Tracked(created["id"], level, view["you"], view["seq"])

    def act(self, table: Tracked, command: dict[str, Any]) -> dict[str, Any]:
        """An action answered with 200: the table after it and the computer's answer."""
        view = self.post(f"/api/tables/{table.id}/actions", {**command, "seq": table.seq})
        assert view["seq"] > table.seq
        table.seq = view["seq"]
        if (done := token(command)) is not None:
            table.done.append(done)
        return view

    def record(self, table: Tracked) -> list[str]:
        """The player's plays and takes in the table's record, in order."""
        record = self.get(f"/api/tables/{table.id}/record.json")
        me = record["players"].index(NAME)
        shown: list[str] = []
        for game in record["games"]:
            for action in game["actions"]:
                if action["player"] != me:
                    continue
                if action["action"] == "move" and action.get("play"):
                    shown.append(f"play {action['play']}")
                elif action["action"] in ("take", "accept"):
                    shown.append(action["action"])
        return shown

    def settle(self, table: Tracked, tally: Tally) -> dict[str, Any]:
        """Load the table until it no longer waits for the computer (check 2)."""
        for loads in range(1, SETTLE_LOADS + 1):
            view = self.get(f"/api/tables/{table.id}")
            if not (view["status"] == "playing" and view["to_act"] == 1 - table.seat):
                tally.settle_loads.append(loads)
                return view
            time.sleep(0.05)  # only if a lease is still live
        raise AssertionError(
            f"table {table.id} ({table.level}) still waits for the computer after "
            f"{SETTLE_LOADS} loads: {view}\n{tally.why(self.server)}"
        )


def token(command: dict[str, Any]) -> str | None:
    """How the record shows the player's command (a roll shows only with its play)."""
    if command["action"] == "play":
        return f"play {command['play']}"
    if command["action"] in ("take", "accept"):
        return str(command["action"])
    return None


def stored(database_url: str, table_id: str) -> Stored:
    """The table's row, read straight from the database while no server runs."""
    engine = create_engine(database_url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            row = conn.execute(
                text("SELECT action_count, status, lease_owner FROM tables WHERE id = :id"),
                {"id": table_id},
            ).one()
        return Stored(row.action_count, row.status, row.lease_owner)
    finally:
        engine.dispose()


def send_and_kill(
    player: Player, table: Tracked, command: dict[str, Any], delay: float
) -> tuple[httpx.Response | None, list[int]]:
    """Send ``command``, SIGKILL the server ``delay`` seconds later; the answer if one
    arrived (the action acknowledged), else None, and the server's processes that
    outlived it."""
    outcome: list[httpx.Response | None] = []

    def send() -> None:
        try:
            outcome.append(
                player.client.post(
                    player.url(f"/api/tables/{table.id}/actions"),
                    json={**command, "seq": table.seq},
                    headers=player.headers,
                )
            )
        except httpx.TransportError:
            outcome.append(None)

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    time.sleep(delay)
    orphans = player.server.kill()
    thread.join(timeout=60)
    assert not thread.is_alive() and outcome, "the request outlived the server"
    return outcome[0], orphans


def next_command(player: Player, table: Tracked, rng: random.Random) -> dict[str, Any] | None:
    """The command to send at the kill: mostly a play (the computer answers it), after
    acting (acknowledged) up to it; None when the table finished on the way."""
    view = player.get(f"/api/tables/{table.id}")
    to_the_play = rng.random() < 0.8
    for _step in range(50):
        if view["status"] != "playing":
            return None
        assert view["to_act"] == table.seat, view
        command = simple_command(view)
        if command["action"] == "play" or not to_the_play:
            return command
        view = player.act(table, command)
    raise AssertionError(f"no play in 50 actions at table {table.id}: {view}")


@dataclass
class Kill:
    """One kill: what was in flight, and what the killed server left."""

    number: int
    table: Tracked
    command: dict[str, Any] | None  # None: idle
    seq_before: int
    delay: float = 0.0
    answer: httpx.Response | None = None
    left: Stored | None = None
    orphans: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        what = (
            "idle"
            if self.command is None
            else f"{self.command} after {self.delay * 1000:.0f} ms, "
            + ("answered" if self.answer is not None else "cut off")
        )
        return (
            f"kill {self.number} at {self.table.level} table {self.table.id}: {what}, {self.left}"
        )


def kill_once(
    number: int, player: Player, table: Tracked, rng: random.Random, database_url: str
) -> Kill:
    """Kill the server while idle or at a random moment after sending an action."""
    command = None if rng.random() < IDLE_KILLS else next_command(player, table, rng)
    kill = Kill(number, table, command, table.seq)
    if command is None:  # idle (or the match just ended): nothing in flight
        kill.orphans = player.server.kill()
    else:
        # Some kills at once: the play itself not stored yet (that takes ~5 ms).
        kill.delay = rng.uniform(0, MAX_DELAY if rng.random() < 0.75 else 0.002)
        kill.answer, kill.orphans = send_and_kill(player, table, command, kill.delay)
    kill.left = stored(database_url, table.id)
    return kill


def test_kills_lose_nothing_and_strand_no_table(database_url: str, tmp_path: Path) -> None:
    rng = random.Random(SEED)
    env = {
        "NARD_DATABASE_URL": database_url,
        "NARD_DATA_DIR": str(tmp_path),
        "NARD_LIMITS": NO_LIMITS,
        "NARD_COMPUTER_LEASE": "0.2",
        "NARD_LOG_LEVEL": "warning",
        "NARD_ENGINE_WORKERS": "1",  # one engine to load at each restart, on two cores
    }
    tally = Tally()
    started = time.monotonic()
    with ServerProcess(env, tmp_path / "server.log") as server:
        player = Player(server)
        try:
            server.start()
            player.sign_in()
            tables = [player.new_table(level) for level in LEVELS]
            for number in range(KILLS):
                table = tables[number % len(tables)]
                kill = kill_once(number, player, table, rng, database_url)
                left = kill.left
                assert left is not None
                tally.count(kill)
                assert not kill.orphans, f"processes left by the server: {kill.orphans}"

                # 1. nothing acknowledged lost (4. a cut-off action: all or nothing).
                assert left.seq >= table.seq, tally.why(server)
                cut_off: str | None = None
                if kill.answer is not None:
                    assert kill.answer.status_code == 200, (
                        f"{kill.answer.text}\n{tally.why(server)}"
                    )
                    table.seq = kill.answer.json()["seq"]
                    assert left.seq >= table.seq, tally.why(server)
                    assert kill.command is not None
                    if (done := token(kill.command)) is not None:
                        table.done.append(done)
                elif kill.command is not None and left.seq > kill.seq_before:
                    cut_off = token(kill.command)

                server.start()
                # 2. no table waits forever (each load starts the computer's turn).
                views = {t.id: player.settle(t, tally) for t in tables}
                view = views[table.id]
                assert view["seq"] >= left.seq, tally.why(server)
                if cut_off is not None:
                    table.done.append(cut_off)
                assert player.record(table) == table.done, tally.why(server)
                for t in tables:
                    t.seq = max(t.seq, views[t.id]["seq"])

                # 3. the table continues.
                if view["status"] == "playing":
                    player.act(table, simple_command(view))
                for i, t in enumerate(tables):
                    if player.get(f"/api/tables/{t.id}")["status"] == "finished":
                        tables[i] = player.new_table(t.level)
        except httpx.TransportError as exc:
            message = f"the server stopped answering: {exc!r}\n{tally.why(server)}"
            raise AssertionError(message) from exc
        finally:
            player.close()
    print(
        f"\nchaos on {database_url.split(':')[0]}: {tally.kills} kills ({tally.idle} idle), "
        f"{tally.computer_pending} with the computer's turn pending, "
        f"{tally.acknowledged} actions acknowledged just before, "
        f"{tally.cut_off_stored} cut off but stored, "
        f"{tally.cut_off_not_stored} cut off before it was, "
        f"loads to settle {sorted(set(tally.settle_loads))}, "
        f"{time.monotonic() - started:.1f} s"
    )
    print("\n".join(tally.log))
