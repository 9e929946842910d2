"""The neural network's input encoding, version 2: Tesauro's raw board plus features.

Every position is encoded **from the side on roll's view, before it rolls**, the
frame of the :class:`~nard.engine.evaluator.Evaluator` seam; there is no turn
unit, since the side on roll is always the one whose chances the net gives.

Version 2 has :data:`INPUTS` = 215 inputs, floats in ``[0, 6]``:

=========  =====  ====================================================================
columns    count  meaning
=========  =====  ====================================================================
0-95       96     the side on roll's points 1-24, 4 units each (below)
96-191     96     the opponent's points 1-24 *in its own numbering*, 4 units each
192        1      the side on roll's checkers on the bar / 2
193        1      its checkers borne off / 15
194        1      its pip count / 167 (1.0 at the start)
195        1      the opponent's checkers on the bar / 2
196        1      the opponent's checkers borne off / 15
197        1      the opponent's pip count / 167
198        1      1.0 when the position is a race (no contact left), else 0.0
199-206    8      the side on roll's features (:data:`FEATURES`, below)
207-214    8      the opponent's features, computed alike from its side
=========  =====  ====================================================================

Point ``p`` of a side uses columns ``4 (p - 1)`` to ``4 (p - 1) + 3`` of its block,
from its count ``n`` there: ``n >= 1``, ``n >= 2``, ``n >= 3`` (0 or 1 each) and
``(n - 3) / 2`` when ``n > 3`` (Tesauro's TD-Gammon units, as in Sutton & Barto's
case study). The features, each side's computed on the board as that side
sees it (its own points numbered 1-24 towards its home, bar 25), are in the
spirit of gnubg's hand-crafted inputs (its ``I_BREAK_CONTACT``, ``I_BACK_CHEQUER``,
``I_P1``, ``I_ENTER2``, ``I_CONTAIN``; the definitions here are nard's own):

- ``back``: the point of the side's rearmost checker (the bar is 25) / 25;
- ``break_contact``: pips the side must move before all its checkers are past
  the opponent's rearmost one / 152;
- ``free_pips``: pips of its checkers already past it / 167;
- ``hit_rolls``: the share of the 36 rolls with which the side, were it on roll,
  could hit at least one of the opponent's blots (single die, both dice through
  an open point, doubles through open points; the bar's entering rule is not
  modelled);
- ``prime``: its longest run of made points (two or more checkers) / 6;
- ``home_points``: its made points in its home board / 6;
- ``enter_fail``: with a checker on the bar, the chance of failing to enter,
  ``(points the opponent has made in its home board / 6)^2``; else 0;
- ``blocked_ahead``: the opponent's made points among the 12 points in front of
  the side's rearmost checker / 12 (containment).

Both sides are laid out alike, so the encoding of ``position.flip()`` is that of
``position`` with the sides exchanged (:func:`swap_sides`).

The version number is stored with every network's weights
(:mod:`nard.engine.network`); weights trained for another version are refused.
Change :data:`ENCODING_VERSION` with any change to this layout.

>>> x = encode([Position()])
>>> x.shape, x.dtype
((1, 215), dtype('float32'))
>>> x[0, 4 * 5 : 4 * 6].tolist()  # five checkers on the 6-point
[1.0, 1.0, 1.0, 1.0]
>>> x[0, [PIPS_INPUT, OPPONENT_PIPS_INPUT, RACE_INPUT]].tolist()
[1.0, 1.0, 0.0]
>>> features = x[0, FEATURE_INPUT:OPPONENT_FEATURE_INPUT].tolist()
>>> {name: round(v, 4) for name, v in zip(FEATURES, features)}
... # doctest: +NORMALIZE_WHITESPACE
{'back': 0.96, 'break_contact': 1.0, 'free_pips': 0.0, 'hit_rolls': 0.0,
 'prime': 0.1667, 'home_points': 0.1667, 'enter_fail': 0.0, 'blocked_ahead': 0.25}
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from nard.core.position import CHECKERS, Position

__all__ = [
    "BAR_INPUT",
    "ENCODING_VERSION",
    "FEATURES",
    "FEATURE_INPUT",
    "INPUTS",
    "OFF_INPUT",
    "OPPONENT_BAR_INPUT",
    "OPPONENT_FEATURE_INPUT",
    "OPPONENT_OFF_INPUT",
    "OPPONENT_PIPS_INPUT",
    "OPPONENT_POINTS",
    "PIPS_INPUT",
    "RACE_INPUT",
    "encode",
    "encode_boards",
    "point_units",
    "race_flags",
    "side_features",
    "swap_sides",
]

ENCODING_VERSION = 2
"""The layout described in the module docstring; stored beside every network's weights."""

OPPONENT_POINTS = 96
"""First column of the opponent's points (the side on roll's start at 0)."""
BAR_INPUT = 192
"""The side on roll's bar."""
OFF_INPUT = 193
"""The side on roll's borne-off checkers."""
PIPS_INPUT = 194
"""The side on roll's pip count."""
OPPONENT_BAR_INPUT = 195
"""The opponent's bar."""
OPPONENT_OFF_INPUT = 196
"""The opponent's borne-off checkers."""
OPPONENT_PIPS_INPUT = 197
"""The opponent's pip count."""
RACE_INPUT = 198
"""The race flag."""
FEATURES = (
    "back",
    "break_contact",
    "free_pips",
    "hit_rolls",
    "prime",
    "home_points",
    "enter_fail",
    "blocked_ahead",
)
"""The names of each side's hand-crafted features, in column order."""
FEATURE_INPUT = 199
"""First column of the side on roll's features."""
OPPONENT_FEATURE_INPUT = FEATURE_INPUT + len(FEATURES)
"""First column of the opponent's features."""
INPUTS = OPPONENT_FEATURE_INPUT + len(FEATURES)
"""Inputs per position."""

_START_PIPS = 167.0


def point_units(n: int) -> tuple[float, float, float, float]:
    """The four units of a point holding ``n >= 0`` checkers of one side.

    >>> point_units(0), point_units(1), point_units(3), point_units(6)
    ((0.0, 0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), (1.0, 1.0, 1.0, 0.0), (1.0, 1.0, 1.0, 1.5))
    """
    return (
        float(n >= 1),
        float(n >= 2),
        float(n >= 3),
        (n - 3) / 2.0 if n > 3 else 0.0,
    )


# One lookup table of the four units of a point, indexed by board entry (-15 to +15)
# + 15 for the side on roll's points (units of max(entry, 0)) and + 46 for the
# opponent's (units of max(-entry, 0)); each row of four float32 is read as one
# complex128 so that a gather is a single ``take``.
_UNITS = np.array(
    [point_units(max(c, 0)) for c in range(-CHECKERS, CHECKERS + 1)]
    + [point_units(max(-c, 0)) for c in range(-CHECKERS, CHECKERS + 1)],
    dtype=np.float32,
)
_UNITS_C = _UNITS.view(np.complex128).reshape(-1)
# Board entries of the side on roll's points 1-24, then of the opponent's points
# 1-24 in its numbering (entries 24 down to 1), and their table offsets.
_POINT_ENTRIES = np.concatenate([np.arange(1, 25), np.arange(24, 0, -1)])
_POINT_OFFSETS = np.concatenate([np.full(24, CHECKERS), np.full(24, 3 * CHECKERS + 1)])
# Bar, off and pips are linear in each side's checker counts per board entry
# (mine = max(entry, 0), theirs = max(-entry, 0) = mine - entry), in input order:
# integer weights, so that the sums are exact, then one division.
_INDEX = np.arange(26)
_MINE_LINEAR = np.zeros((26, 6))
_MINE_LINEAR[25, 0] = 1.0  # bar
_MINE_LINEAR[:, 1] = -1.0  # off = 15 - checkers left
_MINE_LINEAR[:, 2] = _INDEX  # pips
_THEIRS_LINEAR = np.zeros((26, 6))
_THEIRS_LINEAR[0, 3] = 1.0
_THEIRS_LINEAR[:, 4] = -1.0
_THEIRS_LINEAR[:, 5] = 25 - _INDEX
# mine @ M + theirs @ T = mine @ (M + T) - entries @ T
_LINEAR_MINE = _MINE_LINEAR + _THEIRS_LINEAR
_LINEAR_ENTRIES = -_THEIRS_LINEAR
_LINEAR_CONSTANT = np.array([0.0, CHECKERS, 0.0, 0.0, CHECKERS, 0.0])
_LINEAR_DIVISOR = np.array([2.0, CHECKERS, _START_PIPS, 2.0, CHECKERS, _START_PIPS])


def encode(positions: Sequence[Position]) -> npt.NDArray[np.float32]:
    """The ``(n, INPUTS)`` float32 inputs of each position (see the module docstring).

    >>> encode([]).shape
    (0, 215)
    """
    n = len(positions)
    flat = np.fromiter(itertools.chain.from_iterable(positions), dtype=np.int64, count=26 * n)
    return encode_boards(flat.reshape(n, 26))


def encode_boards(boards: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """:func:`encode` for raw ``(n, 26)`` boards (index 1-24 points, 25 bar, 0 opponent's bar)."""
    n = boards.shape[0]
    x = np.empty((n, INPUTS), dtype=np.float32)
    x[:, :BAR_INPUT] = _UNITS_C.take(boards[:, _POINT_ENTRIES] + _POINT_OFFSETS).view(np.float32)
    entries = boards.astype(np.float64)
    mine = np.maximum(entries, 0.0)
    linear = mine @ _LINEAR_MINE + entries @ _LINEAR_ENTRIES + _LINEAR_CONSTANT
    x[:, BAR_INPUT:RACE_INPUT] = linear / _LINEAR_DIVISOR
    x[:, RACE_INPUT] = race_flags(boards)
    # Both sides' features in one pass: the boards, then the boards flipped.
    features = side_features(np.concatenate([boards, -boards[:, ::-1]]))
    x[:, FEATURE_INPUT:OPPONENT_FEATURE_INPUT] = features[:n]
    x[:, OPPONENT_FEATURE_INPUT:INPUTS] = features[n:]
    return x


# -- the hand-crafted features ------------------------------------------------------------

_POWERS = np.left_shift(np.int64(1), np.arange(26, dtype=np.int64))
_POINTS_MASK = ((1 << 25) - 1) ^ 1  # bits 1-24
_HOME_MASK = 0b1111110  # bits 1-6
_OPP_HOME_MASK = 0b111111 << 19  # bits 19-24


def _run_tables() -> tuple[npt.NDArray[np.float64], ...]:
    """For every 12-bit mask: set bits, longest run, run from the top bit, from bit 0."""
    count, longest, top, bottom = (np.zeros(1 << 12) for _ in range(4))
    for m in range(1 << 12):
        bits = [(m >> i) & 1 for i in range(12)]
        count[m] = sum(bits)
        run = 0
        for bit in bits:
            run = run + 1 if bit else 0
            longest[m] = max(longest[m], run)
        bottom[m] = next((i for i, bit in enumerate(bits) if not bit), 12)
        top[m] = next((i for i, bit in enumerate(reversed(bits)) if not bit), 12)
    return count, longest, top, bottom


_POPCOUNT_12, _LONGEST_12, _TOP_RUN_12, _BOTTOM_RUN_12 = _run_tables()
# The 15 non-double rolls (a, b), a < b, and the six doubles.
_A = np.array([a for a in range(1, 7) for b in range(a + 1, 7)])
_B = np.array([b for a in range(1, 7) for b in range(a + 1, 7)])
_DIE = np.arange(1, 7)


def _masks(flags: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
    """One bit per board index (bit ``i`` for index ``i``) for each row of 26 flags."""
    out: npt.NDArray[np.int64] = flags.astype(np.int64) @ _POWERS
    return out


def _hit_rolls(
    sources: npt.NDArray[np.int64], blots: npt.NDArray[np.int64], open_: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """Share of the 36 rolls hitting a blot, from bit masks of the side's checkers
    (``sources``), the opponent's blots and the points it may land on."""
    src, blot, opn = sources[:, None], blots[:, None], open_[:, None]
    # direct[:, d]: a checker d pips behind a blot (d = 0 never hits).
    direct = np.zeros((sources.shape[0], 7), dtype=bool)
    direct[:, 1:] = ((src >> _DIE) & blot) != 0
    # step[:, d]: where the side's checkers land with one die d, on open points.
    step = np.zeros((sources.shape[0], 7), dtype=np.int64)
    step[:, 0] = sources
    step[:, 1:] = (src >> _DIE) & opn
    combined = (((step[:, _A] >> _B) | (step[:, _B] >> _A)) & blot) != 0
    singles = combined | direct[:, _A] | direct[:, _B]
    # Doubles: up to four steps of the die, each landing on an open point.
    reach = step[:, 1:]
    hit = direct[:, 1:].copy()
    for _ in range(3):
        reach = reach >> _DIE
        hit |= (reach & blot) != 0
        reach &= opn
    count = 2 * singles.sum(axis=1) + hit.sum(axis=1)
    result: npt.NDArray[np.float64] = count / 36.0
    return result


def _longest_run(made: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """Length of the longest run of set bits among bits 1-24 of each mask."""
    low, high = (made >> 1) & 0xFFF, (made >> 13) & 0xFFF
    across = _TOP_RUN_12[low] + _BOTTOM_RUN_12[high]
    result: npt.NDArray[np.float64] = np.maximum(
        np.maximum(_LONGEST_12[low], _LONGEST_12[high]), across
    )
    return result


def side_features(boards: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """The ``(n, 8)`` :data:`FEATURES` of the side whose checkers are positive in
    ``boards`` (its points 1-24, its bar at 25, the opponent's bar at 0).

    Two checkers on the 6-point and one on the 8-point against a blot on the
    opponent's 20-point (5 pips in front of the 6-point): 20 rolls of 36 hit it
    (any 1 or 3).

    >>> f = side_features(np.array([Position.from_points({6: 2, 8: 1}, {20: 1})]))
    >>> [round(v, 4) for v in f[0].tolist()]
    [0.32, 0.0329, 0.0, 0.5556, 0.1667, 0.1667, 0.0, 0.0]
    """
    n = boards.shape[0]
    mine = np.maximum(boards, 0)
    theirs = np.maximum(-boards, 0)
    index = np.arange(26)
    has_mine = mine > 0
    # Rearmost checkers: the side's highest index, the opponent's lowest (its bar is 0).
    back = np.where(has_mine.any(axis=1), 25 - np.argmax(has_mine[:, ::-1], axis=1), 0)
    has_theirs = theirs > 0
    their_back = np.where(has_theirs.any(axis=1), np.argmax(has_theirs, axis=1), 26)
    beyond = index[None, :] > their_back[:, None]
    distance = index[None, :] - their_back[:, None]
    break_contact = (mine * np.where(beyond, distance, 0)).sum(axis=1)
    free_pips = (mine * np.where(beyond, 0, index[None, :])).sum(axis=1)

    masks = _masks(np.stack([mine >= 2, theirs >= 2, theirs == 1, has_mine], axis=1))
    made = masks[:, 0] & _POINTS_MASK
    blocked = masks[:, 1] & _POINTS_MASK
    blots = masks[:, 2] & _POINTS_MASK
    sources = masks[:, 3] & (_POINTS_MASK | (1 << 25))
    open_ = ~blocked & _POINTS_MASK

    out = np.empty((n, len(FEATURES)), dtype=np.float32)
    out[:, 0] = back / 25.0
    out[:, 1] = break_contact / 152.0
    out[:, 2] = free_pips / 167.0
    out[:, 3] = _hit_rolls(sources, blots, open_)
    out[:, 4] = _longest_run(made) / 6.0
    out[:, 5] = _POPCOUNT_12[made & _HOME_MASK] / 6.0
    their_home = _POPCOUNT_12[(blocked & _OPP_HOME_MASK) >> 19]
    out[:, 6] = np.where(mine[:, 25] > 0, (their_home / 6.0) ** 2, 0.0)
    # The 12 points in front of the rearmost checker: indices back-12 .. back-1.
    shift = np.maximum(back - 12, 0)
    window = (blocked >> shift) & ((np.int64(1) << np.minimum(back, 12)) - 1)
    out[:, 7] = _POPCOUNT_12[window & 0xFFF] / 12.0
    return out


def race_flags(boards: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Which raw ``(n, 26)`` boards are races (no contact left): the race input.

    >>> race_flags(np.array([Position(), Position.from_points({6: 2}, {6: 2})])).tolist()
    [False, True]
    """
    mine = np.maximum(boards, 0)
    # Contact: a checker of the side on roll at a higher index than one of the
    # opponent's; the cumulative sum counts the opponent's checkers up to each index.
    contact = np.einsum("ij,ij->i", mine, np.cumsum(mine - boards, axis=1))
    flags: npt.NDArray[np.bool_] = contact == 0
    return flags


_SWAP = np.concatenate(
    [
        np.arange(OPPONENT_POINTS, BAR_INPUT),
        np.arange(0, OPPONENT_POINTS),
        np.arange(OPPONENT_BAR_INPUT, RACE_INPUT),
        np.arange(BAR_INPUT, OPPONENT_BAR_INPUT),
        [RACE_INPUT],
        np.arange(OPPONENT_FEATURE_INPUT, INPUTS),
        np.arange(FEATURE_INPUT, OPPONENT_FEATURE_INPUT),
    ]
)


def swap_sides(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The inputs of the flipped positions: the two sides' inputs exchanged.

    >>> pos = Position.from_points({6: 3, 25: 1}, {20: 2})
    >>> bool((swap_sides(encode([pos])) == encode([pos.flip()])).all())
    True
    """
    return x[..., _SWAP]
