"""The computer thinks off the event loop: other requests are answered meanwhile.

World class (2-ply, up to 0.2 s a decision) thinks in the server's threads when it
has no worker processes, and every level thinks in worker processes when it has
them (``NARD_ENGINE_PROCESSES``, 1 by default)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import httpx2
import pytest

import nard.server.service as service_module
from nard.computer import computer_command
from nard.server.thinking import ThinkerPool
from tests.server.conftest import app_on


async def warm_pool() -> ThinkerPool:
    """A pool of one worker, started and warm (it has said so)."""
    import time

    pool = ThinkerPool(1)
    await pool.warm_up()
    deadline = time.monotonic() + 120
    while not pool.warm:
        if time.monotonic() > deadline:
            pool.close()
            raise AssertionError("the worker never said it was warm")
        await asyncio.sleep(0.05)
    return pool


def test_a_thinking_computer_does_not_hold_up_other_requests(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    thinking = threading.Event()
    release = threading.Event()
    threads: list[str] = []
    real = computer_command

    def slow_computer(*args: Any) -> Any:
        threads.append(threading.current_thread().name)
        thinking.set()
        assert release.wait(timeout=30), "the test never released the computer"
        return real(*args)

    monkeypatch.setattr(service_module, "computer_command", slow_computer)
    app, storage = app_on(sqlite_url, tmp_path)

    async def scenario() -> None:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://test") as client:
            me = (await client.post("/api/guest", json={"name": "ann"})).json()
            headers = {"X-CSRF-Token": me["csrf_token"]}
            body = {"opponent": "computer", "level": "world-class", "match_length": 3}
            created = (await client.post("/api/tables", json=body, headers=headers)).json()
            creating = asyncio.create_task(
                client.post(
                    f"/api/tables/{created['id']}/seed",
                    json={"contribution": "ann"},
                    headers=headers,
                )
            )
            table: dict[str, Any] | None = None
            # Until the computer gets a decision, keep the game going from our seat.
            while not thinking.is_set():
                await asyncio.sleep(0.01)
                if creating.done() and table is None:
                    table = creating.result().json()
                    legal = table["game"]["legal_actions"]
                    command = (
                        {"action": "play", "play": table["game"]["legal_plays"][0]["play"]}
                        if "play" in legal
                        else {"action": "roll"}
                    )
                    creating = asyncio.create_task(
                        client.post(
                            f"/api/tables/{table['id']}/actions", json=command, headers=headers
                        )
                    )
            # The computer is thinking in its thread: the server still answers.
            health = await asyncio.wait_for(client.get("/api/health"), timeout=10)
            lobby = await asyncio.wait_for(client.get("/api/tables"), timeout=10)
            assert health.status_code == 200 and lobby.status_code == 200
            assert not creating.done()
            release.set()
            answered = await asyncio.wait_for(creating, timeout=30)
            assert answered.status_code in (200, 201), answered.text

    try:
        asyncio.run(scenario())
    finally:
        release.set()
        app.state.service.close()
        storage.close()
    assert threads and all(name.startswith("nard-engine") for name in threads)


def test_the_computer_thinks_in_a_worker_process(sqlite_url: str, tmp_path: Path) -> None:
    import os

    from fastapi.testclient import TestClient

    from nard.server import create_app
    from nard.server.storage import Storage
    from tests.server.conftest import make_settings, seeded
    from tests.server.helpers import act, guest, new_table, simple_command

    settings = make_settings(sqlite_url, tmp_path, engine_processes=1)
    app = create_app(settings, Storage(sqlite_url), server_seeds=seeded(3))
    with TestClient(app) as client:
        headers = guest(client)
        table = new_table(client, headers, match_length=3)
        seq = table["seq"]
        hinted = set()
        for _ in range(6):
            if table["status"] != "playing":
                break
            # The hint is thought in the worker too (its rank_plays or cube_analysis).
            hint = client.get(f"/api/tables/{table['id']}/hint", headers=headers)
            assert hint.status_code == 200, hint.text
            kind = hint.json()["kind"]
            hinted.add(kind)
            if kind == "plays":
                legal = {p["play"] for p in table["game"]["legal_plays"]}
                assert hint.json()["plays"] and {p["play"] for p in hint.json()["plays"]} <= legal
            table = act(client, table["id"], headers, simple_command(table))
        assert table["seq"] > seq + 6  # the computer answered each turn
        assert hinted == {"plays", "cube"}
        workers = [w.process for w in app.state.service._thinkers._workers]
        assert workers and all(w.pid != os.getpid() and w.poll() is None for w in workers)


def test_the_workers_die_with_a_killed_server(tmp_path: Path) -> None:
    """A server killed outright (SIGKILL) left its engine workers running for good,
    each holding an engine's memory (seen while killing servers for the chaos test)."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    import httpx2

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **os.environ,
        "NARD_DATA_DIR": str(tmp_path),
        "NARD_PORT": str(port),
        "NARD_ENGINE_PROCESSES": "2",
        "NARD_LOG_LEVEL": "warning",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "nard.cli.main", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2:
            assert time.monotonic() < deadline, "the server's workers did not start"
            with contextlib_suppress():
                httpx2.get(f"http://127.0.0.1:{port}/readyz", timeout=1)
            workers = children(server.pid)
            time.sleep(0.1)
        server.send_signal(signal.SIGKILL)
        server.wait(timeout=10)
        deadline = time.monotonic() + 10
        while any(alive(pid) for pid in workers):
            assert time.monotonic() < deadline, f"workers {workers} outlived their server"
            time.sleep(0.05)
    finally:
        if server.poll() is None:
            server.kill()


def contextlib_suppress() -> Any:
    import contextlib

    import httpx2

    return contextlib.suppress(httpx2.HTTPError)


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            command = (entry / "cmdline").read_text()
            if int(fields[1]) == pid and "nard.server.thinking" in command:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_forced_decision_is_what_the_engine_would_decide() -> None:
    """The server answers the opening roll, a roll where doubling is not allowed and the
    only legal play itself, without the engine; in games played out, each such answer
    is the engine's, and the others are left to it."""
    from nard.computer import forced_command
    from nard.engine import Engine
    from nard.match import Game, SeededDice
    from nard.match.commands import perform
    from nard.match.game import Decision, GameOptions

    engine = Engine("expert")
    forced_kinds: set[str] = set()
    left = 0
    for seed in range(12):
        game = Game(GameOptions(crawford=False), dice=SeededDice(seed))
        while not game.is_over:
            forced = forced_command(game)
            chosen = computer_command(engine, game, 0, (0, 0))
            if forced is not None:
                assert forced == chosen, (seed, game.position.position_id(), game.dice)
                forced_kinds.add(game.decision.value)
            else:
                left += 1
                assert game.decision in (
                    Decision.ROLL,
                    Decision.PLAY,
                    Decision.TAKE_OR_PASS,
                    Decision.ACCEPT_OR_BEAVER,
                )
            perform(game, chosen)
    assert {"opening roll", "roll", "play"} <= forced_kinds
    assert left > 100


def test_a_worker_says_when_it_is_warm() -> None:
    """A worker process loads the engine and compiles (or loads) its kernels before it
    answers anything, then says so: the server's readiness waits for that message."""
    import time

    from nard.computer import DecisionSnapshot
    from nard.engine import Level
    from nard.match import FixedDice, Game
    from nard.server.thinking import ThinkerPool

    async def scenario() -> None:
        pool = ThinkerPool(1)
        try:
            await pool.warm_up()
            assert not pool.warm  # started, but nothing can have been heard from it yet
            deadline = time.monotonic() + 120
            while not pool.warm:
                assert time.monotonic() < deadline, "the worker never said it was warm"
                await asyncio.sleep(0.05)
            game = Game(dice=FixedDice([(3, 1)]))
            game.opening_roll()
            answer = await pool.decide(Level.EXPERT, DecisionSnapshot.of(game), 0, (0, 0))
            assert answer["play"] == "8/5 6/5"
        finally:
            pool.close()

    asyncio.run(scenario())


def test_a_worker_starts_without_the_web_application_or_a_warning() -> None:
    """``python -m nard.server.thinking`` ran with the package's ``__init__`` having
    imported the module already (the web application imports it): runpy warned on
    every start (``make run`` printed a RuntimeWarning) and each worker loaded
    FastAPI for nothing. The package now loads its names on first use."""
    import os
    import subprocess
    import sys

    worker = ["-W", "error::RuntimeWarning", "-m", "nard.server.thinking", str(os.getpid())]
    started = subprocess.run(
        [sys.executable, *worker],
        input=b"",  # no requests: the worker warms up, says so, and ends
        capture_output=True,
        timeout=300,
    )
    assert started.returncode == 0, started.stderr.decode()
    assert b"RuntimeWarning" not in started.stderr
    assert started.stdout  # the "warm" message
    imported = subprocess.run(
        [sys.executable, "-c", "import sys, nard.server.thinking; print('fastapi' in sys.modules)"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert imported.stdout.strip() == "False", imported.stderr
    from nard.server import Settings, create_app

    assert callable(create_app) and Settings.__name__ == "Settings"


def test_the_callers_waiting_for_the_computer_share_one_thinking(sqlite_url: str) -> None:
    """The first request that finds the computer to act thinks for it in its own task
    (a task of its own cost two turns of a busy event loop); the requests that come
    meanwhile wait for that one thinking, each on a future of its own. A waiting
    caller cancelled (its client gone) neither stops the thinking nor the others'
    wait; the thinking caller cancelled hands the turn, from the database again, to a
    task of its own, which the others then wait for; a failure reaches every caller,
    and the failed task's error counts as seen (asyncio reports none left unseen).
    Never two thinkings at one table at once."""
    from nard.server.service import TableService
    from nard.server.storage import Storage

    storage = Storage(sqlite_url)
    storage.migrate()
    service = TableService(storage, engine_workers=1)
    runs: list[tuple[str, asyncio.Task[Any] | None]] = []
    at_once = {"now": 0, "most": 0}

    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        unseen: list[dict[str, Any]] = []
        loop.set_exception_handler(lambda _loop, context: unseen.append(context))
        release = asyncio.Event()
        outcome: dict[str, BaseException | None] = {"t1": None, "t2": RuntimeError("no engine")}
        handed: list[asyncio.Task[Any]] = []

        async def think(table_id: str) -> None:
            runs.append((table_id, asyncio.current_task()))
            at_once["now"] += 1
            at_once["most"] = max(at_once["most"], at_once["now"])
            try:
                await release.wait()
            finally:
                at_once["now"] -= 1
            error = outcome[table_id]
            if error is not None:
                raise error

        service._think_for = think  # type: ignore[method-assign]
        for table_id in ("t1", "t2"):
            service._live[table_id] = object()  # type: ignore[assignment]
            callers = [loop.create_task(service._computer_turns(table_id)) for _ in range(3)]
            await asyncio.sleep(0)
            assert runs[-1] == (table_id, callers[0])  # the first caller thinks itself
            callers[1].cancel()  # a waiting caller's client went away: nothing else changes
            await asyncio.sleep(0)
            assert len(runs) == 1 + 2 * (table_id == "t2")
            callers[0].cancel()  # the thinking caller's client went away
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            handed.append(service._thinking[table_id])
            assert runs[-1] == (table_id, handed[-1]) and handed[-1] not in callers
            assert table_id not in service._live  # what it had thought is not kept
            release.set()
            results = await asyncio.gather(*callers, return_exceptions=True)
            release.clear()
            assert isinstance(results[0], asyncio.CancelledError)
            assert isinstance(results[1], asyncio.CancelledError)
            if outcome[table_id] is None:
                assert results[2] is None  # not cached: nothing to return
            else:
                assert results[2] is outcome[table_id]
            assert table_id not in service._thinking
            assert table_id not in service._thinking_waiters
        assert [t for t, _ in runs] == ["t1", "t1", "t2", "t2"]
        assert at_once["most"] == 1
        assert all(t.done() for t in handed)
        # asyncio's own flag for "Task exception was never retrieved", which it logs
        # when the task goes: the waiters were given the error, so it was seen.
        assert not any(t._log_traceback for t in handed)
        assert not unseen, unseen

        # Without a cancellation the first caller's thinking is the only one, and its
        # failure reaches it and every caller waiting.
        outcome["t3"] = RuntimeError("no engine")
        callers = [loop.create_task(service._computer_turns("t3")) for _ in range(3)]
        await asyncio.sleep(0)
        release.set()
        results = await asyncio.gather(*callers, return_exceptions=True)
        assert all(r is outcome["t3"] for r in results)
        assert [t for t, _ in runs].count("t3") == 1
        assert "t3" not in service._thinking and "t3" not in service._thinking_waiters

    try:
        asyncio.run(scenario())
    finally:
        service.close()
        storage.close()


def _played_with_workers(
    sqlite_url: str, tmp_path: Path, prepare: bool
) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """A 5-point match of the simple player against the expert thinking in a worker
    process (the same seeds every time): the stored log, and the decisions asked of
    the worker, write by write (``prepare``: the computer's play asked for with its
    cube decision, as the server does)."""
    from fastapi.testclient import TestClient

    from nard.server import create_app
    from nard.server.storage import Storage
    from nard.server.thinking import ThinkerPool
    from tests.server.conftest import make_settings, seeded
    from tests.server.helpers import guest, new_table, play_until

    writes: list[list[Any]] = []
    asked = ThinkerPool.ask

    def ask(pool: ThinkerPool, questions: Any) -> Any:
        writes.append([snapshot for _, snapshot, _, _ in questions])
        return asked(pool, questions)

    storage = Storage(sqlite_url)
    settings = make_settings(sqlite_url, tmp_path, engine_processes=1)
    app = create_app(settings, storage, server_seeds=seeded(7))
    service = app.state.service
    if not prepare:
        service._play_after_roll = lambda table, snapshot: None
    with pytest.MonkeyPatch.context() as patch, TestClient(app) as client:
        patch.setattr(ThinkerPool, "ask", ask)
        headers = guest(client)
        table = new_table(client, headers, match_length=5)
        while table["status"] == "playing":
            table = play_until(client, table, headers)
            assert table["status"] != "playing" or table["to_act"] == table["you"]
        log = [dict(a.command) for a in storage.actions_since(table["id"], 0)]
        assert not service._prepared  # nothing kept for a table whose match is over
    storage.close()
    return log, writes


def test_the_computers_play_is_asked_for_with_its_cube_decision(
    sqlite_url: str, tmp_path: Path
) -> None:
    """Where the computer decides whether to double, its play after the roll is asked
    for in the same write to the worker, a trip sooner (2026-12-07: a computer's turn
    with a cube decision took two trips, each a wait for the worker's queue and the
    event loop). The cube decision is still made from a snapshot without dice, the
    play from one with the dice the table then rolls; a play prepared for a roll that
    does not come (the computer doubled) is dropped, and the match is move for move
    the one played without preparing."""
    from nard.match.game import Decision

    log, writes = _played_with_workers(sqlite_url, tmp_path, prepare=True)
    plain_log, plain_writes = _played_with_workers(
        str(sqlite_url).replace(".db", "-plain.db"), tmp_path / "plain", prepare=False
    )
    assert [{k: v for k, v in a.items() if k != "at"} for a in log] == [
        {k: v for k, v in a.items() if k != "at"} for a in plain_log
    ]
    paired = [w for w in writes if len(w) == 2]
    assert paired and all(len(w) <= 2 for w in writes)
    for cube, play in paired:
        assert cube.decision is Decision.ROLL and cube.dice is None
        assert play.decision is Decision.PLAY and play.dice is not None
        assert play.position == cube.position and play.cube_value == cube.cube_value
    # Each prepared play was used (the computer rolled those dice: no write asked for
    # it again) or dropped (it doubled), and the doubles happened in this match.
    doubled = sum(a.get("action") == "double" for a in log)
    assert doubled and len(paired) < len(writes)

    def key(s: Any) -> tuple[Any, ...]:
        return (s.position, s.dice, s.cube_value, s.cube_owner)

    asked_alone = [key(w[0]) for w in writes if len(w) == 1]
    assert not {key(play) for _, play in paired} & set(asked_alone)
    # After a double the same dice come at the same position, with the cube turned:
    # that play is asked for afresh.
    again = {(s[0], s[1]) for s in asked_alone} & {(p.position, p.dice) for _, p in paired}
    assert 0 < len(again) <= doubled
    # Every prepared play that was used saved a write; a dropped one cost nothing else.
    used = len(paired) - len(again)
    assert used > 0 and len(writes) == len(plain_writes) - used


def test_a_deep_decision_does_not_hold_up_the_quick_ones() -> None:
    """A worker thinks for every table of the server (one worker by default): the
    decisions of each deep level (world class, up to about 0.5 s; the roller, up to
    4 s) are taken beside those of the other levels, not ahead of them, so that one
    table at the roller does not stall the computer at every other table."""
    from nard.computer import DecisionSnapshot
    from nard.engine import Level
    from nard.match import FixedDice, Game

    def opening(dice: tuple[int, int]) -> DecisionSnapshot:
        game = Game(dice=FixedDice([dice]))
        game.opening_roll()
        return DecisionSnapshot.of(game)

    async def scenario() -> None:
        pool = await warm_pool()
        try:
            # 6-4 at the opening has three plays within a few hundredths: the roller
            # rolls them out, for seconds. Then a table at expert asks, twice, and one
            # at world class.
            roller = pool.ask([(Level.ROLLER, opening((6, 4)), 0, (0, 0))])[0]
            quick = pool.ask(
                [
                    (Level.EXPERT, opening((3, 1)), 0, (0, 0)),
                    (Level.EXPERT, opening((5, 2)), 0, (0, 0)),
                ]
            )
            world_class = pool.ask([(Level.WORLD_CLASS, opening((6, 4)), 0, (0, 0))])[0]
            done, _ = await asyncio.wait(
                {roller, world_class, *quick}, timeout=60, return_when=asyncio.FIRST_COMPLETED
            )
            assert done and roller not in done, "the roller's decision came first"
            first, second = await asyncio.wait_for(asyncio.gather(*quick), timeout=60)
            assert not roller.done(), "the quick decisions waited for the roller's"
            assert first == {"action": "play", "play": "8/5 6/5"}
            assert second["action"] == "play"
            deeper = await asyncio.wait_for(world_class, timeout=60)
            assert not roller.done(), "world class waited for the roller"
            assert deeper["action"] == "play"
            answer = await asyncio.wait_for(roller, timeout=60)
            assert answer["action"] == "play"
        finally:
            pool.close()

    asyncio.run(scenario())


def test_the_computers_decisions_go_ahead_of_the_engine_api_in_a_deep_lane() -> None:
    """In a deep level's lane the computer's decisions are taken before the hints and
    engine API requests waiting there: a table at the roller is not kept waiting
    behind programs asking for the roller's rankings."""
    from nard.computer import DecisionSnapshot
    from nard.core.position import Position
    from nard.engine import Level
    from nard.match import FixedDice, Game

    game = Game(dice=FixedDice([(3, 1)]))
    game.opening_roll()

    async def scenario() -> None:
        pool = await warm_pool()
        try:
            # Two rankings of 6-4 at the opening (seconds each), then a decision.
            rankings = [
                asyncio.ensure_future(pool.call(Level.ROLLER, "rank_plays", Position(), (6, 4)))
                for _ in range(2)
            ]
            await asyncio.sleep(0.1)
            decision = pool.ask([(Level.ROLLER, DecisionSnapshot.of(game), 0, (0, 0))])[0]
            answer = await asyncio.wait_for(decision, timeout=60)
            assert answer == {"action": "play", "play": "8/5 6/5"}
            assert not rankings[1].done(), "the decision waited behind both rankings"
            for ranked in await asyncio.wait_for(asyncio.gather(*rankings), timeout=60):
                assert len(ranked) > 3 and ranked[0].play.dice == (6, 4)
        finally:
            pool.close()

    asyncio.run(scenario())
