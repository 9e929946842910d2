"""``nard analyse`` on real files, as a user runs it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nard.cli.main import main

MATCH = Path(__file__).resolve().parents[1] / "data" / "gnubg_matches" / "match3_03.mat"


def test_the_text_report_names_both_players_and_their_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["analyse", str(MATCH), "--plies", "0", "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "3-point match: White (player 0) vs Black (player 1), analysed at 0 plies"
    )
    for label in ("Checker error rate (mEMG)", "PR (XG)", "Luck-adjusted result", "Rating"):
        assert label in out
    assert "blunder" in out  # this match has noisy cube players


def test_json_and_html_together(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "report.html"
    code = main(
        ["analyse", str(MATCH), "--plies", "0", "--jobs", "1", "--json", "--html", str(page)]
    )
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["match_length"] == 3 and len(doc["players"]) == 2
    text = page.read_text()
    assert text.startswith("<!doctype html>") and text.count("<svg") == 3  # one graph a game
    assert "Position ID" in text and "http" not in text  # self-contained


def test_worker_processes_give_the_same_analysis(capsys: pytest.CaptureFixture[str]) -> None:
    """``--jobs 2`` runs the console script in worker processes (spawned)."""
    script = Path(sys.executable).with_name("nard")
    run = [str(script), "analyse", str(MATCH), "--plies", "0", "--json"]
    two = subprocess.run([*run, "--jobs", "2"], capture_output=True, text=True, check=True)
    assert main(["analyse", str(MATCH), "--plies", "0", "--jobs", "1", "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert json.loads(two.stdout) == one
    assert two.stderr == ""  # no progress bar when stderr is not a terminal


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["analyse", "/nonexistent/file.mat"], "cannot read '/nonexistent/file.mat'"),
        (["analyse", str(MATCH), "--jobs", "-1"], "--jobs -1"),
        (["analyse", str(MATCH), "--weights", "/nope.npz"], "'/nope.npz' not found"),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_a_depth_not_offered_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["analyse", str(MATCH), "--plies", "3"])
    assert exc.value.code == 2
    assert "invalid choice: 3" in capsys.readouterr().err


def test_a_corrupt_record_is_refused_with_its_fault(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.mat"
    bad.write_text(MATCH.read_text().replace("24/23 13/8", "24/13 13/8", 1))
    assert main(["analyse", str(bad), "--plies", "0", "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nard: error: ") and "game 3" in err and err.count("\n") == 1
