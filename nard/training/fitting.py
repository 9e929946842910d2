"""Fitting a network to labels: Adam on the cross-entropy of the five outputs.

:func:`fit` trains a :class:`~nard.engine.network.Network` toward a dataset's
targets (:mod:`nard.training.dataset`), from a given network (fine-tuning) or
from random weights; a held-out share of the positions measures the loss. With
groups (one roll's plays, :func:`nard.training.rollout.sibling_plays`) it can
also weigh how far the net's order of a roll's plays is from the labels'.
``nard fit`` (:func:`nard.training.cli.run_fit`) fits each class's network;
``nard prune`` (:mod:`nard.training.pruning`) the pruning network.

>>> import numpy as np
>>> from nard.engine.encoding import INPUTS
>>> from nard.engine.network import Network
>>> x = np.zeros((8, INPUTS), dtype=np.float32)
>>> result = fit(x, np.full((8, 5), 0.5, np.float32), Network.random(4), epochs=2)
>>> len(result.train_loss), result.network.hidden
(2, 4)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from nard.engine.evaluator import NUM_OUTPUTS
from nard.engine.network import Network

__all__ = ["EQUITY_WEIGHTS", "FitResult", "GroupedRows", "fit"]

EQUITY_WEIGHTS = np.array([2.0, 1.0, 1.0, -1.0, -1.0], dtype=np.float32)
"""The change in cubeless equity per unit of each output (win, win gammon, win
backgammon, lose gammon, lose backgammon): what the order term of a fit weighs
the outputs' errors by."""


@dataclass(frozen=True)
class FitResult:
    """The trained network and its loss (mean cross-entropy per output) by epoch."""

    network: Network
    train_loss: list[float]
    validation_loss: list[float]


class GroupedRows:
    """A fit's rows by group, so that batches and the held-out share take whole
    groups: ``groups[i]`` is row ``i``'s group, -1 a row alone (a group of one)."""

    def __init__(self, groups: npt.NDArray[np.int64]) -> None:
        n = len(groups)
        alone = groups < 0
        keyed = np.where(alone, np.arange(n) + int(groups.max(initial=0)) + 1, groups)
        _, members = np.unique(keyed, return_inverse=True)
        self.members: npt.NDArray[np.int64] = members.reshape(-1)
        """Each row's group, numbered from 0."""
        self._by_group = np.argsort(self.members, kind="stable")
        self.sizes: npt.NDArray[np.int64] = np.bincount(self.members)
        """Rows per group."""
        self._firsts = np.cumsum(self.sizes) - self.sizes

    def rows_of(self, chosen: npt.NDArray[Any]) -> npt.NDArray[np.int64]:
        """The rows of groups ``chosen``, group after group."""
        lengths = self.sizes[chosen]
        shift = np.repeat(self._firsts[chosen] - (np.cumsum(lengths) - lengths), lengths)
        picked: npt.NDArray[np.int64] = self._by_group[shift + np.arange(int(lengths.sum()))]
        return picked

    def split(
        self, rng: np.random.Generator, validation: float
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """``(held-out rows, training groups)``: the last ``validation`` share of the
        groups in a shuffle by ``rng``."""
        order = rng.permutation(len(self.sizes))
        held = int(len(self.sizes) * validation)
        return self.rows_of(order[len(self.sizes) - held :]), order[: len(self.sizes) - held]

    def batch_groups(self, batch: int) -> int:
        """Groups per batch for about ``batch`` rows."""
        mean_size = float(self.sizes.mean()) if len(self.sizes) else 1.0
        return max(1, round(batch / mean_size))


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
    grouped = GroupedRows(groups)
    members, sizes, rows_of = grouped.members, grouped.sizes, grouped.rows_of
    val_idx, train_groups = grouped.split(rng, validation)
    held = len(val_idx)
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
        diff = (y - tb) @ EQUITY_WEIGHTS
        means = np.bincount(member, weights=diff) / np.bincount(member)
        out: npt.NDArray[Any] = diff - means[member]
        return out

    per_batch = grouped.batch_groups(batch)
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
                dy = (2.0 * relative / len(idx)) * r[:, None] * EQUITY_WEIGHTS[None, :]
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
