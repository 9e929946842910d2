"""Supervised training on nard's own search: positions from self-play, labels from n-ply.

TD(lambda) self-play (:mod:`nard.engine.train`) gives a first network; every
strong backgammon engine then went on with supervised training (gnubg trained
its later nets toward its own 2-ply evaluation, wildbg on its own rollouts).
nard does the same with its own engine only:

1. :func:`collect_positions`: self-play games of the current evaluator at 0-ply,
   with a share of random plays so that the positions vary, every position
   before a roll kept (finished games and pure bear-offs, which are exact,
   left out).
2. :func:`label_positions`: each position's five probabilities at ``plies``
   (:func:`nard.engine.search.evaluate_ply`: every roll, the best reply at
   0-ply, averaged), which is stronger than the net alone. The bear-off
   database and the race net take part at the leaves.
3. :func:`fit`: a network trained toward those labels with Adam on the
   cross-entropy of each of the five sigmoid outputs, from a given network
   (fine-tuning) or from random weights; a held-out share of the positions
   measures the loss.

A dataset is an ``.npz`` (format :data:`DATASET_FORMAT`): ``boards`` ``(n, 26)``
int8 (:class:`Position` tuples), ``targets`` ``(n, 5)`` float32, how it was
made, and optionally ``groups`` ``(n,)`` int64: rows with the same value are
the plays of one roll (sibling rollouts, :mod:`nard.engine.rollout`), whose
differences :func:`fit` can weigh on their own (``relative``). ``nard label``
and ``nard fit`` run the steps from the command line; ``docs/engine.md`` has
the recipe that made the shipped networks.

>>> from nard.engine.evaluator import FakeEvaluator
>>> import random
>>> boards = collect_positions(FakeEvaluator(), games=1, rng=random.Random(1))
>>> boards.shape[1], boards.dtype
(26, dtype('int8'))
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
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
from nard.engine.encoding import crashed_flags, encode_boards, race_flags
from nard.engine.evaluator import NUM_OUTPUTS, Evaluator
from nard.engine.network import (
    NET_CLASSES,
    Network,
    Networks,
    NeuralEvaluator,
    WeightsError,
    read_npz,
    write_npz_atomic,
)
from nard.engine.player import EvaluatorPlayer
from nard.engine.search import evaluate_ply_boards

__all__ = [
    "DATASET_FORMAT",
    "Dataset",
    "DatasetError",
    "FitResult",
    "collect_positions",
    "fit",
    "label_positions",
    "load_dataset",
    "make_dataset",
    "save_dataset",
]

DATASET_FORMAT = "nard-dataset-1"
"""The format tag of a dataset file."""

FloatArray = npt.NDArray[np.float64]
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
) -> list[_T]:
    """``work((weights, n, chunk_seed, *extra))`` for each chunk of at most ``chunk`` of
    ``games`` games, over ``jobs`` processes; chunk ``i`` is seeded
    ``seed * 1_000_003 + i``, so results do not depend on ``jobs``. The weights are
    loaded once first, to fail early with their own error."""
    NeuralEvaluator.load(weights)
    tasks = [
        (str(weights), min(chunk, games - start), seed * 1_000_003 + i, *extra)
        for i, start in enumerate(range(0, games, chunk))
    ]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            return list(pool.map(work, tasks))
    return [work(t) for t in tasks]


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
) -> Dataset:
    """Positions from ``games`` self-play games of the networks at ``weights``,
    labelled at ``plies``; the work split in chunks of ``chunk`` games over
    ``jobs`` processes (chunk ``i`` seeded ``seed * 1_000_003 + i``, so the result
    does not depend on ``jobs``)."""
    parts = map_game_chunks(_work, weights, games, seed, jobs, chunk, plies, random_play)
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


# -- fitting ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FitResult:
    """The trained network and its loss (mean cross-entropy per output) by epoch."""

    network: Network
    train_loss: list[float]
    validation_loss: list[float]


def _cross_entropy(y: npt.NDArray[Any], t: npt.NDArray[Any]) -> float:
    y = np.clip(y, 1e-7, 1.0 - 1e-7)
    return float(-np.mean(t * np.log(y) + (1.0 - t) * np.log(1.0 - y)))


def fit(
    x: npt.NDArray[np.float32],
    targets: npt.NDArray[np.float32],
    network: Network,
    epochs: int = 10,
    learning_rate: float = 1e-3,
    batch: int = 128,
    validation: float = 0.05,
    seed: int = 0,
    log: Any = None,
    groups: npt.NDArray[np.int64] | None = None,
    relative: float = 0.0,
) -> FitResult:
    """Train ``network`` (a copy; the argument is left alone) toward ``targets``.

    Adam on the mean cross-entropy of the five sigmoid outputs, learning rate
    decayed by cosine to a tenth over the epochs; the last ``validation``
    share of a seeded shuffle is held out. ``log`` (a text stream) gets one
    line per epoch.

    With ``groups`` (rows of one value are the plays of one roll, -1 a row
    alone) and ``relative > 0``, the loss adds ``relative`` times the mean
    square, over the rows of a group, of the difference between the net's
    and the targets' cubeless equity, each less its group's mean: how far
    the net's **order** of one roll's plays is from the labels', which
    common-dice rollouts measure with far less noise than the labels' own
    level. Batches then take whole groups, and whole groups are held out.
    """
    rng = np.random.default_rng(seed)
    n = x.shape[0]
    if groups is None or relative <= 0.0:
        groups = np.arange(n, dtype=np.int64)
        relative = 0.0
    if len(groups) != n:
        raise ValueError(f"{len(groups)} groups for {n} rows")
    # Rows alone (-1) become groups of one; batches and the held-out share take
    # whole groups, so no group is split.
    alone = groups < 0
    keyed = np.where(alone, np.arange(n) + int(groups.max(initial=0)) + 1, groups)
    _, members = np.unique(keyed, return_inverse=True)
    members = members.reshape(-1)
    by_group = np.argsort(members, kind="stable")
    sizes = np.bincount(members)
    firsts = np.cumsum(sizes) - sizes

    def rows_of(chosen: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
        """The rows of groups ``chosen``, group after group."""
        lengths = sizes[chosen]
        shift = np.repeat(firsts[chosen] - (np.cumsum(lengths) - lengths), lengths)
        picked: npt.NDArray[np.int64] = by_group[shift + np.arange(int(lengths.sum()))]
        return picked

    order_g = rng.permutation(len(sizes))
    held_g = int(len(sizes) * validation)
    val_idx = rows_of(order_g[len(sizes) - held_g :])
    train_groups = order_g[: len(sizes) - held_g]
    held = len(val_idx)
    mean_size = float(sizes.mean()) if len(sizes) else 1.0
    equity_weights = np.array([2.0, 1.0, 1.0, -1.0, -1.0], dtype=np.float32)
    params = [p.astype(np.float32) for p in network.parameters()]
    moments = [np.zeros_like(p) for p in params]
    squares = [np.zeros_like(p) for p in params]
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    step = 0
    train_loss: list[float] = []
    validation_loss: list[float] = []

    def forward(xb: npt.NDArray[np.float32]) -> tuple[npt.NDArray[Any], npt.NDArray[Any]]:
        w1, b1, w2, b2 = params
        with np.errstate(over="ignore"):  # exp(-z) overflows to inf: the sigmoid is 0
            h = 1.0 / (1.0 + np.exp(-(xb @ w1 + b1)))
            y = 1.0 / (1.0 + np.exp(-(h @ w2 + b2)))
        return h, y

    def relative_residual(
        y: npt.NDArray[Any], tb: npt.NDArray[Any], member: npt.NDArray[np.int64]
    ) -> npt.NDArray[Any]:
        """(net - target) equity of each row, less its group's mean (``member``: the
        row's group, numbered from 0 within the batch)."""
        diff = (y - tb) @ equity_weights
        means = np.bincount(member, weights=diff) / np.bincount(member)
        out: npt.NDArray[Any] = diff - means[member]
        return out

    per_batch = max(1, round(batch / mean_size))
    for epoch in range(epochs):
        lr = learning_rate * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * epoch / epochs)))
        perm_g = rng.permutation(train_groups)
        seen = 0
        total = 0.0
        for start in range(0, len(perm_g), per_batch):
            chosen = perm_g[start : start + per_batch]
            idx = rows_of(chosen)
            seen += len(idx)
            xb, tb = x[idx], targets[idx]
            h, y = forward(xb)
            total += _cross_entropy(y, tb) * len(idx)
            # d(mean cross-entropy)/dz2 = (y - t) / (batch * outputs)
            dz2 = (y - tb) / (len(idx) * NUM_OUTPUTS)
            if relative:
                member = np.repeat(np.arange(len(chosen)), sizes[chosen])
                r = relative_residual(y, tb, member)
                # d(relative * mean r^2)/dy = 2 relative r / rows * equity weights
                # (the group means' own derivatives sum to zero against r).
                dy = (2.0 * relative / len(idx)) * r[:, None] * equity_weights[None, :]
                dz2 = dz2 + (dy * y * (1.0 - y)).astype(np.float32)
            w2 = params[2]
            dz1 = (dz2 @ w2.T) * h * (1.0 - h)
            grads = [xb.T @ dz1, dz1.sum(axis=0), h.T @ dz2, dz2.sum(axis=0)]
            step += 1
            c1 = 1.0 - beta1**step
            c2 = 1.0 - beta2**step
            for p, g, m, v in zip(params, grads, moments, squares, strict=True):
                m *= beta1
                m += (1.0 - beta1) * g
                v *= beta2
                v += (1.0 - beta2) * g * g
                p -= (lr / c1) * m / (np.sqrt(v / c2) + eps)
        train_loss.append(total / max(seen, 1))
        shown = "-"
        if held:
            _, yv = forward(x[val_idx])
            validation_loss.append(_cross_entropy(yv, targets[val_idx]))
            shown = f"{validation_loss[-1]:.5f}"
            if relative:
                _, member_v = np.unique(members[val_idx], return_inverse=True)
                r = relative_residual(yv, targets[val_idx], member_v.astype(np.int64))
                shown += f" (order {np.sqrt(np.mean(r * r)) * 1000:.1f} thousandths rms)"
        if log is not None:
            log.write(
                f"epoch {epoch + 1}/{epochs}: train {train_loss[-1]:.5f}, "
                f"validation {shown}, lr {lr:.2e}\n"
            )
            log.flush()
    trained = Network(*(np.asarray(p, dtype=np.float64) for p in params))
    return FitResult(trained, train_loss, validation_loss)


# -- command line -------------------------------------------------------------------------


def add_label_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``nard label``."""
    parser.add_argument("dataset", help="dataset file to write (.npz)")
    parser.add_argument("--weights", required=True, help="networks that play and label")
    parser.add_argument("--games", type=int, required=True, help="self-play games")
    parser.add_argument("--plies", type=int, default=1, help="search depth of the labels")
    parser.add_argument(
        "--playout",
        type=float,
        metavar="LAM",
        help="label every turn of the games by its luck-corrected outcome at lambda LAM "
        "(nard.engine.playout) instead of by search",
    )
    parser.add_argument(
        "--rollout",
        type=int,
        metavar="TRIALS",
        help="label a share of the games' positions by rollouts of TRIALS luck-corrected "
        "trials each (nard.engine.rollout) instead of by search",
    )
    parser.add_argument(
        "--truncate", type=int, default=8, help="turns a rollout trial plays (default 8)"
    )
    parser.add_argument(
        "--share",
        type=float,
        default=0.1,
        help="share of the games' positions rolled out (default 0.1)",
    )
    parser.add_argument(
        "--siblings",
        type=int,
        default=0,
        metavar="K",
        help="with --rollout: roll out, on common dice, the positions the K best plays "
        "of a seeded roll reach from each position drawn, instead of the position",
    )
    parser.add_argument(
        "--window",
        type=float,
        default=0.12,
        help="with --siblings: plays within this equity of the best (default 0.12)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="processes")
    parser.add_argument(
        "--random-play",
        type=float,
        help="share of random plays (default 0.05; 0.02 with --playout or --rollout)",
    )


def run_label(args: argparse.Namespace, out: Any = None) -> int:
    """Run ``nard label``."""
    stream = sys.stderr if out is None else out
    if args.games < 1 or args.plies < 0 or args.jobs < 1:
        raise DatasetError("--games and --jobs must be positive, --plies at least 0")
    if args.playout is not None and not 0.0 <= args.playout <= 1.0:
        raise DatasetError(f"--playout takes a lambda in [0, 1], not {args.playout}")
    if args.random_play is not None and not 0.0 <= args.random_play <= 1.0:
        raise DatasetError(f"--random-play takes a share in [0, 1], not {args.random_play}")
    if args.rollout is not None:
        if args.playout is not None:
            raise DatasetError("--rollout and --playout are two kinds of label: give one")
        if args.rollout < 1 or args.truncate < 0 or not 0.0 < args.share <= 1.0:
            raise DatasetError(
                "--rollout takes at least 1 trial, --truncate at least 0 turns, "
                "--share a share in (0, 1]"
            )
        if args.siblings == 1 or args.siblings < 0 or args.window < 0:
            raise DatasetError("--siblings takes 0 or at least 2 plays, --window at least 0")
    elif args.siblings:
        raise DatasetError("--siblings goes with --rollout")
    t = time.perf_counter()
    if args.rollout is not None:
        from nard.engine.rollout import rollout_dataset

        random_play = 0.02 if args.random_play is None else args.random_play
        dataset = rollout_dataset(
            args.weights,
            args.games,
            args.rollout,
            args.truncate,
            args.share,
            args.seed,
            args.jobs,
            random_play,
            siblings=args.siblings,
            window=args.window,
        )
        how = f"by rollouts of {args.rollout} trials cut at {args.truncate} turns"
        if args.siblings:
            how += f", {args.siblings} sibling plays on common dice"
    elif args.playout is None:
        random_play = 0.05 if args.random_play is None else args.random_play
        dataset = make_dataset(
            args.weights, args.games, args.plies, args.seed, args.jobs, random_play
        )
        how = f"at {args.plies}-ply"
    else:
        from nard.engine.playout import play_games_with, playout_dataset

        random_play = 0.02 if args.random_play is None else args.random_play
        played = play_games_with(args.weights, args.games, args.seed, args.jobs, random_play)
        dataset = playout_dataset(played, args.playout)
        how = f"by playout at lambda {args.playout}"
    save_dataset(dataset, args.dataset)
    secs = time.perf_counter() - t
    stream.write(
        f"{len(dataset)} positions ({int(dataset.is_race().sum())} races) from {args.games} "
        f"games, labelled {how} in {secs:.0f} s: {args.dataset}\n"
    )
    return 0


def add_fit_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``nard fit``."""
    parser.add_argument("weights", help="networks file to write (.npz, every class)")
    parser.add_argument("--data", nargs="+", required=True, help="dataset files")
    parser.add_argument("--init", help="networks to start from (default: random weights)")
    parser.add_argument(
        "--classes",
        nargs="+",
        default=["contact", "race"],
        help="networks to fit: contact, race, crashed (default: contact race)",
    )
    parser.add_argument(
        "--hidden",
        type=int,
        default=80,
        help="hidden units of new networks; a smaller --init network is widened to it",
    )
    parser.add_argument(
        "--relative",
        type=float,
        default=0.0,
        metavar="WEIGHT",
        help="weight of the order of one roll's plays in the loss, for datasets with "
        "groups (nard label --siblings); default 0",
    )
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)


def run_fit(args: argparse.Namespace, out: Any = None) -> int:
    """Run ``nard fit``: train each class's network on its positions of the datasets.

    ``contact`` trains on every contact position (crashed ones included, so it
    stays a whole contact net), ``race`` on the races, ``crashed`` on the crashed
    positions only (:func:`~nard.engine.encoding.crashed_flags`), starting from
    the ``--init`` crashed net or, without one, from a copy of the contact net.
    Networks of ``--init`` that are not fitted are kept as they are, its pruning
    network too (``nard prune`` makes a new one).
    """
    stream = sys.stderr if out is None else out
    for name in args.classes:
        if name not in NET_CLASSES:
            raise DatasetError(f"unknown network class {name!r}: one of {', '.join(NET_CLASSES)}")
    if args.relative < 0:
        raise DatasetError(f"--relative takes a weight of at least 0, not {args.relative}")
    parts = [load_dataset(p) for p in args.data]
    boards = np.concatenate([d.boards for d in parts])
    targets = np.concatenate([d.targets for d in parts])
    # Each file's groups, renumbered apart from every other file's; -1: a row alone.
    groups = np.full(len(boards), -1, dtype=np.int64)
    row = next_group = 0
    for d in parts:
        if d.groups is not None and len(d):
            _, renumbered = np.unique(d.groups, return_inverse=True)
            groups[row : row + len(d)] = renumbered.reshape(-1) + next_group
            next_group += int(renumbered.max()) + 1
        row += len(d)
    if args.relative and next_group == 0:
        raise DatasetError("--relative needs datasets with groups (nard label --siblings)")
    del parts
    race = race_flags(boards)
    start = Networks.load(args.init) if args.init else None
    nets: dict[str, Network] = {}
    if start is not None:
        nets = dict(start.by_class())
        nets.setdefault("race", start.contact.copy())
    for name in args.classes:
        if name == "race":
            rows = race
        elif name == "crashed":
            rows = crashed_flags(boards)
        else:
            rows = ~race
        init = nets.get(name)
        if init is None and name == "crashed" and "contact" in nets:
            init = nets["contact"].copy()
        if init is None:
            init = Network.random(args.hidden, seed=args.seed)
        if init.hidden < args.hidden:
            init = init.widened(args.hidden, seed=args.seed)
        stream.write(f"{name}: {int(rows.sum())} positions, {init!r}\n")
        # Each class's inputs are encoded on their own: millions of positions'
        # inputs take gigabytes.
        result = fit(
            encode_boards(boards[rows]),
            targets[rows],
            init,
            epochs=args.epochs,
            learning_rate=args.learning_rate,
            batch=args.batch,
            seed=args.seed,
            log=stream,
            groups=groups[rows],
            relative=args.relative,
        )
        nets[name] = result.network
    if "contact" not in nets:
        raise DatasetError("no contact network: fit the contact class or give --init")
    pruning = start.pruning if start is not None else None
    if pruning is not None:
        # It only ranks replies for the search; `nard prune` distils a new one.
        stream.write("the pruning network of --init is kept as it is\n")
    Networks(nets["contact"], nets.get("race"), nets.get("crashed"), pruning).save(args.weights)
    stream.write(f"networks written to {args.weights}\n")
    return 0
