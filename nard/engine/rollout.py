"""Rollout trials: luck-corrected games from a position, cut after ``truncate`` turns.

A **trial** plays on from a position, both sides taking each roll's best play
at 0-ply, and is valued with each roll's luck taken out against the 1-ply
baseline (:mod:`nard.engine.luck`), the way gnubg's rollouts reduce their
variance; it stops after ``truncate`` turns, where the 1-ply value of the
position reached closes the chain (a truncated rollout: the trials are
shorter, and the luck of the turns after the cut never enters the result).

For a trial from ``s_0`` that reaches ``s_T``::

    Y_T = baseline_T
    Y_t = baseline_t + flip(Y_{t+1}) - chosen_t      (t = T-1 ... 0)

with ``baseline_t`` the 1-ply value of ``s_t`` (every roll's best play at
0-ply, averaged) and ``chosen_t`` the 0-ply value of the play made for the
roll thrown, both from the view of the side on roll at ``s_t``; a trial
whose game ends at turn ``e < T`` starts the chain at ``Y_e = baseline_e``
(the play that ended it was valued exactly). Each correction
``flip(Y_{t+1}) - chosen_t`` has mean zero for the 0-ply play, so ``Y_0``
estimates the value of the position under that play, up to the cut.

Every (position, trial) pair moves together, one evaluator call per turn
for all of them, so ``trials`` trials cost ``trials * (truncate + 1)`` 1-ply
steps per position, batched. Rolls come from :func:`quasi_random_dice`
(stratified first two rolls, then ``numpy.random.default_rng``); the same
seed throws the same dice. ``nard rollout`` (:mod:`nard.analysis.rollout`)
averages these trials over a roll's candidate plays or the cube;
:mod:`nard.training.rollout` averages them into training labels
(``nard label --rollout``).

>>> from nard.core.position import Position
>>> from nard.engine.evaluator import FakeEvaluator
>>> race = Position.from_points({6: 3, 8: 4, 12: 2}, {6: 4, 9: 3, 11: 2})
>>> starts, rolls = np.array([list(race)] * 4), quasi_random_dice(1, 0, 4, 3)
>>> trials = rollout_trials(FakeEvaluator(), starts, rolls, truncate=3)
>>> trials.shape, bool((trials == rollout_trials(FakeEvaluator(), starts, rolls, 3)).all())
((4, 5), True)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from nard.core.dice import ALL_ROLLS
from nard.engine import _kernels
from nard.engine.evaluator import NUM_OUTPUTS, Evaluator, flip_probabilities
from nard.engine.luck import ROLL_WEIGHTS, one_ply_turn
from nard.engine.search import evaluate_ply_boards

__all__ = [
    "consistent",
    "group_seed",
    "quasi_random_dice",
    "rollout_trials",
]

_BATCH = 512
"""(position, trial) pairs advanced together at most: their children, some 400
each, and those children's inputs stay a few hundred megabytes."""


def consistent(probs: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """``probs`` clipped to [0, 1] and ordered as probabilities must be: a gammon
    no likelier than the win, a backgammon no likelier than the gammon (both sides).

    >>> consistent(np.array([[0.5, 0.6, 0.7, -0.1, 0.2]])).tolist()
    [[0.5, 0.5, 0.5, 0.0, 0.0]]
    """
    out = np.clip(probs, 0.0, 1.0)
    out[:, 1] = np.minimum(out[:, 1], out[:, 0])
    out[:, 2] = np.minimum(out[:, 2], out[:, 1])
    out[:, 3] = np.minimum(out[:, 3], 1.0 - out[:, 0])
    out[:, 4] = np.minimum(out[:, 4], out[:, 3])
    return out


def _rollout_batch(
    evaluator: Evaluator,
    starts: npt.NDArray[np.int64],
    rolls: npt.NDArray[np.int64],
    truncate: int,
) -> npt.NDArray[np.float64]:
    """``Y_0`` (module docstring) of one trial from each of ``starts``, turn ``t`` of
    trial ``i`` thrown ``ALL_ROLLS[rolls[i, t]]``."""
    n = len(starts)
    baselines = np.zeros((truncate + 1, n, NUM_OUTPUTS))
    chosen = np.zeros((truncate, n, NUM_OUTPUTS))
    end = np.full(n, truncate)  # the turn whose baseline starts each trial's chain
    boards = starts.copy()
    alive = np.arange(n)
    for t in range(truncate + 1):
        if not len(alive):
            break
        kids, _, _, best, mover, baseline = one_ply_turn(evaluator, boards)
        baselines[t, alive] = baseline
        if t == truncate:
            break
        thrown = rolls[alive, t]
        picked = best[np.arange(len(alive)), thrown]
        chosen[t, alive] = mover[np.arange(len(alive)), thrown]
        boards = kids[picked]
        over = boards.min(axis=1) >= 0  # the mover bore off its last checker
        # The play that ended the game was valued exactly, so its correction is
        # zero: the trial's chain starts at this turn's baseline.
        end[alive[over]] = t
        alive = alive[~over]
        boards = boards[~over]
    y: npt.NDArray[np.float64] = baselines[end, np.arange(n)]
    for t in range(truncate - 1, -1, -1):
        going = end > t
        y[going] = baselines[t, going] + flip_probabilities(y[going]) - chosen[t, going]
    return y


def rollout_trials(
    evaluator: Evaluator,
    starts: npt.NDArray[Any],
    rolls: npt.NDArray[np.int64],
    truncate: int,
) -> npt.NDArray[np.float64]:
    """One luck-corrected trial from each row of ``starts`` (side on roll, before it
    rolls), turn ``t`` of trial ``i`` thrown ``ALL_ROLLS[rolls[i, t]]``, cut at
    ``truncate`` turns: its five probabilities (the module docstring's ``Y_0``; a
    finished game is its outcome). The trial machinery of ``nard rollout`` and of
    :func:`nard.training.rollout.rollout_labels` (``nard label --rollout``).

    >>> from nard.core.position import Position
    >>> from nard.engine.evaluator import FakeEvaluator
    >>> won = np.array([list(Position.from_points({1: 1}, {6: 3}))])
    >>> rollout_trials(FakeEvaluator(), won, np.zeros((1, 2), np.int64), 2).round(6).tolist()
    [[1.0, 0.0, 0.0, 0.0, 0.0]]
    """
    starts = np.ascontiguousarray(starts, dtype=np.int64)
    out = np.zeros((len(starts), NUM_OUTPUTS))
    over = _kernels.finished(starts)
    if over.any():
        out[over] = evaluate_ply_boards(starts[over], evaluator, 0)
    live = np.flatnonzero(~over)
    for first in range(0, len(live), _BATCH):
        rows = live[first : first + _BATCH]
        out[rows] = _rollout_batch(evaluator, starts[rows], rolls[rows], truncate)
    return out


_OUTCOMES = np.array(
    [ALL_ROLLS.index((max(a, b), min(a, b))) for a in range(1, 7) for b in range(1, 7)],
    dtype=np.int64,
)
"""The roll of each of the 36 outcomes of two dice (ordered pairs)."""


def quasi_random_dice(seed: int, first: int, count: int, turns: int) -> npt.NDArray[np.int64]:
    """The rolls (indices of :data:`~nard.core.dice.ALL_ROLLS`) of trials ``first`` to
    ``first + count - 1`` of a rollout seeded ``seed``, ``turns`` turns each.

    The first two turns are stratified, as gnubg's quasi-random dice: the 36
    outcomes of the first roll come once each in every 36 trials, and the 1,296
    outcomes of the first two rolls once each in every 1,296 (each in a seeded
    order); later turns are random. Trial ``j``'s dice depend only on ``seed`` and
    ``j``, so a rollout split over processes throws the same dice.

    >>> d = quasi_random_dice(1, 0, 36, 3)
    >>> sorted(np.bincount(d[:, 0], minlength=21).tolist()) == sorted([1] * 6 + [2] * 15)
    True
    >>> later = np.vstack([d[30:], quasi_random_dice(1, 36, 4, 3)])
    >>> bool((quasi_random_dice(1, 30, 10, 3) == later).all())
    True
    """
    if count < 0 or first < 0 or turns < 0:
        raise ValueError("first, count and turns must be >= 0")
    order = np.random.default_rng([seed, 0]).permutation(36)
    second = np.random.default_rng([seed, 1]).permutation(36)
    out = np.empty((count, turns), dtype=np.int64)
    for row, trial in enumerate(range(first, first + count)):
        if turns > 2:
            rng = np.random.default_rng([seed, 2, trial])
            out[row, 2:] = rng.choice(len(ALL_ROLLS), size=turns - 2, p=ROLL_WEIGHTS)
        if turns > 0:
            out[row, 0] = _OUTCOMES[order[trial % 36]]
        if turns > 1:
            # within each block of 1,296, every first outcome meets every second
            out[row, 1] = _OUTCOMES[second[(trial // 36 + order[trial % 36]) % 36]]
    return out


def group_seed(seed: int, group: int) -> int:
    """The dice seed of group ``group`` of a labelling rollout seeded ``seed``
    (:func:`nard.training.rollout.rollout_labels`)."""
    return seed * 1_000_003 + group
