"""`nard hint`: ranked plays and cube decisions as gnubg's hint shows them, JSON, errors."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path

import numpy as np
import pytest

from nard import Position
from nard.cli.hint import HintError, cmd_hint
from nard.cli.main import main
from nard.engine.cube import CubeContext, CubeOwner, match_context
from nard.engine.engine import Engine
from nard.engine.network import Network, WeightsError
from nard.notation import MatchState
from nard.notation.match_id import CubeOwner as MatchCubeOwner
from nard.training.playout import play_games

START = "4HPwATDgc/ABMA"
RACE = Position.from_points(
    {6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 12: 2}
)
PLAY_LINE = re.compile(
    r"^ {2,4}\d+\. Cubeless 0-ply +(\S.*\S) +Eq\.: [+-]\d\.\d{3}( \([+-]\d\.\d{3}\))?$"
)
PROB_LINE = re.compile(r"^ {7}(\d\.\d{3} ){3}- \d\.\d{3} \d\.\d{3} \d\.\d{3}$")


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    path = tmp_path / "net.npz"
    Network.random(hidden=8, seed=11).save(path)
    return path


def test_hint_lists_ranked_plays_as_gnubg(
    weights: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["hint", START, "31", "--weights", str(weights)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2 * 16
    ranking = Engine(weights=weights).rank_plays(Position(), (3, 1))
    for i, r in enumerate(ranking):
        play_line, prob_line = lines[2 * i], lines[2 * i + 1]
        match = PLAY_LINE.match(play_line)
        assert match, play_line
        assert match.group(1).strip() == Position().format_play(r.play)
        assert f"Eq.: {r.equity:+.3f}" in play_line
        assert (i == 0) == ("(" not in play_line)
        assert PROB_LINE.match(prob_line), prob_line
        assert prob_line.split()[0] == f"{r.probabilities[0]:.3f}"
        assert prob_line.split()[4] == f"{1 - r.probabilities[0]:.3f}"


def test_hint_json(weights: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hint", START, "6-6", "--json", "--weights", str(weights)]) == 0
    data = json.loads(capsys.readouterr().out)
    ranking = Engine(weights=weights).rank_plays(Position(), (6, 6))
    assert data["position_id"] == START and data["dice"] == [6, 6]
    assert data["level"] == "expert"
    assert [p["play"] for p in data["plays"]] == [Position().format_play(r.play) for r in ranking]
    first = data["plays"][0]
    assert first["rank"] == 1 and first["difference"] == 0.0 and first["ply"] == 0
    assert first["equity"] == pytest.approx(ranking[0].equity)
    probs = first["probabilities"]
    assert list(probs) == [
        "win",
        "win_gammon",
        "win_backgammon",
        "lose",
        "lose_gammon",
        "lose_backgammon",
    ]
    assert probs["win"] + probs["lose"] == pytest.approx(1.0)
    assert all(p["difference"] <= 0 for p in data["plays"])


def test_hint_takes_the_dice_from_the_match_id(
    weights: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["hint", f"{START}:QYkqASAAIAAA", "--json", "--weights", str(weights)]) == 0
    assert json.loads(capsys.readouterr().out)["dice"] == [5, 2]


def test_hint_world_class_searches_deeper(
    weights: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["hint", START, "31", "--json", "--weights", str(weights), "--level", "world-class"]
    assert main(args) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["level"] == "world-class" and data["plays"][0]["ply"] == 2


def test_hint_roller_rolls_out_the_close_plays(capsys: pytest.CaptureFixture[str]) -> None:
    # the opening 4-3's three best plays are within 0.01 of each other at 2-ply
    assert main(["hint", START, "43", "--json", "--level", "roller"]) == 0
    data = json.loads(capsys.readouterr().out)
    rolled = [p for p in data["plays"] if p["trials"]]
    assert data["level"] == "roller" and len(rolled) >= 2 and rolled[0]["rank"] == 1
    assert all(p["trials"] >= 36 and p["ply"] == 2 for p in rolled)
    assert main(["hint", START, "43", "--level", "roller"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert re.match(r" +1\. Cubeless R \d+ ", first), first


def test_hint_without_dice_gives_the_cube_decision(
    weights: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["hint", RACE.position_id(), "--weights", str(weights)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Cube analysis"
    assert re.fullmatch(r"1-ply cubeless equity [+-]\d\.\d{3}", lines[1])  # the expert's cube
    assert lines[3] == "Cubeful equities:"
    names = sorted(re.sub(r"^\d\. (.*?) +[+-]\d.*$", r"\1", line) for line in lines[4:7])
    assert names == ["Double, pass", "Double, take", "No double"]
    assert "(" not in lines[4] and "(" in lines[5] and "(" in lines[6]
    decision = Engine(weights=weights).cube_action(RACE)
    assert lines[7] == f"Proper cube action: {decision.action}"


def test_hint_cube_json_with_a_match(weights: Path, capsys: pytest.CaptureFixture[str]) -> None:
    match = MatchState(
        match_length=7, score=(2, 4), cube_value=2, cube_owner=MatchCubeOwner.PLAYER_1, dice_owner=1
    )
    gnubg_id = f"{RACE.position_id()}:{match.match_id()}"
    assert main(["hint", gnubg_id, "--json", "--weights", str(weights)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["match_length"] == 7 and data["score"] == [4, 2]
    assert data["cube"] == 2 and data["cube_owner"] == "on roll"
    decision = Engine(weights=weights).cube_action(RACE, match_context(match))
    assert data["action"] == decision.action
    assert data["no_double"] == pytest.approx(decision.no_double)
    assert set(data["mwc"]) == {"no_double", "double_take", "double_pass"}


def test_match_context_is_seen_from_the_player_on_roll() -> None:
    state = MatchState(
        match_length=9, score=(2, 4), cube_value=4, cube_owner=MatchCubeOwner.PLAYER_0
    )
    assert match_context(state) == CubeContext(
        cube=4, owner=CubeOwner.ON_ROLL, match_length=9, score=(2, 4)
    )
    swapped = MatchState(
        match_length=9,
        score=(2, 4),
        cube_value=4,
        cube_owner=MatchCubeOwner.PLAYER_0,
        dice_owner=1,
    )
    assert match_context(swapped) == CubeContext(
        cube=4, owner=CubeOwner.OPPONENT, match_length=9, score=(4, 2)
    )
    money = MatchState(jacoby=True)
    assert match_context(money) == CubeContext(jacoby=True)
    crawford = MatchState(match_length=5, score=(4, 1), crawford=True, dice_owner=1)
    ctx = match_context(crawford)
    assert ctx.crawford and ctx.score == (1, 4) and not ctx.jacoby
    assert match_context(MatchState(match_length=64)).match_length == 64


@pytest.mark.parametrize("on_roll", [0, 1])
def test_hint_cube_decision_in_a_40_point_match(
    weights: Path, on_roll: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """Beyond the 25 points Kazaross-XG2 publishes: the table extended as gnubg does."""
    match = MatchState(match_length=40, score=(30, 12), dice_owner=on_roll)
    gnubg_id = f"{RACE.position_id()}:{match.match_id()}"
    assert main(["hint", gnubg_id, "--weights", str(weights)]) == 0
    lines = capsys.readouterr().out.splitlines()
    decision = Engine(weights=weights).cube_action(RACE, match_context(match))
    assert lines[0] == "Cube analysis" and lines[-1] == f"Proper cube action: {decision.action}"
    assert main(["hint", gnubg_id, "--json", "--weights", str(weights)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["match_length"] == 40
    assert data["score"] == ([30, 12] if on_roll == 0 else [12, 30])
    assert data["action"] == decision.action
    assert 0.0 < data["mwc"]["no_double"] < 1.0


def test_a_match_id_longer_than_64_points_is_one_line_exit_2(
    weights: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    key = int.from_bytes(base64.b64decode(MatchState(match_length=64).match_id()), "little")
    key += 1 << 21  # the match length field (bits 21-35): 65
    too_long = base64.b64encode(key.to_bytes(9, "little")).decode("ascii")
    assert _exit(main, ["hint", f"{RACE.position_id()}:{too_long}", "--weights", str(weights)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nard: error: ") and "65" in err and "64" in err
    assert len(err.strip().splitlines()) == 1


def test_hint_with_no_legal_play(weights: Path, capsys: pytest.CaptureFixture[str]) -> None:
    closed = Position.from_points({25: 1, 6: 14}, {p: 2 for p in range(1, 7)})
    assert cmd_hint(closed.position_id(), "64", False, str(weights), "expert") == 0
    assert "No legal play with 6-4" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["hint", "notanid", "31"], "nard: error: "),
        (["hint", START, "71"], "nard: error: "),
        (["hint", f"{START}:XXXX", "31"], "nard: error: "),
        (["hint", START, "31", "--level", "grandmaster"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    weights: Path,
    args: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _exit(main, [*args, "--weights", str(weights)]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_missing_weights_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.npz"
    assert main(["hint", START, "31", "--weights", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nard: error: ") and str(missing) in err
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(WeightsError):
        cmd_hint(START, "31", False, str(missing), "expert")


def test_cmd_hint_errors_are_nard_errors(weights: Path) -> None:
    with pytest.raises(HintError, match="unknown level"):
        cmd_hint(START, "31", False, str(weights), "grandmaster")
    over = Position.from_points({}, {6: 15})
    with pytest.raises(HintError, match="over"):
        cmd_hint(over.position_id(), None, False, str(weights), "expert")


def _exit(func: object, argv: list[str]) -> int:
    """``main(argv)``, or the status argparse exits with."""
    assert callable(func)
    try:
        status = func(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    assert isinstance(status, int)
    return status


def test_a_hint_at_a_match_score_ranks_by_cubeful_match_equity(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Tried on 2026-12-05: `nard hint POSITION:MATCHID DICE` ranked by cubeless money
    equity whatever the score; the computer, by cubeful equity at the score, played
    otherwise. Now the hint ranks as the computer plays (and as gnubg ranks)."""
    engine = Engine("expert")
    rng = np.random.default_rng(5)
    games = play_games(engine.evaluator, 6, seed=5)
    boards = games.boards[rng.permutation(len(games.boards))[:60]]
    differs = 0
    for n, board in enumerate(boards):
        position = Position(tuple(int(c) for c in board))
        if position.is_game_over() or position == Position():
            continue
        dice = (int(rng.integers(1, 7)), int(rng.integers(1, 7)))
        score = [(0, 0), (4, 6), (2, 5), (6, 3)][n % 4]
        state = MatchState(match_length=7, score=score, dice=(max(dice), min(dice)))
        ctx = match_context(state)
        ranking = engine.rank_plays(position, dice, ctx)
        if not ranking:
            continue
        best = engine.best_play(position, dice, match=ctx)
        assert ranking[0].play == best
        values = [r.cubeful for r in ranking if r.cubeful is not None]
        assert values == sorted(values, reverse=True)
        differs += ranking[0].play != engine.rank_plays(position, dice)[0].play
        if n == 0:
            assert main(["hint", f"{position.position_id()}:{state.match_id()}", "--json"]) == 0
            data = json.loads(capsys.readouterr().out)
            assert data["plays"][0]["play"] == position.format_play(best)
            assert data["plays"][0]["cubeful_equity"] is not None
    assert differs >= 1  # the score changes some choices: the old hint got those wrong
