"""`nard replay`, `nard verify` and `nard export` on record files."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from nard.cli.main import main
from nard.notation.json_record import read_json, write_json
from tests.match.test_verify import fair_match


def _nard(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "nard.cli.main", *argv], capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def fair_record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    record, dice = fair_match(21)
    path = tmp_path_factory.mktemp("records") / "match.json"
    path.write_text(write_json(record, dice))
    return path


def test_replay_json_summary(fair_record: Path) -> None:
    proc = _nard("replay", "--json", str(fair_record))
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["match_length"] == 5
    assert max(summary["final_score"]) >= 5
    assert {g["result"] for g in summary["games"]} <= {
        "single",
        "gammon",
        "backgammon",
        "pass",
        "resign",
    }
    assert sum(g["points"] for g in summary["games"]) == sum(summary["final_score"])


def test_replay_text(fair_record: Path) -> None:
    proc = _nard("replay", str(fair_record))
    assert proc.returncode == 0
    assert proc.stdout.startswith("5-point match: Ali (player 0) vs Sara (player 1)")
    assert "final score:" in proc.stdout


def test_verify_ok_and_tampered(fair_record: Path, tmp_path: Path) -> None:
    ok = _nard("verify", str(fair_record))
    assert ok.returncode == 0 and ok.stdout.startswith("verified:")
    record, dice = read_json(fair_record.read_text())
    log = list(dice.log) if dice else []
    log[3] = log[3] % 6 + 1
    assert dice is not None
    bad = tmp_path / "bad.json"
    bad.write_text(write_json(record, dataclasses.replace(dice, log=tuple(log))))
    proc = _nard("verify", str(bad))
    assert proc.returncode == 1
    assert "MISMATCH die 4: the seed gives" in proc.stdout
    assert "verification FAILED" in proc.stdout


def test_export_json_to_json_keeps_everything(fair_record: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy.json"
    proc = _nard("export", str(fair_record), str(out))
    assert proc.returncode == 0, proc.stderr
    assert read_json(out.read_text()) == read_json(fair_record.read_text())


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("{ broken", "invalid JSON"),
        (
            '{"format": "nard-match-record", "version": 1, "match_length": 3, "games": '
            '[{"score": [0, 0], "actions": [{"player": 1, "action": "take"}]}]}',
            "game 1, action 1 (player 1 take)",
        ),
    ],
)
def test_bad_records_are_one_line_errors(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    for command in ("replay", "verify"):
        proc = _nard(command, str(path))
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("nard: error:")
        assert fragment in lines[0] and "Traceback" not in proc.stderr


def test_missing_file_and_unknown_format(tmp_path: Path) -> None:
    proc = _nard("replay", str(tmp_path / "nope.json"))
    assert proc.returncode == 2 and "cannot read" in proc.stderr
    odd = tmp_path / "record.txt"
    odd.write_text("hello")
    proc = _nard("replay", str(odd))
    assert proc.returncode == 2 and "cannot tell the format" in proc.stderr


def test_export_never_writes_an_invalid_record(tmp_path: Path, fair_record: Path) -> None:
    record, dice = read_json(fair_record.read_text())
    g = record.games[0]
    broken = dataclasses.replace(record, games=(dataclasses.replace(g, points=99),))
    src = tmp_path / "broken.json"
    src.write_text(write_json(broken, dice))
    target = tmp_path / "out.json"
    target.write_text("precious")
    proc = _nard("export", str(src), str(target))
    assert proc.returncode == 2
    assert target.read_text() == "precious"


def test_a_mat_file_that_doubles_in_the_crawford_game_replays_and_exports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The Crawford rule inferred off (and said) instead of the file refused."""
    from nard.notation.mat import write_mat
    from tests.match.test_replay import _match_without_crawford

    text = write_mat(_match_without_crawford())
    source = tmp_path / "gnubg.mat"
    source.write_text("\n".join(line for line in text.splitlines() if "[Crawford" not in line))
    assert main(["replay", str(source)]) == 0
    out = capsys.readouterr().out
    assert "final score: 3-2" in out and "note: the Crawford rule was off (game 2" in out
    target = tmp_path / "match.json"
    assert main(["export", str(source), str(target)]) == 0
    assert "the Crawford rule was off" in capsys.readouterr().out
    assert json.loads(target.read_text())["rules"]["crawford"] is False
