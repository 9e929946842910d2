"""Cube decisions from the five cubeless probabilities, for money and match play.

The inputs are an evaluator's five probabilities (see :mod:`nard.engine.evaluator`),
**seen from the side on roll before it rolls**, which is exactly the moment a
cube decision is made. Nothing here looks at the board except
:func:`cube_efficiency`.

Money play
    Rick Janowski's cube-life model ("Take-Points in Money Games", 1993,
    http://www.bkgm.com/articles/Janowski/cubeformulae.pdf): the cubeful equity
    is ``(1 - x) * dead + x * live``, where ``dead`` is the cubeless equity,
    ``live`` the equity of a perfectly efficient cube (piecewise linear in the
    chance of winning between the take and cash points), and ``x`` the cube
    efficiency. With no gammons this gives the textbook take points: 25% for a
    dead cube (x = 0), 20% for a fully live one (x = 1), 21.4% at x = 0.68.

Match play
    The same idea in match-winning chances (MWC), as GNU Backgammon does it at
    0-ply (its ``Cl2CfMatch``): the dead-cube MWC weighs every outcome by the
    match equity table; the live-cube MWC interpolates between cashing and
    being cashed at take/cash points computed from the table, recursively from
    the highest cube level that can still be turned down to the current one.
    Gammon values therefore follow from the score. The Crawford game has no
    cube; after it the leader may not double, and the post-Crawford table
    carries the trailer's free drops.

Cube efficiency (:func:`cube_efficiency`) uses GNU Backgammon's published
defaults (eval.c, ``EvalEfficiency``): 0.68 in contact positions, 0.6 in
bear-offs with both sides home, and ``0.55 + 0.00125 * pips`` of the side on
roll, clamped to [0.6, 0.7], in other races.

Match equity table
    :data:`KAZAROSS_XG2` is Neil Kazaross's "XG2" table (2011), GNU
    Backgammon's default: rolled out by eXtreme Gammon to 9 points, by GNU
    Backgammon to 15, extended to 25 points by projecting take points. The
    numbers are transcribed from ``met/Kazaross-XG2.xml`` as distributed with
    GNU Backgammon (transcription by Michael Petch; the file permits copying
    with its notice, Copyright (C) 2011 Neil Kazaross).

Match equity beyond 25 points
    The server and ``nard play`` accept matches to 64 points (GNU
    Backgammon's ``MAXSCORE``), so :data:`KAZAROSS_XG2_64`, the default of
    :class:`CubeContext`, is the table extended to 64 points the way GNU
    Backgammon 1.07 extends any table shorter than that (read from its
    ``matchequity.c``, ``ExtendMET`` and ``InitMatchEquity``; the method is
    restated here, not the code). Entries to 25-away are Kazaross's.

    *Pre-Crawford* (David Montgomery's extension): from a score where one
    side is ``a``-away and the other ``b``-away, ``a >= b``, the rest of the
    match is taken as about ``(a + b) / 2`` games, each with a normally
    distributed swing in points whose standard deviation depends on how far
    each side is from the end: 1.24, 1.27, 1.47, 1.50, 1.60, 1.61, 1.66,
    1.68, 1.70, 1.72 at 1- to 10-away and 1.77 further (gnubg's published
    constants). With ``sigma = sqrt(s(a)**2 + s(b)**2) * sqrt((a + b) / 2)``
    the trailer's MWC is the chance that a normal variable of mean 0 and
    deviation ``sigma`` lies between its deficit ``a - b`` and ``6 sigma``
    (gnubg integrates to 6 sigma, so an even score is 0.5 less 1e-9, and a
    deficit beyond 6 sigma is 0); the leader's is the complement. Every
    score with either side more than 25-away is filled this way, the
    Crawford game's 1-away entries included.

    *Post-Crawford* (N. Zadeh, Management Science 23, 986 (1977)): the
    trailer ``n``-away doubles at once and the leader takes, so each game is
    even; losing it loses the match, winning it leaves the trailer ``n - 2``
    away, or ``n - 4`` after a gammon (rate 0.25, gnubg's ``GAMMONRATE``):
    ``post(n) = 0.5 * (0.25 * post(n - 4) + 0.75 * post(n - 2))`` with
    ``post(n) = 1`` for ``n <= 0``, less the free drop at 2- and 4-away
    (0.015 and 0.004; they only matter for a table shorter than 4).

    One difference from gnubg, on purpose: gnubg discards a table's last
    post-Crawford entry (25-away: Kazaross's 0.00123) and recomputes it
    (0.00118), since a table of length ``n`` need not hold it; nard keeps
    the published entry, so post-Crawford MWCs 27-away and further differ
    from gnubg's by at most 2e-5. Pre-Crawford MWCs agree with gnubg's to
    its float32 rounding (tests/engine/test_met_extension.py).

>>> d = cube_decision([0.7, 0.0, 0.0, 0.0, 0.0], efficiency=0.0)
>>> d.action, round(d.no_double, 3), round(d.double_take, 3), d.double_pass
('Double, take', 0.4, 0.8, 1.0)
>>> cube_decision([0.5, 0.0, 0.0, 0.0, 0.0]).action
'No double, take'
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from nard.core.position import Position
from nard.engine._kernels import cubeful_rows_into
from nard.engine.evaluator import five_probabilities
from nard.notation.match_id import CubeOwner as MatchCubeOwner
from nard.notation.match_id import MatchState
from nard.notation.positions import WrittenPosition

__all__ = [
    "KAZAROSS_XG2",
    "KAZAROSS_XG2_64",
    "MAX_MATCH_LENGTH",
    "CubeContext",
    "CubeDecision",
    "CubeOwner",
    "MatchEquityTable",
    "cube_decision",
    "cube_efficiency",
    "cubeful_equity",
    "match_context",
    "money_take_point",
    "play_equities",
    "play_equity",
]

# GNU Backgammon's EvalEfficiency defaults (eval.c: rContactX, rCrashedX,
# rOSCubeX, rRaceFactorX, rRaceCoefficientX, rRaceMin, rRaceMax).
CONTACT_EFFICIENCY = 0.68
BEAROFF_EFFICIENCY = 0.6
_RACE_FACTOR = 0.00125
_RACE_COEFFICIENT = 0.55
_RACE_MIN = 0.6
_RACE_MAX = 0.7
_EPSILON = 1e-7

MAX_MATCH_LENGTH = 64
"""The longest match nard plays (GNU Backgammon's MAXSCORE; the server and CLI accept 1-64)."""

# GNU Backgammon's match equity extension (matchequity.c, ExtendMET and
# InitMatchEquity): the standard deviation of one game's swing in points for a
# side 1- to 10-away, and further away; the integral's upper limit in standard
# deviations; the post-Crawford gammon rate and free drops at 2- and 4-away.
_GAME_STDDEV = (1.24, 1.27, 1.47, 1.50, 1.60, 1.61, 1.66, 1.68, 1.70, 1.72)
_GAME_STDDEV_FAR = 1.77
_NORMAL_LIMIT = 6.0
_POST_CRAWFORD_GAMMON_RATE = 0.25
_POST_CRAWFORD_FREE_DROP = {2: 0.015, 4: 0.004}


class CubeOwner(enum.Enum):
    """Who holds the cube, from the point of view of the side on roll."""

    CENTRED = "centred"
    ON_ROLL = "on roll"
    OPPONENT = "opponent"


@dataclass(frozen=True)
class MatchEquityTable:
    """A match equity table: the chance of winning the match from a score.

    ``pre[i][j]`` is the MWC of a player ``i + 1`` points away against one
    ``j + 1`` away before Crawford has been played (the 1-away entries are
    those of the Crawford game itself); ``post[j]`` is the trailer's MWC when
    it is ``j + 1`` away and the leader 1-away after the Crawford game.
    """

    name: str
    pre: tuple[tuple[float, ...], ...]
    post: tuple[float, ...]

    @property
    def length(self) -> int:
        """The longest match the table covers."""
        return len(self.post)

    def equity(self, away: int, opponent_away: int, post_crawford: bool = False) -> float:
        """MWC of a player ``away`` points from winning against ``opponent_away``.

        ``post_crawford`` says the Crawford game is over (or being played), so
        that a 1-away score reads the post-Crawford table. Zero or less away
        means the match is won.

        >>> KAZAROSS_XG2.equity(1, 1)
        0.5
        >>> KAZAROSS_XG2.equity(2, 1, post_crawford=True)
        0.48803
        """
        if away <= 0:
            return 1.0
        if opponent_away <= 0:
            return 0.0
        if max(away, opponent_away) > self.length:
            raise ValueError(
                f"score {away!r}-away, {opponent_away!r}-away is beyond the "
                f"{self.length}-point table {self.name!r}"
            )
        if post_crawford and opponent_away == 1:
            return self.post[away - 1]
        if post_crawford and away == 1:
            return 1.0 - self.post[opponent_away - 1]
        return self.pre[away - 1][opponent_away - 1]

    def extended(self, length: int = MAX_MATCH_LENGTH) -> MatchEquityTable:
        """This table extended to ``length`` points by GNU Backgammon's method
        (see the module doc): the entries it has are kept, the others computed.

        >>> met = KAZAROSS_XG2.extended(30)
        >>> met.length, met.equity(25, 25) == KAZAROSS_XG2.equity(25, 25)
        (30, True)
        >>> round(met.equity(26, 1), 6), round(met.equity(30, 30), 6)
        (0.000821, 0.5)
        """
        size = self.length
        if length < size:
            raise ValueError(f"a {size}-point table cannot be extended to {length!r} points")
        if length == size:
            return self
        pre = [[*row, *([0.0] * (length - size))] for row in self.pre]
        pre += [[0.0] * length for _ in range(length - size)]
        for away in range(size + 1, length + 1):
            for opponent_away in range(1, away + 1):
                mwc = _normal_mwc(away, opponent_away)
                pre[away - 1][opponent_away - 1] = mwc
                if opponent_away != away:
                    pre[opponent_away - 1][away - 1] = 1.0 - mwc
        post = list(self.post)

        def trailer(away: int) -> float:
            return post[away - 1] if away > 0 else 1.0

        g = _POST_CRAWFORD_GAMMON_RATE
        for away in range(size + 1, length + 1):
            mwc = g * 0.5 * trailer(away - 4) + (1.0 - g) * 0.5 * trailer(away - 2)
            post.append(mwc - _POST_CRAWFORD_FREE_DROP.get(away, 0.0))
        return MatchEquityTable(
            f"{self.name} extended to {length}",
            tuple(tuple(row) for row in pre),
            tuple(post),
        )


def _game_stddev(away: int) -> float:
    return _GAME_STDDEV[away - 1] if away <= len(_GAME_STDDEV) else _GAME_STDDEV_FAR


def _normal_mwc(away: int, opponent_away: int) -> float:
    """Montgomery's MWC of a side ``away`` points from winning against one
    ``opponent_away`` (no further away than it): the chance that the match's
    normally distributed swing makes up the deficit (see the module doc).

    >>> round(_normal_mwc(26, 1), 6), round(_normal_mwc(64, 64), 6)
    (0.000821, 0.5)
    """
    deficit = away - opponent_away
    sigma = math.hypot(_game_stddev(away), _game_stddev(opponent_away))
    sigma *= math.sqrt((away + opponent_away) / 2.0)
    if deficit >= _NORMAL_LIMIT * sigma:
        return 0.0
    # Phi(6) - Phi(deficit / sigma), from the upper tails for precision.
    root2 = math.sqrt(2.0)
    return 0.5 * (math.erfc(deficit / sigma / root2) - math.erfc(_NORMAL_LIMIT / root2))


def _parse_table(text: str, size: int) -> tuple[tuple[float, ...], ...]:
    values = [float(v) for v in text.split()]
    if len(values) % size:
        raise ValueError(f"table of {len(values)} values is not in rows of {size}")
    return tuple(tuple(values[i : i + size]) for i in range(0, len(values), size))


_KAZAROSS_XG2_PRE = """
0.50000 0.67736 0.75076 0.81436 0.84179 0.88731 0.90724 0.93250 0.94402 0.959275 0.966442
0.975534 0.979845 0.985273 0.987893 0.99114 0.99273 0.99467 0.99563 0.99679 0.99737 0.99807
0.99842 0.99884 0.99905 0.32264 0.50000 0.59947 0.66870 0.74359 0.79940 0.84225 0.87539 0.90197
0.923034 0.939311 0.952470 0.962495 0.970701 0.976887 0.98196 0.98580 0.98893 0.99129 0.99322
0.99466 0.99585 0.99675 0.99746 0.99802 0.24924 0.40053 0.50000 0.57150 0.64795 0.71123 0.76209
0.80468 0.84017 0.870638 0.894417 0.914831 0.930702 0.944426 0.954931 0.96399 0.97093 0.97687
0.98139 0.98522 0.98814 0.99062 0.99248 0.99407 0.99527 0.18564 0.33130 0.42850 0.50000 0.57732
0.64285 0.69924 0.74577 0.78799 0.824059 0.853955 0.879141 0.900233 0.918040 0.932657 0.94495
0.95499 0.96341 0.97021 0.97589 0.98044 0.98422 0.98726 0.98975 0.99174 0.15821 0.25641 0.35205
0.42268 0.50000 0.56635 0.62638 0.67786 0.72540 0.767055 0.802732 0.833654 0.859934 0.882866
0.902013 0.91847 0.93223 0.94397 0.95367 0.96189 0.96864 0.97432 0.97896 0.98283 0.98600 0.11269
0.20060 0.28877 0.35715 0.43365 0.50000 0.56261 0.61636 0.66787 0.713057 0.753427 0.788634
0.819569 0.846648 0.869999 0.89021 0.90756 0.92246 0.93508 0.94583 0.95488 0.96254 0.96894
0.97432 0.97879 0.09276 0.15775 0.23791 0.30076 0.37362 0.43739 0.50000 0.55480 0.60854 0.656283
0.700209 0.739054 0.774121 0.805203 0.832566 0.85659 0.87761 0.89591 0.91171 0.92535 0.93702
0.94703 0.95553 0.96276 0.96887 0.06750 0.12461 0.19532 0.25423 0.32214 0.38364 0.44520 0.50000
0.55442 0.603718 0.649899 0.691356 0.729447 0.763593 0.794397 0.82158 0.84578 0.86714 0.88589
0.90230 0.91658 0.92898 0.93968 0.94891 0.95682 0.05598 0.09803 0.15983 0.21201 0.27460 0.33213
0.39146 0.44558 0.50000 0.550196 0.597926 0.641481 0.682119 0.718927 0.752814 0.78301 0.81037
0.83483 0.85662 0.87591 0.89294 0.90791 0.92098 0.93240 0.94230 0.040725 0.076966 0.129362
0.175941 0.232945 0.286943 0.343717 0.396282 0.449804 0.500000 0.548547 0.593459 0.635880
0.674830 0.711113 0.74371 0.77375 0.80093 0.82543 0.84741 0.86703 0.88448 0.89991 0.91353
0.92550 0.033558 0.060689 0.105583 0.146045 0.197268 0.246573 0.299791 0.350101 0.402074
0.451453 0.500000 0.545552 0.589242 0.629736 0.667927 0.70303 0.73530 0.76494 0.79198 0.81648
0.83862 0.85849 0.87629 0.89214 0.90622 0.024466 0.047530 0.085169 0.120859 0.166346 0.211366
0.260946 0.308644 0.358519 0.406541 0.454448 0.500000 0.544068 0.585701 0.625259 0.66178 0.69610
0.72778 0.75703 0.78381 0.80826 0.83044 0.85051 0.86856 0.88476 0.020155 0.037505 0.069298
0.099767 0.140066 0.180431 0.225879 0.270553 0.317881 0.364120 0.410758 0.455932 0.500000
0.541943 0.582545 0.62036 0.65619 0.68966 0.72081 0.74963 0.77619 0.80054 0.82276 0.84295
0.86123 0.014727 0.029299 0.055574 0.081960 0.117134 0.153352 0.194797 0.236407 0.281073
0.325170 0.370264 0.414299 0.458057 0.500000 0.540750 0.57942 0.61634 0.65117 0.68391 0.71448
0.74290 0.76917 0.79339 0.81559 0.83586 0.012107 0.023113 0.045069 0.067343 0.097987 0.130001
0.167434 0.205603 0.247186 0.288887 0.332073 0.374741 0.417455 0.459250 0.500000 0.53916 0.57679
0.61261 0.64659 0.67859 0.70862 0.73664 0.76265 0.78669 0.80883 0.00886 0.01804 0.03601 0.05505
0.08153 0.10979 0.14341 0.17842 0.21699 0.25629 0.29697 0.33822 0.37964 0.42058 0.46084 0.50000
0.53796 0.57441 0.60929 0.64241 0.67376 0.70323 0.73084 0.75657 0.78046 0.00727 0.01420 0.02907
0.04501 0.06777 0.09244 0.12239 0.15422 0.18963 0.22625 0.26470 0.30390 0.34381 0.38366 0.42321
0.46204 0.50000 0.53676 0.57222 0.60618 0.63856 0.66925 0.69822 0.72542 0.75087 0.00533 0.01107
0.02313 0.03659 0.05603 0.07754 0.10409 0.13286 0.16517 0.19907 0.23506 0.27222 0.31034 0.34883
0.38739 0.42559 0.46324 0.50000 0.53574 0.57023 0.60336 0.63501 0.66510 0.69356 0.72038 0.00437
0.00871 0.01861 0.02979 0.04633 0.06492 0.08829 0.11411 0.14338 0.17457 0.20802 0.24297 0.27919
0.31609 0.35341 0.39071 0.42778 0.46426 0.50000 0.53475 0.56838 0.60073 0.63171 0.66122 0.68921
0.00321 0.00678 0.01478 0.02411 0.03811 0.05417 0.07465 0.09770 0.12409 0.15259 0.18352 0.21619
0.25037 0.28552 0.32141 0.35759 0.39382 0.42977 0.46525 0.50000 0.53387 0.56667 0.59830 0.62864
0.65760 0.00263 0.00534 0.01186 0.01956 0.03136 0.04512 0.06298 0.08342 0.10706 0.13297 0.16138
0.19174 0.22381 0.25710 0.29138 0.32624 0.36144 0.39664 0.43162 0.46613 0.50000 0.53303 0.56508
0.59603 0.62576 0.00193 0.00415 0.00938 0.01578 0.02568 0.03746 0.05297 0.07102 0.09209 0.11552
0.14151 0.16956 0.19946 0.23083 0.26336 0.29677 0.33075 0.36499 0.39927 0.43333 0.46697 0.50000
0.53226 0.56360 0.59391 0.00158 0.00325 0.00752 0.01274 0.02104 0.03106 0.04447 0.06032 0.07902
0.10009 0.12371 0.14949 0.17724 0.20661 0.23735 0.26916 0.30178 0.33490 0.36829 0.40170 0.43492
0.46774 0.50000 0.53153 0.56221 0.00116 0.00254 0.00593 0.01025 0.01717 0.02568 0.03724 0.05109
0.06760 0.08647 0.10786 0.13144 0.15705 0.18441 0.21331 0.24343 0.27458 0.30644 0.33878 0.37136
0.40397 0.43640 0.46847 0.50000 0.53086 0.00095 0.00198 0.00473 0.00826 0.01400 0.02121 0.03113
0.04318 0.05770 0.07450 0.09378 0.11524 0.13877 0.16414 0.19117 0.21954 0.24913 0.27962 0.31079
0.34240 0.37424 0.40609 0.43779 0.46914 0.50000
"""

_KAZAROSS_XG2_POST = """
0.500000 0.48803 0.32264 0.31002 0.19012 0.18072 0.11559 0.10906 0.06953 0.065161 0.042069
0.039060 0.025371 0.023428 0.015304 0.014050 0.009240 0.008420 0.005560 0.005050 0.003360
0.003030 0.002030 0.001820 0.001230
"""

KAZAROSS_XG2 = MatchEquityTable(
    "Kazaross-XG2",
    _parse_table(_KAZAROSS_XG2_PRE, 25),
    _parse_table(_KAZAROSS_XG2_POST, 25)[0],
)
"""Neil Kazaross's XG2 table (GNU Backgammon's default), to 25 points."""

KAZAROSS_XG2_64 = KAZAROSS_XG2.extended(MAX_MATCH_LENGTH)
"""Kazaross-XG2 extended to 64 points as GNU Backgammon extends it: the
default table of :class:`CubeContext` (see the module doc)."""


@dataclass(frozen=True)
class CubeContext:
    """The cube and the score, from the side on roll's point of view.

    ``match_length = 0`` is money play (then ``jacoby`` and ``beavers`` apply);
    ``score`` is (side on roll, opponent) and ``crawford`` says this game is
    the Crawford game.
    """

    cube: int = 1
    owner: CubeOwner = CubeOwner.CENTRED
    match_length: int = 0
    score: tuple[int, int] = (0, 0)
    crawford: bool = False
    jacoby: bool = False
    beavers: bool = False
    met: MatchEquityTable = KAZAROSS_XG2_64

    @classmethod
    def for_player(
        cls,
        player: int,
        cube: int,
        owner: int | None,
        match_length: int = 0,
        score: tuple[int, int] = (0, 0),
        *,
        crawford: bool = False,
        jacoby: bool = False,
        beavers: bool = False,
    ) -> CubeContext:
        """The context seen by seat ``player`` (0 or 1) of a game whose cube is
        ``owner``'s (a seat, ``None`` while centred) and whose ``score`` is by
        seat, as :class:`nard.match.Game` and its match or session keep them.

        >>> ctx = CubeContext.for_player(1, 2, 0, match_length=7, score=(3, 1))
        >>> ctx.owner, ctx.score
        (<CubeOwner.OPPONENT: 'opponent'>, (1, 3))
        """
        if player not in (0, 1) or owner not in (None, 0, 1):
            raise ValueError(f"seats are 0 and 1, not player {player!r} and owner {owner!r}")
        return cls(
            cube=cube,
            owner=(
                CubeOwner.CENTRED
                if owner is None
                else CubeOwner.ON_ROLL
                if owner == player
                else CubeOwner.OPPONENT
            ),
            match_length=match_length,
            score=(score[player], score[1 - player]),
            crawford=crawford,
            jacoby=jacoby,
            beavers=beavers,
        )

    @property
    def is_money(self) -> bool:
        """True for money play."""
        return self.match_length == 0

    @property
    def away(self) -> tuple[int, int]:
        """Points each side still needs: (side on roll, opponent)."""
        return self.match_length - self.score[0], self.match_length - self.score[1]

    @property
    def is_post_crawford(self) -> bool:
        """True after the Crawford game: one side is 1-away and this is not Crawford."""
        return not self.crawford and not self.is_money and 1 in self.away

    def can_double(self) -> bool:
        """Whether the side on roll may (usefully) turn the cube now."""
        if self.owner is CubeOwner.OPPONENT:
            return False
        if self.is_money:
            return True
        mine, _ = self.away
        return not self.crawford and mine > self.cube and not (self.is_post_crawford and mine == 1)

    def doubled(self) -> CubeContext:
        """The context after a double and a take: twice the cube, owned by the opponent."""
        return replace(self, cube=2 * self.cube, owner=CubeOwner.OPPONENT)

    def swapped(self) -> CubeContext:
        """The same cube and score from the opponent's point of view.

        >>> ctx = CubeContext(owner=CubeOwner.ON_ROLL, match_length=5, score=(1, 3)).swapped()
        >>> ctx.owner, ctx.score
        (<CubeOwner.OPPONENT: 'opponent'>, (3, 1))
        """
        owner = {
            CubeOwner.CENTRED: CubeOwner.CENTRED,
            CubeOwner.ON_ROLL: CubeOwner.OPPONENT,
            CubeOwner.OPPONENT: CubeOwner.ON_ROLL,
        }[self.owner]
        return replace(self, owner=owner, score=(self.score[1], self.score[0]))


@dataclass(frozen=True)
class CubeDecision:
    """The three equities of a cube decision and the verdict, as gnubg words it.

    Equities are for the side on roll, normalised to the current cube (money:
    points per cube; match: gnubg's normalised equity, +1 = double/pass). In
    match play ``mwc_*`` hold the match-winning chances too.
    """

    no_double: float
    double_take: float
    double_pass: float
    action: str
    double: bool
    take: bool
    beaver: bool
    efficiency: float
    mwc_no_double: float | None = None
    mwc_double_take: float | None = None
    mwc_double_pass: float | None = None

    @property
    def optimal(self) -> float:
        """The equity of the right decision."""
        if not self.double:
            return self.no_double
        return min(self.double_take, self.double_pass)

    @property
    def is_too_good(self) -> bool:
        """True when the side on roll should play on for a gammon."""
        return self.action.startswith("Too good")


def money_take_point(win_value: float, lose_value: float, efficiency: float) -> float:
    """Janowski's money take point: ``(L - 1/2) / (W + L + x/2)``.

    ``win_value`` and ``lose_value`` are the taker's average win W and loss L
    (1 with no gammons), ``efficiency`` the cube efficiency x.

    >>> money_take_point(1, 1, 0.0), money_take_point(1, 1, 1.0)
    (0.25, 0.2)
    """
    return (lose_value - 0.5) / (win_value + lose_value + 0.5 * efficiency)


def cube_efficiency(position: Position) -> float:
    """GNU Backgammon's default cube efficiency x for a position (see module doc).

    >>> cube_efficiency(Position())
    0.68
    """
    if position.is_game_over():
        return 0.0
    if position.is_contact():
        return CONTACT_EFFICIENCY
    b = position.board
    if all(b[p] <= 0 for p in range(7, 26)) and all(b[p] >= 0 for p in range(0, 19)):
        return BEAROFF_EFFICIENCY
    x = position.pip_counts()[0] * _RACE_FACTOR + _RACE_COEFFICIENT
    return min(_RACE_MAX, max(_RACE_MIN, x))


def cube_efficiencies(boards: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """:func:`cube_efficiency` of many raw boards at once (rows of 26, side on roll's
    view), without building positions: the rollouts' cubeful luck asks for every
    roll's play of every trial.

    >>> from nard.core.position import Position
    >>> race = Position.from_points({6: 5, 5: 5, 4: 5}, {6: 5, 5: 5, 4: 5})
    >>> [float(x) for x in cube_efficiencies([list(Position()), list(race)])]
    [0.68, 0.6]
    """
    b = np.asarray(boards, dtype=np.int64).reshape(-1, 26)
    mine, theirs = np.where(b > 0, b, 0), np.where(b < 0, -b, 0)
    points = np.arange(26)
    over = (mine.sum(axis=1) == 0) | (theirs.sum(axis=1) == 0)
    back = np.where(mine[:, 1:26] > 0, points[1:26], 0).max(axis=1)
    front = np.where(theirs[:, 0:25] > 0, points[0:25], 25).min(axis=1)
    contact = back >= front
    home = (mine[:, 7:26].sum(axis=1) == 0) & (theirs[:, 0:19].sum(axis=1) == 0)
    pips = (mine * points).sum(axis=1)
    race = np.clip(pips * _RACE_FACTOR + _RACE_COEFFICIENT, _RACE_MIN, _RACE_MAX)
    out = np.where(contact, CONTACT_EFFICIENCY, np.where(home, BEAROFF_EFFICIENCY, race))
    result: npt.NDArray[np.float64] = np.where(over, 0.0, out)
    return result


# Money play ---------------------------------------------------------------


def _money_cubeful(probs: npt.ArrayLike, ctx: CubeContext, x: float) -> float:
    """Janowski's cubeful equity in units of the current cube."""
    p, wg, wbg, lg, lbg = five_probabilities(probs)
    jacoby_centred = ctx.jacoby and ctx.owner is CubeOwner.CENTRED
    dead = 2.0 * p - 1.0 + (0.0 if jacoby_centred else wg - lg + wbg - lbg)
    if p <= _EPSILON or p >= 1.0 - _EPSILON:
        return dead
    w = 1.0 + (wg + wbg) / p
    lo = 1.0 + (lg + lbg) / (1.0 - p)
    take = (lo - 0.5) / (w + lo + 0.5)  # where the opponent cashes a live cube
    cash = (lo + 1.0) / (w + lo + 0.5)  # where the side on roll cashes
    if ctx.owner is CubeOwner.CENTRED:
        if p < take:
            live = -1.0 if jacoby_centred else -lo + (lo - 1.0) * p / take
        elif p < cash:
            live = -1.0 + 2.0 * (p - take) / (cash - take)
        else:
            live = 1.0 if jacoby_centred else 1.0 + (w - 1.0) * (p - cash) / (1.0 - cash)
    elif ctx.owner is CubeOwner.ON_ROLL:
        if p < cash:
            live = -lo + (1.0 + lo) * p / cash
        else:
            live = 1.0 + (w - 1.0) * (p - cash) / (1.0 - cash)
    elif p < take:
        live = -lo + (lo - 1.0) * p / take
    else:
        live = -1.0 + (w + 1.0) * (p - take) / (1.0 - take)
    return (1.0 - x) * dead + x * live


# Match play ---------------------------------------------------------------


_MWC_CACHE: dict[tuple[int, int, int, bool], tuple[MatchEquityTable, dict[int, float]]] = {}
"""The MWC of each result of a game at a score (by table, away, away, post-Crawford):
a decision asks for the same few hundred thousand times (every candidate play's
cubeful equity), and they depend on the score only."""


def _results(met: MatchEquityTable, away: tuple[int, int], post: bool) -> dict[int, float]:
    key = (id(met), away[0], away[1], post)
    found = _MWC_CACHE.get(key)
    if found is None or found[0] is not met:
        if len(_MWC_CACHE) > 20_000:
            _MWC_CACHE.clear()
        found = _MWC_CACHE[key] = (met, {})
    return found[1]


class _Score:
    """Match-winning chances of the outcomes of one game at a given cube."""

    def __init__(self, ctx: CubeContext, probs: npt.ArrayLike) -> None:
        self.ctx = ctx
        self.away = ctx.away
        # The post-Crawford table applies to results of this game when this is
        # the Crawford game or a later one (gnubg's getME does the same).
        self.post = ctx.crawford or (not ctx.is_money and 1 in self.away)
        self._results = _results(ctx.met, self.away, self.post)
        p, wg, wbg, lg, lbg = five_probabilities(probs)
        self.p = p
        # Conditional gammon and backgammon rates: index 0 side on roll, 1 opponent.
        self.g = ((wg - wbg) / p if p > 0 else 0.0, (lg - lbg) / (1 - p) if p < 1 else 0.0)
        self.bg = (wbg / p if p > 0 else 0.0, lbg / (1 - p) if p < 1 else 0.0)

    def mwc(self, player: int, points: int) -> float:
        """``player``'s MWC (0 = side on roll) after it wins ``points`` (< 0: loses)."""
        key = 2 * points + player
        value = self._results.get(key)
        if value is None:
            a = list(self.away)
            if points > 0:
                a[player] -= points
            else:
                a[1 - player] += points
            value = self._results[key] = self.ctx.met.equity(a[player], a[1 - player], self.post)
        return value

    def win(self, player: int, cube: int) -> float:
        """``player``'s MWC if it wins at ``cube`` with its own gammon rates."""
        g, bg = self.g[player], self.bg[player]
        return (
            (1 - g - bg) * self.mwc(player, cube)
            + g * self.mwc(player, 2 * cube)
            + bg * self.mwc(player, 3 * cube)
        )

    def lose(self, player: int, cube: int) -> float:
        """``player``'s MWC if it loses at ``cube`` with the other side's rates."""
        g, bg = self.g[1 - player], self.bg[1 - player]
        return (
            (1 - g - bg) * self.mwc(player, -cube)
            + g * self.mwc(player, -2 * cube)
            + bg * self.mwc(player, -3 * cube)
        )

    def dead(self) -> float:
        """MWC of the side on roll if the cube never moves again."""
        c = self.ctx.cube
        return self.p * self.win(0, c) + (1 - self.p) * self.lose(0, c)

    def cash_points(self) -> tuple[float, float]:
        """Each side's live-cube cash point (its winning chance) at the current cube.

        From the highest cube that can still be turned, where the doubled cube
        is dead and the taker's MWC is linear in its chances, down to the
        current one, where the taker's MWC is linear up to its own cash point
        of the next level (so Janowski's live cube, in match-winning chances).
        """
        upper: tuple[float, float] = (1.0, 1.0)
        for level in self.levels():
            points = []
            for k in (0, 1):
                dp = self.mwc(k, level)
                cube_lost = self.dead_cube(k, level)
                if cube_lost is not None:
                    dtw = self.win(k, cube_lost)
                    dtl = self.lose(k, cube_lost)
                    points.append((dtl - dp) / (dtl - dtw) if dtl != dtw else 1.0)
                else:
                    dtw = self.win(k, 2 * level)
                    rdp = self.mwc(k, -2 * level)
                    ratio = (dp - dtw) / (rdp - dtw) if rdp != dtw else 0.0
                    points.append(1.0 - upper[1 - k] * ratio)
            upper = (points[0], points[1])
        return upper

    def levels(self) -> list[int]:
        """The cube levels :meth:`cash_points` works through: the highest that can
        still be turned first, down to the current cube."""
        a0, a1 = self.away
        top = self.ctx.cube
        while a0 >= 2 * top and a1 >= 2 * top:
            top *= 2
        out = []
        while top >= self.ctx.cube:
            out.append(top)
            top //= 2
        return out

    def dead_cube(self, k: int, level: int) -> int | None:
        """Where a double of ``level`` by side ``k`` leaves the cube dead (a side is
        within two cubes of the match): the cube ``k`` wins or loses at once taken,
        twice the level, or four times when the taker redoubles at no risk (the
        doubler close enough that 2 cubes win it the match: gnubg's "prime" cube).
        ``None`` where the doubled cube lives on."""
        a0, a1 = self.away
        if a0 >= 2 * level and a1 >= 2 * level:
            return None
        mine, theirs = (a0, a1) if k == 0 else (a1, a0)
        auto = mine - 1 < 2 * level <= theirs - 1
        return 4 * level if auto else 2 * level

    def is_cube_alive(self) -> bool:
        """gnubg's fDoCubeful: the cube can still matter in this game."""
        a0, a1 = self.away
        c = self.ctx.cube
        return not ((a0 <= c and a1 <= c) or (a0 == 2 and a1 == 2) or self.ctx.crawford)

    def cubeful(self, x: float) -> float:
        """MWC of the side on roll: ``(1 - x) dead + x live``."""
        dead = self.dead()
        if not self.is_cube_alive():
            return dead
        c = self.ctx.cube
        p = self.p
        cp0, cp1 = self.cash_points()
        cash, opp_cash = self.mwc(0, c), self.mwc(0, -c)
        tg, opp_tg = cp0, 1.0 - cp1
        owner = self.ctx.owner
        if owner is not CubeOwner.ON_ROLL and p <= opp_tg:
            lose = self.lose(0, c)
            live = lose + (opp_cash - lose) * p / opp_tg if opp_tg > 0 else lose
        elif owner is CubeOwner.CENTRED and p < tg:
            live = opp_cash + (cash - opp_cash) * (p - opp_tg) / (tg - opp_tg)
        elif owner is CubeOwner.ON_ROLL and p <= tg:
            lose = self.lose(0, c)
            live = lose + (cash - lose) * p / tg if tg > 0 else lose
        elif owner is CubeOwner.OPPONENT:
            win = self.win(0, c)
            live = opp_cash + (win - opp_cash) * (p - opp_tg) / (1.0 - opp_tg)
        else:
            win = self.win(0, c)
            live = cash + (win - cash) * (p - tg) / (1.0 - tg) if tg < 1 else win
        return (1.0 - x) * dead + x * live


def cubeful_equity(
    probs: npt.ArrayLike, context: CubeContext | None = None, efficiency: float = 0.68
) -> float:
    """Cubeful equity of the side on roll, before it rolls, with the cube left as is.

    Money: points per unit of the current cube. Match: match-winning chances.

    >>> round(cubeful_equity([0.5, 0, 0, 0, 0], CubeContext(owner=CubeOwner.ON_ROLL), 1.0), 3)
    0.25
    """
    ctx = context or CubeContext()
    if ctx.is_money:
        return _money_cubeful(probs, ctx, efficiency)
    return _Score(ctx, probs).cubeful(efficiency)


def play_equity(result_probs: npt.ArrayLike, result: Position, context: CubeContext) -> float:
    """The mover's cubeful equity after a play to ``result``: what gnubg's cubeful
    checker play maximises.

    ``result`` is seen from the opponent, now on roll, and ``result_probs`` are
    its five probabilities from that side (an evaluator's answer for
    ``result``); ``context`` is the cube and score from the **mover's** view.
    The opponent's cubeful equity (:func:`cubeful_equity`, the cube left as it
    is, the efficiency of ``result``) is turned back to the mover: in money
    play minus it, per unit of the cube; in match play the mover's
    match-winning chances as money equivalents (-1 for losing a single game at
    this cube, +1 for winning one), so that one decision's plays compare as
    equities and noise has the same scale in money and match play.

    At double match point gammons do not count, so two results with the same
    winning chances are worth the same whatever their gammons:

    >>> dmp = CubeContext(match_length=5, score=(4, 4))
    >>> quiet, gammonish = [0.4, 0.0, 0.0, 0.0, 0.0], [0.4, 0.3, 0.0, 0.0, 0.0]
    >>> a, b = (play_equity(p, Position(), dmp) for p in (quiet, gammonish))
    >>> round(a, 6) == round(b, 6) == 0.2
    True
    >>> money = CubeContext()
    >>> play_equity(gammonish, Position(), money) < play_equity(quiet, Position(), money)
    True
    """
    return play_equities([result_probs], [result], context)[0]


def play_equities(
    results_probs: Sequence[npt.ArrayLike] | npt.NDArray[np.float64],
    results: Sequence[Position],
    context: CubeContext,
    efficiencies: Sequence[float] | None = None,
) -> list[float]:
    """:func:`play_equity` of several plays of one decision (the score's work done once).
    ``efficiencies``: the results' cube efficiencies when already known
    (:func:`cube_efficiencies`); ``results`` is then not read.

    >>> ctx = CubeContext(match_length=5, score=(1, 3))
    >>> probs = [[0.4, 0.1, 0.0, 0.1, 0.0], [0.6, 0.2, 0.0, 0.1, 0.0]]
    >>> [round(e, 6) for e in play_equities(probs, [Position(), Position()], ctx)] == [
    ...     round(play_equity(p, Position(), ctx), 6) for p in probs]
    True
    """
    theirs = context.swapped()
    if efficiencies is not None:
        xs = list(efficiencies)
    elif len(results) > 4:  # at once: the same values (see cube_efficiencies)
        xs = cube_efficiencies(np.array(results, dtype=np.int64)).tolist()
    else:
        xs = [cube_efficiency(result) for result in results]
    if theirs.is_money:
        return [
            -_money_cubeful(probs, theirs, x) for probs, x in zip(results_probs, xs, strict=True)
        ]
    score = _Score(context, (0.5, 0.0, 0.0, 0.0, 0.0))
    win, lose = score.mwc(0, context.cube), score.mwc(0, -context.cube)
    if len(xs) != len(results_probs):
        raise ValueError(f"{len(results_probs)} rows of probabilities, {len(xs)} efficiencies")
    if not xs:
        return []
    rows = np.asarray(results_probs, dtype=np.float64).reshape(len(xs), -1)
    mine = 1.0 - _cubeful_rows(theirs, rows, np.asarray(xs, dtype=np.float64))
    # (win <= lose never holds: a table's equities rise with the score)
    values = 2.0 * mine - 1.0 if win <= lose else 2.0 * (mine - lose) / (win - lose) - 1.0
    out: list[float] = values.tolist()
    return out


def _cubeful_rows(
    ctx: CubeContext, rows: npt.NDArray[np.float64], xs: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """``_Score(ctx, row).cubeful(x)`` of every row and its ``x`` at once: the same
    operations in the same order in a compiled loop
    (:func:`~nard.engine._kernels.cubeful_rows_into`), so the same floats (a
    decision in match play asks for every candidate play's; one by one they were
    most of its time, and on numpy's arrays still a third). Rows where the
    one-by-one formulas divide by zero are left to them."""
    if rows.ndim != 2 or rows.shape[1] != 5:
        raise ValueError(f"expected rows of the five probabilities, got shape {rows.shape}")
    score = _Score(ctx, (0.5, 0.0, 0.0, 0.0, 0.0))
    mwc = score.mwc
    c = ctx.cube
    game = np.array(
        [mwc(0, c), mwc(0, 2 * c), mwc(0, 3 * c), mwc(0, -c), mwc(0, -2 * c), mwc(0, -3 * c)]
    )
    alive = score.is_cube_alive()
    levels = score.levels() if alive else []
    table = np.empty((len(levels), 2, 8))
    for n, level in enumerate(levels):
        for k in (0, 1):
            cube_lost = score.dead_cube(k, level)
            x = cube_lost if cube_lost is not None else 2 * level
            table[n, k] = (
                mwc(k, level),
                1.0 if cube_lost is not None else 0.0,
                mwc(k, x),
                mwc(k, 2 * x),
                mwc(k, 3 * x),
                mwc(k, -x),
                mwc(k, -2 * x),
                mwc(k, -3 * x),
            )
    owner = {CubeOwner.CENTRED: 0, CubeOwner.ON_ROLL: 1, CubeOwner.OPPONENT: 2}[ctx.owner]
    out = np.empty(len(rows))
    cubeful_rows_into(
        np.ascontiguousarray(rows), np.ascontiguousarray(xs), table, game, alive, owner, out
    )
    bad = ~np.isfinite(out)
    if bad.any():  # what the formulas divide by is 0 there: as one by one (an error)
        for i in np.flatnonzero(bad):
            out[i] = _Score(ctx, rows[i]).cubeful(float(xs[i]))
    return out


def _wording(cube_centred: bool, double: str, redouble: str) -> str:
    return double if cube_centred else redouble


def cube_decision(
    probs: npt.ArrayLike,
    context: CubeContext | None = None,
    efficiency: float | None = None,
    position: Position | None = None,
) -> CubeDecision:
    """The cube decision of the side on roll from its five cubeless probabilities.

    ``efficiency`` is the cube efficiency x; by default it comes from
    ``position`` (:func:`cube_efficiency`), or 0.68 without one. The verdict
    follows GNU Backgammon's ``FindBestCubeDecision`` and its wording
    ("No double, take", "Double, pass", "Too good to double, pass", ...;
    "redouble" when the side on roll owns the cube).

    >>> cube_decision([1.0, 0.0, 0.0, 0.0, 0.0]).action
    'Double, pass'
    >>> cube_decision([0.9, 0.6, 0.0, 0.0, 0.0]).action
    'Too good to double, pass'
    >>> cube_decision([0.5, 0.1, 0, 0.1, 0], CubeContext(match_length=5, score=(4, 2))).action
    'Never double, take (dead cube)'
    """
    ctx = context or CubeContext()
    if efficiency is None:
        efficiency = cube_efficiency(position) if position is not None else CONTACT_EFFICIENCY
    x = efficiency
    _p, wg, _wbg, _lg, _lbg = five_probabilities(probs)
    taken = ctx.doubled()

    mwc: tuple[float, float, float] | None = None
    if ctx.is_money:
        nd = _money_cubeful(probs, ctx, x)
        dt = 2.0 * _money_cubeful(probs, taken, x)
        dp = 1.0
    else:
        score = _Score(ctx, probs)
        m_nd = score.cubeful(x)
        m_dt = _Score(taken, probs).cubeful(x)
        m_dp = score.mwc(0, ctx.cube)
        mwc = (m_nd, m_dt, m_dp)
        w, lo = score.mwc(0, ctx.cube), score.mwc(0, -ctx.cube)

        def norm(m: float) -> float:
            return (2.0 * m - (w + lo)) / (w - lo) if w != lo else 0.0

        nd, dt, dp = norm(m_nd), norm(m_dt), norm(m_dp)

    return decide_cube(nd, dt, dp, ctx, gammon_chance=wg, efficiency=x, mwc=mwc)


def decide_cube(
    no_double: float,
    double_take: float,
    double_pass: float,
    context: CubeContext,
    *,
    gammon_chance: float,
    efficiency: float = 0.0,
    mwc: tuple[float, float, float] | None = None,
) -> CubeDecision:
    """The cube decision from its three equities (the side on roll's, normalised as in
    :class:`CubeDecision`), worded as GNU Backgammon's ``FindBestCubeDecision`` words
    it. ``gammon_chance`` is the side on roll's chance of winning a gammon or more:
    with none, a position too good to double is doubled after all, and a pass is never
    optional. :func:`cube_decision` and the rollouts' verdicts both come from here.

    >>> decide_cube(0.6, 0.8, 1.0, CubeContext(), gammon_chance=0.1).action
    'Double, take'
    >>> decide_cube(0.2, 0.1, 1.0, CubeContext(), gammon_chance=0.1).action
    'No double, take'
    >>> dead = CubeContext(match_length=5, score=(4, 2))
    >>> decide_cube(0.4, 0.2, 1.0, dead, gammon_chance=0).action
    'Never double, take (dead cube)'
    """
    ctx = context
    nd, dt, dp, wg = no_double, double_take, double_pass, gammon_chance
    centred = ctx.owner is CubeOwner.CENTRED
    can_beaver = ctx.is_money and ctx.beavers and -2.0 <= dt <= 0.0
    take = dt < dp
    double = False
    beaver = False
    if not ctx.can_double():
        if not ctx.is_money and ctx.owner is not CubeOwner.OPPONENT:
            action = _wording(
                centred, "Never double, take (dead cube)", "Never redouble, take (dead cube)"
            )
        else:
            action = "Doubling not available"
    elif dt >= nd and dp >= nd:
        double = True
        if dp > dt:
            optional = abs(dt - nd) <= 1e-5
            if can_beaver and 2.0 * dt < nd:
                double, beaver = False, True
                action = "No double, beaver"
            elif can_beaver:
                beaver = True
                action = "Optional double, beaver" if optional else "Double, beaver"
            elif optional:
                action = _wording(centred, "Optional double, take", "Optional redouble, take")
            else:
                action = _wording(centred, "Double, take", "Redouble, take")
        else:
            optional = (
                abs(nd - dp) <= 1e-5
                and wg > 0.0
                and (not ctx.is_money or not centred or not ctx.jacoby)
            )
            if optional:
                action = _wording(centred, "Optional double, pass", "Optional redouble, pass")
            else:
                action = _wording(centred, "Double, pass", "Redouble, pass")
    elif nd > dt and dt <= dp and nd <= dp:
        beaver = can_beaver
        if can_beaver:
            action = _wording(centred, "No double, beaver", "No redouble, beaver")
        else:
            action = _wording(centred, "No double, take", "No redouble, take")
    elif wg <= 0.0:
        # Too good with no gammon to play for: gnubg says double after all.
        double = True
        if dt > dp:
            action = _wording(centred, "Double, pass", "Redouble, pass")
        else:
            action = _wording(centred, "No double, take", "No redouble, take")
            double = False
    elif dt > dp:
        action = _wording(centred, "Too good to double, pass", "Too good to redouble, pass")
    else:
        action = _wording(centred, "Too good to double, take", "Too good to redouble, take")

    return CubeDecision(
        no_double=nd,
        double_take=dt,
        double_pass=dp,
        action=action,
        double=double,
        take=take,
        beaver=beaver and take,
        efficiency=efficiency,
        mwc_no_double=mwc[0] if mwc else None,
        mwc_double_take=mwc[1] if mwc else None,
        mwc_double_pass=mwc[2] if mwc else None,
    )


def match_context(match: MatchState, *, beavers: bool = False) -> CubeContext:
    """The Match ID's (or XGID's) cube and score seen from the player on roll (its
    ``dice_owner``); ``beavers`` (an XGID's money rule, which a Match ID has no
    place for) counts in money play only.

    Any match a Match ID or XGID holds (1-64 points) is within the match
    equity table (:data:`KAZAROSS_XG2_64`).

    >>> ctx = match_context(MatchState.from_match_id("QYkqASAAIAAA"))  # player 1 on roll
    >>> ctx.match_length, ctx.score, ctx.cube, ctx.owner.value
    (9, (4, 2), 2, 'opponent')
    """
    me = match.dice_owner
    if match.cube_owner is MatchCubeOwner.CENTRED:
        owner = CubeOwner.CENTRED
    elif int(match.cube_owner) == me:
        owner = CubeOwner.ON_ROLL
    else:
        owner = CubeOwner.OPPONENT
    return CubeContext(
        cube=match.cube_value,
        owner=owner,
        match_length=match.match_length,
        score=(match.score[me], match.score[1 - me]),
        crawford=match.crawford,
        jacoby=match.jacoby and match.match_length == 0,
        beavers=beavers and match.match_length == 0,
    )


def written_context(written: WrittenPosition) -> CubeContext:
    """The cube and score a Position ID, gnubg ID or XGID gives, seen from the player
    on roll: its match state's with an XGID's beaver rule (:func:`match_context`), or
    money with the cube centred for a bare Position ID.

    >>> from nard.notation.positions import read_written_position
    >>> written_context(read_written_position("4HPwATDgc/ABMA")) == CubeContext()
    True
    """
    if written.match is None:
        return CubeContext()
    return match_context(written.match, beavers=written.beavers)
