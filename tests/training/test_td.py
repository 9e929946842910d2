"""TD(lambda) self-play: targets, updates, checkpoints, resuming and the benchmark log."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from nard.core.position import Position
from nard.engine.encoding import encode
from nard.engine.network import Network, WeightsError
from nard.training.cli import main
from nard.training.td import (
    TDTrainer,
    TrainConfig,
    TrainingError,
    benchmark_vs_pubeval,
    load_checkpoint,
    log_path,
    train,
)

TINY = TrainConfig(
    hidden=8, seed=3, checkpoint_every=4, benchmark_every=8, benchmark_games=2, lam=0.7
)


def _x(position: Position) -> npt.NDArray[np.float64]:
    x: npt.NDArray[np.float64] = encode([position])[0].astype(np.float64)
    return x


@pytest.mark.parametrize(
    ("opponent", "points", "target"),
    [
        ({20: 15}, 3, [1.0, 1.0, 1.0, 0.0, 0.0]),  # the loser is in the winner's home board
        ({13: 15}, 2, [1.0, 1.0, 0.0, 0.0, 0.0]),  # nothing off: a gammon
        ({13: 14}, 1, [1.0, 0.0, 0.0, 0.0, 0.0]),  # one checker off: a single game
    ],
)
def test_the_winning_play_gets_the_real_outcome(
    opponent: dict[int, int], points: int, target: list[float]
) -> None:
    one_to_go = Position.from_points({1: 1}, opponent)
    trainer = TDTrainer(Network.random(hidden=8, seed=1), 0.1, 0.0, random.Random(0))
    got, after, _, finished = trainer._choose(one_to_go, (6, 5), _x(one_to_go))
    assert finished
    assert got.tolist() == target
    assert -after.outcome() == points
    # A whole game from there: one turn, won, and the net moved toward the outcome.
    before = trainer.network.forward(_x(one_to_go)[None, :])[0]
    assert trainer.play_game(start=one_to_go) == points
    moved = trainer.network.forward(_x(one_to_go)[None, :])[0]
    assert np.all(np.sign(moved - before) == np.sign(np.array(target) - before))
    assert trainer.plies == 1


def test_the_mover_always_takes_a_winning_play() -> None:
    # 6-1 can bear off both checkers (a gammon) or play 6/5/off and leave one; a net with
    # wild weights may rate going on above 2 points, but a win now is taken.
    pos = Position.from_points({6: 1, 1: 1}, {13: 15})
    assert len(pos.legal_plays((6, 1))) > 1
    for seed in range(10):
        net = Network.random(hidden=8, seed=seed, scale=5.0)
        trainer = TDTrainer(net, 0.1, 0.0, random.Random(0))
        _, after, _, finished = trainer._choose(pos, (6, 1), _x(pos))
        assert finished and after.outcome() == -2


@pytest.mark.parametrize("flipped", [False, True])
def test_a_first_trace_step_is_the_td0_update(flipped: bool) -> None:
    # With fresh traces one step of TD(lambda) is TD(0)'s, whichever player moves.
    net = Network.random(hidden=6, seed=4, scale=0.5)
    ref = net.copy()
    x = _x(Position.from_points({6: 5, 8: 3, 25: 1}, {13: 4, 24: 2}))
    xa, ha = np.append(x, 1.0), np.ones(7)
    y, h, g, d = net.output_deltas(x)
    ha[:-1] = h
    delta = np.array([0.3, -0.1, 0.05, 0.2, -0.02]) - y * 0.1
    traces = (np.zeros((5, *net.layer1.shape)), np.zeros((5, *net.layer2.shape)))
    TDTrainer(net, 0.1, 0.5, random.Random(0))._trace_step(traces, xa, ha, g, d, delta, flipped)
    ref.layer1 += np.outer(xa, 0.1 * (delta @ d))
    ref.layer2 += np.outer(ha, 0.1 * (delta * g))
    np.testing.assert_allclose(net.layer1, ref.layer1, rtol=0, atol=1e-15)
    np.testing.assert_allclose(net.layer2, ref.layer2, rtol=0, atol=1e-15)


def _figures(checkpoint: Path) -> list[tuple[int, float, float]]:
    lines = log_path(checkpoint).read_text().splitlines()
    return [(e["games"], e["ppg"], e["ci95"]) for e in map(json.loads, lines)]


def test_resuming_ends_where_an_uninterrupted_run_does(tmp_path: Path) -> None:
    whole = tmp_path / "whole" / "td.npz"
    summary = train(TINY, whole, games=16)
    assert (summary.games, summary.session_games) == (16, 16)
    assert summary.games_per_second > 0

    parts = tmp_path / "parts" / "td.npz"
    seen: list[int] = []
    train(TINY, parts, games=10, progress=lambda p: seen.append(p.games))
    assert seen == list(range(1, 11))
    assert load_checkpoint(parts)[1] == 10
    resumed = train(TINY, parts, games=16)
    assert (resumed.games, resumed.session_games) == (16, 6)

    a, games_a, rng_a, config_a = load_checkpoint(whole)
    b, games_b, rng_b, _ = load_checkpoint(parts)
    assert a == b
    assert games_a == games_b == 16
    assert rng_a.getstate() == rng_b.getstate()
    assert config_a["hidden"] == 8
    assert _figures(whole) == _figures(parts)
    assert [g for g, _, _ in _figures(whole)] == [8, 16]
    assert Network.load(whole) == a  # a checkpoint is a weights file too
    assert train(TINY, whole, games=16).session_games == 0  # nothing left to do


def test_a_crash_between_checkpoints_is_replayed_exactly(tmp_path: Path) -> None:
    config = TrainConfig(
        hidden=8, seed=5, lam=0.0, checkpoint_every=3, benchmark_every=2, benchmark_games=2
    )
    whole = tmp_path / "a.npz"
    train(config, whole, games=6)
    crashed = tmp_path / "b.npz"
    train(config, crashed, games=3)
    # The crashed session had logged games 4 before dying; that figure is measured again.
    with log_path(crashed).open("a") as f:
        f.write(json.dumps({"games": 4, "ppg": 99.0, "ci95": 0.0}) + "\n")
    train(config, crashed, games=6)
    assert load_checkpoint(crashed)[0] == load_checkpoint(whole)[0]
    assert _figures(crashed) == _figures(whole)


def test_checkpoint_errors(tmp_path: Path) -> None:
    path = tmp_path / "td.npz"
    train(TINY, path, games=1)
    with pytest.raises(TrainingError, match="8 hidden units"):
        train(TrainConfig(hidden=9, seed=3), path, games=2)
    with pytest.raises(TrainingError, match="seed"):
        train(TrainConfig(hidden=8, seed=4), path, games=2)
    weights = tmp_path / "weights.npz"
    Network.random(hidden=8).save(weights)
    with pytest.raises(TrainingError, match="no nard-td-checkpoint-1"):
        train(TINY, weights, games=2)
    path.write_bytes(b"garbage")
    with pytest.raises(WeightsError, match="corrupt"):
        train(TINY, path, games=2)


def test_benchmark_plays_duplicate_pairs() -> None:
    net = Network.random(hidden=4, seed=1)
    result = benchmark_vs_pubeval(net, games=3, seed=1)
    assert result.games == 4
    assert -3.0 <= result.ppg <= 3.0
    assert result == benchmark_vs_pubeval(net, games=3, seed=1)


def test_config_is_checked() -> None:
    with pytest.raises(ValueError, match="lam"):
        TrainConfig(lam=1.5)
    with pytest.raises(ValueError, match="hidden"):
        TrainConfig(hidden=0)


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cli.npz"
    assert main([str(path), "--games", "2", "--hidden", "4", "--benchmark-every", "0"]) == 0
    assert "2 games" in capsys.readouterr().err
    assert load_checkpoint(path)[1] == 2
    assert main([str(path), "--games", "3", "--hidden", "5"]) == 2
    assert "hidden units" in capsys.readouterr().err
