"""Games, matches and money sessions: the layer between the rules and the players."""

from __future__ import annotations

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
    DiceRoller,
    Game,
    GameAction,
    GameOptions,
    GameResult,
    MatchStateError,
    ResultKind,
)

__all__ = [
    "CommitmentMismatchError",
    "Decision",
    "DiceExhaustedError",
    "DiceMismatch",
    "DiceRoller",
    "DiceSource",
    "FairDice",
    "FixedDice",
    "Game",
    "GameAction",
    "GameOptions",
    "GameResult",
    "InvalidFairDiceError",
    "MatchStateError",
    "ResultKind",
    "SeedRevealedError",
    "SeededDice",
    "fair_die",
    "seed_commitment",
    "verify_rolls",
]
