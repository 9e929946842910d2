"""Benchmark: the rating each computer level deserves, on the FIBS scale.

Grounds the fixed ratings of :data:`nard.server.ratings.COMPUTER_RATINGS`
(docs/ratings.md). Each level plays ``--matches`` matches to ``--length`` points
against the expert level (beginner, intermediate and world class against expert;
expert against expert as the control), entirely in this process: a
:class:`~nard.match.Match` (Crawford rule) with :class:`~nard.match.SeededDice`,
every decision made by :func:`nard.computer.computer_command` for an
``Engine(level, seed=..., time_limit=None)``, so the levels play, double and take
exactly as they do at the server's tables. The match record
(:meth:`~nard.match.Match.to_record`) is then analysed by
:func:`nard.analysis.analyse` at ``--plies`` (one process: ``jobs=1``).

Dice: the levels are dealt duplicate dice. Pair ``k`` (matches ``2k`` and
``2k+1``) plays one dice sequence twice, the tested level in seat 0 then seat 1,
and pair ``k`` has the same dice for every level, so the levels' rows differ by
their play, not their dice. The control (expert against itself) plays the same
deterministic engine on both sides, so duplicate dice would split every pair
exactly; its matches each get their own dice instead, and its win rate shows how
far N matches stray from 50% by chance.

Printed per level: matches, the level's wins against expert, the level's mean
overall error rate (mEMG: checker and cube errors per unforced move or close cube
decision, normalised equity x1000), mean checker and cube error rates, mean PR,
the mean of gnubg's error-based rating estimate over the matches (the analysis's
``rating``: Kees van den Doel's fit ``2050 - EPM (8798 + 25526 / N) - EPC (863 -
519 / N)``), and that same formula applied to the error rates pooled over all the
level's matches (decisions weighted alike: steadier than the mean of per-match
ratings). Then the rating estimates:

- (a) gnubg's estimate from the error rates (pooled), on the FIBS scale that the
  fit was made on;
- (b) from the match results: the rating difference ``D`` to expert at which the
  FIBS formula's chance for the favourite of a ``--length``-point match
  (:func:`nard.match.rating.win_probability`) equals the observed win rate, with
  the 95% interval from the exact (Clopper-Pearson) binomial interval of the win
  rate, and ``anchor + D``, the anchor being expert's rating by (a) (or
  ``--anchor``);
- (c) the same from the luck-adjusted win rate: 0.5 plus the mean of the
  analysis's luck-adjusted result (match winning chances gained, less the
  player's luck, plus the opponent's), whose mean is the plain result's but
  whose dice noise is mostly gone; its 95% interval is the normal one of the
  mean.

Caveats: the analysis's judge is nard's own network, the one every level plays
with, so (a) flatters nard's levels: at 1 ply expert's own moves cost it about
2 mEMG, while gnubg 0-ply's (about as strong: bench/cube_strength.py) cost 4.8
under the same judge and 3.0 under gnubg 2-ply (measured 2026-12-06 on
tests/data/gnubg_matches). At 0 plies expert is judged by exactly its own choice
(error 0); at 2 plies world class is. So read (a) for its differences between
levels, not its level; for scale the report prints gnubg 0-ply's rating by the
same formula with gnubg 2-ply as the judge (the cached analysis of
bench/analysis_agreement.py). (b) and (c) have no judge's bias, only the noise
of N matches: the luck of a roll averages zero whoever judges it, so a poorer
judge only leaves more noise in (c), never a bias.

Run from the repository root::

    .venv/bin/python bench/level_ratings.py --matches 10 --length 7 --seed 1 --plies 1
    .venv/bin/python bench/level_ratings.py --matches 10 --world-class-matches 4 --save /tmp/lr

A script, not a test: it prints figures and asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from nard.analysis import analyse
from nard.analysis.analyst import Analyst
from nard.analysis.stats import PlayerStats, fibs_rating
from nard.computer import computer_command
from nard.engine import Engine
from nard.engine.engine import Level, load_evaluator
from nard.engine.evaluator import Evaluator
from nard.match import Match, MatchRules, SeededDice
from nard.match.commands import perform
from nard.match.rating import win_probability
from nard.notation.records import MatchRecord

LEVELS = (Level.BEGINNER, Level.INTERMEDIATE, Level.WORLD_CLASS, Level.EXPERT)
"""The levels measured against expert, in the order printed (expert: the control)."""
REFERENCE = Level.EXPERT
Z_95 = 1.959963984540054
MAX_ACTIONS = 20_000
"""A match longer than this many actions is a bug (computers never resign or loop)."""


# -- one match -------------------------------------------------------------------
@dataclass(frozen=True)
class MatchTask:
    """What one match needs: the tested level, its seat, the dice and noise seeds."""

    level: str
    index: int
    seat: int
    """The tested level's seat (the expert sits in the other)."""
    dice_seed: int
    engine_seed: int
    length: int
    plies: int


@dataclass(frozen=True)
class Side:
    """One player's figures in one analysed match."""

    error_rate: float
    checker_error_rate: float
    cube_error_rate: float
    pr: float
    rating: float | None
    checker_error: float
    unforced_moves: int
    cube_error: float
    cube_decisions: int
    luck_adjusted_result: float

    @classmethod
    def of(cls, stats: PlayerStats) -> Side:
        return cls(
            error_rate=stats.error_rate,
            checker_error_rate=stats.checker_error_rate,
            cube_error_rate=stats.cube_error_rate,
            pr=stats.pr,
            rating=stats.rating,
            checker_error=stats.checker_error,
            unforced_moves=stats.unforced_moves,
            cube_error=stats.cube_error,
            cube_decisions=stats.cube_decisions,
            luck_adjusted_result=stats.luck_adjusted_result,
        )


@dataclass(frozen=True)
class MatchOutcome:
    """One match played and analysed: who won, the score, both sides' figures."""

    level: str
    index: int
    seat: int
    dice_seed: int
    won: bool
    """Whether the tested level won the match."""
    score: tuple[int, int]
    """Final score, tested level first."""
    games: int
    level_side: Side
    expert_side: Side
    play_seconds: float
    analysis_seconds: float


_SHARED: dict[str, Any] = {}


def _evaluator() -> Evaluator:
    if "evaluator" not in _SHARED:
        _SHARED["evaluator"] = load_evaluator()
    evaluator: Evaluator = _SHARED["evaluator"]
    return evaluator


def _analyst(plies: int) -> Analyst:
    key = f"analyst-{plies}"
    if key not in _SHARED:
        _SHARED[key] = Analyst(plies, evaluator=_evaluator())
    analyst: Analyst = _SHARED[key]
    return analyst


def play_match(
    engines: tuple[Engine, Engine], names: tuple[str, str], length: int, dice_seed: int
) -> MatchRecord:
    """A whole match between two engines (seats 0 and 1), every decision by
    :func:`~nard.computer.computer_command`; the match's record."""
    match = Match(length, MatchRules(), dice=SeededDice(dice_seed))
    actions = 0
    while not match.is_over:
        game = match.new_game()
        while not game.is_over:
            seat = game.turn
            perform(game, computer_command(engines[seat], game, length, match.score))
            actions += 1
            if actions > MAX_ACTIONS:
                raise RuntimeError(f"match with dice seed {dice_seed} does not end")
    return match.to_record(names)


def run_task(task: MatchTask) -> tuple[MatchOutcome, MatchRecord]:
    """Play and analyse one match of ``task.level`` against expert."""
    evaluator = _evaluator()
    level = Engine(task.level, evaluator=evaluator, seed=task.engine_seed, time_limit=None)
    expert = Engine(REFERENCE, evaluator=evaluator, seed=task.engine_seed + 1, time_limit=None)
    engines = (level, expert) if task.seat == 0 else (expert, level)
    tested = task.level if task.level != REFERENCE else f"{REFERENCE.value}-A"
    opponent = REFERENCE.value if task.level != REFERENCE else f"{REFERENCE.value}-B"
    names = (tested, opponent) if task.seat == 0 else (opponent, tested)
    start = time.perf_counter()
    record = play_match(engines, names, task.length, task.dice_seed)
    played = time.perf_counter()
    analysis = analyse(record, task.plies, jobs=1, analyst=_analyst(task.plies))
    done = time.perf_counter()
    final = [0, 0]
    for game in record.games:
        if game.winner is not None and game.points is not None:
            final[game.winner] += game.points
    mine, theirs = final[task.seat], final[1 - task.seat]
    outcome = MatchOutcome(
        level=task.level,
        index=task.index,
        seat=task.seat,
        dice_seed=task.dice_seed,
        won=mine > theirs,
        score=(mine, theirs),
        games=len(record.games),
        level_side=Side.of(analysis.players[task.seat]),
        expert_side=Side.of(analysis.players[1 - task.seat]),
        play_seconds=played - start,
        analysis_seconds=done - played,
    )
    return outcome, record


def tasks_for(level: Level, matches: int, length: int, seed: int, plies: int) -> list[MatchTask]:
    """The matches of one level: duplicate dice in pairs (the same pairs for every
    level), except for the control, whose matches each get their own dice."""
    out = []
    for i in range(matches):
        pair = i if level is REFERENCE else i // 2
        dice_seed = seed * 1_000_003 + pair + (500_000 if level is REFERENCE else 0)
        out.append(
            MatchTask(
                level=level.value,
                index=i,
                seat=i % 2,
                dice_seed=dice_seed,
                engine_seed=seed * 1000 + 2 * i,
                length=length,
                plies=plies,
            )
        )
    return out


# -- statistics ------------------------------------------------------------------
def _binomial_cdf(k: int, n: int, p: float) -> float:
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k + 1))


def _bisect(f: Callable[[float], float], lo: float, hi: float, steps: int = 200) -> float:
    """A root of the increasing ``f`` in [lo, hi]."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        if f(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(wins: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact two-sided binomial interval for the win rate ``wins / n``.

    >>> [round(x, 4) for x in clopper_pearson(5, 10)]
    [0.1871, 0.8129]
    >>> clopper_pearson(0, 10)[0], round(clopper_pearson(0, 10)[1], 4)
    (0.0, 0.3085)
    """
    alpha = (1 - level) / 2
    # P(X >= wins) grows with p; P(X <= wins) falls.
    at_least = _bisect(lambda p: (1 - _binomial_cdf(wins - 1, n, p)) - alpha, 0, 1)
    at_most = _bisect(lambda p: alpha - _binomial_cdf(wins, n, p), 0, 1)
    return (0.0 if wins == 0 else at_least), (1.0 if wins == n else at_most)


def rating_difference(p: float, length: int) -> float:
    """The rating difference ``D`` (player minus opponent) at which the FIBS formula
    gives the player the chance ``p`` to win a ``length``-point match; infinite at 0
    and 1.

    >>> round(rating_difference(win_probability(1600, 1500, 7), 7), 6)
    100.0
    >>> round(rating_difference(0.576, 7))  # bkgm.com's table (0.576 at 100 points)
    101
    >>> rating_difference(0.5, 7), rating_difference(1.0, 7)
    (0.0, inf)
    """
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    if p == 0.5:
        return 0.0
    return _bisect(lambda d: win_probability(1500.0 + d, 1500.0, length) - p, -5000.0, 5000.0)


@dataclass(frozen=True)
class LevelSummary:
    """One level's figures over its matches."""

    level: str
    matches: int
    wins: int
    win_rate: float
    win_rate_ci: tuple[float, float]
    error_rate: float
    checker_error_rate: float
    cube_error_rate: float
    pr: float
    rating_mean: float | None
    rating_pooled: float
    expert_error_rate: float
    expert_rating_pooled: float
    difference: float
    difference_ci: tuple[float, float]
    luck_adjusted_win_rate: float
    luck_adjusted_ci: tuple[float, float]
    luck_adjusted_difference: float
    luck_adjusted_difference_ci: tuple[float, float]
    play_seconds: float
    analysis_seconds: float


def _pooled_rating(sides: Sequence[Side], length: int) -> float:
    unforced = sum(s.unforced_moves for s in sides)
    close = sum(s.cube_decisions for s in sides)
    checker = sum(s.checker_error for s in sides) / unforced if unforced else 0.0
    cube = sum(s.cube_error for s in sides) / close if close else 0.0
    return fibs_rating(checker, cube, length)


def summarise(level: str, outcomes: Sequence[MatchOutcome], length: int) -> LevelSummary:
    n = len(outcomes)
    wins = sum(o.won for o in outcomes)
    mine = [o.level_side for o in outcomes]
    theirs = [o.expert_side for o in outcomes]
    ratings = [s.rating for s in mine if s.rating is not None]
    low, high = clopper_pearson(wins, n)
    adjusted = [0.5 + s.luck_adjusted_result for s in mine]
    adj_mean = statistics.fmean(adjusted)
    adj_half = Z_95 * statistics.stdev(adjusted) / math.sqrt(n) if n > 1 else math.inf

    def diff(p: float) -> float:
        return rating_difference(min(1.0, max(0.0, p)), length)

    return LevelSummary(
        level=level,
        matches=n,
        wins=wins,
        win_rate=wins / n,
        win_rate_ci=(low, high),
        error_rate=statistics.fmean(s.error_rate for s in mine),
        checker_error_rate=statistics.fmean(s.checker_error_rate for s in mine),
        cube_error_rate=statistics.fmean(s.cube_error_rate for s in mine),
        pr=statistics.fmean(s.pr for s in mine),
        rating_mean=statistics.fmean(ratings) if ratings else None,
        rating_pooled=_pooled_rating(mine, length),
        expert_error_rate=statistics.fmean(s.error_rate for s in theirs),
        expert_rating_pooled=_pooled_rating(theirs, length),
        difference=diff(wins / n),
        difference_ci=(diff(low), diff(high)),
        luck_adjusted_win_rate=adj_mean,
        luck_adjusted_ci=(adj_mean - adj_half, adj_mean + adj_half),
        luck_adjusted_difference=diff(adj_mean),
        luck_adjusted_difference_ci=(diff(adj_mean - adj_half), diff(adj_mean + adj_half)),
        play_seconds=sum(o.play_seconds for o in outcomes),
        analysis_seconds=sum(o.analysis_seconds for o in outcomes),
    )


GNUBG_MATCHES = Path(__file__).resolve().parent.parent / "tests" / "data" / "gnubg_matches"
GNUBG_ANALYSIS = Path(__file__).resolve().parent / "data" / "gnubg_analysis_2ply.json"


def gnubg_reference(length: int) -> tuple[float, int] | None:
    """gnubg 0-ply's error-based rating as gnubg 2-ply judges it: the noise-free
    players of the matches in tests/data/gnubg_matches (gnubg 0-ply playing itself),
    their errors pooled from the cached analysis of bench/analysis_agreement.py, the
    formula at ``length``; with the unforced moves counted. None without the files."""
    try:
        manifest = json.loads((GNUBG_MATCHES / "manifest.json").read_text(encoding="utf-8"))
        cached = json.loads(GNUBG_ANALYSIS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    checker = cube = 0.0
    unforced = close = 0
    for match in manifest["matches"]:
        stats = cached.get(match["sgf"], {}).get("stats")
        if match["match_length"] < 1 or stats is None:
            continue
        for seat in (0, 1):
            if match["noise"]["chequer"][seat] or match["noise"]["cube"][seat]:
                continue
            mine = stats[str(seat)]
            checker += mine["checker_error"]
            unforced += mine["unforced"]
            cube += mine["cube_error"]
            close += mine["close_cube"]
    if not unforced:
        return None
    return fibs_rating(checker / unforced, cube / close if close else 0.0, length), unforced


# -- report ----------------------------------------------------------------------
def _d(value: float) -> str:
    return f"{value:+.0f}" if math.isfinite(value) else ("+inf" if value > 0 else "-inf")


def _r(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.0f}" if math.isfinite(value) else ("inf" if value > 0 else "-inf")


def report(
    summaries: Sequence[LevelSummary], anchor: float, anchor_source: str, args: argparse.Namespace
) -> str:
    lines = [
        f"{args.length}-point matches against {REFERENCE.value}, seed {args.seed}, "
        f"analysed at {args.plies} {'ply' if args.plies == 1 else 'plies'}",
        "",
        "level          matches  wins  win rate (95% CI)     mEMG  checker  cube    PR  "
        "rating: mean  pooled   expert's: mEMG  pooled",
    ]
    for s in summaries:
        ci = f"({s.win_rate_ci[0]:.2f}-{s.win_rate_ci[1]:.2f})"
        lines.append(
            f"{s.level:<14} {s.matches:>7} {s.wins:>5}  {s.win_rate:>5.2f} {ci:<13}  "
            f"{s.error_rate:>6.2f} {s.checker_error_rate:>8.2f} {s.cube_error_rate:>5.2f} "
            f"{s.pr:>5.2f}  {_r(s.rating_mean):>12} {s.rating_pooled:>7.0f}   "
            f"{s.expert_error_rate:>14.2f} {s.expert_rating_pooled:>7.0f}"
        )
    lines += [
        "",
        f"Rating estimates (FIBS scale; anchor for (b) and (c): expert = {anchor:.0f}, "
        f"{anchor_source})",
        "level          (a) errors  (b) D vs expert (95% CI)     anchor+D   "
        "(c) luck-adj. win rate  D (95% CI)             anchor+D",
    ]
    for s in summaries:
        b_ci = f"({_d(s.difference_ci[0])} to {_d(s.difference_ci[1])})"
        c_rate = (
            f"{s.luck_adjusted_win_rate:.2f} "
            f"({s.luck_adjusted_ci[0]:.2f}-{s.luck_adjusted_ci[1]:.2f})"
        )
        c_ci = f"({_d(s.luck_adjusted_difference_ci[0])} to {_d(s.luck_adjusted_difference_ci[1])})"
        lines.append(
            f"{s.level:<14} {s.rating_pooled:>10.0f}  {_d(s.difference):>5} {b_ci:<21}  "
            f"{_r(anchor + s.difference):>8}   {c_rate:<22} "
            f"{_d(s.luck_adjusted_difference):>5} {c_ci:<17} "
            f"{_r(anchor + s.luck_adjusted_difference):>8}"
        )
    reference = gnubg_reference(args.length)
    if reference is not None:
        lines += [
            "",
            f"For scale: gnubg 0-ply judged by gnubg 2-ply, the same formula: {reference[0]:.0f} "
            f"({reference[1]} unforced moves of tests/data/gnubg_matches)",
        ]
    lines += [
        "",
        "time (s)       "
        + "  ".join(
            f"{s.level}: play {s.play_seconds:.0f}, analysis {s.analysis_seconds:.0f}"
            for s in summaries
        ),
    ]
    return "\n".join(lines)


# -- main ------------------------------------------------------------------------
def _json_safe(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--matches", type=int, default=10, help="matches per level (default 10)")
    parser.add_argument(
        "--world-class-matches",
        type=int,
        default=None,
        help="matches for world class (2-ply, the slow one; default --matches)",
    )
    parser.add_argument("--length", type=int, default=7, help="match length (default 7)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--plies", type=int, default=1, choices=(0, 1, 2), help="analysis depth")
    parser.add_argument(
        "--levels",
        nargs="+",
        default=[lv.value for lv in LEVELS],
        choices=[lv.value for lv in LEVELS],
        help="levels to measure (expert: the control)",
    )
    parser.add_argument(
        "--anchor",
        type=float,
        default=None,
        help="expert's rating for (b) and (c) (default: expert's pooled estimate by (a))",
    )
    parser.add_argument("--jobs", type=int, default=1, help="matches at once (processes)")
    parser.add_argument("--save", type=Path, default=None, help="folder for records and results")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    args = parser.parse_args(argv)
    if args.matches < 1 or args.length < 1:
        parser.error("--matches and --length must be at least 1")

    tasks: list[MatchTask] = []
    for level in LEVELS:
        if level.value not in args.levels:
            continue
        n = args.matches
        if level is Level.WORLD_CLASS and args.world_class_matches is not None:
            n = args.world_class_matches
        tasks += tasks_for(level, n, args.length, args.seed, args.plies)

    if args.save is not None:
        args.save.mkdir(parents=True, exist_ok=True)
    from nard.cli.records import write_record

    start = time.perf_counter()
    outcomes: dict[str, list[MatchOutcome]] = {}

    def collect(outcome: MatchOutcome, record: MatchRecord) -> None:
        outcomes.setdefault(outcome.level, []).append(outcome)
        if args.save is not None:
            name = f"{outcome.level}-{outcome.index:03d}.json"
            (args.save / name).write_text(write_record(record, "json"), encoding="utf-8")
        if not args.quiet:
            print(
                f"{outcome.level} #{outcome.index}: {'won' if outcome.won else 'lost'} "
                f"{outcome.score[0]}-{outcome.score[1]} in {outcome.games} games, "
                f"mEMG {outcome.level_side.error_rate:.2f} / expert "
                f"{outcome.expert_side.error_rate:.2f}; play {outcome.play_seconds:.1f} s, "
                f"analysis {outcome.analysis_seconds:.1f} s "
                f"({time.perf_counter() - start:.0f} s in all)",
                file=sys.stderr,
                flush=True,
            )

    if args.jobs <= 1:
        for task in tasks:
            collect(*run_task(task))
    else:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for outcome, record in pool.map(run_task, tasks):
                collect(outcome, record)
    wall = time.perf_counter() - start

    summaries = [
        summarise(level.value, outcomes[level.value], args.length)
        for level in LEVELS
        if level.value in outcomes
    ]
    expert = next((s for s in summaries if s.level == REFERENCE.value), None)
    if args.anchor is not None:
        anchor, source = args.anchor, "--anchor"
    elif expert is not None:
        anchor, source = expert.rating_pooled, "its pooled estimate by (a) in the control"
    else:
        pooled = _pooled_rating([o.expert_side for v in outcomes.values() for o in v], args.length)
        anchor, source = pooled, "its pooled estimate by (a) as the opponent"
    document = _json_safe(
        {
            "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "anchor": anchor,
            "wall_seconds": wall,
            "levels": [asdict(s) for s in summaries],
            "matches": [asdict(o) for v in outcomes.values() for o in v],
        }
    )
    if args.save is not None:
        (args.save / "results.json").write_text(json.dumps(document, indent=1), encoding="utf-8")
    if args.json:
        print(json.dumps(document, indent=1))
    else:
        print(report(summaries, anchor, source, args))
        print(f"\nwall time {wall:.0f} s for {len(tasks)} matches")
    return 0


if __name__ == "__main__":
    sys.exit(main())
