"""The evaluator seam: five outcome probabilities per position, and cubeless equity.

Every evaluator in nard answers the same question, in the same frame: for a
position **seen from the side on roll, before it rolls**, what are

====  ==================  ==============================================
0     ``WIN``             P(the side on roll wins), any kind of win
1     ``WIN_GAMMON``      P(it wins a gammon or a backgammon)
2     ``WIN_BACKGAMMON``  P(it wins a backgammon)
3     ``LOSE_GAMMON``     P(it loses a gammon or a backgammon)
4     ``LOSE_BACKGAMMON`` P(it loses a backgammon)
====  ==================  ==============================================

These are GNU Backgammon's five outputs; the chance of losing is
``1 - WIN``. A player choosing among plays evaluates each ``play.result``,
which is seen from the *opponent* (now on roll), so the mover's view is the
flipped one: ``flip_probabilities`` swaps the sides exactly, and for equity
``equity(mover) = -equity(result)``.

Game-over positions are never guessed: :func:`outcome_probabilities` gives
their exact values from :meth:`Position.outcome`, and every evaluator here
uses it.

>>> lost = Position.from_points({6: 15}, {})  # the opponent just bore off its last checker
>>> probs = FakeEvaluator().evaluate([lost, Position()])
>>> probs.shape
(2, 5)
>>> cubeless_equity(probs)[0].item()
-2.0
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from nard.core.position import OFF, Position

__all__ = [
    "LOSE_BACKGAMMON",
    "LOSE_GAMMON",
    "NUM_OUTPUTS",
    "WIN",
    "WIN_BACKGAMMON",
    "WIN_GAMMON",
    "Boards",
    "Evaluator",
    "FakeEvaluator",
    "Probabilities",
    "boards_of",
    "cubeless_equity",
    "evaluate_boards",
    "fill_outcomes",
    "five_probabilities",
    "flip_probabilities",
    "outcome_probabilities",
]

WIN, WIN_GAMMON, WIN_BACKGAMMON, LOSE_GAMMON, LOSE_BACKGAMMON = range(5)
NUM_OUTPUTS = 5
"""Outputs per position (the columns of :data:`Probabilities`)."""

Probabilities = npt.NDArray[np.float64]
"""An ``(n, 5)`` float array: one row of the five probabilities per position."""


@runtime_checkable
class Evaluator(Protocol):
    """Anything that estimates the five outcome probabilities of positions.

    ``evaluate(positions)`` returns an ``(n, 5)`` array, row ``i`` for
    ``positions[i]``, each **seen from the side on roll of that position,
    before it rolls** (columns :data:`WIN` ... :data:`LOSE_BACKGAMMON`).
    Implementations take the whole batch at once so that all the candidate
    plays of a roll cost one vectorised call, and must return the exact
    values of :func:`outcome_probabilities` for game-over positions.
    """

    def evaluate(self, positions: Sequence[Position]) -> Probabilities:
        """The five probabilities of each position, side on roll, before it rolls."""
        ...


Boards = npt.NDArray[np.int64]
"""An ``(n, 26)`` int64 array of raw boards: row ``i`` is ``tuple(position)``."""


def boards_of(positions: Sequence[Position]) -> Boards:
    """The raw ``(n, 26)`` boards of ``positions``.

    >>> boards_of([Position()]).shape
    (1, 26)
    """
    n = len(positions)
    flat = np.fromiter(itertools.chain.from_iterable(positions), dtype=np.int64, count=26 * n)
    return flat.reshape(n, 26)


def evaluate_boards(evaluator: Evaluator, boards: Boards) -> Probabilities:
    """``evaluator.evaluate`` of raw boards, without building positions where the
    evaluator takes boards itself (its own ``evaluate_boards`` method, as
    :class:`~nard.engine.network.NeuralEvaluator` has).

    >>> evaluate_boards(FakeEvaluator(), boards_of([Position()])).shape
    (1, 5)
    """
    direct = getattr(evaluator, "evaluate_boards", None)
    if direct is not None:
        probs: Probabilities = direct(boards)
        return probs
    return evaluator.evaluate([Position(row) for row in boards.tolist()])


def five_probabilities(probs: npt.ArrayLike) -> tuple[float, float, float, float, float]:
    """One row of five probabilities as a tuple of floats (a ``ValueError`` for any
    other count).

    >>> five_probabilities(np.array([[0.5, 0.1, 0.0, 0.2, 0.0]]))
    (0.5, 0.1, 0.0, 0.2, 0.0)
    """
    seq = [float(v) for v in np.asarray(probs, dtype=np.float64).ravel()]
    if len(seq) != NUM_OUTPUTS:
        raise ValueError(f"expected the five probabilities, got {seq!r}")
    return seq[0], seq[1], seq[2], seq[3], seq[4]


def cubeless_equity(probs: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Cubeless money equity of each row of probabilities, from the same side's view.

    With ``lose = 1 - win``, the expected points are
    ``equity = win - lose + wg - lg + wbg - lbg`` (= ``2 win - 1 + wg - lg + wbg - lbg``):
    gammons count twice and backgammons three times because the gammon columns
    already include the backgammons. Accepts one row or an ``(n, 5)`` array.

    >>> float(cubeless_equity([0.5, 0.2, 0.01, 0.1, 0.0]))
    0.11
    >>> cubeless_equity([[1, 1, 1, 0, 0], [0, 0, 0, 1, 0]]).tolist()
    [3.0, -2.0]
    """
    p = np.asarray(probs, dtype=np.float64)
    win = p[..., WIN]
    return (
        2.0 * win
        - 1.0
        + p[..., WIN_GAMMON]
        - p[..., LOSE_GAMMON]
        + p[..., WIN_BACKGAMMON]
        - p[..., LOSE_BACKGAMMON]
    )


def flip_probabilities(probs: npt.ArrayLike) -> Probabilities:
    """The same probabilities seen from the other side: ``(1 - w, lg, lbg, wg, wbg)``.

    Exact, not an approximation: it describes the same moment of the same game.
    Turns the evaluation of ``play.result`` (opponent on roll) into the mover's
    view of its play.

    >>> flip_probabilities([0.7, 0.2, 0.05, 0.1, 0.01]).round(2).tolist()
    [0.3, 0.1, 0.01, 0.2, 0.05]
    """
    p = np.asarray(probs, dtype=np.float64)
    out = np.empty_like(p)
    out[..., WIN] = 1.0 - p[..., WIN]
    out[..., WIN_GAMMON] = p[..., LOSE_GAMMON]
    out[..., WIN_BACKGAMMON] = p[..., LOSE_BACKGAMMON]
    out[..., LOSE_GAMMON] = p[..., WIN_GAMMON]
    out[..., LOSE_BACKGAMMON] = p[..., WIN_BACKGAMMON]
    return out


_OUTCOME_ROWS: dict[int, tuple[float, float, float, float, float]] = {
    3: (1.0, 1.0, 1.0, 0.0, 0.0),
    2: (1.0, 1.0, 0.0, 0.0, 0.0),
    1: (1.0, 0.0, 0.0, 0.0, 0.0),
    -1: (0.0, 0.0, 0.0, 0.0, 0.0),
    -2: (0.0, 0.0, 0.0, 1.0, 0.0),
    -3: (0.0, 0.0, 0.0, 1.0, 1.0),
}


def outcome_probabilities(position: Position) -> Probabilities | None:
    """The exact ``(5,)`` probabilities of a finished game, or ``None`` while it goes on.

    Taken from :meth:`Position.outcome`, from the side on roll's view.

    >>> gammoned = Position.from_points({6: 15}, {})
    >>> outcome_probabilities(gammoned).tolist()
    [0.0, 0.0, 0.0, 1.0, 0.0]
    >>> outcome_probabilities(gammoned.flip()).tolist()
    [1.0, 1.0, 0.0, 0.0, 0.0]
    >>> outcome_probabilities(Position()) is None
    True
    """
    result = position.outcome()
    if result == 0:
        return None
    return np.array(_OUTCOME_ROWS[result], dtype=np.float64)


def fill_outcomes(probs: Probabilities, boards: Boards, rows: npt.ArrayLike) -> None:
    """Write the exact outcome of each finished game ``boards[i]``, ``i`` in ``rows``
    (indices), into ``probs[i]``: the one place the batch evaluators put
    :func:`outcome_probabilities` on the game-over rows they find.

    Raises ``ValueError`` for a row whose game is not over.

    >>> boards = boards_of([Position(), Position.from_points({6: 15}, {})])
    >>> probs = np.zeros((2, NUM_OUTPUTS))
    >>> fill_outcomes(probs, boards, [1])
    >>> probs[1].tolist()
    [0.0, 0.0, 0.0, 1.0, 0.0]
    """
    for i in np.asarray(rows, dtype=np.intp).reshape(-1).tolist():
        exact = outcome_probabilities(Position(boards[i].tolist()))
        if exact is None:
            raise ValueError(f"board row {i} is not a finished game")
        probs[i] = exact


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


class FakeEvaluator:
    """A deterministic stand-in evaluator for tests, from pip counts alone.

    The side on roll's winning chance is a logistic function of its race lead
    (the roll it is about to make is worth about 8 pips); gammon chances grow
    with the lead while the loser has no checker off. Knows nothing else about
    backgammon: fast, consistent (``wg <= win``, ``lg <= 1 - win``, backgammons
    within gammons) and exact on finished games.

    >>> ev = FakeEvaluator()
    >>> ahead = Position.from_points({6: 2}, {13: 15})
    >>> p = ev.evaluate([ahead])[0]
    >>> bool(p[WIN] > 0.99 and p[WIN_GAMMON] > 0.9)
    True
    """

    def __init__(self, scale: float = 20.0, tempo: float = 8.0) -> None:
        self.scale = scale
        self.tempo = tempo

    def __repr__(self) -> str:
        return f"FakeEvaluator(scale={self.scale!r}, tempo={self.tempo!r})"

    def evaluate(self, positions: Sequence[Position]) -> Probabilities:
        """The five probabilities of each position, side on roll, before it rolls."""
        out = np.zeros((len(positions), NUM_OUTPUTS), dtype=np.float64)
        for i, position in enumerate(positions):
            exact = outcome_probabilities(position)
            out[i] = exact if exact is not None else self._estimate(position)
        return out

    def _estimate(self, position: Position) -> tuple[float, float, float, float, float]:
        mine, theirs = position.pip_counts()
        lead = theirs - mine + self.tempo
        win = _sigmoid(lead / self.scale)
        # A gammon needs the loser to have nothing off; a backgammon is a fraction of those.
        wg = win * _sigmoid((lead - 60.0) / self.scale) if position.opponent_at(OFF) == 0 else 0.0
        lg = (
            (1.0 - win) * _sigmoid((-lead - 60.0) / self.scale)
            if position.on_roll_at(OFF) == 0
            else 0.0
        )
        return (win, wg, wg * 0.1, lg, lg * 0.1)
