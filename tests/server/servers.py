"""Real ``nard serve`` processes for tests: started on a free port, killed (SIGKILL) at
will, always reaped.

A test that kills servers needs them as the operating system runs them, not in
process: :class:`ServerProcess` runs ``python -m nard.cli.main serve`` with the
environment given (nothing of the caller's ``NARD_*`` leaks in), waits for
``/readyz`` and keeps the server's output in a log file for the failure message.
A kill also waits for the server's own processes (its engine workers) to go, and
says which outlived it (on Linux, where /proc lists them).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType

import httpx2 as httpx

__all__ = ["ServerProcess", "alive", "descendants", "free_port"]

ROOT = Path(__file__).resolve().parents[2]
STARTUP_DEADLINE = 60.0
"""Seconds a server may take to answer /readyz (about 1.5 s here; CI runs two test
workers on two cores)."""
ORPHAN_DEADLINE = 30.0
"""Seconds a killed server's processes may take to follow it (a worker notices within
about a second, once it has started)."""


def free_port() -> int:
    """A TCP port nobody listens on now (the server may still lose it to a race, which
    :meth:`ServerProcess.start` survives by trying another)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def descendants(pid: int) -> list[int]:
    """The processes ``pid`` started, and theirs (Linux /proc; none elsewhere)."""
    found: list[int] = []
    parents = [pid]
    while parents:
        parent = parents.pop()
        try:
            tasks = list(Path(f"/proc/{parent}/task").iterdir())
        except OSError:
            continue
        for task in tasks:
            try:
                children = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            found.extend(children)
            parents.extend(children)
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, waiting to be reaped, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


class ServerProcess:
    """``nard serve`` with ``env`` (``NARD_*`` settings) and its output in ``log``.

    Use it as a context manager: leaving it kills whatever process is still running.
    """

    def __init__(self, env: Mapping[str, str], log: Path, port: int = 0) -> None:
        """``port``: the one every start listens on (a page's origin must outlive a
        restart); 0 for a free port at each start."""
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("NARD_")}
        self.env.update(env)
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.fixed_port = port
        self.port = port
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the server and return once ``/readyz`` answers 200."""
        assert self.proc is None, "already running"
        for _attempt in range(3):
            self.port = self.fixed_port or free_port()
            with self.log.open("ab") as out:
                out.write(f"--- start {self.starts + 1} on port {self.port}\n".encode())
                out.flush()
                self.proc = subprocess.Popen(
                    [sys.executable, "-m", "nard.cli.main", "serve", "--port", str(self.port)],
                    env=self.env,
                    cwd=ROOT,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            if self._ready():
                self.starts += 1
                return
            self.kill()  # most likely the port was taken meanwhile: another one
        raise AssertionError(f"the server did not start:\n{self.log_tail()}")

    def _ready(self) -> bool:
        assert self.proc is not None
        deadline = time.monotonic() + STARTUP_DEADLINE
        with httpx.Client(base_url=self.url, timeout=2.0) as probe:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    return False
                try:
                    if probe.get("/readyz").status_code == 200:
                        return True
                except httpx.TransportError:
                    pass
                time.sleep(0.05)
        return False

    def kill(self) -> list[int]:
        """SIGKILL: no shutdown, no lease given back, whatever was in flight cut off.

        Returns the server's processes that outlived it by :data:`ORPHAN_DEADLINE`
        seconds (they are then killed too, not to be left behind)."""
        if self.proc is None:
            return []
        family = descendants(self.proc.pid)
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.proc = None
        deadline = time.monotonic() + ORPHAN_DEADLINE
        while (left := [pid for pid in family if alive(pid)]) and time.monotonic() < deadline:
            time.sleep(0.05)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        return left

    def restart(self) -> None:
        self.kill()
        self.start()

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def __enter__(self) -> ServerProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.kill()
