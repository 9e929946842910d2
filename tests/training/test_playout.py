"""Labels from played-out games: turns recorded, luck-corrected outcomes, datasets."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nard.core.position import Position
from nard.engine.engine import DEFAULT_WEIGHTS
from nard.engine.evaluator import FakeEvaluator, flip_probabilities
from nard.engine.network import NeuralEvaluator
from nard.engine.search import evaluate_ply_boards
from nard.training.dataset import DatasetError
from nard.training.playout import (
    PlayedGames,
    load_games,
    play_games,
    playout_dataset,
    save_games,
)


@pytest.fixture(scope="module")
def played_games() -> PlayedGames:
    return play_games(NeuralEvaluator.load(DEFAULT_WEIGHTS), 6, seed=3, random_play=0.1, batch=4)


def _games_of(played: PlayedGames) -> list[range]:
    ends = np.flatnonzero(played.last) + 1
    starts = np.concatenate([[0], ends[:-1]])
    return [range(int(a), int(b)) for a, b in zip(starts, ends, strict=True)]


def test_turns_follow_each_other_and_games_end(played_games: PlayedGames) -> None:
    games = _games_of(played_games)
    assert len(games) == 6 and games[-1].stop == len(played_games)
    for game in games:
        assert tuple(played_games.boards[game.start]) == tuple(Position())
        assert played_games.random[game.start]  # the opening roll is not a normal roll
        for t in game:
            assert not Position(tuple(int(c) for c in played_games.boards[t])).is_game_over()
        # The last play ended the game: its value is the exact outcome.
        final = played_games.chosen[game.stop - 1]
        assert set(np.round(final, 6).tolist()) <= {0.0, 1.0} and final[0] == 1.0


def test_baseline_is_the_one_ply_evaluation(played_games: PlayedGames) -> None:
    rows = [t for t in range(len(played_games)) if not played_games.random[t]][:40]
    boards = played_games.boards[rows].astype(np.int64)
    expected = evaluate_ply_boards(boards, NeuralEvaluator.load(DEFAULT_WEIGHTS), 1)
    assert np.allclose(played_games.baseline[rows], expected, atol=1e-6)


def test_games_are_seeded() -> None:
    race = Position.from_points({6: 3, 8: 4, 12: 2}, {6: 4, 9: 3, 11: 2})
    a = play_games(FakeEvaluator(), 3, seed=9, batch=2, start=race)
    b = play_games(FakeEvaluator(), 3, seed=9, batch=2, start=race)
    c = play_games(FakeEvaluator(), 3, seed=10, batch=2, start=race)
    assert np.array_equal(a.boards, b.boards) and np.array_equal(a.chosen, b.chosen)
    assert not np.array_equal(a.boards[:10], c.boards[:10])


def test_endless_games_are_left_out() -> None:
    played = play_games(FakeEvaluator(), 2, seed=3, max_turns=30)
    assert len(played) == 0 or played.last.sum() == 2


def test_lam_zero_is_the_baseline(played_games: PlayedGames) -> None:
    assert np.allclose(played_games.labels(0.0), np.clip(played_games.baseline, 0, 1))


def _flip_difference(d: np.ndarray) -> np.ndarray:
    """A difference of probabilities seen from the other side (flip without the 1 - w)."""
    return np.array([-d[0], d[3], d[4], d[1], d[2]])


def test_lam_one_is_the_outcome_less_the_luck(played_games: PlayedGames) -> None:
    """Y_t at lam 1, summed forwards: the label where the chain stops (the game's last
    turn, or a random play), less every turn's (chosen - baseline) on the way, each
    seen from t's side."""
    labels = played_games.labels(1.0)
    for game in _games_of(played_games):
        for t in game:
            if played_games.random[t] or played_games.last[t]:
                assert np.allclose(labels[t], played_games.baseline[t], atol=1e-6)
                continue
            stop = next(
                u for u in range(t + 1, game.stop) if played_games.random[u] or played_games.last[u]
            )
            end = played_games.baseline[stop].astype(np.float64)
            total = end if (stop - t) % 2 == 0 else flip_probabilities(end)
            for u in range(t, stop):
                luck = played_games.chosen[u].astype(np.float64) - played_games.baseline[u]
                total = total - (luck if (u - t) % 2 == 0 else _flip_difference(luck))
            assert np.allclose(labels[t], np.clip(total, 0, 1), atol=1e-5), (t, game)


def test_lam_must_be_a_weight(played_games: PlayedGames) -> None:
    with pytest.raises(ValueError, match="lam"):
        played_games.labels(1.5)


def test_exact_evaluations_leave_nothing_to_correct() -> None:
    """In a pure bear-off the database is exact, so every label is its own baseline,
    whatever lam: the corrections are the evaluator's errors, not the dice's luck."""
    start = Position.from_points({6: 2, 5: 2, 3: 1}, {6: 2, 4: 2, 1: 1})
    evaluator = NeuralEvaluator.load(DEFAULT_WEIGHTS)
    played = play_games(evaluator, 20, seed=2, start=start, random_play=0.0)
    assert not played.random.any() and played.last.sum() == 20
    assert np.abs(played.labels(1.0) - played.labels(0.0)).max() < 0.01


def test_dataset_leaves_out_openings_and_bearoffs(played_games: PlayedGames) -> None:
    dataset = playout_dataset(played_games, 0.8)
    assert dataset.info["labels"] == "playout" and dataset.info["lam"] == 0.8
    assert not (dataset.boards == np.array(Position(), dtype=np.int8)).all(axis=1).any()
    assert 0 < len(dataset) < len(played_games)
    assert dataset.targets.min() >= 0.0 and dataset.targets.max() <= 1.0


def test_games_file_round_trip(played_games: PlayedGames, tmp_path: Path) -> None:
    path = tmp_path / "games.npz"
    save_games(played_games, path)
    again = load_games(path)
    assert np.array_equal(again.boards, played_games.boards)
    assert np.array_equal(again.last, played_games.last)
    assert np.allclose(again.labels(0.9), played_games.labels(0.9))


def test_a_corrupt_games_file_is_named(played_games: PlayedGames, tmp_path: Path) -> None:
    path = tmp_path / "cut.npz"
    save_games(played_games, path)
    with np.load(path) as arrays:
        parts = {k: arrays[k] for k in arrays.files}
    parts["last"] = parts["last"][:-1]
    np.savez(path, **parts)
    with pytest.raises(DatasetError, match=r"cut\.npz.*shapes"):
        load_games(path)
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(DatasetError, match=r"junk\.npz"):
        load_games(tmp_path / "junk.npz")
