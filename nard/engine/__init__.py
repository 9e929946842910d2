"""Computer players and what they stand on.

- :mod:`~nard.engine.evaluator`: the ``Evaluator`` seam (gnubg's five
  probabilities, seen from the side on roll before it rolls) and a fake one;
- :mod:`~nard.engine.player`: the ``Player`` seam, 0-ply evaluator players,
  a random player and a fast game loop for benchmarks;
- :mod:`~nard.engine.pubeval`: Tesauro's pubeval, the public benchmark player;
- :mod:`~nard.engine.heuristic`: the hand-written player used by ``nard play``
  until the neural engine exists;
- :mod:`~nard.engine.bearoff`: nard's exact one-sided bear-off database;
- :mod:`~nard.engine.encoding`, :mod:`~nard.engine.network`,
  :mod:`~nard.engine.train`: the neural evaluator's inputs, network and
  TD(lambda) self-play training (``nard train``).
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
from nard.engine.encoding import ENCODING_VERSION, INPUTS, encode
from nard.engine.evaluator import Evaluator, FakeEvaluator, cubeless_equity
from nard.engine.heuristic import HeuristicPlayer, heuristic_score
from nard.engine.network import Network, NeuralEvaluator, WeightsError
from nard.engine.player import EvaluatorPlayer, Player, RandomPlayer, play_game
from nard.engine.pubeval import PubevalPlayer
from nard.engine.train import TrainConfig, TrainingError, benchmark_vs_pubeval, train

__all__ = [
    "ENCODING_VERSION",
    "INPUTS",
    "BearoffDatabase",
    "BearoffDatabaseError",
    "Evaluator",
    "EvaluatorPlayer",
    "FakeEvaluator",
    "HeuristicPlayer",
    "Network",
    "NeuralEvaluator",
    "NotBearoffError",
    "Player",
    "PubevalPlayer",
    "RandomPlayer",
    "TrainConfig",
    "TrainingError",
    "WeightsError",
    "bearoff_index",
    "benchmark_vs_pubeval",
    "cubeless_equity",
    "encode",
    "heuristic_score",
    "home_checkers",
    "is_bearoff",
    "play_game",
    "train",
]
