"""Benchmark: how far each kind of training label is from gnubg's deeper equity.

nard's supervised generations fit the contact network to labels of its own
(docs/engine.md): playouts at lambda 0.7 (``nard label --playout``),
rollouts (``--rollout``), or its own 1-ply or 2-ply search. This script
takes the contact positions of a dataset written by ``nard label`` (its
boards and its labels), draws a seeded sample, and compares with gnubg's
cubeless equity of the same positions at ``--judge-plies`` (2 by default; 3
is sharper and about 0.3 s a position; side on roll, before it rolls; gnubg
is the judge here, never a teacher):

- the dataset's own labels;
- nard's 0-, 1- and 2-ply values with the given networks, and the mean of
  the dataset's label and the 2-ply value;
- gnubg's 0-ply, for scale.

For each it prints the root mean square and mean of (label - judge),
in equity: how far a net fitted to those labels could get at best, whether
the distance is noise a fit averages out or a bias it inherits (label kinds
whose differences move together share a bias). A script, not a test.

    .venv/bin/nard label training/work/pl-1.npz --games 200 --playout 0.7 --seed 1
    .venv/bin/python bench/labels.py training/work/pl-1.npz [--positions 1000] [--seed 1]
        [--judge-plies 3]
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from decisions import Judge

from nard.core.position import Position
from nard.engine.engine import DEFAULT_WEIGHTS
from nard.engine.evaluator import cubeless_equity
from nard.engine.network import NeuralEvaluator
from nard.engine.search import evaluate_ply_boards
from nard.training.dataset import load_dataset


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="a dataset written by `nard label`")
    parser.add_argument("--positions", type=int, default=1000, help="contact positions sampled")
    parser.add_argument("--seed", type=int, default=1, help="seed of the sample")
    parser.add_argument("--weights", default=str(DEFAULT_WEIGHTS), help="nard's networks")
    parser.add_argument(
        "--judge-plies", type=int, default=2, help="gnubg's depth as the judge (2; 3 is sharper)"
    )
    args = parser.parse_args(argv)
    dataset = load_dataset(args.data)
    boards = dataset.boards.astype(np.int64)
    contact = np.flatnonzero(~dataset.is_race())
    if not len(contact):
        sys.exit(f"labels.py: {args.data} holds no contact positions")
    rng = np.random.default_rng(args.seed)
    rows = rng.choice(contact, size=min(args.positions, len(contact)), replace=False)
    sample = boards[rows]
    evaluator = NeuralEvaluator.load(args.weights)
    columns: dict[str, np.ndarray] = {"dataset labels": cubeless_equity(dataset.targets[rows])}
    for plies in (0, 1, 2):
        probs = evaluate_ply_boards(sample, evaluator, plies)
        columns[f"nard {plies}-ply"] = cubeless_equity(probs)
    columns["labels + 2-ply, /2"] = (columns["dataset labels"] + columns["nard 2-ply"]) / 2
    positions = [Position(b.tolist()) for b in sample]
    for plies in (0, args.judge_plies):
        judge = Judge(plies)
        columns[f"gnubg {plies}-ply"] = np.array([judge.equity(p) for p in positions])
    truth = columns.pop(f"gnubg {args.judge_plies}-ply")
    print(
        f"{len(rows)} contact positions of {args.data} (seed {args.seed}); "
        f"label minus gnubg {args.judge_plies}-ply's cubeless equity"
    )
    print(f"{'label':<18} {'rms':>7} {'mean':>7}")
    for name, values in columns.items():
        error = values - truth
        rms = float(np.sqrt(np.mean(error**2)))
        print(f"{name:<18} {rms:7.4f} {float(np.mean(error)):+7.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
