"""Benchmark: a table's move time with 200 watchers, against the same with none.

Starts ``nard serve`` (SQLite in a temporary directory) in a subprocess; one guest
plays a match against the computer over HTTP while ``--watchers`` spectators hold
WebSockets open on the table and read every state pushed to them. The reference,
measured in the same run, is the same player's move time with no watchers. Issue
27's target: 200 watchers leave the move time within 2x of none (the review saw
~15 ms become ~300 ms, and the whole process slow down).

    python bench/watchers.py --watchers 200 --actions 60
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import websockets

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_load import Connection, cpu_seconds, free_port, play


async def watch(url: str, seen: list[int], ready: asyncio.Event, count: list[int]) -> None:
    async with websockets.connect(url, max_size=2**20) as socket:
        count[0] += 1
        if count[0] == len(seen):
            ready.set()
        async for message in socket:
            data = json.loads(message)
            if data.get("type") == "table":
                seen[0] += 1


async def measure(base: str, watchers: int, actions: int) -> list[float]:
    client = await Connection.open(base)
    _, me = await client.post("/api/guest", {})
    client.headers += f"X-CSRF-Token: {me['csrf_token']}\r\n"
    body = {"opponent": "computer", "level": "expert", "match_length": 25}
    _, table = await client.post("/api/tables", body)
    _, table = await client.post(f"/api/tables/{table['id']}/seed", {"contribution": "bench"})
    url = base.replace("http://", "ws://") + f"/ws/tables/{table['id']}"
    seen = [0] * max(watchers, 1)
    ready = asyncio.Event()
    count = [0]
    tasks = [asyncio.create_task(watch(url, seen, ready, count)) for _ in range(watchers)]
    if watchers:
        await asyncio.wait_for(ready.wait(), timeout=60)
    timed: list[tuple[str, float]] = []
    await play(client, table, actions, timed)
    times = [seconds for _, seconds in timed]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    client.close()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--watchers", type=int, default=200)
    parser.add_argument("--actions", type=int, default=60)
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="nard-watch-"))
    port = free_port()
    env = {
        **os.environ,
        "NARD_DATA_DIR": str(folder),
        "NARD_PORT": str(port),
        "NARD_LIMITS": "guest= table= action= hint=",
        "NARD_SOCKETS_PER_CLIENT": str(args.watchers + 10),
        "NARD_SOCKETS_PER_TABLE": str(args.watchers + 10),
        "NARD_LOG_LEVEL": "warning",
    }
    server = subprocess.Popen(
        [sys.executable, "-m", "nard.cli.main", "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        import httpx2

        deadline = time.monotonic() + 90
        while True:
            try:
                httpx2.get(base + "/readyz", timeout=1).raise_for_status()
                break
            except httpx2.HTTPError:
                if time.monotonic() > deadline:
                    sys.exit("watchers.py: the server did not start")
                time.sleep(0.2)
        asyncio.run(measure(base, 0, 10))  # warm up
        results = {}
        cpu = {}
        for label, watchers in (("no watchers", 0), (f"{args.watchers} watchers", args.watchers)):
            before = cpu_seconds(server.pid)
            results[label] = asyncio.run(measure(base, watchers, args.actions))
            cpu[label] = 1000 * (cpu_seconds(server.pid) - before) / max(len(results[label]), 1)
    finally:
        server.terminate()
        server.wait(timeout=30)
    medians = {}
    for label, times in results.items():
        ordered = sorted(times)
        medians[label] = statistics.median(ordered)
        p95 = ordered[int(0.95 * (len(ordered) - 1))]
        print(
            f"{label}: {len(times)} moves, median {1000 * medians[label]:.1f} ms, "
            f"p95 {1000 * p95:.1f} ms, max {1000 * ordered[-1]:.1f} ms; "
            f"server CPU {cpu[label]:.1f} ms a move (connecting the watchers included)"
        )
    none, many = medians.values()
    print(f"ratio of median move times ({args.watchers} watchers / none): {many / none:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
