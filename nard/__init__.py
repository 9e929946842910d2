"""nard: an open backgammon system.

>>> import nard
>>> nard.Position().position_id()
'4HPwATDgc/ABMA'
"""

from __future__ import annotations

from nard.core import (
    ALL_ROLLS,
    BAR,
    CHECKERS,
    OFF,
    STARTING,
    Dice,
    IllegalPlayError,
    InvalidDiceError,
    InvalidMatchIdError,
    InvalidMatchStateError,
    InvalidNotationError,
    InvalidPositionError,
    InvalidPositionIdError,
    InvalidRecordError,
    InvalidXgidError,
    Move,
    NardError,
    Play,
    Position,
    check_dice,
    parse_dice,
)

__version__ = "0.1.0"

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
    "__version__",
    "check_dice",
    "parse_dice",
]
