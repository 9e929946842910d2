"""Rollout labels: luck-corrected trials from each position, truncated and averaged
(``nard.training.rollout``; the trials themselves are ``nard.engine.rollout``'s)."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import numpy as np
import pytest

from nard.core.position import Position
from nard.engine.bearoff import bearoff_rows
from nard.engine.encoding import crashed_flags, race_flags
from nard.engine.engine import DEFAULT_WEIGHTS
from nard.engine.evaluator import FakeEvaluator, cubeless_equity, flip_probabilities
from nard.engine.network import NeuralEvaluator
from nard.engine.rollout import consistent
from nard.engine.search import evaluate_ply_boards
from nard.training.cli import add_label_arguments, run_label
from nard.training.dataset import DatasetError, load_dataset
from nard.training.rollout import (
    rollout_dataset,
    rollout_labels,
    rollout_positions,
    sibling_plays,
)

MIDDLE_GAME = Position.from_points(
    {24: 2, 13: 4, 8: 3, 6: 5, 5: 1}, {24: 1, 23: 1, 13: 5, 8: 2, 6: 4, 4: 2}
)


@pytest.fixture(scope="module")
def evaluator() -> NeuralEvaluator:
    return NeuralEvaluator.load(DEFAULT_WEIGHTS)


def _boards(*positions: Position) -> np.ndarray:
    return np.array([list(p) for p in positions], dtype=np.int64)


def test_no_turn_played_is_the_one_ply_evaluation(evaluator: NeuralEvaluator) -> None:
    boards = _boards(MIDDLE_GAME, Position(), MIDDLE_GAME.flip())
    labels = rollout_labels(evaluator, boards, trials=3, truncate=0, seed=1)
    assert np.allclose(labels, evaluate_ply_boards(boards, evaluator, 1), atol=1e-6)


def test_one_turn_is_the_roll_played_less_its_luck(evaluator: NeuralEvaluator) -> None:
    """A trial cut after one turn: the 1-ply baseline, plus how far the 1-ply value of
    the position reached differs from the 0-ply value of the play that reached it."""
    boards = _boards(MIDDLE_GAME)
    label = rollout_labels(evaluator, boards, trials=1, truncate=1, seed=4)[0]
    from nard.core.dice import ALL_ROLLS
    from nard.engine.rollout import group_seed, quasi_random_dice

    roll = ALL_ROLLS[int(quasi_random_dice(group_seed(4, 0), 0, 1, 1)[0, 0])]
    plays = MIDDLE_GAME.legal_plays(roll)
    values = evaluate_ply_boards(_boards(*(p.result for p in plays)), evaluator, 0)
    best = int(np.argmin(cubeless_equity(values)))  # the reply worst for the opponent
    reached = _boards(plays[best].result)
    expected = (
        evaluate_ply_boards(boards, evaluator, 1)[0]
        + flip_probabilities(evaluate_ply_boards(reached, evaluator, 1))[0]
        - flip_probabilities(values[best : best + 1])[0]
    )
    assert np.allclose(label, consistent(expected[None])[0], atol=1e-5)


def test_labels_are_seeded_and_the_trials_vary(evaluator: NeuralEvaluator) -> None:
    boards = _boards(MIDDLE_GAME, MIDDLE_GAME)
    a = rollout_labels(evaluator, boards, trials=2, truncate=4, seed=7)
    b = rollout_labels(evaluator, boards, trials=2, truncate=4, seed=7)
    assert np.array_equal(a, b)
    assert not np.allclose(a[0], a[1])  # the same position, other dice


def test_exact_evaluations_leave_nothing_to_correct(evaluator: NeuralEvaluator) -> None:
    """In pure bear-offs the database is (nearly) exact: whatever the dice, each trial
    lands on the position's own value, so even one trial played to the end is it."""
    starts = [
        Position.from_points({6: 2, 5: 2, 3: 1}, {6: 2, 4: 2, 1: 1}),
        Position.from_points({6: 3, 4: 3, 2: 2}, {5: 3, 3: 2, 1: 3}),
    ]
    boards = _boards(*starts)
    assert bearoff_rows(boards).all()
    labels = rollout_labels(evaluator, boards, trials=1, truncate=40, seed=2)
    exact = evaluate_ply_boards(boards, evaluator, 0)
    assert np.abs(labels - exact).max() < 0.01


def test_a_finished_game_stops_the_trial() -> None:
    """The side on roll bears off its last two checkers with any roll: the label is the
    exact win, however long the trials may run."""
    boards = _boards(Position.from_points({1: 2}, {6: 5, 5: 5}))
    label = rollout_labels(FakeEvaluator(), boards, trials=5, truncate=10, seed=1)
    assert label.tolist() == [[1.0, 0.0, 0.0, 0.0, 0.0]]


def test_a_finished_position_is_its_outcome(evaluator: NeuralEvaluator) -> None:
    lost = Position.from_points({6: 15}, {})  # the opponent has borne off: a gammon
    boards = _boards(lost, MIDDLE_GAME)
    labels = rollout_labels(evaluator, boards, trials=2, truncate=2, seed=1)
    assert labels[0].tolist() == [0.0, 0.0, 0.0, 1.0, 0.0]
    assert np.array_equal(labels[1], rollout_labels(evaluator, boards[1:], 2, 2, seed=1)[0])


def test_a_group_rolls_out_on_common_dice(evaluator: NeuralEvaluator) -> None:
    """Rows of one group throw the same dice: the same board twice in a group gets the
    same label, in two groups two labels; and two boards of a group keep their own
    labels however the rows around them are grouped."""
    other = MIDDLE_GAME.flip()
    boards = _boards(MIDDLE_GAME, MIDDLE_GAME, other, other)
    shared = rollout_labels(
        evaluator, boards, trials=2, truncate=3, seed=5, groups=np.array([0, 0, 1, 1])
    )
    apart = rollout_labels(evaluator, boards, trials=2, truncate=3, seed=5)
    assert np.allclose(shared[0], shared[1], atol=1e-6)  # batch rounding only
    assert np.allclose(shared[2], shared[3], atol=1e-6)
    assert not np.allclose(apart[0], apart[1])
    alone = rollout_labels(
        evaluator, boards[:2], trials=2, truncate=3, seed=5, groups=np.array([7, 7])
    )
    assert np.allclose(alone, shared[:2], atol=1e-6)  # the first group seen takes the first dice
    with pytest.raises(ValueError, match="groups"):
        rollout_labels(evaluator, boards, trials=2, groups=np.array([0, 1]))


def test_common_dice_make_the_differences_quieter(evaluator: NeuralEvaluator) -> None:
    """The point of common dice: the labels of two candidate plays of one roll differ
    by less noise (spread over seeds) than when each throws its own dice, for most
    pairs. (Counted pair by pair: the pooled spread is ruled by a few wild pairs,
    and over samples of this size it ranged from 0.63 to 1.0 of the other.)"""
    starts = rollout_positions(evaluator, games=3, seed=78, share=0.3)
    kids, parents = sibling_plays(evaluator, starts, plays=2, window=0.1, seed=3)
    assert len(kids) >= 40 and (parents[0::2] == parents[1::2]).all()
    spread = {}
    for common in (True, False):
        diffs = []
        for seed in range(6):
            y = rollout_labels(evaluator, kids, 1, 6, seed=seed, groups=parents if common else None)
            equity = cubeless_equity(y.astype(np.float64))
            diffs.append(equity[0::2] - equity[1::2])
        spread[common] = np.std(diffs, axis=0)
    # With no effect about half the pairs would be quieter: 0.65 of ~29 pairs is
    # 1.6 standard deviations above that (the shipped nets give 0.79, C's 0.72).
    assert (spread[True] < spread[False]).mean() >= 0.65


def test_sibling_plays_are_the_best_plays_of_one_roll(evaluator: NeuralEvaluator) -> None:
    parents = _boards(MIDDLE_GAME, Position(), MIDDLE_GAME.flip())
    kids, rows = sibling_plays(evaluator, parents, plays=3, window=0.1, seed=9)
    assert len(kids) >= 4 and set(rows.tolist()) <= {0, 1, 2}
    for row in set(rows.tolist()):
        mine = kids[rows == row].astype(np.int64)
        assert 2 <= len(mine) <= 3
        parent = Position(tuple(int(x) for x in parents[row]))
        for roll in {(a, b) for a in range(1, 7) for b in range(a, 7)}:
            results = {tuple(p.result) for p in parent.legal_plays(roll)}
            if all(tuple(int(x) for x in m) in results for m in mine):
                break
        else:
            pytest.fail("the sibling plays are not the plays of one roll")
        values = -cubeless_equity(evaluate_ply_boards(mine, evaluator, 0))
        assert values[0] == values.max() and values.max() - values.min() <= 0.1 + 1e-6
    with pytest.raises(ValueError, match="plays"):
        sibling_plays(evaluator, parents, plays=1, window=0.1, seed=1)
    none, _ = sibling_plays(evaluator, parents, plays=3, window=0.1, seed=9)
    assert np.array_equal(none, kids)  # seeded


def test_positions_and_dataset(evaluator: NeuralEvaluator) -> None:
    boards = rollout_positions(evaluator, games=2, seed=3 * 1_000_003, share=0.5)  # chunk 0
    assert 10 < len(boards) < 100
    assert not bearoff_rows(boards.astype(np.int64)).any()
    assert not (boards.astype(np.int64) == _boards(Position())).all(axis=1).any()
    dataset = rollout_dataset(DEFAULT_WEIGHTS, games=2, trials=2, truncate=2, share=0.5, seed=3)
    assert np.array_equal(dataset.boards, boards)
    assert dataset.info["labels"] == "rollout" and dataset.info["trials"] == 2
    with pytest.raises(ValueError, match="share"):
        rollout_dataset(DEFAULT_WEIGHTS, games=1, share=0.0)
    with pytest.raises(ValueError, match="trials"):
        rollout_labels(evaluator, boards, trials=0)


def _label_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_label_arguments(parser)
    return parser.parse_args(argv)


def test_label_command_by_rollout(tmp_path: Path) -> None:
    out = io.StringIO()
    path = tmp_path / "r.npz"
    args = _label_args(
        str(path), "--weights", str(DEFAULT_WEIGHTS), "--games", "2", "--seed", "5",
        "--rollout", "2", "--truncate", "3", "--share", "0.2",
    )  # fmt: skip
    assert run_label(args, out) == 0
    assert "by rollouts of 2 trials cut at 3 turns" in out.getvalue()
    made = load_dataset(path)
    assert made.info["truncate"] == 3 and made.info["share"] == 0.2 and len(made) > 3
    with pytest.raises(DatasetError, match="give one"):
        run_label(argparse.Namespace(**{**vars(args), "playout": 0.7}), out)
    with pytest.raises(DatasetError, match="share"):
        run_label(argparse.Namespace(**{**vars(args), "share": 1.5}), out)


def test_label_command_by_sibling_rollouts(tmp_path: Path) -> None:
    out = io.StringIO()
    path = tmp_path / "s.npz"
    args = _label_args(
        str(path), "--weights", str(DEFAULT_WEIGHTS), "--games", "1", "--seed", "5",
        "--rollout", "2", "--truncate", "2", "--share", "0.3", "--siblings", "3",
    )  # fmt: skip
    assert run_label(args, out) == 0
    assert "3 sibling plays on common dice" in out.getvalue()
    made = load_dataset(path)
    assert made.info["siblings"] == 3 and made.info["window"] == 0.12 and len(made) >= 2
    assert made.groups is not None and len(made.groups) == len(made)
    sizes = np.bincount(made.groups)
    assert set(sizes[sizes > 0].tolist()) <= {2, 3}
    assert (np.diff(made.groups) >= 0).all()  # a group's plays side by side
    with pytest.raises(DatasetError, match="siblings"):
        run_label(argparse.Namespace(**{**vars(args), "siblings": 1}), out)
    with pytest.raises(DatasetError, match="--siblings goes with --rollout"):
        run_label(argparse.Namespace(**{**vars(args), "rollout": None}), out)
    with pytest.raises(ValueError, match="siblings"):
        rollout_dataset(DEFAULT_WEIGHTS, games=1, siblings=1)


def test_label_command_by_rollouts_of_the_doubling_window(tmp_path: Path) -> None:
    """``--win-range`` keeps the positions where the side on roll's 0-ply winning
    chance is in the range: the doubling window, where the cube is decided."""
    out = io.StringIO()
    path = tmp_path / "w.npz"
    args = _label_args(
        str(path), "--weights", str(DEFAULT_WEIGHTS), "--games", "2", "--seed", "5",
        "--rollout", "1", "--truncate", "1", "--share", "1", "--win-range", "0.6", "0.9",
    )  # fmt: skip
    assert run_label(args, out) == 0
    made = load_dataset(path)
    assert made.info["win_range"] == [0.6, 0.9] and len(made) > 0
    wins = NeuralEvaluator.load(DEFAULT_WEIGHTS).evaluate_boards(made.boards.astype(np.int64))
    assert ((wins[:, 0] >= 0.6) & (wins[:, 0] <= 0.9)).all()
    whole = tmp_path / "all.npz"
    args_all = argparse.Namespace(**{**vars(args), "dataset": str(whole), "win_range": None})
    assert run_label(args_all, out) == 0
    assert len(load_dataset(whole)) > len(made)  # the same games, fewer positions kept
    with pytest.raises(DatasetError, match="--win-range takes LOW HIGH"):
        run_label(argparse.Namespace(**{**vars(args), "win_range": [0.9, 0.6]}), out)
    with pytest.raises(DatasetError, match="--win-range goes with --rollout"):
        run_label(argparse.Namespace(**{**vars(args), "rollout": None}), out)
    with pytest.raises(ValueError, match="win_range"):
        rollout_dataset(DEFAULT_WEIGHTS, games=1, win_range=(0.5, 1.5))


def test_label_command_by_rollouts_of_crashed_positions(tmp_path: Path) -> None:
    """``--crashed`` keeps the crashed positions (a side with at most 6 checkers in
    play), the class whose net errors cost the cube most (docs/engine.md)."""
    out = io.StringIO()
    path = tmp_path / "c.npz"
    args = _label_args(
        str(path), "--weights", str(DEFAULT_WEIGHTS), "--games", "4", "--seed", "5",
        "--rollout", "1", "--truncate", "1", "--share", "1", "--crashed",
    )  # fmt: skip
    assert run_label(args, out) == 0
    made = load_dataset(path)
    assert made.info["crashed"] is True and len(made) > 0
    assert crashed_flags(made.boards.astype(np.int64)).all()
    with pytest.raises(DatasetError, match="--crashed goes with --rollout"):
        run_label(argparse.Namespace(**{**vars(args), "rollout": None}), out)


def test_label_command_by_rollouts_of_positions_with_checkers_off(tmp_path: Path) -> None:
    """``--min-off N`` keeps the contact positions where a side has borne off at least
    N checkers: the net overrates that side (docs/engine.md, the cube's take errors)."""
    out = io.StringIO()
    path = tmp_path / "o.npz"
    args = _label_args(
        str(path), "--weights", str(DEFAULT_WEIGHTS), "--games", "8", "--seed", "5",
        "--rollout", "1", "--truncate", "1", "--share", "1", "--min-off", "7",
    )  # fmt: skip
    assert run_label(args, out) == 0
    made = load_dataset(path)
    assert made.info["min_off"] == 7 and len(made) > 0
    boards = made.boards.astype(np.int64)
    in_play = np.minimum(np.clip(boards, 0, None).sum(1), np.clip(-boards, 0, None).sum(1))
    assert (15 - in_play >= 7).all() and not race_flags(boards).any()
    with pytest.raises(DatasetError, match="--min-off goes with --rollout"):
        run_label(argparse.Namespace(**{**vars(args), "rollout": None}), out)
    with pytest.raises(DatasetError, match="--min-off takes 0 to 14"):
        run_label(argparse.Namespace(**{**vars(args), "min_off": 15}), out)
