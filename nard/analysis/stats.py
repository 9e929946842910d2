"""The figures of an analysis: marks, error rates, PR, luck, rating (docs/analysis.md).

Every formula here is GNU Backgammon's (1.07, ``analysis.c`` and ``formatgs.c``)
or eXtreme Gammon's published definition, restated; docs/analysis.md gives the
sources.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from nard.engine.cube import KAZAROSS_XG2_64, CubeContext
from nard.notation.records import MatchRecord

if TYPE_CHECKING:
    from nard.analysis.analyse import Decision, Roll

__all__ = [
    "BLUNDER",
    "DOUBTFUL",
    "ERROR",
    "LUCKY",
    "VERY_LUCKY",
    "Luck",
    "PlayerStats",
    "Skill",
    "equity_to_mwc",
    "fibs_rating",
    "luck_of",
    "met_equity",
    "mwc_of",
    "player_stats",
    "skill_of",
]

DOUBTFUL = 0.03
ERROR = 0.06
BLUNDER = 0.12
"""gnubg 1.07's default marks (``arSkillLevel``): equity lost above 0.03 is
doubtful, above 0.06 bad (an error), above 0.12 very bad (a blunder)."""

LUCKY = 0.3
VERY_LUCKY = 0.6
"""gnubg's luck marks (``arLuckLevel``): a roll worth more than 0.3 is lucky, more
than 0.6 very lucky; the same below zero unlucky and very unlucky."""

RATING_OFFSET = 2050.0
"""gnubg's ``rRatingOffset``: the rating of a player who makes no errors."""

PR_SCALE = 500.0
"""eXtreme Gammon's PR: 500 x the equity lost per non-obvious decision."""


class Skill(enum.StrEnum):
    """How bad a decision was, by :data:`DOUBTFUL`, :data:`ERROR` and :data:`BLUNDER`."""

    NONE = ""
    DOUBTFUL = "doubtful"
    ERROR = "error"
    BLUNDER = "blunder"


class Luck(enum.StrEnum):
    """How lucky a roll was, by :data:`LUCKY` and :data:`VERY_LUCKY`."""

    VERY_UNLUCKY = "very unlucky"
    UNLUCKY = "unlucky"
    NONE = ""
    LUCKY = "lucky"
    VERY_LUCKY = "very lucky"


def skill_of(error: float) -> Skill:
    """The mark of a decision that lost ``error`` (gnubg's ``Skill``: strictly above).

    >>> [skill_of(e).value for e in (0.03, 0.031, 0.07, 0.2)]
    ['', 'doubtful', 'error', 'blunder']
    """
    if error > BLUNDER:
        return Skill.BLUNDER
    if error > ERROR:
        return Skill.ERROR
    if error > DOUBTFUL:
        return Skill.DOUBTFUL
    return Skill.NONE


def luck_of(luck: float) -> Luck:
    """The mark of a roll worth ``luck``.

    >>> luck_of(0.7).value, luck_of(-0.31).value, luck_of(0.1).value
    ('very lucky', 'unlucky', '')
    """
    if luck > VERY_LUCKY:
        return Luck.VERY_LUCKY
    if luck > LUCKY:
        return Luck.LUCKY
    if luck < -VERY_LUCKY:
        return Luck.VERY_UNLUCKY
    if luck < -LUCKY:
        return Luck.UNLUCKY
    return Luck.NONE


def mwc_of(ctx: CubeContext) -> tuple[float, float]:
    """The side on roll's match winning chances after winning and after losing a single
    game at ``ctx``'s cube: the two ends of gnubg's normalised equity (+1 and -1).

    >>> win, lose = mwc_of(CubeContext(match_length=7, score=(0, 0)))
    >>> round(win, 4), round(lose, 4)
    (0.5626, 0.4374)
    """
    met = ctx.met
    away0, away1 = ctx.away
    post = ctx.crawford or 1 in (away0, away1)
    return (
        met.equity(away0 - ctx.cube, away1, post),
        met.equity(away0, away1 - ctx.cube, post),
    )


def equity_to_mwc(equity: float, ctx: CubeContext) -> float:
    """The side on roll's match winning chances from its normalised equity (gnubg's
    ``eq2mwc``: -1 is losing a single game at ``ctx``'s cube, +1 winning one).

    >>> round(equity_to_mwc(0.0, CubeContext(match_length=7, score=(0, 0))), 4)
    0.5
    """
    win, lose = mwc_of(ctx)
    return lose + (equity + 1.0) / 2.0 * (win - lose)


def met_equity(length: int, score: tuple[int, int], post_crawford: bool) -> float:
    """Player 0's match winning chances at ``score`` in a match to ``length``
    (``post_crawford``: a 1-away score is after the Crawford game).

    >>> met_equity(5, (4, 0), False) > met_equity(5, (4, 0), True)
    True
    """
    return KAZAROSS_XG2_64.equity(length - score[0], length - score[1], post_crawford)


def fibs_rating(checker_rate: float, cube_rate: float, length: int) -> float:
    """gnubg's "error based absolute FIBS rating" (Kees van den Doel's fit):
    ``2050 - EPM (8798 + 25526 / N) - EPC (863 - 519 / N)``, with EPM the checker
    error per unforced move and EPC the cube error per close cube decision
    (normalised equity, not x1000) and N the match length.

    >>> round(fibs_rating(0.0, 0.0, 7))
    2050
    >>> round(fibs_rating(0.005, 0.01, 7))
    1980
    """
    return (
        RATING_OFFSET
        - checker_rate * (8798.0 + 25526.0 / length)
        - cube_rate * (863.0 - 519.0 / length)
    )


@dataclass(frozen=True)
class PlayerStats:
    """One player's figures (error rates x1000 in normalised equity, gnubg's mEMG)."""

    seat: int
    name: str
    total_moves: int
    unforced_moves: int
    checker_error: float
    checker_error_rate: float
    checker_marks: dict[str, int]
    cube_decisions: int
    cube_decisions_total: int
    cube_error: float
    cube_error_rate: float
    cube_marks: dict[str, int]
    error_rate: float
    snowie_error_rate: float
    pr: float
    pr_decisions: int
    luck: float
    luck_rate: float
    luck_marks: dict[str, int]
    actual_result: float
    luck_adjusted_result: float
    rating: float | None
    checker_error_mwc: float | None
    cube_error_mwc: float | None
    luck_mwc: float | None

    def to_json(self) -> dict[str, Any]:
        def r(value: float | None, digits: int = 4) -> float | None:
            return None if value is None else round(value, digits)

        return {
            "name": self.name,
            "seat": self.seat,
            "total_moves": self.total_moves,
            "unforced_moves": self.unforced_moves,
            "checker_error": r(self.checker_error, 6),
            "checker_error_rate": r(self.checker_error_rate, 2),
            "checker_marks": self.checker_marks,
            "cube_decisions": self.cube_decisions,
            "cube_decisions_total": self.cube_decisions_total,
            "cube_error": r(self.cube_error, 6),
            "cube_error_rate": r(self.cube_error_rate, 2),
            "cube_marks": self.cube_marks,
            "error_rate": r(self.error_rate, 2),
            "snowie_error_rate": r(self.snowie_error_rate, 2),
            "pr": r(self.pr, 2),
            "pr_decisions": self.pr_decisions,
            "luck": r(self.luck),
            "luck_rate": r(self.luck_rate, 2),
            "luck_marks": self.luck_marks,
            "actual_result": r(self.actual_result),
            "luck_adjusted_result": r(self.luck_adjusted_result),
            "rating": None if self.rating is None else round(self.rating),
            "checker_error_mwc": r(self.checker_error_mwc, 6),
            "cube_error_mwc": r(self.cube_error_mwc, 6),
            "luck_mwc": r(self.luck_mwc, 6),
        }


def _per(total: float, count: int, scale: float = 1000.0) -> float:
    return scale * total / count if count else 0.0


def _marks(decisions: Sequence[Decision]) -> dict[str, int]:
    out = {s.value: 0 for s in Skill if s is not Skill.NONE}
    for d in decisions:
        if d.skill is not Skill.NONE:
            out[d.skill.value] += 1
    return out


def player_stats(
    record: MatchRecord,
    decisions: Sequence[Decision],
    rolls: Sequence[Roll],
    results: Sequence[tuple[float, float]],
) -> tuple[PlayerStats, PlayerStats]:
    """Both players' figures from the judged ``decisions`` and ``rolls`` and each
    game's ``results`` (match winning chances or points won, by seat)."""
    match = record.match_length > 0
    all_moves = len(rolls)
    luck_money = [0.0, 0.0]
    luck_mwc = [0.0, 0.0]
    for roll in rolls:
        luck_money[roll.seat] += roll.luck * roll.cube
        luck_mwc[roll.seat] += roll.luck_mwc or 0.0
    luck_points = luck_mwc if match else luck_money
    actual = [sum(r[0] for r in results), sum(r[1] for r in results)]
    out = []
    for seat in (0, 1):
        mine = [d for d in decisions if d.seat == seat]
        checker = [d for d in mine if d.kind == "checker"]
        unforced = [d for d in checker if d.counted]
        cube = [d for d in mine if d.kind in ("cube", "take")]
        close = [d for d in cube if d.counted]
        my_rolls = [r for r in rolls if r.seat == seat]
        c_err = sum(d.error for d in unforced)
        k_err = sum(d.error for d in close)
        c_rate = _per(c_err, len(unforced))
        k_rate = _per(k_err, len(close))
        non_obvious = sum(1 for d in mine if not d.obvious)
        luck = sum(r.luck for r in my_rolls)
        rating = (
            fibs_rating(c_rate / 1000.0, k_rate / 1000.0, record.match_length)
            if match and (unforced or close)
            else None
        )
        luck_counts = {m.value: 0 for m in Luck if m is not Luck.NONE}
        for r in my_rolls:
            mark = luck_of(r.luck)
            if mark is not Luck.NONE:
                luck_counts[mark.value] += 1
        out.append(
            PlayerStats(
                seat=seat,
                name=record.players[seat],
                total_moves=len(my_rolls),
                unforced_moves=len(unforced),
                checker_error=c_err,
                checker_error_rate=c_rate,
                checker_marks=_marks(unforced),
                cube_decisions=len(close),
                cube_decisions_total=len(cube),
                cube_error=k_err,
                cube_error_rate=k_rate,
                cube_marks=_marks(close),
                error_rate=_per(c_err + k_err, len(unforced) + len(close)),
                snowie_error_rate=_per(c_err + k_err, all_moves),
                pr=_per(c_err + k_err, non_obvious, PR_SCALE),
                pr_decisions=non_obvious,
                luck=luck,
                luck_rate=_per(luck, len(my_rolls)),
                luck_marks=luck_counts,
                actual_result=actual[seat],
                luck_adjusted_result=actual[seat] - luck_points[seat] + luck_points[1 - seat],
                rating=rating,
                checker_error_mwc=sum(d.error_mwc or 0.0 for d in unforced) if match else None,
                cube_error_mwc=sum(d.error_mwc or 0.0 for d in close) if match else None,
                luck_mwc=luck_mwc[seat] if match else None,
            )
        )
    return out[0], out[1]
