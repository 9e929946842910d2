"""The position: an immutable board seen from the side on roll, and its plays."""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from nard.core import _movegen
from nard.core.dice import Dice, check_dice
from nard.core.errors import IllegalPlayError, InvalidPositionError
from nard.core.position_id import (
    STARTING_BOARD,
    board_from_position_id,
    board_to_position_id,
)

__all__ = ["BAR", "CHECKERS", "OFF", "STARTING", "Move", "Play", "Position"]

CHECKERS = 15
"""Checkers per side."""
BAR = 25
"""The bar, as a point number: a checker there is 25 pips from home."""
OFF = 0
"""Borne off, as a point number."""


class Move(NamedTuple):
    """One checker moved by one die, in the mover's point numbers (25 = bar, 0 = off)."""

    from_point: int
    to_point: int
    hit: bool = False


class Play(tuple[Any, ...]):
    """A legal play: the position it leads to, reached by ``moves`` with ``dice``.

    Two plays are equal when they lead to the same position with the same roll,
    however their moves were written. ``result`` is seen from the opponent, who
    is on roll after the play; ``dice`` has the larger die first. Immutable
    (a tuple underneath, so that generating thousands of them stays cheap).
    """

    __slots__ = ()

    def __new__(
        cls, result: Position, dice: Sequence[int], moves: Iterable[tuple[int, int, bool]]
    ) -> Play:
        d1, d2 = check_dice(dice)
        raw = tuple((int(m[0]), int(m[1]), bool(m[2])) for m in moves)
        return _new_tuple(cls, (result, (max(d1, d2), min(d1, d2)), raw))

    @property
    def result(self) -> Position:
        """The position after the play, seen from the opponent (now on roll)."""
        return self[0]  # type: ignore[no-any-return]

    @property
    def dice(self) -> Dice:
        """The roll, larger die first."""
        return self[1]  # type: ignore[no-any-return]

    @property
    def moves(self) -> tuple[Move, ...]:
        """The single-die moves, in an order in which they can be played."""
        return tuple([Move(*m) for m in self[2]])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Play):
            return NotImplemented
        return bool(self[0] == other[0] and self[1] == other[1])

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, Play):
            return NotImplemented
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash((self[0], self[1]))

    def __repr__(self) -> str:
        return f"Play(result={self.result!r}, dice={self.dice!r}, moves={self.moves!r})"

    def __reduce__(self) -> tuple[type[Play], tuple[Any, ...]]:
        # For pickle (a play sent to or from another process): the tuple's own
        # arguments do not fit __new__'s.
        return (Play, (self[0], self[1], self[2]))


_new_tuple = tuple.__new__
_negative = operator.neg


class Position(tuple[int, ...]):
    """A backgammon position seen from the side on roll.

    A position is its ``board``, a 26-tuple: index 1-24 are the points of the
    side on roll (positive counts: its checkers; negative: the opponent's), 25
    its bar and 0 the opponent's bar (a count <= 0). Borne-off checkers are
    implicit. Being a tuple, it is immutable and hashable, and cheap to create
    by the thousand during move generation.

    >>> pos = Position()
    >>> pos.position_id()
    '4HPwATDgc/ABMA'
    >>> pos.pip_counts()
    (167, 167)
    >>> sorted(pos.format_play(p) for p in pos.legal_plays((3, 1)))[:3]
    ['13/10 6/5', '13/10 8/7', '13/9']
    """

    __slots__ = ()

    def __new__(cls, board: Iterable[int] | None = None) -> Position:
        if board is None:
            return _new_tuple(cls, STARTING_BOARD)
        b = tuple(board)
        _validate(b)
        return _new_tuple(cls, b)

    @classmethod
    def _trusted(cls, board: Iterable[int]) -> Position:
        """Wrap a board already known to be valid (no checks: internal use)."""
        return _new_tuple(cls, board)

    # -- construction -----------------------------------------------------
    @classmethod
    def from_points(cls, on_roll: Mapping[int, int], opponent: Mapping[int, int]) -> Position:
        """Build a position from each side's checkers, each in its *own* point numbers.

        Keys are points 1-24 or ``BAR`` (25); checkers not listed are borne off.

        >>> Position.from_points({6: 2, 25: 1}, {1: 1}).pip_counts()
        (37, 1)
        """
        board = [0] * 26
        for side, checkers in ((1, on_roll), (-1, opponent)):
            for point, count in checkers.items():
                if isinstance(point, bool) or not isinstance(point, int) or not 1 <= point <= 25:
                    raise InvalidPositionError(
                        f"invalid point {point!r}: points are 1-24, or 25 for the bar"
                    )
                if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                    raise InvalidPositionError(f"invalid checker count {count!r} on point {point}")
                index = point if side == 1 else 0 if point == BAR else 25 - point
                if count and board[index] and (board[index] > 0) != (side > 0):
                    raise InvalidPositionError(
                        f"both sides have checkers on point {point} (opponent's numbering)"
                        if side < 0
                        else f"both sides have checkers on point {point}"
                    )
                board[index] += side * count
        return cls(board)

    @classmethod
    def from_position_id(cls, position_id: str) -> Position:
        """Decode a GNU Backgammon Position ID (see :mod:`nard.core.position_id`).

        >>> Position.from_position_id("4HPwATDgc/ABMA") == Position()
        True
        """
        return cls._trusted(board_from_position_id(position_id))

    # -- views ------------------------------------------------------------
    @property
    def board(self) -> tuple[int, ...]:
        """The raw 26-tuple (see the class docstring): the position itself."""
        return self

    def position_id(self) -> str:
        """The GNU Backgammon Position ID of this position, side on roll encoded as gnubg does."""
        return board_to_position_id(self)

    def on_roll_at(self, point: int) -> int:
        """Checkers of the side on roll on its own ``point`` (25 = bar, 0 = borne off)."""
        _check_point(point)
        if point == OFF:
            return CHECKERS - sum(c for c in self if c > 0)
        return max(self[point], 0)

    def opponent_at(self, point: int) -> int:
        """Checkers of the opponent on *its own* ``point`` (25 = bar, 0 = borne off)."""
        _check_point(point)
        if point == OFF:
            return CHECKERS + sum(c for c in self if c < 0)
        return max(-self[25 - point], 0)

    def pip_counts(self) -> tuple[int, int]:
        """(side on roll, opponent): pips each needs to bear off all its checkers."""
        b = self
        mine = sum(p * b[p] for p in range(1, 26) if b[p] > 0)
        theirs = -sum((25 - i) * b[i] for i in range(0, 25) if b[i] < 0)
        return mine, theirs

    def flip(self) -> Position:
        """The same position seen from the other side.

        >>> Position().flip() == Position()
        True
        """
        return _new_tuple(Position, map(_negative, self[::-1]))

    def is_race(self) -> bool:
        """True when no contact is left: every checker has passed all the opponent's."""
        b = self
        back = next((p for p in range(25, 0, -1) if b[p] > 0), 0)
        front = next((i for i in range(25) if b[i] < 0), 25)
        return back < front

    def is_contact(self) -> bool:
        """True while the two sides can still hit or block each other."""
        return not self.is_race()

    def is_game_over(self) -> bool:
        """True when one side has borne off all its checkers."""
        # All of a side's checkers are off when none is left on the board.
        return max(self) <= 0 or min(self) >= 0

    def outcome(self) -> int:
        """0 while the game goes on; else the cubeless points won, signed from the
        view of the side on roll: 1 single, 2 gammon, 3 backgammon (negative: lost).
        """
        for sign, pos in ((1, self), (-1, self.flip())):
            if pos.on_roll_at(OFF) == CHECKERS:
                b = pos
                loser_off = CHECKERS + sum(c for c in b if c < 0)
                if loser_off:
                    return sign
                # The loser still has a checker on the bar or in the winner's home board.
                if b[0] < 0 or any(b[i] < 0 for i in range(1, 7)):
                    return 3 * sign
                return 2 * sign
        return 0

    # -- plays ------------------------------------------------------------
    def legal_plays(self, dice: Sequence[int]) -> list[Play]:
        """Every legal play of ``dice``, one per distinct resulting position.

        Empty when nothing can be played (the turn passes).
        """
        try:
            d1, d2 = dice
        except (TypeError, ValueError):
            d1, d2 = check_dice(dice)  # raises, naming the problem
        if type(d1) is not int or type(d2) is not int or not (0 < d1 < 7 and 0 < d2 < 7):
            d1, d2 = check_dice(dice)
        return list(_legal_plays(self, d1, d2))

    def apply(self, play: Play) -> Position:
        """The position after ``play``, seen from the opponent (now on roll).

        Raises :class:`IllegalPlayError` if ``play`` is not legal here.
        """
        if play not in self.legal_plays(play.dice):
            raise IllegalPlayError(
                f"illegal play {self.format_play(play)!r} with {play.dice[0]}-{play.dice[1]} "
                f"in position {self.position_id()}: it is not among the legal plays"
            )
        return play.result

    def parse_play(self, text: str, dice: Sequence[int] | None = None) -> Play:
        """Read a play written in standard notation (``8/5 6/5``, ``bar/22*``, ``13/7(2)``).

        With ``dice`` the play must be legal for that roll; without, the roll is
        inferred from the text. Raises :class:`InvalidNotationError` for text that
        is not a play and :class:`IllegalPlayError` for one the rules forbid.

        >>> Position().parse_play("6/5 8/5", (3, 1)) == Position().parse_play("8/5 6/5")
        True
        """
        from nard.core.play_text import parse_play

        return parse_play(self, text, dice)

    def format_play(self, play: Play) -> str:
        """Write ``play`` as GNU Backgammon writes it, e.g. ``24/23*/22 13/11``.

        >>> pos = Position()
        >>> pos.format_play(pos.parse_play("13/7 13/7 24/18 24/18"))
        '24/18(2) 13/7(2)'
        """
        return _format_moves(play[2])

    # -- dunder -----------------------------------------------------------
    def __repr__(self) -> str:
        return f"Position.from_position_id({self.position_id()!r})"

    def __str__(self) -> str:
        from nard.core.diagram import draw

        return draw(self)


@functools.lru_cache(maxsize=1 << 14)
def _format_moves(moves: tuple[tuple[int, int, bool], ...]) -> str:
    """A play's text by its raw moves: the same few thousand recur across games."""
    from nard.core.play_text import format_moves

    return format_moves(moves)


STARTING = Position()
"""The opening position."""


def _check_point(point: int) -> None:
    if isinstance(point, bool) or not isinstance(point, int) or not 0 <= point <= 25:
        raise InvalidPositionError(
            f"invalid point {point!r}: points are 1-24, 25 for the bar and 0 for off"
        )


def _validate(b: tuple[int, ...]) -> None:
    if len(b) != 26 or not all(isinstance(c, int) and not isinstance(c, bool) for c in b):
        raise InvalidPositionError(f"invalid board {b!r}: expected 26 integers")
    if b[25] < 0:
        raise InvalidPositionError(f"invalid board {b!r}: bar count {b[25]} is negative")
    if b[0] > 0:
        raise InvalidPositionError(
            f"invalid board {b!r}: the opponent's bar (index 0) must be 0 or negative"
        )
    mine = sum(c for c in b if c > 0)
    theirs = -sum(c for c in b if c < 0)
    if mine > CHECKERS:
        raise InvalidPositionError(
            f"impossible position {b!r}: the side on roll has {mine} checkers (at most {CHECKERS})"
        )
    if theirs > CHECKERS:
        raise InvalidPositionError(
            f"impossible position {b!r}: the opponent has {theirs} checkers (at most {CHECKERS})"
        )


@functools.lru_cache(maxsize=32)
def _legal_plays(position: Position, d1: int, d2: int) -> tuple[Play, ...]:
    """The legal plays of a position and roll, remembered for the few calls that
    follow (a player's choice, then its check); positions are values.

    Small on purpose: a game keeps its own turn's plays (``Game.legal_plays``),
    and each entry is some thirty objects the garbage collector tracks (plays and
    positions are tuples of a class of their own) and walks in every young
    collection until they die. At 512 entries a server's young collections under
    load walked 20,000-70,000 of them, pauses of 12-30 ms; at 4,096 its full
    collections took 50-100 ms."""
    return tuple(_movegen.generate(position, d1, d2, Position, Play))
