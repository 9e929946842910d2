"""Labels from games played out: luck-corrected outcomes over a 1-ply baseline.

Labels made by a network's own n-ply search inherit the network's systematic
errors (a 2-ply search of a net that likes stragglers still likes them), so
supervised generations on such labels level off. Game outcomes do not share
those errors, but a single outcome is mostly dice luck. This module plays
self-play games to the end and labels **every position of every game** with
an outcome from which the luck is taken out, the variance-reduction of
rollouts (ENGINE-NOTES section 4, :mod:`nard.engine.luck`) applied along the
games themselves:

At each turn ``t`` the side on roll at ``s_t`` evaluates every roll's best
play at 0-ply (a 1-ply evaluation): ``baseline_t`` is their average over the
36 rolls, ``chosen_t`` the 0-ply value of the play it made for the roll it
threw (both from its own view). The label is, from the back of the game::

    Y_t = baseline_t + lam * (flip(Y_{t+1}) - chosen_t)

``flip(Y_{t+1})`` (the next position's label, seen back from ``s_t``'s side)
minus ``chosen_t`` is how far the network's judgement of the position reached
was wrong, as the rest of the game showed. The luck of the roll cancels
because the roll's own play is in the 1-ply baseline with its own 0-ply value.
With ``lam = 1`` the label is the game's outcome corrected for every roll's
luck (an unbiased estimate of the value of the network's 0-ply play); with
``lam = 0`` it is the 1-ply evaluation; in between, corrections from far
ahead weigh less (TD(lambda) returns). At the end of a game ``chosen`` is the
exact outcome and the correction is zero; a turn taken by a random play (for
variety, ``random_play``) cuts the chain (``lam`` is 0 there), since its
correction would not have mean zero.

Positions are seen from the side on roll before it rolls; the first turn of a
game (an opening roll cannot be a double) and pure bear-offs (exact in the
database) are not labelled. One turn costs one 1-ply evaluation, about as much
as a 1-ply label, and labels ~60 positions per game.

>>> from nard.core.position import Position
>>> from nard.engine.evaluator import FakeEvaluator
>>> race = Position.from_points({6: 3, 8: 4, 12: 2}, {6: 4, 9: 3, 11: 2})
>>> games = play_games(FakeEvaluator(), 2, seed=1, start=race)
>>> int(games.last.sum()), games.boards.shape[1]
(2, 26)
>>> dataset = playout_dataset(games, lam=0.9)
>>> bool((dataset.targets >= 0).all() and (dataset.targets <= 1).all())
True
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from nard.core.dice import ALL_ROLLS
from nard.core.position import Position
from nard.engine.bearoff import bearoff_rows
from nard.engine.evaluator import NUM_OUTPUTS, Evaluator, flip_probabilities
from nard.engine.luck import ROLL_WEIGHTS, one_ply_turn
from nard.engine.network import NeuralEvaluator, write_npz_atomic
from nard.training.dataset import Dataset, map_game_chunks, read_checked_npz

__all__ = [
    "GAMES_FORMAT",
    "PlayedGames",
    "load_games",
    "play_games",
    "play_games_with",
    "playout_dataset",
    "save_games",
]

GAMES_FORMAT = "nard-playouts-1"
"""The format tag of a file of played-out games (:func:`save_games`)."""

_OPENING_WEIGHTS = np.array([0.0 if a == b else 2.0 for a, b in ALL_ROLLS]) / 30.0


@dataclass(frozen=True)
class PlayedGames:
    """Every turn of some self-play games, in order, games one after another.

    Row ``t``: ``boards[t]`` the position before the roll (side on roll's view),
    ``baseline[t]`` its 1-ply probabilities, ``chosen[t]`` the 0-ply
    probabilities of the play made (mover's view), ``random[t]`` whether that
    play was a random one, ``last[t]`` whether it ended the game.
    """

    boards: npt.NDArray[np.int8]
    baseline: npt.NDArray[np.float32]
    chosen: npt.NDArray[np.float32]
    random: npt.NDArray[np.bool_]
    last: npt.NDArray[np.bool_]
    info: dict[str, Any]

    def __len__(self) -> int:
        return int(self.boards.shape[0])

    def to_label(self) -> npt.NDArray[np.bool_]:
        """The turns a dataset keeps: all but the openings (a game's first turn from
        the starting position, whose roll cannot be a double) and pure bear-offs
        (exact in the database)."""
        first = np.zeros(len(self), dtype=bool)
        first[:1] = True
        first[1:] = self.last[:-1]
        boards = self.boards.astype(np.int64)
        opening = first & (boards == np.array(Position(), dtype=np.int64)).all(axis=1)
        keep: npt.NDArray[np.bool_] = ~opening & ~bearoff_rows(boards)
        return keep

    def labels(self, lam: float) -> npt.NDArray[np.float64]:
        """``Y_t`` of every turn at ``lam`` (module docstring), clipped to [0, 1]."""
        if not 0.0 <= lam <= 1.0:
            raise ValueError(f"lam must be in [0, 1], not {lam!r}")
        n = len(self)
        out = np.empty((n, NUM_OUTPUTS), dtype=np.float64)
        baseline = self.baseline.astype(np.float64)
        chosen = self.chosen.astype(np.float64)
        following = np.zeros(NUM_OUTPUTS)  # flip(Y_{t+1}) - chosen_t, unclipped chain
        for t in range(n - 1, -1, -1):
            if self.last[t] or self.random[t]:
                y = baseline[t].copy()
            else:
                y = baseline[t] + lam * following
            out[t] = y
            if t > 0:
                following = flip_probabilities(y) - chosen[t - 1]
        np.clip(out, 0.0, 1.0, out=out)
        return out


def _play_batch(
    evaluator: Evaluator,
    games: int,
    rng: np.random.Generator,
    random_play: float,
    batch: int,
    start: Position,
    max_turns: int,
    info: dict[str, Any],
) -> PlayedGames:
    """``games`` games from ``start``, ``batch`` of them advanced together (one
    evaluator call per turn)."""
    turns: list[list[tuple[npt.NDArray[np.int64], Any, Any, bool]]] = []
    finished: list[list[tuple[npt.NDArray[np.int64], Any, Any, bool]]] = []
    first = np.array(start, dtype=np.int64)
    from_opening = start == Position()
    boards = np.zeros((0, 26), dtype=np.int64)
    begun = 0
    while begun < games or len(turns):
        fresh = min(games - begun, batch - len(turns))
        if fresh > 0:
            boards = np.concatenate([boards, np.repeat(first[None, :], fresh, axis=0)])
            turns.extend([] for _ in range(fresh))
            begun += fresh
        n = len(turns)
        kids, lengths, probs, best, _, baseline = one_ply_turn(evaluator, boards)
        starts = (np.cumsum(lengths) - lengths).reshape(n, len(ALL_ROLLS))
        counts = lengths.reshape(n, len(ALL_ROLLS))
        next_boards = np.empty_like(boards)
        keep = np.ones(n, dtype=bool)
        for g in range(n):
            opening = from_opening and not turns[g]
            roll = int(rng.choice(len(ALL_ROLLS), p=_OPENING_WEIGHTS if opening else ROLL_WEIGHTS))
            k = int(best[g, roll])
            randomised = bool(counts[g, roll] > 1 and rng.random() < random_play)
            if randomised:
                k = int(starts[g, roll] + rng.integers(counts[g, roll]))
            chosen = flip_probabilities(probs[k])
            turns[g].append((boards[g].copy(), baseline[g], chosen, randomised or opening))
            next_boards[g] = kids[k]
            if kids[k].min() >= 0:  # the mover has borne off its last checker
                finished.append(turns[g])
                keep[g] = False
            elif len(turns[g]) >= max_turns:  # a policy that never ends its games
                keep[g] = False
        boards = next_boards[keep]
        turns = [t for t, k in zip(turns, keep, strict=True) if k]
    rows = [turn for game in finished for turn in game]
    last = np.zeros(len(rows), dtype=bool)
    last[np.cumsum([len(game) for game in finished], dtype=np.int64) - 1] = True
    return PlayedGames(
        np.array([r[0] for r in rows], dtype=np.int8).reshape(-1, 26),
        np.array([r[1] for r in rows], dtype=np.float32).reshape(-1, NUM_OUTPUTS),
        np.array([r[2] for r in rows], dtype=np.float32).reshape(-1, NUM_OUTPUTS),
        np.array([r[3] for r in rows], dtype=bool),
        last,
        info,
    )


def play_games(
    evaluator: Evaluator,
    games: int,
    seed: int = 0,
    random_play: float = 0.02,
    batch: int = 64,
    start: Position | None = None,
    max_turns: int = 1000,
) -> PlayedGames:
    """``games`` self-play games of ``evaluator`` at 0-ply, every turn recorded.

    Each game starts from ``start`` (default: the opening position, whose first
    roll is never a double). Dice from ``numpy.random.default_rng(seed)``; a
    share ``random_play`` of the turns with a choice take a uniformly random
    play instead of the best one. A game still going after ``max_turns`` turns
    (a poor evaluator can shuffle forever) is left out.
    """
    if games < 0 or not 0.0 <= random_play <= 1.0 or batch < 1:
        raise ValueError("games >= 0, random_play in [0, 1] and batch >= 1 are required")
    rng = np.random.default_rng(seed)
    info = {"games": games, "seed": seed, "random_play": random_play}
    return _play_batch(
        evaluator, games, rng, random_play, batch, start or Position(), max_turns, info
    )


def _work(args: tuple[Any, ...]) -> PlayedGames:
    weights, games, seed, random_play = args
    return play_games(NeuralEvaluator.load(weights), games, seed, random_play)


def play_games_with(
    weights: str | Path,
    games: int,
    seed: int = 0,
    jobs: int = 1,
    random_play: float = 0.02,
    chunk: int = 200,
    ray_address: str | None = None,
) -> PlayedGames:
    """:func:`play_games` of the networks at ``weights``, in chunks of ``chunk`` games
    over ``jobs`` processes (chunk ``i`` seeded ``seed * 1_000_003 + i``), or on a Ray
    cluster (``ray_address``)."""
    parts = map_game_chunks(
        _work, weights, games, seed, jobs, chunk, random_play, ray_address=ray_address
    )
    info = {
        "weights": Path(weights).name,
        "games": games,
        "seed": seed,
        "random_play": random_play,
        "made": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    return PlayedGames(
        np.concatenate([p.boards for p in parts]),
        np.concatenate([p.baseline for p in parts]),
        np.concatenate([p.chosen for p in parts]),
        np.concatenate([p.random for p in parts]),
        np.concatenate([p.last for p in parts]),
        info,
    )


def save_games(games: PlayedGames, path: str | Path) -> None:
    """Write ``games`` atomically (format :data:`GAMES_FORMAT`)."""
    write_npz_atomic(
        path,
        {
            "format": np.array(GAMES_FORMAT),
            "boards": games.boards,
            "baseline": games.baseline,
            "chosen": games.chosen,
            "random": games.random,
            "last": games.last,
            "info": np.array(json.dumps(games.info, sort_keys=True)),
        },
    )


_GAMES_ARRAYS = ("boards", "baseline", "chosen", "random", "last", "info")


def _games_problem(arrays: dict[str, npt.NDArray[Any]]) -> str:
    n = arrays["boards"].shape[0]
    shapes = [arrays[k].shape for k in _GAMES_ARRAYS[:5]]
    if shapes != [(n, 26), (n, NUM_OUTPUTS), (n, NUM_OUTPUTS), (n,), (n,)]:
        return f"shapes {shapes}"
    if n and not arrays["last"][-1]:
        return "the last game does not end"
    return ""


def load_games(path: str | Path) -> PlayedGames:
    """Read a file of :func:`save_games`; :class:`DatasetError` naming the file when it
    is not one."""
    arrays = read_checked_npz(path, "games file", GAMES_FORMAT, _GAMES_ARRAYS, _games_problem)
    return PlayedGames(
        arrays["boards"].astype(np.int8),
        arrays["baseline"].astype(np.float32),
        arrays["chosen"].astype(np.float32),
        arrays["random"].astype(bool),
        arrays["last"].astype(bool),
        json.loads(str(arrays["info"])),
    )


def playout_dataset(games: PlayedGames, lam: float) -> Dataset:
    """A :class:`~nard.training.dataset.Dataset` of ``games``' labels at ``lam``: every
    turn but the openings and pure bear-offs."""
    labels = games.labels(lam)
    keep = games.to_label()
    info = dict(games.info, labels="playout", lam=lam)
    return Dataset(games.boards[keep], labels[keep].astype(np.float32), info)
