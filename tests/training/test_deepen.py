"""training/deepen.py: a hidden layer stacked on a one-layer net keeps its function."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from nard.engine.encoding import encode_boards
from nard.engine.evaluator import cubeless_equity
from nard.engine.network import Network, Networks, NeuralEvaluator
from nard.training.playout import play_games

ROOT = Path(__file__).resolve().parents[2]


def _deepen_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("deepen", ROOT / "training" / "deepen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_stacked_layer_keeps_the_networks_equities(tmp_path: Path) -> None:
    deepen = _deepen_module()
    shipped = Networks.load(ROOT / "nard" / "engine" / "data" / "nard-net.npz")
    source = tmp_path / "one.npz"
    target = tmp_path / "two.npz"
    shipped.save(source)
    deepen.main(str(source), str(target), "16", "3")
    deeper = Networks.load(target)
    assert deeper.contact.hidden_sizes == (shipped.contact.hidden, 16)
    assert deeper.race == shipped.race and deeper.pruning == shipped.pruning
    games = play_games(NeuralEvaluator(shipped), 2, seed=5)
    boards = np.ascontiguousarray(games.boards, dtype=np.int64)
    x = encode_boards(boards).astype(np.float64)
    before = cubeless_equity(shipped.contact.forward(x))
    after = cubeless_equity(deeper.contact.forward(x))
    assert np.sqrt(np.mean((before - after) ** 2)) < 0.005
    assert np.abs(before - after).max() < 0.02
    with pytest.raises(SystemExit, match="at least 5 units"):
        deepen.deepen(shipped.contact, 4)
    with pytest.raises(SystemExit, match="2 hidden layers"):
        deepen.deepen(Network.random(hidden=(8, 4)), 16)
