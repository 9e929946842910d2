"""The exceptions nard raises.

Every error is a :class:`NardError`; the ones caused by bad input (text, IDs,
numbers) are also :class:`ValueError` so that ordinary ``except ValueError``
code catches them. Messages quote the offending input with ``!r`` and, where a
position is involved, name its Position ID.
"""

from __future__ import annotations

__all__ = [
    "IllegalPlayError",
    "InvalidDiceError",
    "InvalidMatchIdError",
    "InvalidMatchStateError",
    "InvalidNotationError",
    "InvalidPositionError",
    "InvalidPositionIdError",
    "InvalidRecordError",
    "InvalidXgidError",
    "NardError",
]


class NardError(Exception):
    """Base class of every error raised by nard."""


class InvalidPositionError(NardError, ValueError):
    """A board that cannot occur: too many checkers, both sides on one point..."""


class InvalidDiceError(NardError, ValueError):
    """Dice outside 1-6, or not a pair."""


class InvalidNotationError(NardError, ValueError):
    """Text that cannot be read as a play (syntax, not legality)."""


class IllegalPlayError(NardError, ValueError):
    """A well-formed play that the rules do not allow in the position."""


class InvalidPositionIdError(InvalidNotationError):
    """A malformed GNU Backgammon Position ID."""


class InvalidMatchIdError(InvalidNotationError):
    """A malformed GNU Backgammon Match ID."""


class InvalidMatchStateError(NardError, ValueError):
    """A match state that cannot occur: a score past the match length, a die of 7..."""


class InvalidRecordError(InvalidNotationError):
    """A match record file (.mat, SGF, nard's JSON) that cannot be read: the message
    names the line or game and action, and the problem."""


class InvalidXgidError(InvalidNotationError):
    """A malformed eXtreme Gammon XGID."""
