"""Benchmark: cube decisions judged by GNU Backgammon's deeper cubeful search.

The cube's counterpart of ``bench/decisions.py``: a fixed sample of positions
from nard's self-play where gnubg 0-ply gives the side on roll 50-99% winning
chances (chosen by gnubg, not by a net measured), each with a cube and score
(money with the cube centred or owned by the side on roll, and 5-point match
scores, post-Crawford included), is put to nard at several search depths and
take/double margins and to gnubg at 0-ply (its ``ComputerTurn`` rules, as in
``bench/cube_strength.py``). gnubg's cubeful n-ply evaluation (2-ply by
default) judges: its no double (ND), double/take (DT) and double/pass (DP)
equities, normalised to the cube as gnubg prints them.

- Doubler: a player that doubles gets ``min(DT, DP)``, one that holds ``ND``;
  it gives up the difference from the better of the two. Counted in every
  position where the side on roll may double.
- Taker: a take gets ``DT``, a pass ``DP`` (the doubler's equity); the taker
  gives up the difference from the lower. Counted where a double is on the
  table: the judge or gnubg 0-ply doubles (until 2026-12-06 also where the
  first net's 0-ply analysis did).

nard's variants are ``PLIES:TAKE:DOUBLE``: the cube analysis at ``PLIES``
(``Engine.cube_analysis``'s equities), passing unless DT is at least ``TAKE``
below DP, and doubling when ``min(DT, DP) - ND >= DOUBLE`` (``DOUBLE = 0``:
the analysis's own verdict). The margins are in the analysis's units
(money: cube units; match: gnubg's normalised equity).

    .venv/bin/python bench/cube_decisions.py --positions 2000 --jobs 2 \\
        --variants 0:0:0 0:0.1:0 0:0.25:0 1:0:0 1:0.1:0

gnubg is the judge of a benchmark, never a source of training targets.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from cube_strength import GnubgCubePlayer, turn_for
from decisions import judge_all, spread
from strength import half_width

from nard.core.position import Position
from nard.engine.cube import CubeContext, CubeOwner, cube_decision
from nard.engine.engine import DEFAULT_WEIGHTS
from nard.engine.network import NeuralEvaluator
from nard.engine.search import evaluate_ply
from nard.training.playout import play_games

MATCH_LENGTH = 5
MATCH_SCORES = (
    (0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (0, 2), (2, 1), (1, 2), (2, 2),
    (3, 0), (0, 3), (3, 1), (1, 3), (3, 2), (2, 3), (3, 3), (0, 4), (2, 4),
)  # fmt: skip
"""(side on roll, opponent) points at 5-point match play; x-4 is post-Crawford."""


def contexts() -> list[CubeContext]:
    """The cube and score settings positions are put in, in turn."""
    out = [CubeContext(), CubeContext(cube=2, owner=CubeOwner.ON_ROLL)]
    for score in MATCH_SCORES:
        out.append(CubeContext(match_length=MATCH_LENGTH, score=score))
        if MATCH_LENGTH - score[0] > 2 and MATCH_LENGTH - score[1] > 2:
            out.append(
                CubeContext(cube=2, owner=CubeOwner.ON_ROLL, match_length=MATCH_LENGTH, score=score)
            )
    return out


@dataclass(frozen=True)
class Item:
    """One cube decision: the position (side on roll, before it rolls) and its context."""

    position: Position
    context: CubeContext


def sample_items(count: int, seed: int, jobs: int = 2) -> list[Item]:
    """``count`` distinct positions from self-play of the shipped networks, each in
    one of :func:`contexts` (half money, half match), where the side on roll may
    double and its winning chance by gnubg 0-ply is between 50% and 99%.

    The choice depends on no net measured: chosen by the shipped net's own winning
    chances (as it was until 2026-12-06), the sample held more of that net's
    mistakes than another net's (``bench/cube_window.py`` measured the bias)."""
    rng = np.random.default_rng(seed)
    games = play_games(NeuralEvaluator.load(DEFAULT_WEIGHTS), max(40, count // 4), seed=seed)
    settings = contexts()
    money, match = settings[:2], settings[2:]
    pool: list[Position] = []
    seen: set[Position] = set()
    for board in games.boards[rng.permutation(len(games))]:
        position = Position(tuple(int(c) for c in board))
        if position != Position() and not position.is_game_over() and position not in seen:
            seen.add(position)
            pool.append(position)
            if len(pool) == 3 * count:  # about half is in the window
                break
    wins = judge_all(pool, 0, jobs)[:, 0]
    out: list[Item] = []
    for position, win in zip(pool, wins, strict=True):
        if not 0.5 <= win <= 0.99:
            continue
        chosen = money if rng.random() < 0.5 else match
        context = chosen[int(rng.integers(len(chosen)))]
        if context.can_double():
            out.append(Item(position, context))
        if len(out) == count:
            break
    return out


@dataclass(frozen=True)
class GnubgView:
    """The judge's three equities and gnubg 0-ply's own double and take."""

    judge: tuple[float, float, float]
    doubles: bool
    takes: bool


def _gnubg_chunk(args: tuple[list[Item], int]) -> list[GnubgView]:
    items, plies = args
    gnubg = GnubgCubePlayer()
    out = []
    for item in items:
        turn = turn_for(item.position, item.context)
        judge = gnubg.cube_equities(turn, plies)
        doubles = gnubg.double_verdict(turn)[0]
        takes = gnubg.take_verdict(turn)[0] != "pass"
        out.append(GnubgView(judge, doubles, takes))
    gnubg.close()
    return out


def gnubg_views(items: list[Item], plies: int, jobs: int) -> list[GnubgView]:
    """:class:`GnubgView` of every item, in ``jobs`` gnubg processes."""
    return spread(_gnubg_chunk, items, plies, jobs)


@dataclass(frozen=True)
class Variant:
    """nard's cube at ``plies`` with a take margin and a double margin."""

    plies: int
    take_margin: float
    double_margin: float

    @classmethod
    def parse(cls, text: str) -> Variant:
        try:
            plies, take, double = text.split(":")
            return cls(int(plies), float(take), float(double))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"variant {text!r} is not PLIES:TAKE_MARGIN:DOUBLE_MARGIN"
            ) from None

    def __str__(self) -> str:
        return f"nard {self.plies}-ply take-{self.take_margin:g} double+{self.double_margin:g}"


def nard_analyses(
    evaluator: NeuralEvaluator, items: list[Item], plies: int
) -> list[tuple[bool, float, float, float]]:
    """nard's (verdict doubles, ND, DT, DP) of every item at ``plies``."""
    probs = evaluate_ply([item.position for item in items], evaluator, plies)
    out = []
    for item, row in zip(items, probs, strict=True):
        d = cube_decision(row, item.context, position=item.position)
        out.append((d.double, d.no_double, d.double_take, d.double_pass))
    return out


def losses(doubles: bool, takes: bool, judge: tuple[float, float, float]) -> tuple[float, float]:
    """Equity the doubler and the taker give up by the judge's equities."""
    nd, dt, dp = judge
    doubled = min(dt, dp)
    doubler = max(nd, doubled) - (doubled if doubles else nd)
    taker = (dt if takes else dp) - doubled
    return doubler, taker


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--judge-plies", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--weights",
        nargs="+",
        default=[str(DEFAULT_WEIGHTS)],
        help="networks whose cube is judged (a bundle's cube networks where it has them), "
        "one or several on the same positions and "
        "judgements (the positions come from the shipped ones' games, chosen by gnubg 0-ply)",
    )
    parser.add_argument(
        "--variants", nargs="+", type=Variant.parse, default=[Variant.parse("0:0:0")]
    )
    parser.add_argument(
        "--worst",
        type=int,
        default=0,
        metavar="N",
        help="list the N costliest decisions of the first nard variant (position, "
        "cube, checkers off, nard's and the judge's equities)",
    )
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    items = sample_items(args.positions, args.seed, args.jobs)
    views = gnubg_views(items, args.judge_plies, args.jobs)
    kinds = ["money" if item.context.is_money else "match" for item in items]
    rows: dict[str, list[tuple[float, float]]] = {}
    variant_of: dict[str, str] = {}  # each nard row's variant
    rows["gnubg 0-ply"] = [losses(v.doubles, v.takes, v.judge) for v in views]
    # A double is on the table where the judge or gnubg 0-ply doubles: the same rows
    # for every net, chosen by none of them.
    on_table = [view.doubles or min(view.judge[1:]) >= view.judge[0] for view in views]
    first_analysis: list[tuple[bool, float, float, float]] = []
    for weights in args.weights:
        evaluator = NeuralEvaluator.load(weights).for_cube()  # what its cube reads
        analyses = {
            plies: nard_analyses(evaluator, items, plies)
            for plies in sorted({v.plies for v in args.variants})
        }
        for variant in args.variants:
            row = []
            verdicts = []
            for (double, nd, dt, dp), view in zip(analyses[variant.plies], views, strict=True):
                if variant.double_margin:
                    double = min(dt, dp) - nd >= variant.double_margin
                takes = dt < dp - variant.take_margin
                row.append(losses(double, takes, view.judge))
                verdicts.append((double, nd, dt, dp))
            if not first_analysis:
                first_analysis = verdicts
            name = str(variant) if len(args.weights) == 1 else f"{variant} {Path(weights).stem}"
            rows[name] = row
            variant_of[name] = str(variant)
    secs = time.perf_counter() - t0

    n_table = sum(on_table)
    print(
        f"{len(items)} cube decisions (seed {args.seed}; {kinds.count('money')} money, "
        f"{kinds.count('match')} at {MATCH_LENGTH}-point match scores), judged by gnubg "
        f"{args.judge_plies}-ply cubeful; equity given up per decision x1000 "
        f"(doubler: all; taker: the {n_table} with a double on the table)"
    )
    print(
        f"{'player':<40} {'double money':>12} {'match':>7} {'take money':>11} {'match':>7} "
        f"{'both':>7} {'vs first':>16}"
        + (f" {'vs first net':>16}" if len(args.weights) > 1 else "")
    )
    reference: np.ndarray | None = None
    # With several --weights: the first network's figures by variant, which the other
    # networks' rows of the same variant are compared with.
    first_net: dict[str, np.ndarray] = {}
    by_kind: list[str] = []  # with several --weights, the differences in money and match apart
    for name, row in rows.items():
        data = np.array(row)
        cells = []
        for col in (0, 1):
            for kind in ("money", "match"):
                pick = [
                    i for i in range(len(items)) if kinds[i] == kind and (col == 0 or on_table[i])
                ]
                cells.append(1000 * float(data[pick, col].mean()) if pick else math.nan)
        per_item = data[:, 0] + np.where(on_table, data[:, 1], 0.0)
        if reference is None:
            reference, versus = per_item, ""
        else:
            diff = per_item - reference
            half = half_width(diff.tolist())
            versus = f"{1000 * diff.mean():+.1f} ± {1000 * half:.1f}"
        against_nard = ""
        if len(args.weights) > 1 and name in variant_of:
            variant = variant_of[name]
            if variant not in first_net:
                first_net[variant] = per_item
            else:
                diff = per_item - first_net[variant]
                against_nard = f"{1000 * diff.mean():+.1f} ± {1000 * half_width(diff.tolist()):.1f}"
                for kind in ("all", "money", "match"):
                    part = diff if kind == "all" else diff[[k == kind for k in kinds]]
                    if len(part) > 1:
                        by_kind.append(
                            f"{name}: {kind} {1000 * part.mean():+.2f} ± "
                            f"{1000 * half_width(part.tolist()):.2f} against the first network "
                            f"at the same variant ({len(part)} positions)"
                        )
        print(
            f"{name:<40} {cells[0]:>12.1f} {cells[1]:>7.1f} {cells[2]:>11.1f} {cells[3]:>7.1f} "
            f"{1000 * per_item.mean():>7.1f} {versus:>16} {against_nard:>16}"
        )
    for line in by_kind:
        print(line)
    print(f"{secs:.0f} s")
    if args.worst:
        first = next(name for name in rows if name != "gnubg 0-ply")
        print_worst(items, views, on_table, rows[first], first_analysis, first, args.worst)
    return 0


def print_worst(
    items: list[Item],
    views: list[GnubgView],
    on_table: list[bool],
    row: list[tuple[float, float]],
    analysis: list[tuple[bool, float, float, float]],
    name: str,
    count: int,
) -> None:
    """The ``count`` decisions where ``name`` gave up the most, doubler and taker
    apart: where to look for what the net misjudges."""
    for col, role in ((0, "doubler"), (1, "taker")):
        ranked = sorted(
            (i for i in range(len(items)) if col == 0 or on_table[i]),
            key=lambda i: -row[i][col],
        )[:count]
        print(f"\n{name}: the {len(ranked)} costliest decisions as {role}")
        print(
            f"{'lost':>6} {'position ID':<15} {'cube':<22} {'off':>5} "
            f"{'nard ND/DT/DP':>20} {'judge ND/DT/DP':>20} {'gnubg 0':>8}"
        )
        for i in ranked:
            item, view = items[i], views[i]
            off = f"{item.position.on_roll_at(0)}-{item.position.opponent_at(0)}"
            _, nd, dt, dp = analysis[i]
            judge = "/".join(f"{x:.2f}" for x in view.judge)
            verdict = ("D" if view.doubles else "-") + ("T" if view.takes else "P")
            print(
                f"{1000 * row[i][col]:>6.0f} {item.position.position_id():<15} "
                f"{describe(item.context):<22} {off:>5} {nd:>6.2f}/{dt:.2f}/{dp:.2f} "
                f"{judge:>20} {verdict:>8}"
            )


def describe(context: CubeContext) -> str:
    """A cube context in a few characters: money or the score, the cube and its owner."""
    where = "money" if context.is_money else f"{context.score[0]}-{context.score[1]}/{MATCH_LENGTH}"
    owner = "centred" if context.owner is CubeOwner.CENTRED else context.owner.value
    return f"{where} {context.cube} {owner}"


if __name__ == "__main__":
    sys.exit(main())
