"""The player seam: anything that picks a play for a roll, and the simple players.

A :class:`Player` is asked for its play with ``choose_play(position, dice)``
and answers one of ``position.legal_plays(dice)``, or ``None`` when there is
none. Players here:

- :class:`EvaluatorPlayer`: 0-ply search with any :class:`Evaluator`;
- :class:`~nard.engine.pubeval.PubevalPlayer`: Tesauro's benchmark evaluator;
- :class:`RandomPlayer`: a uniformly random legal play, from a seed;
- :class:`~nard.engine.heuristic.HeuristicPlayer` satisfies the protocol too.

>>> players: list[Player] = [RandomPlayer(1), PubevalPlayer(), HeuristicPlayer()]
>>> all(isinstance(p, Player) for p in players)
True
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from nard.core.position import Play, Position
from nard.engine.evaluator import Evaluator, cubeless_equity
from nard.engine.heuristic import HeuristicPlayer
from nard.engine.pubeval import PubevalPlayer

__all__ = [
    "EvaluatorPlayer",
    "HeuristicPlayer",
    "Player",
    "PubevalPlayer",
    "RandomPlayer",
    "play_game",
]


@runtime_checkable
class Player(Protocol):
    """Anything that chooses a play: the seam between games and engines."""

    def choose_play(self, position: Position, dice: Sequence[int]) -> Play | None:
        """One of ``position.legal_plays(dice)``, or ``None`` when that list is empty."""
        ...


class _Dice(Protocol):
    # The part of nard.match.dice.DiceSource a game needs (the engine does not import match).
    def roll(self) -> tuple[int, int]: ...

    def opening_roll(self) -> tuple[int, int]: ...


def play_game(first: Player, second: Player, dice: _Dice) -> int:
    """Play one cubeless game to the end; the points ``first`` won (negative: lost).

    ``first`` sits in seat 0 and gets the first die of each opening roll (tied
    opening rolls are rolled again); the winner of the opening roll plays it,
    then each turn takes the next :meth:`roll`. So playing the same dice again
    with the players swapped gives each *seat* the same rolls: duplicate dice.
    Returns 1, 2 or 3 for a single game, gammon or backgammon won by ``first``.

    >>> from nard.match.dice import SeededDice
    >>> play_game(PubevalPlayer(), RandomPlayer(1), SeededDice(4))
    3
    """
    players = (first, second)
    d0, d1 = dice.opening_roll()
    while d0 == d1:
        d0, d1 = dice.opening_roll()
    seat = 0 if d0 > d1 else 1
    position = Position()
    roll: Sequence[int] = (d0, d1)
    while True:
        play = players[seat].choose_play(position, roll)
        if play is None:
            position = position.flip()
        else:
            position = play.result
            if min(position) >= 0:  # the mover has no checker left: it has won
                won = -position.outcome()
                return won if seat == 0 else -won
        seat = 1 - seat
        roll = dice.roll()


class EvaluatorPlayer:
    """0-ply: the play whose result has the best cubeless equity for the mover.

    All the candidate results of a roll go to the evaluator in one batch. Each
    ``play.result`` is seen from the opponent (on roll next), so the mover's
    equity is ``-cubeless_equity(evaluate(result))``. Ties go to the first play
    generated; a roll with a single legal play is not evaluated.

    >>> from nard.engine.evaluator import FakeEvaluator
    >>> pos = Position.from_points({6: 1, 2: 1}, {13: 15})
    >>> pos.format_play(EvaluatorPlayer(FakeEvaluator()).choose_play(pos, (6, 1)))
    '6/off 2/1'
    """

    def __init__(self, evaluator: Evaluator, name: str = "evaluator") -> None:
        self.evaluator = evaluator
        self.name = name

    def __repr__(self) -> str:
        return f"EvaluatorPlayer({self.evaluator!r})"

    def choose_play(self, position: Position, dice: Sequence[int]) -> Play | None:
        """The chosen play, or ``None`` when the roll cannot be played."""
        return self.choose_among(position.legal_plays(dice))

    def choose_among(self, plays: Sequence[Play]) -> Play | None:
        """The best of a roll's legal ``plays`` (as :meth:`choose_play` picks), or ``None``."""
        if len(plays) <= 1:
            return plays[0] if plays else None
        # A play that ends the game is worth exactly what it wins: take the
        # best of those rather than trust an estimate of playing on.
        finishing = [p for p in plays if p.result.outcome()]
        if finishing:
            return min(finishing, key=lambda p: p.result.outcome())
        opponent_equity = cubeless_equity(self.evaluator.evaluate([p.result for p in plays]))
        return plays[int(np.argmin(opponent_equity))]


class RandomPlayer:
    """A uniformly random legal play, repeatable from ``seed``.

    >>> a, b = RandomPlayer(3), RandomPlayer(3)
    >>> a.choose_play(Position(), (6, 2)) == b.choose_play(Position(), (6, 2))
    True
    """

    name = "random"

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._rng = random.Random(seed)

    def __repr__(self) -> str:
        return f"RandomPlayer({self.seed!r})"

    def choose_play(self, position: Position, dice: Sequence[int]) -> Play | None:
        """A random legal play, or ``None`` when the roll cannot be played."""
        plays = position.legal_plays(dice)
        return self._rng.choice(plays) if plays else None
