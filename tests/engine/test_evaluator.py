"""The evaluator seam: the five probabilities, their flip, equity and game-over values."""

from __future__ import annotations

import random

import numpy as np
import pytest

from nard.core.position import Position
from nard.engine.evaluator import (
    LOSE_BACKGAMMON,
    LOSE_GAMMON,
    WIN,
    WIN_BACKGAMMON,
    WIN_GAMMON,
    Evaluator,
    FakeEvaluator,
    cubeless_equity,
    flip_probabilities,
    outcome_probabilities,
)


def _sample_positions(seed: int, games: int) -> list[Position]:
    """Positions of random games, finished ones included, seen from the side on roll."""
    rng = random.Random(seed)
    out: list[Position] = []
    for _ in range(games):
        pos = Position()
        while True:
            out.append(pos)
            plays = pos.legal_plays((rng.randint(1, 6), rng.randint(1, 6)))
            pos = rng.choice(plays).result if plays else pos.flip()
            if pos.is_game_over():
                out.append(pos)
                break
    return out


def test_column_order_is_gnubgs() -> None:
    assert (WIN, WIN_GAMMON, WIN_BACKGAMMON, LOSE_GAMMON, LOSE_BACKGAMMON) == (0, 1, 2, 3, 4)


@pytest.mark.parametrize(
    ("probs", "equity"),
    [
        ([0.5, 0.0, 0.0, 0.0, 0.0], 0.0),
        ([1.0, 0.0, 0.0, 0.0, 0.0], 1.0),
        ([0.0, 0.0, 0.0, 0.0, 0.0], -1.0),
        ([1.0, 1.0, 0.0, 0.0, 0.0], 2.0),
        ([1.0, 1.0, 1.0, 0.0, 0.0], 3.0),
        ([0.0, 0.0, 0.0, 1.0, 1.0], -3.0),
        # win - lose + wg - lg + wbg - lbg = 0.6 - 0.4 + 0.2 - 0.1 + 0.05 - 0.02
        ([0.6, 0.2, 0.05, 0.1, 0.02], 0.33),
    ],
)
def test_cubeless_equity(probs: list[float], equity: float) -> None:
    assert cubeless_equity(probs) == pytest.approx(equity)
    assert cubeless_equity(np.array([probs, probs])).tolist() == pytest.approx([equity, equity])


def test_flip_is_an_involution_and_negates_equity() -> None:
    probs = np.array([[0.6, 0.2, 0.05, 0.1, 0.02], [0.3, 0.1, 0.0, 0.25, 0.05]])
    flipped = flip_probabilities(probs)
    assert flipped[0].tolist() == pytest.approx([0.4, 0.1, 0.02, 0.2, 0.05])
    assert flip_probabilities(flipped) == pytest.approx(probs)
    assert cubeless_equity(flipped) == pytest.approx(-cubeless_equity(probs))


@pytest.mark.parametrize(
    ("mine", "theirs", "expected"),
    [
        # The opponent (not on roll) bore off its last checker, in the opponent's numbering.
        ({6: 1}, {}, [0, 0, 0, 0, 0]),  # we have 14 off: a single game lost
        ({6: 15}, {}, [0, 0, 0, 1, 0]),  # none off: gammon
        ({20: 1, 6: 14}, {}, [0, 0, 0, 1, 1]),  # a checker in the winner's home: backgammon
        ({25: 1, 6: 14}, {}, [0, 0, 0, 1, 1]),  # on the bar: backgammon
        ({}, {6: 2}, [1, 0, 0, 0, 0]),
        ({}, {24: 1, 1: 14}, [1, 1, 1, 0, 0]),
    ],
)
def test_outcome_probabilities_are_exact(
    mine: dict[int, int], theirs: dict[int, int], expected: list[int]
) -> None:
    pos = Position.from_points(mine, theirs)
    exact = outcome_probabilities(pos)
    assert exact is not None
    assert exact.tolist() == expected
    assert float(cubeless_equity(exact)) == pos.outcome()
    assert FakeEvaluator().evaluate([pos])[0].tolist() == expected


def test_outcome_probabilities_none_while_the_game_goes_on() -> None:
    assert outcome_probabilities(Position()) is None


def test_fake_evaluator_is_a_consistent_deterministic_evaluator() -> None:
    ev = FakeEvaluator()
    assert isinstance(ev, Evaluator)
    positions = _sample_positions(seed=11, games=6)
    probs = ev.evaluate(positions)
    assert probs.shape == (len(positions), 5)
    assert probs.dtype == np.float64
    assert np.all((probs >= 0) & (probs <= 1))
    assert np.all(probs[:, WIN_GAMMON] <= probs[:, WIN] + 1e-12)
    assert np.all(probs[:, LOSE_GAMMON] <= 1 - probs[:, WIN] + 1e-12)
    assert np.all(probs[:, WIN_BACKGAMMON] <= probs[:, WIN_GAMMON])
    assert np.all(probs[:, LOSE_BACKGAMMON] <= probs[:, LOSE_GAMMON])
    assert np.array_equal(probs, ev.evaluate(positions))
    assert ev.evaluate([]).shape == (0, 5)


def test_fake_evaluator_is_symmetric_apart_from_the_tempo() -> None:
    # With no tempo, a position and its flip are the two views of one moment.
    ev = FakeEvaluator(tempo=0.0)
    positions = [p for p in _sample_positions(seed=3, games=2) if not p.is_game_over()]
    probs = ev.evaluate(positions)
    flipped = ev.evaluate([p.flip() for p in positions])
    assert flip_probabilities(flipped) == pytest.approx(probs)


def test_fake_evaluator_prefers_the_race_leader() -> None:
    ev = FakeEvaluator()
    ahead = Position.from_points({6: 5}, {6: 10})
    behind = ahead.flip()
    win_ahead, win_behind = ev.evaluate([ahead, behind])[:, WIN]
    assert win_ahead > 0.5 > win_behind
