"""Benchmark: the load ``nard serve`` takes, against a reference measured in the same run.

Starts the server (uvicorn, in subprocesses) on SQLite in a temporary directory,
or on a fresh PostgreSQL database (``--postgres ADMIN_URL``: a database is
created for each run and dropped after it), then runs ``--games`` guests at
once, each playing a match against the computer over HTTP (the first legal
play, take, roll, accept), and prints the actions per second and the time per
action (median, p95, max; each action's answer includes the computer's reply).

With ``--processes 2`` two server processes share the database and a Redis
(``--redis``, default ``redis://127.0.0.1:6379/0``), the guests spread over
them (as behind a load balancer).

The reference, measured in the same run on the same machine, is
``--baseline REV``: the server of an earlier commit of this repository (checked
out into a temporary worktree, run with the same interpreter), under the same
load; the ratio of actions per second is printed. The issue's targets (issue
27) are 3x the throughput of ``eb7c044`` (the server before that issue) and a
p95 under 50 ms with 20 guests, on SQLite and on PostgreSQL.

    python bench/server_load.py --games 20 --actions 40 --baseline eb7c044
    python bench/server_load.py --postgres postgresql+psycopg://postgres@127.0.0.1/postgres
    python bench/server_load.py --processes 2 --baseline HEAD
    python bench/server_load.py --processes 2 --baseline HEAD --watch
    python bench/server_load.py --games 20 --actions 200 --baseline eb7c044 --cpus 1.5
    python bench/server_load.py --games 20 --actions 200 --baseline eb7c044 --core-speed 0.8

With ``--watch`` each guest also has its table open in a WebSocket, as the page
does, on the next process: the players' sockets on other processes than their
requests (a load balancer without sticky sessions), so that every commit is
announced on Redis; without it a table is played and watched by nobody else.

With ``--cpus N`` the whole run (both trees' servers, their engine workers and
the load generator) gets N cores' worth of CPU time through a cgroup quota:
a machine whose speed drifts from hour to hour made slower on purpose, so that
a figure at the speed an issue was filed at can be measured at any hour. With
``--core-speed F`` each process of the run gets at most F of a core instead: the
same number of cores, each slower (bench/README.md says how the two differ).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx

REPO = Path(__file__).resolve().parent.parent


def simple_command(table: dict[str, Any]) -> dict[str, Any] | None:
    game = table["game"]
    legal = game["legal_actions"]
    if "play" in legal:
        return {"action": "play", "play": game["legal_plays"][0]["play"]}
    for action in ("roll", "take", "accept"):
        if action in legal:
            return {"action": action}
    return None


class Connection:
    """A lean HTTP/1.1 client on one kept-alive connection: a load generator should
    spend little of the machine's CPU (httpx took 1.7 ms an action, this 0.2)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.headers = ""

    @classmethod
    async def open(cls, base: str) -> Connection:
        host, port = base.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        return cls(reader, writer)

    async def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        data = json.dumps(body).encode()
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nHost: load\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\n{self.headers}\r\n".encode()
            + data
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        length = 0
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "content-length":
                length = int(value)
            elif name.lower() == "set-cookie" and value.strip().startswith("nard_session="):
                cookie = value.strip().split(";")[0]
                self.headers = f"Cookie: {cookie}\r\n"
        payload = await self.reader.readexactly(length)
        return status, json.loads(payload) if payload else None

    def close(self) -> None:
        self.writer.close()


async def play(
    client: Connection, table: dict[str, Any], actions: int, times: list[tuple[str, float]]
) -> int:
    """Act for the guest while the table waits for them, at most ``actions`` times,
    each action's kind and time (the computer's reply included) added to ``times``."""
    done = 0
    while done < actions and table["status"] == "playing" and table["to_act"] == table["you"]:
        command = simple_command(table)
        if command is None:
            break
        start = time.perf_counter()
        status, table = await client.post(f"/api/tables/{table['id']}/actions", command)
        times.append((command["action"], time.perf_counter() - start))
        if status != 200:
            raise RuntimeError(f"action refused: {status} {table}")
        done += 1
    return done


async def one_player(
    base: str,
    actions: int,
    times: list[tuple[str, float]],
    rng: random.Random,
    watch_base: str | None = None,
) -> int:
    client = await Connection.open(base)
    watching: asyncio.Task[None] | None = None
    try:
        _, me = await client.post("/api/guest", {})
        cookie = client.headers.removeprefix("Cookie: ").strip()
        client.headers += f"X-CSRF-Token: {me['csrf_token']}\r\n"
        body = {"opponent": "computer", "level": "expert", "match_length": 7}
        _, table = await client.post("/api/tables", body)
        if table["status"] == "seeding":  # servers since issue 27 take the contribution now
            path = f"/api/tables/{table['id']}/seed"
            _, table = await client.post(path, {"contribution": f"load {rng.random()}"})
        if watch_base is not None:
            watching = await watch(watch_base, table["id"], cookie)
        return await play(client, table, actions, times)
    finally:
        client.close()
        if watching is not None:
            watching.cancel()
            with contextlib.suppress(BaseException):
                await watching


async def watch(base: str, table_id: str, cookie: str) -> asyncio.Task[None]:
    """The guest's page's socket on its table, at ``base``: read (and dropped) until
    cancelled. Returns once the first state has come."""
    import websockets

    socket = await websockets.connect(
        base.replace("http://", "ws://") + f"/ws/tables/{table_id}",
        additional_headers={"Cookie": cookie},
        origin=websockets.Origin(base),
    )
    await socket.recv()

    async def read() -> None:
        try:
            async for _ in socket:
                pass
        finally:
            await socket.close()

    return asyncio.get_running_loop().create_task(read())


@dataclass
class Result:
    label: str
    actions: int
    seconds: float
    times: list[tuple[str, float]]
    cpu_ms: float  # the servers' CPU per action
    client_ms: float  # the load generator's CPU per action

    @property
    def rate(self) -> float:
        return self.actions / self.seconds

    def line(self) -> str:
        ordered = sorted(t for _, t in self.times)
        return (
            f"{self.label}: {self.actions} actions in {self.seconds:.1f} s = {self.rate:.0f}/s; "
            f"{spread(ordered)}; CPU per action: server {self.cpu_ms:.2f} ms, "
            f"load generator {self.client_ms:.2f} ms"
        )

    def kinds(self) -> str:
        """The times of each kind of action apart (a play's answer holds the computer's
        turn, a roll's does not)."""
        kinds = sorted({kind for kind, _ in self.times})
        return "; ".join(
            f"{kind} x{len(ts)}: {spread(ts)}"
            for kind in kinds
            for ts in [sorted(t for k, t in self.times if k == kind)]
        )


def spread(ordered: list[float]) -> str:
    """Median, p95 and maximum of sorted times, in milliseconds."""
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return (
        f"median {1000 * statistics.median(ordered):.1f} ms, p95 {1000 * p95:.1f} ms, "
        f"max {1000 * ordered[-1]:.1f} ms"
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextlib.contextmanager
def database(postgres: str | None, folder: Path) -> Iterator[str]:
    """A fresh database for one run: SQLite in ``folder`` or a new PostgreSQL database."""
    if postgres is None:
        yield f"sqlite:///{folder / 'nard.db'}"
        return
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url

    admin = create_engine(postgres, isolation_level="AUTOCOMMIT")
    name = f"nard_load_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(postgres).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@contextlib.contextmanager
def worktree(revision: str) -> Iterator[Path]:
    """The repository at ``revision``, checked out in a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="nard-baseline-"))
    subprocess.run(
        ["git", "-C", str(REPO), "worktree", "add", "--detach", str(folder), revision],
        check=True,
        capture_output=True,
    )
    try:
        yield folder
    finally:
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "remove", "--force", str(folder)],
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds so far of a process and every process under it (its
    engine workers), from Linux's /proc."""
    ticks = 0
    for member in {pid} | _descendants(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # it ended meanwhile
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def _cgroup_home() -> tuple[Path, bool]:
    """This process's cgroup in the CPU controller's hierarchy, and whether it is
    cgroup v2 (``cpu.max``) rather than v1 (``cpu.cfs_quota_us``)."""
    root = Path("/sys/fs/cgroup")
    lines = Path("/proc/self/cgroup").read_text().splitlines()
    if (root / "cgroup.controllers").exists():  # v2: "0::/path"
        return root / next(x for x in lines if x.startswith("0::")).split(":", 2)[2].lstrip(
            "/"
        ), True
    line = next(x for x in lines if "cpu" in x.split(":")[1].split(","))  # "N:cpu,cpuacct:/p"
    return root / "cpu" / line.split(":", 2)[2].lstrip("/"), False


def _limit(group: Path, v2: bool, cores: float | None) -> None:
    """Make ``group`` and give it ``cores`` cores' worth of CPU time (None: no limit),
    over a period of 1 ms, or as little more as a quota of at least 1 ms (the kernel's
    least) needs: short periods, so that a process waits for its quota in short
    spells, as on a slower machine, not in long ones."""
    group.mkdir()
    if cores is None:
        return
    period = max(1000, math.ceil(1000 / cores))
    quota = round(cores * period)
    if v2:
        (group / "cpu.max").write_text(f"{quota} {period}")
    else:
        (group / "cpu.cfs_period_us").write_text(str(period))
        (group / "cpu.cfs_quota_us").write_text(str(quota))


def _remove(group: Path) -> None:
    """Remove a cgroup and the groups under it once their processes have left."""
    for child in sorted((p for p in group.iterdir() if p.is_dir()), reverse=True):
        _remove(child)
    for _ in range(50):  # the servers' last processes may take a moment to leave
        try:
            group.rmdir()
            return
        except OSError:
            time.sleep(0.1)


@contextlib.contextmanager
def core_speed(speed: float | None) -> Iterator[None]:
    """Run what follows as on a machine whose cores are ``speed`` times as fast as
    this one's, as far as CPU quotas can: this process (the load generator) and every
    process it starts, and every process those start (the servers, their engine
    workers), each get at most ``speed`` of a core, through a cgroup each (a thread
    places each new process in a group of its own within some 20 milliseconds of
    its start). ``--cpus`` takes the whole run down to fewer cores' worth of time, which
    also takes from a multi-process server the parallelism a slower 2-core machine
    would still give it (its engine worker on the other core); this keeps the
    number of cores and slows each. Needs root; None: no quota. Processes outside
    the run (PostgreSQL's) keep the machine's speed, as with ``--cpus``."""
    if speed is None:
        yield
        return
    home, v2 = _cgroup_home()
    top = home / f"nard-bench-{os.getpid()}"
    try:
        _limit(top, v2, None)
        if v2:
            (top / "cgroup.subtree_control").write_text("+cpu")
        _limit(top / "load", v2, speed)
        (top / "load" / "cgroup.procs").write_text(str(os.getpid()))
    except OSError as exc:
        with contextlib.suppress(OSError):
            _remove(top)
        sys.exit(f"server_load.py: cannot set CPU quotas in {top}: {exc}")
    placed = {os.getpid()}
    stop = threading.Event()

    def place() -> None:
        while not stop.wait(0.02):
            for pid in _descendants(os.getpid()) - placed:
                group = top / f"p{pid}"
                try:
                    _limit(group, v2, speed)
                    (group / "cgroup.procs").write_text(str(pid))
                except OSError:
                    continue  # it ended before it could be placed
                placed.add(pid)

    placing = threading.Thread(target=place, daemon=True)
    placing.start()
    try:
        yield
    finally:
        stop.set()
        placing.join()
        (home / "cgroup.procs").write_text(str(os.getpid()))
        _remove(top)


def _descendants(pid: int) -> set[int]:
    """The processes under ``pid`` (its children, theirs, ...), from Linux's
    /proc/PID/task/TID/children (cheap: only the tree's own files are read)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = {int(c) for c in (task / "children").read_text().split()}
            except OSError:
                continue
            todo += children - found
            found |= children
    return found


@contextlib.contextmanager
def cpu_quota(cpus: float | None) -> Iterator[None]:
    """Run what follows (this process and every process it starts: the servers, their
    engine workers, the load generator) within ``cpus`` cores' worth of CPU time, a
    Linux cgroup's CFS quota over a period of about 1 ms (cgroup v2's ``cpu.max`` or v1's
    ``cpu.cfs_quota_us``): the machine made slower, the same for both trees, to
    measure at a chosen speed rather than whatever speed the machine has that hour.
    Needs write access to the cgroup file system (root); None: no quota."""
    if cpus is None:
        yield
        return
    home, v2 = _cgroup_home()
    group = home / f"nard-bench-{os.getpid()}"
    try:
        _limit(group, v2, cpus)
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError as exc:
        with contextlib.suppress(OSError):
            group.rmdir()
        sys.exit(f"server_load.py: cannot set a CPU quota in {group}: {exc}")
    try:
        yield
    finally:
        (home / "cgroup.procs").write_text(str(os.getpid()))
        _remove(group)


def core_sets(processes: int, cores_each: int | None) -> list[set[int] | None]:
    """The cores each server process (and its engine worker) is confined to: ``cores_each``
    distinct cores of this machine per process, or no confinement."""
    if cores_each is None:
        return [None] * processes
    mine = sorted(os.sched_getaffinity(0))
    if processes * cores_each > len(mine):
        sys.exit(
            f"server_load.py: {processes} process(es) x {cores_each} core(s) each "
            f"need {processes * cores_each} cores; this process may use {len(mine)}"
        )
    return [set(mine[i * cores_each : (i + 1) * cores_each]) for i in range(processes)]


def run(
    label: str,
    code: Path,
    url: str,
    games: int,
    actions: int,
    processes: int,
    redis_url: str,
    cores_each: int | None = None,
    redis_for_one: bool = False,
    watch: bool = False,
) -> Result:
    folder = Path(tempfile.mkdtemp(prefix="nard-load-"))
    ports = [free_port() for _ in range(processes)]
    servers = []
    for port, cores in zip(ports, core_sets(processes, cores_each), strict=True):
        env = {
            **os.environ,
            "PYTHONPATH": str(code),
            "NARD_DATA_DIR": str(folder),
            "NARD_DATABASE_URL": url,
            "NARD_PORT": str(port),
            # A load test: every guest plays from this one address as fast as it can.
            "NARD_LIMITS": "guest= table= action= hint=",
            "NARD_LOG_LEVEL": "warning",
        }
        if processes > 1 or redis_for_one:
            env["NARD_REDIS_URL"] = redis_url
        servers.append(
            subprocess.Popen(
                [sys.executable, "-m", "nard.cli.main", "serve"],
                env=env,
                cwd=code,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                # The engine worker the server starts inherits the confinement.
                preexec_fn=None
                if cores is None
                else lambda cores=cores: os.sched_setaffinity(0, cores),
            )
        )
    bases = [f"http://127.0.0.1:{port}" for port in ports]
    try:
        for base in bases:
            deadline = time.monotonic() + 90
            while True:
                try:
                    httpx.get(base + "/api/health", timeout=1).raise_for_status()
                    # Ready: the engine worker warm (its start-up's CPU, seconds of it,
                    # is not the load's) and, with Redis, subscribed. Older servers
                    # (the baselines) have no /readyz.
                    ready = httpx.get(base + "/readyz", timeout=1)
                    if ready.status_code == 404 or ready.json().get("status") == "ready":
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    sys.exit(f"server_load.py: the server at {base} did not start")
                time.sleep(0.2)
        # Warm up (the engine's first decisions), then measure.
        asyncio.run(load(bases, 2, 5, watch))
        cpu_before = sum(cpu_seconds(s.pid) for s in servers)
        mine = time.process_time()
        times, count, secs = asyncio.run(load(bases, games, actions, watch))
        cpu = sum(cpu_seconds(s.pid) for s in servers) - cpu_before
        client_ms = 1000 * (time.process_time() - mine) / max(count, 1)
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    return Result(label, count, secs, times, 1000 * cpu / max(count, 1), client_ms)


async def load(
    bases: list[str], games: int, actions: int, watch: bool = False
) -> tuple[list[tuple[str, float]], int, float]:
    times: list[tuple[str, float]] = []
    rng = random.Random(1)
    start = time.perf_counter()
    done = await asyncio.gather(
        *(
            one_player(
                bases[n % len(bases)],
                actions,
                times,
                rng,
                bases[(n + 1) % len(bases)] if watch else None,
            )
            for n in range(games)
        )
    )
    return times, sum(done), time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="guests playing at once")
    parser.add_argument("--actions", type=int, default=40, help="actions per guest at most")
    parser.add_argument("--processes", type=int, default=1, help="server processes (Redis)")
    parser.add_argument("--postgres", default=None, help="PostgreSQL admin URL (else SQLite)")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--baseline", default=None, help="a commit whose server is the reference")
    parser.add_argument("--baseline-processes", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=1, help="alternate the runs this often")
    parser.add_argument(
        "--no-warm-up",
        dest="warm_up",
        action="store_false",
        help="time from the first run (by default each tree first plays 20 actions a guest, "
        "untimed, so that a fresh worktree's compiled kernels are cached)",
    )
    parser.add_argument(
        "--kinds", action="store_true", help="also the times of each kind of action apart"
    )
    parser.add_argument(
        "--redis-for-one",
        action="store_true",
        help="a single server process uses Redis too, as one process of a deployment "
        "behind Redis does (by default only several processes do)",
    )
    parser.add_argument(
        "--cores-each",
        type=int,
        default=None,
        help="confine each server process and its engine worker to this many cores of their "
        "own (the load generator is not confined): how throughput grows with processes "
        "when each has cores to run on, on a machine with few",
    )
    parser.add_argument(
        "--watch",
        action="store_true",
        help="each guest also watches its table over a WebSocket on the next process (its "
        "page behind a load balancer that does not keep a player on one process): with "
        "several processes every commit is then announced on Redis",
    )
    parser.add_argument(
        "--cpus",
        type=float,
        default=None,
        help="run everything within this many cores' worth of CPU time (a cgroup quota; "
        "needs root): the machine made slower, to measure nearer a chosen speed (the "
        "baseline's actions/s in the same run tell which; on 2026-12-07 with 1.5 on this "
        "2-core machine eb7c044 made 145-152 actions/s on SQLite, inside the range issue "
        "27 was filed at)",
    )
    parser.add_argument(
        "--core-speed",
        type=float,
        default=None,
        help="run each process (the load generator, each server, each engine worker) within "
        "this fraction of a core (a cgroup quota each; needs root): a machine with as many "
        "cores, each this much slower",
    )
    args = parser.parse_args(argv)
    if args.cpus and args.core_speed:
        parser.error("--cpus and --core-speed are two ways of slowing the run: give one")
    where = "PostgreSQL" if args.postgres else "SQLite"
    confined = f", {args.cores_each} core(s) per server process" if args.cores_each else ""
    if args.cpus:
        confined += f", within {args.cpus:g} cores' worth of CPU time"
    if args.core_speed:
        confined += f", each process within {args.core_speed:g} of a core"
    if args.watch:
        confined += ", each guest watching its table on the next process"
    print(
        f"{args.games} guests at once against the expert, "
        f"up to {args.actions} actions each, {where}{confined}"
    )
    results: dict[str, list[Result]] = {}
    with contextlib.ExitStack() as stack:
        baseline = stack.enter_context(worktree(args.baseline)) if args.baseline else None
        stack.enter_context(cpu_quota(args.cpus))
        stack.enter_context(core_speed(args.core_speed))
        runs = [(f"this tree, {args.processes} process(es)", REPO, args.processes)]
        if baseline is not None:
            label = f"{args.baseline}, {args.baseline_processes} process(es)"
            runs.append((label, baseline, args.baseline_processes))
        # An untimed short run of each tree first: a fresh worktree's engine compiles
        # and caches its kernels on first use (numba), which made the baseline's first
        # round 10-15% slower than its others, with single actions of up to a second.
        for round_number in range(-1 if args.warm_up else 0, args.rounds):
            for label, code, processes in runs:
                with database(args.postgres, Path(tempfile.mkdtemp())) as url:
                    result = run(
                        label,
                        code,
                        url,
                        args.games,
                        min(args.actions, 20) if round_number < 0 else args.actions,
                        processes,
                        args.redis,
                        args.cores_each,
                        args.redis_for_one,
                        args.watch,
                    )
                if round_number < 0:
                    continue
                print("  " + result.line(), flush=True)
                if args.kinds:
                    print("    " + result.kinds(), flush=True)
                results.setdefault(label, []).append(result)
    if baseline is not None:
        mine, theirs = (statistics.median(r.rate for r in v) for v in results.values())
        print(f"  ratio of actions/s (this tree / {args.baseline}): {mine / theirs:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
