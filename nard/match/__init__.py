"""Games, matches, money sessions and chouette: the layer between the rules and the players."""

from __future__ import annotations

from nard.match.chouette import Chouette, ChouetteGame, ChouetteSettlement
from nard.match.dice import (
    CommitmentMismatchError,
    DiceExhaustedError,
    DiceMismatch,
    DiceSource,
    FairDice,
    FixedDice,
    InvalidFairDiceError,
    SeededDice,
    SeedRevealedError,
    fair_die,
    seed_commitment,
    verify_rolls,
)
from nard.match.game import (
    Decision,
    Game,
    GameAction,
    GameOptions,
    GameResult,
    MatchStateError,
    ResultKind,
)
from nard.match.match import Match, MatchRules, MoneyRules, Session
from nard.match.replay import RecordError, ReplayedGame, ReplayedMatch, replay

__all__ = [
    "Chouette",
    "ChouetteGame",
    "ChouetteSettlement",
    "CommitmentMismatchError",
    "Decision",
    "DiceExhaustedError",
    "DiceMismatch",
    "DiceSource",
    "FairDice",
    "FixedDice",
    "Game",
    "GameAction",
    "GameOptions",
    "GameResult",
    "InvalidFairDiceError",
    "Match",
    "MatchRules",
    "MatchStateError",
    "MoneyRules",
    "RecordError",
    "ReplayedGame",
    "ReplayedMatch",
    "ResultKind",
    "SeedRevealedError",
    "SeededDice",
    "Session",
    "fair_die",
    "replay",
    "seed_commitment",
    "verify_rolls",
]
