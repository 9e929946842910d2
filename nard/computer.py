"""The computer at a table: what an engine does when a game asks its seat to act.

:func:`computer_command` turns the decision a :class:`~nard.match.Game` waits
for into a :class:`~nard.match.commands.Command` chosen by an
:class:`~nard.engine.Engine` (play, double, take, pass, beaver, answer a
resignation) with the cube and the score of the match or session. The terminal
game and the server both use it, so the computer behaves the same wherever it
sits. Any other :class:`~nard.engine.Player` only plays: it never doubles,
takes every double and accepts every resignation.

>>> from nard.engine import Engine
>>> from nard.match import Game, FixedDice
>>> game = Game(dice=FixedDice([(3, 1)]))
>>> computer_command(Engine("expert"), game, 0, (0, 0)).action.value
'opening roll'
>>> game.opening_roll()
>>> computer_command(Engine("expert"), game, 0, (0, 0)).play
'8/5 6/5'
"""

from __future__ import annotations

from dataclasses import dataclass

from nard.core import Position
from nard.core.dice import Dice
from nard.engine import Engine, Player
from nard.engine.cube import CubeContext
from nard.match.commands import Command
from nard.match.game import Decision, Game, GameAction, GameOptions

__all__ = ["DecisionSnapshot", "computer_command", "cube_context", "forced_command"]


@dataclass(frozen=True)
class DecisionSnapshot:
    """What a decision of a game depends on, as a small value: a process that thinks
    for the computer is sent this rather than the game (whose dice it must not see).

    >>> from nard.match import FixedDice
    >>> game = Game(dice=FixedDice([(3, 1)]))
    >>> game.opening_roll()
    >>> snap = DecisionSnapshot.of(game)
    >>> computer_command(Engine("expert"), snap, 0, (0, 0)).play
    '8/5 6/5'
    """

    decision: Decision
    legal: frozenset[GameAction]
    position: Position
    dice: Dice | None
    on_roll: int
    cube_value: int
    cube_owner: int | None
    options: GameOptions
    resignation: int | None

    @classmethod
    def of(cls, game: Game) -> DecisionSnapshot:
        return cls(
            decision=game.decision,
            legal=frozenset(game.legal_actions()),
            position=game.position,
            dice=game.dice,
            on_roll=game.on_roll,
            cube_value=game.cube_value,
            cube_owner=game.cube_owner,
            options=game.options,
            resignation=game.resignation,
        )

    def legal_actions(self) -> frozenset[GameAction]:
        return self.legal


def cube_context(
    game: Game | DecisionSnapshot, player: int, match_length: int, score: tuple[int, int]
) -> CubeContext:
    """The engine's view of ``game``'s cube and the ``score`` (by seat) for seat ``player``."""
    options = game.options
    return CubeContext.for_player(
        player,
        game.cube_value,
        game.cube_owner,
        match_length,
        score,
        crawford=options.crawford,
        jacoby=options.jacoby,
        beavers=options.beavers,
    )


def forced_command(game: Game | DecisionSnapshot) -> Command | None:
    """The command when the decision leaves no choice, whoever makes it: the opening
    roll, a roll when doubling is not allowed, the only legal play; else ``None``.

    A server answers these at once, without asking the engine's processes.

    >>> from nard.match import FixedDice
    >>> game = Game(dice=FixedDice([(3, 1)]))
    >>> forced_command(game).action.value
    'opening roll'
    >>> game.opening_roll()
    >>> forced_command(game) is None  # 3-1 can be played many ways
    True
    """
    decision = game.decision
    if decision is Decision.OPENING_ROLL:
        return Command(GameAction.OPENING_ROLL)
    if decision in (Decision.ROLL, Decision.RACCOON_OR_ROLL):
        if GameAction.DOUBLE not in game.legal_actions():
            return Command(GameAction.ROLL)
        return None
    if decision is Decision.PLAY and game.dice is not None:
        plays = (
            game.legal_plays() if isinstance(game, Game) else game.position.legal_plays(game.dice)
        )
        if len(plays) == 1:
            return Command(GameAction.PLAY, play=game.position.format_play(plays[0]))
    return None


def computer_command(
    computer: Player,
    game: Game | DecisionSnapshot,
    match_length: int,
    score: tuple[int, int],
) -> Command:
    """The command ``computer`` gives for the decision ``game`` waits for.

    ``match_length`` is 0 for money play; ``score`` is by seat. The game (or
    its :class:`DecisionSnapshot`) is only read. A game that is over has no
    command (``ValueError``).
    """
    if isinstance(game, Game):
        game = DecisionSnapshot.of(game)
    forced = forced_command(game)
    if forced is not None:
        return forced
    decision = game.decision
    legal = game.legal_actions()
    engine = computer if isinstance(computer, Engine) else None
    if decision in (Decision.ROLL, Decision.RACCOON_OR_ROLL):
        if (
            engine is not None
            and GameAction.DOUBLE in legal
            and engine.doubles(game.position, cube_context(game, game.on_roll, match_length, score))
        ):
            return Command(GameAction.DOUBLE)
        return Command(GameAction.ROLL)
    if decision is Decision.PLAY:
        dice = game.dice
        assert dice is not None
        if engine is not None:
            context = cube_context(game, game.on_roll, match_length, score)
            play = engine.best_play(game.position, dice, match=context)
        else:
            play = computer.choose_play(game.position, dice)
        assert play is not None  # an unplayable roll passes the turn at once
        return Command(GameAction.PLAY, play=game.position.format_play(play))
    if decision in (Decision.TAKE_OR_PASS, Decision.ACCEPT_OR_BEAVER):
        if engine is None:
            return Command(GameAction.TAKE)
        verdict = engine.cube_action(
            game.position, cube_context(game, game.on_roll, match_length, score)
        )
        if verdict.beaver and GameAction.BEAVER in legal:
            return Command(GameAction.BEAVER)
        if verdict.take or GameAction.PASS not in legal:
            return Command(GameAction.TAKE)
        return Command(GameAction.PASS)
    if decision is Decision.ANSWER_RESIGNATION:
        if engine is None:
            return Command(GameAction.ACCEPT)
        offered = game.resignation
        assert offered is not None
        # The resigner is on roll: its equity, negated, is the computer's points per cube,
        # with backgammons counted as the rules count them (2 where so agreed), and the
        # offer is worth what accepting it scores.
        probs, equity = engine.evaluate(game.position)
        counted = game.options.backgammon
        if counted != 3:
            equity -= (3 - counted) * (probs[2] - probs[4])
        worth = game.options.resignation_value(offered)
        return Command(GameAction.ACCEPT if worth >= -equity else GameAction.REJECT)
    raise ValueError(f"the game is over: there is nothing to decide ({decision.value})")
