"""The roller: a truncated rollout of the best candidate plays at every decision.

The level above world class, as XG's *Roller* levels are above its n-ply
searches. World class's 2-ply search ranks the plays of the roll; the best few
at its deepest ply within :attr:`RollerPlan.window` of the best are then each
rolled out from the position they reach: trials of :attr:`RollerPlan.truncate`
turns played at 0-ply, every roll's luck taken out against the network's 1-ply
value and the cut closed by the 1-ply value of the position reached
(:func:`~nard.engine.rollout.rollout_trials`, the trials of ``nard rollout``).
All candidates throw the same dice (trial ``j`` of each the same rolls, from
:func:`~nard.engine.rollout.quasi_random_dice`, seeded by the engine's seed and
the decision), so the dice's luck falls alike on all of them and the
differences between candidates are far less noisy than their values.

The trials come in blocks of :attr:`RollerPlan.block` per candidate. After
each block a candidate whose paired deficit to the leader exceeds
:attr:`RollerPlan.z` standard errors is dropped (gnubg's rollouts stop
hopeless candidates the same way), and the rollout ends when one candidate is
left, when each has had :attr:`RollerPlan.trials` trials, or when the
decision's time budget is spent (the first block always completes, as ply 0
of a search does). Under a time budget the choice depends on the machine's
speed; without one (``Engine(time_limit=None)``, as in the benchmarks) it is a
function of the position, the roll and the seed.

The candidates come back best first with their rolled-out probabilities and
the number of trials each had (:attr:`~nard.engine.search.RankedPlay.trials`);
the plays that were not rolled out follow with the search's values.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from nard.core.position import Position
from nard.engine.evaluator import (
    Evaluator,
    cubeless_equity,
    five_probabilities,
    flip_probabilities,
)
from nard.engine.rollout import quasi_random_dice, rollout_trials
from nard.engine.search import RankedPlay

__all__ = ["ROLLER_PLAN", "RollerPlan", "decision_seed", "roll_candidates", "roll_position"]


@dataclass(frozen=True)
class RollerPlan:
    """How the roller rolls out one decision's candidate plays."""

    candidates: int = 3
    """At most this many plays are rolled out: the best of the search's deepest ply."""
    window: float = 0.08
    """Only plays within this cubeless equity of the search's best are rolled out."""
    trials: int = 144
    """Trials per candidate at most."""
    block: int = 36
    """Trials per candidate between two looks at the standings (a multiple of 36
    keeps the first roll stratified)."""
    truncate: int = 5
    """Turns per trial before the 1-ply value of the position reached closes it."""
    z: float = 2.0
    """A candidate more than this many standard errors of the paired difference
    behind the leader is dropped."""

    def __post_init__(self) -> None:
        if self.candidates < 1 or self.trials < 1 or self.block < 1 or self.truncate < 0:
            raise ValueError("candidates, trials and block must be >= 1 and truncate >= 0")
        if self.window < 0 or self.z < 0:
            raise ValueError("window and z must be >= 0")


ROLLER_PLAN = RollerPlan()
"""The roller level's plan (docs/engine.md records how it was chosen)."""


def decision_seed(seed: int, position: Position, dice: Sequence[int]) -> int:
    """The dice seed of the rollout of one decision: a function of the engine's
    ``seed``, the position and the roll (in either order), and nothing else.

    >>> decision_seed(0, Position(), (3, 1)) == decision_seed(0, Position(), (1, 3))
    True
    >>> decision_seed(0, Position(), (3, 1)) == decision_seed(1, Position(), (3, 1))
    False
    """
    key = [seed, *(v + 15 for v in position), max(dice), min(dice)]
    return int(np.random.default_rng(key).integers(2**62))


def _mover_trials(
    evaluator: Evaluator, results: Sequence[Position], rolls: npt.NDArray[np.int64], truncate: int
) -> npt.NDArray[np.float64]:
    """Each candidate's trials on ``rolls``, ``(c, n, 5)``, from the view of the side
    that played."""
    n = len(rolls)
    starts = np.repeat(np.array([list(r) for r in results], dtype=np.int64), n, axis=0)
    y = rollout_trials(evaluator, starts, np.tile(rolls, (len(results), 1)), truncate)
    trials: npt.NDArray[np.float64] = flip_probabilities(y).reshape(len(results), n, 5)
    return trials


def roll_candidates(
    ranking: Sequence[RankedPlay],
    evaluator: Evaluator,
    seed: int,
    plan: RollerPlan = ROLLER_PLAN,
    deadline: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> list[RankedPlay]:
    """``ranking`` (a search's, best first) with its best candidates rolled out.

    The candidates are the plays at the ranking's deepest ply within
    ``plan.window`` of the best, ``plan.candidates`` at most; with fewer than two
    the ranking is returned as it is. ``seed`` seeds the dice
    (:func:`decision_seed`); ``deadline`` (a reading of ``clock``) ends the
    rollout after the first block that leaves too little time for another.

    >>> from nard.engine.evaluator import FakeEvaluator
    >>> from nard.engine.search import rank_plays
    >>> race = Position.from_points({6: 3, 5: 3, 4: 3}, {6: 4, 5: 3, 3: 2})
    >>> ranking = rank_plays(race, (6, 5), FakeEvaluator())
    >>> rolled = roll_candidates(ranking, FakeEvaluator(), 1, RollerPlan(window=1.0, trials=36))
    >>> [r.trials for r in rolled], len(rolled) == len(ranking)
    ([36, 36], True)
    """
    if not ranking:
        return []
    deepest = ranking[0].ply
    best = ranking[0].equity
    picked = [
        r for r in ranking if r.ply == deepest and r.equity >= best - plan.window and r.trials == 0
    ][: plan.candidates]
    if len(picked) < 2:
        return list(ranking)
    results = [r.play.result for r in picked]
    active = list(range(len(picked)))
    probs_of: list[list[npt.NDArray[np.float64]]] = [[] for _ in picked]
    done = 0
    while done < plan.trials and len(active) > 1:
        began = clock()
        count = min(plan.block, plan.trials - done)
        rolls = quasi_random_dice(seed, done, count, plan.truncate)
        probs = _mover_trials(evaluator, [results[i] for i in active], rolls, plan.truncate)
        for k, i in enumerate(active):
            probs_of[i].append(probs[k])
        done += count
        active = _survivors(active, probs_of, plan.z)
        # Stop when another block like this one would end past the deadline.
        now = clock()
        if deadline is not None and now + (now - began) * len(active) / len(probs) > deadline:
            break
    rolled = []
    for i, candidate in enumerate(picked):
        trials = np.concatenate(probs_of[i])
        mean = trials.mean(axis=0)
        rolled.append(
            replace(
                candidate,
                probabilities=five_probabilities(mean),
                equity=float(cubeless_equity(mean)),
                trials=len(trials),
            )
        )
    # The last standing first, by their values; those dropped after them.
    standing = set(active)
    order = sorted(range(len(rolled)), key=lambda i: (i not in standing, -rolled[i].equity))
    chosen = {id(c) for c in picked}
    return [rolled[i] for i in order] + [r for r in ranking if id(r) not in chosen]


def roll_position(
    position: Position,
    evaluator: Evaluator,
    seed: int,
    plan: RollerPlan = ROLLER_PLAN,
    deadline: float | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[tuple[float, float, float, float, float], int]:
    """The five probabilities of ``position`` (side on roll, before it rolls) by a
    rollout of ``plan.trials`` trials of ``plan.truncate`` turns at most, in blocks
    of ``plan.block``, fewer when ``deadline`` comes first; and the trials made.
    The roller's cube decisions in close cases take their probabilities from it.

    >>> from nard.engine.evaluator import FakeEvaluator
    >>> probs, trials = roll_position(Position(), FakeEvaluator(), 1, RollerPlan(trials=72))
    >>> trials, abs(probs[0] - 0.5) < 0.1
    (72, True)
    """
    start = np.array([list(position)], dtype=np.int64)
    total = np.zeros(5)
    done = 0
    while done < plan.trials:
        began = clock()
        count = min(plan.block, plan.trials - done)
        rolls = quasi_random_dice(seed, done, count, plan.truncate)
        y = rollout_trials(evaluator, np.repeat(start, count, axis=0), rolls, plan.truncate)
        total += y.sum(axis=0)
        done += count
        now = clock()
        if deadline is not None and now + (now - began) > deadline:
            break
    return five_probabilities(total / done), done


def _survivors(
    active: list[int], probs_of: list[list[npt.NDArray[np.float64]]], z: float
) -> list[int]:
    """The candidates of ``active`` not clearly behind the leader, by the cubeless
    equities of their trials (paired: the same dice)."""
    series = {i: cubeless_equity(np.concatenate(probs_of[i])) for i in active}
    leader = max(active, key=lambda i: float(series[i].mean()))
    keep = []
    for i in active:
        if i == leader:
            keep.append(i)
            continue
        gap = series[leader] - series[i]
        error = float(gap.std(ddof=1)) / math.sqrt(len(gap)) if len(gap) > 1 else math.inf
        if float(gap.mean()) <= z * error:
            keep.append(i)
    return keep
