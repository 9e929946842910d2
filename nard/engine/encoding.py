"""The neural network's input encoding, version 1: Tesauro's raw board plus cheap features.

Every position is encoded **from the side on roll's view, before it rolls**, the
frame of the :class:`~nard.engine.evaluator.Evaluator` seam; there is no turn
unit, since the side on roll is always the one whose chances the net gives.

Version 1 has :data:`INPUTS` = 199 inputs, floats in ``[0, 6]``:

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
=========  =====  ====================================================================

Point ``p`` of a side uses columns ``4 (p - 1)`` to ``4 (p - 1) + 3`` of its block,
from its count ``n`` there: ``n >= 1``, ``n >= 2``, ``n >= 3`` (0 or 1 each) and
``(n - 3) / 2`` when ``n > 3`` (Tesauro's TD-Gammon units, as in Sutton & Barto's
case study). Both sides are laid out alike, so the encoding of
``position.flip()`` is that of ``position`` with the sides exchanged
(:func:`swap_sides`).

The version number is stored with every network's weights
(:mod:`nard.engine.network`); weights trained for another version are refused.
Change :data:`ENCODING_VERSION` with any change to this layout.

>>> x = encode([Position()])
>>> x.shape, x.dtype
((1, 199), dtype('float32'))
>>> x[0, 4 * 5 : 4 * 6].tolist()  # five checkers on the 6-point
[1.0, 1.0, 1.0, 1.0]
>>> x[0, [PIPS_INPUT, OPPONENT_PIPS_INPUT, RACE_INPUT]].tolist()
[1.0, 1.0, 0.0]
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
    "INPUTS",
    "OFF_INPUT",
    "OPPONENT_BAR_INPUT",
    "OPPONENT_OFF_INPUT",
    "OPPONENT_PIPS_INPUT",
    "OPPONENT_POINTS",
    "PIPS_INPUT",
    "RACE_INPUT",
    "encode",
    "encode_boards",
    "point_units",
    "swap_sides",
]

ENCODING_VERSION = 1
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
INPUTS = 199
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
    (0, 199)
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
    # Contact: a checker of the side on roll at a higher index than one of the
    # opponent's; the cumulative sum counts the opponent's checkers up to each index.
    contact = np.einsum("ij,ij->i", mine, np.cumsum(mine - entries, axis=1))
    x[:, RACE_INPUT] = contact == 0
    return x


_SWAP = np.concatenate(
    [
        np.arange(OPPONENT_POINTS, BAR_INPUT),
        np.arange(0, OPPONENT_POINTS),
        np.arange(OPPONENT_BAR_INPUT, RACE_INPUT),
        np.arange(BAR_INPUT, OPPONENT_BAR_INPUT),
        [RACE_INPUT],
    ]
)


def swap_sides(x: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """The inputs of the flipped positions: the two sides' inputs exchanged.

    >>> pos = Position.from_points({6: 3, 25: 1}, {20: 2})
    >>> bool((swap_sides(encode([pos])) == encode([pos.flip()])).all())
    True
    """
    return x[..., _SWAP]
