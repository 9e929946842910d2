"""The Engine API: levels, noise, weights loading, evaluation and the cube."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from nard import Position
from nard.core.dice import ALL_ROLLS
from nard.engine import engine as engine_module
from nard.engine.cube import CubeContext, CubeDecision, CubeOwner, cube_decision
from nard.engine.engine import (
    DEFAULT_WEIGHTS,
    LEVEL_SETTINGS,
    Engine,
    Level,
    pip_count_cube,
)
from nard.engine.evaluator import FakeEvaluator
from nard.engine.network import Network, NeuralEvaluator, PruningEvaluator, WeightsError
from nard.engine.roller import ROLLER_PLAN
from nard.engine.search import (
    DEFAULT_FILTER,
    WORLD_CLASS_FILTER,
    FilterStep,
    best_play,
    evaluate_ply,
    rank_plays,
)

MIDGAME = Position.from_points({24: 2, 13: 4, 8: 3, 6: 4, 5: 2}, {24: 1, 13: 5, 8: 3, 6: 4, 4: 2})
POSITIONS = [Position(), MIDGAME, MIDGAME.flip()]


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    path = tmp_path / "net.npz"
    Network.random(hidden=8, seed=7).save(path)
    return path


def test_levels_follow_gnubg() -> None:
    assert [lv.value for lv in Level] == [
        "beginner",
        "intermediate",
        "expert",
        "world-class",
        "roller",
    ]
    beginner, intermediate, expert, world, roller = (LEVEL_SETTINGS[lv] for lv in Level)
    assert (beginner.plies, beginner.noise, beginner.pip_cube) == (0, 0.060, True)
    assert (intermediate.plies, intermediate.noise, intermediate.pip_cube) == (0, 0.040, False)
    assert (expert.plies, expert.noise) == (0, 0.0)
    assert (world.plies, world.noise, world.move_filter) == (2, 0.0, WORLD_CLASS_FILTER)
    assert expert.move_filter == DEFAULT_FILTER
    # gnubg's normal 0-ply step, then its large 2-ply step's numbers at ply 1.
    assert WORLD_CLASS_FILTER.steps == (FilterStep(0, 8, 0.16), FilterStep(0, 4, 0.08))
    assert (world.prune_keep, expert.prune_keep) == (8, 0)
    # the roller searches as world class, then rolls out its best candidates
    assert replace(roller, roller=None, time_limit=1.0) == world and roller.roller == ROLLER_PLAN
    assert world.roller is None


def test_world_class_prunes_with_the_shipped_pruning_network() -> None:
    engine = Engine(Level.WORLD_CLASS, time_limit=None)
    assert isinstance(engine.evaluator, NeuralEvaluator)
    assert engine.pruning is not None and engine.pruning.keep == 8
    assert isinstance(engine.pruning.evaluator, PruningEvaluator)
    assert engine.pruning.evaluator.network == engine.evaluator.networks.pruning
    pruned = engine.rank_plays(MIDGAME, (6, 4))
    full = rank_plays(MIDGAME, (6, 4), engine.evaluator, 2, WORLD_CLASS_FILTER)
    assert pruned[0].ply == 2 and pruned[0].play == full[0].play
    # Its 2-ply equities are those of a full search up to the pruned replies.
    assert abs(pruned[0].equity - full[0].equity) < 0.02
    assert Engine(Level.EXPERT).pruning is None


def test_expert_plays_the_0_ply_best() -> None:
    ev = FakeEvaluator()
    engine = Engine("expert", evaluator=ev)
    for pos in POSITIONS:
        for roll in ALL_ROLLS:
            assert engine.best_play(pos, roll) == best_play(pos, roll, ev)


def test_world_class_searches_two_plies() -> None:
    ev = NeuralEvaluator(Network.random(hidden=8, seed=3))
    engine = Engine(Level.WORLD_CLASS, evaluator=ev, time_limit=None)
    ranking = engine.rank_plays(Position(), (3, 1))
    assert ranking[0].ply == 2
    assert ranking == rank_plays(Position(), (3, 1), ev, 2, WORLD_CLASS_FILTER)
    assert engine.best_play(Position(), (3, 1)) == ranking[0].play
    probs, equity = engine.evaluate(MIDGAME)
    expected = evaluate_ply([MIDGAME], ev, 2)[0]
    assert np.allclose(probs, expected)
    assert equity == pytest.approx(
        probs[0] - (1 - probs[0]) + probs[1] - probs[3] + probs[2] - probs[4]
    )


def test_noise_is_deterministic_for_a_seed() -> None:
    ev = FakeEvaluator()

    def choices(seed: int) -> list[object]:
        engine = Engine("beginner", evaluator=ev, seed=seed)
        return [engine.best_play(pos, roll) for pos in POSITIONS for roll in ALL_ROLLS]

    first = choices(1)
    assert choices(1) == first
    # Order does not matter: a fresh engine asked once gives the same play.
    roll = ALL_ROLLS[-2]
    again = Engine("beginner", evaluator=ev, seed=1).best_play(MIDGAME, roll)
    assert again == first[len(ALL_ROLLS) + len(ALL_ROLLS) - 2]
    assert Engine("beginner", evaluator=ev, seed=1).noise(MIDGAME) == pytest.approx(
        Engine("beginner", evaluator=ev, seed=1).noise(MIDGAME)
    )
    assert Engine("expert", evaluator=ev, seed=1).noise(MIDGAME) == 0.0


def test_noise_makes_beginner_differ_from_expert_sometimes() -> None:
    ev = FakeEvaluator()
    beginner = Engine("beginner", evaluator=ev, seed=0)
    expert = Engine("expert", evaluator=ev)
    pairs = [
        (beginner.best_play(p, r), expert.best_play(p, r)) for p in POSITIONS for r in ALL_ROLLS
    ]
    differ = sum(a != b for a, b in pairs)
    assert 0 < differ < len(pairs)
    cases = [(p, r) for p in POSITIONS for r in ALL_ROLLS]
    assert all(b in p.legal_plays(r) for (b, _), (p, r) in zip(pairs, cases, strict=True))


def test_no_legal_play_is_none() -> None:
    closed = Position.from_points({25: 1, 6: 14}, {p: 2 for p in range(1, 7)})
    for level in Level:
        engine = Engine(level, evaluator=FakeEvaluator())
        assert engine.best_play(closed, (6, 4)) is None
        assert engine.rank_plays(closed, (6, 4)) == []


def test_weights_are_loaded(weights: Path) -> None:
    engine = Engine(weights=weights)
    expected = NeuralEvaluator(Network.load(weights)).evaluate([MIDGAME])[0]
    probs, _ = engine.evaluate(MIDGAME)
    assert np.allclose(probs, expected)


def test_missing_weights_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.npz"
    with pytest.raises(WeightsError, match=r"nope\.npz"):
        Engine(weights=missing)


def test_missing_default_weights_say_how_to_get_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert DEFAULT_WEIGHTS.name == "nard-net.npz"
    missing = tmp_path / "nard-net.npz"
    monkeypatch.setattr(engine_module, "DEFAULT_WEIGHTS", missing)
    with pytest.raises(WeightsError) as info:
        Engine()
    assert str(missing) in str(info.value) and "nard train" in str(info.value)


def test_corrupt_weights_are_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(WeightsError, match=r"bad\.npz"):
        Engine(weights=bad)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="unknown level"):
        Engine("grandmaster", evaluator=FakeEvaluator())
    with pytest.raises(ValueError, match="not both"):
        Engine(evaluator=FakeEvaluator(), weights="x.npz")
    with pytest.raises(ValueError, match="seed"):
        Engine(evaluator=FakeEvaluator(), seed=-1)


def test_cube_action_is_the_cube_decision_of_the_evaluation() -> None:
    engine = Engine("expert", evaluator=FakeEvaluator())
    for pos in POSITIONS:
        for ctx in (
            None,
            CubeContext(match_length=7, score=(3, 5), cube=2, owner=CubeOwner.ON_ROLL),
        ):
            decision = engine.cube_analysis(pos, ctx)[2]
            assert isinstance(decision, CubeDecision)
            probs, _ = engine.evaluate(pos, engine.settings.cube_plies)
            assert decision == cube_decision(probs, ctx, position=pos)
            assert engine.cube_action(pos, ctx) == decision
    dead = CubeContext(match_length=5, score=(4, 2))
    assert engine.cube_action(MIDGAME, dead).action.startswith("Never double")


def test_expert_cube_looks_one_ply_deeper_than_its_plays() -> None:
    ev = FakeEvaluator()
    engine = Engine("expert", evaluator=ev)
    assert engine.plies == 0
    decision = engine.cube_action(MIDGAME, CubeContext(match_length=5))
    probs = evaluate_ply([MIDGAME], ev, 1)[0]
    assert decision == cube_decision(probs, CubeContext(match_length=5), position=MIDGAME)
    assert engine.evaluate(MIDGAME)[0] == tuple(evaluate_ply([MIDGAME], ev, 0)[0].tolist())


def test_world_class_cube_uses_two_plies() -> None:
    ev = FakeEvaluator()
    decision = Engine("world-class", evaluator=ev).cube_action(MIDGAME)
    probs = evaluate_ply([MIDGAME], ev, 2)[0]
    assert decision == cube_decision(probs, position=MIDGAME)


def test_pip_count_cube_is_8_9_12() -> None:
    even = Position.from_points({6: 5, 5: 5, 4: 5}, {6: 5, 5: 5, 4: 5})
    assert pip_count_cube(even) == engine_module.PipCube(0.0, False, True)
    # 75 pips against 82 (9.3%): double, take, and redouble (9%).
    ahead = Position.from_points({6: 5, 5: 5, 4: 5}, {7: 1, 6: 7, 5: 5, 4: 2})
    assert ahead.pip_counts() == (75, 82)
    assert pip_count_cube(ahead) == engine_module.PipCube(7 / 75, True, True)
    assert pip_count_cube(ahead, CubeContext(cube=2, owner=CubeOwner.ON_ROLL)).double
    # 75 against 81 (8%): double, but not redouble.
    less = Position.from_points({6: 5, 5: 5, 4: 5}, {6: 10, 5: 4, 1: 1})
    assert less.pip_counts() == (75, 81)
    assert pip_count_cube(less).double
    assert not pip_count_cube(less, CubeContext(cube=2, owner=CubeOwner.ON_ROLL)).double
    assert not pip_count_cube(ahead, CubeContext(cube=2, owner=CubeOwner.OPPONENT)).double
    # 75 against 85 (13%): double, pass.
    far = Position.from_points({6: 5, 5: 5, 4: 5}, {6: 10, 5: 5})
    assert far.pip_counts() == (75, 85)
    verdict = pip_count_cube(far)
    assert (verdict.double, verdict.take) == (True, False)


def test_beginner_cube_uses_the_pip_rule() -> None:
    far = Position.from_points({6: 5, 5: 5, 4: 5}, {6: 10, 5: 5})
    beginner = Engine("beginner", evaluator=FakeEvaluator())
    decision = beginner.cube_action(far)
    assert (decision.action, decision.double, decision.take) == ("Double, pass", True, False)
    behind = beginner.cube_action(far.flip())
    assert (behind.action, behind.double, behind.take) == ("No double, take", False, True)
    owned = beginner.cube_action(far, CubeContext(cube=2, owner=CubeOwner.ON_ROLL))
    assert owned.action == "Redouble, pass"
    theirs = beginner.cube_action(far, CubeContext(cube=2, owner=CubeOwner.OPPONENT))
    assert (theirs.action, theirs.double) == ("Doubling not available", False)


def test_cubeful_play_maximises_play_equity() -> None:
    # With the cube and score the engine plays the candidate of best cubeful
    # equity among those of its deepest ply; without them, the cubeless best.
    from nard.engine.cube import play_equity
    from nard.engine.evaluator import flip_probabilities

    engine = Engine("expert")
    contexts = [
        CubeContext(),
        CubeContext(jacoby=True),
        CubeContext(match_length=5, score=(4, 4)),  # double match point
        CubeContext(match_length=7, score=(2, 5), cube=2, owner=CubeOwner.OPPONENT),
    ]
    for pos in POSITIONS:
        for dice in ((6, 4), (3, 1), (5, 5)):
            ranking = engine.rank_plays(pos, dice)
            for ctx in contexts:
                chosen = engine.best_play(pos, dice, match=ctx)
                values = {
                    r.play: play_equity(flip_probabilities(r.probabilities), r.play.result, ctx)
                    for r in ranking
                }
                assert chosen is not None
                assert values[chosen] == max(values.values())
            assert engine.best_play(pos, dice) == ranking[0].play


def test_gammons_count_for_nothing_at_double_match_point() -> None:
    # A gammonish bear-in where the opponent (on roll after the play) can be
    # gammoned: at DMP the engine's choice depends on winning chances only.
    from nard.engine.cube import play_equity

    dmp = CubeContext(match_length=3, score=(2, 2))
    for probs in ([0.3, 0.0, 0.0, 0.2, 0.1], [0.3, 0.25, 0.05, 0.0, 0.0]):
        assert (
            abs(play_equity(probs, MIDGAME, dmp) - play_equity([0.3, 0, 0, 0, 0], MIDGAME, dmp))
            < 1e-12
        )


def test_the_cube_reads_the_cube_networks_and_the_plays_the_checker_networks() -> None:
    """A bundle with cube networks (model card step 18): every level's cube analysis,
    the computer's double and the analysis of a match read them; its plays do not."""
    from nard.analysis import Analyst
    from nard.engine.network import Networks
    from nard.engine.search import evaluate_ply

    shipped = NeuralEvaluator.load(engine_module.DEFAULT_WEIGHTS)
    plays = shipped.networks
    cube_net = Network.random(hidden=8, seed=3)  # far from the shipped net's values
    both = NeuralEvaluator(
        Networks(plays.contact, plays.race, plays.crashed, plays.pruning, cube_net),
        shipped.bearoff,
    )
    middle = Position.from_position_id("4DvgATDgc/ABMA")
    ctx = CubeContext()
    for level in ("expert", "world-class"):
        engine = Engine(level, evaluator=both, time_limit=None)
        alone = Engine(level, evaluator=shipped, time_limit=None)
        assert engine.cube_evaluator is both.for_cube() is not both
        probs, _, decision = engine.cube_analysis(middle, ctx)
        expected = evaluate_ply([middle], both.for_cube(), engine.settings.cube_plies)[0]
        assert np.allclose(probs, expected)
        assert not np.allclose(probs, alone.cube_analysis(middle, ctx)[0])
        assert decision == cube_decision(probs, ctx, position=middle)
        for roll in ((3, 1), (6, 6), (5, 2)):
            assert engine.best_play(middle, roll) == alone.best_play(middle, roll)
    verdict = Analyst(1, evaluator=both).cube(middle, ctx)
    judged = evaluate_ply([middle], both.for_cube(), verdict.ply)[0]
    assert np.allclose(verdict.probabilities, judged)
