"""Datasets: self-play positions and their labels, and the files that keep them.

TD(lambda) self-play (:mod:`nard.training.td`) gives a first network; every
strong backgammon engine then went on with supervised training (gnubg trained
its later nets toward its own 2-ply evaluation, wildbg on its own rollouts).
nard does the same with its own engine only, and this module makes the data:

1. :func:`collect_positions`: self-play games of the current evaluator at 0-ply,
   with a share of random plays so that the positions vary, every position
   before a roll kept (finished games and pure bear-offs, which are exact,
   left out).
2. :func:`label_positions`: each position's five probabilities at ``plies``
   (:func:`nard.engine.search.evaluate_ply`: every roll, the best reply at
   0-ply, averaged), which is stronger than the net alone. The bear-off
   database and the race net take part at the leaves. Other labels:
   luck-corrected playouts (:mod:`nard.training.playout`) and truncated
   rollouts (:mod:`nard.training.rollout`).

:func:`nard.training.fitting.fit` then trains a network toward the labels.

A dataset is an ``.npz`` (format :data:`DATASET_FORMAT`): ``boards`` ``(n, 26)``
int8 (:class:`Position` tuples), ``targets`` ``(n, 5)`` float32, how it was
made, and optionally ``groups`` ``(n,)`` int64: rows with the same value are
the plays of one roll (sibling rollouts, :mod:`nard.training.rollout`), whose
differences :func:`~nard.training.fitting.fit` can weigh on their own
(``relative``). ``nard label`` and ``nard fit`` (:mod:`nard.training.cli`) run
the steps from the command line; ``docs/engine.md`` has the recipe that made
the shipped networks.

>>> from nard.engine.evaluator import FakeEvaluator
>>> import random
>>> boards = collect_positions(FakeEvaluator(), games=1, rng=random.Random(1))
>>> boards.shape[1], boards.dtype
(26, dtype('int8'))
"""

from __future__ import annotations

import hashlib
import importlib
import io
import json
import random
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from nard.core.errors import NardError
from nard.core.position import Position
from nard.engine.bearoff import is_bearoff
from nard.engine.encoding import race_flags
from nard.engine.evaluator import NUM_OUTPUTS, Evaluator
from nard.engine.network import NeuralEvaluator, WeightsError, read_npz, write_npz_atomic
from nard.engine.player import EvaluatorPlayer
from nard.engine.search import evaluate_ply_boards

__all__ = [
    "DATASET_FORMAT",
    "Dataset",
    "DatasetError",
    "collect_positions",
    "label_positions",
    "load_dataset",
    "make_dataset",
    "map_game_chunks",
    "read_checked_npz",
    "save_dataset",
]

DATASET_FORMAT = "nard-dataset-1"
"""The format tag of a dataset file."""

Boards = npt.NDArray[np.int8]


class DatasetError(NardError):
    """A dataset file that is missing, corrupt or not a dataset."""


@dataclass(frozen=True)
class Dataset:
    """Positions (as ``(n, 26)`` boards) and their five-probability targets."""

    boards: Boards
    targets: npt.NDArray[np.float32]
    info: dict[str, Any]
    """How the labels were made (plies, weights, seed, ...)."""
    groups: npt.NDArray[np.int64] | None = None
    """Which rows are the plays of one roll (same value), or None."""

    def __len__(self) -> int:
        return int(self.boards.shape[0])

    def is_race(self) -> npt.NDArray[np.bool_]:
        """Which positions are races (no contact)."""
        return race_flags(self.boards.astype(np.int64))


# -- positions ---------------------------------------------------------------------------


def collect_positions(
    evaluator: Evaluator,
    games: int,
    rng: random.Random,
    random_play: float = 0.05,
) -> Boards:
    """Every position before a roll in ``games`` self-play games at 0-ply.

    With probability ``random_play`` a turn takes a uniformly random legal play
    instead of the best one. Finished games and pure bear-offs are left out.
    """
    player = EvaluatorPlayer(evaluator)
    seen: list[Position] = []
    for _ in range(games):
        position = Position()
        first = True
        while not position.is_game_over():
            roll = (rng.randint(1, 6), rng.randint(1, 6))
            while first and roll[0] == roll[1]:
                roll = (rng.randint(1, 6), rng.randint(1, 6))
            first = False
            if not is_bearoff(position):
                seen.append(position)
            plays = position.legal_plays(roll)
            if not plays:
                position = position.flip()
                continue
            if len(plays) == 1 or rng.random() < random_play:
                position = rng.choice(plays).result
                continue
            best = player.choose_among(plays)
            assert best is not None
            position = best.result
    if not seen:
        return np.zeros((0, 26), dtype=np.int8)
    return np.array(seen, dtype=np.int8)


def label_positions(boards: Boards, evaluator: Evaluator, plies: int) -> npt.NDArray[np.float32]:
    """The five probabilities of each board's position at ``plies``, as float32."""
    out: npt.NDArray[np.float32] = evaluate_ply_boards(
        boards.astype(np.int64), evaluator, plies
    ).astype(np.float32)
    return out


_T = TypeVar("_T")


def map_game_chunks(
    work: Callable[[tuple[Any, ...]], _T],
    weights: str | Path,
    games: int,
    seed: int,
    jobs: int,
    chunk: int,
    *extra: Any,
    ray_address: str | None = None,
) -> list[_T]:
    """``work((weights, n, chunk_seed, *extra))`` for each chunk of at most ``chunk`` of
    ``games`` games, over ``jobs`` processes; chunk ``i`` is seeded
    ``seed * 1_000_003 + i``, so results do not depend on ``jobs``. The weights are
    loaded once first, to fail early with their own error.

    With ``ray_address`` (a Ray cluster's address, or ``local``) the chunks are Ray
    tasks instead, one per chunk, on every core of the cluster; the weights travel
    with them as the file's bytes, so the workers need nard installed but not the
    file. The results are the same as on one process."""
    NeuralEvaluator.load(weights)
    tasks = [
        (str(weights), min(chunk, games - start), seed * 1_000_003 + i, *extra)
        for i, start in enumerate(range(0, games, chunk))
    ]
    if ray_address is not None:
        return _map_on_ray(ray_address, work, Path(weights).read_bytes(), tasks)
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            return list(pool.map(work, tasks))
    return [work(t) for t in tasks]


def _map_on_ray(
    address: str, work: Callable[[tuple[Any, ...]], _T], weights: bytes, tasks: list[Any]
) -> list[_T]:
    """``work`` of each of ``tasks`` as Ray tasks (:func:`map_game_chunks`)."""
    try:
        ray: Any = importlib.import_module("ray")
    except ImportError:
        raise DatasetError("--ray needs Ray: pip install 'ray[default]'") from None
    ray.init(
        address=None if address == "local" else address,
        ignore_reinit_error=True,
        log_to_driver=False,
    )
    shared = ray.put(weights)
    remote = ray.remote(_on_ray_worker)
    refs = [remote.remote(work, shared, task[1:]) for task in tasks]
    return [ray.get(ref) for ref in refs]


def _on_ray_worker(
    work: Callable[[tuple[Any, ...]], _T], weights: bytes, rest: tuple[Any, ...]
) -> _T:
    """One chunk on a Ray worker: the weights written to a file of the worker's own
    (named by their digest, written once per machine), then ``work`` as in a process."""
    digest = hashlib.sha256(weights).hexdigest()[:20]
    path = Path(tempfile.gettempdir()) / f"nard-weights-{digest}.npz"
    if not path.is_file():
        write_npz_atomic(path, _npz_arrays(weights))
    return work((str(path), *rest))


def _npz_arrays(data: bytes) -> dict[str, npt.NDArray[Any]]:
    """The arrays of an ``.npz`` file's bytes."""
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}


def _work(args: tuple[Any, ...]) -> tuple[Boards, npt.NDArray[np.float32]]:
    weights, games, seed, plies, random_play = args
    evaluator = NeuralEvaluator.load(weights)
    boards = collect_positions(evaluator, games, random.Random(seed), random_play)
    return boards, label_positions(boards, evaluator, plies)


def make_dataset(
    weights: str | Path,
    games: int,
    plies: int = 1,
    seed: int = 0,
    jobs: int = 1,
    random_play: float = 0.05,
    chunk: int = 20,
    ray_address: str | None = None,
) -> Dataset:
    """Positions from ``games`` self-play games of the networks at ``weights``,
    labelled at ``plies``; the work split in chunks of ``chunk`` games over
    ``jobs`` processes (chunk ``i`` seeded ``seed * 1_000_003 + i``, so the result
    does not depend on ``jobs``), or on a Ray cluster (``ray_address``)."""
    parts = map_game_chunks(
        _work, weights, games, seed, jobs, chunk, plies, random_play, ray_address=ray_address
    )
    boards = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, 26), np.int8)
    targets = np.concatenate([p[1] for p in parts]) if parts else np.zeros((0, 5), np.float32)
    info = {
        "weights": Path(weights).name,
        "games": games,
        "plies": plies,
        "seed": seed,
        "random_play": random_play,
        "made": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    return Dataset(boards, targets, info)


def save_dataset(dataset: Dataset, path: str | Path) -> None:
    """Write ``dataset`` atomically."""
    arrays = {
        "format": np.array(DATASET_FORMAT),
        "boards": dataset.boards,
        "targets": dataset.targets,
        "info": np.array(json.dumps(dataset.info, sort_keys=True)),
    }
    if dataset.groups is not None:
        arrays["groups"] = dataset.groups.astype(np.int64)
    write_npz_atomic(path, arrays)


def read_checked_npz(
    path: str | Path,
    what: str,
    tag: str,
    names: tuple[str, ...],
    problem_of: Callable[[dict[str, npt.NDArray[Any]]], str],
) -> dict[str, npt.NDArray[Any]]:
    """The arrays of a ``what`` file (format ``tag``, arrays ``names``), or a
    :class:`DatasetError` naming the file and its problem: unreadable, another
    format, arrays missing, or what ``problem_of`` finds ("" when nothing)."""
    try:
        arrays = read_npz(path)
    except WeightsError as exc:
        raise DatasetError(f"{what} {str(path)!r} cannot be read: {exc}") from None
    found = arrays.get("format")
    if found is None or found.shape != () or str(found) != tag:
        problem = f"format {None if found is None else found.tolist()!r}, expected {tag!r}"
    elif any(k not in arrays for k in names):
        problem = "missing arrays"
    else:
        problem = problem_of(arrays)
    if problem:
        raise DatasetError(f"{what} {str(path)!r} is corrupt or not a {what} ({problem})")
    return arrays


def _dataset_problem(arrays: dict[str, npt.NDArray[Any]]) -> str:
    b, t = arrays["boards"], arrays["targets"]
    if b.ndim != 2 or b.shape[1] != 26 or t.shape != (b.shape[0], NUM_OUTPUTS):
        return f"shapes {b.shape} and {t.shape}"
    if not np.isfinite(t).all() or t.min() < 0.0 or t.max() > 1.0:
        return "targets outside [0, 1]"
    g = arrays.get("groups")
    if g is not None and (g.shape != (b.shape[0],) or g.dtype.kind not in "iu"):
        return f"groups of shape {g.shape} and type {g.dtype}"
    return ""


def load_dataset(path: str | Path) -> Dataset:
    """Read a dataset file; :class:`DatasetError` naming the file when it is not one."""
    names = ("boards", "targets", "info")
    arrays = read_checked_npz(path, "dataset", DATASET_FORMAT, names, _dataset_problem)
    groups = arrays.get("groups")
    return Dataset(
        arrays["boards"].astype(np.int8),
        arrays["targets"].astype(np.float32),
        json.loads(str(arrays["info"])),
        None if groups is None else groups.astype(np.int64),
    )
