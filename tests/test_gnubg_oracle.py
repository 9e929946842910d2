"""The oracle's helpers start gnubg safely on a fresh machine.

gnubg makes ``$HOME/.gnubg`` (and its ``backup``) at its first start; of two first
starts at once, one can find the folder made by the other between its check and
its ``mkdir`` and exit ("/root/.gnubg: File exists"): a judge of
``bench/cube_decisions.py --jobs 2`` died that way on a fresh machine. The
helpers make the folders before any gnubg starts.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import gnubg_oracle

BENCH = Path(__file__).resolve().parent.parent / "bench"


def test_the_oracle_makes_gnubgs_folders_before_gnubg_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    seen: list[bool] = []

    def fake_run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        seen.append((tmp_path / ".gnubg" / "backup").is_dir())
        return subprocess.CompletedProcess(argv, 0, "NARD:ready\n", "")

    monkeypatch.setattr(subprocess, "run", fake_run)
    assert gnubg_oracle.run_gnubg_script("print('NARD:ready')") == ["ready"]
    assert seen == [True]


def test_the_benchmarks_gnubg_makes_its_folders_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(BENCH))
    import strength

    seen: list[bool] = []

    class FakeGnubg:
        def __init__(self, argv: list[str], **kwargs: Any) -> None:
            seen.append((tmp_path / ".gnubg" / "backup").is_dir())
            self.stdout = iter(["NARD:ready\n"])
            self.stdin = None

        def poll(self) -> int:
            return 0  # ended: nothing for the process's close at exit to stop

    monkeypatch.setattr(subprocess, "Popen", FakeGnubg)
    process = strength.GnubgProcess("", "test", env={"HOME": str(tmp_path)})
    process._dir.cleanup()
    assert seen == [True]
