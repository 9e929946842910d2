"""The neural network's input encoding, version 3: Tesauro's raw board plus features.

Every position is encoded **from the side on roll's view, before it rolls**, the
frame of the :class:`~nard.engine.evaluator.Evaluator` seam; there is no turn
unit, since the side on roll is always the one whose chances the net gives.

Version 3 has :data:`INPUTS` = 219 inputs, floats in ``[0, 6]``:

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
199-208    10     the side on roll's features (:data:`FEATURES`, below)
209-218    10     the opponent's features, computed alike from its side
=========  =====  ====================================================================

Point ``p`` of a side uses columns ``4 (p - 1)`` to ``4 (p - 1) + 3`` of its block,
from its count ``n`` there: ``n >= 1``, ``n >= 2``, ``n >= 3`` (0 or 1 each) and
``(n - 3) / 2`` when ``n > 3`` (Tesauro's TD-Gammon units, as in Sutton & Barto's
case study). The features, each side's computed on the board as that side
sees it (its own points numbered 1-24 towards its home, bar 25), are in the
spirit of gnubg's hand-crafted inputs (its ``I_BREAK_CONTACT``, ``I_BACK_CHEQUER``,
``I_P1``, ``I_ENTER2``, ``I_CONTAIN``, ``I_BACKESCAPES``; the definitions here
are nard's own):

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
  the side's rearmost checker / 12;
- ``back_escapes``: the share of the 36 rolls with which the side's rearmost
  checker could move the whole roll by itself among the points the opponent
  has made in the 12 in front of it: both dice, through a point open for one
  of them, to an open point; a double's four steps each landing open (beyond
  12 pips counts as open); 1.0 with no checker left;
- ``containment``: 1 minus the same share for an opponent's checker on the
  worst of the side's points 1-10, among the side's made points in front of
  it (how well the side holds the opponent's back checkers).

Version 3 added the last two features to version 2 (215 inputs);
``training/widen_v2.py`` carries version 2 weights over with zero weights on
them, computing the same function.

The first :data:`RAW_INPUTS` = 199 columns (everything but the features) are
also the inputs of the *pruning* network (:func:`encode_raw_boards`), which
only ranks a search's replies and must be cheap: the features cost four
fifths of the encoding's time.

Both sides are laid out alike, so the encoding of ``position.flip()`` is that of
``position`` with the sides exchanged (:func:`swap_sides`).

The version number is stored with every network's weights
(:mod:`nard.engine.network`); weights trained for another version are refused.
Change :data:`ENCODING_VERSION` with any change to this layout.

>>> x = encode([Position()])
>>> x.shape, x.dtype
((1, 219), dtype('float32'))
>>> x[0, 4 * 5 : 4 * 6].tolist()  # five checkers on the 6-point
[1.0, 1.0, 1.0, 1.0]
>>> x[0, [PIPS_INPUT, OPPONENT_PIPS_INPUT, RACE_INPUT]].tolist()
[1.0, 1.0, 0.0]
>>> features = x[0, FEATURE_INPUT:OPPONENT_FEATURE_INPUT].tolist()
>>> {name: round(v, 4) for name, v in zip(FEATURES, features)}
... # doctest: +NORMALIZE_WHITESPACE
{'back': 0.96, 'break_contact': 1.0, 'free_pips': 0.0, 'hit_rolls': 0.0,
 'prime': 0.1667, 'home_points': 0.1667, 'enter_fail': 0.0, 'blocked_ahead': 0.25,
 'back_escapes': 0.6111, 'containment': 0.4167}
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from nard.core.position import Position
from nard.engine import _kernels
from nard.engine.evaluator import boards_of

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
    "RAW_INPUTS",
    "crashed_flags",
    "encode",
    "encode_boards",
    "encode_raw_boards",
    "point_units",
    "race_flags",
    "side_features",
    "swap_sides",
]

ENCODING_VERSION = 3
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
RAW_INPUTS = RACE_INPUT + 1
"""Inputs of the raw encoding (:func:`encode_raw_boards`): every column before the features."""
FEATURES = (
    "back",
    "break_contact",
    "free_pips",
    "hit_rolls",
    "prime",
    "home_points",
    "enter_fail",
    "blocked_ahead",
    "back_escapes",
    "containment",
)
"""The names of each side's hand-crafted features, in column order."""
FEATURE_INPUT = 199
"""First column of the side on roll's features."""
OPPONENT_FEATURE_INPUT = FEATURE_INPUT + len(FEATURES)
"""First column of the opponent's features."""
INPUTS = OPPONENT_FEATURE_INPUT + len(FEATURES)
"""Inputs per position."""


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


def encode(positions: Sequence[Position]) -> npt.NDArray[np.float32]:
    """The ``(n, INPUTS)`` float32 inputs of each position (see the module docstring).

    >>> encode([]).shape
    (0, 219)
    """
    return encode_boards(boards_of(positions))


def encode_boards(boards: npt.NDArray[np.integer]) -> npt.NDArray[np.float32]:
    """:func:`encode` for raw ``(n, 26)`` boards (index 1-24 points, 25 bar, 0 opponent's bar).

    Any integer dtype; compiled (numba), one pass per board.
    """
    x = np.empty((boards.shape[0], INPUTS), dtype=np.float32)
    _kernels.encode_into(np.ascontiguousarray(boards, dtype=np.int64), x)
    return x


def encode_raw_boards(boards: npt.NDArray[np.integer]) -> npt.NDArray[np.float32]:
    """The first :data:`RAW_INPUTS` columns of :func:`encode_boards` (no features).

    >>> boards = boards_of([Position(), Position.from_points({6: 3, 25: 1}, {20: 2})])
    >>> bool((encode_raw_boards(boards) == encode_boards(boards)[:, :RAW_INPUTS]).all())
    True
    """
    x = np.empty((boards.shape[0], RAW_INPUTS), dtype=np.float32)
    _kernels.raw_encode_into(np.ascontiguousarray(boards, dtype=np.int64), x)
    return x


def side_features(boards: npt.NDArray[np.integer]) -> npt.NDArray[np.float32]:
    """The ``(n, 10)`` :data:`FEATURES` of the side whose checkers are positive in
    ``boards`` (its points 1-24, its bar at 25, the opponent's bar at 0).

    Two checkers on the 6-point and one on the 8-point against a blot on the
    opponent's 20-point (5 pips in front of the 6-point): 20 rolls of 36 hit it
    (any 1 or 3).

    >>> f = side_features(np.array([Position.from_points({6: 2, 8: 1}, {20: 1})]))
    >>> [round(v, 4) for v in f[0].tolist()]
    [0.32, 0.0329, 0.0, 0.5556, 0.1667, 0.1667, 0.0, 0.0, 1.0, 0.1389]
    """
    out = np.empty((boards.shape[0], len(FEATURES)), dtype=np.float32)
    _kernels.side_features_into(np.ascontiguousarray(boards, dtype=np.int64), out)
    return out


def race_flags(boards: npt.NDArray[np.integer]) -> npt.NDArray[np.bool_]:
    """Which raw ``(n, 26)`` boards are races (no contact left): the race input.

    >>> race_flags(np.array([Position(), Position.from_points({6: 2}, {6: 2})])).tolist()
    [False, True]
    """
    out = np.empty(boards.shape[0], dtype=np.bool_)
    _kernels.race_flags_into(np.ascontiguousarray(boards, dtype=np.int64), out)
    return out


def crashed_flags(boards: npt.NDArray[np.integer]) -> npt.NDArray[np.bool_]:
    """Which raw ``(n, 26)`` boards are *crashed* contact positions: contact, and a
    side has at most 6 checkers still in play (on the bar, on its points 3-24, and
    one checker of each of its 1- and 2-points; the rest of those stacks are
    dead). gnubg keeps a network for such positions; the definition is nard's.
    Not an input: it picks the network (:mod:`nard.engine.network`).

    >>> crashed = Position.from_points({1: 6, 2: 5, 3: 1, 6: 1, 24: 2}, {6: 5, 8: 5, 13: 5})
    >>> crashed_flags(np.array([crashed, crashed.flip(), Position()])).tolist()
    [True, True, False]
    """
    out = np.empty(boards.shape[0], dtype=np.bool_)
    _kernels.crashed_flags_into(np.ascontiguousarray(boards, dtype=np.int64), out)
    return out


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
