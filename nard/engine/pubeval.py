"""Tesauro's pubeval: the public benchmark move evaluator of backgammon programs.

pubeval is a linear score ``W . x`` of the position *after* a move, from the
mover's point of view; the player picks the play with the highest score.
Two weight vectors of 122 each are used: one for races (chosen when the
position *before* the move has no contact) and one for contact positions.

Source: Gerald Tesauro, ``pubeval.c`` (IBM Research, 1993, placed in the
public domain "as a public service to the backgammon programming community"),
with its weight files ``WT.race`` and ``WT.cntc``. The weights and the
encoding were read from two copies of that code, which agree digit for digit:
GNU Backgammon's ``pub_eval.c`` (repository mormegil-cz/gnubg, "by Gerry
Tesauro, modified by Gary Wong") and OpenBSD's backgammon game (``pubeval.c``
rev. 1.3, "Public domain, Gerry Tesauro"). This module is a new
implementation of the published semantics, vectorised with numpy; its tests
compare its scores with those of the original C function.

The encoding ``x`` (see :func:`pubeval_inputs`), for a board after the move
with the mover's checkers positive:

- for each of the mover's points 24, 23, ..., 1 (block ``k`` = point ``24 - k``),
  5 inputs from the count ``n`` there: ``n == -1`` (an opponent blot),
  ``n == 1``, ``n >= 2``, ``n == 3``, and ``(n - 3) / 2`` when ``n >= 4``;
  an opponent point of two or more checkers sets nothing;
- ``x[120]``: the opponent's checkers on the bar / 2;
- ``x[121]``: the mover's checkers borne off / 15.

As in the original, the mover's own checkers on the bar are not encoded, and a
play that bears off the last checker scores ``99999999``.

>>> pos = Position()
>>> play = PubevalPlayer().choose_play(pos, (3, 1))
>>> pos.format_play(play)
'8/5 6/5'
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from nard.core.position import CHECKERS, Play, Position

__all__ = [
    "CONTACT_WEIGHTS",
    "RACE_WEIGHTS",
    "WINNING_SCORE",
    "PubevalPlayer",
    "pubeval_inputs",
    "pubeval_scores",
]

WINNING_SCORE = 99999999.0
"""pubeval's score of a play that bears off the last checker."""

# fmt: off
RACE_WEIGHTS: tuple[float, ...] = (
     0.00000, -0.17160,  0.27010,  0.29906, -0.08471,  0.00000, -1.40375, -1.05121,
     0.07217, -0.01351,  0.00000, -1.29506, -2.16183,  0.13246, -1.03508,  0.00000,
    -2.29847, -2.34631,  0.17253,  0.08302,  0.00000, -1.27266, -2.87401, -0.07456,
    -0.34240,  0.00000, -1.34640, -2.46556, -0.13022, -0.01591,  0.00000,  0.27448,
     0.60015,  0.48302,  0.25236,  0.00000,  0.39521,  0.68178,  0.05281,  0.09266,
     0.00000,  0.24855, -0.06844, -0.37646,  0.05685,  0.00000,  0.17405,  0.00430,
     0.74427,  0.00576,  0.00000,  0.12392,  0.31202, -0.91035, -0.16270,  0.00000,
     0.01418, -0.10839, -0.02781, -0.88035,  0.00000,  1.07274,  2.00366,  1.16242,
     0.22520,  0.00000,  0.85631,  1.06349,  1.49549,  0.18966,  0.00000,  0.37183,
    -0.50352, -0.14818,  0.12039,  0.00000,  0.13681,  0.13978,  1.11245, -0.12707,
     0.00000, -0.22082,  0.20178, -0.06285, -0.52728,  0.00000, -0.13597, -0.19412,
    -0.09308, -1.26062,  0.00000,  3.05454,  5.16874,  1.50680,  5.35000,  0.00000,
     2.19605,  3.85390,  0.88296,  2.30052,  0.00000,  0.92321,  1.08744, -0.11696,
    -0.78560,  0.00000, -0.09795, -0.83050, -1.09167, -4.94251,  0.00000, -1.00316,
    -3.66465, -2.56906, -9.67677,  0.00000, -2.77982, -7.26713, -3.40177, -12.32252,
     0.00000,  3.42040,
)
"""Tesauro's race weights (``WT.race``), in the order of :func:`pubeval_inputs`."""

CONTACT_WEIGHTS: tuple[float, ...] = (
     0.25696, -0.66937, -1.66135, -2.02487, -2.53398, -0.16092, -1.11725, -1.06654,
    -0.92830, -1.99558, -1.10388, -0.80802,  0.09856, -0.62086, -1.27999, -0.59220,
    -0.73667,  0.89032, -0.38933, -1.59847, -1.50197, -0.60966,  1.56166, -0.47389,
    -1.80390, -0.83425, -0.97741, -1.41371,  0.24500,  0.10970, -1.36476, -1.05572,
     1.15420,  0.11069, -0.38319, -0.74816, -0.59244,  0.81116, -0.39511,  0.11424,
    -0.73169, -0.56074,  1.09792,  0.15977,  0.13786, -1.18435, -0.43363,  1.06169,
    -0.21329,  0.04798, -0.94373, -0.22982,  1.22737, -0.13099, -0.06295, -0.75882,
    -0.13658,  1.78389,  0.30416,  0.36797, -0.69851,  0.13003,  1.23070,  0.40868,
    -0.21081, -0.64073,  0.31061,  1.59554,  0.65718,  0.25429, -0.80789,  0.08240,
     1.78964,  0.54304,  0.41174, -1.06161,  0.07851,  2.01451,  0.49786,  0.91936,
    -0.90750,  0.05941,  1.83120,  0.58722,  1.28777, -0.83711, -0.33248,  2.64983,
     0.52698,  0.82132, -0.58897, -1.18223,  3.35809,  0.62017,  0.57353, -0.07276,
    -0.36214,  4.37655,  0.45481,  0.21746,  0.10504, -0.61977,  3.54001,  0.04612,
    -0.18108,  0.63211, -0.87046,  2.47673, -0.48016, -1.27157,  0.86505, -1.11342,
     1.24612, -0.82385, -2.77082,  1.23606, -1.59529,  0.10438, -1.30206, -4.11520,
     5.62596, -2.75800,
)
"""Tesauro's contact weights (``WT.cntc``), in the order of :func:`pubeval_inputs`."""
# fmt: on

_INPUTS = 122
_BAR_INPUT = 120
_OFF_INPUT = 121
# Counts on a point range from -15 (opponent) to +15 (mover): column = count + 15.
_COUNTS = np.arange(-CHECKERS, CHECKERS + 1)
# The mover's points in input-block order: 24, 23, ..., 1.
_POINTS = np.arange(24, 0, -1)


def _point_features(counts: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """The 5 inputs of one point for each count, shape ``counts.shape + (5,)``."""
    n = counts[..., None]
    return np.concatenate(
        [
            n == -1,
            n == 1,
            n >= 2,
            n == 3,
            np.where(n >= 4, (n - 3) / 2.0, 0.0),
        ],
        axis=-1,
        dtype=np.float64,
    )


def _point_tables(weights: Sequence[float]) -> npt.NDArray[np.float64]:
    """``table[k, count + 15]``: what a point in block ``k`` adds to the score."""
    w = np.asarray(weights, dtype=np.float64)[: 5 * 24].reshape(24, 5)
    features = _point_features(_COUNTS)  # (31, 5)
    return w @ features.T  # (24, 31)


_TABLES = {
    True: (_point_tables(RACE_WEIGHTS), RACE_WEIGHTS[_BAR_INPUT], RACE_WEIGHTS[_OFF_INPUT]),
    False: (
        _point_tables(CONTACT_WEIGHTS),
        CONTACT_WEIGHTS[_BAR_INPUT],
        CONTACT_WEIGHTS[_OFF_INPUT],
    ),
}
_BLOCKS = np.arange(24)


def _mover_boards(results: Sequence[Position]) -> npt.NDArray[np.int64]:
    """The boards after the plays, seen from the mover: ``(n, 26)``, mover positive.

    ``Play.result`` is seen from the opponent, so reversing and negating gives
    the mover's view: index 1-24 its points, 25 its bar, 0 the opponent's bar.
    """
    return -np.asarray(results, dtype=np.int64)[:, ::-1]


def pubeval_inputs(results: Sequence[Position]) -> npt.NDArray[np.float64]:
    """pubeval's 122 inputs for each position played into, shape ``(n, 122)``.

    ``results`` are ``Play.result`` positions (seen from the opponent, now on
    roll); the inputs describe them from the mover's view, as pubeval does.

    >>> x = pubeval_inputs([Position().legal_plays((6, 5))[0].result])
    >>> x.shape
    (1, 122)
    """
    boards = _mover_boards(results)
    n = len(boards)
    x = np.zeros((n, _INPUTS), dtype=np.float64)
    x[:, : 5 * 24] = _point_features(boards[:, _POINTS]).reshape(n, 5 * 24)
    x[:, _BAR_INPUT] = -boards[:, 0] / 2.0
    x[:, _OFF_INPUT] = (CHECKERS - np.clip(boards, 0, None).sum(axis=1)) / CHECKERS
    return x


def pubeval_scores(results: Sequence[Position], race: bool) -> npt.NDArray[np.float64]:
    """pubeval's score of each position played into (higher is better for the mover).

    ``race`` selects the weights and, as Tesauro specifies, describes the
    position *before* the move. Equals ``pubeval_inputs(results) @ weights``,
    computed with per-point lookup tables; a play that bears off the last
    checker scores :data:`WINNING_SCORE`.
    """
    if not results:
        return np.zeros(0, dtype=np.float64)
    boards = _mover_boards(results)
    table, w_bar, w_off = _TABLES[bool(race)]
    mover = np.clip(boards, 0, None).sum(axis=1)
    scores: npt.NDArray[np.float64] = table[_BLOCKS, boards[:, _POINTS] + CHECKERS].sum(axis=1)
    scores += w_bar * (-boards[:, 0] / 2.0) + w_off * ((CHECKERS - mover) / CHECKERS)
    scores[mover == 0] = WINNING_SCORE
    return scores


class PubevalPlayer:
    """Plays the legal play with the highest pubeval score; ties go to the first generated.

    The race weights are used when the position before the move is a race
    (:meth:`Position.is_race`), the contact weights otherwise.
    """

    name = "pubeval"

    def __repr__(self) -> str:
        return "PubevalPlayer()"

    def choose_play(self, position: Position, dice: Sequence[int]) -> Play | None:
        """The chosen play, or ``None`` when the roll cannot be played."""
        plays = position.legal_plays(dice)
        if len(plays) <= 1:
            return plays[0] if plays else None
        scores = pubeval_scores([play.result for play in plays], position.is_race())
        return plays[int(np.argmax(scores))]
