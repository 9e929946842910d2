"""GNU Backgammon's Match ID, bit-exact with gnubg 1.07.

The Match ID records everything about a match but the board: cube, score,
match length, whose turn it is, the dice, and any pending double or
resignation. Its 9-byte key is a little-endian bit stream (bit ``k`` in byte
``k // 8`` at bit ``k % 8``) written in standard base64 (12 characters, no
padding). Fields, least significant bit first:

====  ======  ==================================================
bits  field   meaning
====  ======  ==================================================
0-3   cube    log2 of the cube value (gnubg accepts up to 4096)
4-5   owner   0 or 1: that player owns the cube; 3: centred
6     move    the player on roll, or who rolled (dice owner)
7     craw    this game is the Crawford game
8-10  state   no game, playing, over, resigned, ended by a drop
11    turn    the player who must make a decision now
12    double  a double is offered
13-14 resign  0 none; 1, 2, 3: single game, gammon, backgammon
15-17 die 1   0 when not rolled (gnubg writes the higher die first)
18-20 die 2
21-35 length  match length, 0 for money play (gnubg: at most 64)
36-50 score0  player 0's score
51-65 score1  player 1's score
66    nojac   set when the Jacoby rule is *not* in use
====  ======  ==================================================

The remaining bits 67-71 are zero. The manual's example, a 9-point match at
2-4 in which player 0 owns a 2-cube and player 1 has rolled 5-2:

>>> state = MatchState.from_match_id("QYkqASAAIAAA")
>>> state.match_length, state.score, state.cube_value, state.cube_owner
(9, (2, 4), 2, <CubeOwner.PLAYER_0: 0>)
>>> state.dice_owner, state.dice
(1, (5, 2))
>>> state.match_id()
'QYkqASAAIAAA'
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from dataclasses import dataclass
from enum import IntEnum
from typing import TypeVar

from nard.core.errors import InvalidMatchIdError, InvalidMatchStateError

__all__ = [
    "MAX_CUBE",
    "MAX_MATCH_LENGTH",
    "MAX_SCORE",
    "CubeOwner",
    "GameState",
    "InvalidMatchStateError",
    "MatchState",
    "Resignation",
]

MAX_CUBE = 4096
"""The largest cube value gnubg accepts in a Match ID (the field could hold 2**15)."""
MAX_MATCH_LENGTH = 64
"""The longest match gnubg plays; longer lengths make it reject the Match ID."""
MAX_SCORE = (1 << 15) - 1
"""The largest score the 15-bit score fields hold (money sessions run up scores too)."""

_ID_CHARS = re.compile(r"[A-Za-z0-9+/]{12}")
_UNSET = -1
_E = TypeVar("_E", bound=IntEnum)


class CubeOwner(IntEnum):
    """Who owns the cube; the values are gnubg's (``-1`` centred, as in its cubeinfo)."""

    CENTRED = -1
    PLAYER_0 = 0
    PLAYER_1 = 1


class GameState(IntEnum):
    """The state of the current game: gnubg's 3-bit field."""

    NONE = 0
    """No game has started (gnubg then has no board to show)."""
    PLAYING = 1
    OVER = 2
    """Finished by bearing off."""
    RESIGNED = 3
    """Finished by an accepted resignation."""
    DROPPED = 4
    """Finished by a dropped (passed) double."""


class Resignation(IntEnum):
    """A resignation on offer, by the points it gives up (times the cube)."""

    NONE = 0
    SINGLE = 1
    GAMMON = 2
    BACKGAMMON = 3


@dataclass(frozen=True, slots=True)
class MatchState:
    """Everything a Match ID records: the match apart from the board.

    Players are 0 and 1 as gnubg numbers them. ``dice_owner`` is the player on
    roll (or who has rolled); ``turn`` the player who must decide now, which
    differs while a double or a resignation awaits an answer. It defaults to
    ``dice_owner``, or to the opponent when ``double_offered``. ``dice`` is
    ``None`` until the dice are rolled and is kept higher die first, as gnubg
    writes it. ``match_length`` 0 is money play, where ``score`` counts the
    points won in the session.

    >>> MatchState(match_length=7, score=(6, 3), crawford=True, dice=(1, 4)).match_id()
    'sAHmAGAAGAAE'
    >>> MatchState(match_length=7, score=(8, 3))
    Traceback (most recent call last):
    ...
    nard.core.errors.InvalidMatchStateError: player 0's score 8 is above the match length 7
    """

    cube_value: int = 1
    cube_owner: CubeOwner = CubeOwner.CENTRED
    dice_owner: int = 0
    crawford: bool = False
    game_state: GameState = GameState.PLAYING
    turn: int = _UNSET
    double_offered: bool = False
    resignation: Resignation = Resignation.NONE
    dice: tuple[int, int] | None = None
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    jacoby: bool = False

    def __post_init__(self) -> None:
        _set = object.__setattr__
        if self.turn == _UNSET and _is_int(self.dice_owner) and _is_bool(self.double_offered):
            _set(self, "turn", 1 - self.dice_owner if self.double_offered else self.dice_owner)
        _set(self, "cube_owner", _enum(CubeOwner, self.cube_owner, "cube owner"))
        _set(self, "game_state", _enum(GameState, self.game_state, "game state"))
        _set(self, "resignation", _enum(Resignation, self.resignation, "resignation"))
        for name in ("crawford", "double_offered", "jacoby"):
            if not _is_bool(getattr(self, name)):
                raise InvalidMatchStateError(
                    f"{name} must be True or False, not {getattr(self, name)!r}"
                )
        for name in ("dice_owner", "turn"):
            if getattr(self, name) not in (0, 1) or not _is_int(getattr(self, name)):
                raise InvalidMatchStateError(
                    f"{name} must be player 0 or 1, not {getattr(self, name)!r}"
                )
        cube = self.cube_value
        if not _is_int(cube) or cube < 1 or cube & (cube - 1) or cube > MAX_CUBE:
            raise InvalidMatchStateError(
                f"cube value {cube!r} is not a power of two from 1 to {MAX_CUBE}"
            )
        if self.dice is not None:
            _set(self, "dice", _check_dice(self.dice))
        if self.double_offered:
            if self.dice is not None:
                raise InvalidMatchStateError(
                    f"a double is offered but the dice {self.dice!r} are already rolled"
                )
            # The doubler's own turn means a beaver awaits its answer, which gnubg
            # writes with the cube already doubled on the beaverer's side (money only).
            beaver = not self.match_length and self.cube_owner == 1 - self.dice_owner
            if self.turn == self.dice_owner and not beaver:
                raise InvalidMatchStateError(
                    f"player {self.dice_owner} offers a double, so player {1 - self.dice_owner} "
                    "must have the turn to answer it (or, in money play, own the cube "
                    "after a beaver)"
                )
        length = self.match_length
        if not _is_int(length) or not 0 <= length <= MAX_MATCH_LENGTH:
            raise InvalidMatchStateError(
                f"match length {length!r} is not 0 (money) to {MAX_MATCH_LENGTH}"
            )
        _set(self, "score", _check_score(self.score, length, self.game_state))
        if self.crawford:
            if not length:
                raise InvalidMatchStateError("money play has no Crawford game")
            if length - 1 not in self.score:
                raise InvalidMatchStateError(
                    f"the Crawford game needs a player 1 point away, not the score "
                    f"{self.score!r} of a {length}-point match"
                )

    # -- Match ID -----------------------------------------------------------
    @classmethod
    def from_match_id(cls, match_id: str) -> MatchState:
        """Decode a Match ID; raise :class:`InvalidMatchIdError` naming what is wrong.

        Accepts what gnubg 1.07 accepts except where gnubg quietly repairs a
        corrupt ID (cube owner 2, one die zero, the Crawford flag at a score
        with nobody 1 away, set reserved bits) and except game states 5-7,
        which gnubg takes. Unlike gnubg it also reads the IDs gnubg writes
        after a match-winning game that scored more points than were needed.
        The dice come back higher die first whatever order the ID has.

        >>> MatchState.from_match_id("cAkgAQAAAAAE").dice_owner
        1
        >>> MatchState.from_match_id("IAHgAAAAAAAE")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        nard.core.errors.InvalidMatchIdError: invalid Match ID 'IAHgAAAAAAAE': cube owner ...
        """
        if not isinstance(match_id, str):
            raise InvalidMatchIdError(f"Match ID must be a string, not {match_id!r}")
        text = match_id.strip()
        if len(text) != 12:
            raise InvalidMatchIdError(
                f"invalid Match ID {match_id!r}: expected 12 characters, got {len(text)}"
            )
        if not _ID_CHARS.fullmatch(text):
            bad = sorted({c for c in text if not (c.isascii() and (c.isalnum() or c in "+/"))})
            raise InvalidMatchIdError(
                f"invalid Match ID {match_id!r}: characters {''.join(bad)!r} are not base64"
            )
        try:
            key = int.from_bytes(base64.b64decode(text, validate=True), "little")
        except (binascii.Error, ValueError) as exc:  # pragma: no cover - regex guards this
            raise InvalidMatchIdError(f"invalid Match ID {match_id!r}: {exc}") from exc

        def bits(offset: int, width: int) -> int:
            return (key >> offset) & ((1 << width) - 1)

        def fail(problem: str) -> InvalidMatchIdError:
            return InvalidMatchIdError(f"invalid Match ID {match_id!r}: {problem}")

        log_cube = bits(0, 4)
        if 1 << log_cube > MAX_CUBE:
            raise fail(f"cube value 2**{log_cube} is above {MAX_CUBE}")
        owner = bits(4, 2)
        if owner == 2:
            raise fail("cube owner field is 2 (0, 1 or 3 for centred)")
        state = bits(8, 3)
        if state > GameState.DROPPED:
            raise fail(f"game state field is {state} (0-4)")
        die1, die2 = bits(15, 3), bits(18, 3)
        if die1 > 6 or die2 > 6:
            raise fail(f"die {max(die1, die2)} is not 1-6")
        if (die1 == 0) != (die2 == 0):
            raise fail(f"dice {die1} and {die2}: one die is 0 (not rolled) and the other is not")
        if key >> 67:
            raise fail("reserved bits 67-71 are set")
        try:
            return cls(
                cube_value=1 << log_cube,
                cube_owner=CubeOwner.CENTRED if owner == 3 else CubeOwner(owner),
                dice_owner=bits(6, 1),
                crawford=bool(bits(7, 1)),
                game_state=GameState(state),
                turn=bits(11, 1),
                double_offered=bool(bits(12, 1)),
                resignation=Resignation(bits(13, 2)),
                dice=(die1, die2) if die1 else None,
                match_length=bits(21, 15),
                score=(bits(36, 15), bits(51, 15)),
                jacoby=not bits(66, 1),
            )
        except InvalidMatchStateError as exc:
            raise fail(str(exc)) from None

    def match_id(self) -> str:
        """The 12-character Match ID of this state, as gnubg writes it."""
        die1, die2 = self.dice or (0, 0)
        fields = (
            (self.cube_value.bit_length() - 1, 4),
            (3 if self.cube_owner is CubeOwner.CENTRED else int(self.cube_owner), 2),
            (self.dice_owner, 1),
            (int(self.crawford), 1),
            (int(self.game_state), 3),
            (self.turn, 1),
            (int(self.double_offered), 1),
            (int(self.resignation), 2),
            (die1, 3),
            (die2, 3),
            (self.match_length, 15),
            (self.score[0], 15),
            (self.score[1], 15),
            (int(not self.jacoby), 1),
        )
        key = 0
        offset = 0
        for value, width in fields:
            key |= value << offset
            offset += width
        return base64.b64encode(key.to_bytes(9, "little")).decode("ascii")

    # -- views ----------------------------------------------------------------
    @property
    def beaver_offered(self) -> bool:
        """True while a beaver awaits the doubler's answer (raccoon, or play on).

        gnubg writes that moment as a double still offered, with the doubler to
        decide and the cube, already doubled, owned by the side that beavered:

        >>> state = MatchState.from_match_id("EREAAAAAAAAE")
        >>> state.beaver_offered, state.cube_value, int(state.cube_owner), state.turn
        (True, 2, 1, 0)
        >>> state.match_id()
        'EREAAAAAAAAE'
        """
        return self.double_offered and self.turn == self.dice_owner

    def is_money(self) -> bool:
        """True for money play (match length 0)."""
        return self.match_length == 0

    def swap_players(self) -> MatchState:
        """The same state with players 0 and 1 exchanged (gnubg's ``swap players``).

        >>> MatchState.from_match_id("QYkqASAAIAAA").swap_players().match_id()
        'EYEqAUAAEAAA'
        """
        owner = self.cube_owner
        if owner is not CubeOwner.CENTRED:
            owner = CubeOwner(1 - owner)
        return dataclasses.replace(
            self,
            cube_owner=owner,
            dice_owner=1 - self.dice_owner,
            turn=1 - self.turn,
            score=(self.score[1], self.score[0]),
        )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_bool(value: object) -> bool:
    return isinstance(value, bool)


def _enum(kind: type[_E], value: object, what: str) -> _E:
    if isinstance(value, kind):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        try:
            return kind(value)
        except ValueError:
            pass
    allowed = ", ".join(f"{m.value} ({m.name})" for m in kind)
    raise InvalidMatchStateError(f"{what} {value!r} is not one of {allowed}")


def _check_dice(dice: object) -> tuple[int, int]:
    if not isinstance(dice, tuple | list) or len(dice) != 2:
        raise InvalidMatchStateError(f"dice {dice!r} must be None or a pair of dice")
    for die in dice:
        if not _is_int(die) or not 1 <= die <= 6:
            raise InvalidMatchStateError(f"dice {dice!r}: die {die!r} is not 1-6")
    high, low = max(dice), min(dice)
    return (high, low)


def _check_score(score: object, length: int, state: GameState) -> tuple[int, int]:
    if not isinstance(score, tuple | list) or len(score) != 2:
        raise InvalidMatchStateError(f"score {score!r} must be a pair (player 0, player 1)")
    for player, points in enumerate(score):
        if not _is_int(points) or not 0 <= points <= MAX_SCORE:
            raise InvalidMatchStateError(
                f"player {player}'s score {points!r} is not a whole number from 0 to {MAX_SCORE}"
            )
    if length:
        # The game that wins a match may score more than the points needed: gnubg
        # writes such scores once that game is over (though it refuses to read them).
        over = state in (GameState.OVER, GameState.RESIGNED, GameState.DROPPED)
        for player, points in enumerate(score):
            if points > length and not over:
                raise InvalidMatchStateError(
                    f"player {player}'s score {points} is above the match length {length}"
                )
        if min(score) >= length:
            raise InvalidMatchStateError(
                f"both players have reached the match length {length} (score {score!r})"
            )
    return (score[0], score[1])
