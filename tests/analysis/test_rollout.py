"""``nard.analysis.rollout``: rollouts of a roll's plays and of the cube."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from nard.analysis.rollout import (
    BLOCK,
    RolloutError,
    RolloutSettings,
    block_trials,
    rollout_cube,
    rollout_plays,
    verdict,
)
from nard.cli.main import main
from nard.core.position import Position
from nard.engine.cube import CubeContext, CubeOwner, cube_decision
from nard.engine.engine import load_evaluator
from nard.engine.network import NeuralEvaluator
from nard.engine.search import evaluate_ply_boards

MIDDLE = Position.from_position_id("4DvgATDgc/ABMA")  # an early contact position


@pytest.fixture(scope="module")
def evaluator() -> NeuralEvaluator:
    return load_evaluator()


def test_every_candidate_throws_the_same_dice(evaluator: NeuralEvaluator) -> None:
    boards = np.array([list(MIDDLE), list(MIDDLE), list(MIDDLE.flip())], dtype=np.int64)
    trials = block_trials(evaluator, boards, seed=3, block=0, truncate=4)
    assert trials.shape == (3, BLOCK, 5)
    assert np.allclose(trials[0], trials[1], atol=1e-9)  # same board, same dice
    assert not np.allclose(trials[0], trials[2])
    assert trials[0].std(axis=0).max() > 0  # the trials differ from each other


def test_no_turn_played_is_the_one_ply_evaluation(evaluator: NeuralEvaluator) -> None:
    settings = RolloutSettings(trials=36, truncate=0)
    cube = rollout_cube(MIDDLE, settings=settings, evaluator=evaluator)
    one_ply = evaluate_ply_boards(np.array([list(MIDDLE)], dtype=np.int64), evaluator, 1)[0]
    assert cube.position.probabilities is not None
    assert np.allclose(cube.position.probabilities, one_ply, atol=1e-6)
    assert cube.position.standard_error == pytest.approx(0.0, abs=1e-9)


def test_plays_are_ranked_by_cubeful_equity_with_standard_errors(
    evaluator: NeuralEvaluator,
) -> None:
    settings = RolloutSettings(trials=72, truncate=4, candidates=4, window=0.3)
    result = rollout_plays(Position(), (4, 3), CubeContext(), settings, evaluator=evaluator)
    assert result.trials == 72 and not result.stopped_early
    assert 2 <= len(result.candidates) <= 4
    values = [c.cubeful for c in result.candidates]
    assert values == sorted(values, reverse=True)
    for c in result.candidates:
        assert 0 < c.standard_error < 0.05
        assert c.probabilities is not None and 0 <= c.probabilities[0] <= 1
    again = rollout_plays(Position(), (4, 3), CubeContext(), settings, evaluator=evaluator)
    assert again == result  # seeded


def test_a_clear_best_play_stops_the_rollout_early(evaluator: NeuralEvaluator) -> None:
    # 6-5 from the start: the run 24/13 against plays that leave blots everywhere
    settings = RolloutSettings(trials=36 * 10, truncate=3, candidates=3, window=2.0, stop=3.0)
    result = rollout_plays(Position(), (6, 5), settings=settings, evaluator=evaluator)
    assert result.stopped_early and result.trials < 360
    assert result.candidates[0].name == "24/13"


def test_a_cube_rollout_decides_the_cube_at_the_score(evaluator: NeuralEvaluator) -> None:
    # two rolls bear off the side on roll's last four checkers; the opponent needs three
    crushing = Position.from_points({1: 2, 2: 2}, {1: 5})
    settings = RolloutSettings(trials=36, truncate=3)
    money = rollout_cube(crushing, CubeContext(), settings, evaluator=evaluator)
    assert money.decision.double and not money.decision.take  # double, pass
    dmp = rollout_cube(
        crushing, CubeContext(match_length=5, score=(4, 4)), settings, evaluator=evaluator
    )
    assert "Never double" in dmp.decision.action  # a dead cube at double match point


def test_bad_settings_and_positions_are_refused(evaluator: NeuralEvaluator) -> None:
    for bad in ({"trials": 0}, {"truncate": -1}, {"candidates": 0}, {"stop": 0.0}):
        with pytest.raises(RolloutError):
            RolloutSettings(**bad)
    blocked = Position.from_points({25: 1, 6: 14}, {n: 2 for n in range(1, 7)})
    with pytest.raises(RolloutError, match="cannot be played"):
        rollout_plays(blocked, (6, 6), evaluator=evaluator)
    with pytest.raises(RolloutError, match="over"):
        rollout_cube(Position.from_points({}, {6: 3}), evaluator=evaluator)


def test_worker_processes_roll_the_same_dice(
    evaluator: NeuralEvaluator, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["rollout", "4HPwATDgc/ABMA", "21", "--trials", "72", "--truncate", "3", "--json"]
    assert main([*argv, "--jobs", "1"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert main([*argv, "--jobs", "2"]) == 0
    two = json.loads(capsys.readouterr().out)
    assert one == two and one["kind"] == "plays" and one["trials"] == 72


def test_the_cli_prints_the_cube_and_refuses_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["rollout", "4HPwATDgc/ABMA", "--trials", "36", "--truncate", "2", "--jobs", "1"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "proper cube action: No double" in out
    assert main(["rollout", "4HPwATDgc/ABMA", "43", "--trials", "0"]) == 2
    assert capsys.readouterr().err == "nard: error: trials must be at least 1, not 0\n"
    assert main(["rollout", "not-an-id", "43"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_the_cli_offers_the_beaver_where_the_xgid_allows_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An XGID's money rules reach the rollout's verdict: the opening position's double
    (the taker's equity after taking is above zero) is beavered where the XGID allows
    beavers (rules 2), and only there."""
    start = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:{}:0:10"
    options = ["--trials", "36", "--truncate", "2", "--jobs", "1"]
    assert main(["rollout", start.format(2), *options]) == 0
    out = capsys.readouterr().out
    assert "proper cube action: No double, beaver" in out
    assert main(["rollout", start.format(2), *options, "--json"]) == 0
    decision = json.loads(capsys.readouterr().out)
    assert (decision["double"], decision["take"], decision["beaver"]) == (False, True, True)
    assert decision["double_take"] < 0
    assert main(["rollout", start.format(0), *options]) == 0
    assert "proper cube action: No double, take\n" in capsys.readouterr().out


def test_a_ray_rollout_throws_the_same_dice(capsys: pytest.CaptureFixture[str]) -> None:
    """``--ray local`` (Ray is optional: ``pip install nard[ray]``) gives the process
    pool's answer."""
    pytest.importorskip("ray")
    argv = ["rollout", "4HPwATDgc/ABMA", "43", "--trials", "72", "--truncate", "2", "--json"]
    assert main([*argv, "--jobs", "1"]) == 0
    local = capsys.readouterr().out
    assert main([*argv, "--ray", "local"]) == 0
    assert capsys.readouterr().out == local


def test_a_cubeful_rollout_of_a_won_game_is_its_exact_result(evaluator: NeuralEvaluator) -> None:
    """The side on roll bears off its last checker with any roll while the opponent
    has all 15 left: no double wins a gammon at the cube (+2), double/take at twice
    the cube (+4), so the cube stays: too good, whatever the dice."""
    won = Position.from_points({1: 1}, {6: 15})
    settings = RolloutSettings(trials=36, truncate=3, cubeful=True)
    money = rollout_cube(won, CubeContext(), settings, evaluator=evaluator)
    d = money.decision
    assert (d.no_double, d.double_take, d.double_pass) == pytest.approx((2.0, 4.0, 1.0))
    assert d.action == "Too good to double, pass"
    assert money.position.standard_error == pytest.approx(0.0, abs=1e-9)
    jacoby = rollout_cube(won, CubeContext(jacoby=True), settings, evaluator=evaluator)
    # a gammon counts single while the cube is centred: double, pass
    assert jacoby.decision.no_double == pytest.approx(1.0)
    assert jacoby.decision.action == "Double, pass"
    dmp = rollout_cube(
        won, CubeContext(match_length=5, score=(4, 4)), settings, evaluator=evaluator
    )
    assert dmp.decision.no_double == pytest.approx(1.0)  # the match: +1 in EMG
    # worded as the hint words it (it said "Doubling not available" before)
    assert dmp.decision.action == "Never double, take (dead cube)"


def test_a_cubeful_rollout_turns_the_cube_inside_the_trials(evaluator: NeuralEvaluator) -> None:
    """A race the side on roll leads by far: doubled out at its first turn in the
    "no double" line (a pass ends the trial at +1), so no double is worth about +1."""
    race = Position.from_points(
        {6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {6: 4, 5: 4, 4: 3, 3: 2, 8: 2}
    )
    settings = RolloutSettings(trials=72, truncate=6, cubeful=True)
    result = rollout_cube(race, CubeContext(), settings, evaluator=evaluator)
    assert result.decision.action == "Double, pass"
    assert 0.9 < result.decision.no_double < 1.05
    assert result.to_json()["cubeful_trials"] is True
    plays = rollout_plays(
        Position(),
        (4, 3),
        CubeContext(),
        RolloutSettings(trials=36, truncate=4, cubeful=True),
        evaluator=evaluator,
    )
    assert plays.to_json()["cubeful_trials"] is True
    assert all(c.probabilities is None and 0 < c.standard_error < 0.1 for c in plays.candidates)


@pytest.mark.parametrize(
    "context",
    [
        CubeContext(),
        CubeContext(beavers=True),
        CubeContext(jacoby=True),
        CubeContext(cube=2, owner=CubeOwner.ON_ROLL),
        CubeContext(cube=2, owner=CubeOwner.OPPONENT),
        CubeContext(match_length=7, score=(2, 4)),
        CubeContext(match_length=5, score=(4, 2)),
        CubeContext(match_length=5, score=(4, 4)),
        CubeContext(match_length=5, score=(3, 4), crawford=True),
    ],
)
def test_a_rollout_words_the_cube_as_the_hint_does(context: CubeContext) -> None:
    """Equal equities get equal words: the rollouts' verdict and the hint's cube decision
    both come from :func:`~nard.engine.cube.decide_cube` (the rollout's own copy said
    "Doubling not available" at a dead cube, and knew no beaver or optional double)."""
    grid = np.linspace(0.02, 0.98, 7)
    for win in grid:
        for gammon in (0.0, 0.1, 0.35):
            probs = [win, min(gammon, win), 0.0, min(gammon, 1 - win) / 2, 0.0]
            hint = cube_decision(probs, context)
            rolled = verdict(hint.no_double, hint.double_take, hint.double_pass, context, probs[1])
            assert (rolled.action, rolled.double, rolled.take, rolled.beaver) == (
                hint.action,
                hint.double,
                hint.take,
                hint.beaver,
            ), (probs, context)
            if not context.is_money:
                assert rolled.mwc_no_double == pytest.approx(hint.mwc_no_double)
                assert rolled.mwc_double_take == pytest.approx(hint.mwc_double_take)


def test_the_cubeful_luck_takes_out_the_cubes_noise_too(evaluator: NeuralEvaluator) -> None:
    """Each roll's luck is measured in cubeful equity at the cube of the moment (the
    roll's best play's cubeful equity less the average over the 36 rolls), so the
    cube's jumps near the doubling window are corrected as the dice are. Measured on
    the opening position's cube, 108 trials cut at 5 turns: standard error 0.0031
    cubeful against 0.0017 cubeless (1.8x); with the cubeless luck times the stake
    it was 0.0098 (5.6x), and this test failed."""
    settings = RolloutSettings(trials=108, truncate=5, seed=2)
    start = Position()
    cubeless = rollout_cube(start, CubeContext(), settings, evaluator=evaluator)
    cubeful = rollout_cube(
        start, CubeContext(), replace(settings, cubeful=True), evaluator=evaluator
    )
    assert cubeless.double_take_error is None  # by formula from the mean probabilities
    assert cubeful.double_take_error is not None and cubeful.double_take_error > 0
    assert cubeful.to_json()["double_take_error"] == round(cubeful.double_take_error, 6)
    ratio = cubeful.position.standard_error / cubeless.position.standard_error
    assert ratio < 2.5, (cubeful.position.standard_error, cubeless.position.standard_error)
    # the same position's value, by two different estimates (noise: a few SE)
    gap = abs(cubeful.decision.no_double - cubeless.decision.no_double)
    assert gap < 0.05
