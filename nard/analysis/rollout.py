"""Rollouts of a decision: the candidate plays of a roll, or the cube, played out many times.

``nard rollout POSITION[:MATCH] [DICE]``. Each trial plays the game on from the
candidate with the engine's 0-ply checker play, luck-corrected at every turn
(each roll's luck against the 1-ply average taken out, gnubg's variance
reduction) and cut after ``truncate`` turns, where the 1-ply evaluation closes
it: :func:`nard.engine.rollout.rollout_trials`, the code that labels the
training data of ``nard label --rollout``. Every candidate throws the same dice
in trial ``j`` (common dice), and the first two rolls are quasi-random
(:func:`~nard.engine.rollout.quasi_random_dice`: every first roll equally often
in each 36 trials).

The trials are cubeless; the cube enters at the root, as in gnubg's cubeless
rollouts: each candidate's mean probabilities are turned into its cubeful
equity at the cube and score (:func:`~nard.engine.cube.play_equities`, match
aware: EMG), and a cube rollout's mean probabilities into the three equities of
the cube decision (:func:`~nard.engine.cube.cube_decision`). Standard errors are
those of the cubeless equity over the trials.

Trials run in blocks of 36 over worker processes (``jobs``), or on a Ray
cluster (``ray_address``; Ray is an optional dependency, ``pip install ray``);
the result depends only on the seed and the number of trials. With ``stop`` the
rollout ends early, after a block, once the leading candidate leads every other
by ``stop`` standard errors of their paired difference.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import math
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from nard.analysis.cubeful import CubefulStart, cubeful_trials
from nard.analysis.stats import equity_to_mwc
from nard.core.errors import NardError
from nard.core.position import Play, Position
from nard.engine.cube import (
    CubeContext,
    CubeDecision,
    cube_decision,
    decide_cube,
    play_equities,
)
from nard.engine.engine import load_evaluator
from nard.engine.evaluator import (
    Evaluator,
    cubeless_equity,
    five_probabilities,
    flip_probabilities,
)
from nard.engine.rollout import consistent, quasi_random_dice, rollout_trials
from nard.engine.search import DEFAULT_FILTER, rank_plays

__all__ = [
    "BLOCK",
    "CandidateRollout",
    "CubeRollout",
    "PlayRollout",
    "RolloutError",
    "RolloutSettings",
    "rollout_cube",
    "rollout_plays",
]

BLOCK = 36
"""Trials per unit of work: one full cycle of the quasi-random first roll."""


class RolloutError(NardError, ValueError):
    """Rollout settings or a position that cannot be rolled out."""


@dataclass(frozen=True)
class RolloutSettings:
    """How to roll out: ``trials`` (rounded up to whole blocks of 36), ``truncate``
    turns per trial, ``seed``; ``candidates`` plays at most within ``window`` of
    the best at 1-ply; ``stop`` standard errors for an early end (None: never)."""

    trials: int = 1296
    truncate: int = 11
    seed: int = 1
    candidates: int = 5
    window: float = 0.16
    stop: float | None = None
    cubeful: bool = False
    """Turn the cube inside the trials (:mod:`nard.analysis.cubeful`)."""

    def __post_init__(self) -> None:
        if self.trials < 1:
            raise RolloutError(f"trials must be at least 1, not {self.trials!r}")
        if self.truncate < 0:
            raise RolloutError(f"truncate must be >= 0, not {self.truncate!r}")
        if self.candidates < 1:
            raise RolloutError(f"candidates must be at least 1, not {self.candidates!r}")
        if self.window < 0:
            raise RolloutError(f"window must be >= 0, not {self.window!r}")
        if self.stop is not None and self.stop <= 0:
            raise RolloutError(f"stop must be > 0 standard errors, not {self.stop!r}")
        if self.seed < 0:
            raise RolloutError(f"seed must be >= 0, not {self.seed!r}")

    @property
    def blocks(self) -> int:
        """Blocks of :data:`BLOCK` trials to run."""
        return math.ceil(self.trials / BLOCK)


@dataclass(frozen=True)
class CandidateRollout:
    """One candidate's rolled-out figures, from the mover's view: cubeless, its mean
    probabilities and cubeless equity, the standard error of that equity and the
    cubeful equity at the cube and score from the mean probabilities; cubeful (the
    cube turned inside the trials), the mean cubeful equity and its standard error
    (no probabilities)."""

    name: str
    probabilities: tuple[float, float, float, float, float] | None
    cubeless: float | None
    standard_error: float
    cubeful: float

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "probabilities": None
            if self.probabilities is None
            else [round(p, 6) for p in self.probabilities],
            "cubeless": None if self.cubeless is None else round(self.cubeless, 6),
            "standard_error": round(self.standard_error, 6),
            "cubeful": round(self.cubeful, 6),
        }


@dataclass(frozen=True)
class PlayRollout:
    """The candidate plays of a roll, best first by cubeful equity."""

    position_id: str
    dice: tuple[int, int]
    trials: int
    truncate: int
    seed: int
    candidates: tuple[CandidateRollout, ...]
    stopped_early: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "plays",
            "cubeful_trials": bool(self.candidates and self.candidates[0].probabilities is None),
            "position_id": self.position_id,
            "dice": list(self.dice),
            "trials": self.trials,
            "truncate": self.truncate,
            "seed": self.seed,
            "stopped_early": self.stopped_early,
            "candidates": [c.to_json() for c in self.candidates],
        }


@dataclass(frozen=True)
class CubeRollout:
    """The cube decision of the side on roll from its rolled-out probabilities."""

    position_id: str
    trials: int
    truncate: int
    seed: int
    position: CandidateRollout
    decision: CubeDecision
    double_take_error: float | None = None
    """The standard error of the rolled-out double/take (cubeful trials; None when
    double/take comes from the mean probabilities by formula)."""

    def to_json(self) -> dict[str, Any]:
        d = self.decision
        return {
            "kind": "cube",
            "position_id": self.position_id,
            "trials": self.trials,
            "truncate": self.truncate,
            "seed": self.seed,
            **{k: v for k, v in self.position.to_json().items() if k != "name"},
            "cubeful_trials": self.position.probabilities is None,
            "no_double": round(d.no_double, 6),
            "double_take": round(d.double_take, 6),
            "double_pass": round(d.double_pass, 6),
            "double_take_error": None
            if self.double_take_error is None
            else round(self.double_take_error, 6),
            "action": d.action,
            "double": d.double,
            "take": d.take,
            "beaver": d.beaver,
        }


Progress = Callable[[int, int], None]
"""Called with (trials done, trials in all)."""

# -- the work of one block ------------------------------------------------------

_EVALUATOR: Evaluator | None = None


def _start_worker(weights: str | None) -> None:
    global _EVALUATOR
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    _EVALUATOR = load_evaluator(weights)


@dataclass(frozen=True)
class CubefulWork:
    """The starts of a cubeful rollout (one per candidate) and the root's cube and score."""

    starts: tuple[CubefulStart, ...]
    root: CubeContext


Work = npt.NDArray[np.int64] | CubefulWork
"""What a rollout rolls out: raw boards (cubeless trials), or cubeful starts."""


def _size(work: Work) -> int:
    return len(work.starts) if isinstance(work, CubefulWork) else len(work)


def _block(work: Work, seed: int, block: int, truncate: int) -> npt.NDArray[np.float64]:
    """Trials ``block * 36`` to ``block * 36 + 35`` of ``work`` (:func:`block_trials`)."""
    assert _EVALUATOR is not None
    return block_trials(_EVALUATOR, work, seed, block, truncate)


def block_trials(
    evaluator: Evaluator, work: Work, seed: int, block: int, truncate: int
) -> npt.NDArray[np.float64]:
    """One block of trials of every board (or cubeful start) on common dice: cubeless,
    shape (boards, 36, 5), each trial's probabilities from the view of the side on
    roll of its board; cubeful, shape (starts, 36), each trial's value for the root
    (:func:`~nard.analysis.cubeful.cubeful_trials`)."""
    dice = quasi_random_dice(seed, block * BLOCK, BLOCK, truncate)
    rolls = np.tile(dice, (_size(work), 1))
    if isinstance(work, CubefulWork):
        starts = [s for s in work.starts for _ in range(BLOCK)]
        values = cubeful_trials(evaluator, starts, rolls, truncate, work.root)
        return values.reshape(len(work.starts), BLOCK)
    boards = np.repeat(work, BLOCK, axis=0)
    return rollout_trials(evaluator, boards, rolls, truncate).reshape(len(work), BLOCK, 5)


def _ray_block(
    weights: str | None, work: Work, seed: int, block: int, truncate: int
) -> npt.NDArray[np.float64]:  # pragma: no cover - runs in a Ray worker
    """:func:`_block` in a Ray worker (nard must be installed there)."""
    if _EVALUATOR is None:
        _start_worker(weights)
    return _block(work, seed, block, truncate)


def _run_ray(
    address: str, weights: str | None, boards: Work, settings: RolloutSettings
) -> Iterator[npt.NDArray[np.float64]]:  # pragma: no cover - needs a Ray installation
    try:
        ray: Any = importlib.import_module("ray")
    except ImportError:
        raise RolloutError("--ray needs Ray: pip install 'ray[default]'") from None
    ray.init(
        address=None if address == "local" else address,
        ignore_reinit_error=True,
        log_to_driver=False,
    )

    remote_block = ray.remote(_ray_block)
    pending = [
        remote_block.remote(weights, boards, settings.seed, b, settings.truncate)
        for b in range(settings.blocks)
    ]
    for ref in pending:
        yield ray.get(ref)


def _run(
    boards: Work,
    settings: RolloutSettings,
    evaluator: Evaluator | None,
    weights: str | None,
    jobs: int,
    ray_address: str | None,
) -> Iterator[npt.NDArray[np.float64]]:
    """Each block's trials, in block order."""
    if ray_address is not None:
        yield from _run_ray(ray_address, weights, boards, settings)
        return
    if jobs <= 1 or settings.blocks == 1:
        judge = evaluator if evaluator is not None else load_evaluator(weights)
        for b in range(settings.blocks):
            yield block_trials(judge, boards, settings.seed, b, settings.truncate)
        return
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(
        max_workers=jobs, mp_context=context, initializer=_start_worker, initargs=(weights,)
    ) as pool:
        futures = [
            pool.submit(_block, boards, settings.seed, b, settings.truncate)
            for b in range(settings.blocks)
        ]
        try:
            for future in futures:
                yield future.result()
        finally:
            for future in futures:
                future.cancel()


def _roll_out(
    boards: Work,
    settings: RolloutSettings,
    evaluator: Evaluator | None,
    weights: str | Path | None,
    jobs: int,
    ray_address: str | None,
    progress: Progress | None,
) -> tuple[npt.NDArray[np.float64], bool]:
    """Every trial of every board, (boards, trials, 5) or cubeful (starts, trials), and
    whether it stopped early. The probabilities are from the view of each board's side
    on roll."""
    done: list[npt.NDArray[np.float64]] = []
    total = settings.blocks * BLOCK
    stopped = False
    source = _run(
        boards, settings, evaluator, None if weights is None else str(weights), jobs, ray_address
    )
    for trials in source:
        done.append(trials)
        if progress:
            progress(len(done) * BLOCK, total)
        if (
            settings.stop is not None
            and len(done) < settings.blocks
            and _clearly_best(_scores(np.concatenate(done, axis=1)), settings.stop)
        ):
            stopped = True
            break
    if hasattr(source, "close"):
        source.close()
    return np.concatenate(done, axis=1), stopped


def _scores(trials: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """Each candidate's trials as the mover's values, higher better: cubeful trials are
    the root's already; cubeless probabilities are the opponent's (on roll after the
    play), so their equity changes sign."""
    if trials.ndim == 2:
        return trials
    scores: npt.NDArray[np.float64] = -cubeless_equity(trials)
    return scores


def _clearly_best(scores: npt.NDArray[np.float64], z: float) -> bool:
    """Whether the candidate with the best mean score leads every other by ``z``
    standard errors of their paired difference (common dice)."""
    if len(scores) < 2:
        return True
    best = int(np.argmax(scores.mean(axis=1)))
    n = scores.shape[1]
    for other in range(len(scores)):
        if other == best:
            continue
        diff = scores[best] - scores[other]
        se = diff.std(ddof=1) / math.sqrt(n) if n > 1 else math.inf
        if diff.mean() <= z * se:
            return False
    return True


def _figures(
    trials: npt.NDArray[np.float64],
) -> tuple[tuple[float, float, float, float, float], float, float]:
    mean = consistent(trials.mean(axis=0, keepdims=True))[0]
    _, se = _mean_and_error(cubeless_equity(trials))
    return five_probabilities(mean), float(cubeless_equity(mean)), se


def _mean_and_error(values: npt.NDArray[np.float64]) -> tuple[float, float]:
    n = len(values)
    se = float(values.std(ddof=1) / math.sqrt(n)) if n > 1 else math.inf
    return float(values.mean()), se


def verdict(
    nd: float, dt: float, dp: float, ctx: CubeContext, gammon_chance: float
) -> CubeDecision:
    """The cube decision from its three rolled-out equities (normalised, the side on
    roll's), worded by :func:`~nard.engine.cube.decide_cube` as the hint words it;
    ``gammon_chance`` is the side on roll's chance of winning a gammon or more."""
    # means of many trials carry the sums' rounding: an exact +1 must compare as +1
    nd, dt, dp = round(nd, 9), round(dt, 9), round(dp, 9)
    mwc: tuple[float, float, float] | None = None
    if not ctx.is_money:
        mwc = (equity_to_mwc(nd, ctx), equity_to_mwc(dt, ctx), equity_to_mwc(dp, ctx))
    return decide_cube(nd, dt, dp, ctx, gammon_chance=gammon_chance, mwc=mwc)


def rollout_plays(
    position: Position,
    dice: Sequence[int],
    context: CubeContext | None = None,
    settings: RolloutSettings | None = None,
    *,
    evaluator: Evaluator | None = None,
    weights: str | Path | None = None,
    jobs: int = 1,
    ray_address: str | None = None,
    progress: Progress | None = None,
) -> PlayRollout:
    """Roll out the best plays of ``dice`` (at most ``settings.candidates``, within
    ``settings.window`` of the best at 1-ply), ranked by cubeful equity at ``context``
    (money with a centred cube by default)."""
    settings = settings or RolloutSettings()
    ctx = context or CubeContext()
    judge = evaluator if evaluator is not None else load_evaluator(weights)
    ranking = rank_plays(position, dice, judge, 1, DEFAULT_FILTER)
    if not ranking:
        raise RolloutError(
            f"{dice[0]}-{dice[1]} cannot be played in position {position.position_id()}"
        )
    best = ranking[0].equity
    chosen: list[Play] = [
        r.play
        for r in ranking[: settings.candidates]
        if r.ply == ranking[0].ply and r.equity >= best - settings.window
    ]
    work: Work
    if settings.cubeful:
        theirs = ctx.swapped()  # the opponent on roll after each play, the cube as it is
        work = CubefulWork(
            tuple(CubefulStart(tuple(p.result), theirs, root_on_roll=False) for p in chosen),
            ctx,
        )
    else:
        work = np.array([list(p.result) for p in chosen], dtype=np.int64)
    trials, stopped = _roll_out(work, settings, judge, weights, jobs, ray_address, progress)
    figures = []
    for i, play in enumerate(chosen):
        name = position.format_play(play)
        if settings.cubeful:
            mean, se = _mean_and_error(trials[i])
            figures.append(CandidateRollout(name, None, None, se, mean))
            continue
        theirs_mean = consistent(trials[i].mean(axis=0, keepdims=True))[0]
        probs, cubeless, se = _figures(flip_probabilities(trials[i]))
        cubeful = play_equities([theirs_mean], [play.result], ctx)[0]
        figures.append(CandidateRollout(name, probs, cubeless, se, cubeful))
    figures.sort(key=lambda c: -c.cubeful)
    d1, d2 = dice
    return PlayRollout(
        position.position_id(),
        (max(d1, d2), min(d1, d2)),
        trials.shape[1],
        settings.truncate,
        settings.seed,
        tuple(figures),
        stopped,
    )


def rollout_cube(
    position: Position,
    context: CubeContext | None = None,
    settings: RolloutSettings | None = None,
    *,
    evaluator: Evaluator | None = None,
    weights: str | Path | None = None,
    jobs: int = 1,
    ray_address: str | None = None,
    progress: Progress | None = None,
) -> CubeRollout:
    """Roll out ``position`` (side on roll, before it rolls) and decide its cube at
    ``context`` from the mean probabilities."""
    settings = settings or RolloutSettings()
    ctx = context or CubeContext()
    if position.is_game_over():
        raise RolloutError(f"the game of position {position.position_id()} is over")
    judge = evaluator if evaluator is not None else (None if jobs > 1 else load_evaluator(weights))
    if settings.cubeful:
        start = tuple(position)
        work: Work = CubefulWork(
            (
                CubefulStart(start, ctx, root_on_roll=True, no_double_first=True),
                CubefulStart(start, ctx.doubled(), root_on_roll=True),
            ),
            ctx,
        )
        trials, _ = _roll_out(work, settings, judge, weights, jobs, ray_address, progress)
        nd, nd_se = _mean_and_error(trials[0])
        dt, dt_se = _mean_and_error(trials[1])
        gammons = (judge or load_evaluator(weights)).evaluate([position])[0][1]
        decision = verdict(nd, dt, 1.0, ctx, float(gammons))
        return CubeRollout(
            position.position_id(),
            trials.shape[1],
            settings.truncate,
            settings.seed,
            CandidateRollout("position", None, None, nd_se, decision.optimal),
            decision,
            dt_se,
        )
    boards = np.array([list(position)], dtype=np.int64)
    trials, _ = _roll_out(boards, settings, judge, weights, jobs, ray_address, progress)
    probs, cubeless, se = _figures(trials[0])
    decision = cube_decision(probs, ctx, position=position)
    return CubeRollout(
        position.position_id(),
        trials.shape[1],
        settings.truncate,
        settings.seed,
        CandidateRollout("position", probs, cubeless, se, decision.optimal),
        decision,
    )
