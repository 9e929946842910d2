"""The computer's double skips its deeper analysis where 0-ply is clearly short of a
double (Engine.doubles, PRECHECK_MARGIN): the verdicts must stay those of the full
analysis."""

from __future__ import annotations

import numpy as np

from nard.core import Position
from nard.engine import Engine
from nard.engine.cube import CubeContext, CubeOwner, cube_decision
from nard.engine.engine import PRECHECK_MARGIN
from nard.training.playout import play_games

CONTEXTS = (
    CubeContext(),
    CubeContext(cube=2, owner=CubeOwner.ON_ROLL),
    CubeContext(match_length=5, score=(0, 0)),
    CubeContext(match_length=5, score=(3, 1)),
    CubeContext(match_length=5, score=(2, 4)),
)


def test_the_quick_no_double_agrees_with_the_full_analysis() -> None:
    engine = Engine("expert")
    games = play_games(engine.evaluator, 12, seed=31)
    rng = np.random.default_rng(31)
    boards = games.boards[rng.permutation(len(games.boards))[:400]].astype(np.int64)
    quick = doubles = 0
    for n, board in enumerate(boards):
        position = Position(tuple(int(c) for c in board))
        context = CONTEXTS[n % len(CONTEXTS)]
        full = engine.cube_action(position, context)
        assert engine.doubles(position, context) == full.double, (position.position_id(), context)
        doubles += full.double
        probs, _ = engine.evaluate(position, 0)
        at_once = cube_decision(probs, context, position=position)
        quick += at_once.no_double - min(at_once.double_take, at_once.double_pass) > PRECHECK_MARGIN
    print(f"{len(boards)} positions: {doubles} doubles, {quick} decided at 0-ply")
    assert doubles >= 5  # the sample has doubles in it
    assert quick >= len(boards) // 2  # and most positions are decided at once
