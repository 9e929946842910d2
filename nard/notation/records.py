"""Match records as the file formats hold them, before any rule is checked.

:mod:`nard.notation.mat` and :mod:`nard.notation.sgf` read and write these
plain values; :mod:`nard.match` replays them through the rules (``Game``) to
validate them and to compute results. Players are 0 and 1: player 0 is the
left column of a ``.mat`` file and White (``W``) in SGF.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

__all__ = ["Action", "ActionKind", "GameRecord", "MatchRecord"]


class ActionKind(StrEnum):
    """What a player did at one step of a game."""

    MOVE = "move"  # rolled ``dice`` and played ``play`` ("" when nothing could be played)
    DOUBLE = "double"  # offered the cube at ``cube`` (the new value)
    TAKE = "take"
    DROP = "drop"  # passed the double: the game ends
    BEAVER = "beaver"  # redoubled at once, keeping the cube (``cube`` = new value)
    RACCOON = "raccoon"
    RESIGN = "resign"  # offered to resign ``resign`` points' worth: 1, 2 or 3
    ACCEPT = "accept"  # accepted the resignation: the game ends
    REJECT = "reject"  # declined the resignation: play goes on


@dataclass(frozen=True)
class Action:
    """One step of a game by ``player`` (0 or 1)."""

    player: int
    kind: ActionKind
    dice: tuple[int, int] | None = None
    play: str | None = None
    cube: int | None = None
    resign: int | None = None


@dataclass(frozen=True)
class GameRecord:
    """One game: the score before it and every action, as recorded.

    ``winner`` and ``points`` are what the file says the game ended with
    (``None`` when it does not say); replaying checks them.
    """

    number: int
    score: tuple[int, int]
    actions: tuple[Action, ...]
    winner: int | None = None
    points: int | None = None
    crawford: bool = False
    automatic_doubles: int = 0
    """Ties of the opening roll that doubled the cube before the game began (money)."""


@dataclass(frozen=True)
class MatchRecord:
    """A match to ``match_length`` points (0: a money session) and its games."""

    match_length: int
    games: tuple[GameRecord, ...]
    players: tuple[str, str] = ("Player 0", "Player 1")
    jacoby: bool = False
    crawford_rule: bool = True
    metadata: dict[str, str] = field(default_factory=dict)
    backgammon: int = 3
    """What a backgammon counts (3, or 2 where so agreed)."""
    automatic_doubles: int = 0
    """The most automatic doubles a money game allows (0: the option is off)."""
    holland: bool = False
    """The Holland rule after the Crawford game (matches)."""
    cube: bool = True
    """The doubling cube in use (gnubg's SGF says ``RU[NoCube]`` when not)."""
    cube_cap: int | None = None
    """The highest value the cube may reach, where the players agreed one other than
    the usual 64 (None: the usual, or not recorded)."""
