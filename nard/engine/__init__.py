"""Computer players and what they stand on.

- :mod:`~nard.engine.evaluator`: the ``Evaluator`` seam (gnubg's five
  probabilities, seen from the side on roll before it rolls) and a fake one;
- :mod:`~nard.engine.player`: the ``Player`` seam, 0-ply evaluator players,
  a random player and a fast game loop for benchmarks;
- :mod:`~nard.engine.pubeval`: Tesauro's pubeval, the public benchmark player;
- :mod:`~nard.engine.heuristic`: the hand-written player used by ``nard play``
  until the neural engine exists;
- :mod:`~nard.engine.bearoff`: nard's exact one-sided bear-off database.
"""

from __future__ import annotations

from nard.engine.bearoff import (
    BearoffDatabase,
    BearoffDatabaseError,
    NotBearoffError,
    bearoff_index,
    home_checkers,
    is_bearoff,
)
from nard.engine.evaluator import Evaluator, FakeEvaluator, cubeless_equity
from nard.engine.heuristic import HeuristicPlayer, heuristic_score
from nard.engine.player import EvaluatorPlayer, Player, RandomPlayer, play_game
from nard.engine.pubeval import PubevalPlayer

__all__ = [
    "BearoffDatabase",
    "BearoffDatabaseError",
    "Evaluator",
    "EvaluatorPlayer",
    "FakeEvaluator",
    "HeuristicPlayer",
    "NotBearoffError",
    "Player",
    "PubevalPlayer",
    "RandomPlayer",
    "bearoff_index",
    "cubeless_equity",
    "heuristic_score",
    "home_checkers",
    "is_bearoff",
    "play_game",
]
