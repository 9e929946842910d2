"""Supervised training: positions from self-play, n-ply labels, fitting, dataset files."""

from __future__ import annotations

import argparse
import io
import random
from pathlib import Path

import numpy as np
import pytest

from nard.core.position import Position
from nard.engine.encoding import RAW_INPUTS, encode_boards
from nard.engine.engine import DEFAULT_WEIGHTS
from nard.engine.network import Network, Networks, NeuralEvaluator
from nard.engine.search import evaluate_ply
from nard.training.cli import add_label_arguments, run_fit, run_label
from nard.training.dataset import (
    Dataset,
    DatasetError,
    collect_positions,
    label_positions,
    load_dataset,
    make_dataset,
    save_dataset,
)
from nard.training.fitting import fit

# Games of the shipped networks end in about 50 turns; the pip-count FakeEvaluator's
# hit back and forth for thousands (6 of its games were 122,000 positions, 81 s).
SHIPPED = NeuralEvaluator.load(DEFAULT_WEIGHTS)


def test_collected_positions_are_live_and_seeded() -> None:
    boards = collect_positions(SHIPPED, games=3, rng=random.Random(4))
    again = collect_positions(SHIPPED, games=3, rng=random.Random(4))
    assert np.array_equal(boards, again)
    assert len(boards) > 30
    assert boards.dtype == np.int8
    for row in boards[:50]:
        position = Position(tuple(int(c) for c in row))  # a valid position
        assert not position.is_game_over()
    assert tuple(boards[0]) == tuple(Position())


def test_labels_are_the_n_ply_evaluation() -> None:
    boards = collect_positions(SHIPPED, games=1, rng=random.Random(2))[:12]
    net = Network.random(hidden=6, seed=1)
    evaluator = NeuralEvaluator(net)
    labels = label_positions(boards, evaluator, plies=1)
    positions = [Position(tuple(int(c) for c in row)) for row in boards]
    np.testing.assert_allclose(labels, evaluate_ply(positions, evaluator, 1), atol=1e-6)
    assert labels.dtype == np.float32


def test_fit_learns_the_targets() -> None:
    boards = collect_positions(SHIPPED, games=30, rng=random.Random(1))
    x = encode_boards(boards.astype(np.int64))
    teacher = Network.random(hidden=8, seed=5, scale=0.5)
    targets = teacher.forward(x).astype(np.float32)
    student = Network.random(hidden=8, seed=9)
    before = student.copy()
    result = fit(x, targets, student, epochs=30, learning_rate=3e-3, batch=32, seed=1)
    assert student == before  # the argument is left alone
    assert result.train_loss[-1] < result.train_loss[0]
    first_error = np.abs(before.forward(x) - targets).mean()
    error = np.abs(result.network.forward(x) - targets).mean()
    assert error < 0.5 * first_error
    assert len(result.validation_loss) == 30


def _order_error(net: Network, x: np.ndarray, targets: np.ndarray, groups: np.ndarray) -> float:
    """Root mean square of (net - target) cubeless equity, each less its group's mean."""
    diff = (net.forward(x) - targets) @ np.array([2.0, 1.0, 1.0, -1.0, -1.0])
    means = np.bincount(groups, weights=diff) / np.bincount(groups)
    return float(np.sqrt(np.mean((diff - means[groups]) ** 2)))


def test_fit_weighs_the_order_of_a_group() -> None:
    """Pairs of positions whose targets differ by a fixed amount of equity, while the
    targets' level is off by a drift common to both: the relative loss fits the
    difference within pairs closer than the cross-entropy alone does."""
    boards = collect_positions(SHIPPED, games=4, rng=random.Random(3))[:120]
    x = encode_boards(boards.astype(np.int64))
    start = Network.random(hidden=8, seed=2, scale=0.5)
    base = start.forward(x)
    groups = np.arange(len(x)) // 2
    shift = np.where(np.arange(len(x)) % 2 == 0, 0.08, -0.08)
    drift = np.random.default_rng(1).normal(0.0, 0.15, len(x) // 2)[groups]
    moved = base.copy()
    moved[:, 0] = np.clip(base[:, 0] + shift + drift, 0.01, 0.99)
    targets = moved.astype(np.float32)
    kwargs = {"epochs": 15, "learning_rate": 3e-3, "batch": 16, "validation": 0.0, "seed": 4}
    plain = fit(x, targets, start, **kwargs).network  # type: ignore[arg-type]
    ordered = fit(x, targets, start, groups=groups, relative=5.0, **kwargs).network  # type: ignore[arg-type]
    assert _order_error(ordered, x, targets, groups) < 0.7 * _order_error(plain, x, targets, groups)
    # Groups of one have no order: the fit is the plain one, row for row.
    alone = fit(x, targets, start, groups=np.full(len(x), -1), relative=5.0, **kwargs).network  # type: ignore[arg-type]
    assert alone == plain
    with pytest.raises(ValueError, match="groups"):
        fit(x, targets, start, groups=groups[:-1], relative=1.0)


def test_dataset_round_trip_and_corruption(tmp_path: Path) -> None:
    data = Dataset(
        np.array([list(Position())], dtype=np.int8),
        np.array([[0.5, 0.1, 0.0, 0.1, 0.0]], dtype=np.float32),
        {"plies": 1},
    )
    path = tmp_path / "d.npz"
    save_dataset(data, path)
    back = load_dataset(path)
    assert np.array_equal(back.boards, data.boards)
    assert np.array_equal(back.targets, data.targets)
    assert back.info == {"plies": 1}
    path.write_bytes(b"not a zip")
    with pytest.raises(DatasetError, match=r"d\.npz"):
        load_dataset(path)
    np.savez(
        path,
        format=np.array("nard-dataset-1"),
        boards=np.zeros((2, 26)),
        targets=np.ones((2, 5)) * 2,
        info=np.array("{}"),
    )
    with pytest.raises(DatasetError, match="outside"):
        load_dataset(path)
    with pytest.raises(DatasetError, match=r"missing\.npz"):
        load_dataset(tmp_path / "missing.npz")
    grouped = Dataset(data.boards, data.targets, {}, np.array([7]))
    save_dataset(grouped, path)
    assert load_dataset(path).groups.tolist() == [7]  # type: ignore[union-attr]
    assert load_dataset(tmp_path / "d.npz").groups is not None
    np.savez(
        path,
        format=np.array("nard-dataset-1"),
        boards=np.zeros((2, 26)),
        targets=np.zeros((2, 5)),
        info=np.array("{}"),
        groups=np.zeros(3, dtype=np.int64),
    )
    with pytest.raises(DatasetError, match="groups of shape"):
        load_dataset(path)


def _label_args(*argv: str) -> argparse.Namespace:
    """``nard label``'s arguments, parsed by its own parser."""
    parser = argparse.ArgumentParser()
    add_label_arguments(parser)
    return parser.parse_args(argv)


def test_label_and_fit_commands(tmp_path: Path) -> None:
    weights = tmp_path / "w.npz"
    Network.random(hidden=6, seed=1).save(weights)
    out = io.StringIO()
    dataset = tmp_path / "d.npz"
    args = _label_args(
        str(dataset), "--weights", str(weights), "--games", "2", "--seed", "3",
        "--random-play", "0.1",
    )  # fmt: skip
    assert run_label(args, out) == 0
    assert "positions" in out.getvalue()
    made = load_dataset(dataset)
    same = make_dataset(weights, games=2, plies=1, seed=3, random_play=0.1)
    assert np.array_equal(made.boards, same.boards)
    nets = tmp_path / "nets.npz"
    fit_args = argparse.Namespace(
        weights=str(nets),
        data=[str(dataset)],
        init=str(weights),
        classes=["contact", "race"],
        hidden=(8,),
        epochs=2,
        learning_rate=1e-3,
        batch=64,
        seed=0,
        relative=0.0,
        torch=False,
        device="auto",
    )
    assert run_fit(fit_args, out) == 0
    loaded = Networks.load(nets)
    assert loaded.race is not None
    assert loaded.contact.hidden == 8  # widened from the initial network's 6
    bad = argparse.Namespace(**{**vars(fit_args), "classes": ["backgame"]})
    with pytest.raises(DatasetError, match="backgame"):
        run_fit(bad, out)
    ungrouped = argparse.Namespace(**{**vars(fit_args), "relative": 1.0})
    with pytest.raises(DatasetError, match="groups"):
        run_fit(ungrouped, out)
    with pytest.raises(DatasetError, match="relative"):
        run_fit(argparse.Namespace(**{**vars(fit_args), "relative": -1.0}), out)


CRASHED = Position.from_points({1: 6, 2: 5, 3: 1, 6: 1, 24: 2}, {6: 5, 8: 5, 13: 5})
"""A crashed position: a side down to its last few checkers in play, contact kept."""


def crashed_dataset(tmp_path: Path) -> tuple[Position, Path]:
    """A dataset of :data:`CRASHED`, its mirror (both crashed) and the opening position."""
    boards = np.array([CRASHED, CRASHED.flip(), Position()], dtype=np.int8)
    targets = np.array([[0.2, 0.0, 0.0, 0.5, 0.1]] * 3, dtype=np.float32)
    dataset = tmp_path / "d.npz"
    save_dataset(Dataset(boards, targets, {}), dataset)
    return CRASHED, dataset


def test_fit_crashed_starts_from_the_contact_net(tmp_path: Path) -> None:
    crashed, dataset = crashed_dataset(tmp_path)
    start = tmp_path / "start.npz"
    Networks(Network.random(hidden=6, seed=1), Network.random(hidden=4, seed=2)).save(start)
    nets = tmp_path / "nets.npz"
    args = argparse.Namespace(
        weights=str(nets), data=[str(dataset)], init=str(start), classes=["crashed"],
        hidden=(6,), epochs=3, learning_rate=1e-2, batch=2, seed=0, relative=0.0,
        torch=False, device="auto",
    )  # fmt: skip
    out = io.StringIO()
    assert run_fit(args, out) == 0
    assert "crashed: 2 positions" in out.getvalue()
    before, after = Networks.load(start), Networks.load(nets)
    assert after.contact == before.contact and after.race == before.race  # kept
    assert after.crashed is not None and after.crashed.hidden == 6
    assert after.crashed != before.contact  # trained from the contact net's copy
    ev, base = NeuralEvaluator(after), NeuralEvaluator(before)
    # The crashed net answers for the crashed positions only.
    assert not np.allclose(ev.evaluate([crashed]), base.evaluate([crashed]))
    np.testing.assert_array_equal(ev.evaluate([Position()]), base.evaluate([Position()]))


def test_fit_cube_networks_beside_the_checker_networks(tmp_path: Path) -> None:
    """``--classes cube-contact cube-crashed`` fits the networks the cube analysis reads
    (model card step 18): each starts from a copy of its checker counterpart, the
    checker networks and the pruning network are kept, and a later fit or prune of
    the bundle keeps the cube networks."""
    crashed, dataset = crashed_dataset(tmp_path)
    start = tmp_path / "start.npz"
    pruner = Network.random(hidden=3, seed=4, inputs=RAW_INPUTS)
    Networks(Network.random(hidden=6, seed=1), Network.random(hidden=4, seed=2), None, pruner).save(
        start
    )
    nets = tmp_path / "nets.npz"
    args = argparse.Namespace(
        weights=str(nets), data=[str(dataset)], init=str(start),
        classes=["cube-contact", "cube-crashed"], hidden=(6,), epochs=3, learning_rate=1e-2,
        batch=2, seed=0, relative=0.0, torch=False, device="auto",
    )  # fmt: skip
    out = io.StringIO()
    assert run_fit(args, out) == 0
    assert "cube-contact: 3 positions" in out.getvalue()
    assert "cube-crashed: 2 positions" in out.getvalue()
    before, after = Networks.load(start), Networks.load(nets)
    assert (after.contact, after.race, after.crashed, after.pruning) == (
        before.contact, before.race, None, pruner,
    )  # fmt: skip
    assert after.cube_contact is not None and after.cube_crashed is not None
    assert after.cube_contact != before.contact  # fitted from its copy
    ev = NeuralEvaluator(after)
    np.testing.assert_array_equal(
        ev.evaluate([crashed]), NeuralEvaluator(before).evaluate([crashed])
    )  # play: unchanged
    assert not np.allclose(ev.for_cube().evaluate([crashed]), ev.evaluate([crashed]))
    # Fitting the checker networks again keeps the cube networks.
    again = tmp_path / "again.npz"
    run_fit(argparse.Namespace(**{**vars(args), "weights": str(again), "init": str(nets),
                                  "classes": ["contact"]}), out)  # fmt: skip
    kept = Networks.load(again)
    assert (kept.cube_contact, kept.cube_crashed) == (after.cube_contact, after.cube_crashed)
    # A cube-crashed network alone has no cube-contact one to go with.
    with pytest.raises(DatasetError, match="cube-contact"):
        run_fit(argparse.Namespace(**{**vars(args), "classes": ["cube-crashed"],
                                      "weights": str(tmp_path / "x.npz")}), out)  # fmt: skip


def test_label_command_by_playout(tmp_path: Path) -> None:
    out = io.StringIO()
    dataset = tmp_path / "p.npz"
    args = _label_args(
        str(dataset), "--weights", str(DEFAULT_WEIGHTS), "--games", "2", "--seed", "5",
        "--playout", "0.9",
    )  # fmt: skip
    assert run_label(args, out) == 0
    assert "by playout at lambda 0.9" in out.getvalue()
    made = load_dataset(dataset)
    assert made.info["lam"] == 0.9 and made.info["random_play"] == 0.02
    assert len(made) > 40
    with pytest.raises(DatasetError, match="lambda"):
        run_label(argparse.Namespace(**{**vars(args), "playout": 2.0}), out)
