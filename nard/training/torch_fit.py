"""Fitting networks of any depth with PyTorch, on a GPU when the machine has one.

:func:`fit_torch` is :func:`~nard.training.fitting.fit` for networks of one or
more hidden layers (:meth:`~nard.engine.network.Network.from_layers`; two or
three, as wildbg's): the same loss (the mean cross-entropy of the five sigmoid
outputs, plus ``relative`` times the order of one roll's plays where the dataset
has groups), Adam with the learning rate decayed by cosine to a tenth, whole
groups per batch and a seeded held-out share. It runs on ``device`` (``auto``:
CUDA when PyTorch sees a GPU, else the CPU) and returns a plain
:class:`~nard.engine.network.Network`: play and analysis stay numpy and numba on
the CPU, and never import PyTorch.

PyTorch is an optional dependency (``pip install 'nard[train]'``); it is
imported only when a fit asks for it (``nard fit --torch``).
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
import numpy.typing as npt

from nard.engine.network import Network
from nard.training.dataset import DatasetError
from nard.training.fitting import EQUITY_WEIGHTS, FitResult, GroupedRows

__all__ = ["fit_torch", "from_torch", "load_torch", "pick_device", "to_torch"]


def load_torch() -> Any:
    """The ``torch`` module, or :class:`~nard.training.dataset.DatasetError` saying how
    to install it."""
    try:
        return importlib.import_module("torch")
    except ImportError:
        raise DatasetError(
            "fitting with --torch needs PyTorch: pip install 'nard[train]' (or torch)"
        ) from None


def pick_device(torch: Any, device: str) -> Any:
    """``device`` as PyTorch's: ``auto`` is CUDA when a GPU is visible, else the CPU."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise DatasetError(f"device {device!r}: PyTorch sees no GPU on this machine")
    try:
        return torch.device(device)
    except RuntimeError as exc:
        raise DatasetError(f"device {device!r}: {exc}") from None


def to_torch(network: Network, device: Any = None) -> Any:
    """``network`` as a ``torch.nn.Sequential`` of Linear and Sigmoid layers (float32),
    the outputs without their sigmoid (logits; :func:`fit_torch`'s loss takes them)."""
    torch = load_torch()
    nn = torch.nn
    modules: list[Any] = []
    weights, biases = network.weights_and_biases()
    for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
        linear = nn.Linear(w.shape[0], w.shape[1])
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(np.ascontiguousarray(w.T, dtype=np.float32)))
            linear.bias.copy_(torch.from_numpy(np.ascontiguousarray(b, dtype=np.float32)))
        modules.append(linear)
        if i < len(weights) - 1:
            modules.append(nn.Sigmoid())
    model = nn.Sequential(*modules)
    return model.to(device) if device is not None else model


def from_torch(model: Any) -> Network:
    """The :class:`~nard.engine.network.Network` of a model made by :func:`to_torch`."""
    torch = load_torch()
    linears = [m for m in model if isinstance(m, torch.nn.Linear)]
    weights = [m.weight.detach().cpu().double().numpy().T.copy() for m in linears]
    biases = [m.bias.detach().cpu().double().numpy().copy() for m in linears]
    return Network.from_layers(weights, biases)


def fit_torch(
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
    device: str = "auto",
) -> FitResult:
    """Train a copy of ``network`` toward ``targets`` with PyTorch on ``device``.

    The arguments are :func:`~nard.training.fitting.fit`'s; ``network`` may have
    any number of hidden layers. The inputs and targets are moved to the device
    once (a GPU with tens of gigabytes holds tens of millions of positions).
    """
    torch = load_torch()
    functional = torch.nn.functional
    where = pick_device(torch, device)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    n = x.shape[0]
    if groups is None or relative <= 0.0:
        groups = np.arange(n, dtype=np.int64)
        relative = 0.0
    if len(groups) != n:
        raise ValueError(f"{len(groups)} groups for {n} rows")
    grouped = GroupedRows(groups)
    members, rows_of = grouped.members, grouped.rows_of
    val_idx, train_groups = grouped.split(rng, validation)
    per_batch = grouped.batch_groups(batch)

    xs = torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).to(where)
    ts = torch.from_numpy(np.ascontiguousarray(targets, dtype=np.float32)).to(where)
    member_all = torch.from_numpy(members.astype(np.int64)).to(where)
    equity = torch.from_numpy(EQUITY_WEIGHTS).to(where)
    model = to_torch(network, where)
    optimiser = torch.optim.Adam(model.parameters(), lr=learning_rate)

    def loss_of(idx: Any) -> tuple[Any, Any]:
        """(mean cross-entropy, full loss) of rows ``idx`` (a tensor on the device)."""
        logits = model(xs[idx])
        tb = ts[idx]
        cross = functional.binary_cross_entropy_with_logits(logits, tb)
        if not relative:
            return cross, cross
        diff = (torch.sigmoid(logits) - tb) @ equity
        _, member = torch.unique(member_all[idx], return_inverse=True)
        count = torch.zeros(int(member.max()) + 1, device=where).index_add_(
            0, member, torch.ones_like(diff)
        )
        total = torch.zeros_like(count).index_add_(0, member, diff)
        residual = diff - (total / count)[member]
        return cross, cross + relative * (residual * residual).mean()

    train_loss: list[float] = []
    validation_loss: list[float] = []
    for epoch in range(epochs):
        lr = learning_rate * (0.1 + 0.9 * 0.5 * (1.0 + math.cos(math.pi * epoch / epochs)))
        for group in optimiser.param_groups:
            group["lr"] = lr
        model.train()
        perm_g = rng.permutation(train_groups)
        seen = 0
        total = 0.0
        for start in range(0, len(perm_g), per_batch):
            idx = torch.from_numpy(rows_of(perm_g[start : start + per_batch])).to(where)
            cross, loss = loss_of(idx)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            optimiser.step()
            total += float(cross.detach()) * len(idx)
            seen += len(idx)
        train_loss.append(total / max(seen, 1))
        shown = "-"
        if len(val_idx):
            model.eval()
            with torch.no_grad():
                cross, _ = loss_of(torch.from_numpy(val_idx).to(where))
            validation_loss.append(float(cross))
            shown = f"{validation_loss[-1]:.5f}"
        if log is not None:
            log.write(
                f"epoch {epoch + 1}/{epochs}: train {train_loss[-1]:.5f}, "
                f"validation {shown}, lr {lr:.2e} ({where.type})\n"
            )
            log.flush()
    return FitResult(from_torch(model), train_loss, validation_loss)
