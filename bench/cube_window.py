"""Benchmark: networks' equity where the cube decides, judged by gnubg's deeper search.

The cube decides on the net's probabilities of positions where the side on
roll is the favourite, and a net that misjudges them by 0.1 turns takes into
passes (docs/engine.md, Open work, Cube). ``cube_decisions.py`` counts what
the decisions cost, which a few positions dominate; this script measures the
cause directly and with far less noise: each network's cubeless equity
against gnubg's cubeless equity at ``--judge-plies`` (2 by default) on
contact positions of the shipped networks' self-play (the side on roll,
before it rolls) whose equity by gnubg 0-ply is in the window: the
favourite on roll (+0.1 to +1.0) or, ``--window underdog``, the underdog
(-1.0 to -0.1: the positions after the favourite's roll, the leaves of the
expert's 1-ply cube analysis, which is only as good as the net is there).

For each network and for gnubg 0-ply (for scale) it prints the root mean
square and the mean of (net - judge) and the share off by more than 0.1,
for crashed positions (``nard.engine.encoding.crashed_flags``: the crashed
net's class) and the rest apart; a column gives each network's paired
difference of mean squared error from the first network's at the same
depth, with its 95% interval (negative: closer to the judge). The last three
do the same for the winning chance alone (the equity less its gammons: a net
closer in equity may be further in the split between wins and gammons, which
match play's cube weighs by the score). ``--plies 0
1`` measures nard's 1-ply values too. A bundle with cube networks is measured
by them, as its cube analysis reads them (``Networks.for_cube``).

    .venv/bin/python bench/cube_window.py --positions 2000 --seed 8 --plies 0 1 \\
        --weights nard/engine/data/nard-net.npz training/work/X.npz

gnubg is the judge of a benchmark, never a source of training targets.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from decisions import judge_all
from strength import half_width

from nard.core.position import Position
from nard.engine.encoding import crashed_flags
from nard.engine.engine import DEFAULT_WEIGHTS
from nard.engine.evaluator import cubeless_equity
from nard.engine.network import NeuralEvaluator
from nard.engine.search import evaluate_ply
from nard.training.playout import play_games

WINDOWS = {"favourite": (0.1, 1.0), "underdog": (-1.0, -0.1)}
"""Cubeless equity of the side on roll by gnubg 0-ply: where the cube is decided (the
favourite on roll), and the positions after the favourite's roll (the underdog on
roll, the 1-ply analysis's leaves)."""


def sample_window(
    count: int, seed: int, window: str = "favourite", jobs: int = 2
) -> tuple[list[Position], npt.NDArray[np.float64]]:
    """``count`` distinct contact positions of the shipped networks' self-play whose
    cubeless equity by gnubg 0-ply is in :data:`WINDOWS` ``[window]``, and that
    equity. The choice does not depend on any net measured: chosen by one net's
    own estimate, a sample would hold more of that net's mistakes than another's
    (a net of the shipped one's strength with other errors, K1, measured 0.0005
    closer to the judge than it on a sample chosen by the shipped net)."""
    low, high = WINDOWS[window]
    rng = np.random.default_rng(seed)
    games = play_games(NeuralEvaluator.load(DEFAULT_WEIGHTS), max(40, count // 10), seed=seed)
    pool: list[Position] = []
    seen: set[Position] = set()
    for board in games.boards[rng.permutation(len(games))]:
        position = Position(tuple(int(c) for c in board))
        if position.is_contact() and position not in seen:
            seen.add(position)
            pool.append(position)
            if len(pool) == 3 * count:  # about a third is in either window
                break
    gnubg = judged(pool, 0, jobs)
    picked = [i for i in range(len(pool)) if low <= gnubg[i, 1] <= high][:count]
    return [pool[i] for i in picked], gnubg[picked]


def judged(positions: list[Position], plies: int, jobs: int) -> npt.NDArray[np.float64]:
    """gnubg's winning chance and cubeless equity of each position at ``plies`` (an
    ``(n, 2)`` array), in ``jobs`` processes."""
    return judge_all(positions, plies, jobs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--judge-plies", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--weights",
        nargs="+",
        default=[str(DEFAULT_WEIGHTS)],
        help="networks to measure (a bundle's cube networks where it has them)",
    )
    parser.add_argument(
        "--plies",
        nargs="+",
        type=int,
        default=[0],
        help="nard's depths (the expert's cube analysis is at 1 ply: its leaves are the "
        "positions after the favourite's roll, the underdog on roll)",
    )
    parser.add_argument(
        "--window",
        choices=sorted(WINDOWS),
        default="favourite",
        help="the side on roll's cubeless equity by gnubg 0-ply: favourite 0.1 to 1.0, "
        "underdog -1.0 to -0.1 (the 1-ply cube's leaves)",
    )
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    positions, gnubg0 = sample_window(args.positions, args.seed, args.window, args.jobs)
    boards = np.array([list(p) for p in positions], dtype=np.int64)
    crashed = crashed_flags(boards)
    judge = judged(positions, args.judge_plies, args.jobs)
    # Each row: its name, nard's depth (None for gnubg, which is compared with no one)
    # and its errors against the judge.
    rows: list[tuple[str, int | None, npt.NDArray[np.float64]]] = [
        ("gnubg 0-ply", None, gnubg0 - judge)
    ]  # errors: (n, 2), winning chance and equity
    for weights in args.weights:
        evaluator = NeuralEvaluator.load(weights).for_cube()  # what its cube reads
        for plies in args.plies:
            probs = np.asarray(evaluate_ply(positions, evaluator, plies))
            name = Path(weights).name + (f" {plies}-ply" if args.plies != [0] else "")
            mine = np.stack([probs[:, 0], cubeless_equity(probs)], axis=1)
            rows.append((name, plies, mine - judge))

    low, high = WINDOWS[args.window]
    print(
        f"{len(positions)} positions (seed {args.seed}; the side on roll the {args.window}, "
        f"{low:+.1f} to {high:+.1f} by gnubg 0-ply; {int(crashed.sum())} crashed), "
        f"cubeless equity against gnubg {args.judge_plies}-ply"
    )
    print(
        f"{'network':<32} {'crashed rms':>11} {'bias':>7} {'>0.1':>6} "
        f"{'other rms':>10} {'bias':>7} {'>0.1':>6} {'all rms':>8} {'mse vs first, x1000':>22}"
        f" {'win rms':>8} {'win bias':>8} {'win mse vs first':>17}"
    )
    firsts: dict[int, npt.NDArray[np.float64]] = {}
    for name, depth, errors in rows:
        error, win = errors[:, 1], errors[:, 0]
        cells = []
        for pick in (crashed, ~crashed):
            part = error[pick]
            if len(part) == 0:
                cells += ["-", "-", "-"]
                continue
            cells += [
                f"{np.sqrt(np.mean(part**2)):.4f}",
                f"{part.mean():+.4f}",
                f"{np.mean(np.abs(part) > 0.1):.3f}",
            ]
        versus = win_versus = ""
        if depth is not None:
            first = firsts.setdefault(depth, errors)
            if first is not errors:
                diff = error**2 - first[:, 1] ** 2
                versus = f"{1000 * diff.mean():+.2f} ± {1000 * half_width(diff.tolist()):.2f}"
                diff = win**2 - first[:, 0] ** 2
                win_versus = f"{1000 * diff.mean():+.2f} ± {1000 * half_width(diff.tolist()):.2f}"
        print(
            f"{name:<32} {cells[0]:>11} {cells[1]:>7} {cells[2]:>6} {cells[3]:>10} "
            f"{cells[4]:>7} {cells[5]:>6} {np.sqrt(np.mean(error**2)):>8.4f} {versus:>22}"
            f" {np.sqrt(np.mean(win**2)):>8.4f} {win.mean():>+8.4f} {win_versus:>17}"
        )
    print(f"{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
