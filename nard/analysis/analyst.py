"""One turn of a recorded game judged by the engine: the work a worker process does.

An :class:`Analyst` holds an evaluator and the search settings of one analysis
depth. :meth:`Analyst.turn` takes a :class:`TurnTask` (the position before a
player's roll, the cube and score, the roll, the play made) and returns a
:class:`TurnVerdict`: the cube decision before the roll, the luck of the roll
and the checker play's ranking. Everything is seen from the player on roll
and in gnubg's *normalised* equity (EMG): money equity per unit of the cube
in money play; in match play, match winning chances mapped so that -1 and +1
are losing and winning a single game at the current cube
(:func:`~nard.engine.cube.play_equities`, gnubg's ``mwc2eq``).

The tasks and verdicts are plain picklable values, so that
:mod:`nard.analysis.analyse` can hand them to worker processes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nard.core.dice import ALL_ROLLS
from nard.core.position import Play, Position
from nard.engine import _kernels
from nard.engine.cube import CubeContext, CubeDecision, cube_decision, play_equities
from nard.engine.engine import load_evaluator
from nard.engine.evaluator import (
    Evaluator,
    boards_of,
    cubeless_equity,
    evaluate_boards,
    five_probabilities,
    flip_probabilities,
)
from nard.engine.network import NeuralEvaluator, PruningEvaluator, cube_evaluator
from nard.engine.search import (
    ROLL_COUNTS,
    WORLD_CLASS_FILTER,
    MoveFilter,
    Pruning,
    children,
    evaluate_ply,
    rank_plays,
)

__all__ = [
    "CUBE_PRECHECK_MARGIN",
    "LUCK_CANDIDATES",
    "MAX_PLIES",
    "Analyst",
    "Candidate",
    "CheckerVerdict",
    "CubeVerdict",
    "TurnTask",
    "TurnVerdict",
]

MAX_PLIES = 2
"""The deepest analysis offered (``nard analyse --plies``)."""

CUBE_PRECHECK_MARGIN = 0.25
"""A cube decision whose 0-ply no-double equity leads the better of double/take and
double/pass by more than this (normalised equity) is judged at 0-ply, not at the
analysis depth: far from the doubling window a deeper look never turns it into a
double (the engine holds such positions by the same test with 0.15,
:data:`nard.engine.engine.PRECHECK_MARGIN`), and gnubg's "close" test uses 0.16, so
such a decision is neither close nor an error at any depth."""

LUCK_CANDIDATES = 3
"""Plays of each roll whose cubeful equity the luck of a roll compares (the best by
cubeless 0-ply equity): gnubg takes each roll's best play by cubeful 0-ply equity,
which is nearly always one of these."""

OBVIOUS_SPREAD = 0.001
"""An unforced checker play whose plays all lie within this equity of each other is
*obvious* and left out of the PR's count (a bear-off where every play wins)."""


@dataclass(frozen=True)
class TurnTask:
    """A player's turn: ``position`` before the roll from the player's view, the cube
    and score ``context`` (the player's view), whether a cube decision is to be
    judged (``cube``: the player could double), the roll ``dice`` (None: the turn
    stopped before it) and the play made (``played``: the resulting position, None
    when nothing could be played or nothing was recorded). ``opening``: the roll was
    the game's opening roll (whose luck is judged among the 30 opening rolls)."""

    position: Position
    context: CubeContext
    cube: bool
    dice: tuple[int, int] | None
    played: Position | None
    opening: bool = False
    luck: bool = True
    checker: bool = True


@dataclass(frozen=True)
class Candidate:
    """A play of the roll with its cubeful equity (normalised, mover's view) and the
    depth of its evaluation."""

    play: str
    equity: float
    ply: int


@dataclass(frozen=True)
class CheckerVerdict:
    """The checker play of a turn: its legal plays' count, the best play and the
    play made with their equities, and the best few candidates."""

    legal_plays: int
    best: Candidate
    played: Candidate
    candidates: tuple[Candidate, ...]
    spread: float
    """The equity between the best and the worst legal play (0-ply for the worst)."""

    @property
    def error(self) -> float:
        """The equity lost by the play made (>= 0)."""
        return max(0.0, self.best.equity - self.played.equity)

    @property
    def forced(self) -> bool:
        """Only one legal play."""
        return self.legal_plays <= 1


@dataclass(frozen=True)
class CubeVerdict:
    """The cube decision before the roll, from the player on roll's view."""

    decision: CubeDecision
    probabilities: tuple[float, float, float, float, float]
    ply: int


@dataclass(frozen=True)
class TurnVerdict:
    """What :meth:`Analyst.turn` found: any of the three parts may be absent."""

    cube: CubeVerdict | None
    luck: float | None
    checker: CheckerVerdict | None


class Analyst:
    """Judges turns at ``plies`` (0, 1 or 2) with ``evaluator`` (default: the bundled
    networks, or the file ``weights``).

    Checker plays are ranked as the world-class level ranks them
    (:data:`~nard.engine.search.WORLD_CLASS_FILTER`, the bundle's pruning network
    at 2 plies), every play kept at the deepest ply compared by cubeful equity at
    the score, and the play made is always judged at the deepest ply (as gnubg
    keeps the played move through its filters). The cube is judged at the same
    depth; the luck of a roll at 0-ply, as gnubg's default.
    """

    def __init__(
        self,
        plies: int = MAX_PLIES,
        evaluator: Evaluator | None = None,
        weights: str | Path | None = None,
        move_filter: MoveFilter = WORLD_CLASS_FILTER,
    ) -> None:
        if plies not in range(MAX_PLIES + 1):
            raise ValueError(f"plies must be 0, 1 or 2, not {plies!r}")
        self.plies = plies
        self.evaluator: Evaluator = evaluator if evaluator is not None else load_evaluator(weights)
        self.cube_evaluator = cube_evaluator(self.evaluator)
        """What the cube is judged by: the bundle's cube networks where it has them."""
        self.move_filter = move_filter
        self.pruning: Pruning | None = None
        if plies >= 2 and isinstance(self.evaluator, NeuralEvaluator):
            net = self.evaluator.networks.pruning
            if net is not None:
                self.pruning = Pruning(PruningEvaluator(net), 8)
        _kernels.compile_all()

    # -- the parts of a turn ------------------------------------------------

    def turn(self, task: TurnTask) -> TurnVerdict:
        """Judge ``task``'s cube decision, roll and checker play (where it has them)."""
        cube = self.cube(task.position, task.context) if task.cube else None
        luck = None
        checker = None
        if task.dice is not None:
            if task.luck:
                luck = self.luck(task.position, task.dice, task.context, opening=task.opening)
            if task.checker and task.played is not None:
                checker = self.checker(task.position, task.dice, task.played, task.context)
        return TurnVerdict(cube, luck, checker)

    def cube(self, position: Position, context: CubeContext) -> CubeVerdict:
        """The cube decision of the side on roll at the analysis depth (held at 0-ply
        far from the doubling window: :data:`CUBE_PRECHECK_MARGIN`)."""
        probs = evaluate_ply([position], self.cube_evaluator, 0)
        row = five_probabilities(probs[0])
        decision = cube_decision(row, context, position=position)
        far = decision.no_double - min(decision.double_take, decision.double_pass)
        if self.plies == 0 or far > CUBE_PRECHECK_MARGIN:
            return CubeVerdict(decision, row, 0)
        probs = evaluate_ply([position], self.cube_evaluator, self.plies, pruning=self.pruning)
        row = five_probabilities(probs[0])
        return CubeVerdict(cube_decision(row, context, position=position), row, self.plies)

    def checker(
        self, position: Position, dice: tuple[int, int], played: Position, context: CubeContext
    ) -> CheckerVerdict:
        """The ranking of ``dice``'s plays with the play that led to ``played``."""
        ranking = rank_plays(
            position, dice, self.evaluator, self.plies, self.move_filter, pruning=self.pruning
        )
        if not ranking:
            raise ValueError(f"{dice} cannot be played in position {position.position_id()}")
        top = ranking[0].ply
        deepest = [r for r in ranking if r.ply == top]
        made = next((r for r in ranking if r.play.result == played), None)
        if made is None:
            raise ValueError(
                f"no play of {dice[0]}{dice[1]} leads to {played.position_id()} "
                f"from position {position.position_id()}"
            )
        plays: list[Play] = [r.play for r in deepest]
        probs = [flip_probabilities(r.probabilities) for r in deepest]
        if made.ply != top:  # judge the play made as deeply as the best
            plays.append(made.play)
            deep = evaluate_ply([made.play.result], self.evaluator, top, pruning=self.pruning)
            probs.append(deep[0])
        values = play_equities(probs, [p.result for p in plays], context)
        order = sorted(range(len(plays)), key=lambda i: -values[i])
        cands = [Candidate(position.format_play(plays[i]), values[i], top) for i in order]
        best = cands[0]
        made_text = position.format_play(made.play)
        made_cand = next(c for c in cands if c.play == made_text)
        worst = ranking[-1]
        worst_value = play_equities(
            [flip_probabilities(worst.probabilities)], [worst.play.result], context
        )[0]
        spread = max(0.0, best.equity - min(worst_value, min(values)))
        return CheckerVerdict(
            legal_plays=len(ranking),
            best=best,
            played=made_cand,
            candidates=tuple(cands[:5]),
            spread=spread,
        )

    def luck(
        self,
        position: Position,
        dice: tuple[int, int],
        context: CubeContext,
        *,
        opening: bool = False,
    ) -> float:
        """The luck of ``dice`` to the side on roll (gnubg's): the 0-ply cubeful equity
        after the roll's best play, less the average of that over every roll (over
        the 30 opening rolls for an opening roll, half of them the opponent's)."""
        mine = self._best_after_each_roll(position, context)
        roll = ALL_ROLLS.index((max(dice), min(dice)))
        if opening:
            theirs = self._best_after_each_roll(position.flip(), context.swapped())
            singles = [i for i, (a, b) in enumerate(ALL_ROLLS) if a != b]
            mean = (sum(mine[i] for i in singles) - sum(theirs[i] for i in singles)) / 30.0
            return mine[roll] - mean
        mean = float(np.dot(ROLL_COUNTS, mine)) / 36.0
        return mine[roll] - mean

    def _best_after_each_roll(self, position: Position, context: CubeContext) -> list[float]:
        """For each roll of :data:`ALL_ROLLS`, the mover's 0-ply cubeful equity after
        its best play (the turn passing when it has none)."""
        kids, counts = children(boards_of([position]))
        theirs = evaluate_boards(self.evaluator, kids)
        equities = cubeless_equity(theirs)
        out: list[float] = []
        start = 0
        for count in counts.tolist():
            group = range(start, start + count)
            start += count
            best = sorted(group, key=lambda i: equities[i])[:LUCK_CANDIDATES]
            results = [Position(kids[i].tolist()) for i in best]
            values = play_equities([theirs[i] for i in best], results, context)
            out.append(max(values))
        return out


def spread_is_obvious(verdict: CheckerVerdict) -> bool:
    """Whether an unforced play is obvious for the PR (:data:`OBVIOUS_SPREAD`)."""
    return verdict.spread < OBVIOUS_SPREAD
