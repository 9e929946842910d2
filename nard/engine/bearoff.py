"""The exact one-sided bear-off database, computed by nard itself.

A *bear-off side* is one side's checkers when all of them are in its home
board: six counts, for its points 1-6, of 0-15 checkers in all (borne-off
checkers are implicit). There are C(21, 6) = 54,264 of them. For each, the
database holds the probability distribution of the number of rolls that side
needs to bear off all its checkers, ``P(done in exactly n rolls)``, and its
expected number of rolls, when every roll is played to **minimise the expected
number of rolls**. That is the standard criterion of one-sided databases
(gnubg's among them), not the best play for every race: near the end of a
close race, or when saving a gammon, another play can win more often.

For sides of 15 checkers it also holds the distribution of the number of rolls
until the *first* checker is off (each roll played to minimise its expected
value: the gammon-saving play), which gives gammon chances.

The numbers come from dynamic programming in increasing pip order over nard's
own move generation: for each of the 21 rolls (weight 1/36, or 2/36 for a
non-double) the play leading to the lowest expected rolls is chosen, and the
distribution of that successor, one roll later, enters with the roll's weight.
Ties between successors of equal expectation go to the lowest index, so the
build is deterministic.

**Index.** A side ``(c1, ..., c6)`` with ``N`` checkers has index
``C(N + 5, 6) + rank``, sides ordered by checker count; in the combinatorial
number system, ``index = sum(C(k - 1 + c(7-k) + ... + c6, k) for k in 1..6)``.
It is the ordering of GNU Backgammon's ``PositionBearoff`` (the empty side is
0, one checker on the 1-point is 1, 15 on the 6-point is 54,263), so the
indexes can be compared with gnubg's.

**Storage.** The database ships as ``nard/engine/data/bearoff1.npz``
(1.2 MB): probabilities as ``uint16`` in units of 1/65535, rounded by largest
remainder so that every distribution sums to exactly 65535, and the expected
rolls as ``float64`` straight from the dynamic programming. Rebuild it, byte
for byte, with ``python -m nard.engine.build_bearoff --build PATH`` (about a minute
and a half on one core). A missing or corrupt file raises
:class:`BearoffDatabaseError`, never a fallback.

>>> db = BearoffDatabase.load()
>>> db.expected_rolls((1, 0, 0, 0, 0, 0))
1.0
>>> round(db.expected_rolls((0, 0, 0, 0, 0, 1)), 4)  # one checker on the 6-point
1.25
>>> pos = Position.from_points({1: 1}, {6: 2})
>>> db.win_probability(pos)
1.0
"""

from __future__ import annotations

import functools
import io
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from math import comb
from pathlib import Path
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from nard.core import _movegen
from nard.core.errors import NardError
from nard.core.position import Position
from nard.engine import _kernels
from nard.engine._npz import read_arrays

__all__ = [
    "FORMAT",
    "MAX_CHECKERS",
    "POINTS",
    "POSITIONS",
    "BearoffDatabase",
    "BearoffDatabaseError",
    "BearoffTables",
    "NotBearoffError",
    "bearoff_index",
    "bearoff_rows",
    "build",
    "checkers_from_index",
    "default_path",
    "home_checkers",
    "is_bearoff",
    "write_npz",
]

POINTS = 6
"""Points of a home board."""
MAX_CHECKERS = 15
"""Checkers of a side."""
POSITIONS = comb(MAX_CHECKERS + POINTS, POINTS)
"""Bear-off sides of 0-15 checkers: C(21, 6) = 54,264."""
FORMAT = "nard-bearoff-one-sided-1"
"""The format tag stored in the file; a file with another tag is refused."""
SCALE = 65535
"""Probabilities are stored as integers in units of 1/SCALE."""

Side: TypeAlias = "Position | Sequence[int]"
"""A bear-off side: a Position (the side on roll's home board) or six checker counts."""
FloatArray: TypeAlias = npt.NDArray[np.float64]

# The 21 distinct rolls, larger die first, and their weights out of 36.
_ROLLS = tuple((d1, d2) for d1 in range(1, 7) for d2 in range(1, d1 + 1))
_WEIGHTS = tuple(1 if d1 == d2 else 2 for d1, d2 in _ROLLS)

_DATA_FILE = Path(__file__).with_name("data") / "bearoff1.npz"
_RESTORE = (
    "restore it with `git checkout -- nard/engine/data/bearoff1.npz` "
    "or rebuild it with `python -m nard.engine.build_bearoff --build {path}`"
)


class BearoffDatabaseError(NardError):
    """The database file is missing, unreadable or inconsistent; the message names
    the file and how to restore it."""


class NotBearoffError(NardError, ValueError):
    """A position or side that the bear-off database does not cover: a checker
    outside the home board or on the bar, or checker counts that are not a side."""


def default_path() -> Path:
    """The database file shipped inside the package."""
    return _DATA_FILE


# -- index ----------------------------------------------------------------------


def _check_side(checkers: Sequence[int]) -> tuple[int, ...]:
    side = tuple(checkers)
    if (
        len(side) != POINTS
        or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in side)
        or sum(side) > MAX_CHECKERS
    ):
        raise NotBearoffError(
            f"invalid bear-off side {checkers!r}: expected {POINTS} checker counts "
            f"(points 1-{POINTS}) of 0-{MAX_CHECKERS} checkers in all"
        )
    return side


def _index(side: Sequence[int]) -> int:
    index = total = 0
    for k in range(1, POINTS + 1):
        total += side[POINTS - k]
        index += comb(k - 1 + total, k)
    return index


def bearoff_index(checkers: Sequence[int]) -> int:
    """The index of a side given as its checker counts on points 1-6.

    >>> bearoff_index((0, 0, 0, 0, 0, 0)), bearoff_index((1, 0, 0, 0, 0, 0))
    (0, 1)
    >>> bearoff_index((2, 0, 0, 0, 0, 0)), bearoff_index((0, 0, 0, 0, 0, 15))
    (7, 54263)
    """
    return _index(_check_side(checkers))


def checkers_from_index(index: int) -> tuple[int, ...]:
    """The side (checker counts on points 1-6) with this index.

    >>> checkers_from_index(637)
    (1, 1, 1, 1, 1, 1)
    """
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < POSITIONS:
        raise NotBearoffError(f"invalid bear-off index {index!r}: expected 0-{POSITIONS - 1}")
    # Greedy decoding of the combinatorial number system: the largest c with
    # C(c, k) <= rest gives the k-th marker, from k = 6 down.
    markers = [0] * (POINTS + 1)
    rest = index
    top = MAX_CHECKERS + POINTS
    for k in range(POINTS, 0, -1):
        c = top - 1
        while comb(c, k) > rest:
            c -= 1
        markers[k] = c
        rest -= comb(c, k)
        top = c
    # markers[k] = k - 1 + (checkers on points 7-k..6): undo the partial sums.
    totals = [markers[k] - (k - 1) for k in range(1, POINTS + 1)]
    side = [0] * POINTS
    previous = 0
    for k in range(1, POINTS + 1):
        side[POINTS - k] = totals[k - 1] - previous
        previous = totals[k - 1]
    return tuple(side)


def home_checkers(position: Position, *, opponent: bool = False) -> tuple[int, ...]:
    """The side on roll's (or, with ``opponent``, the opponent's) home board as a
    bear-off side: its checker counts on its own points 1-6.

    Raises :class:`NotBearoffError` when that side has a checker on the bar or
    outside its home board.

    >>> pos = Position.from_points({1: 2, 6: 1}, {3: 4})
    >>> home_checkers(pos), home_checkers(pos, opponent=True)
    ((2, 0, 0, 0, 0, 1), (0, 0, 4, 0, 0, 0))
    """
    b = position.flip() if opponent else position
    if b[25] > 0 or any(b[p] > 0 for p in range(POINTS + 1, 25)):
        whose = "the opponent" if opponent else "the side on roll"
        raise NotBearoffError(
            f"not a bear-off position: {whose} has checkers outside its home board "
            f"in position {position.position_id()}"
        )
    return tuple(max(b[p], 0) for p in range(1, POINTS + 1))


def is_bearoff(position: Position) -> bool:
    """True when every checker of both sides is in its own home board (a pure
    bear-off race, which the database solves).

    >>> is_bearoff(Position.from_points({1: 2}, {6: 3})), is_bearoff(Position())
    (True, False)
    """
    return all(position[i] >= 0 for i in range(0, 19)) and all(
        position[p] <= 0 for p in range(POINTS + 1, 26)
    )


def bearoff_rows(boards: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """:func:`is_bearoff` for each row of raw ``(n, 26)`` boards (``Position`` tuples).

    >>> bearoff_rows(np.array([Position.from_points({1: 2}, {6: 3}), Position()])).tolist()
    [True, False]
    """
    rows = np.empty(boards.shape[0], dtype=np.bool_)
    _kernels.bearoff_flags_into(np.ascontiguousarray(boards, dtype=np.int64), rows)
    return rows


def _side_of(side: Side) -> tuple[int, ...]:
    if isinstance(side, Position):
        return home_checkers(side)
    return _check_side(side)


# -- the database ------------------------------------------------------------------


class BearoffDatabase:
    """The one-sided bear-off database, loaded (see the module docstring).

    Distributions are read-only ``float64`` arrays indexed by the number of
    rolls ``n`` (``n = 0`` only for a side with no checkers left), all of the
    same length, :attr:`max_rolls` + 1. Arguments named ``side`` take a
    :class:`Position` (meaning the home board of the side on roll) or six
    checker counts; for the opponent of a position use
    ``home_checkers(position, opponent=True)`` or ``position.flip()``.
    """

    def __init__(
        self,
        rolls: npt.NDArray[np.uint16],
        expected: FloatArray,
        first_off: npt.NDArray[np.uint16],
        first_off_expected: FloatArray,
        path: Path | None = None,
    ) -> None:
        self.path = path
        # One width for every distribution, so that any two can be combined.
        width = max(rolls.shape[1], first_off.shape[1])
        self._rolls = _readonly(_widen(rolls, width) / SCALE)
        self._expected = _readonly(np.asarray(expected, dtype=np.float64))
        self._first_off = _readonly(_widen(first_off, width) / SCALE)
        self._first_off_expected = _readonly(np.asarray(first_off_expected, dtype=np.float64))
        self._done = _readonly(np.eye(1, self._first_off.shape[1], dtype=np.float64)[0])

    @classmethod
    def load(cls, path: str | Path | None = None) -> BearoffDatabase:
        """The database from ``path`` (default: the file shipped with nard), read
        once per path and then shared.

        Raises :class:`BearoffDatabaseError` when the file is missing or corrupt.
        """
        return _load_cached(Path(path) if path is not None else _DATA_FILE)

    @classmethod
    def from_file(cls, path: str | Path) -> BearoffDatabase:
        """Read a database file, uncached (see :meth:`load`)."""
        path = Path(path)
        arrays = read_arrays(
            path, BearoffDatabaseError, "bear-off database", _RESTORE.format(path=path)
        )
        problem = _check_arrays(arrays)
        if problem:
            raise BearoffDatabaseError(
                f"bear-off database {str(path)!r} is corrupt ({problem}); "
                + _RESTORE.format(path=path)
            )
        return cls(
            arrays["rolls"],
            arrays["expected"],
            arrays["first_off"],
            arrays["first_off_expected"],
            path,
        )

    # -- whole tables, for vectorised use -------------------------------------------
    @property
    def max_rolls(self) -> int:
        """The distributions' last index: the most rolls with a stored probability.

        Some sides can need more (up to 30 rolls), but too rarely to register in
        units of 1/65535.
        """
        return int(self._rolls.shape[1]) - 1

    @property
    def distributions(self) -> FloatArray:
        """Every side's distribution: row ``bearoff_index(side)``, column ``n``."""
        return self._rolls

    @property
    def expectations(self) -> FloatArray:
        """Every side's expected rolls, by index."""
        return self._expected

    # -- one side --------------------------------------------------------------------
    def distribution(self, side: Side) -> FloatArray:
        """P(the side bears off its last checker on exactly its n-th roll), for n = 0...

        >>> db = BearoffDatabase.load()
        >>> [round(float(p), 4) for p in db.distribution((0, 0, 0, 1, 0, 0))[:3]]
        [0.0, 0.9444, 0.0556]
        """
        row: FloatArray = self._rolls[_index(_side_of(side))]
        return row

    def expected_rolls(self, side: Side) -> float:
        """The expected number of rolls to bear off every checker (0 for none left)."""
        return float(self._expected[_index(_side_of(side))])

    def first_off_distribution(self, side: Side) -> FloatArray:
        """P(the side bears off its *first* checker on exactly its n-th roll).

        For a side with fewer than 15 checkers one is already off (n = 0).
        """
        s = _side_of(side)
        if sum(s) < MAX_CHECKERS:
            return self._done
        row: FloatArray = self._first_off[_index(s) - _FIRST_FULL]
        return row

    def first_off_expected_rolls(self, side: Side) -> float:
        """The expected number of rolls until the side's first checker is off."""
        s = _side_of(side)
        if sum(s) < MAX_CHECKERS:
            return 0.0
        return float(self._first_off_expected[_index(s) - _FIRST_FULL])

    # -- a race ----------------------------------------------------------------------
    def win_probability(self, position: Position) -> float:
        """P(the side on roll wins) in a pure bear-off race, before it rolls.

        The side on roll rolls first: finishing on its i-th roll, it wins when
        the opponent needs at least i rolls, so P(win) = sum over i of
        P_me(i) * (1 - CDF_opp(i - 1)). Both sides play to minimise their
        expected rolls. Raises :class:`NotBearoffError` unless :func:`is_bearoff`.
        """
        return self.probabilities(position)[0]

    def probabilities(self, position: Position) -> tuple[float, float, float, float, float]:
        """The five cubeless probabilities in gnubg's order, for a pure bear-off
        race before the side on roll rolls: (win, win gammon, win backgammon,
        lose gammon, lose backgammon), gammons including backgammons.

        A gammon needs the loser to have all 15 checkers left; its chance uses
        the loser's first-off distribution (the winner still races, as gnubg
        does). No backgammon is possible in a bear-off race.

        >>> db = BearoffDatabase.load()
        >>> p = db.probabilities(Position.from_points({1: 15}, {6: 15}))
        >>> round(p[0], 4), 0 < p[1] < 1e-4, p[3]
        (0.9994, True, 0.0)
        """
        home_checkers(position)  # raises unless both sides are home
        home_checkers(position, opponent=True)
        row = self.probabilities_of_boards(np.array([position], dtype=np.int64))[0]
        win, win_gammon, _, lose_gammon, _ = row.tolist()
        return (win, win_gammon, 0.0, lose_gammon, 0.0)

    def probabilities_of_boards(self, boards: npt.NDArray[np.int64]) -> FloatArray:
        """:meth:`probabilities` of many pure bear-offs at once: ``(n, 26)`` boards
        (``tuple(position)`` rows, every checker of both sides in its home board:
        not checked) to an ``(n, 5)`` array, row by row the same floats.

        >>> db = BearoffDatabase.load()
        >>> race = Position.from_points({1: 15}, {6: 15})
        >>> db.probabilities_of_boards(np.array([race])).tolist()[0] == list(db.probabilities(race))
        True
        """
        boards = np.ascontiguousarray(boards, dtype=np.int64)
        out = np.empty((boards.shape[0], 5), dtype=np.float64)
        _kernels.bearoff_probabilities_into(
            boards,
            np.arange(boards.shape[0]),
            self._rolls,
            self._first_off,
            _FIRST_FULL,
            _COMB,
            out,
        )
        return out

    def __repr__(self) -> str:
        return f"BearoffDatabase(path={str(self.path)!r}, max_rolls={self.max_rolls})"


_COMB = np.array(
    [[comb(k - 1 + t, k) if k else 0 for t in range(MAX_CHECKERS + 1)] for k in range(POINTS + 1)],
    dtype=np.int64,
)
"""``_COMB[k, t] = comb(k - 1 + t, k)``: the terms of :func:`_index`."""


def _widen(q: npt.NDArray[np.uint16], width: int) -> FloatArray:
    out = np.zeros((q.shape[0], width), dtype=np.float64)
    out[:, : q.shape[1]] = q
    return out


def _readonly(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    a.setflags(write=False)
    return a


_FIRST_FULL = comb(MAX_CHECKERS + POINTS - 1, POINTS)
"""Index of the first side of 15 checkers (sides of 15 are the last ones)."""


@functools.cache
def _load_cached(path: Path) -> BearoffDatabase:
    return BearoffDatabase.from_file(path)


def _check_arrays(arrays: dict[str, npt.NDArray[Any]]) -> str:
    """What is wrong with a file's arrays, or '' when they are sound."""
    expected_dtypes = {
        "format": np.str_,
        "rolls": np.uint16,
        "expected": np.float64,
        "first_off": np.uint16,
        "first_off_expected": np.float64,
    }
    for name, dtype in expected_dtypes.items():
        if name not in arrays:
            return f"no array {name!r}"
        if arrays[name].dtype.type is not dtype:
            return f"array {name!r} has dtype {arrays[name].dtype}"
    tag = arrays["format"]
    if tag.shape != () or str(tag) != FORMAT:
        return f"format {tag.tolist()!r}, expected {FORMAT!r}"
    rolls, first_off = arrays["rolls"], arrays["first_off"]
    full = POSITIONS - _FIRST_FULL
    if rolls.ndim != 2 or rolls.shape[0] != POSITIONS or rolls.shape[1] < 2:
        return f"rolls has shape {rolls.shape}"
    if first_off.ndim != 2 or first_off.shape[0] != full or first_off.shape[1] < 2:
        return f"first_off has shape {first_off.shape}"
    if arrays["expected"].shape != (POSITIONS,):
        return f"expected has shape {arrays['expected'].shape}"
    if arrays["first_off_expected"].shape != (full,):
        return f"first_off_expected has shape {arrays['first_off_expected'].shape}"
    for name in ("rolls", "first_off"):
        sums = arrays[name].sum(axis=1, dtype=np.int64)
        if not np.all(sums == SCALE):
            row = int(np.argmax(sums != SCALE))
            return f"{name} row {row} sums to {int(sums[row])}, not {SCALE}"
    return ""


# -- building ---------------------------------------------------------------------


@dataclass(frozen=True)
class BearoffTables:
    """The exact results of :func:`build`, before rounding for storage.

    Rows of ``rolls``/``expected`` are indexed by side index (sides of up to
    ``max_checkers`` checkers); rows of ``first_off``/``first_off_expected`` by
    index minus that of the first side of exactly ``max_checkers`` checkers.
    """

    max_checkers: int
    rolls: FloatArray
    expected: FloatArray
    first_off: FloatArray
    first_off_expected: FloatArray


def _all_sides(max_checkers: int) -> list[tuple[int, ...]]:
    """Every side of up to ``max_checkers`` checkers, in index order."""
    sides: list[tuple[int, ...]] = []

    def fill(prefix: tuple[int, ...], left: int) -> None:
        if len(prefix) == POINTS - 1:
            sides.append((*prefix, left))
            return
        for c in range(left + 1):
            fill((*prefix, c), left - c)

    for n in range(max_checkers + 1):
        fill((), n)
    sides.sort(key=_index)
    return sides


def build(max_checkers: int = MAX_CHECKERS) -> BearoffTables:
    """Compute the database for sides of up to ``max_checkers`` checkers.

    Smaller databases are exact prefixes of the full one (a side's numbers
    depend only on sides with fewer pips), which tests use.
    """
    if not 1 <= max_checkers <= MAX_CHECKERS:
        raise ValueError(f"max_checkers must be 1-{MAX_CHECKERS}, not {max_checkers!r}")
    sides = _all_sides(max_checkers)
    count = len(sides)
    first_full = comb(max_checkers + POINTS - 1, POINTS)
    # Move generation returns boards seen from the opponent: the mover's points
    # 6..1 are then indexes 19..24, negated.
    index_of = {tuple(-c for c in reversed(side)): i for i, side in enumerate(sides)}
    expected = [0.0] * count
    best = [[0] * len(_ROLLS) for _ in range(count)]
    first_expected = [0.0] * (count - first_full)
    first_best = [[0] * len(_ROLLS) for _ in range(count - first_full)]  # -1: a checker off

    generate = _movegen.generate
    board = [0] * 26
    order = sorted(range(count), key=lambda i: (sum(p * c for p, c in enumerate(sides[i], 1)), i))
    for i in order:
        if i == 0:
            continue
        board[1 : POINTS + 1] = sides[i]
        full = i >= first_full
        total = first_total = 0.0
        for r, (d1, d2) in enumerate(_ROLLS):
            successors = [index_of[p[0][19:25]] for p in generate(board, d1, d2, tuple, tuple)]
            low = min(expected[k] for k in successors)
            k = min(k for k in successors if expected[k] == low)
            best[i][r] = k
            total += _WEIGHTS[r] * low
            if full:
                if min(successors) < first_full:
                    first_best[i - first_full][r] = -1  # some play bears a checker off
                else:
                    low = min(first_expected[k - first_full] for k in successors)
                    k = min(k for k in successors if first_expected[k - first_full] == low)
                    first_best[i - first_full][r] = k - first_full
                    first_total += _WEIGHTS[r] * low
        expected[i] = 1.0 + total / 36.0
        if full:
            first_expected[i - first_full] = 1.0 + first_total / 36.0

    weights = np.array(_WEIGHTS, dtype=np.float64) / 36.0
    rolls = _distributions(np.array(best, dtype=np.int64), weights, start=0)
    first = np.array(first_best, dtype=np.int64)
    first_off = _distributions(first, weights, start=-1)
    return BearoffTables(
        max_checkers,
        rolls,
        np.array(expected, dtype=np.float64),
        first_off,
        np.array(first_expected, dtype=np.float64),
    )


def _distributions(best: npt.NDArray[np.int64], weights: FloatArray, start: int) -> FloatArray:
    """Distributions of the rolls to reach a goal, given each row's chosen successor
    per roll. ``start=0``: row 0 is the goal. ``start=-1``: the goal is reached when
    the successor is -1 (rows reach it only through rolls).

    Column n depends only on column n - 1 of the successors, so the whole table
    advances one roll at a time; the loop ends when a column is exactly zero
    (every side finishes within a bounded number of rolls).
    """
    rows = best.shape[0]
    columns: list[FloatArray] = []
    if start == 0:
        first = np.zeros(rows)
        first[0] = 1.0
        columns.append(first)
        safe = best
        reached = np.zeros(rows)
    else:
        columns.append(np.zeros(rows))
        reached = ((best == -1) * weights).sum(axis=1)  # the goal on the first roll
        safe = np.where(best == -1, 0, best)
    while True:
        previous = columns[-1]
        column = np.zeros(rows)
        for r in range(len(_ROLLS)):
            picked = previous[safe[:, r]]
            if start != 0:
                picked = np.where(best[:, r] == -1, 0.0, picked)
            column += weights[r] * picked
        if start == 0:
            column[0] = 0.0
        elif len(columns) == 1:
            column += reached
        if not column.any():
            break
        columns.append(column)
    return np.stack(columns, axis=1)


def _quantize(p: FloatArray) -> npt.NDArray[np.uint16]:
    """Round each row to integers in units of 1/SCALE summing to exactly SCALE
    (largest remainder; ties to the lower roll count)."""
    scaled = p * SCALE
    q = np.floor(scaled).astype(np.int64)
    deficit = SCALE - q.sum(axis=1)
    order = np.argsort(-(scaled - q), axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(p.shape[1])[None, :].repeat(p.shape[0], 0), axis=1)
    q += ranks < deficit[:, None]
    # Trailing columns that are zero in every row carry nothing.
    used = np.flatnonzero(q.any(axis=0))
    width = max(int(used[-1]) + 1 if used.size else 1, 2)
    return q[:, :width].astype(np.uint16)


def write_npz(tables: BearoffTables, path: str | Path) -> None:
    """Write ``tables`` as a database file, byte for byte reproducibly (fixed
    zip timestamps, fixed member order)."""
    arrays: dict[str, npt.NDArray[Any]] = {
        "format": np.array(FORMAT),
        "rolls": _quantize(tables.rolls),
        "expected": tables.expected,
        "first_off": _quantize(tables.first_off),
        "first_off_expected": tables.first_off_expected,
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for name, array in arrays.items():
            buffer = io.BytesIO()
            np.lib.format.write_array(buffer, np.asarray(array, order="C"), allow_pickle=False)
            info = zipfile.ZipInfo(name + ".npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, buffer.getvalue(), compresslevel=9)
