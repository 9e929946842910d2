"""The input encoding, version 1: layout, hand-checked cases, symmetry and a slow reference."""

from __future__ import annotations

import random

import numpy as np
import numpy.typing as npt

from nard.core.position import Position
from nard.engine.encoding import (
    BAR_INPUT,
    ENCODING_VERSION,
    INPUTS,
    OFF_INPUT,
    OPPONENT_BAR_INPUT,
    OPPONENT_OFF_INPUT,
    OPPONENT_PIPS_INPUT,
    OPPONENT_POINTS,
    PIPS_INPUT,
    RACE_INPUT,
    encode,
    point_units,
    swap_sides,
)


def _units(x: npt.NDArray[np.float32], point: int, opponent: bool = False) -> list[float]:
    start = (OPPONENT_POINTS if opponent else 0) + 4 * (point - 1)
    return [float(v) for v in x[start : start + 4]]


def _reference(position: Position) -> list[float]:
    """The encoding written out one position at a time, from the module docstring."""
    out: list[float] = []
    sides = (position, position.flip())
    for side in sides:
        for point in range(1, 25):
            out += point_units(side.on_roll_at(point))
    for side in sides:
        out += [
            side.on_roll_at(25) / 2,
            side.on_roll_at(0) / 15,
            side.pip_counts()[0] / 167,
        ]
    out.append(float(position.is_race()))
    return out


def _sample(n: int, seed: int) -> list[Position]:
    rng = random.Random(seed)
    position, seen = Position(), list[Position]()
    while len(seen) < n:
        plays = position.legal_plays((rng.randint(1, 6), rng.randint(1, 6)))
        position = rng.choice(plays).result if plays else position.flip()
        seen.append(position)
        if position.is_game_over():
            position = Position()
    return seen


def test_version_and_size() -> None:
    assert ENCODING_VERSION == 1
    assert INPUTS == 199
    assert encode([]).shape == (0, INPUTS)


def test_starting_position() -> None:
    x = encode([Position()])
    assert x.shape == (1, INPUTS)
    assert x.dtype == np.float32
    row = x[0]
    for opponent in (False, True):
        assert _units(row, 6, opponent) == [1.0, 1.0, 1.0, 1.0]  # 5 checkers
        assert _units(row, 8, opponent) == [1.0, 1.0, 1.0, 0.0]  # 3
        assert _units(row, 13, opponent) == [1.0, 1.0, 1.0, 1.0]  # 5
        assert _units(row, 24, opponent) == [1.0, 1.0, 0.0, 0.0]  # 2
        for empty in (1, 2, 3, 4, 5, 7, 9, 10, 11, 12, 14, 20, 23):
            assert _units(row, empty, opponent) == [0.0] * 4
    assert row[[BAR_INPUT, OFF_INPUT, OPPONENT_BAR_INPUT, OPPONENT_OFF_INPUT]].tolist() == [0.0] * 4
    assert row[[PIPS_INPUT, OPPONENT_PIPS_INPUT]].tolist() == [1.0, 1.0]
    assert row[RACE_INPUT] == 0.0
    assert float(row.sum()) == 2 * (4 + 3 + 4 + 2) + 2.0


def test_hand_checked_position() -> None:
    # Side on roll: 7 on its 6-point, 1 on its 1-point, 2 on the bar (10 left, 5 off).
    # Opponent: 1 on its 20-point (our 5-point), 1 on the bar, 13 off.
    pos = Position.from_points({6: 7, 1: 1, 25: 2}, {20: 1, 25: 1})
    row = encode([pos])[0]
    assert _units(row, 6) == [1.0, 1.0, 1.0, 2.0]
    assert _units(row, 1) == [1.0, 0.0, 0.0, 0.0]
    assert _units(row, 20, opponent=True) == [1.0, 0.0, 0.0, 0.0]
    assert _units(row, 5) == [0.0] * 4  # the opponent's checker is not ours
    assert row[BAR_INPUT] == 1.0
    assert row[OFF_INPUT] == np.float32(5 / 15)
    assert row[OPPONENT_BAR_INPUT] == 0.5
    assert row[OPPONENT_OFF_INPUT] == np.float32(13 / 15)
    assert row[PIPS_INPUT] == np.float32((7 * 6 + 1 + 2 * 25) / 167)
    assert row[OPPONENT_PIPS_INPUT] == np.float32((20 + 25) / 167)
    assert row[RACE_INPUT] == 0.0


def test_race_flag() -> None:
    race = Position.from_points({6: 3, 2: 2}, {6: 4})
    contact = Position.from_points({6: 3, 24: 1}, {6: 4})
    x = encode([race, contact])
    assert x[:, RACE_INPUT].tolist() == [1.0, 0.0]


def test_matches_the_reference_and_flips() -> None:
    sample = _sample(600, seed=5)
    x = encode(sample)
    expected = np.array([_reference(p) for p in sample], dtype=np.float32)
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e-6)
    assert np.array_equal(swap_sides(x), encode([p.flip() for p in sample]))
    assert x.min() >= 0.0
    assert x.max() <= 6.0
    assert sorted(set(x[:, RACE_INPUT].tolist())) == [0.0, 1.0]


def test_batch_rows_do_not_depend_on_the_batch() -> None:
    sample = _sample(50, seed=9)
    x = encode(sample)
    assert all(np.array_equal(x[i], encode([p])[0]) for i, p in enumerate(sample))
