"""The pruning network: its data, its fit, its recall and `nard prune`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nard.cli.main import main
from nard.engine.encoding import RAW_INPUTS
from nard.engine.engine import Engine
from nard.engine.network import Network, Networks, NeuralEvaluator
from nard.training.pruning import fit_pruning, pruning_groups, top_k_recall

EVALUATOR = NeuralEvaluator(Network.random(hidden=8, seed=3, scale=0.3))


def test_groups_are_every_roll_of_the_drawn_positions_labelled_by_the_evaluator() -> None:
    boards, lengths, targets = pruning_groups(EVALUATOR, games=1, positions=4, seed=5)
    assert len(lengths) == 4 * 21 and int(lengths.sum()) == len(boards) == len(targets)
    np.testing.assert_allclose(
        targets, EVALUATOR.evaluate_boards(boards.astype(np.int64)), rtol=1e-6
    )
    again = pruning_groups(EVALUATOR, games=1, positions=4, seed=5)
    assert np.array_equal(again[0], boards) and np.array_equal(again[1], lengths)
    assert np.array_equal(again[2], targets)
    # Each group is one roll's distinct plays from one position.
    first = boards[: lengths[0]].astype(np.int64)
    assert len({tuple(b) for b in first.tolist()}) == len(first)


def test_a_fitted_pruner_ranks_better_than_a_random_one() -> None:
    groups = pruning_groups(EVALUATOR, games=3, positions=60, seed=1)
    held_out = pruning_groups(EVALUATOR, games=2, positions=40, seed=2)
    net = fit_pruning(groups, hidden=8, epochs=6, seed=1)
    assert net.inputs == RAW_INPUTS and net.hidden == 8
    fitted = top_k_recall(net, held_out, keep=3)
    chance = top_k_recall(Network.random(hidden=8, seed=9, inputs=RAW_INPUTS), held_out, keep=3)
    assert fitted[0] < chance[0] and fitted[1] < chance[1]
    assert top_k_recall(net, held_out, keep=10_000) == (0.0, 0.0)


def test_nard_prune_adds_the_network_to_the_bundle(tmp_path: Path) -> None:
    weights = tmp_path / "nets.npz"
    Networks(EVALUATOR.network, Network.random(hidden=4, seed=2)).save(weights)
    out = tmp_path / "pruned.npz"
    args = ["prune", str(weights), "--out", str(out), "--games", "1", "--positions", "3"]
    assert main([*args, "--sets", "1", "--hidden", "4", "--epochs", "1"]) == 0
    nets = Networks.load(out)
    assert nets.pruning is not None and nets.pruning.hidden == 4
    assert nets.contact == EVALUATOR.network and Networks.load(weights).pruning is None
    # World class searches with it; expert does not search.
    engine = Engine("world-class", weights=out)
    assert engine.pruning is not None and engine.pruning.keep == 8
    assert Engine("expert", weights=out).pruning is None
    assert Engine("world-class", weights=weights).pruning is None


def test_nard_prune_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prune", str(tmp_path / "missing.npz")]) != 0
    assert "missing.npz" in capsys.readouterr().err
    weights = tmp_path / "nets.npz"
    Networks(EVALUATOR.network).save(weights)
    assert main(["prune", str(weights), "--games", "0"]) != 0
    assert "--games" in capsys.readouterr().err
