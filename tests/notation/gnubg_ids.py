"""GNU Backgammon as an oracle for the notation tests.

A small runner of our own (tests/gnubg_oracle.py belongs to the move-generation
tests): a batch of cases goes to one gnubg process as JSON, and the script
inside gnubg answers with JSON lines prefixed ``NARD:``, since gnubg prints a
banner and messages of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

__all__ = ["GNUBG", "have_gnubg", "needs_gnubg", "run_in_gnubg"]

GNUBG = os.environ.get("NARD_GNUBG", "/usr/games/gnubg")
_PREFIX = "NARD:"

_PROLOGUE = """
import json
import gnubg

def emit(value):
    # gnubg leaves some messages without a newline: start a line of our own.
    print('\\nNARD:' + json.dumps(value), flush=True)

payload = json.load(open(%(path)r))
for command in ('set display off', 'set player 0 human', 'set player 1 human',
                'set automatic roll off', 'set automatic game off'):
    gnubg.command(command)
"""

_EPILOGUE = """
emit('done')
"""


def have_gnubg() -> bool:
    """True when the gnubg binary is installed."""
    return Path(GNUBG).exists() or shutil.which(GNUBG) is not None


needs_gnubg = pytest.mark.skipif(
    not have_gnubg(),
    reason=f"GNU Backgammon not found at {GNUBG} (apt-get install -y gnubg)",
)
"""Skips a test when gnubg is not installed (mark it ``@pytest.mark.gnubg`` as well)."""


def run_in_gnubg(body: str, payload: object, timeout: float = 300.0) -> list[Any]:
    """Run ``body`` in gnubg's Python with ``payload`` and ``emit``; return what it emitted.

    Both players are human and gnubg neither rolls nor starts games by itself,
    so the script's commands alone decide the state.
    """
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "payload.json"
        data.write_text(json.dumps(payload))
        script = Path(tmp) / "script.py"
        script.write_text(_PROLOGUE % {"path": str(data)} + body + _EPILOGUE)
        proc = subprocess.run(
            [GNUBG, "-t", "-q", "-p", str(script)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=tmp,
            stdin=subprocess.DEVNULL,
        )
    answers = [
        json.loads(line[len(_PREFIX) :])
        for line in proc.stdout.splitlines()
        if line.startswith(_PREFIX)
    ]
    if proc.returncode != 0 or answers[-1:] != ["done"]:
        raise RuntimeError(
            f"gnubg failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-2000:]}"
        )
    return answers[:-1]
