"""Computer players and what they stand on.

- :mod:`~nard.engine.evaluator`: the ``Evaluator`` seam (gnubg's five
  probabilities, seen from the side on roll before it rolls) and a fake one;
- :mod:`~nard.engine.player`: the ``Player`` seam, 0-ply evaluator players,
  a random player and a fast game loop for benchmarks;
- :mod:`~nard.engine.pubeval`: Tesauro's pubeval, the public benchmark player;
- :mod:`~nard.engine.heuristic`: the hand-written player used by ``nard play``
  until the neural engine exists;
- :mod:`~nard.engine.bearoff`: nard's exact one-sided bear-off database;
- :mod:`~nard.engine.encoding`, :mod:`~nard.engine.network`: the neural
  evaluator's inputs and networks (trained by :mod:`nard.training`, which the
  engine does not import);
- :mod:`~nard.engine.search`: 0/1/2-ply search with gnubg-style move filters;
- :mod:`~nard.engine.luck`, :mod:`~nard.engine.rollout`: a roll's luck against
  the 1-ply average, and the luck-corrected rollout trials of ``nard rollout``;
- :mod:`~nard.engine.engine`: ``Engine(level=...)``, the one entry point for
  harnesses, the CLI (``nard hint``) and the server;
- :mod:`~nard.engine.cube`: cube decisions for money (Janowski) and match play
  (Kazaross-XG2 match equity table), as gnubg makes them at 0-ply.
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
from nard.engine.cube import (
    KAZAROSS_XG2,
    CubeContext,
    CubeDecision,
    CubeOwner,
    MatchEquityTable,
    cube_decision,
    cube_efficiency,
    cubeful_equity,
    money_take_point,
)
from nard.engine.encoding import ENCODING_VERSION, INPUTS, encode
from nard.engine.engine import (
    DEFAULT_WEIGHTS,
    LEVEL_SETTINGS,
    Engine,
    Level,
    LevelSettings,
    PipCube,
    load_evaluator,
    pip_count_cube,
)
from nard.engine.evaluator import Evaluator, FakeEvaluator, cubeless_equity
from nard.engine.heuristic import HeuristicPlayer, heuristic_score
from nard.engine.network import Network, NeuralEvaluator, PruningEvaluator, WeightsError
from nard.engine.player import EvaluatorPlayer, Player, RandomPlayer, play_game
from nard.engine.pubeval import PubevalPlayer
from nard.engine.search import (
    DEFAULT_FILTER,
    GNUBG_FILTERS,
    WORLD_CLASS_FILTER,
    FilterStep,
    MoveFilter,
    Pruning,
    RankedPlay,
    SearchPlayer,
    best_play,
    evaluate_ply,
    rank_plays,
)

__all__ = [
    "DEFAULT_FILTER",
    "DEFAULT_WEIGHTS",
    "ENCODING_VERSION",
    "GNUBG_FILTERS",
    "INPUTS",
    "KAZAROSS_XG2",
    "LEVEL_SETTINGS",
    "WORLD_CLASS_FILTER",
    "BearoffDatabase",
    "BearoffDatabaseError",
    "CubeContext",
    "CubeDecision",
    "CubeOwner",
    "Engine",
    "Evaluator",
    "EvaluatorPlayer",
    "FakeEvaluator",
    "FilterStep",
    "HeuristicPlayer",
    "Level",
    "LevelSettings",
    "MatchEquityTable",
    "MoveFilter",
    "Network",
    "NeuralEvaluator",
    "NotBearoffError",
    "PipCube",
    "Player",
    "Pruning",
    "PruningEvaluator",
    "PubevalPlayer",
    "RandomPlayer",
    "RankedPlay",
    "SearchPlayer",
    "WeightsError",
    "bearoff_index",
    "best_play",
    "cube_decision",
    "cube_efficiency",
    "cubeful_equity",
    "cubeless_equity",
    "encode",
    "evaluate_ply",
    "heuristic_score",
    "home_checkers",
    "is_bearoff",
    "load_evaluator",
    "money_take_point",
    "pip_count_cube",
    "play_game",
    "rank_plays",
]
