"""GNU Backgammon as an oracle for the notation tests: JSON in, JSON lines out.

A batch of cases goes to one gnubg process as a JSON payload; the script
inside gnubg answers through ``emit``, one ``NARD:``-prefixed JSON line per
answer (see :mod:`tests.gnubg_oracle`, which runs it).
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from tests.gnubg_oracle import GNUBG, have_gnubg, requires_gnubg, run_gnubg_script

__all__ = ["GNUBG", "have_gnubg", "needs_gnubg", "run_in_gnubg"]

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

needs_gnubg = requires_gnubg
"""Skips a test when gnubg is not installed (mark it ``@pytest.mark.gnubg`` as well)."""


def run_in_gnubg(body: str, payload: object, timeout: float = 300.0) -> list[Any]:
    """Run ``body`` in gnubg's Python with ``payload`` and ``emit``; return what it emitted.

    Both players are human and gnubg neither rolls nor starts games by itself,
    so the script's commands alone decide the state.
    """
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "payload.json"
        data.write_text(json.dumps(payload))
        lines = run_gnubg_script(_PROLOGUE % {"path": str(data)} + body + _EPILOGUE, timeout)
    answers = [json.loads(line) for line in lines]
    if answers[-1:] != ["done"]:
        raise RuntimeError(f"gnubg stopped early; last answers: {answers[-3:]}")
    return answers[:-1]
