"""Lookahead search: n-ply evaluation, gnubg's move filters and time-limited play ranking.

Plies are counted as GNU Backgammon counts them (XG and bgsage add one):

- **0-ply** is the evaluator itself;
- **1-ply** of a position (side on roll, before it rolls) averages, over the
  21 rolls (weight 1/36 for a double, 2/36 otherwise), the 0-ply value of the
  best reply to each roll, seen back from the original side;
- **n-ply** averages the (n-1)-ply values of those replies.

As in gnubg, the reply to each roll is chosen by its **0-ply** equity and only
that reply is searched deeper, so an n-ply evaluation costs ``21^n`` move
generations, not a full minimax tree. Each level of the tree goes to the
evaluator in one batch (every candidate reply of every roll of every position
of that level, duplicates removed): the batch is where the speed comes from.
A roll that cannot be played passes the turn (the child is ``position.flip()``).
Finished games are exact at every ply.

:func:`rank_plays` ranks the plays of a roll the way gnubg's ``hint`` does:
all plays at 0-ply, then a :class:`MoveFilter` keeps the best few for each
deeper ply. With a ``time_limit`` it deepens one ply at a time and returns the
deepest ranking it completed.

>>> from nard.engine.evaluator import FakeEvaluator
>>> pos = Position.from_points({6: 1, 2: 1}, {13: 15})
>>> best = rank_plays(pos, (6, 1), FakeEvaluator(), plies=1)[0]
>>> pos.format_play(best.play), best.ply
('6/off 2/1', 1)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from nard.core.dice import ALL_ROLLS
from nard.core.position import Play, Position
from nard.engine import _kernels
from nard.engine.evaluator import (
    NUM_OUTPUTS,
    Boards,
    Evaluator,
    Probabilities,
    boards_of,
    cubeless_equity,
    evaluate_boards,
    flip_probabilities,
    outcome_probabilities,
)

__all__ = [
    "DEFAULT_FILTER",
    "GNUBG_FILTERS",
    "FilterStep",
    "MoveFilter",
    "RankedPlay",
    "SearchPlayer",
    "best_play",
    "children",
    "evaluate_ply",
    "rank_plays",
]

ROLL_COUNTS = np.array([1.0 if a == b else 2.0 for a, b in ALL_ROLLS])
"""The ways to throw each roll of :data:`ALL_ROLLS`, out of 36 (whole numbers, so that
averages of exact values stay exact)."""

_CHUNK = 4096
"""Positions per evaluator call at most under a time limit, checked between calls."""


@dataclass(frozen=True)
class FilterStep:
    """Which candidates evaluated at one ply go on to the next (gnubg's ``movefilter``).

    The best ``accept`` plays always survive; then up to ``extra`` more, in
    order, while their cubeless equity is within ``threshold`` of the best
    one's. The best play always survives, even with ``accept = 0``.

    >>> FilterStep(0, 2, 0.04).survivors([0.5, 0.47, 0.45, 0.1])
    2
    """

    accept: int = 0
    extra: int = 8
    threshold: float = 0.16

    def __post_init__(self) -> None:
        if self.accept < 0 or self.extra < 0 or self.threshold < 0:
            raise ValueError(f"invalid {self!r}: every field must be >= 0")

    def survivors(self, equities: Sequence[float]) -> int:
        """How many of ``equities`` (sorted best first) survive this step."""
        n = len(equities)
        if n == 0:
            return 0
        keep = max(1, min(n, self.accept))
        floor = equities[0] - self.threshold
        while keep < n and keep < self.accept + self.extra and equities[keep] >= floor:
            keep += 1
        return keep


@dataclass(frozen=True)
class MoveFilter:
    """The :class:`FilterStep` applied after each ply of a play decision.

    ``steps[k]`` prunes the candidates evaluated at ``k`` ply before they go
    deeper; ``None`` skips ply ``k`` altogether (gnubg's ``Accept = -1``: the
    survivors go straight to the next ply). Plies past the end of ``steps``
    reuse its last entry. Ply 0 is always evaluated, for every play.

    gnubg's presets (:data:`GNUBG_FILTERS`, from its ``movefilters.inc``) skip
    ply 1 of a 2-ply search to avoid mixing odd and even plies; nard's
    :data:`DEFAULT_FILTER` filters at 1-ply instead, which is what makes a
    2-ply decision affordable in numpy.

    >>> DEFAULT_FILTER.step(5)
    FilterStep(accept=0, extra=2, threshold=0.04)
    """

    steps: tuple[FilterStep | None, ...] = (FilterStep(0, 8, 0.16), FilterStep(0, 2, 0.04))

    def __post_init__(self) -> None:
        if not self.steps:
            raise ValueError("a MoveFilter needs at least one step")

    def step(self, ply: int) -> FilterStep | None:
        """The step applied to candidates evaluated at ``ply``."""
        return self.steps[min(ply, len(self.steps) - 1)]


def _gnubg(extra0: int, threshold0: float, extra2: int, threshold2: float) -> MoveFilter:
    # gnubg's row for a 3-ply search: filter at 0 ply, skip ply 1, filter at 2 ply.
    return MoveFilter(
        (FilterStep(0, extra0, threshold0), None, FilterStep(0, extra2, threshold2), None)
    )


GNUBG_FILTERS: dict[str, MoveFilter] = {
    "tiny": _gnubg(5, 0.08, 2, 0.02),
    "narrow": _gnubg(8, 0.12, 2, 0.03),
    "normal": _gnubg(8, 0.16, 2, 0.04),
    "large": _gnubg(16, 0.32, 4, 0.08),
    "huge": _gnubg(20, 0.44, 6, 0.11),
}
"""GNU Backgammon's move filter presets (``movefilters.inc``); gnubg's default is ``normal``."""

DEFAULT_FILTER = MoveFilter()
"""gnubg's ``normal`` 0-ply step (up to 8 plays within 0.16), then up to 2 within 0.04 at 1-ply."""


@dataclass(frozen=True)
class RankedPlay:
    """One candidate play with its evaluation, from the **mover's** view.

    ``probabilities`` are the five outcome probabilities (``WIN`` ...
    ``LOSE_BACKGAMMON``) for the side that made the play, ``equity`` their
    cubeless equity, ``ply`` the depth they were computed at.
    """

    play: Play
    probabilities: tuple[float, float, float, float, float]
    equity: float
    ply: int


class _Timeout(Exception):
    """The deadline passed in the middle of a ply."""


def _best_in_groups(
    opponent_equity: npt.NDArray[np.float64], lengths: npt.NDArray[np.int_]
) -> npt.NDArray[np.intp]:
    """Per group of consecutive children, the index of the one worst for the opponent.

    The mover picks the reply that leaves the opponent (on roll in the child)
    the least equity; ties go to the first play generated, as in EvaluatorPlayer.
    """
    starts = np.cumsum(lengths) - lengths
    worst = np.minimum.reduceat(opponent_equity, starts)
    hits = np.flatnonzero(opponent_equity <= np.repeat(worst, lengths))
    group_of_hit = np.repeat(np.arange(len(lengths)), lengths)[hits]
    _, first = np.unique(group_of_hit, return_index=True)
    chosen: npt.NDArray[np.intp] = hits[first]
    return chosen


def children(boards: Boards) -> tuple[Boards, npt.NDArray[np.int64]]:
    """Every roll's distinct resulting boards, for each of ``boards``.

    Returns the children (each seen from the opponent, on roll next: a
    ``play.result``) and their counts per (board, roll), rolls in
    :data:`~nard.core.dice.ALL_ROLLS` order; a roll that cannot be played has
    one child, the board flipped (the turn passes). The set of children of a
    roll is that of ``[p.result for p in position.legal_plays(roll)]``, in
    another order; compiled, no Python object per play.

    >>> kids, counts = children(boards_of([Position()]))
    >>> counts.tolist()[:3], len(Position().legal_plays((6, 6)))
    ([11, 7, 14], 11)
    """
    n = boards.shape[0]
    boards = np.ascontiguousarray(boards, dtype=np.int64)
    counts = np.empty(n * len(ALL_ROLLS), dtype=np.int64)
    size = max(1024, 640 * n)
    while True:
        out = np.empty((size, 26), dtype=np.int64)
        found = _kernels.expand(boards, _ROLLS, out, np.empty(size, dtype=np.int64), counts)
        if found >= 0:
            return out[:found], counts
        size *= 2


_ROLLS = np.array(ALL_ROLLS, dtype=np.int64)
_EXPAND_CHUNK = 64
"""Positions expanded per compiled call under a deadline (checked between calls)."""


class _Search:
    """n-ply evaluation against one evaluator, with an optional deadline."""

    def __init__(
        self,
        evaluator: Evaluator,
        clock: Callable[[], float] = time.perf_counter,
        deadline: float | None = None,
    ) -> None:
        self.evaluator = evaluator
        self.clock = clock
        self.deadline = deadline

    def check(self) -> None:
        if self.deadline is not None and self.clock() > self.deadline:
            raise _Timeout

    def static(self, boards: Boards) -> Probabilities:
        """0-ply; one call, or under a deadline chunks with a check between them."""
        if self.deadline is None or len(boards) <= _CHUNK:
            return evaluate_boards(self.evaluator, boards)
        parts = []
        for start in range(0, len(boards), _CHUNK):
            self.check()
            parts.append(evaluate_boards(self.evaluator, boards[start : start + _CHUNK]))
        return np.concatenate(parts)

    def expand(self, boards: Boards) -> tuple[Boards, npt.NDArray[np.int64]]:
        """:func:`children`, in chunks with a deadline check before each."""
        if self.deadline is None:
            return children(boards)
        parts = []
        for start in range(0, len(boards), _EXPAND_CHUNK):
            self.check()
            parts.append(children(boards[start : start + _EXPAND_CHUNK]))
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])

    def evaluate(self, positions: Sequence[Position], plies: int) -> Probabilities:
        """``(n, 5)`` probabilities of ``positions`` at ``plies``, side on roll before it rolls."""
        return self.evaluate_boards(boards_of(positions), plies)

    def evaluate_boards(self, boards: Boards, plies: int) -> Probabilities:
        """:meth:`evaluate` of raw ``(n, 26)`` boards."""
        out = np.empty((len(boards), NUM_OUTPUTS), dtype=np.float64)
        # Borne-off checkers are implicit: a side with none left on the board has won.
        over = (boards.min(axis=1, initial=0) >= 0) | (boards.max(axis=1, initial=0) <= 0)
        for i in np.flatnonzero(over).tolist():
            exact = outcome_probabilities(Position(boards[i].tolist()))
            assert exact is not None
            out[i] = exact
        live = np.flatnonzero(~over)
        if not len(live):
            return out
        if plies == 0:
            out[live] = self.static(boards[live])
            return out

        # Every reply to every roll of every live position, in one batch.
        kids, lengths = self.expand(boards[live])
        child_probs = self.static(kids)
        chosen = _best_in_groups(cubeless_equity(child_probs), lengths)
        if plies > 1:
            unique, inverse = np.unique(chosen, return_inverse=True)
            deeper = self.evaluate_boards(kids[unique], plies - 1)
            replies = deeper[inverse.reshape(-1)]
        else:
            replies = child_probs[chosen]
        mover = flip_probabilities(replies).reshape(len(live), len(ALL_ROLLS), NUM_OUTPUTS)
        out[live] = np.einsum("r,nrk->nk", ROLL_COUNTS, mover) / 36.0
        return out


def evaluate_ply(positions: Sequence[Position], evaluator: Evaluator, plies: int) -> Probabilities:
    """The five probabilities of each position at ``plies`` (see the module docstring).

    Seen from the side on roll of each position, before it rolls, like the
    evaluator's own; ``plies = 0`` is the evaluator itself (finished games exact).

    >>> from nard.engine.evaluator import FakeEvaluator
    >>> won = Position.from_points({}, {6: 15})  # the side on roll has borne off
    >>> evaluate_ply([won], FakeEvaluator(), 2).tolist()
    [[1.0, 1.0, 0.0, 0.0, 0.0]]
    """
    if plies < 0:
        raise ValueError(f"plies must be >= 0, not {plies!r}")
    return _Search(evaluator).evaluate(list(positions), plies)


def _ranked(plays: Sequence[Play], probs: Probabilities, ply: int) -> list[RankedPlay]:
    """``plays`` with the mover's ``probs``, best equity first (stable on ties)."""
    equities = cubeless_equity(probs)
    order = sorted(range(len(plays)), key=lambda i: -equities[i])
    return [
        RankedPlay(
            plays[i],
            (
                float(probs[i, 0]),
                float(probs[i, 1]),
                float(probs[i, 2]),
                float(probs[i, 3]),
                float(probs[i, 4]),
            ),
            float(equities[i]),
            ply,
        )
        for i in order
    ]


def _rank(
    position: Position,
    dice: Sequence[int],
    evaluator: Evaluator,
    plies: int,
    move_filter: MoveFilter,
    time_limit: float | None,
    clock: Callable[[], float],
    decide_only: bool,
) -> list[RankedPlay]:
    if plies < 0:
        raise ValueError(f"plies must be >= 0, not {plies!r}")
    if time_limit is not None and time_limit < 0:
        raise ValueError(f"time_limit must be >= 0, not {time_limit!r}")
    start = clock()
    plays = position.legal_plays(dice)
    if not plays:
        return []
    if decide_only and len(plays) == 1:
        search = _Search(evaluator, clock)
        mover = flip_probabilities(search.evaluate([plays[0].result], 0))
        return _ranked(plays, mover, 0)
    # Ply 0 always completes (there must be an answer); deeper plies may time out.
    search = _Search(evaluator, clock)
    ranking = _ranked(plays, flip_probabilities(search.evaluate([p.result for p in plays], 0)), 0)
    if time_limit is not None:
        search.deadline = start + time_limit
    deeper = [k for k in range(1, plies) if move_filter.step(k) is not None]
    levels = [*deeper, plies] if plies > 0 else []
    done = 0
    for ply in levels:
        step = move_filter.step(done)
        keep = len(ranking) if step is None else step.survivors([r.equity for r in ranking])
        if decide_only and keep == 1:
            break
        survivors = [r.play for r in ranking[:keep]]
        try:
            search.check()
            probs = search.evaluate([p.result for p in survivors], ply)
        except _Timeout:
            break
        ranking = _ranked(survivors, flip_probabilities(probs), ply) + ranking[keep:]
        done = ply
    return ranking


def rank_plays(
    position: Position,
    dice: Sequence[int],
    evaluator: Evaluator,
    plies: int = 0,
    move_filter: MoveFilter = DEFAULT_FILTER,
    time_limit: float | None = None,
    *,
    clock: Callable[[], float] = time.perf_counter,
) -> list[RankedPlay]:
    """Every legal play of ``dice``, ranked best first, as gnubg's ``hint`` ranks them.

    All plays are evaluated at 0-ply; ``move_filter`` keeps the best few of
    each ply for the next, up to ``plies``. Plays evaluated deeper rank above
    those filtered out earlier, which keep their shallower values (see
    :attr:`RankedPlay.ply`). Empty when the roll cannot be played.

    With ``time_limit`` (seconds, measured by ``clock``) the search stops at the
    first deadline check past the limit and returns the deepest ranking it
    completed; the 0-ply ranking is always completed.

    >>> from nard.engine.evaluator import FakeEvaluator
    >>> ranking = rank_plays(Position(), (3, 1), FakeEvaluator())
    >>> len(ranking), ranking[0].ply
    (16, 0)
    """
    return _rank(position, dice, evaluator, plies, move_filter, time_limit, clock, False)


def best_play(
    position: Position,
    dice: Sequence[int],
    evaluator: Evaluator,
    plies: int = 0,
    move_filter: MoveFilter = DEFAULT_FILTER,
    time_limit: float | None = None,
    *,
    clock: Callable[[], float] = time.perf_counter,
) -> Play | None:
    """The best play of ``dice`` by :func:`rank_plays`, or ``None`` when there is none.

    Faster than ranking: it stops deepening once a single candidate survives
    the filter, and a forced play is not searched.

    >>> from nard.engine.evaluator import FakeEvaluator
    >>> pos = Position.from_points({6: 1, 2: 1}, {13: 15})
    >>> pos.format_play(best_play(pos, (6, 1), FakeEvaluator(), plies=2))
    '6/off 2/1'
    """
    ranking = _rank(position, dice, evaluator, plies, move_filter, time_limit, clock, True)
    return ranking[0].play if ranking else None


class SearchPlayer:
    """A :class:`~nard.engine.player.Player` choosing by :func:`best_play`.

    >>> from nard.engine.evaluator import FakeEvaluator
    >>> player = SearchPlayer(FakeEvaluator(), plies=1)
    >>> player.choose_play(Position(), (3, 1)) in Position().legal_plays((3, 1))
    True
    """

    def __init__(
        self,
        evaluator: Evaluator,
        plies: int = 0,
        move_filter: MoveFilter = DEFAULT_FILTER,
        time_limit: float | None = None,
        name: str = "search",
    ) -> None:
        self.evaluator = evaluator
        self.plies = plies
        self.move_filter = move_filter
        self.time_limit = time_limit
        self.name = name

    def __repr__(self) -> str:
        return (
            f"SearchPlayer({self.evaluator!r}, plies={self.plies!r}, "
            f"move_filter={self.move_filter!r}, time_limit={self.time_limit!r})"
        )

    def choose_play(self, position: Position, dice: Sequence[int]) -> Play | None:
        """The chosen play, or ``None`` when the roll cannot be played."""
        return best_play(
            position, dice, self.evaluator, self.plies, self.move_filter, self.time_limit
        )
