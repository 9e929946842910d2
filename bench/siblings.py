"""Benchmark: how well networks order one roll's plays, against sibling rollouts.

A dataset written by ``nard label --rollout N --siblings K`` holds, for each
position drawn from self-play, the positions that the K best plays of one
seeded roll reach, rolled out on common dice, so the differences between
sibling labels carry far less noise than the labels themselves. That
difference is what a checker-play decision turns on, and what a net's
absolute error (``bench/labels.py``) does not show.

This script takes the groups (which rows are the plays of one roll) from
the dataset or, in a file made before datasets stored them, rebuilds them
by replaying the self-play of each chunk with ``--made-by``, the networks
that made the dataset (checking that the positions come out the same;
``--write-groups`` then stores them in the file), then, for each net in ``--nets`` at each
``--plies``, compares each play's equity relative to its group's mean with
the same for the labels. It prints, by class (contact or race):

- ``rms``: root mean square of (net - label) relative equity, x1000; the
  labels' own noise is in it alike for every net, so differences between
  nets are what counts: ``mse-first``, the mean square less the first
  net's, in (thousandths)^2, with a 95% interval paired by group
  (negative: the net orders the plays closer to the rollouts);
- ``top``: how often the net's best play is the labels' best;
- ``loss``: the labels' equity given up by the net's pick, x1000 per group.

No judge but the rollouts; use a dataset no net in the comparison was
fitted to. A script, not a test.

    .venv/bin/python bench/siblings.py training/data/rollouts/sib-814.npz \\
        --nets nard/engine/data/nard-net.npz training/work/F.npz [--plies 0 1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import numpy.typing as npt
from decisions import Judge

from nard.core.position import Position
from nard.engine.engine import DEFAULT_WEIGHTS
from nard.engine.evaluator import cubeless_equity
from nard.engine.network import NeuralEvaluator, WeightsError
from nard.engine.search import evaluate_ply_boards
from nard.training.dataset import Dataset, load_dataset, save_dataset
from nard.training.rollout import rollout_positions, sibling_plays

_CHUNK = 20  # rollout_dataset's default chunk of games


def rebuild_groups(path: str, made_by: str) -> tuple[npt.NDArray[np.int64], Dataset]:
    """The group of each row of the sibling dataset at ``path``: stored in it, or
    rebuilt by replaying its self-play (module docstring)."""
    data = load_dataset(path)
    info = data.info
    if not info.get("siblings"):
        sys.exit(f"siblings.py: {path} is not a sibling dataset (nard label --siblings)")
    if data.groups is not None:
        return data.groups, data
    if info.get("chunk", _CHUNK) != _CHUNK:
        sys.exit(f"siblings.py: {path} was made in chunks of {info['chunk']}")
    maker = NeuralEvaluator.load(made_by)
    boards, groups = [], []
    for i, first in enumerate(range(0, int(info["games"]), _CHUNK)):
        seed = int(info["seed"]) * 1_000_003 + i
        games = min(_CHUNK, int(info["games"]) - first)
        starts = rollout_positions(maker, games, seed, float(info["share"]), info["random_play"])
        kids, parents = sibling_plays(maker, starts, info["siblings"], info["window"], seed)
        boards.append(kids)
        groups.append(parents + i * 1_000_000)
    rebuilt = np.concatenate(boards)
    if rebuilt.shape != data.boards.shape or not (rebuilt == data.boards).all():
        sys.exit(f"siblings.py: {made_by} does not replay {path}: give the net that made it")
    return np.concatenate(groups), data


def relative(
    equity: npt.NDArray[np.float64], groups: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """Each equity less the mean of its group."""
    _, inverse, counts = np.unique(groups, return_inverse=True, return_counts=True)
    means = np.bincount(inverse, weights=equity) / counts
    out: npt.NDArray[np.float64] = equity - means[inverse]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", help="a dataset written by `nard label --siblings`")
    parser.add_argument("--nets", nargs="+", default=[str(DEFAULT_WEIGHTS)])
    parser.add_argument("--plies", nargs="+", type=int, default=[0])
    parser.add_argument(
        "--gnubg", nargs="*", type=int, default=[], metavar="PLIES", help="gnubg at these plies too"
    )
    parser.add_argument(
        "--made-by", default=str(DEFAULT_WEIGHTS), help="the networks that made the dataset"
    )
    parser.add_argument(
        "--write-groups", action="store_true", help="store rebuilt groups in the dataset"
    )
    args = parser.parse_args(argv)
    groups, data = rebuild_groups(args.data, args.made_by)
    if args.write_groups and data.groups is None:
        save_dataset(Dataset(data.boards, data.targets, data.info, groups), args.data)
        print(f"groups written to {args.data}")
    boards = data.boards.astype(np.int64)
    label = relative(cubeless_equity(data.targets.astype(np.float64)), groups)
    raw_label = cubeless_equity(data.targets.astype(np.float64))
    race = data.is_race()
    ids, inverse = np.unique(groups, return_inverse=True)
    group_race = np.bincount(inverse, weights=race.astype(float)) == np.bincount(inverse)
    print(f"{args.data}: {len(boards)} positions in {len(ids)} groups "
          f"({int(group_race.sum())} race groups)")  # fmt: skip
    print(
        f"{'net':<40} {'ply':>3} {'class':<8} {'rms':>6} {'mse-first':>15} {'top':>6} {'loss':>6}"
    )
    first: dict[str, npt.NDArray[np.float64]] = {}
    try:
        nets = {net: NeuralEvaluator.load(net) for net in args.nets}
    except WeightsError as exc:
        sys.exit(f"siblings.py: {exc}")
    players: list[tuple[str, int]] = [(n, p) for p in args.plies for n in args.nets]
    players += [("gnubg", p) for p in args.gnubg]
    for net, plies in players:
        if net == "gnubg":
            judge = Judge(plies)
            values = np.array([judge.equity(Position(tuple(int(c) for c in b))) for b in boards])
        else:
            values = cubeless_equity(evaluate_ply_boards(boards, nets[net], plies))
        error = (relative(values, groups) - label) ** 2
        per_group = np.bincount(inverse, weights=error)
        # The mover's equity is minus the children's (seen from the side on roll next).
        top_net = np.zeros(len(ids), dtype=np.int64)
        top_label = np.zeros(len(ids), dtype=np.int64)
        loss = np.zeros(len(ids))
        for g in range(len(ids)):
            rows = np.flatnonzero(inverse == g)
            pick = rows[np.argmin(values[rows])]
            best = rows[np.argmin(raw_label[rows])]
            top_net[g], top_label[g] = pick, best
            loss[g] = raw_label[pick] - raw_label[best]
        for name, mask in (("contact", ~group_race), ("race", group_race)):
            if not mask.any():
                continue
            rows = mask[inverse]
            rms = np.sqrt(error[rows].mean()) * 1000
            vs = ""
            if name in first:
                d = per_group[mask] - first[name]
                n_rows = rows.sum()
                mean = d.sum() / n_rows * 1e6
                half = 1.96 * d.std() * np.sqrt(len(d)) / n_rows * 1e6
                vs = f"{mean:+.1f} ± {half:.1f}"
            else:
                first[name] = per_group[mask]
            top = (top_net[mask] == top_label[mask]).mean()
            print(f"{Path(net).name:<40} {plies:>3} {name:<8} {rms:6.1f} {vs:>15} "
                  f"{top:6.1%} {loss[mask].mean() * 1000:6.2f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
