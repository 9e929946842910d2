"""The rules of backgammon: positions, dice, legal plays and their notation.

Pure Python with no I/O; everything else in nard builds on this package.
"""

from __future__ import annotations

from nard.core.dice import ALL_ROLLS, Dice, check_dice, parse_dice
from nard.core.errors import (
    IllegalPlayError,
    InvalidDiceError,
    InvalidMatchIdError,
    InvalidMatchStateError,
    InvalidNotationError,
    InvalidPositionError,
    InvalidPositionIdError,
    InvalidRecordError,
    InvalidXgidError,
    NardError,
)
from nard.core.position import BAR, CHECKERS, OFF, STARTING, Move, Play, Position

__all__ = [
    "ALL_ROLLS",
    "BAR",
    "CHECKERS",
    "OFF",
    "STARTING",
    "Dice",
    "IllegalPlayError",
    "InvalidDiceError",
    "InvalidMatchIdError",
    "InvalidMatchStateError",
    "InvalidNotationError",
    "InvalidPositionError",
    "InvalidPositionIdError",
    "InvalidRecordError",
    "InvalidXgidError",
    "Move",
    "NardError",
    "Play",
    "Position",
    "check_dice",
    "parse_dice",
]
