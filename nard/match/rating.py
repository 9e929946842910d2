"""Player ratings by the FIBS formula (docs/ratings.md).

The First Internet Backgammon Server's ``help formula``, as FIBS states it: in an
``n``-point match between players rated ``r1`` and ``r2``,

- ``D = |r1 - r2|``;
- the underdog's chance to win, ``P_upset = 1 / (10 ** (D * sqrt(n) / 2000) + 1)``;
- ``P = 1 - P_upset`` if the underdog wins, ``P_upset`` if the favourite wins;
- each player's experience factor ``K = max(1, 5 - experience / 100)``, where the
  experience is the sum of the lengths of the matches the player has finished
  (before this one);
- the winner gains ``4 * K * sqrt(n) * P``, the loser loses ``4 * K * sqrt(n) * P``
  with the loser's own ``K``.

Every player starts at 1500 with experience 0. Only a player's own experience
scales its change, so while one side is new the changes are not equal and
opposite.

>>> change = rate_match(RatingState(1500.0, 0), RatingState(1500.0, 0), 5)
>>> round(change.winner_gain, 4), round(change.loser_loss, 4)
(22.3607, 22.3607)
>>> favourite = rate_match(RatingState(1800.0, 1000), RatingState(1600.0, 1000), 7)
>>> round(favourite.winner_gain, 3), round(favourite.loser_loss, 3)
(3.728, 3.728)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = [
    "INITIAL_EXPERIENCE",
    "INITIAL_RATING",
    "RatingChange",
    "RatingState",
    "experience_factor",
    "rate_match",
    "upset_probability",
    "win_probability",
]

INITIAL_RATING = 1500.0
"""Every player's rating before its first rated match (FIBS)."""

INITIAL_EXPERIENCE = 0
"""Every player's experience before its first rated match (FIBS)."""


@dataclass(frozen=True)
class RatingState:
    """A player's rating and experience (the sum of the lengths of the rated matches
    it has finished)."""

    rating: float = INITIAL_RATING
    experience: int = INITIAL_EXPERIENCE

    def __post_init__(self) -> None:
        if not math.isfinite(self.rating):
            raise ValueError(f"a rating must be a finite number, not {self.rating!r}")
        if self.experience < 0:
            raise ValueError(f"experience must be >= 0, not {self.experience!r}")


@dataclass(frozen=True)
class RatingChange:
    """What one rated match does to its two players: their states after it, and the
    points the winner gained and the loser lost (each >= 0)."""

    winner: RatingState
    loser: RatingState
    winner_gain: float
    loser_loss: float


def upset_probability(difference: float, length: int) -> float:
    """The chance that the lower-rated player wins an ``length``-point match against
    one rated ``difference`` points higher (FIBS's ``P_upset``).

    >>> upset_probability(0, 7)
    0.5
    >>> round(1 - upset_probability(100, 7), 3)  # the favourite's, bkgm.com's table
    0.576
    """
    _check_length(length)
    d = abs(difference)
    return 1.0 / (math.pow(10.0, d * math.sqrt(length) / 2000.0) + 1.0)


def win_probability(rating: float, opponent: float, length: int) -> float:
    """The chance that a player rated ``rating`` wins a ``length``-point match against
    one rated ``opponent``, by the formula.

    >>> round(win_probability(1600, 1500, 1), 3), round(win_probability(1500, 1600, 1), 3)
    (0.529, 0.471)
    """
    upset = upset_probability(rating - opponent, length)
    return 1.0 - upset if rating > opponent else upset if rating < opponent else 0.5


def experience_factor(experience: int) -> float:
    """FIBS's ``K``: 5 for a new player, down by 1 each 100 points of experience, 1
    from 400 on.

    >>> [round(experience_factor(e), 2) for e in (0, 50, 100, 399, 400, 5000)]
    [5.0, 4.5, 4.0, 1.01, 1.0, 1.0]
    """
    if experience < 0:
        raise ValueError(f"experience must be >= 0, not {experience!r}")
    return max(1.0, 5.0 - experience / 100.0)


def rate_match(winner: RatingState, loser: RatingState, length: int) -> RatingChange:
    """The ratings after ``winner`` beat ``loser`` in a ``length``-point match; each
    player's experience grows by ``length``."""
    _check_length(length)
    upset = upset_probability(winner.rating - loser.rating, length)
    # P: the chance of the result that did not happen, by the formula.
    p = 1.0 - upset if winner.rating < loser.rating else upset
    stake = 4.0 * math.sqrt(length) * p
    gain = experience_factor(winner.experience) * stake
    loss = experience_factor(loser.experience) * stake
    return RatingChange(
        RatingState(winner.rating + gain, winner.experience + length),
        RatingState(loser.rating - loss, loser.experience + length),
        gain,
        loss,
    )


def _check_length(length: int) -> None:
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise ValueError(f"a rated match is 1 point or longer, not {length!r}")
