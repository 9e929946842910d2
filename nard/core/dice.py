"""Dice: a pair of die faces, validated once at the edge."""

from __future__ import annotations

import re
from collections.abc import Sequence

from nard.core.errors import InvalidDiceError

__all__ = ["ALL_ROLLS", "Dice", "check_dice", "parse_dice"]

Dice = tuple[int, int]
"""Two die faces, each 1-6, in the order rolled (the order never changes a play)."""

ALL_ROLLS: tuple[Dice, ...] = tuple((a, b) for a in range(6, 0, -1) for b in range(a, 0, -1))
"""The 21 distinct rolls, larger die first (6-6, 6-5, ..., 1-1)."""

_DICE_TEXT = re.compile(r"\s*([1-6])\s*[-,/ ]?\s*([1-6])\s*")


def check_dice(dice: Sequence[int]) -> Dice:
    """Return ``dice`` as a validated pair, or raise :class:`InvalidDiceError`.

    >>> check_dice((6, 4))
    (6, 4)
    >>> check_dice((7, 1))
    Traceback (most recent call last):
    ...
    nard.core.errors.InvalidDiceError: invalid dice (7, 1): each die must be 1-6
    """
    try:
        d1, d2 = dice
    except (TypeError, ValueError):
        raise InvalidDiceError(f"invalid dice {dice!r}: expected two dice") from None
    for d in (d1, d2):
        if isinstance(d, bool) or not isinstance(d, int):
            raise InvalidDiceError(f"invalid dice {dice!r}: dice must be integers")
        if not 1 <= d <= 6:
            raise InvalidDiceError(f"invalid dice {dice!r}: each die must be 1-6")
    return (d1, d2)


def parse_dice(text: str) -> Dice:
    """Read dice written as ``64``, ``6-4``, ``6,4`` or ``6 4``.

    >>> parse_dice("6-4")
    (6, 4)
    >>> parse_dice("70")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    nard.core.errors.InvalidDiceError: invalid dice '70': expected two digits 1-6 ...
    """
    m = _DICE_TEXT.fullmatch(text)
    if not m:
        raise InvalidDiceError(
            f"invalid dice {text!r}: expected two digits 1-6 such as '64' or '6-4'"
        )
    return (int(m.group(1)), int(m.group(2)))
