"""The engine API: one entry point for play, cube and evaluation at a playing level.

:class:`Engine` wraps an :class:`~nard.engine.evaluator.Evaluator` (by default
the neural network at :data:`DEFAULT_WEIGHTS`) with the search of
:mod:`~nard.engine.search` and the cube of :mod:`~nard.engine.cube`, at one of
the :class:`Level` settings taken from GNU Backgammon's predefined players, and
one above them.

Levels (gnubg's ``aecSettings`` and ``aiSettingsMoveFilter`` in ``eval.c``:
beginner 0-ply noise 0.060, casual 0.050, intermediate 0.040, advanced 0.015,
expert 0-ply no noise, world class 2-ply with the *normal* move filter):

==============  =====  =====  ==========================================
level           plies  noise  cube
==============  =====  =====  ==========================================
beginner        0      0.060  seed 002's pip-count rule (:func:`pip_count_cube`)
intermediate    0      0.040  0-ply, no noise
expert          0      0      1-ply
world-class     2      0      2-ply
roller          2 + R  0      2-ply
==============  =====  =====  ==========================================

The roller (above gnubg's levels, as XG's Roller is above its n-ply levels)
searches as world class and then rolls out its best candidates, up to 3 within
0.08, on common dice (:mod:`~nard.engine.roller`): trials of 5 turns at 0-ply,
luck-corrected, 36 to 144 per candidate, within the engine's ``time_limit``
(four seconds a decision by default, where the other levels have one).

The expert's cube looks one ply deeper than its checker play (gnubg's expert
uses 0-ply for both): a cube decision needs the absolute equity, where the
network's 0-ply errors do not cancel as they do between the plays of one roll,
and it comes once a turn, so the 21 rolls' best plays (about 1 ms) are cheap.
Judged by gnubg 2-ply on 1,000 positions (``bench/cube_decisions.py``), the
expert's 0-ply cube gave up 26.7 (money) and 12.7 (match) thousandths per take
decision, its 1-ply cube 16.8 and 6.6.

Noise is gnubg's: a normal deviate of standard deviation ``noise`` (in equity)
added to each candidate play's equity before the best is chosen. As with
gnubg's "deterministic" noise it is a function of the candidate's resulting
position, here together with the engine's ``seed`` (a numpy ``Generator``
seeded from both), so the same seed always makes the same choices whatever
the order of the calls. Noise only affects :meth:`Engine.best_play`;
:meth:`Engine.rank_plays` and the cube are the level's honest analysis.

World class searches 2 plies with :data:`~nard.engine.search.WORLD_CLASS_FILTER`:
gnubg's *normal* 0-ply step (up to 8 plays within 0.16) and, instead of
gnubg's skipped ply 1, a 1-ply step with the numbers of gnubg's *large* 2-ply
step (up to 4 within 0.08; :data:`~nard.engine.search.DEFAULT_FILTER` has the
normal step's 2 within 0.04, and was world class's until 2026-12-05: the wider
step measured +0.048, +0.053 and +0.045 luck-adjusted against gnubg 0-ply, where
the normal one had +0.044 to +0.048). Under the engine's ``time_limit`` a 2-ply search
that runs out of time keeps its 1-ply ranking rather than falling back to
0-ply, which is why nard filters at ply 1 (see :class:`~nard.engine.search.MoveFilter`).
Inside that search each roll's replies are ranked by the bundle's pruning
network and only the best 8 are evaluated in full (gnubg's pruning nets;
:class:`~nard.engine.search.Pruning`; fitted by :mod:`nard.training.pruning`): about half
the time of a full 2-ply search, and the same play in 99% of decisions (with the
wider step, a world class decision costs about gnubg 2-ply's CPU time). A
bundle without a pruning network searches in full.

The beginner's cube is the rule of the seed-002 app ("the computer doubles
and takes by the pip-count difference: a simple rule, not a professional
analysis"). The seed gives no numbers; nard uses Walter Trice's well-known
8-9-12 race rule: double with a lead of 8% of one's own pip count (9% to
redouble), take unless the doubler leads by more than 12%.

Plays are chosen cubeful when :meth:`Engine.best_play` is given the cube and
score (``match``), as gnubg plays, and cubeless without it; cube decisions
use the match context.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from pathlib import Path
from typing import Literal

import numpy as np

from nard.core.position import Play, Position
from nard.engine import _kernels
from nard.engine.cube import (
    CubeContext,
    CubeDecision,
    CubeOwner,
    cube_decision,
    play_equities,
)
from nard.engine.evaluator import (
    Evaluator,
    cubeless_equity,
    five_probabilities,
    flip_probabilities,
)
from nard.engine.network import NeuralEvaluator, PruningEvaluator, WeightsError, cube_evaluator
from nard.engine.roller import (
    ROLLER_PLAN,
    RollerPlan,
    decision_seed,
    roll_candidates,
    roll_position,
)
from nard.engine.search import (
    DEFAULT_FILTER,
    WORLD_CLASS_FILTER,
    MoveFilter,
    Pruning,
    RankedPlay,
    best_play,
    evaluate_ply,
    rank_plays,
)

__all__ = [
    "DEFAULT_WEIGHTS",
    "LEVEL_SETTINGS",
    "Engine",
    "Level",
    "LevelSettings",
    "PipCube",
    "load_evaluator",
    "pip_count_cube",
]

DEFAULT_WEIGHTS = Path(__file__).resolve().parent / "data" / "nard-net.npz"
"""Where the engine looks for its network when given no ``weights``."""

Probabilities5 = tuple[float, float, float, float, float]


class Level(StrEnum):
    """A playing level, named as ``nard hint --level`` and the game settings name it."""

    BEGINNER = "beginner"
    INTERMEDIATE = "intermediate"
    EXPERT = "expert"
    WORLD_CLASS = "world-class"
    ROLLER = "roller"


@dataclass(frozen=True)
class LevelSettings:
    """How a :class:`Level` plays: search depth, filter, noise and cube rule."""

    plies: int
    noise: float
    cube_plies: int
    """Depth of the cube analysis (:meth:`Engine.cube_analysis`)."""
    move_filter: MoveFilter = DEFAULT_FILTER
    pip_cube: bool = False
    prune_keep: int = 0
    """At the deeper plies of checker play, each roll's replies the pruning network
    lets through to the full evaluator (:class:`~nard.engine.search.Pruning`); 0
    for no pruning, as without a pruning network in the weights."""
    roller: RollerPlan | None = None
    """When set, the best candidates of the search are rolled out
    (:func:`~nard.engine.roller.roll_candidates`) and chosen by their rollouts."""
    time_limit: float = 1.0
    """The seconds an :class:`Engine` at this level gives a decision unless told
    otherwise (its ``time_limit``)."""


LEVEL_SETTINGS: dict[Level, LevelSettings] = {
    Level.BEGINNER: LevelSettings(plies=0, noise=0.060, cube_plies=0, pip_cube=True),
    Level.INTERMEDIATE: LevelSettings(plies=0, noise=0.040, cube_plies=0),
    Level.EXPERT: LevelSettings(plies=0, noise=0.0, cube_plies=1),
    Level.WORLD_CLASS: LevelSettings(
        plies=2, noise=0.0, cube_plies=2, move_filter=WORLD_CLASS_FILTER, prune_keep=8
    ),
    Level.ROLLER: LevelSettings(
        plies=2,
        noise=0.0,
        cube_plies=2,
        move_filter=WORLD_CLASS_FILTER,
        prune_keep=8,
        roller=ROLLER_PLAN,
        time_limit=4.0,
    ),
}
"""gnubg's predefined players (``eval.c``), as described in the module docstring."""

PRECHECK_MARGIN = 0.15
"""How far (in the cube analysis's units) no double must lead the better of
double/take and double/pass at 0-ply for :meth:`Engine.doubles` to hold
without the level's deeper analysis. Measured on 1,500 positions of self-play in
the doubling range (0-ply winning chances 50-99%, money and 5-point match
contexts, ``bench/cube_decisions.py``'s sample, seed 5): at 0.15 none that the
1-ply analysis doubles was held, and 46% were decided at 0-ply (at 0.10: one,
giving up 0.007; at 0.0: 13). Outside that range nearly every position is held
at 0-ply, so a game's cube decisions cost a small part of what they did."""

ROLLER_CUBE_WINDOW = 0.10
"""At the roller level, a cube decision whose 2-ply equities put no double within
this of the double's value, or double/take within this of double/pass (in the
cube analysis's units), is decided again on probabilities rolled out from the
position (:func:`~nard.engine.roller.roll_position`)."""

# Walter Trice's 8-9-12 rule, as fractions of the doubler's pip count.
PIP_DOUBLE = 0.08
PIP_REDOUBLE = 0.09
PIP_TAKE = 0.12


@dataclass(frozen=True)
class PipCube:
    """The pip-count rule's verdict for the side on roll.

    ``lead`` is the side on roll's pip lead as a fraction of its own pip count;
    ``double`` whether it doubles now, ``take`` whether the opponent would take.
    """

    lead: float
    double: bool
    take: bool


def pip_count_cube(position: Position, context: CubeContext | None = None) -> PipCube:
    """Seed 002's simple cube: double and take by the pip-count difference (8-9-12).

    >>> race = Position.from_points({6: 5, 5: 5, 4: 5}, {6: 5, 5: 5, 3: 5})
    >>> race.pip_counts()
    (75, 70)
    >>> pip_count_cube(race).double
    False
    >>> lead = pip_count_cube(race.flip())
    >>> round(lead.lead, 3), lead.double, lead.take
    (0.071, False, True)
    >>> v = pip_count_cube(Position.from_points({1: 15}, {6: 15}))
    >>> v.double, v.take
    (True, False)
    """
    ctx = context or CubeContext()
    mine, theirs = position.pip_counts()
    lead = math.inf if mine == 0 else (theirs - mine) / mine
    threshold = PIP_DOUBLE if ctx.owner is CubeOwner.CENTRED else PIP_REDOUBLE
    return PipCube(lead=lead, double=ctx.can_double() and lead >= threshold, take=lead <= PIP_TAKE)


def load_evaluator(weights: str | Path | None = None) -> NeuralEvaluator:
    """The neural evaluator at ``weights`` (default :data:`DEFAULT_WEIGHTS`).

    A missing file raises :class:`~nard.engine.network.WeightsError` naming it
    and how to get one; there is never a fallback to another player.
    """
    path = Path(weights) if weights is not None else DEFAULT_WEIGHTS
    if not path.is_file():
        how = (
            "nard ships no trained network yet: train one with "
            f"`nard train {path} --games N`, or give another file with --weights PATH"
            if weights is None
            else "check the path, or train one with `nard train PATH --games N`"
        )
        raise WeightsError(f"network weights {str(path)!r} not found; {how}")
    return NeuralEvaluator.load(path)


def _close(decision: CubeDecision) -> bool:
    """Whether a cube decision is close enough to roll out (:data:`ROLLER_CUBE_WINDOW`):
    to double or not, or to take or pass."""
    doubled = min(decision.double_take, decision.double_pass)
    return (
        abs(decision.no_double - doubled) < ROLLER_CUBE_WINDOW
        or abs(decision.double_take - decision.double_pass) < ROLLER_CUBE_WINDOW
    )


def _wording(centred: bool, double: bool, take: bool) -> str:
    verb = "double" if centred else "redouble"
    if double:
        return f"{verb.capitalize()}, {'take' if take else 'pass'}"
    return f"No {verb}, {'take' if take else 'pass'}"


class Engine:
    """The computer player and analyst at one :class:`Level`.

    ``evaluator`` is used as given; without one the network at ``weights``
    (default :data:`DEFAULT_WEIGHTS`) is loaded, and a missing or bad file
    raises :class:`~nard.engine.network.WeightsError`. ``seed`` fixes the
    noise of the weaker levels; ``time_limit`` (seconds, ``None`` for none;
    by default the level's: one second, four for the roller) bounds each deeper
    search (ply 0 always completes) and the roller's rollouts (their first
    block always completes).

    >>> from nard.engine.evaluator import FakeEvaluator
    >>> engine = Engine("expert", evaluator=FakeEvaluator())
    >>> pos = Position.from_points({6: 1, 2: 1}, {13: 15})
    >>> pos.format_play(engine.best_play(pos, (6, 1)))
    '6/off 2/1'
    >>> engine.cube_action(pos).action
    'Too good to double, pass'
    """

    def __init__(
        self,
        level: Level | str = Level.EXPERT,
        evaluator: Evaluator | None = None,
        weights: str | Path | None = None,
        seed: int = 0,
        time_limit: float | Literal["level"] | None = "level",
    ) -> None:
        try:
            self.level = Level(level)
        except ValueError:
            names = ", ".join(lv.value for lv in Level)
            raise ValueError(f"unknown level {level!r}: choose one of {names}") from None
        if evaluator is not None and weights is not None:
            raise ValueError("give an evaluator or a weights file, not both")
        if not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be an integer >= 0, not {seed!r}")
        self.settings = LEVEL_SETTINGS[self.level]
        if time_limit == "level":
            time_limit = self.settings.time_limit
        if time_limit is not None and (isinstance(time_limit, str) or time_limit < 0):
            raise ValueError(f"time_limit must be >= 0, None or 'level', not {time_limit!r}")
        self.evaluator: Evaluator = evaluator if evaluator is not None else load_evaluator(weights)
        self.cube_evaluator = cube_evaluator(self.evaluator)
        """What the cube analysis reads: the bundle's cube networks where it has them
        (:meth:`~nard.engine.network.Networks.for_cube`), else :attr:`evaluator`."""
        self.pruning: Pruning | None = None
        """The pruning of the level's checker-play search, when the level prunes and
        the evaluator's networks include a pruning network."""
        if self.settings.prune_keep and isinstance(self.evaluator, NeuralEvaluator):
            net = self.evaluator.networks.pruning
            if net is not None:
                self.pruning = Pruning(PruningEvaluator(net), self.settings.prune_keep)
        self.seed = seed
        self.time_limit = time_limit
        _kernels.compile_all()  # before any search's clock starts

    def __repr__(self) -> str:
        return (
            f"Engine({self.level.value!r}, evaluator={self.evaluator!r}, "
            f"seed={self.seed!r}, time_limit={self.time_limit!r})"
        )

    def _deadline(self, start: float) -> float | None:
        """When a decision begun at ``start`` (``time.perf_counter``) must end."""
        return None if self.time_limit is None else start + self.time_limit

    @property
    def plies(self) -> int:
        """The level's search depth (gnubg's plies)."""
        return self.settings.plies

    # -- evaluation --------------------------------------------------------

    def evaluate(
        self, position: Position, plies: int | None = None, *, for_cube: bool = False
    ) -> tuple[Probabilities5, float]:
        """The five probabilities and cubeless equity at ``plies`` (default: the level's).

        Seen from the side on roll of ``position``, before it rolls; ``for_cube``: by
        the networks the cube analysis reads (:attr:`cube_evaluator`).
        """
        depth = self.plies if plies is None else plies
        evaluator = self.cube_evaluator if for_cube else self.evaluator
        probs = evaluate_ply([position], evaluator, depth)
        return five_probabilities(probs[0]), float(cubeless_equity(probs)[0])

    # -- plays -------------------------------------------------------------

    def rank_plays(
        self, position: Position, dice: Sequence[int], match: CubeContext | None = None
    ) -> list[RankedPlay]:
        """Every legal play ranked best first at the level's plies (no noise): the hint.

        With ``match`` (the cube and score from the mover's view) the plays the
        search took to its deepest ply are ranked by their cubeful equity at that
        score (``cubeful``; gnubg's EMG in match play), as gnubg ranks them and as
        :meth:`best_play` chooses; the plays it left shallower follow, cubeless.

        At the roller level the search's best candidates are then rolled out
        (:mod:`~nard.engine.roller`): they rank first by their rollouts (with
        ``match``, by the cubeful equity of their rolled-out probabilities), and
        the rollout stops when ``time_limit`` has passed since the search began."""
        start = time.perf_counter()
        ranking = rank_plays(
            position,
            dice,
            self.evaluator,
            self.plies,
            self.settings.move_filter,
            self.time_limit,
            pruning=self.pruning,
        )
        plan = self.settings.roller
        if plan is not None and ranking:
            ranking = roll_candidates(
                ranking,
                self.evaluator,
                decision_seed(self.seed, position, dice),
                plan,
                deadline=self._deadline(start),
            )
        if match is None or not ranking:
            return ranking
        if ranking[0].trials:  # rolled out: the rollouts are the deepest look
            deepest = [r for r in ranking if r.trials]
        else:
            deepest = [r for r in ranking if r.ply == ranking[0].ply]
        values = play_equities(
            flip_probabilities([r.probabilities for r in deepest]),
            [r.play.result for r in deepest],
            match,
        )
        ranked = sorted(
            (
                RankedPlay(r.play, r.probabilities, r.equity, r.ply, v, r.trials)
                for r, v in zip(deepest, values, strict=True)
            ),
            key=lambda r: -(r.cubeful or 0.0),
        )
        chosen = {id(r) for r in deepest}
        return ranked + [r for r in ranking if id(r) not in chosen]

    def noise(self, result: Position) -> float:
        """The level's deterministic noise for a play leading to ``result`` (0 without noise)."""
        if self.settings.noise <= 0.0:
            return 0.0
        key = [self.seed, *(v + 15 for v in result)]
        return float(np.random.default_rng(key).normal(0.0, self.settings.noise))

    def choose_play(self, position: Position, dice: Sequence[int]) -> Play | None:
        """The :class:`~nard.engine.player.Player` seam: :meth:`best_play`."""
        return self.best_play(position, dice)

    def best_play(
        self, position: Position, dice: Sequence[int], match: CubeContext | None = None
    ) -> Play | None:
        """The play this level makes, or ``None`` when the roll cannot be played.

        Without ``match`` (cubeless, as in the benchmarks against pubeval) and
        without noise this is :func:`~nard.engine.search.best_play`; with noise
        every candidate of the level's ranking gets its :meth:`noise` added to
        its equity and the best noisy equity is played.

        With ``match`` (the cube and score from the mover's view) the play is
        chosen as gnubg chooses it, by cubeful equity
        (:func:`~nard.engine.cube.play_equity`): the level's search ranks the
        plays, and those evaluated at its deepest ply are compared by the
        cubeful equity of their probabilities, with the score's gammon values
        in match play (at double match point gammons count for nothing).
        """
        if match is None and self.settings.noise <= 0.0 and self.settings.roller is None:
            return best_play(
                position,
                dice,
                self.evaluator,
                self.plies,
                self.settings.move_filter,
                self.time_limit,
                pruning=self.pruning,
            )
        ranking = self.rank_plays(position, dice, match)
        if not ranking:
            return None
        if self.settings.noise <= 0.0:
            return ranking[0].play  # the ranking's order: rollouts, then cubeful equity
        if match is None:
            values = [r.equity for r in ranking]
        else:
            ranking = [r for r in ranking if r.cubeful is not None]
            values = [r.cubeful or 0.0 for r in ranking]
        noisy = [v + self.noise(r.play.result) for v, r in zip(values, ranking, strict=True)]
        return ranking[int(np.argmax(noisy))].play

    # -- cube --------------------------------------------------------------

    def cube_analysis(
        self, position: Position, match: CubeContext | None = None
    ) -> tuple[Probabilities5, float, CubeDecision]:
        """Probabilities, cubeless equity and cube decision of the side on roll.

        The equities come from the level's cube plies (``cube_plies`` of
        :data:`LEVEL_SETTINGS`), by the networks the cube reads
        (:attr:`cube_evaluator`); the beginner's verdict (double, take, its
        wording) is :func:`pip_count_cube`'s. At the roller level a close decision
        (:data:`ROLLER_CUBE_WINDOW`) takes its probabilities from a rollout of the
        position instead, within ``time_limit``.
        """
        ctx = match or CubeContext()
        start = time.perf_counter()
        probs, equity = self.evaluate(position, self.settings.cube_plies, for_cube=True)
        decision = cube_decision(probs, ctx, position=position)
        plan = self.settings.roller
        if plan is not None and _close(decision):
            seed = decision_seed(self.seed, position, (0, 0))  # (0, 0): the cube's
            probs, _ = roll_position(position, self.evaluator, seed, plan, self._deadline(start))
            equity = float(cubeless_equity(probs))
            decision = cube_decision(probs, ctx, position=position)
        if self.settings.pip_cube:
            rule = pip_count_cube(position, ctx)
            action = decision.action
            if ctx.can_double():
                action = _wording(ctx.owner is CubeOwner.CENTRED, rule.double, rule.take)
            decision = replace(
                decision, action=action, double=rule.double, take=rule.take, beaver=False
            )
        return probs, equity, decision

    def cube_action(self, position: Position, match: CubeContext | None = None) -> CubeDecision:
        """The cube decision of the side on roll (before it rolls) at this level.

        ``match`` is the cube and score from the side on roll's view (money
        play with a centred 1-cube by default). The decision's ``take`` says
        whether the opponent takes if doubled. It is the verdict of
        :meth:`cube_analysis` (the hint's): a take margin for the weaker side
        (passing takes within 0.25 of double/pass, which paid with the 2026
        networks before U) cost about 0.07 of a cube on every take it turned
        into a pass with network U, judged by gnubg 2-ply
        (``bench/cube_decisions.py``), and was removed.
        """
        return self.cube_analysis(position, match)[2]

    def doubles(self, position: Position, match: CubeContext | None = None) -> bool:
        """Whether the side on roll doubles now: :meth:`cube_action`'s verdict, with a
        position clearly short of a double at 0-ply held there, without the level's
        deeper analysis (about 20x the work at 1-ply) that never doubles it
        (:data:`PRECHECK_MARGIN`). The computer asks this before every roll."""
        ctx = match or CubeContext()
        if not ctx.can_double():
            return False
        if self.settings.cube_plies > 0 and not self.settings.pip_cube:
            probs, _ = self.evaluate(position, 0, for_cube=True)
            quick = cube_decision(probs, ctx, position=position)
            if quick.no_double - min(quick.double_take, quick.double_pass) > PRECHECK_MARGIN:
                return False
        return self.cube_action(position, ctx).double
