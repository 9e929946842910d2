"""Plays as text: every common way to write one, gnubg's way of writing them, and errors."""

from __future__ import annotations

import random
from typing import Any

import pytest

from nard import BAR, OFF, IllegalPlayError, InvalidNotationError, Move, NardError, Position
from nard.core.play_text import format_moves, point_name
from tests.core.helpers import position
from tests.samples import random_game_positions, varied_samples

START_ID = "4HPwATDgc/ABMA"
# The mover has a checker on the bar; the opponent a blot on the mover's 22-point.
ON_BAR = position({BAR: 1, 13: 5, 8: 4, 6: 5}, {22: 1, 1: 14})
# Seed 000's bear-off: every home point holds two or more.
BEAR_OFF = position({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {24: 15})
# The opponent has a blot on the mover's 11-point.
BLOT_ON_11 = position({13: 2}, {11: 1, 24: 14})
# The opponent has blots on the mover's 11- and 12-points.
TWO_BLOTS = position({13: 1}, {11: 1, 12: 1, 24: 13})


def _assert_all_parse_to(
    pos: Position, texts: list[str], dice: tuple[int, int], canonical: str
) -> None:
    expected = pos.parse_play(canonical, dice)
    assert pos.format_play(expected) == canonical
    assert expected in pos.legal_plays(dice)
    for text in texts:
        assert pos.parse_play(text, dice) == expected, text
        # Without dice the roll is inferred; the text still names one position.
        assert pos.parse_play(text).result == expected.result, text


# -- reading ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("texts", "dice", "canonical"),
    [
        pytest.param(
            ["24/13", "24/18/13", "24/18 18/13", "18/13 24/18", "24-18-13", "24/18,18/13"],
            (6, 5),
            "24/13",
            id="combined-or-split",
        ),
        pytest.param(
            ["8/5 6/5", "6/5 8/5", "8/5, 6/5", "8/5,6/5", "  8/5   6/5  ", "8-5 6-5"],
            (3, 1),
            "8/5 6/5",
            id="either-order-commas",
        ),
        pytest.param(
            [
                "24/18(2) 13/7(2)",
                "13/7(2) 24/18(2)",
                "24/18 24/18 13/7 13/7",
                "13/7 24/18 13/7 24/18",
                "24/18(2), 13/7(2)",
                "24/18(2) 13/7 13/7",
            ],
            (6, 6),
            "24/18(2) 13/7(2)",
            id="doubles-repeat-count",
        ),
        pytest.param(["13/7(4)", "13/7 13/7 13/7 13/7"], (6, 6), "13/7(4)", id="four-alike"),
    ],
)
def test_parse_opening_plays(texts: list[str], dice: tuple[int, int], canonical: str) -> None:
    _assert_all_parse_to(Position(), texts, dice, canonical)


@pytest.mark.parametrize(
    ("pos", "texts", "dice", "canonical"),
    [
        pytest.param(
            ON_BAR,
            [
                "bar/22* 13/12",
                "bar/22 13/12",
                "25/22* 13/12",
                "25/22 13/12",
                "BAR/22* 13/12",
                "Bar/22, 13/12",
                "b/22* 13/12",
                "13/12 bar/22*",
            ],
            (3, 1),
            "bar/22* 13/12",
            id="bar",
        ),
        pytest.param(
            ON_BAR, ["bar/21", "25/21", "bar/24/21", "25/24 24/21"], (3, 1), "bar/21", id="b24"
        ),
        pytest.param(
            ON_BAR, ["bar/22*/21", "bar/22/21", "25/22* 22/21"], (3, 1), "bar/22*/21", id="b22"
        ),
        pytest.param(
            BEAR_OFF,
            ["6/off 4/off", "4/off 6/off", "6/0 4/0", "6/OFF 4/Off", "6/o 4/o", "6/off, 4/off"],
            (6, 4),
            "6/off 4/off",
            id="off",
        ),
        pytest.param(
            BEAR_OFF, ["6/2 6/off", "6/off 6/2", "6/0, 6/2"], (6, 4), "6/2 6/off", id="off-in"
        ),
        pytest.param(
            BLOT_ON_11,
            ["13/11*/10", "13/11/10", "13/11* 11/10", "11/10 13/11*"],
            (2, 1),
            "13/11*/10",
            id="hit-on-the-way",
        ),
        pytest.param(
            BLOT_ON_11, ["13/10", "13/12/10", "13/12 12/10"], (2, 1), "13/10", id="no-hit"
        ),
        pytest.param(
            BLOT_ON_11,
            ["13/12 13/11*", "13/11* 13/12", "13/11 13/12", "13/12, 13/11"],
            (2, 1),
            "13/12 13/11*",
            id="hit-star-optional",
        ),
        pytest.param(
            TWO_BLOTS,
            ["13/11*/10", "13/11/10", "13/11* 11/10"],
            (2, 1),
            "13/11*/10",
            id="one-of-two-blots",
        ),
    ],
)
def test_parse_bar_off_and_hits(
    pos: Position, texts: list[str], dice: tuple[int, int], canonical: str
) -> None:
    _assert_all_parse_to(pos, texts, dice, canonical)


def test_parse_either_dice_order() -> None:
    pos = Position()
    assert pos.parse_play("8/5 6/5", (1, 3)).result == pos.parse_play("8/5 6/5", (3, 1)).result
    assert pos.parse_play("8/5 6/5", (1, 3)) == pos.parse_play("8/5 6/5", (3, 1))
    assert pos.parse_play("8/5 6/5", (1, 3)).dice == (3, 1)  # larger die first
    assert pos.parse_play("8/5 6/5").dice == (3, 1)


def test_parse_then_apply() -> None:
    pos = Position()
    play = pos.parse_play("24/18 13/8", (6, 5))
    assert pos.apply(play) == play.result
    assert play.result.flip() == Position.from_points(
        {24: 1, 18: 1, 13: 4, 8: 4, 6: 5}, {24: 2, 13: 5, 8: 3, 6: 5}
    )


# -- writing ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("moves", "text"),
    [
        ([Move(24, 18, True), Move(18, 13), Move(6, 5)], "24/18*/13 6/5"),
        ([Move(8, 5), Move(6, 5)], "8/5 6/5"),
        ([Move(6, 5), Move(8, 5)], "8/5 6/5"),
        ([Move(13, 7), Move(24, 18), Move(13, 7), Move(24, 18)], "24/18(2) 13/7(2)"),
        ([Move(13, 7), Move(7, 1)], "13/1"),
        ([Move(BAR, 22, True), Move(13, 12)], "bar/22* 13/12"),
        ([Move(BAR, 22), Move(BAR, 22), Move(BAR, 22)], "bar/22(3)"),
        ([Move(6, OFF), Move(4, OFF)], "6/off 4/off"),
        ([Move(6, OFF), Move(6, OFF)], "6/off(2)"),
        ([Move(6, 2), Move(6, OFF)], "6/2 6/off"),
    ],
)
def test_format_moves(moves: list[Move], text: str) -> None:
    assert format_moves(moves) == text


def test_point_names() -> None:
    assert [point_name(p) for p in (BAR, 24, 7, 1, OFF)] == ["bar", "24", "7", "1", "off"]


def _round_trip(pos: Position) -> int:
    """Check parse(format(play)) == play for every play of every roll; return the count."""
    checked = 0
    for d1 in range(1, 7):
        for d2 in range(1, d1 + 1):
            for play in pos.legal_plays((d1, d2)):
                text = pos.format_play(play)
                assert pos.parse_play(text, play.dice) == play, (pos.position_id(), text)
                checked += 1
    return checked


def test_format_parse_round_trip_opening() -> None:
    assert _round_trip(Position()) == 447


def test_format_parse_round_trip_varied_samples() -> None:
    checked = 0
    for _, pos, dice in varied_samples(20261202, 6):
        for play in pos.legal_plays(dice):
            text = pos.format_play(play)
            assert pos.parse_play(text, dice) == play, (pos.position_id(), dice, text)
            checked += 1
    assert checked > 500


def test_format_parse_round_trip_random_games() -> None:
    rng = random.Random(7)
    checked = 0
    for pos in random_game_positions(rng, 2):
        dice = (rng.randint(1, 6), rng.randint(1, 6))
        for play in pos.legal_plays(dice):
            text = pos.format_play(play)
            assert pos.parse_play(text, dice) == play, (pos.position_id(), dice, text)
            checked += 1
    assert checked > 1500


# -- errors -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "hello",
        "24",
        "24/",
        "/13",
        "13/24",
        "24/24",
        "24/13x",
        "26/20",
        "100/7",
        "6/bar",
        "bar/bar",
        "off/5",
        "0/5",
        "6/off*",
        "13*/7",
        "13/7(5)",
        "13/7(0)",
        "13/7(3) 8/2 6/1",
        "13/7(2)(2)",
        "13//7",
        "13/7/",
        "24/18;13/8",
        "13/7(2",
        "13/7 (2)",
    ],
)
def test_malformed_text_raises_invalid_notation_error(text: str) -> None:
    pos = Position()
    for dice in ((6, 5), None):
        with pytest.raises(InvalidNotationError) as info:
            pos.parse_play(text, dice)
        message = str(info.value)
        assert repr(text) in message
        assert START_ID in message
        assert isinstance(info.value, ValueError)
        assert isinstance(info.value, NardError)


@pytest.mark.parametrize("text", [None, 24, b"24/13"], ids=repr)
def test_text_that_is_not_a_string_raises_invalid_notation_error(text: Any) -> None:
    with pytest.raises(InvalidNotationError) as info:
        Position().parse_play(text, (6, 5))
    assert repr(text) in str(info.value)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("24/20", "the dice 6-5 (one move of each die) cannot make those moves"),
        ("24/13 24/13", "cannot make those moves"),
        ("13/7", "it plays 1 of the dice but 2 can be played and must be"),
        ("6/off", "bearing off needs all 15 checkers in the home board"),
        ("bar/20", "there is no checker of the side on roll on bar"),
        ("7/1 6/1", "there is no checker of the side on roll on 7"),
        ("24/18 24/19", "point 19 is blocked"),
        ("8/2 6/1", "point 1 is blocked"),
    ],
)
def test_illegal_play_raises_illegal_play_error(text: str, reason: str) -> None:
    with pytest.raises(IllegalPlayError) as info:
        Position().parse_play(text, (6, 5))
    message = str(info.value)
    assert repr(text) in message
    assert "6-5" in message
    assert START_ID in message
    assert reason in message
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("24/12", "no roll allows it"),
        ("6/off", "no roll allows it"),
        ("24/23", "it leaves dice unplayed that must be played"),
    ],
)
def test_illegal_play_without_dice(text: str, reason: str) -> None:
    with pytest.raises(IllegalPlayError) as info:
        Position().parse_play(text)
    message = str(info.value)
    assert repr(text) in message
    assert START_ID in message
    assert reason in message


def test_ambiguous_play_raises_invalid_notation_error_naming_the_options() -> None:
    pid = TWO_BLOTS.position_id()
    for text in ("13/10", "13/10*"):
        with pytest.raises(InvalidNotationError, match="ambiguous") as info:
            TWO_BLOTS.parse_play(text, (2, 1))
        message = str(info.value)
        assert repr(text) in message
        assert pid in message
        assert "13/11*/10, 13/12*/10" in message
        with pytest.raises(InvalidNotationError, match="give the dice"):
            TWO_BLOTS.parse_play(text)
    assert TWO_BLOTS.format_play(TWO_BLOTS.parse_play("13/12*/10", (2, 1))) == "13/12*/10"
