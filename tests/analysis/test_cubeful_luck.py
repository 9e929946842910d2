"""``nard.analysis.cubeful.cubeful_roll_luck``: the luck of a roll with the cube and score,
which ``bench/cube_strength.py --luck`` takes out of money games and matches."""

from __future__ import annotations

import numpy as np
import pytest

from nard.analysis.cubeful import OPENING_WEIGHTS, cubeful_roll_luck
from nard.analysis.stats import mwc_of
from nard.core.dice import ALL_ROLLS
from nard.core.position import Position
from nard.engine.cube import CubeContext, CubeOwner, play_equities
from nard.engine.engine import load_evaluator
from nard.engine.evaluator import flip_probabilities
from nard.engine.luck import ROLL_WEIGHTS
from nard.engine.network import NeuralEvaluator

MIDDLE = Position.from_position_id("4DvgATDgc/ABMA")
RACE = Position.from_points({6: 3, 5: 3, 4: 3, 3: 2, 2: 2}, {6: 4, 5: 3, 4: 3, 3: 2, 1: 1})


@pytest.fixture(scope="module")
def evaluator() -> NeuralEvaluator:
    return load_evaluator()


CONTEXTS = [
    CubeContext(),
    CubeContext(cube=4, owner=CubeOwner.OPPONENT),
    CubeContext(jacoby=True),
    CubeContext(match_length=5, score=(1, 3)),
    CubeContext(cube=2, owner=CubeOwner.ON_ROLL, match_length=7, score=(4, 2)),
]


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("position", [MIDDLE, RACE])
def test_a_rolls_luck_averages_zero_over_the_rolls(
    evaluator: NeuralEvaluator, position: Position, context: CubeContext
) -> None:
    luck = np.array([cubeful_roll_luck(evaluator, position, r, context) for r in ALL_ROLLS])
    assert abs(float(ROLL_WEIGHTS @ luck)) < 1e-12
    assert np.abs(luck).max() > 0.01  # and it is not nothing
    opening = [
        cubeful_roll_luck(evaluator, Position(), r, context, opening=True)
        for r in ALL_ROLLS
        if r[0] != r[1]
    ]
    assert abs(float(np.mean(opening))) < 1e-12  # the 15 opening rolls are equally likely
    assert OPENING_WEIGHTS.sum() == pytest.approx(1.0)


def test_the_luck_is_the_best_plays_cubeful_equity_less_the_average_at_the_stake(
    evaluator: NeuralEvaluator,
) -> None:
    """Worked by hand from the plays: each roll's best 0-ply play (cubeless), its
    cubeful equity for the mover, the average over the 36 rolls, at the stake (the
    cube's points in money play, half the MWC between winning and losing a game at
    this cube in match play)."""
    for context in (CubeContext(cube=4, owner=CubeOwner.OPPONENT), CONTEXTS[3]):
        values = []
        for roll in ALL_ROLLS:
            results = [p.result for p in MIDDLE.legal_plays(roll)] or [MIDDLE.flip()]
            probs = evaluator.evaluate(results)
            mover = [flip_probabilities(row) for row in probs]
            best = int(np.argmax([m[0] - (1 - m[0]) + m[1] - m[3] + m[2] - m[4] for m in mover]))
            values.append(play_equities([probs[best]], [results[best]], context)[0])
        value = np.array(values)
        stake = context.cube if context.is_money else (mwc_of(context)[0] - mwc_of(context)[1]) / 2
        for k in (0, 7, 20):
            expected = stake * (value[k] - ROLL_WEIGHTS @ value)
            got = cubeful_roll_luck(evaluator, MIDDLE, ALL_ROLLS[k], context)
            assert got == pytest.approx(expected, abs=1e-6)  # float32 nets, other batches


def test_an_opening_double_is_refused(evaluator: NeuralEvaluator) -> None:
    with pytest.raises(ValueError, match="never a double"):
        cubeful_roll_luck(evaluator, Position(), (3, 3), CubeContext(), opening=True)
