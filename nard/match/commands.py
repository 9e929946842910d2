"""A player's action as a value: what a server stores and a client sends.

A :class:`Command` is one :class:`~nard.match.game.GameAction` with its
argument (the play's text, the points resigned). :func:`perform` applies it
to a :class:`~nard.match.game.Game` for the player whose turn it is; the dice
come from the game's dice source, so a log of commands replayed on the same
dice rebuilds the game exactly.

>>> from nard.match.dice import FixedDice
>>> from nard.match.game import Game
>>> game = Game(dice=FixedDice([(3, 1)]))
>>> perform(game, Command.from_json({"action": "opening roll"}))
>>> perform(game, Command(GameAction.PLAY, play="8/5 6/5"))
>>> game.turn, Command(GameAction.RESIGN, points=2).to_json()
(1, {'action': 'resign', 'points': 2})
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nard.core import NardError
from nard.match.game import Game, GameAction

__all__ = ["Command", "InvalidCommandError", "perform"]

MAX_PLAY_TEXT = 200
"""The longest play text accepted (the longest real play is under 40 characters)."""


class InvalidCommandError(NardError, ValueError):
    """A command that is not well formed (unknown action, missing or bad argument)."""


@dataclass(frozen=True)
class Command:
    """One action of the player whose turn it is.

    ``play`` (standard notation, e.g. ``"24/18 13/9"``) goes with
    :attr:`GameAction.PLAY` only; ``points`` (1, 2 or 3) with
    :attr:`GameAction.RESIGN` only (default 1).
    """

    action: GameAction
    play: str | None = None
    points: int | None = None

    def __post_init__(self) -> None:
        if (self.action is GameAction.PLAY) != (self.play is not None):
            raise InvalidCommandError(
                f"{self.action.value!r}: a play's text goes with 'play' and only with it"
            )
        if self.play is not None and len(self.play) > MAX_PLAY_TEXT:
            raise InvalidCommandError(f"play text of {len(self.play)} characters is too long")
        if self.points is not None and (
            self.action is not GameAction.RESIGN or self.points not in (1, 2, 3)
        ):
            raise InvalidCommandError(
                f"points {self.points!r}: only a resignation has points, and they are 1, 2 or 3"
            )

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Command:
        """A command from its JSON object (``{"action": "play", "play": "8/5 6/5"}``).

        >>> Command.from_json({"action": "fly"})
        Traceback (most recent call last):
        ...
        nard.match.commands.InvalidCommandError: unknown action 'fly'
        """
        if not isinstance(data, Mapping):
            raise InvalidCommandError(f"a command is a JSON object, not {type(data).__name__}")
        unknown = set(data) - {"action", "play", "points"}
        if unknown:
            raise InvalidCommandError(f"unknown command fields: {', '.join(sorted(unknown))}")
        name = data.get("action")
        try:
            action = GameAction(str(name))
        except ValueError:
            raise InvalidCommandError(f"unknown action {name!r}") from None
        play = data.get("play")
        points = data.get("points")
        if play is not None and not isinstance(play, str):
            raise InvalidCommandError(f"play must be text, not {play!r}")
        if points is not None and (isinstance(points, bool) or not isinstance(points, int)):
            raise InvalidCommandError(f"points must be 1, 2 or 3, not {points!r}")
        return cls(action, play, points)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of this command (only the fields it has)."""
        out: dict[str, Any] = {"action": self.action.value}
        if self.play is not None:
            out["play"] = self.play
        if self.points is not None:
            out["points"] = self.points
        return out


def perform(game: Game, command: Command) -> None:
    """Apply ``command`` for the player whose turn it is (``game.turn``).

    Raises :class:`~nard.match.game.MatchStateError` (or a notation error for
    a bad play) and leaves the game unchanged when the rules refuse it.
    """
    action = command.action
    if action is GameAction.OPENING_ROLL:
        game.opening_roll()
    elif action is GameAction.ROLL:
        game.roll()
    elif action is GameAction.PLAY:
        assert command.play is not None
        game.play(command.play)
    elif action is GameAction.DOUBLE:
        game.double()
    elif action is GameAction.TAKE:
        game.take()
    elif action is GameAction.PASS:
        game.pass_double()
    elif action is GameAction.BEAVER:
        game.beaver()
    elif action is GameAction.RACCOON:
        game.raccoon()
    elif action is GameAction.RESIGN:
        game.resign(command.points or 1)
    elif action is GameAction.ACCEPT:
        game.accept()
    else:
        game.reject()
