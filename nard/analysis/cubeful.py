"""Cubeful rollout trials: the cube is turned, taken and passed inside each trial.

A trial starts from a position with a cube state (value and owner) at the root's
score and plays on as :func:`nard.engine.rollout.rollout_trials` does (each roll's
best 0-ply play), but before every roll the side on roll, where it may, decides
the cube by the engine's formulas (:func:`~nard.engine.cube.cube_decision`) on the
position's 1-ply probabilities: it doubles when the decision says so, and the
opponent takes or passes as the same decision says (a pass ends the trial). At the
end of the game the result counts at the cube (gammons, backgammons; a gammon is
single under the Jacoby rule while the cube is centred); at the cut after
``truncate`` turns the position's cubeful equity by formula (Janowski's in money
play, gnubg's method in match play) closes the trial.

Variance reduction: each roll's luck is taken out of the trial's value, measured
in cubeful equity at the cube of the moment: the mover's cubeful equity after the
roll's best play (:func:`~nard.engine.cube.play_equities`: the opponent on roll,
the cube as it is, by formula) less the average of that over the 36 rolls, which
averages exactly zero over the rolls, times the stake (the cube in money play;
half the match winning chances between winning and losing the cube in match play).
Whatever the measure, the correction has mean zero, so the estimate stays unbiased;
measured in cubeful equity it also takes out the noise of the cube's jumps near the
doubling window (the opening position's cube, 108 trials cut at 5 turns: standard
error 1.8x the cubeless rollout's, against 5.6x with each roll's cubeless luck).

Values are from the root side's view: money points per unit of the root's cube, or
in match play the root's normalised equity (EMG) at the root's cube, as
:func:`~nard.engine.cube.cube_decision` gives its three equities.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from nard.analysis.stats import mwc_of
from nard.core.dice import ALL_ROLLS
from nard.core.position import Position
from nard.engine import _kernels
from nard.engine.cube import (
    CubeContext,
    CubeOwner,
    cube_decision,
    cube_efficiencies,
    cube_efficiency,
    cubeful_equity,
    play_equities,
)
from nard.engine.evaluator import Evaluator, cubeless_equity, evaluate_boards
from nard.engine.luck import ROLL_WEIGHTS, one_ply_turn

__all__ = ["OPENING_WEIGHTS", "CubefulStart", "cubeful_roll_luck", "cubeful_trials"]


@dataclass(frozen=True)
class CubefulStart:
    """A trial's start: ``board`` (its side on roll to move), the cube and score seen
    by that side (``context``), whether that side is the root side (``root_on_roll``),
    and ``no_double_first``: the first roll is taken without a cube decision (the
    "no double" line of a cube rollout)."""

    board: tuple[int, ...]
    context: CubeContext
    root_on_roll: bool
    no_double_first: bool = False


def _value(ctx: CubeContext, probs: npt.NDArray[np.float64], board: Position, live: bool) -> float:
    """The side on roll's value at ``ctx``: points (money) or match winning chances;
    ``live``: cubeful by formula (a cut trial), else the outcome at the cube."""
    if live:
        x = cube_efficiency(board)
        if ctx.is_money:
            return ctx.cube * cubeful_equity(probs, ctx, x)
        return cubeful_equity(probs, ctx, x)
    if ctx.is_money:
        p = probs
        if ctx.jacoby and ctx.owner is CubeOwner.CENTRED:
            return ctx.cube * (2.0 * float(p[0]) - 1.0)
        return ctx.cube * float(cubeless_equity(p))
    return cubeful_equity(probs, ctx, 0.0)  # a dead cube: the outcome's MWC


def cubeful_trials(
    evaluator: Evaluator,
    starts: list[CubefulStart],
    rolls: npt.NDArray[np.int64],
    truncate: int,
    root: CubeContext,
) -> npt.NDArray[np.float64]:
    """One cubeful trial from each start, turn ``t`` of trial ``i`` thrown
    ``ALL_ROLLS[rolls[i, t]]``: each trial's value from the root side's view, per unit
    of ``root``'s cube (money) or in the root's EMG (match play)."""
    n = len(starts)
    boards = np.array([s.board for s in starts], dtype=np.int64)
    contexts = [s.context for s in starts]
    root_on_roll = np.array([s.root_on_roll for s in starts])
    hold = np.array([s.no_double_first for s in starts])
    value = np.zeros(n)  # the root's points or MWC, once a trial ends
    correction = np.zeros(n)
    alive = np.arange(n)
    for t in range(truncate + 1):
        if not len(alive):
            break
        over = _kernels.finished(boards)
        if over.any():  # the side that just moved won: the side on roll lost
            probs = evaluate_boards(evaluator, boards[over])
            for k, i in enumerate(alive[over]):
                mine = _value(contexts[i], probs[k], Position(boards[over][k].tolist()), False)
                value[i] = _root(mine, contexts[i], bool(root_on_roll[i]))
            keep = ~over
            alive, boards = alive[keep], boards[keep]
            if not len(alive):
                break
        kids, _, kid_probs, best, _, baseline = one_ply_turn(evaluator, boards)
        if t == truncate:
            for k, i in enumerate(alive):
                mine = _value(contexts[i], baseline[k], Position(boards[k].tolist()), True)
                value[i] = _root(mine, contexts[i], bool(root_on_roll[i]))
            break
        going = np.ones(len(alive), dtype=bool)
        for k, i in enumerate(alive):
            ctx = contexts[i]
            if (t > 0 or not hold[i]) and ctx.can_double():
                decision = cube_decision(baseline[k], ctx, position=Position(boards[k].tolist()))
                if decision.double and not decision.take:  # double, pass: the trial ends
                    mine = ctx.cube if ctx.is_money else mwc_of(ctx)[0]
                    value[i] = _root(mine, ctx, bool(root_on_roll[i]))
                    going[k] = False
                    continue
                if decision.double:
                    ctx = contexts[i] = ctx.doubled()
            roll = int(rolls[i, t])
            luck = _cubeful_luck(kids, kid_probs, best[k], roll, ctx)
            sign = 1.0 if root_on_roll[i] else -1.0
            correction[i] += sign * _stake(ctx) * luck
        picked = best[np.arange(len(alive)), rolls[alive, t]]
        boards = kids[picked][going]
        alive = alive[going]
        for i in alive:
            contexts[i] = contexts[i].swapped()
        root_on_roll[alive] = ~root_on_roll[alive]
    adjusted = value - correction
    if root.is_money:
        out: npt.NDArray[np.float64] = adjusted / root.cube
        return out
    win, lose = mwc_of(root)
    normalised: npt.NDArray[np.float64] = (2.0 * adjusted - (win + lose)) / (win - lose)
    return normalised


def _cubeful_luck(
    kids: npt.NDArray[np.int64],
    kid_probs: npt.NDArray[np.float64],
    best: npt.NDArray[np.int64],
    roll: int,
    ctx: CubeContext,
    weights: npt.NDArray[np.float64] = ROLL_WEIGHTS,
) -> float:
    """The luck of ``roll`` in the mover's normalised cubeful equity at ``ctx``: its
    best play's cubeful equity (:func:`~nard.engine.cube.play_equities`, the cube as
    it is) less the average over the rolls (by ``weights``) of theirs."""
    xs = cube_efficiencies(kids[best])
    values = np.asarray(
        play_equities(list(kid_probs[best]), [], ctx, xs.tolist()), dtype=np.float64
    )
    return float(values[roll] - weights @ values)


_NOT_DOUBLES = np.array([a != b for a, b in ALL_ROLLS])
OPENING_WEIGHTS = np.where(_NOT_DOUBLES, ROLL_WEIGHTS, 0.0) / ROLL_WEIGHTS[_NOT_DOUBLES].sum()
"""The chance of each roll of :data:`~nard.core.dice.ALL_ROLLS` as a game's opening
roll: the 15 non-doubles, 1/15 each (the higher die's owner plays it)."""


def cubeful_roll_luck(
    evaluator: Evaluator,
    position: Position,
    dice: tuple[int, int],
    context: CubeContext,
    *,
    opening: bool = False,
) -> float:
    """The luck of ``dice`` to the side on roll at ``position``, with the cube and score
    of ``context`` (its view): in its points in money play (at the cube's value), in
    its match-winning chances in match play.

    The best 0-ply play of the roll (cubeless, as the trials play) is valued by its
    cubeful equity (:func:`~nard.engine.cube.play_equities`, the cube as it is),
    less the average of that over the rolls, times the stake (the cube, or half the
    match-winning chances between winning and losing a game at this cube). Over the
    rolls it averages exactly zero, whoever plays and however wrong ``evaluator``
    is, so a game's or a match's result less the luck of each roll in it keeps the
    result's mean: ``bench/cube_strength.py --luck``. ``opening``: the game's opening
    roll, never a double, is judged against the mean of the 15 others
    (:data:`OPENING_WEIGHTS`); the higher die's owner plays it whichever roll it is.

    >>> from nard.engine.evaluator import FakeEvaluator
    >>> from nard.core.dice import ALL_ROLLS
    >>> ctx = CubeContext(cube=2)
    >>> luck = [cubeful_roll_luck(FakeEvaluator(), Position(), r, ctx) for r in ALL_ROLLS]
    >>> abs(float(ROLL_WEIGHTS @ np.array(luck))) < 1e-12
    True
    """
    roll = ALL_ROLLS.index((max(dice), min(dice)))
    if opening and dice[0] == dice[1]:
        raise ValueError(f"an opening roll is never a double, not {dice}")
    kids, _, kid_probs, best, _, _ = one_ply_turn(
        evaluator, np.array([list(position)], dtype=np.int64)
    )
    weights = OPENING_WEIGHTS if opening else ROLL_WEIGHTS
    return _stake(context) * _cubeful_luck(kids, kid_probs, best[0], roll, context, weights)


def _stake(ctx: CubeContext) -> float:
    """What one unit of the mover's normalised cubeful equity is worth at ``ctx``: the
    cube's points in money play, half the match-winning chances between winning and
    losing a game at this cube in match play."""
    if ctx.is_money:
        return float(ctx.cube)
    win, lose = mwc_of(ctx)
    return (win - lose) / 2.0


def _root(mine: float, ctx: CubeContext, root_on_roll: bool) -> float:
    """A value of the side on roll as the root side's (points, or MWC)."""
    if ctx.is_money:
        return mine if root_on_roll else -mine
    return mine if root_on_roll else 1.0 - mine
