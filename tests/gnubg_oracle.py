"""GNU Backgammon as a test oracle: run scripts in gnubg's embedded Python.

Used only by tests and benchmarks (never at run time). gnubg prints a banner
first, so scripts print their answers as lines starting with ``NARD:``.
See ../shared/GNUBG-ORACLE.md for the recipes and quirks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

__all__ = [
    "GNUBG",
    "gnubg_plays",
    "have_gnubg",
    "prepare_gnubg_home",
    "requires_gnubg",
    "run_gnubg_script",
]

GNUBG = os.environ.get("NARD_GNUBG", "/usr/games/gnubg")
_PREFIX = "NARD:"


def have_gnubg() -> bool:
    """True when the gnubg binary is installed."""
    return Path(GNUBG).exists() or shutil.which(GNUBG) is not None


_MISSING = f"GNU Backgammon not found at {GNUBG} (apt-get install -y gnubg; .ci/run does this)"
if not have_gnubg() and os.environ.get("NARD_REQUIRE_GNUBG"):
    raise RuntimeError(_MISSING + " and NARD_REQUIRE_GNUBG is set")

requires_gnubg = pytest.mark.skipif(not have_gnubg(), reason=_MISSING)
"""Skip a test (or module, as ``pytestmark``) when gnubg is not installed."""


def prepare_gnubg_home(env: dict[str, str] | None = None) -> None:
    """Make the folders gnubg makes at its first start (``$HOME/.gnubg`` and its
    ``backup``) before any gnubg starts: of two first starts at once, the one that
    finds the folder made by the other between its check and its ``mkdir`` exits
    ("/root/.gnubg: File exists", seen on a fresh machine with two at once)."""
    home = (env if env is not None else os.environ).get("HOME") or str(Path.home())
    Path(home, ".gnubg", "backup").mkdir(parents=True, exist_ok=True)


def run_gnubg_script(script: str, timeout: float = 600.0) -> list[str]:
    """Run ``script`` inside gnubg and return what it printed after ``NARD:``."""
    prepare_gnubg_home()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "script.py"
        path.write_text(script)
        proc = subprocess.run(
            [GNUBG, "-t", "-q", "-p", str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=tmp,
            stdin=subprocess.DEVNULL,
        )
    lines = [line[len(_PREFIX) :] for line in proc.stdout.splitlines() if line.startswith(_PREFIX)]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(
            f"gnubg failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        )
    return lines


_PLAYS_SCRIPT = """
import json
import gnubg
gnubg.command('set display off')
gnubg.command('set player 0 human')
gnubg.command('set player 1 human')
gnubg.command('set evaluation chequerplay evaluation plies 0')
gnubg.command('new game')
queries = json.load(open(%(path)r))
for pid, d1, d2 in queries:
    gnubg.command('set board ' + pid)
    gnubg.command('set dice %%d %%d' %% (d1, d2))
    hint = gnubg.hint(100000)
    moves = [[m['move'], [list(p) for p in gnubg.parsemove(m['move'])]] for m in hint['hint']]
    print('\\nNARD:' + json.dumps([pid, d1, d2, moves]))
print('\\nNARD:done')
"""


def _plays_chunk(queries: Sequence[tuple[str, int, int]]) -> list[Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "queries.json"
        path.write_text(json.dumps(list(queries)))
        lines = run_gnubg_script(_PLAYS_SCRIPT % {"path": str(path)})
    if lines[-1] != "done":
        raise RuntimeError("gnubg stopped before answering every query")
    return [json.loads(line) for line in lines[:-1]]


def gnubg_plays(
    queries: Sequence[tuple[str, int, int]], processes: int = 2
) -> list[list[tuple[str, list[tuple[int, int]]]]]:
    """gnubg's complete list of legal plays for each (Position ID, die 1, die 2).

    Each play is gnubg's notation and its (from, to) pairs (25 = bar, 0 = off),
    from ``gnubg.hint`` at 0-ply, which lists every play. Queries are split over
    ``processes`` gnubg processes since each hint costs ~10 ms of wall time.
    """
    chunks = [list(queries[i::processes]) for i in range(processes)]
    with ThreadPoolExecutor(processes) as pool:
        answers = list(pool.map(_plays_chunk, chunks))
    merged: list[Any] = [None] * len(queries)
    for i, answer in enumerate(answers):
        if len(answer) != len(chunks[i]):
            raise RuntimeError("gnubg answered a different number of queries")
        for j, row in enumerate(answer):
            merged[i + j * processes] = row
    out: list[list[tuple[str, list[tuple[int, int]]]]] = []
    for (pid, d1, d2), row in zip(queries, merged, strict=True):
        if row[:3] != [pid, d1, d2]:
            raise RuntimeError(f"gnubg answered {row[:3]} for query {(pid, d1, d2)}")
        out.append([(text, [(a, b) for a, b in pairs]) for text, pairs in row[3]])
    return out
