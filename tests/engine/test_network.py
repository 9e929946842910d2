"""The network: forward pass, gradients, weights files and the evaluator around it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nard.core.position import Position
from nard.engine.bearoff import BearoffDatabase
from nard.engine.encoding import ENCODING_VERSION, INPUTS, RAW_INPUTS, encode
from nard.engine.evaluator import (
    LOSE_BACKGAMMON,
    LOSE_GAMMON,
    WIN,
    WIN_BACKGAMMON,
    WIN_GAMMON,
    Evaluator,
    outcome_probabilities,
)
from nard.engine.network import (
    BUNDLE_FORMAT,
    FORMAT,
    Network,
    Networks,
    NeuralEvaluator,
    PruningEvaluator,
    WeightsError,
    sanity_check,
)
from nard.engine.player import EvaluatorPlayer


def test_forward_shape_and_range() -> None:
    net = Network.random(hidden=16, seed=2)
    assert (net.inputs, net.hidden) == (INPUTS, 16)
    positions = [Position(), *(p.result for p in Position().legal_plays((6, 4)))]
    x = encode(positions)
    y = net.forward(x)
    assert y.shape == (len(positions), 5)
    assert y.dtype == np.float64
    assert ((y > 0) & (y < 1)).all()
    # Row i of a batch is the forward pass of position i alone.
    np.testing.assert_allclose(net.forward(x[2:3])[0], y[2], rtol=1e-12)


def test_random_is_repeatable_and_views_share_memory() -> None:
    a, b = Network.random(hidden=4, seed=7), Network.random(hidden=4, seed=7)
    assert a == b
    assert a != Network.random(hidden=4, seed=8)
    a.b1[0] += 1.0  # the views update the layers
    assert a.layer1[-1, 0] == b.layer1[-1, 0] + 1.0
    assert a.copy() == a and a.copy().layer1 is not a.layer1


def test_gradients_match_finite_differences() -> None:
    net = Network.random(hidden=5, seed=3, scale=0.5)
    x = encode([Position.from_points({6: 5, 8: 3, 25: 1}, {13: 4, 24: 2})])[0].astype(np.float64)
    y, d_w1, d_b1, d_w2, d_b2 = net.output_gradients(x)
    np.testing.assert_allclose(y, net.forward(x[None, :])[0], rtol=1e-12)
    eps = 1e-6
    rng = np.random.default_rng(0)
    checks = [
        (net.w1, d_w1, [tuple(i) for i in rng.integers(0, (INPUTS, 5), size=(30, 2))]),
        (net.b1, d_b1, [(j,) for j in range(5)]),
        (net.w2, d_w2, [(j, k) for j in range(5) for k in range(5)]),
        (net.b2, d_b2, [(k,) for k in range(5)]),
    ]
    # Where the input is zero, the w1 gradient is exactly zero: check some nonzero ones too.
    nonzero = np.flatnonzero(x)[:10]
    checks[0][2].extend((int(i), j) for i in nonzero for j in range(2))
    for param, grad, indexes in checks:
        for index in indexes:
            old = param[index]
            param[index] = old + eps
            up = net.forward(x[None, :])[0]
            param[index] = old - eps
            down = net.forward(x[None, :])[0]
            param[index] = old
            numeric = (up - down) / (2 * eps)
            np.testing.assert_allclose(grad[(slice(None), *index)], numeric, atol=1e-8)


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    net = Network.random(hidden=6, seed=1)
    path = tmp_path / "net.npz"
    net.save(path)
    loaded = Network.load(path)
    assert loaded == net
    x = encode([Position()])
    assert np.array_equal(loaded.forward(x), net.forward(x))
    with np.load(path) as data:
        assert str(data["format"]) == FORMAT
        assert int(data["encoding_version"]) == ENCODING_VERSION
        assert (int(data["inputs"]), int(data["hidden"])) == (INPUTS, 6)
    assert [p.name for p in tmp_path.iterdir()] == ["net.npz"]  # no temporary left


def test_missing_weights_name_the_file_and_the_remedy(tmp_path: Path) -> None:
    path = tmp_path / "absent.npz"
    with pytest.raises(WeightsError, match="missing") as info:
        Network.load(path)
    assert str(path) in str(info.value)
    assert "restore" in str(info.value)
    assert "nard train" in str(info.value)


def test_corrupt_weights(tmp_path: Path) -> None:
    path = tmp_path / "bad.npz"
    path.write_bytes(b"not a zip file")
    with pytest.raises(WeightsError, match="corrupt") as info:
        Network.load(path)
    assert str(path) in str(info.value)
    # A truncated file.
    good = tmp_path / "good.npz"
    Network.random(hidden=4).save(good)
    path.write_bytes(good.read_bytes()[:500])
    with pytest.raises(WeightsError, match="corrupt"):
        Network.load(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": np.array("something-else")}, "format"),
        ({"encoding_version": np.array(99)}, "encoding version 99"),
        ({"inputs": np.array(198)}, "198 inputs"),
        ({"hidden": np.array(5)}, "shape"),
        ({"w2": np.full((4, 5), np.nan)}, "non-finite"),
    ],
)
def test_incompatible_weights(tmp_path: Path, change: dict[str, np.ndarray], message: str) -> None:
    arrays: dict[str, Any] = dict(Network.random(hidden=4).to_arrays())
    arrays.update(change)
    path = tmp_path / "odd.npz"
    np.savez(path, **arrays)
    with pytest.raises(WeightsError, match=message):
        Network.load(path)
    missing: dict[str, Any] = {
        k: v for k, v in Network.random(hidden=4).to_arrays().items() if k != "b2"
    }
    np.savez(path, **missing)
    with pytest.raises(WeightsError, match="no array 'b2'"):
        Network.load(path)


def test_neural_evaluator_is_an_evaluator_and_exact_on_finished_games() -> None:
    ev = NeuralEvaluator(Network.random(hidden=8, seed=4))
    assert isinstance(ev, Evaluator)
    finished = [
        Position.from_points({6: 15}, {}),  # gammoned
        Position.from_points({6: 14}, {}),  # lost a single game
        Position.from_points({}, {20: 15}).flip().flip(),  # the side on roll is done
        Position.from_points({6: 10, 25: 1}, {}).flip(),  # it won a backgammon
    ]
    probs = ev.evaluate([Position(), *finished])
    for row, pos in zip(probs[1:], finished, strict=True):
        assert row.tolist() == outcome_probabilities(pos).tolist()  # type: ignore[union-attr]


def _biased(win: float, wg: float, wbg: float, lg: float, lbg: float) -> Network:
    """A network with zero weights whose outputs are the given probabilities."""
    net = Network.random(hidden=2, seed=0)
    net.layer1[:] = 0.0
    net.layer2[:] = 0.0
    p = np.array([win, wg, wbg, lg, lbg])
    net.b2[:] = np.log(p / (1 - p))
    return net


def test_consistency_clamps() -> None:
    ev = NeuralEvaluator(_biased(0.3, 0.5, 0.6, 0.9, 0.95))
    p = ev.evaluate([Position()])[0]
    assert p[WIN] == pytest.approx(0.3)
    assert p[WIN_GAMMON] == pytest.approx(0.3)  # <= win
    assert p[WIN_BACKGAMMON] == pytest.approx(0.3)  # <= win gammon
    assert p[LOSE_GAMMON] == pytest.approx(0.7)  # <= 1 - win
    assert p[LOSE_BACKGAMMON] == pytest.approx(0.7)
    # No gammons once the loser has a checker off; tiny values become 0.
    ev = NeuralEvaluator(_biased(0.5, 0.2, 0.05, 0.2, 0.00005))
    opponent_off = Position.from_points({6: 15}, {6: 14})
    mine_off = Position.from_points({6: 14}, {6: 15})
    p = ev.evaluate([opponent_off, mine_off, Position()])
    assert p[0, [WIN_GAMMON, WIN_BACKGAMMON]].tolist() == [0.0, 0.0]
    assert p[0, LOSE_GAMMON] == pytest.approx(0.2)
    assert p[1, [LOSE_GAMMON, LOSE_BACKGAMMON]].tolist() == [0.0, 0.0]
    assert p[1, WIN_GAMMON] == pytest.approx(0.2)
    assert p[2, LOSE_BACKGAMMON] == 0.0


def test_plays_through_the_evaluator_player(tmp_path: Path) -> None:
    path = tmp_path / "n.npz"
    Network.random(hidden=8, seed=5).save(path)
    player = EvaluatorPlayer(NeuralEvaluator.load(path))
    play = player.choose_play(Position(), (3, 1))
    assert play in Position().legal_plays((3, 1))


# -- the networks by class of position ------------------------------------------------------


def test_networks_bundle_round_trip(tmp_path: Path) -> None:
    nets = Networks(Network.random(hidden=5, seed=1), Network.random(hidden=3, seed=2))
    path = tmp_path / "nets.npz"
    nets.save(path)
    assert Networks.load(path) == nets
    with np.load(path) as data:
        assert str(data["format"]) == BUNDLE_FORMAT
        assert data["classes"].tolist() == ["contact", "race"]
    # A single network's file loads as a set without a race net.
    single = tmp_path / "one.npz"
    nets.contact.save(single)
    assert Networks.load(single) == Networks(nets.contact)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": np.array("other")}, "format 'other'"),
        ({"classes": np.array(["race"])}, "network classes ['race']"),
        ({"race.w1": np.zeros((3, 3))}, "(the race network)"),
        ({"classes": np.array(["contact", "pruning"])}, "(the pruning network)"),
        ({"classes": np.array(["contact", "prune"])}, "'pruning', 'cube-contact', 'cube-crashed']"),
    ],
)
def test_corrupt_bundles(tmp_path: Path, change: dict[str, np.ndarray], message: str) -> None:
    arrays: dict[str, Any] = Networks(
        Network.random(hidden=2, seed=1), Network.random(hidden=2, seed=2)
    ).to_arrays()
    arrays.update(change)
    path = tmp_path / "nets.npz"
    np.savez(path, **arrays)
    with pytest.raises(WeightsError) as err:
        Networks.load(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)


PRUNER = Network.random(hidden=3, seed=4, inputs=RAW_INPUTS)


def test_bundle_with_a_pruning_network(tmp_path: Path) -> None:
    nets = Networks(Network.random(hidden=5, seed=1), pruning=PRUNER)
    path = tmp_path / "nets.npz"
    nets.save(path)
    loaded = Networks.load(path)
    assert loaded == nets and loaded.pruning == PRUNER
    assert list(loaded.by_class()) == ["contact"]  # not a class of positions
    assert "pruning=" in repr(loaded)
    assert Networks(nets.contact) != nets
    with pytest.raises(ValueError, match="raw inputs"):
        Networks(nets.contact, pruning=Network.random(hidden=3))
    with pytest.raises(ValueError, match="raw inputs"):
        PruningEvaluator(Network.random(hidden=3))
    # Its raw-input file is refused as a network of positions.
    PRUNER.save(tmp_path / "pruner.npz")
    with pytest.raises(WeightsError, match=f"{RAW_INPUTS} inputs"):
        Networks.load(tmp_path / "pruner.npz")


def test_bundle_with_cube_networks(tmp_path: Path) -> None:
    """Cube networks ride in the bundle beside the checker networks; the cube reads
    them for contact and crashed positions and the race net as it is."""
    contact, race, crashed = (Network.random(hidden=4, seed=k) for k in (1, 2, 3))
    cube_contact, cube_crashed = Network.random(hidden=5, seed=4), Network.random(hidden=6, seed=5)
    nets = Networks(contact, race, crashed, PRUNER, cube_contact, cube_crashed)
    path = tmp_path / "nets.npz"
    nets.save(path)
    loaded = Networks.load(path)
    assert loaded == nets and loaded != Networks(contact, race, crashed, PRUNER)
    with np.load(path) as data:
        assert data["classes"].tolist()[-2:] == ["cube-contact", "cube-crashed"]
    cube = loaded.for_cube()
    assert (cube.contact, cube.race, cube.crashed, cube.pruning) == (
        cube_contact,
        race,
        cube_crashed,
        None,
    )
    assert "cube_contact=" in repr(loaded)
    evaluator = NeuralEvaluator(loaded)
    assert evaluator.for_cube() is evaluator.for_cube()  # made once
    assert NeuralEvaluator(Networks(contact)).for_cube().networks.contact is contact
    middle = Position.from_position_id("4DvgATDgc/ABMA")
    race_position = Position.from_points({6: 3, 5: 2, 2: 2}, {6: 3, 5: 3, 1: 1})
    assert not np.allclose(evaluator.evaluate([middle]), evaluator.for_cube().evaluate([middle]))
    assert np.allclose(
        evaluator.evaluate([race_position]), evaluator.for_cube().evaluate([race_position])
    )
    # A cube crashed network alone is refused, in memory and in a file.
    with pytest.raises(ValueError, match="cube contact"):
        Networks(contact, cube_crashed=cube_crashed)
    arrays: dict[str, Any] = nets.to_arrays()
    arrays["classes"] = np.array(["contact", "race", "crashed", "cube-crashed"])
    np.savez(tmp_path / "odd.npz", **arrays)
    with pytest.raises(WeightsError, match="without a cube-contact"):
        Networks.load(tmp_path / "odd.npz")


def test_pruning_evaluator_is_the_network_on_the_raw_inputs() -> None:
    positions = [Position(), Position.from_points({6: 2, 25: 1}, {20: 2}), Position().flip()]
    x = encode(positions)[:, :RAW_INPUTS]
    probs = PruningEvaluator(PRUNER).evaluate(positions)
    np.testing.assert_allclose(probs, sanity_check(PRUNER.forward(x), x), rtol=1e-5)
    won = Position.from_points({}, {6: 3})
    assert PruningEvaluator(PRUNER).evaluate([won]).tolist() == [[1.0, 0.0, 0.0, 0.0, 0.0]]


def test_evaluator_dispatches_by_class() -> None:
    contact, race = Network.random(hidden=4, seed=1), Network.random(hidden=4, seed=2)
    race_position = Position.from_points({6: 5, 8: 5, 12: 5}, {6: 5, 8: 5, 12: 5})
    positions = [Position(), race_position, Position().flip()]
    x = encode(positions)
    both = NeuralEvaluator(Networks(contact, race)).evaluate(positions)
    # The evaluator computes in float32.
    expect_contact = sanity_check(contact.forward(x[[0, 2]]), x[[0, 2]])
    np.testing.assert_allclose(both[[0, 2]], expect_contact, rtol=1e-5)
    np.testing.assert_allclose(both[1], sanity_check(race.forward(x[1:2]), x[1:2])[0], rtol=1e-5)
    # Without a race net the contact net evaluates races too.
    alone = NeuralEvaluator(contact).evaluate(positions)
    np.testing.assert_allclose(alone, sanity_check(contact.forward(x), x), rtol=1e-5)


def test_evaluator_uses_the_bearoff_database_for_pure_bearoffs() -> None:
    db = BearoffDatabase.load()
    bearoff = Position.from_points({1: 2, 3: 4}, {2: 3, 6: 1})
    not_quite = Position.from_points({1: 2, 7: 1}, {2: 3, 6: 1})
    ev = NeuralEvaluator(Network.random(hidden=4, seed=3), db)
    probs = ev.evaluate([bearoff, not_quite])
    assert probs[0].tolist() == list(db.probabilities(bearoff))
    assert probs[1].tolist() != list(db.probabilities(Position.from_points({1: 2}, {2: 3})))
    # Without the database the network evaluates it.
    raw = NeuralEvaluator(Network.random(hidden=4, seed=3)).evaluate([bearoff])
    assert raw[0].tolist() != probs[0].tolist()
