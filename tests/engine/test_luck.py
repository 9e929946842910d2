"""A roll's luck: its best play's 0-ply value against the position's 1-ply value."""

from __future__ import annotations

import numpy as np
import pytest

from nard.core.dice import ALL_ROLLS
from nard.core.position import Position
from nard.engine.engine import DEFAULT_WEIGHTS
from nard.engine.evaluator import boards_of, cubeless_equity
from nard.engine.luck import ROLL_WEIGHTS, roll_luck
from nard.engine.network import NeuralEvaluator
from nard.engine.search import evaluate_ply_boards


def test_the_luck_of_the_rolls_averages_zero_and_is_the_best_play_against_one_ply() -> None:
    evaluator = NeuralEvaluator.load(DEFAULT_WEIGHTS)
    position = Position.from_position_id("4HPwATDgc/ABMA")
    luck = {roll: roll_luck(evaluator, position, roll) for roll in ALL_ROLLS}
    assert abs(float(np.dot(ROLL_WEIGHTS, list(luck.values())))) < 1e-9
    one_ply = float(cubeless_equity(evaluate_ply_boards(boards_of([position]), evaluator, 1)[0]))
    for roll in ((6, 5), (2, 1), (4, 4)):
        plays = position.legal_plays(roll)
        results = evaluator.evaluate([p.result for p in plays])
        best = float(max(-cubeless_equity(results)))
        assert luck[roll] == pytest.approx(best - one_ply, abs=1e-6)
    assert roll_luck(evaluator, position, (5, 6)) == luck[(6, 5)]
    assert luck[(6, 6)] > 0 > luck[(2, 1)]  # a double six is good luck here
