"""Benchmark: networks' equity in the doubling window, judged by gnubg's deeper search.

The cube decides on the net's probabilities of positions where the side on
roll is the favourite, and a net that misjudges them by 0.1 turns takes into
passes (docs/engine.md, Open work, Cube). ``cube_decisions.py`` counts what
the decisions cost, which a few positions dominate; this script measures the
cause directly and with far less noise: each network's cubeless equity (0
ply) against gnubg's cubeless equity at ``--judge-plies`` (2 by default) on
the positions of the cube's benchmark, drawn the same way (self-play of the
shipped networks, the side on roll before it rolls, the shipped net's
winning chance 50-99%).

For each network and for gnubg 0-ply (for scale) it prints the root mean
square and the mean of (net - judge) and the share off by more than 0.1,
for crashed positions (``nard.engine.encoding.crashed_flags``: the crashed
net's class) and the rest apart; a last column gives each network's paired
difference of mean squared error from the first network's at the same
depth, with its 95% interval (negative: closer to the judge). ``--plies 0 1``
measures nard's 1-ply values too (the expert's cube analysis), ``--win-range
0.05 0.45`` the positions where the underdog is on roll (the 1-ply analysis's
leaves: the cube at 1 ply is only as good as the net is there). The positions are chosen by the
shipped net's own estimate, so its errors are a little larger on them than
another net's would be (their selection leans on its mistakes): compare
candidates with one another and with the shipped net as the first.

    .venv/bin/python bench/cube_window.py --positions 3000 --seed 7 \\
        --weights nard/engine/data/nard-net.npz training/work/X.npz

gnubg is the judge of a benchmark, never a source of training targets.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import numpy.typing as npt
from decisions import Judge
from strength import half_width

from nard.core.position import Position
from nard.engine.encoding import crashed_flags
from nard.engine.engine import DEFAULT_WEIGHTS
from nard.engine.evaluator import cubeless_equity
from nard.engine.network import NeuralEvaluator
from nard.engine.search import evaluate_ply
from nard.training.playout import play_games


def sample_window(
    count: int, seed: int, window: tuple[float, float] = (0.5, 0.99)
) -> list[Position]:
    """``count`` distinct contact positions of the shipped networks' self-play whose
    0-ply winning chance for the side on roll is within ``window`` (by default
    ``cube_decisions.py``'s, 50-99%, without its cube settings)."""
    evaluator = NeuralEvaluator.load(DEFAULT_WEIGHTS)
    rng = np.random.default_rng(seed)
    games = play_games(evaluator, max(40, count // 4), seed=seed)
    boards = games.boards[rng.permutation(len(games))].astype(np.int64)
    wins = evaluator.evaluate_boards(boards)[:, 0]
    out: list[Position] = []
    seen: set[Position] = set()
    for board, win in zip(boards, wins, strict=True):
        position = Position(tuple(int(c) for c in board))
        if not window[0] <= win <= window[1] or not position.is_contact() or position in seen:
            continue
        seen.add(position)
        out.append(position)
        if len(out) == count:
            break
    return out


def _judge_chunk(args: tuple[list[str], int]) -> list[float]:
    ids, plies = args
    judge = Judge(plies)
    return [judge.equity(Position.from_position_id(pid)) for pid in ids]


def judged(positions: list[Position], plies: int, jobs: int) -> npt.NDArray[np.float64]:
    """gnubg's cubeless equity of each position at ``plies``, in ``jobs`` processes."""
    ids = [p.position_id() for p in positions]
    chunks = [ids[i::jobs] for i in range(jobs)]
    with ProcessPoolExecutor(jobs) as pool:
        parts = list(pool.map(_judge_chunk, [(c, plies) for c in chunks]))
    out = np.empty(len(ids))
    for j, part in enumerate(parts):
        out[j::jobs] = part
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--judge-plies", type=int, default=2)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--weights", nargs="+", default=[str(DEFAULT_WEIGHTS)], help="networks to measure"
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
        "--win-range",
        nargs=2,
        type=float,
        default=(0.5, 0.99),
        metavar=("LOW", "HIGH"),
        help="the shipped net's winning chance for the side on roll (0.05 0.45: the "
        "underdog on roll, the 1-ply cube's leaves)",
    )
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    positions = sample_window(args.positions, args.seed, tuple(args.win_range))
    boards = np.array([list(p) for p in positions], dtype=np.int64)
    crashed = crashed_flags(boards)
    judge = judged(positions, args.judge_plies, args.jobs)
    errors: dict[str, npt.NDArray[np.float64]] = {
        "gnubg 0-ply": judged(positions, 0, args.jobs) - judge
    }
    for weights in args.weights:
        evaluator = NeuralEvaluator.load(weights)
        for plies in args.plies:
            probs = np.asarray(evaluate_ply(positions, evaluator, plies))
            name = Path(weights).name + (f" {plies}-ply" if args.plies != [0] else "")
            errors[name] = cubeless_equity(probs) - judge

    low, high = args.win_range
    print(
        f"{len(positions)} positions (seed {args.seed}; the side on roll {low:.0%}-{high:.0%} "
        f"to win; {int(crashed.sum())} crashed), cubeless equity against gnubg "
        f"{args.judge_plies}-ply"
    )
    print(
        f"{'network':<32} {'crashed rms':>11} {'bias':>7} {'>0.1':>6} "
        f"{'other rms':>10} {'bias':>7} {'>0.1':>6} {'all rms':>8} {'mse vs first, x1000':>22}"
    )
    firsts: dict[int, npt.NDArray[np.float64]] = {}
    for name, error in errors.items():
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
        versus = ""
        if name != "gnubg 0-ply":
            depth = int(name.rsplit(" ", 1)[-1].removesuffix("-ply")) if "-ply" in name else 0
            first = firsts.setdefault(depth, error)
            if first is not error:
                diff = error**2 - first**2
                versus = f"{1000 * diff.mean():+.2f} ± {1000 * half_width(diff.tolist()):.2f}"
        print(
            f"{name:<32} {cells[0]:>11} {cells[1]:>7} {cells[2]:>6} {cells[3]:>10} "
            f"{cells[4]:>7} {cells[5]:>6} {np.sqrt(np.mean(error**2)):>8.4f} {versus:>22}"
        )
    print(f"{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
