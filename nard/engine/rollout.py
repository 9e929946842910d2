"""Rollout labels: many luck-corrected trials from each position, truncated, averaged.

A playout label (:mod:`nard.engine.playout`) is one trial: the game that
followed, with each roll's luck taken out against the network's 1-ply
baseline. One trial is noisy (about 0.10 equity here), and at ``lam < 1``
it leans on the network's own evaluations, whose bias it then keeps. A
**rollout** averages many trials from the same position, the way gnubg's
rollouts do, and stops each one after ``truncate`` turns, where the
network's 1-ply value of the position reached closes the chain (a
truncated rollout: the trials are shorter, and the luck of the turns after
the cut never enters the label's noise).

For a trial from ``s_0`` that reaches ``s_T``::

    Y_T = baseline_T
    Y_t = baseline_t + flip(Y_{t+1}) - chosen_t      (t = T-1 ... 0)

with ``baseline_t`` the 1-ply value of ``s_t`` (every roll's best play at
0-ply, averaged) and ``chosen_t`` the 0-ply value of the play made for the
roll thrown, both from the view of the side on roll at ``s_t``; a trial
whose game ends at turn ``e < T`` starts the chain at ``Y_e = baseline_e``
(the play that ended it was valued exactly). Each correction
``flip(Y_{t+1}) - chosen_t`` has mean zero for the network's 0-ply play, so
the label estimates the value of the position under that play, up to the
cut. Measured against gnubg 3-ply on 300 contact positions of the shipped
networks' games (36 trials): the net's 0-ply is 0.053 rms away, its 2-ply
0.040, gnubg's own 0-ply 0.037, a rollout cut at 8 turns **0.032** (docs/engine.md).

Every (position, trial) pair moves together, one evaluator call per turn
for all of them, so a rollout costs ``trials * (truncate + 1)`` 1-ply
steps per position, batched. Rolls come from ``numpy.random.default_rng``;
the same seed gives the same labels.

>>> from nard.core.position import Position
>>> from nard.engine.evaluator import FakeEvaluator
>>> race = Position.from_points({6: 3, 8: 4, 12: 2}, {6: 4, 9: 3, 11: 2})
>>> labels = rollout_labels(FakeEvaluator(), np.array([list(race)]), trials=4, truncate=3, seed=1)
>>> labels.shape, bool(((labels >= 0) & (labels <= 1)).all())
((1, 5), True)
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from nard.core.dice import ALL_ROLLS
from nard.engine.evaluator import (
    NUM_OUTPUTS,
    Evaluator,
    flip_probabilities,
)
from nard.engine.network import NeuralEvaluator
from nard.engine.playout import ROLL_WEIGHTS, one_ply_turn, play_games
from nard.engine.search import evaluate_ply_boards
from nard.engine.supervised import Dataset, map_game_chunks

__all__ = ["consistent", "rollout_dataset", "rollout_labels", "rollout_positions"]

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
    truncate: int,
    rng: np.random.Generator,
) -> npt.NDArray[np.float64]:
    """``Y_0`` (module docstring) of one trial from each of ``starts``."""
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
        rolls = rng.choice(len(ALL_ROLLS), size=len(alive), p=ROLL_WEIGHTS)
        picked = best[np.arange(len(alive)), rolls]
        chosen[t, alive] = mover[np.arange(len(alive)), rolls]
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


def rollout_labels(
    evaluator: Evaluator,
    boards: npt.NDArray[Any],
    trials: int = 36,
    truncate: int = 8,
    seed: int = 0,
) -> npt.NDArray[np.float32]:
    """The five probabilities of each of ``boards`` (side on roll, before it rolls) by
    a rollout of ``trials`` trials cut at ``truncate`` turns (module docstring)."""
    if trials < 1 or truncate < 0:
        raise ValueError("trials >= 1 and truncate >= 0 are required")
    rng = np.random.default_rng(seed)
    boards = np.ascontiguousarray(boards, dtype=np.int64)
    out = np.zeros((len(boards), NUM_OUTPUTS))
    # A finished game (a side with no checker left) is its exact outcome.
    over = (boards.max(axis=1, initial=0) <= 0) | (boards.min(axis=1, initial=0) >= 0)
    if over.any():
        out[over] = evaluate_ply_boards(boards[over], evaluator, 0)
    live = np.flatnonzero(~over)
    per_batch = max(1, _BATCH // trials)
    for first in range(0, len(live), per_batch):
        rows = live[first : first + per_batch]
        pairs = np.repeat(boards[rows], trials, axis=0)
        y = _rollout_batch(evaluator, pairs, truncate, rng)
        out[rows] = y.reshape(len(rows), trials, NUM_OUTPUTS).mean(axis=1)
    labels: npt.NDArray[np.float32] = consistent(out).astype(np.float32)
    return labels


def rollout_positions(
    evaluator: Evaluator, games: int, seed: int, share: float, random_play: float = 0.02
) -> npt.NDArray[np.int8]:
    """A seeded ``share`` of the positions of ``games`` self-play games at 0-ply (with
    ``random_play`` of random plays): openings and pure bear-offs left out."""
    played = play_games(evaluator, games, seed=seed, random_play=random_play)
    keep = played.to_label()
    keep &= np.random.default_rng([seed, 1]).random(len(played)) < share
    picked: npt.NDArray[np.int8] = played.boards[keep]
    return picked


def _work(args: tuple[Any, ...]) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    weights, games, seed, share, trials, truncate, random_play = args
    evaluator = NeuralEvaluator.load(weights)
    boards = rollout_positions(evaluator, games, seed, share, random_play)
    return boards, rollout_labels(evaluator, boards, trials, truncate, seed=seed)


def rollout_dataset(
    weights: str | Path,
    games: int,
    trials: int = 36,
    truncate: int = 8,
    share: float = 0.1,
    seed: int = 0,
    jobs: int = 1,
    random_play: float = 0.02,
    chunk: int = 20,
) -> Dataset:
    """A share ``share`` of the positions of ``games`` self-play games of the networks at
    ``weights``, labelled by rollouts of ``trials`` trials cut at ``truncate`` turns;
    chunks of ``chunk`` games over ``jobs`` processes (chunk ``i`` seeded
    ``seed * 1_000_003 + i``, so the result does not depend on ``jobs``)."""
    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must be in (0, 1], not {share!r}")
    parts = map_game_chunks(
        _work, weights, games, seed, jobs, chunk, share, trials, truncate, random_play
    )
    boards = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, 26), np.int8)
    targets = np.concatenate([p[1] for p in parts]) if parts else np.zeros((0, 5), np.float32)
    info = {
        "weights": Path(weights).name,
        "games": games,
        "labels": "rollout",
        "trials": trials,
        "truncate": truncate,
        "share": share,
        "seed": seed,
        "random_play": random_play,
        "made": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    return Dataset(boards, targets, info)
