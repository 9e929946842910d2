"""The `nard` command: output, JSON, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nard import Position
from nard.cli.main import main


def test_moves_lists_every_play_with_its_position_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["moves", "4HPwATDgc/ABMA", "31"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 16
    assert any("8/5 6/5" in line and line.endswith("sGfwATDgc/ABMA") for line in lines)


def test_moves_json_matches_the_library(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["moves", "4HPwATDgc/ABMA", "6-6", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    pos = Position()
    expected = [
        {"play": pos.format_play(p), "position_id": p.result.position_id()}
        for p in pos.legal_plays((6, 6))
    ]
    assert data == {"position_id": "4HPwATDgc/ABMA", "dice": [6, 6], "plays": expected}


def test_moves_when_nothing_can_be_played(capsys: pytest.CaptureFixture[str]) -> None:
    closed = Position.from_points({25: 1, 6: 14}, {p: 2 for p in range(1, 7)})
    assert main(["moves", closed.position_id(), "64"]) == 0
    assert "No legal play with 6-4" in capsys.readouterr().out


def test_show_draws_board_and_pips(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "4HPwATDgc/ABMA"]) == 0
    out = capsys.readouterr().out
    assert "pips 167" in out and "Position ID: 4HPwATDgc/ABMA" in out


def test_moves_takes_the_dice_from_an_xgid(capsys: pytest.CaptureFixture[str]) -> None:
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:1:0:10"
    assert main(["moves", xgid]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 16


def test_show_a_gnubg_id_describes_the_match(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "4HPwATDgc/ABMA:QYkqASAAIAAA"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "9-point match, score 2-4; cube 2 owned by player 0; player 1 on roll; dice 5-2" in lines


def test_moves_with_a_match_id_uses_its_dice(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["moves", "4HPwATDgc/ABMA:QYkqASAAIAAA"]) == 0
    texts = {line.split()[1] for line in capsys.readouterr().out.splitlines()}
    assert "13/11" in texts or "24/22" in texts  # 5-2 plays


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["moves", "4HPwATDgc/ABM", "31"], "invalid Position ID '4HPwATDgc/ABM'"),
        (["moves", "4HPwATDgc/AB!A", "31"], "invalid Position ID '4HPwATDgc/AB!A'"),
        (["moves", "4HPwATDgc/ABMA", "71"], "invalid dice '71'"),
        (["moves", "4HPwATDgc/ABMA", "3"], "invalid dice '3'"),
        (["show", "//////////////"], "invalid Position ID '//////////////'"),
        (["moves"], "required"),
        (["moves", "4HPwATDgc/ABMA"], "no dice given for '4HPwATDgc/ABMA'"),
        (["show", "4HPwATDgc/ABMA:QYkqASAAIAA"], "invalid Match ID 'QYkqASAAIAA'"),
        (["show", "XGID=abc"], "invalid XGID 'XGID=abc'"),
        (["moves", "4HPwATDgc/ABMA", "6-0"], "invalid dice '6-0'"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_status_2(argv: list[str], fragment: str) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "nard.cli.main", *argv], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    err = proc.stderr.strip().splitlines()
    assert len(err) == 1, proc.stderr
    assert err[0].startswith("nard: error: ")
    assert fragment in err[0]
    assert "Traceback" not in proc.stderr


def test_train_runs_resumes_and_refuses_a_corrupt_checkpoint(tmp_path: Path) -> None:
    checkpoint = tmp_path / "net.npz"
    args = ["train", str(checkpoint), "--hidden", "8", "--benchmark-every", "1000", "--quiet"]
    first = subprocess.run(
        [sys.executable, "-m", "nard.cli.main", *args, "--games", "4"],
        capture_output=True,
        text=True,
    )
    assert first.returncode == 0, first.stderr
    assert checkpoint.exists()
    again = subprocess.run(
        [sys.executable, "-m", "nard.cli.main", *args, "--games", "6"],
        capture_output=True,
        text=True,
    )
    assert again.returncode == 0, again.stderr
    checkpoint.write_bytes(b"not a checkpoint")
    bad = subprocess.run(
        [sys.executable, "-m", "nard.cli.main", *args, "--games", "8"],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2
    lines = bad.stderr.strip().splitlines()
    assert len(lines) == 1 and "net.npz" in lines[0] and "Traceback" not in bad.stderr


def test_show_prints_the_match_id_and_the_xgid(capsys: pytest.CaptureFixture[str]) -> None:
    from nard.notation import XgidRecord

    assert main(["show", "4HPwATDgc/ABMA:QYkqASAAIAAA"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "Match ID: QYkqASAAIAAA" in lines
    xgid = next(line for line in lines if line.startswith("XGID="))
    record = XgidRecord.from_xgid(xgid)
    assert record.position == Position() and record.match.score == (2, 4)
    assert record.match.dice == (5, 2) and record.match.cube_value == 2
    assert main(["show", "4HPwATDgc/ABMA"]) == 0  # a bare position: money, cube centred
    assert (
        capsys.readouterr()
        .out.splitlines()[-1]
        .startswith("XGID=-b----E-C---eE---c-e----B-:0:0:1:")
    )


def test_show_keeps_an_xgids_money_rules(capsys: pytest.CaptureFixture[str]) -> None:
    """An XGID's beaver flag and cube limit, which gnubg's IDs cannot hold, were
    dropped: `nard show` wrote the rules field 1 for 3 and the limit 10 for 8."""
    xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:8"
    assert main(["show", xgid]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert xgid in lines
    assert "money game, score 0-0; cube 1 centred; player 1 on roll; Jacoby rule; beavers" in lines


def test_hint_plays_an_xgids_beaver_rule(capsys: pytest.CaptureFixture[str]) -> None:
    """Doubled at the start, the taker beavers where the XGID allows it (rules field
    2); the hint ignored the flag and said take."""
    start = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:{}:0:10"
    assert main(["hint", start.format(2), "--json"]) == 0
    allowed = json.loads(capsys.readouterr().out)
    assert allowed["beaver"] is True and allowed["action"] == "No double, beaver"
    assert main(["hint", start.format(0), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["beaver"] is False


def test_met_prints_the_match_equity_table(capsys: pytest.CaptureFixture[str]) -> None:
    from nard.engine.cube import KAZAROSS_XG2

    assert main(["met", "--away", "7", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    pre, post = data["pre_crawford"], data["post_crawford"]
    assert len(pre) == 7 and all(len(row) == 7 for row in pre) and len(post) == 7
    for i in range(7):
        assert pre[i][i] == 0.5
        for j in range(7):
            assert abs(pre[i][j] + pre[j][i] - 1.0) < 1e-9  # one side's chance, the other's rest
    assert pre[0][1] == KAZAROSS_XG2.equity(1, 2)  # the Crawford game at 1-away, 2-away
    assert post[1] == KAZAROSS_XG2.equity(2, 1, post_crawford=True)
    assert main(["met", "--away", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["away", "1", "2", "3"] and lines[2].split()[1] == "50.0"
    assert main(["met", "--away", "0"]) == 2


def test_show_gives_the_bearoff_database_figures(capsys: pytest.CaptureFixture[str]) -> None:
    """#29: the bear-off database's figures for a position (each side home)."""
    from nard.core import Position

    race = Position.from_points({1: 1}, {6: 2})
    assert main(["show", race.position_id()]) == 0
    out = capsys.readouterr().out
    assert "side on roll 1.000 rolls, EPC 8.2 (pips 1, wastage 7.2); done in 1: 100.0%" in out
    assert "race: side on roll wins 100.00%" in out
    contact = Position.from_points({1: 1, 13: 1}, {6: 2})  # one side still outside
    assert main(["show", contact.position_id()]) == 0
    out = capsys.readouterr().out
    assert "  opponent " in out and "side on roll" not in out.split("Bear-off")[1]
    assert main(["show", Position().position_id()]) == 0
    assert "Bear-off" not in capsys.readouterr().out
