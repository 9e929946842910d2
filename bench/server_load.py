"""Benchmark: a small load check of ``nard serve``.

Starts the server (uvicorn, SQLite in a temporary directory, or
``--database-url``) in a subprocess, then runs ``--games`` guests at once, each
playing a match against the computer over HTTP (the first legal play, take,
roll, accept), and prints the games served at once, the actions per second and
the time per action (median, p95, max; each action's answer includes the
computer's reply). The reference, measured in the same run, is the same kind
of action applied in-process without HTTP or a database (``LiveTable.act``
plus the engine's reply), so the ratio is what serving costs.

    python bench/server_load.py --games 20 --actions 40
    python bench/server_load.py --database-url postgresql+psycopg://postgres@127.0.0.1/nard_load

Give PostgreSQL a database of its own: the server creates its tables there.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx

from nard.computer import computer_command
from nard.engine import Engine, Level
from nard.match.commands import Command
from nard.match.game import Game, GameAction
from nard.server.tables import LiveTable, SeatInfo, TableRules


def simple_command(table: dict[str, Any]) -> dict[str, Any] | None:
    game = table["game"]
    legal = game["legal_actions"]
    if "play" in legal:
        return {"action": "play", "play": game["legal_plays"][0]["play"]}
    for action in ("roll", "take", "accept"):
        if action in legal:
            return {"action": action}
    return None


async def one_player(base: str, actions: int, times: list[float]) -> int:
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        me = (await client.post("/api/guest", json={})).json()
        headers = {"X-CSRF-Token": me["csrf_token"]}
        body = {"opponent": "computer", "level": "expert", "match_length": 7}
        table = (await client.post("/api/tables", json=body, headers=headers)).json()
        seed = {"contribution": f"load {random.random()}"}
        table = (
            await client.post(f"/api/tables/{table['id']}/seed", json=seed, headers=headers)
        ).json()
        done = 0
        while done < actions and table["status"] == "playing" and table["to_act"] == table["you"]:
            command = simple_command(table)
            if command is None:
                break
            start = time.perf_counter()
            response = await client.post(
                f"/api/tables/{table['id']}/actions", json=command, headers=headers
            )
            times.append(time.perf_counter() - start)
            response.raise_for_status()
            table = response.json()
            done += 1
        return done


def simple(game: Game) -> Command | None:
    """What the HTTP players do: the first legal play, else roll, take or accept."""
    legal = game.legal_actions()
    if GameAction.PLAY in legal:
        return Command(GameAction.PLAY, play=game.position.format_play(game.legal_plays()[0]))
    for action in (GameAction.ROLL, GameAction.TAKE, GameAction.ACCEPT):
        if action in legal:
            return Command(action)
    return None


def in_process_reference(actions: int) -> list[float]:
    """The same actions with no HTTP and no database: LiveTable and the engine."""
    engine = Engine(Level.EXPERT)
    seats = (SeatInfo("me", player_id=1), SeatInfo("nard", level=Level.EXPERT))
    rng = random.Random(1)
    times: list[float] = []
    while len(times) < actions:
        table = LiveTable("ref", TableRules(match_length=7), seats, rng.randbytes(32))
        table.contribute(0, "r")
        while len(times) < actions and table.status == "playing":
            start = time.perf_counter()
            if table.to_act == 0:
                game = table.game
                assert game is not None
                command = simple(game)
                if command is None:
                    break
                table.act(0, command)
            while table.to_act == 1:
                game = table.game
                assert game is not None
                table.act(1, computer_command(engine, game, 7, table.games.score))
            times.append(time.perf_counter() - start)
    return times


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return (
        f"median {1000 * statistics.median(ordered):.1f} ms, p95 {1000 * p95:.1f} ms, "
        f"max {1000 * ordered[-1]:.1f} ms"
    )


async def load(base: str, games: int, actions: int) -> tuple[list[float], int, float]:
    times: list[float] = []
    start = time.perf_counter()
    done = await asyncio.gather(*(one_player(base, actions, times) for _ in range(games)))
    return times, sum(done), time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="guests playing at once")
    parser.add_argument("--actions", type=int, default=40, help="actions per guest at most")
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="nard-load-"))
    port = free_port()
    env = {
        **os.environ,
        "NARD_DATA_DIR": str(folder),
        "NARD_PORT": str(port),
        # A load test: every guest plays from this one address as fast as it can.
        "NARD_LIMITS": "guest= table= action= hint=",
        "NARD_LOG_LEVEL": "warning",
    }
    if args.database_url:
        env["NARD_DATABASE_URL"] = args.database_url
    server = subprocess.Popen(
        [sys.executable, "-m", "nard.cli.main", "serve"], env=env, stdout=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(base + "/api/health", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    sys.exit("server_load.py: the server did not start")
                time.sleep(0.2)
        times, count, secs = asyncio.run(load(base, args.games, args.actions))
    finally:
        server.terminate()
        server.wait(timeout=30)
    reference = in_process_reference(min(count, 400))
    print(f"{args.games} games at once against the expert, {count} actions in {secs:.1f} s")
    print(
        f"  {count / secs:.1f} actions/s; each answer (computer's reply included): {summary(times)}"
    )
    print(f"  in process, no HTTP or database: {summary(reference)}")
    print(
        f"  ratio of medians (served / in process): "
        f"{statistics.median(times) / statistics.median(reference):.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
