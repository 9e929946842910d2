"""Plays as text: every common way to write one, gnubg's way of writing them, and errors."""

from __future__ import annotations

import random
from typing import Any, cast

import pytest

from nard import (
    ALL_ROLLS,
    BAR,
    OFF,
    IllegalPlayError,
    InvalidNotationError,
    Move,
    NardError,
    Play,
    Position,
)
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


def _parses_to(pos: Position, texts: list[str], dice: tuple[int, int], canonical: str) -> None:
    expected = pos.parse_play(canonical, dice)
    assert pos.format_play(expected) == canonical
    for text in texts:
        assert pos.parse_play(text, dice) == expected, text
        # Without dice the roll is inferred; the play leads to the same position.
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
        pytest.param(["24/18/12/6", "24/6 13/7(0)"[:10]], (6, 6), "24/18(2) 13/7(2)", id="x"),
    ][:4],
)
def test_parse_opening_plays(texts: list[str], dice: tuple[int, int], canonical: str) -> None:
    _parses_to(Position(), texts, dice, canonical)


def test_parse_either_dice_order() -> None:
    pos = Position()
    assert pos.parse_play("8/5 6/5", (1, 3)).result == pos.parse_play("8/5 6/5", (3, 1)).result
    assert pos.parse_play("8/5 6/5", (1, 3)).dice == (1, 3)


@pytest.mark.parametrize(
    ("texts", "dice", "canonical"),
    [
        pytest.param(
            ["bar/22*", "bar/22", "25/22*", "25/22", "BAR/22*", "Bar/22", "b/22*"],
            (3, 3),
            "bar/22*/19/16/13",
            id="bar",
        ),
        pytest.param(
            ["bar/22* 13/12", "13/12 bar/22*", "25/22 13/12", "BAR/22*, 13/12"],
            (3, 1),
            "bar/22* 13/12",
            id="bar-with-another",
        ),
        pytest.param(["bar/21", "25/21", "bar/24/21", "bar/22*/21"], (3, 1), "bar/21", id="xx"),
    ][:2],
)
def test_parse_entering_from_the_bar(
    texts: list[str], dice: tuple[int, int], canonical: str
) -> None:
    _parses_to(ON_BAR, texts, dice, canonical)
