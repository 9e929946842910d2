"""Rollout labels: many luck-corrected trials from each position, truncated, averaged.

A playout label (:mod:`nard.training.playout`) is one trial: the game that
followed, with each roll's luck taken out against the network's 1-ply
baseline. One trial is noisy (about 0.10 equity here), and at ``lam < 1``
it leans on the network's own evaluations, whose bias it then keeps. A
**rollout** averages many trials from the same position, the way gnubg's
rollouts do, and stops each one after ``truncate`` turns, where the
network's 1-ply value of the position reached closes the chain (a
truncated rollout: the trials are shorter, and the luck of the turns after
the cut never enters the label's noise). The trials, shared with ``nard
rollout``, are :mod:`nard.engine.rollout`'s (its docstring has their formula);
a label is the mean of ``trials`` of them, each corrected for its rolls' luck,
so it estimates the value of the position under the network's 0-ply play, up
to the cut.

Measured against gnubg 3-ply on 300 contact positions of the shipped networks'
games (36 trials): the net's 0-ply is 0.053 rms away, its 2-ply 0.040, gnubg's
own 0-ply 0.037, a rollout cut at 8 turns **0.032** (docs/engine.md).

Every (position, trial) pair moves together, one evaluator call per turn, so a
label costs ``trials * (truncate + 1)`` 1-ply steps per position, batched. The
same seed gives the same labels.

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
from nard.engine import _kernels
from nard.engine.encoding import crashed_flags, race_flags
from nard.engine.evaluator import NUM_OUTPUTS, Evaluator, cubeless_equity, evaluate_boards
from nard.engine.luck import ROLL_WEIGHTS
from nard.engine.network import NeuralEvaluator
from nard.engine.rollout import (
    _BATCH,
    _rollout_batch,
    consistent,
    group_seed,
    quasi_random_dice,
)
from nard.engine.search import children, evaluate_ply_boards
from nard.training.dataset import Dataset, map_game_chunks
from nard.training.playout import play_games

__all__ = [
    "rollout_dataset",
    "rollout_labels",
    "rollout_positions",
    "sibling_plays",
]


def rollout_labels(
    evaluator: Evaluator,
    boards: npt.NDArray[Any],
    trials: int = 36,
    truncate: int = 8,
    seed: int = 0,
    groups: npt.NDArray[Any] | None = None,
) -> npt.NDArray[np.float32]:
    """The five probabilities of each of ``boards`` (side on roll, before it rolls) by
    a rollout of ``trials`` trials cut at ``truncate`` turns (module docstring;
    :func:`~nard.engine.rollout.rollout_trials`).

    The dice are :func:`quasi_random_dice`'s, as in ``nard rollout``: every first roll
    equally often in each 36 trials. Rows with the same ``groups`` value are rolled
    out on the same dice (trial
    ``j`` of each throws the same rolls, as gnubg rolls out the candidate
    plays of one decision): the dice's luck then falls alike on all of them,
    and the differences between their labels are far less noisy than the
    labels. By default every row is its own group."""
    if trials < 1 or truncate < 0:
        raise ValueError("trials >= 1 and truncate >= 0 are required")
    boards = np.ascontiguousarray(boards, dtype=np.int64)
    if groups is None:
        groups = np.arange(len(boards))
    if len(groups) != len(boards):
        raise ValueError(f"{len(groups)} groups for {len(boards)} boards")
    out = np.zeros((len(boards), NUM_OUTPUTS))
    # A finished game (a side with no checker left) is its exact outcome.
    over = _kernels.finished(boards)
    if over.any():
        out[over] = evaluate_ply_boards(boards[over], evaluator, 0)
    live = np.flatnonzero(~over)
    # The dice of every trial of every group, in the order the groups first appear.
    _, first_seen, group_of = np.unique(groups[live], return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first_seen))
    # Group g's trials throw the quasi-random dice of ``nard rollout`` (seeded by
    # seed and g): its first roll stratified over each 36 trials.
    dice = (
        np.stack(
            [
                quasi_random_dice(group_seed(seed, g), 0, trials, truncate)
                for g in range(len(first_seen))
            ]
        )
        if len(first_seen)
        else np.zeros((0, trials, truncate), dtype=np.int64)
    )
    group_dice = dice[order[group_of.reshape(-1)]]
    per_batch = max(1, _BATCH // trials)
    for first in range(0, len(live), per_batch):
        rows = live[first : first + per_batch]
        pairs = np.repeat(boards[rows], trials, axis=0)
        rolls = group_dice[first : first + per_batch].reshape(len(rows) * trials, truncate)
        y = _rollout_batch(evaluator, pairs, rolls, truncate)
        out[rows] = y.reshape(len(rows), trials, NUM_OUTPUTS).mean(axis=1)
    labels: npt.NDArray[np.float32] = consistent(out).astype(np.float32)
    return labels


def rollout_positions(
    evaluator: Evaluator,
    games: int,
    seed: int,
    share: float,
    random_play: float = 0.02,
    win_range: tuple[float, float] | None = None,
    crashed: bool = False,
    min_off: int = 0,
) -> npt.NDArray[np.int8]:
    """A seeded ``share`` of the positions of ``games`` self-play games at 0-ply (with
    ``random_play`` of random plays): openings and pure bear-offs left out; with
    ``win_range`` (low, high) only those where the side on roll wins with a 0-ply
    chance in that range (``(0.55, 0.95)``: the doubling window, where the cube is
    decided and a net's errors cost whole cubes); with ``crashed``, only crashed
    positions (:func:`~nard.engine.encoding.crashed_flags`: a side with at most 6
    checkers in play); with ``min_off``, only contact positions where a side has borne
    off at least that many checkers (where the net overrates that side most:
    docs/engine.md)."""
    played = play_games(evaluator, games, seed=seed, random_play=random_play)
    keep = played.to_label()
    keep &= np.random.default_rng([seed, 1]).random(len(played)) < share
    picked: npt.NDArray[np.int8] = played.boards[keep]
    if crashed and len(picked):
        picked = picked[crashed_flags(picked)]
    if min_off and len(picked):
        boards = picked.astype(np.int64)
        off = 15 - np.minimum(np.clip(boards, 0, None).sum(1), np.clip(-boards, 0, None).sum(1))
        picked = picked[(off >= min_off) & ~race_flags(boards)]
    if win_range is not None and len(picked):
        wins = evaluate_boards(evaluator, picked.astype(np.int64))[:, 0]
        picked = picked[(wins >= win_range[0]) & (wins <= win_range[1])]
    return picked


def sibling_plays(
    evaluator: Evaluator,
    boards: npt.NDArray[Any],
    plays: int,
    window: float,
    seed: int,
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.int64]]:
    """The candidate plays of one seeded roll from each of ``boards``: the ``plays``
    best at 0-ply within ``window`` equity of the best, where at least two are.

    Returns the positions they reach (seen from the opponent, on roll next) and,
    for each, the row of ``boards`` it came from. These are the positions a
    search weighs against each other; labelled on common dice
    (:func:`rollout_labels` ``groups``), they teach the network the order of
    one roll's plays, not only the level of a position.
    """
    if plays < 2 or window < 0:
        raise ValueError("plays >= 2 and window >= 0 are required")
    boards = np.ascontiguousarray(boards, dtype=np.int64)
    n = len(boards)
    if not n:
        return np.zeros((0, 26), np.int8), np.zeros(0, np.int64)
    kids, lengths = children(boards)
    equity = -cubeless_equity(evaluate_boards(evaluator, kids))  # the mover's view
    starts = (np.cumsum(lengths) - lengths).reshape(n, len(ALL_ROLLS))
    counts = lengths.reshape(n, len(ALL_ROLLS))
    rolls = np.random.default_rng([seed, 2]).choice(len(ALL_ROLLS), size=n, p=ROLL_WEIGHTS)
    picked: list[npt.NDArray[np.int64]] = []
    parents: list[npt.NDArray[np.int64]] = []
    for i in range(n):
        first, count = int(starts[i, rolls[i]]), int(counts[i, rolls[i]])
        if count < 2:
            continue
        values = equity[first : first + count]
        ranked = np.argsort(-values, kind="stable")[:plays]
        ranked = ranked[values[ranked] >= values[ranked[0]] - window]
        if len(ranked) >= 2:
            picked.append(first + ranked)
            parents.append(np.full(len(ranked), i, dtype=np.int64))
    if not picked:
        return np.zeros((0, 26), np.int8), np.zeros(0, np.int64)
    rows = np.concatenate(picked)
    return kids[rows].astype(np.int8), np.concatenate(parents)


def _work(args: tuple[Any, ...]) -> tuple[Any, ...]:
    (
        weights, games, seed, share, trials, truncate, random_play, siblings, window,
        win_range, crashed, min_off,
    ) = args  # fmt: skip
    evaluator = NeuralEvaluator.load(weights)
    boards = rollout_positions(
        evaluator, games, seed, share, random_play, win_range, crashed, min_off
    )
    groups = None
    if siblings:
        boards, groups = sibling_plays(evaluator, boards, siblings, window, seed)
    labels = rollout_labels(evaluator, boards, trials, truncate, seed=seed, groups=groups)
    return boards, labels, groups


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
    siblings: int = 0,
    window: float = 0.12,
    ray_address: str | None = None,
    win_range: tuple[float, float] | None = None,
    crashed: bool = False,
    min_off: int = 0,
) -> Dataset:
    """A share ``share`` of the positions of ``games`` self-play games of the networks at
    ``weights``, labelled by rollouts of ``trials`` trials cut at ``truncate`` turns;
    chunks of ``chunk`` games over ``jobs`` processes (chunk ``i`` seeded
    ``seed * 1_000_003 + i``, so the result does not depend on ``jobs``), or on a
    Ray cluster (``ray_address``: :func:`~nard.training.dataset.map_game_chunks`).

    With ``siblings`` (2 or more), each position drawn is replaced by the
    positions its ``siblings`` best plays of a seeded roll reach (within
    ``window`` of the best: :func:`sibling_plays`), rolled out on common dice.
    With ``win_range``, only positions whose 0-ply winning chance is in it; with
    ``crashed``, only crashed positions; with ``min_off``, only contact positions
    where a side has borne off that many (:func:`rollout_positions`)."""
    if not 0.0 < share <= 1.0:
        raise ValueError(f"share must be in (0, 1], not {share!r}")
    if win_range is not None and not 0.0 <= win_range[0] <= win_range[1] <= 1.0:
        raise ValueError(
            f"win_range must be (low, high) with 0 <= low <= high <= 1, not {win_range!r}"
        )
    if siblings == 1 or siblings < 0:
        raise ValueError(f"siblings must be 0 (none) or at least 2, not {siblings!r}")
    parts = map_game_chunks(
        _work,
        weights,
        games,
        seed,
        jobs,
        chunk,
        share,
        trials,
        truncate,
        random_play,
        siblings,
        window,
        win_range,
        crashed,
        min_off,
        ray_address=ray_address,
    )
    boards = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, 26), np.int8)
    targets = np.concatenate([p[1] for p in parts]) if parts else np.zeros((0, 5), np.float32)
    groups = None
    if siblings:
        # A chunk's groups are the rows of its positions drawn: set chunks apart.
        firsts = np.cumsum([len(p[0]) for p in parts]) - np.array([len(p[0]) for p in parts])
        groups = np.concatenate([p[2] + first for p, first in zip(parts, firsts, strict=True)])
    info = {
        "weights": Path(weights).name,
        "games": games,
        "labels": "rollout",
        "trials": trials,
        "truncate": truncate,
        "share": share,
        "seed": seed,
        "random_play": random_play,
        "siblings": siblings,
        "window": window,
        **({"win_range": list(win_range)} if win_range is not None else {}),
        **({"crashed": True} if crashed else {}),
        **({"min_off": min_off} if min_off else {}),
        "made": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    return Dataset(boards, targets, info, groups)
