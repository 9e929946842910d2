"""One turn's look at every roll: each roll's best play at 0-ply against their average.

The side on roll at a position evaluates every roll's best play at 0-ply;
their average over the 36 rolls is the position's 1-ply value, the
**baseline**. A roll's **luck** is its best play's value less that baseline:
over the 36 rolls it averages exactly zero, whoever plays and however wrong
the evaluator is. Taking it out of a result is the variance reduction of
rollouts (ENGINE-NOTES section 4): :mod:`nard.engine.rollout`'s trials and
:mod:`nard.analysis.cubeful`'s take it out at every turn,
``bench/strength.py --luck`` out of duels, and the playout and rollout labels
of :mod:`nard.training` along self-play games.

>>> from nard.engine.evaluator import FakeEvaluator
>>> *_, baseline = one_ply_turn(FakeEvaluator(), np.array([list(Position())], dtype=np.int64))
>>> baseline.shape
(1, 5)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from nard.core.dice import ALL_ROLLS
from nard.core.position import Position
from nard.engine.evaluator import (
    NUM_OUTPUTS,
    Evaluator,
    cubeless_equity,
    evaluate_boards,
    flip_probabilities,
)
from nard.engine.search import ROLL_COUNTS, _best_in_groups, children

__all__ = ["ROLL_WEIGHTS", "one_ply_turn", "roll_luck"]

ROLL_WEIGHTS = ROLL_COUNTS / 36.0
"""The probability of each roll of :data:`~nard.core.dice.ALL_ROLLS`."""


def one_ply_turn(evaluator: Evaluator, boards: npt.NDArray[np.int64]) -> tuple[Any, ...]:
    """One turn's look at every roll of each of ``boards`` (side on roll, before it rolls).

    Returns ``(kids, lengths, probs, best, mover, baseline)``: every roll's
    distinct children and their counts per (board, roll) (:func:`children`),
    the children's 0-ply probabilities (each seen from its side on roll), the
    index in ``kids`` of each roll's best play ``(n, 21)``, that play's
    probabilities from the mover's view ``(n, 21, 5)``, and their average over
    the 36 rolls, the 1-ply ``baseline`` ``(n, 5)``.
    """
    n = len(boards)
    kids, lengths = children(boards)
    probs = evaluate_boards(evaluator, kids)
    best = _best_in_groups(cubeless_equity(probs), lengths).reshape(n, len(ALL_ROLLS))
    mover = flip_probabilities(probs[best]).reshape(n, len(ALL_ROLLS), NUM_OUTPUTS)
    baseline = np.einsum("r,nrk->nk", ROLL_WEIGHTS, mover)
    return kids, lengths, probs, best, mover, baseline


def roll_luck(evaluator: Evaluator, position: Position, dice: tuple[int, int]) -> float:
    """The luck of ``dice`` to the side on roll at ``position``, in its cubeless points.

    ``E(r) - B``: the 0-ply equity (mover's view) of the best play of roll ``r``,
    less the average of that over the 36 rolls (the position's 1-ply value by
    :func:`one_ply_turn`). Over the 36 rolls it averages exactly zero, so a
    game's result less the luck of every roll in it has the result's mean,
    whoever played and however wrong ``evaluator`` is: the variance reduction
    of the playout labels (:mod:`nard.training.playout`), used by
    ``bench/strength.py --luck`` to measure duels.

    >>> from nard.engine.evaluator import FakeEvaluator
    >>> luck = [roll_luck(FakeEvaluator(), Position(), r) for r in ALL_ROLLS]
    >>> abs(float(np.dot(ROLL_WEIGHTS, luck))) < 1e-12
    True
    """
    *_, mover, baseline = one_ply_turn(evaluator, np.array([list(position)], dtype=np.int64))
    roll = ALL_ROLLS.index((max(dice), min(dice)))
    return float(cubeless_equity(mover[0, roll]) - cubeless_equity(baseline[0]))
