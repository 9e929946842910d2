"""Networks of several hidden layers, and fitting them with PyTorch (CPU here; the
same code runs on a GPU): what PyTorch trains is what the numpy engine plays."""

from __future__ import annotations

import argparse
import importlib
import io
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nard.core.position import Position
from nard.engine import Engine
from nard.engine.encoding import INPUTS, encode_boards
from nard.engine.network import (
    DEEP_FORMAT,
    Network,
    Networks,
    NeuralEvaluator,
    WeightsError,
    _float32,
    _forward32,
)
from nard.training.cli import add_fit_arguments, run_fit
from nard.training.dataset import Dataset, DatasetError, save_dataset
from nard.training.fitting import fit
from nard.training.playout import play_games
from nard.training.torch_fit import fit_torch, from_torch, to_torch

torch: Any = importlib.import_module("torch")  # a dev dependency: `make test` installs it


@pytest.fixture(scope="module")
def positions() -> np.ndarray:
    games = play_games(NeuralEvaluator(Network.random(hidden=8, seed=3)), 6, seed=2)
    return np.ascontiguousarray(games.boards[:400], dtype=np.int64)


def test_a_deep_network_is_saved_loaded_and_evaluated_as_numpy_computes_it(
    tmp_path: Path, positions: np.ndarray
) -> None:
    net = Network.random(hidden=(24, 12, 6), seed=5, scale=0.3)
    assert (net.depth, net.hidden_sizes, net.inputs) == (3, (24, 12, 6), INPUTS)
    path = tmp_path / "deep.npz"
    net.save(path)
    assert str(np.load(path)["format"]) == DEEP_FORMAT
    assert Network.load(path) == net and Network.load(path) != Network.random((24, 12, 6), 6)
    x = encode_boards(positions)
    compiled = _forward32(_float32(net), x)  # the engine's float32 path
    assert np.abs(compiled - net.forward(x)).max() < 1e-5
    # a later layer wider than the first; two layers; layers narrower than the outputs
    for sizes in ((6, 12), (40, 3), (2, 2)):
        other = Network.random(hidden=sizes, seed=7, scale=0.3)
        assert np.abs(_forward32(_float32(other), x) - other.forward(x)).max() < 1e-5
    # in a bundle, and played by the engine
    bundle = tmp_path / "nets.npz"
    Networks(net, Network.random(hidden=(8, 4), seed=6)).save(bundle)
    engine = Engine("expert", weights=bundle)
    assert engine.best_play(Position(), (3, 1)) is not None
    # a one-layer network's file is as it always was
    assert str(Network.random(hidden=4).to_arrays()["format"]) == "nard-mlp-1"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hidden": np.array([24])}, "hidden layer sizes"),
        ({"hidden": np.array(24)}, "list of layer sizes"),
        ({"w2": np.zeros((24, 11))}, r"w2 has shape \(24, 11\)"),
        ({"b4": np.full(5, np.inf)}, "non-finite"),
    ],
)
def test_a_damaged_deep_network_is_refused(
    tmp_path: Path, change: dict[str, np.ndarray], message: str
) -> None:
    arrays: dict[str, Any] = dict(Network.random(hidden=(24, 12, 6)).to_arrays())
    arrays.update(change)
    path = tmp_path / "odd.npz"
    np.savez(path, **arrays)
    with pytest.raises(WeightsError, match=message):
        Network.load(path)
    del arrays["w3"]
    np.savez(path, **arrays)
    with pytest.raises(WeightsError):
        Network.load(path)


def test_torch_models_carry_the_same_weights() -> None:
    net = Network.random(hidden=(16, 8), seed=2, scale=0.3)
    model = to_torch(net)
    x = np.random.default_rng(1).random((50, INPUTS)).astype(np.float32)
    logits = model(torch.from_numpy(x)).detach().double().numpy()
    assert np.abs(1.0 / (1.0 + np.exp(-logits)) - net.forward(x)).max() < 1e-5
    back = from_torch(model)
    assert back.hidden_sizes == (16, 8)
    assert all(np.allclose(a, b, atol=1e-7) for a, b in zip(back.layers, net.layers, strict=True))


def _learnable(positions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Inputs and targets a network can learn: a fixed random network's outputs."""
    x = encode_boards(positions)
    teacher = Network.random(hidden=(12, 6), seed=9, scale=0.5)
    return x, teacher.forward(x).astype(np.float32)


def test_fit_torch_learns_and_matches_numpy_fit_on_one_layer(positions: np.ndarray) -> None:
    x, t = _learnable(positions)
    start = Network.random(hidden=8, seed=1)
    by_torch = fit_torch(x, t, start, epochs=6, learning_rate=1e-2, batch=32, device="cpu")
    by_numpy = fit(x, t, start, epochs=6, learning_rate=1e-2, batch=32)
    assert by_torch.train_loss[-1] < by_torch.train_loss[0]
    assert by_torch.validation_loss[-1] < by_torch.validation_loss[0]
    # the same loss, optimiser and schedule: the two fits end close together
    assert by_torch.validation_loss[-1] == pytest.approx(by_numpy.validation_loss[-1], abs=0.01)
    assert start == Network.random(hidden=8, seed=1)  # the argument is left alone


def test_fit_torch_trains_a_deep_network(positions: np.ndarray) -> None:
    x, t = _learnable(positions)
    start = Network.random(hidden=(16, 8), seed=1)
    result = fit_torch(x, t, start, epochs=8, learning_rate=1e-2, batch=32, seed=4)
    assert result.network.hidden_sizes == (16, 8)
    assert result.validation_loss[-1] < result.validation_loss[0]
    again = fit_torch(x, t, start, epochs=8, learning_rate=1e-2, batch=32, seed=4)
    assert np.allclose(again.network.layers[0], result.network.layers[0], atol=1e-6)


def test_fit_torch_weighs_the_order_of_one_rolls_plays(positions: np.ndarray) -> None:
    x, t = _learnable(positions)
    groups = np.arange(len(x)) // 4
    start = Network.random(hidden=(8, 4), seed=1)
    plain = fit_torch(x, t, start, epochs=2, batch=32, seed=1)
    ordered = fit_torch(x, t, start, epochs=2, batch=32, seed=1, groups=groups, relative=5.0)
    assert not np.allclose(plain.network.layers[0], ordered.network.layers[0])


def _fit_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_fit_arguments(parser)
    return parser.parse_args(list(argv))


def test_nard_fit_torch_writes_deep_networks(tmp_path: Path, positions: np.ndarray) -> None:
    x, t = _learnable(positions)
    del x
    data = tmp_path / "d.npz"
    save_dataset(Dataset(positions.astype(np.int8), t, {}), data)
    nets = tmp_path / "nets.npz"
    out = io.StringIO()
    args = _fit_args(
        str(nets), "--data", str(data), "--torch", "--device", "cpu",
        "--hidden", "16,8", "--epochs", "2", "--classes", "contact",
    )  # fmt: skip
    assert run_fit(args, out) == 0
    assert "fitting with PyTorch on cpu" in out.getvalue()
    loaded = Networks.load(nets)
    assert loaded.contact.hidden_sizes == (16, 8)
    assert Engine("expert", weights=nets).best_play(Position(), (6, 5)) is not None
    # fine-tuning from it keeps its layers
    again = tmp_path / "again.npz"
    args = _fit_args(
        str(again), "--data", str(data), "--init", str(nets), "--torch", "--device", "cpu",
        "--hidden", "16,8", "--epochs", "1", "--classes", "contact",
    )  # fmt: skip
    assert run_fit(args, out) == 0
    assert Networks.load(again).contact.hidden_sizes == (16, 8)


def test_nard_fit_says_what_a_deep_network_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = tmp_path / "d.npz"
    board = np.array([list(Position())], dtype=np.int8)
    save_dataset(Dataset(board, np.full((1, 5), 0.5, np.float32), {}), data)
    nets = str(tmp_path / "n.npz")
    with pytest.raises(DatasetError, match="add --torch"):
        run_fit(_fit_args(nets, "--data", str(data), "--hidden", "16,8"), io.StringIO())
    with pytest.raises(SystemExit):
        _fit_args(nets, "--data", str(data), "--hidden", "16,x")
    if not torch.cuda.is_available():
        with pytest.raises(DatasetError, match="sees no GPU"):
            run_fit(_fit_args(nets, "--data", str(data), "--torch", "--device", "cuda"))
    monkeypatch.setitem(sys.modules, "torch", None)  # PyTorch not installed
    with pytest.raises(DatasetError, match=r"pip install 'nard\[train\]'"):
        run_fit(_fit_args(nets, "--data", str(data), "--torch"), io.StringIO())
