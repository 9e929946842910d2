"""One game of backgammon as a state machine driven by the players' actions.

A :class:`Game` knows whose decision it is, which actions are legal now, and
refuses anything else with a :class:`MatchStateError` that names the action,
the state and the reason, leaving the game exactly as it was. Every accepted
action is kept in :attr:`Game.actions` (as :class:`~nard.notation.records.Action`
values, the same the file formats hold), so a game can be replayed, exported
and verified.

Players are 0 and 1. The rules (RULES.md sections 2, 4-8) that depend on the
kind of play (match or money) come in :class:`GameOptions`, which
:class:`~nard.match.match.Match` and :class:`~nard.match.match.Session` fill in.

>>> from nard.match.game import Game
>>> game = Game()
>>> game.opening_roll((3, 1))  # player 0 rolled the 3: player 0 plays 3-1
>>> game.turn, game.decision.value
(0, 'play')
>>> game.play("8/5 6/5")
>>> game.turn, sorted(a.value for a in game.legal_actions())
(1, ['double', 'resign', 'roll'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import NoReturn

from nard.core import Dice, NardError, Play, Position, check_dice
from nard.core.play_text import parse_play
from nard.match.dice import DiceSource
from nard.notation.records import Action, ActionKind

__all__ = [
    "Decision",
    "Game",
    "GameAction",
    "GameOptions",
    "GameResult",
    "MatchStateError",
    "ResultKind",
]


class MatchStateError(NardError):
    """An action that the rules do not allow in the current state."""


class Decision(StrEnum):
    """What the player whose turn it is must decide now."""

    OPENING_ROLL = "opening roll"  # both players roll one die
    ROLL = "roll"  # roll, or double first (or resign)
    PLAY = "play"  # the dice are rolled: play them (or resign)
    TAKE_OR_PASS = "take or pass"  # a double is offered (beaver too, where allowed)
    RACCOON_OR_ROLL = "raccoon or roll"  # after a beaver, the doubler may raccoon
    ACCEPT_OR_BEAVER = "accept or beaver"  # after a raccoon, the doubled side answers
    ANSWER_RESIGNATION = "answer resignation"  # accept or reject
    GAME_OVER = "game over"


class GameAction(StrEnum):
    """The actions a player can take."""

    OPENING_ROLL = "opening roll"
    ROLL = "roll"
    PLAY = "play"
    DOUBLE = "double"
    TAKE = "take"
    PASS = "pass"
    BEAVER = "beaver"
    RACCOON = "raccoon"
    RESIGN = "resign"
    ACCEPT = "accept"
    REJECT = "reject"


class ResultKind(StrEnum):
    """How a game ended."""

    SINGLE = "single"
    GAMMON = "gammon"
    BACKGAMMON = "backgammon"
    PASS = "pass"  # a double was passed (dropped)
    RESIGN = "resign"  # a resignation was accepted


@dataclass(frozen=True)
class GameResult:
    """The end of a game: ``winner`` scores ``points`` (= value x ``cube``)."""

    winner: int
    kind: ResultKind
    cube: int
    points: int


@dataclass(frozen=True)
class GameOptions:
    """The rules in force for one game.

    ``cube`` is False when the cube is out of play (cube off, or the Crawford
    game). ``cube_cap`` limits the cube's value (None: no limit, a money
    option). ``backgammon`` is what a backgammon counts (3, or 2 where that is
    the custom). ``jacoby``, ``beavers``, ``raccoons`` and
    ``automatic_doubles`` (the most per game; 0 = off) are money options.
    ``animals`` is the most beavers and raccoons in a row after one double
    (gnubg's ``set beavers N``; default 1 with beavers, 2 with raccoons).
    ``holland_player`` (post-Crawford, Holland rule) may not double before
    both sides have played two rolls.
    """

    cube: bool = True
    cube_cap: int | None = 64
    backgammon: int = 3
    jacoby: bool = False
    beavers: bool = False
    raccoons: bool = False
    automatic_doubles: int = 0
    holland_player: int | None = None
    crawford: bool = False
    animals: int | None = None

    def resignation_value(self, level: int) -> int:
        """What resigning a single (1), a gammon (2) or a backgammon (3) gives up, per
        cube: a backgammon counts as these rules count one (``backgammon``)."""
        return self.backgammon if level == 3 else level

    @property
    def animal_limit(self) -> int:
        """How many beavers and raccoons may follow one double."""
        if self.animals is not None:
            return self.animals
        return 2 if self.raccoons else 1 if self.beavers else 0

    def __post_init__(self) -> None:
        if self.backgammon not in (2, 3):
            raise ValueError(f"backgammon must count 2 or 3, not {self.backgammon!r}")
        if self.cube_cap is not None and (self.cube_cap < 1 or self.cube_cap & (self.cube_cap - 1)):
            raise ValueError(f"cube cap {self.cube_cap!r} must be a power of two")
        if self.automatic_doubles < 0:
            raise ValueError(f"automatic doubles {self.automatic_doubles!r} must be >= 0")
        if self.raccoons and not self.beavers:
            raise ValueError("raccoons need beavers")
        if self.animals is not None and (self.animals < 0 or not self.beavers):
            raise ValueError(f"animals {self.animals!r}: a limit of 0 or more, with beavers")
        if self.crawford and self.cube:
            raise ValueError("the cube is out of play in the Crawford game")


@dataclass
class _State:
    """Everything that changes during a game (copied before each action)."""

    decision: Decision = Decision.OPENING_ROLL
    turn: int = 0  # the player who must decide now
    on_roll: int = 0  # the player whose turn it is to roll and move
    position: Position = field(default_factory=Position)  # seen from ``on_roll``
    dice: Dice | None = None
    cube_value: int = 1
    cube_owner: int | None = None  # None: centred
    cube_turned: bool = False  # a double was taken (Jacoby counts gammons then)
    offered_resignation: int = 0
    resumes: Decision = Decision.ROLL  # where play goes on after a rejected resignation
    roll_recorded: bool = False  # the dice now rolled are already in ``actions``
    animals: int = 0  # beavers and raccoons since the last double
    automatic_doubles: int = 0
    rolls: list[int] = field(default_factory=lambda: [0, 0])
    result: GameResult | None = None
    actions: list[Action] = field(default_factory=list)
    # The legal plays of ``dice`` in ``position`` once asked for, with the two they
    # belong to: a turn asks several times (is the roll playable, which plays to
    # offer, is the play sent one of them), and a game that keeps its own does not
    # depend on the small cache every position shares.
    plays: tuple[Position, Dice, tuple[Play, ...]] | None = None


class Game:
    """One game between players 0 and 1, from the opening roll to its result."""

    def __init__(self, options: GameOptions | None = None, dice: DiceSource | None = None) -> None:
        self.options = options or GameOptions()
        self.dice_source = dice
        self._s = _State()

    @classmethod
    def from_position(
        cls,
        position: Position,
        on_roll: int,
        *,
        cube_value: int = 1,
        cube_owner: int | None = None,
        options: GameOptions | None = None,
        dice: DiceSource | None = None,
    ) -> Game:
        """A game set up at ``position`` (seen from ``on_roll``), about to roll.

        A cube above 1 with an owner counts as turned (for the Jacoby rule).
        """
        if on_roll not in (0, 1):
            raise ValueError(f"on_roll must be player 0 or 1, not {on_roll!r}")
        if cube_owner not in (None, 0, 1):
            raise ValueError(f"cube owner must be None, 0 or 1, not {cube_owner!r}")
        if cube_value < 1 or cube_value & (cube_value - 1):
            raise ValueError(f"cube value {cube_value!r} must be a power of two")
        if position.is_game_over():
            raise ValueError(f"position {position.position_id()} is already over")
        game = cls(options, dice)
        s = game._s
        s.position = position
        s.on_roll = s.turn = on_roll
        s.cube_value = cube_value
        s.cube_owner = cube_owner
        s.cube_turned = cube_owner is not None
        s.decision = Decision.ROLL
        return game

    # -- what the state is -------------------------------------------------
    @property
    def decision(self) -> Decision:
        """What the player whose turn it is must decide."""
        return self._s.decision

    @property
    def turn(self) -> int:
        """The player who must act now."""
        return self._s.turn

    @property
    def on_roll(self) -> int:
        """The player whose turn it is to roll and move."""
        return self._s.on_roll

    @property
    def position(self) -> Position:
        """The board, seen from the player on roll."""
        return self._s.position

    def position_for(self, player: int) -> Position:
        """The board seen from ``player``."""
        return self._s.position if player == self._s.on_roll else self._s.position.flip()

    @property
    def dice(self) -> Dice | None:
        """The dice to be played now (None before rolling)."""
        return self._s.dice

    @property
    def cube_value(self) -> int:
        return self._s.cube_value

    @property
    def cube_owner(self) -> int | None:
        """The player who owns the cube; None while it is in the centre."""
        return self._s.cube_owner

    @property
    def resignation(self) -> int | None:
        """The resignation awaiting its answer (1, 2 or 3 points per cube), or None."""
        if self._s.decision is not Decision.ANSWER_RESIGNATION:
            return None
        return self._s.offered_resignation

    @property
    def automatic_doubles(self) -> int:
        """Ties of the opening roll that doubled the cube (money, automatic doubles)."""
        return self._s.automatic_doubles

    @property
    def result(self) -> GameResult | None:
        """How the game ended; None while it goes on."""
        return self._s.result

    @property
    def is_over(self) -> bool:
        return self._s.result is not None

    @property
    def actions(self) -> tuple[Action, ...]:
        """Every action accepted so far, in order."""
        return tuple(self._s.actions)

    def legal_plays(self) -> list[Play]:
        """The plays of the rolled dice (empty before rolling)."""
        s = self._s
        return list(self._turn_plays()) if s.decision is Decision.PLAY and s.dice else []

    def _turn_plays(self) -> tuple[Play, ...]:
        """The legal plays of the dice rolled in the current position, kept by the game."""
        s = self._s
        assert s.dice is not None
        held = s.plays
        if held is not None and held[0] is s.position and held[1] == s.dice:
            return held[2]
        plays = tuple(s.position.legal_plays(s.dice))
        s.plays = (s.position, s.dice, plays)
        return plays

    def legal_actions(self) -> set[GameAction]:
        """The actions the player whose turn it is may take now."""
        s = self._s
        d = s.decision
        if d is Decision.OPENING_ROLL:
            return {GameAction.OPENING_ROLL}
        if d is Decision.ROLL:
            acts = {GameAction.ROLL, GameAction.RESIGN}
            if self._why_no_double() is None:
                acts.add(GameAction.DOUBLE)
            return acts
        if d is Decision.PLAY:
            return {GameAction.PLAY, GameAction.RESIGN}
        if d is Decision.TAKE_OR_PASS:
            acts = {GameAction.TAKE, GameAction.PASS}
            if self._why_no_animal(beaver=True) is None:
                acts.add(GameAction.BEAVER)
            return acts
        if d is Decision.ACCEPT_OR_BEAVER:
            acts = {GameAction.TAKE}
            if self._why_no_animal(beaver=True) is None:
                acts.add(GameAction.BEAVER)
            return acts
        if d is Decision.RACCOON_OR_ROLL:
            acts = {GameAction.ROLL, GameAction.RESIGN}
            if self._why_no_animal(beaver=False) is None:
                acts.add(GameAction.RACCOON)
            return acts
        if d is Decision.ANSWER_RESIGNATION:
            return {GameAction.ACCEPT, GameAction.REJECT}
        return set()

    # -- actions -----------------------------------------------------------
    def opening_roll(self, dice: Sequence[int] | None = None) -> None:
        """Both players roll one die (``dice[0]`` is player 0's); the higher plays both.

        Equal dice are rolled again: from the dice source at once, or by
        calling again when the dice are given. With automatic doubles (money)
        each tie, up to the agreed number, doubles the cube, which stays in
        the centre.
        """
        self._expect(GameAction.OPENING_ROLL, Decision.OPENING_ROLL)
        while True:
            d0, d1 = self._dice_or_roll(GameAction.OPENING_ROLL, dice, opening=True)
            if d0 != d1:
                break
            s = self._copy()
            if s.automatic_doubles < self.options.automatic_doubles and self._fits_cap(
                s.cube_value * 2
            ):
                s.automatic_doubles += 1
                s.cube_value *= 2
            self._s = s
            if dice is not None:
                return
        s = self._copy()
        starter = 0 if d0 > d1 else 1
        s.on_roll = s.turn = starter
        s.dice = (d0, d1) if starter == 0 else (d1, d0)
        s.decision = Decision.PLAY
        self._s = s
        self._after_roll()

    def roll(self, dice: Sequence[int] | None = None) -> None:
        """The player on roll rolls (from the dice source unless ``dice`` is given).

        When the roll cannot be played the turn passes at once.
        """
        s0 = self._s
        if s0.decision not in (Decision.ROLL, Decision.RACCOON_OR_ROLL):
            self._refuse(GameAction.ROLL, f"the game is waiting for: {s0.decision.value}")
        rolled = self._dice_or_roll(GameAction.ROLL, dice, opening=False)
        s = self._copy()
        s.dice = rolled
        s.decision = Decision.PLAY
        self._s = s
        self._after_roll()

    def _after_roll(self) -> None:
        s = self._s
        assert s.dice is not None
        s.rolls[s.on_roll] += 1
        if not self._turn_plays():
            s.actions.append(Action(s.on_roll, ActionKind.MOVE, dice=s.dice, play=""))
            self._pass_turn(s, s.position.flip())

    def play(self, play: Play | str) -> None:
        """Play the rolled dice: a :class:`Play` or its text (``8/5 6/5``)."""
        self._expect(GameAction.PLAY, Decision.PLAY)
        s0 = self._s
        assert s0.dice is not None
        try:
            if isinstance(play, str):
                chosen = parse_play(s0.position, play, s0.dice, self._turn_plays())
            else:
                chosen = play
                if chosen not in self._turn_plays():
                    raise ValueError(
                        f"{s0.position.format_play(chosen)!r} is not a legal play of "
                        f"{s0.dice[0]}-{s0.dice[1]} in {s0.position.position_id()}"
                    )
        except ValueError as exc:
            self._refuse(GameAction.PLAY, str(exc))
        s = self._copy()
        text = s.position.format_play(chosen)
        s.actions.append(Action(s.on_roll, ActionKind.MOVE, dice=s0.dice, play=text))
        outcome = chosen.result.outcome()
        if outcome:
            # The player who just moved has borne off the last checker.
            self._end(s, s.on_roll, -outcome, chosen.result)
        else:
            self._pass_turn(s, chosen.result)
        self._s = s

    def double(self) -> None:
        """Offer the cube, before rolling."""
        self._expect(GameAction.DOUBLE, Decision.ROLL)
        why = self._why_no_double()
        if why:
            self._refuse(GameAction.DOUBLE, why)
        s = self._copy()
        s.actions.append(Action(s.on_roll, ActionKind.DOUBLE, cube=s.cube_value * 2))
        s.animals = 0
        s.turn = 1 - s.on_roll
        s.decision = Decision.TAKE_OR_PASS
        self._s = s

    def take(self) -> None:
        """Accept the double: the stake doubles and the taker owns the cube.

        After a raccoon, accept it (the stake is already raised) and play on.
        """
        if self._s.decision is Decision.ACCEPT_OR_BEAVER:
            s = self._copy()
            s.actions.append(Action(s.turn, ActionKind.TAKE))
            s.turn = s.on_roll
            s.decision = Decision.ROLL
            self._s = s
            return
        self._expect(GameAction.TAKE, Decision.TAKE_OR_PASS)
        s = self._copy()
        s.actions.append(Action(s.turn, ActionKind.TAKE))
        s.cube_value *= 2
        s.cube_owner = s.turn
        s.cube_turned = True
        s.turn = s.on_roll
        s.decision = Decision.ROLL
        self._s = s

    def pass_double(self) -> None:
        """Refuse the double: the doubler wins the stake before the offer."""
        self._expect(GameAction.PASS, Decision.TAKE_OR_PASS)
        s = self._copy()
        s.actions.append(Action(s.turn, ActionKind.DROP))
        s.result = GameResult(s.on_roll, ResultKind.PASS, s.cube_value, s.cube_value)
        s.decision = Decision.GAME_OVER
        self._s = s

    drop = pass_double

    def beaver(self) -> None:
        """Take and at once redouble, keeping the cube (money play, when agreed).

        Also the answer to a raccoon, where more animals are agreed.
        """
        d = self._s.decision
        if d is not Decision.TAKE_OR_PASS and d is not Decision.ACCEPT_OR_BEAVER:
            self._refuse(GameAction.BEAVER, f"the game is waiting for: {d.value}")
        why = self._why_no_animal(beaver=True)
        if why:
            self._refuse(GameAction.BEAVER, why)
        s = self._copy()
        s.cube_value *= 4 if d is Decision.TAKE_OR_PASS else 2
        s.animals += 1
        s.actions.append(Action(s.turn, ActionKind.BEAVER, cube=s.cube_value))
        s.cube_owner = s.turn
        s.cube_turned = True
        s.turn = s.on_roll
        s.decision = Decision.RACCOON_OR_ROLL
        self._s = s

    def raccoon(self) -> None:
        """After a beaver, the doubler redoubles again.

        The cube stays with the side that was doubled, as gnubg has it: the
        animals raise the stake, not the ownership the take gave.
        """
        self._expect(GameAction.RACCOON, Decision.RACCOON_OR_ROLL)
        why = self._why_no_animal(beaver=False)
        if why:
            self._refuse(GameAction.RACCOON, why)
        s = self._copy()
        s.cube_value *= 2
        s.animals += 1
        s.actions.append(Action(s.on_roll, ActionKind.RACCOON, cube=s.cube_value))
        s.turn = 1 - s.on_roll
        s.decision = Decision.ACCEPT_OR_BEAVER
        self._s = s

    def resign(self, points: int = 1) -> None:
        """Offer to resign a single game (1), a gammon (2) or a backgammon (3)."""
        if self._s.decision not in (Decision.ROLL, Decision.PLAY, Decision.RACCOON_OR_ROLL):
            self._refuse(
                GameAction.RESIGN,
                f"resigning is offered on one's own turn; the game is waiting for: "
                f"{self._s.decision.value}",
            )
        if points not in (1, 2, 3):
            self._refuse(GameAction.RESIGN, f"a resignation is of 1, 2 or 3 points, not {points!r}")
        s = self._copy()
        self._record_unplayed_roll(s)
        s.actions.append(Action(s.on_roll, ActionKind.RESIGN, resign=points))
        s.offered_resignation = points
        s.resumes = s.decision
        s.turn = 1 - s.on_roll
        s.decision = Decision.ANSWER_RESIGNATION
        self._s = s

    def concede(self, player: int, points: int) -> None:
        """``player`` gives up the game for ``points`` (1-3) times the cube, at once.

        For records in which a resignation was offered and accepted off the
        resigner's turn (gnubg's ``.mat`` files keep only ``Wins N points``).
        """
        if self._s.decision in (Decision.OPENING_ROLL, Decision.GAME_OVER):
            self._refuse(GameAction.RESIGN, f"the game is waiting for: {self._s.decision.value}")
        if player not in (0, 1) or points not in (1, 2, 3):
            self._refuse(GameAction.RESIGN, f"player {player!r} cannot concede {points!r} points")
        s = self._copy()
        self._record_unplayed_roll(s)
        s.actions.append(Action(player, ActionKind.RESIGN, resign=points))
        s.actions.append(Action(1 - player, ActionKind.ACCEPT))
        points_won = self.options.resignation_value(points) * s.cube_value
        s.result = GameResult(1 - player, ResultKind.RESIGN, s.cube_value, points_won)
        s.decision = Decision.GAME_OVER
        self._s = s

    def accept(self) -> None:
        """Accept the resignation: the game ends for its value times the cube."""
        self._expect(GameAction.ACCEPT, Decision.ANSWER_RESIGNATION)
        s = self._copy()
        s.actions.append(Action(s.turn, ActionKind.ACCEPT))
        # The points offered stand as offered (as gnubg scores them): Jacoby
        # reduces only gammons won on the board; a backgammon counts what the rules
        # make it count (2 where so agreed).
        points = self.options.resignation_value(s.offered_resignation) * s.cube_value
        s.result = GameResult(s.turn, ResultKind.RESIGN, s.cube_value, points)
        s.decision = Decision.GAME_OVER
        self._s = s

    def reject(self) -> None:
        """Decline the resignation: play goes on where it was."""
        self._expect(GameAction.REJECT, Decision.ANSWER_RESIGNATION)
        s = self._copy()
        s.actions.append(Action(s.turn, ActionKind.REJECT))
        s.offered_resignation = 0
        s.turn = s.on_roll
        s.decision = s.resumes
        self._s = s

    # -- internals ---------------------------------------------------------
    def _copy(self) -> _State:
        s = self._s
        return replace(s, rolls=list(s.rolls), actions=list(s.actions))

    @staticmethod
    def _record_unplayed_roll(s: _State) -> None:
        """Rolled dice are kept even when the game ends before they are played
        (a move with ``play`` None: rolled, not played), so every die drawn
        stays in the record."""
        if s.decision is Decision.PLAY and s.dice and not s.roll_recorded:
            s.actions.append(Action(s.on_roll, ActionKind.MOVE, dice=s.dice, play=None))
            s.roll_recorded = True

    def _pass_turn(self, s: _State, next_position: Position) -> None:
        s.roll_recorded = False
        s.position = next_position
        s.on_roll = s.turn = 1 - s.on_roll
        s.dice = None
        s.plays = None  # the last turn's, kept no longer than the turn
        s.decision = Decision.ROLL

    def _end(self, s: _State, winner: int, value: int, final: Position) -> None:
        s.position = final
        s.on_roll = 1 - s.on_roll
        s.turn = s.on_roll
        s.dice = None
        s.plays = None
        kind = {1: ResultKind.SINGLE, 2: ResultKind.GAMMON, 3: ResultKind.BACKGAMMON}[value]
        counted = value
        if value == 3:
            counted = self.options.backgammon
        if self.options.jacoby and not s.cube_turned:
            counted = 1
        s.result = GameResult(winner, kind, s.cube_value, counted * s.cube_value)
        s.decision = Decision.GAME_OVER

    def _fits_cap(self, value: int) -> bool:
        cap = self.options.cube_cap
        return cap is None or value <= cap

    def _why_no_double(self) -> str | None:
        s, o = self._s, self.options
        if not o.cube:
            return (
                "the cube is out of play in the Crawford game"
                if o.crawford
                else ("the cube is not in use")
            )
        if s.cube_owner is not None and s.cube_owner != s.on_roll:
            return f"player {s.cube_owner} owns the cube"
        if not self._fits_cap(s.cube_value * 2):
            return f"the cube is at its limit ({o.cube_cap})"
        if o.holland_player == s.on_roll and min(s.rolls) < 2:
            return "Holland rule: the trailer may not double before both sides have rolled twice"
        return None

    def _why_no_animal(self, *, beaver: bool) -> str | None:
        """Why a beaver (or a raccoon) is not allowed now, or None."""
        o, s = self.options, self._s
        if not (o.beavers if beaver else o.raccoons):
            return ("beavers" if beaver else "raccoons") + " are not allowed in this game"
        if s.animals >= o.animal_limit:
            return f"no more than {o.animal_limit} beavers and raccoons after a double"
        factor = 4 if s.decision is Decision.TAKE_OR_PASS else 2
        if not self._fits_cap(s.cube_value * factor):
            return f"the cube would pass its limit ({o.cube_cap})"
        return None

    def _dice_or_roll(
        self, action: GameAction, dice: Sequence[int] | None, *, opening: bool
    ) -> Dice:
        if dice is None:
            if self.dice_source is None:
                self._refuse(action, "no dice were given and the game has no dice source")
            dice = self.dice_source.opening_roll() if opening else self.dice_source.roll()
        try:
            return check_dice(dice)
        except ValueError as exc:
            self._refuse(action, str(exc))

    def _expect(self, action: GameAction, decision: Decision) -> None:
        if self._s.decision is not decision:
            self._refuse(action, f"the game is waiting for: {self._s.decision.value}")

    def _refuse(self, action: GameAction, reason: str) -> NoReturn:
        s = self._s
        state = s.decision.value
        if s.decision is not Decision.GAME_OVER and s.decision is not Decision.OPENING_ROLL:
            state += f", player {s.turn} to act, position {s.position.position_id()}"
        raise MatchStateError(f"cannot {action.value} ({state}): {reason}")
