"""eXtreme Gammon's XGID, read and written as GNU Backgammon 1.07 imports it.

An XGID is ``XGID=`` and ten fields separated by colons::

    XGID=-b----E-C---eE---c-e----B-:1:-1:1:52:4:2:0:9:10
         position                   | |  | |  | | | | max cube (log2)
                                    | |  | |  | | | match length (0: money)
                                    | |  | |  | | Crawford game / money rules
                                    | |  | |  | top player's score
                                    | |  | |  bottom player's score
                                    | |  | dice: "00" to roll, "D" doubled, "52"
                                    | |  turn: 1 bottom, -1 top
                                    | cube owner: 1 bottom, -1 top, 0 centred
                                    cube value (log2)

The position is drawn from the bottom player's side whoever is on roll:
character 0 is the top player's bar, 1-24 the bottom player's points 1-24 and
25 the bottom player's bar; ``A``-``O`` are 1-15 of the bottom player's
checkers, ``a``-``o`` the top player's, ``-`` an empty point. The turn names
the player on roll, also with ``D``: that player has doubled and the other
must take or pass (so gnubg reads it; some other tools take the turn of a
``D`` to be the player who answers). The rules field is 1 for the Crawford game in a match; in
money play it adds 1 for the Jacoby rule and 2 for beavers.

nard maps the players as gnubg does: the bottom player (upper case) is
player 1, the top player (lower case) player 0. Beavered and raccooned cubes
(dice ``B`` and ``R``) are refused, as gnubg refuses them.

>>> record = XgidRecord.from_xgid("XGID=-b----E-C---eE---c-e----B-:1:-1:1:52:4:2:0:9:10")
>>> record.position == Position(), record.match.dice, record.match.score
(True, (5, 2), (2, 4))
>>> record.gnubg_id()
'4HPwATDgc/ABMA:QYkqASAAIAAE'
>>> record.to_xgid()
'XGID=-b----E-C---eE---c-e----B-:1:-1:1:52:4:2:0:9:10'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from nard.core.errors import InvalidXgidError
from nard.core.position import CHECKERS, Position
from nard.notation.match_id import (
    MAX_CUBE,
    MAX_MATCH_LENGTH,
    CubeOwner,
    GameState,
    InvalidMatchStateError,
    MatchState,
    Resignation,
)

__all__ = ["BOTTOM", "TOP", "XgidRecord"]

BOTTOM = 1
"""The bottom player (upper-case checkers, turn 1) is gnubg's player 1."""
TOP = 0
"""The top player (lower-case checkers, turn -1) is gnubg's player 0."""

_MAX_LOG_MAX_CUBE = 15
_INT = re.compile(r"-?[0-9]+")
_FIELDS = (
    "position",
    "cube value",
    "cube owner",
    "turn",
    "dice",
    "bottom score",
    "top score",
    "rules",
    "match length",
    "max cube",
)
_OWNER_FROM_XG = {1: CubeOwner.PLAYER_1, -1: CubeOwner.PLAYER_0, 0: CubeOwner.CENTRED}
_OWNER_TO_XG = {owner: xg for xg, owner in _OWNER_FROM_XG.items()}


@dataclass(frozen=True, slots=True)
class XgidRecord:
    """What an XGID records: a position, its match state and XG's two extra rules.

    ``position`` is seen from the player on roll (``match.dice_owner``; with a
    double offered, the doubler). ``match`` numbers the players as gnubg does
    (:data:`BOTTOM` is player 1) and is always a game in play with no
    resignation offered. ``beavers`` (money play only) and ``max_cube`` are
    XG's settings, absent from gnubg's Match ID. An XGID has no place for the
    Jacoby flag in match play, where it means nothing: it is not written and
    reads back as ``False``.

    >>> from nard.notation.match_id import MatchState
    >>> XgidRecord(Position(), MatchState(dice_owner=1, dice=(3, 1), jacoby=True)).to_xgid()
    'XGID=-b----E-C---eE---c-e----B-:0:0:1:31:0:0:1:0:10'
    """

    position: Position
    match: MatchState
    beavers: bool = False
    max_cube: int = 1024

    def __post_init__(self) -> None:
        if not isinstance(self.position, Position):
            raise InvalidMatchStateError(f"position must be a Position, not {self.position!r}")
        if not isinstance(self.match, MatchState):
            raise InvalidMatchStateError(f"match must be a MatchState, not {self.match!r}")
        state = self.match
        if state.game_state is not GameState.PLAYING:
            raise InvalidMatchStateError(
                f"an XGID records a game in play, not game state {state.game_state.name}"
            )
        if state.resignation is not Resignation.NONE:
            raise InvalidMatchStateError("an XGID cannot record a resignation on offer")
        if not state.double_offered and state.turn != state.dice_owner:
            raise InvalidMatchStateError(
                f"an XGID cannot give the turn to player {state.turn} while player "
                f"{state.dice_owner} is on roll and no double is offered"
            )
        if not isinstance(self.beavers, bool):
            raise InvalidMatchStateError(f"beavers must be True or False, not {self.beavers!r}")
        if self.beavers and not state.is_money():
            raise InvalidMatchStateError("beavers are a money-play rule, not a match rule")
        cube = self.max_cube
        if (
            not isinstance(cube, int)
            or isinstance(cube, bool)
            or cube < 1
            or cube & (cube - 1)
            or cube > 1 << _MAX_LOG_MAX_CUBE
        ):
            raise InvalidMatchStateError(
                f"max cube {cube!r} is not a power of two from 1 to {1 << _MAX_LOG_MAX_CUBE}"
            )

    @classmethod
    def from_xgid(cls, xgid: str) -> XgidRecord:
        """Read an XGID (the ``XGID=`` prefix is optional).

        Raises :class:`InvalidXgidError` naming the field that is wrong.

        >>> XgidRecord.from_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:D:0:0:0:5:10").match.turn
        0
        >>> XgidRecord.from_xgid("-b----E-C---eE---c-e----B-:0:0:1:B:0:0:0:0:10")
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        nard.core.errors.InvalidXgidError: invalid XGID '...': dice 'B' (beavered): ...
        """
        if not isinstance(xgid, str):
            raise InvalidXgidError(f"XGID must be a string, not {xgid!r}")

        def fail(problem: str) -> InvalidXgidError:
            return InvalidXgidError(f"invalid XGID {xgid!r}: {problem}")

        text = xgid.strip()
        if text.startswith("XGID="):
            text = text[5:]
        parts = text.split(":")
        if len(parts) != len(_FIELDS):
            raise fail(f"expected {len(_FIELDS)} fields separated by ':', got {len(parts)}")
        numbers: dict[str, int] = {}
        for name, part in zip(_FIELDS, parts, strict=True):
            if name in ("position", "dice"):
                continue
            if not _INT.fullmatch(part):
                raise fail(f"{name} {part!r} is not a whole number")
            if len(part) > 9:  # no field needs more, and int() of huge text is slow
                raise fail(f"{name} {part!r} is out of range")
            numbers[name] = int(part)

        board = _read_board(parts[0], fail)

        log_cube = numbers["cube value"]
        if not 0 <= log_cube < MAX_CUBE.bit_length():
            raise fail(f"cube value field {log_cube} is not 0-{MAX_CUBE.bit_length() - 1}")
        owner = _OWNER_FROM_XG.get(numbers["cube owner"])
        if owner is None:
            raise fail(f"cube owner {numbers['cube owner']} is not 1 (bottom), -1 (top) or 0")
        turn = numbers["turn"]
        if turn not in (1, -1):
            raise fail(f"turn {turn} is not 1 (bottom) or -1 (top)")
        on_roll = BOTTOM if turn == 1 else TOP

        dice_text = parts[4]
        dice: tuple[int, int] | None = None
        double_offered = False
        if dice_text == "D":
            double_offered = True
        elif dice_text in ("B", "R"):
            what = "beavered" if dice_text == "B" else "raccooned"
            raise fail(
                f"dice {dice_text!r} ({what}): beavered and raccooned cubes are not supported"
            )
        elif re.fullmatch(r"[1-6]{2}", dice_text):
            dice = (int(dice_text[0]), int(dice_text[1]))
        elif dice_text != "00":
            raise fail(f"dice {dice_text!r} are not '00', 'D' or two dice 1-6")

        for name in ("bottom score", "top score"):
            if numbers[name] < 0:
                raise fail(f"{name} {numbers[name]} is negative")
        length = numbers["match length"]
        if not 0 <= length <= MAX_MATCH_LENGTH:
            raise fail(f"match length {length} is not 0 (money) to {MAX_MATCH_LENGTH}")
        rules = numbers["rules"]
        if length and rules not in (0, 1):
            raise fail(f"rules field {rules} in match play is not 0 or 1 (the Crawford game)")
        if not length and not 0 <= rules <= 3:
            raise fail(f"rules field {rules} in money play is not 0-3 (1 Jacoby + 2 beavers)")
        log_max = numbers["max cube"]
        if not 0 <= log_max <= _MAX_LOG_MAX_CUBE:
            raise fail(f"max cube field {log_max} is not 0-{_MAX_LOG_MAX_CUBE}")

        try:
            match = MatchState(
                cube_value=1 << log_cube,
                cube_owner=owner,
                dice_owner=on_roll,
                crawford=bool(length and rules),
                turn=1 - on_roll if double_offered else on_roll,
                double_offered=double_offered,
                dice=dice,
                match_length=length,
                score=(numbers["top score"], numbers["bottom score"]),
                jacoby=bool(not length and rules & 1),
            )
        except InvalidMatchStateError as exc:
            raise fail(str(exc)) from None
        position = Position(board) if on_roll == BOTTOM else Position(board).flip()
        return cls(position, match, beavers=bool(not length and rules & 2), max_cube=1 << log_max)

    def to_xgid(self) -> str:
        """The XGID of this record, with the ``XGID=`` prefix."""
        state = self.match
        on_roll = state.dice_owner
        board = (self.position if on_roll == BOTTOM else self.position.flip()).board
        if state.double_offered:
            dice = "D"
        elif state.dice is None:
            dice = "00"
        else:
            dice = f"{state.dice[0]}{state.dice[1]}"
        if state.is_money():
            rules = int(state.jacoby) + 2 * int(self.beavers)
        else:
            rules = int(state.crawford)
        fields = (
            "".join(_char(count) for count in board),
            state.cube_value.bit_length() - 1,
            _OWNER_TO_XG[state.cube_owner],
            1 if on_roll == BOTTOM else -1,
            dice,
            state.score[BOTTOM],
            state.score[TOP],
            rules,
            state.match_length,
            self.max_cube.bit_length() - 1,
        )
        return "XGID=" + ":".join(str(field) for field in fields)

    def gnubg_id(self) -> str:
        """gnubg's ``Position ID:Match ID`` for this record (gnubg's players, unswapped).

        gnubg itself, importing an XGID with the top player on roll, offers to
        swap the players so that the one on roll sits at the bottom; this is
        the ID before any such swap.
        """
        return f"{self.position.position_id()}:{self.match.match_id()}"


def _char(count: int) -> str:
    if count > 0:
        return chr(ord("A") + count - 1)
    if count < 0:
        return chr(ord("a") - count - 1)
    return "-"


def _read_board(text: str, fail: Callable[[str], InvalidXgidError]) -> tuple[int, ...]:
    """The board seen from the bottom player, in :class:`Position`'s layout."""
    if len(text) != 26:
        raise fail(f"position {text!r} has {len(text)} characters, not 26")
    board = []
    for index, char in enumerate(text):
        if char == "-":
            board.append(0)
        elif "A" <= char <= "O":
            board.append(ord(char) - ord("A") + 1)
        elif "a" <= char <= "o":
            board.append(-(ord(char) - ord("a") + 1))
        else:
            raise fail(f"position character {char!r} at {index} is not '-', A-O or a-o")
    if board[0] > 0:
        raise fail("the first character is the top player's bar, but holds bottom checkers")
    if board[25] < 0:
        raise fail("the last character is the bottom player's bar, but holds top checkers")
    for side, total in (
        ("bottom", sum(c for c in board if c > 0)),
        ("top", -sum(c for c in board if c < 0)),
    ):
        if total > CHECKERS:
            raise fail(f"the {side} player has {total} checkers (at most {CHECKERS})")
    return tuple(board)
