"""The input encoding, version 3: layout, hand-checked cases, symmetry and a slow reference."""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from nard.core.position import Position
from nard.engine.encoding import (
    BAR_INPUT,
    ENCODING_VERSION,
    FEATURE_INPUT,
    FEATURES,
    INPUTS,
    OFF_INPUT,
    OPPONENT_BAR_INPUT,
    OPPONENT_FEATURE_INPUT,
    OPPONENT_OFF_INPUT,
    OPPONENT_PIPS_INPUT,
    OPPONENT_POINTS,
    PIPS_INPUT,
    RACE_INPUT,
    crashed_flags,
    encode,
    point_units,
    side_features,
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
    for side in sides:
        out += _reference_features(side)
    return out


def _reference_features(side: Position) -> list[float]:
    """The side on roll's features, written out from the module docstring."""
    mine = [side.on_roll_at(i) if i else 0 for i in range(26)]  # index 25: the bar
    theirs = [0] + [side.opponent_at(25 - i) for i in range(1, 25)] + [0]
    their_bar = side.opponent_at(25)
    back = max((i for i in range(26) if mine[i]), default=0)
    their_back = 0 if their_bar else min((i for i in range(1, 25) if theirs[i]), default=26)
    break_contact = sum(mine[i] * (i - their_back) for i in range(26) if i > their_back)
    free_pips = sum(mine[i] * i for i in range(26) if i <= their_back)

    def open_(i: int) -> bool:
        return 1 <= i <= 24 and theirs[i] < 2

    def blot(i: int) -> bool:
        return 1 <= i <= 24 and theirs[i] == 1

    hits = 0
    for a in range(1, 7):
        for b in range(1, 7):
            hit = False
            for s in (i for i in range(1, 26) if mine[i]):
                if a == b:
                    at = s
                    for _ in range(4):
                        at -= a
                        if blot(at):
                            hit = True
                        if not open_(at):
                            break
                else:
                    hit |= blot(s - a) or blot(s - b)
                    hit |= blot(s - a - b) and (open_(s - a) or open_(s - b))
            hits += hit
    made = [1 <= i <= 24 and mine[i] >= 2 for i in range(26)]
    prime = run = 0
    for i in range(1, 25):
        run = run + 1 if made[i] else 0
        prime = max(prime, run)
    their_home = sum(theirs[i] >= 2 for i in range(19, 25))
    ahead = sum(theirs[i] >= 2 for i in range(max(back - 12, 1), back))

    def whole_rolls(blocked: Callable[[int], bool]) -> int:
        """Rolls a lone checker moves whole, ``blocked(d)``: the point d pips ahead."""
        count = 0
        for a in range(1, 7):
            for b in range(1, 7):
                if a == b:
                    count += not any(blocked(a * k) for k in range(1, 5))
                else:
                    count += (not blocked(a) or not blocked(b)) and not blocked(a + b)
        return count

    back_escapes = (
        whole_rolls(lambda d: d <= 12 and back - d >= 1 and theirs[back - d] >= 2) / 36
        if back
        else 1.0
    )

    def held(i: int) -> Callable[[int], bool]:
        return lambda d: d <= 12 and i + d <= 24 and mine[i + d] >= 2

    fewest = min(whole_rolls(held(i)) for i in range(1, 11))
    return [
        back / 25,
        break_contact / 152,
        free_pips / 167,
        hits / 36,
        prime / 6,
        sum(made[1:7]) / 6,
        (their_home / 6) ** 2 if mine[25] else 0.0,
        ahead / 12,
        back_escapes,
        1 - fewest / 36,
    ]


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
    assert ENCODING_VERSION == 3
    assert INPUTS == 199 + 2 * len(FEATURES) == 219
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
    raw = row[:FEATURE_INPUT]
    assert float(raw.sum()) == 2 * (4 + 3 + 4 + 2) + 2.0
    mine = row[FEATURE_INPUT:OPPONENT_FEATURE_INPUT]
    assert mine.tolist() == row[OPPONENT_FEATURE_INPUT:].tolist()  # a symmetric position
    features = dict(zip(FEATURES, mine.tolist(), strict=True))
    assert features["back"] == np.float32(24 / 25)
    assert features["break_contact"] == 1.0  # all 152 pips are behind the 24-point pair
    assert features["hit_rolls"] == 0.0  # no blots
    assert features["prime"] == np.float32(1 / 6)
    assert features["blocked_ahead"] == 0.25  # the 13-, 17- (their 8) and 19-point


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


def _crashed_reference(position: Position) -> bool:
    """A side has at most 6 checkers in play: bar, points 3-24, one of each of its
    1- and 2-points (the crashed_flags docstring), in a contact position."""
    if position.is_race():
        return False
    for side in (position, position.flip()):
        mine = {p: max(side[p], 0) for p in range(1, 26)}
        active = sum(mine[p] for p in range(3, 26)) + min(mine[1], 1) + min(mine[2], 1)
        if active <= 6:
            return True
    return False


def test_crashed_flags_match_the_reference_and_flips() -> None:
    sample = _sample(600, seed=6)
    flags = crashed_flags(np.array(sample)).tolist()
    assert flags == [_crashed_reference(p) for p in sample]
    assert flags == crashed_flags(np.array([p.flip() for p in sample])).tolist()
    assert 0 < sum(flags) < len(sample)
    # Six checkers in play against a full side: crashed; seven: not.
    six = Position.from_points({1: 6, 2: 5, 5: 2, 24: 2}, {6: 5, 8: 5, 13: 5})
    seven = Position.from_points({1: 6, 2: 4, 5: 3, 24: 2}, {6: 5, 8: 5, 13: 5})
    assert crashed_flags(np.array([six, seven])).tolist() == [True, False]


def test_matches_the_reference_and_flips() -> None:
    sample = _sample(600, seed=5)
    x = encode(sample)
    expected = np.array([_reference(p) for p in sample], dtype=np.float32)
    np.testing.assert_allclose(x, expected, rtol=0, atol=1e-6)
    assert np.array_equal(swap_sides(x), encode([p.flip() for p in sample]))
    assert x.min() >= 0.0
    assert x.max() <= 6.0
    assert sorted(set(x[:, RACE_INPUT].tolist())) == [0.0, 1.0]


def test_features_on_the_bar() -> None:
    # The side on roll is on the bar against a 4-point board with a blot on its 5-point.
    pos = Position.from_points({25: 1, 6: 5, 8: 3}, {1: 2, 2: 2, 3: 2, 4: 2, 20: 1, 13: 3})
    f = dict(zip(FEATURES, side_features(np.array([pos]))[0].tolist(), strict=True))
    assert f["back"] == 1.0
    assert f["enter_fail"] == np.float32((4 / 6) ** 2)
    assert f["home_points"] == np.float32(1 / 6)


def test_escapes_and_containment() -> None:
    # The side's back checkers behind a full prime right in front of them (the
    # opponent's points 2-7): they cannot move any roll whole. The prime holds them.
    primed = Position.from_points({24: 2, 6: 13}, {2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2, 13: 3})
    f = dict(zip(FEATURES, side_features(np.array([primed]))[0].tolist(), strict=True))
    assert f["back_escapes"] == 0.0
    theirs = side_features(np.array([primed.flip()]))[0]
    assert theirs[FEATURES.index("containment")] == 1.0
    # Nothing in front of a lone back checker: every roll moves it whole.
    free = Position.from_points({24: 1}, {24: 1})
    assert side_features(np.array([free]))[0][FEATURES.index("back_escapes")] == 1.0
    # A 5-prime right in front: only 6-6 and 6-x (6 to the open 6th point, then on).
    five = Position.from_points({24: 1}, {2: 2, 3: 2, 4: 2, 5: 2, 6: 2})
    assert side_features(np.array([five]))[0][FEATURES.index("back_escapes")] == np.float32(11 / 36)


def test_hit_rolls_agree_with_the_move_generator() -> None:
    """hit_rolls counts the rolls with a hitting play; it ignores only the rule that
    both dice must be played, so it agrees with the legal plays almost always."""
    sample = [p for p in _sample(400, seed=11) if p[25] == 0]
    hit_rolls = side_features(np.array(sample))[:, FEATURES.index("hit_rolls")]
    agree = 0
    for position, share in zip(sample, hit_rolls.tolist(), strict=True):
        opponent_bar = -position[0]
        hits = sum(
            any(play.result[25] > opponent_bar for play in position.legal_plays((a, b)))
            for a in range(1, 7)
            for b in range(1, 7)
        )
        assert abs(hits / 36 - share) < 0.2
        agree += abs(hits / 36 - share) < 1e-6
    assert agree >= 0.97 * len(sample)


def test_batch_rows_do_not_depend_on_the_batch() -> None:
    sample = _sample(50, seed=9)
    x = encode(sample)
    assert all(np.array_equal(x[i], encode([p])[0]) for i, p in enumerate(sample))
