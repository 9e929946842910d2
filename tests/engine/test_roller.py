"""The roller level: the search's best candidates rolled out on common dice."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from nard.core.position import Position
from nard.engine import Engine
from nard.engine.cube import CubeContext, cube_decision
from nard.engine.evaluator import FakeEvaluator, cubeless_equity, flip_probabilities
from nard.engine.roller import (
    ROLLER_PLAN,
    RollerPlan,
    decision_seed,
    roll_candidates,
    roll_position,
)
from nard.engine.rollout import quasi_random_dice, rollout_trials
from nard.engine.search import RankedPlay, rank_plays

EVALUATOR = FakeEvaluator()
CONTACT = Position.from_points({24: 2, 13: 4, 8: 3, 6: 5, 5: 1}, {24: 2, 13: 5, 8: 3, 6: 5})
RACE = Position.from_points({6: 3, 5: 3, 4: 3}, {6: 4, 5: 3, 3: 2})
WIDE = RollerPlan(candidates=3, window=10.0, trials=72, block=36, truncate=3)


def ranking() -> list[RankedPlay]:
    return rank_plays(CONTACT, (6, 4), EVALUATOR)


def test_candidates_are_rolled_out_on_the_same_dice() -> None:
    plan = RollerPlan(candidates=3, window=10.0, trials=36, block=36, truncate=3, z=1e9)
    rolled = roll_candidates(ranking(), EVALUATOR, seed=7, plan=plan)
    assert [r.trials for r in rolled[:3]] == [36, 36, 36]
    assert all(r.trials == 0 for r in rolled[3:])
    assert len(rolled) == len(ranking())
    rolls = quasi_random_dice(7, 0, 36, 3)
    for r in rolled[:3]:
        starts = np.repeat(np.array([list(r.play.result)]), 36, axis=0)
        trials = flip_probabilities(rollout_trials(EVALUATOR, starts, rolls, 3))
        assert r.probabilities == pytest.approx(tuple(trials.mean(axis=0)), abs=1e-12)
        assert r.equity == pytest.approx(float(cubeless_equity(trials.mean(axis=0))))
    equities = [r.equity for r in rolled[:3]]
    assert equities == sorted(equities, reverse=True)


def test_window_and_count_pick_the_candidates() -> None:
    base = ranking()
    one = roll_candidates(base, EVALUATOR, 1, RollerPlan(window=0.0, trials=36))
    close = [r for r in base if r.equity >= base[0].equity]
    if len(close) < 2:
        assert one == base  # a single candidate is not rolled out
    two = roll_candidates(base, EVALUATOR, 1, RollerPlan(candidates=2, window=10.0, trials=36))
    assert sum(1 for r in two if r.trials) == 2
    assert {r.play for r in two if r.trials} == {base[0].play, base[1].play}


def test_clear_losers_are_dropped_and_close_ones_kept() -> None:
    keep_all = roll_candidates(ranking(), EVALUATOR, 3, RollerPlan(**{**vars(WIDE), "z": 1e9}))
    assert [r.trials for r in keep_all[:3]] == [72, 72, 72]
    drop_all = roll_candidates(ranking(), EVALUATOR, 3, RollerPlan(**{**vars(WIDE), "z": 0.0}))
    # after the first block only the leader stands, and the rollout ends
    assert [r.trials for r in drop_all[:3]] == [36, 36, 36]


def test_the_deadline_ends_the_rollout_after_a_block() -> None:
    ticks = itertools.count()
    plan = RollerPlan(**{**vars(WIDE), "z": 1e9, "trials": 360})
    rolled = roll_candidates(
        ranking(), EVALUATOR, 3, plan, deadline=1.5, clock=lambda: float(next(ticks))
    )
    assert [r.trials for r in rolled[:3]] == [36, 36, 36]
    unbounded = roll_candidates(ranking(), EVALUATOR, 3, plan)
    assert [r.trials for r in unbounded[:3]] == [360, 360, 360]


def test_the_roll_and_seed_fix_the_dice() -> None:
    assert decision_seed(3, CONTACT, (6, 4)) == decision_seed(3, CONTACT, (4, 6))
    assert decision_seed(3, CONTACT, (6, 4)) != decision_seed(3, CONTACT, (6, 3))
    assert decision_seed(3, CONTACT, (6, 4)) != decision_seed(3, CONTACT.flip(), (6, 4))


def test_roller_level_plays_its_rollouts_best() -> None:
    roller = Engine("roller", evaluator=EVALUATOR, time_limit=None)
    ranked = roller.rank_plays(RACE, (5, 2))
    assert ranked[0].trials > 0
    assert roller.best_play(RACE, (5, 2)) == ranked[0].play
    again = Engine("roller", evaluator=EVALUATOR, time_limit=None).rank_plays(RACE, (5, 2))
    assert ranked == again
    world = Engine("world-class", evaluator=EVALUATOR, time_limit=None).rank_plays(RACE, (5, 2))
    assert {r.play for r in ranked} == {r.play for r in world}
    assert all(r.trials == 0 for r in world)


def test_roller_level_ranks_its_rollouts_cubeful_in_a_match() -> None:
    roller = Engine("roller", evaluator=EVALUATOR, time_limit=None)
    ctx = CubeContext(match_length=5, score=(2, 3))
    ranked = roller.rank_plays(RACE, (5, 2), ctx)
    rolled = [r for r in ranked if r.trials]
    assert rolled and all(r.cubeful is not None for r in rolled)
    assert ranked[: len(rolled)] == rolled
    values = [r.cubeful or 0.0 for r in rolled]
    assert values == sorted(values, reverse=True)
    assert roller.best_play(RACE, (5, 2), ctx) == rolled[0].play


def test_roller_rolls_out_close_cube_decisions_only() -> None:
    roller = Engine("roller", evaluator=EVALUATOR, time_limit=None)
    world = Engine("world-class", evaluator=EVALUATOR, time_limit=None)
    # the side on roll far ahead in a race: 2-ply says "too good", not close
    far = Position.from_points({1: 2, 2: 2}, {6: 5, 5: 5, 4: 5})
    assert roller.cube_analysis(far) == world.cube_analysis(far)
    # a close one (no double 0.369, double/take 0.307 at 2-ply): decided again on the
    # probabilities of a rollout of the position
    close = Position.from_points({6: 5, 5: 5, 4: 3}, {6: 5, 5: 5, 3: 5})
    decided = world.cube_analysis(close)[2]
    assert abs(decided.no_double - decided.double_take) < 0.1
    probs, _, decision = roller.cube_analysis(close)
    seed = decision_seed(roller.seed, close, (0, 0))
    rolled, trials = roll_position(close, EVALUATOR, seed, ROLLER_PLAN)
    assert probs == rolled and trials == ROLLER_PLAN.trials
    assert probs != world.cube_analysis(close)[0]
    assert decision == cube_decision(rolled, CubeContext(), position=close)


def test_a_cube_rollout_stops_at_the_deadline() -> None:
    ticks = itertools.count()
    plan = RollerPlan(trials=360, truncate=2)
    _, trials = roll_position(
        RACE, EVALUATOR, 1, plan, deadline=1.5, clock=lambda: float(next(ticks))
    )
    assert trials == 36


def test_the_roller_thinks_four_seconds_by_default() -> None:
    assert Engine("roller", evaluator=EVALUATOR).time_limit == 4.0
    assert Engine("world-class", evaluator=EVALUATOR).time_limit == 1.0
    assert Engine("roller", evaluator=EVALUATOR, time_limit=0.5).time_limit == 0.5
    assert Engine("roller", evaluator=EVALUATOR, time_limit=None).time_limit is None
    with pytest.raises(ValueError, match="time_limit must be"):
        Engine("roller", evaluator=EVALUATOR, time_limit=-1.0)
