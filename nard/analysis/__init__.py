"""Match analysis: every decision judged by the engine, error rates, PR, luck, rating.

``nard analyse FILE`` (:mod:`nard.cli.analyse`) and the server's analysis jobs call
:func:`analyse`; docs/analysis.md gives every figure's formula and source. This
package sits above :mod:`nard.engine` and :mod:`nard.match`, beside
:mod:`nard.computer`.
"""

from nard.analysis.analyse import (
    DEFAULT_PLIES,
    Decision,
    GameSummary,
    MatchAnalysis,
    Roll,
    analyse,
)
from nard.analysis.analyst import Analyst, Candidate, TurnTask, TurnVerdict
from nard.analysis.stats import PlayerStats, Skill

__all__ = [
    "DEFAULT_PLIES",
    "Analyst",
    "Candidate",
    "Decision",
    "GameSummary",
    "MatchAnalysis",
    "PlayerStats",
    "Roll",
    "Skill",
    "TurnTask",
    "TurnVerdict",
    "analyse",
]
