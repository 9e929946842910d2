"""The training commands: ``nard train``, ``nard label``, ``nard fit`` and ``nard prune``.

Each command is a pair: ``add_*_arguments(parser)`` declares its options on a
parser of :mod:`nard.cli.main`, ``run_*(args, out)`` runs it with the parsed
arguments, its progress written to ``out`` (stderr). Bad input raises a
:class:`~nard.core.errors.NardError` (``DatasetError``, ``TrainingError``),
which ``nard`` prints as one line. ``python -m nard.training.cli`` is
``nard train`` on its own.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import numpy as np

from nard.core.errors import NardError
from nard.engine.encoding import crashed_flags, encode_boards, race_flags
from nard.engine.network import CUBE_CLASSES, NET_CLASSES, Network, Networks, NeuralEvaluator
from nard.training.dataset import DatasetError, load_dataset, make_dataset, save_dataset
from nard.training.fitting import fit
from nard.training.playout import play_games_with, playout_dataset
from nard.training.pruning import fit_pruning, pruning_groups, top_k_recall
from nard.training.rollout import rollout_dataset
from nard.training.td import TrainConfig, TrainProgress, train
from nard.training.torch_fit import fit_torch, load_torch, pick_device

__all__ = [
    "add_fit_arguments",
    "add_label_arguments",
    "add_prune_arguments",
    "add_train_arguments",
    "main",
    "run_fit",
    "run_label",
    "run_prune",
    "run_train",
]


# -- nard train ---------------------------------------------------------------------------


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``nard train`` (also ``python -m nard.training.cli``)."""
    defaults = TrainConfig()
    parser.add_argument("checkpoint", help="checkpoint file (.npz); resumed when it exists")
    parser.add_argument("--games", type=int, required=True, help="total games to reach")
    for field in fields(TrainConfig):
        value = getattr(defaults, field.name)
        parser.add_argument(
            "--" + field.name.replace("_", "-"),
            type=type(value),
            default=value,
            help=f"(default {value})",
        )
    parser.add_argument("--quiet", action="store_true", help="no progress line")


def run_train(args: argparse.Namespace, out: Any = None) -> int:
    """Run ``nard train`` with parsed ``args``; progress goes to ``out`` (stderr)."""
    stream = sys.stderr if out is None else out
    config = TrainConfig(**{f.name: getattr(args, f.name) for f in fields(TrainConfig)})

    def show(p: TrainProgress) -> None:
        if p.benchmark is not None:
            stream.write(
                f"\rgames {p.games}: {p.benchmark.ppg:+.3f} ppg vs pubeval "
                f"(+/- {p.benchmark.ci95:.3f}, {p.benchmark.games} games)\n"
            )
        if not args.quiet and (p.session_games % 10 == 0 or p.games == p.target):
            pct = 100.0 * p.games / p.target if p.target else 100.0
            stream.write(
                f"\r{p.games}/{p.target} games ({pct:.1f}%), {p.games_per_second:.1f} games/s"
            )
        stream.flush()

    summary = train(config, args.checkpoint, args.games, progress=show)
    stream.write(
        f"\n{summary.session_games} games in {summary.seconds:.1f} s "
        f"({summary.games_per_second:.1f} games/s of self-play); "
        f"{summary.games} in all, checkpoint {args.checkpoint}\n"
    )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m nard.training.cli CHECKPOINT --games N [options]``: ``nard train``."""
    parser = argparse.ArgumentParser(
        prog="python -m nard.training.cli", description="TD(lambda) self-play training."
    )
    add_train_arguments(parser)
    try:
        return run_train(parser.parse_args(argv))
    except NardError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


# -- nard label and nard fit ---------------------------------------------------------------


def add_label_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``nard label``."""
    parser.add_argument("dataset", help="dataset file to write (.npz)")
    parser.add_argument("--weights", required=True, help="networks that play and label")
    parser.add_argument("--games", type=int, required=True, help="self-play games")
    parser.add_argument("--plies", type=int, default=1, help="search depth of the labels")
    parser.add_argument(
        "--playout",
        type=float,
        metavar="LAM",
        help="label every turn of the games by its luck-corrected outcome at lambda LAM "
        "(nard.training.playout) instead of by search",
    )
    parser.add_argument(
        "--rollout",
        type=int,
        metavar="TRIALS",
        help="label a share of the games' positions by rollouts of TRIALS luck-corrected "
        "trials each (nard.training.rollout) instead of by search",
    )
    parser.add_argument(
        "--truncate", type=int, default=8, help="turns a rollout trial plays (default 8)"
    )
    parser.add_argument(
        "--share",
        type=float,
        default=0.1,
        help="share of the games' positions rolled out (default 0.1)",
    )
    parser.add_argument(
        "--siblings",
        type=int,
        default=0,
        metavar="K",
        help="with --rollout: roll out, on common dice, the positions the K best plays "
        "of a seeded roll reach from each position drawn, instead of the position",
    )
    parser.add_argument(
        "--window",
        type=float,
        default=0.12,
        help="with --siblings: plays within this equity of the best (default 0.12)",
    )
    parser.add_argument(
        "--win-range",
        type=float,
        nargs=2,
        metavar=("LOW", "HIGH"),
        help="with --rollout: only positions whose 0-ply winning chance (the side on "
        "roll's) is between LOW and HIGH, e.g. 0.55 0.95 for the doubling window",
    )
    parser.add_argument(
        "--crashed",
        action="store_true",
        help="with --rollout: only crashed positions (a side with at most 6 checkers in "
        "play), the class a crashed network is fitted on (nard fit --classes crashed)",
    )
    parser.add_argument(
        "--min-off",
        type=int,
        default=0,
        metavar="N",
        help="with --rollout: only contact positions where a side has borne off at "
        "least N checkers",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="processes")
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="label on a Ray cluster (its address, or 'local'; pip install 'ray[default]'), "
        "one task per chunk of games, instead of --jobs processes",
    )
    parser.add_argument(
        "--random-play",
        type=float,
        help="share of random plays (default 0.05; 0.02 with --playout or --rollout)",
    )


def run_label(args: argparse.Namespace, out: Any = None) -> int:
    """Run ``nard label``."""
    stream = sys.stderr if out is None else out
    if args.games < 1 or args.plies < 0 or args.jobs < 1:
        raise DatasetError("--games and --jobs must be positive, --plies at least 0")
    if args.playout is not None and not 0.0 <= args.playout <= 1.0:
        raise DatasetError(f"--playout takes a lambda in [0, 1], not {args.playout}")
    if args.random_play is not None and not 0.0 <= args.random_play <= 1.0:
        raise DatasetError(f"--random-play takes a share in [0, 1], not {args.random_play}")
    if args.rollout is not None:
        if args.playout is not None:
            raise DatasetError("--rollout and --playout are two kinds of label: give one")
        if args.rollout < 1 or args.truncate < 0 or not 0.0 < args.share <= 1.0:
            raise DatasetError(
                "--rollout takes at least 1 trial, --truncate at least 0 turns, "
                "--share a share in (0, 1]"
            )
        if not 0 <= args.min_off <= 14:
            raise DatasetError(f"--min-off takes 0 to 14 checkers, not {args.min_off}")
        if args.siblings == 1 or args.siblings < 0 or args.window < 0:
            raise DatasetError("--siblings takes 0 or at least 2 plays, --window at least 0")
        if args.win_range is not None and not 0.0 <= args.win_range[0] <= args.win_range[1] <= 1.0:
            raise DatasetError(
                f"--win-range takes LOW HIGH with 0 <= LOW <= HIGH <= 1, not "
                f"{args.win_range[0]:g} {args.win_range[1]:g}"
            )
    elif args.siblings:
        raise DatasetError("--siblings goes with --rollout")
    elif args.win_range is not None:
        raise DatasetError("--win-range goes with --rollout")
    elif args.crashed:
        raise DatasetError("--crashed goes with --rollout")
    elif args.min_off:
        raise DatasetError("--min-off goes with --rollout")
    t = time.perf_counter()
    if args.rollout is not None:
        random_play = 0.02 if args.random_play is None else args.random_play
        dataset = rollout_dataset(
            args.weights,
            args.games,
            args.rollout,
            args.truncate,
            args.share,
            args.seed,
            args.jobs,
            random_play,
            siblings=args.siblings,
            window=args.window,
            ray_address=args.ray,
            win_range=None if args.win_range is None else tuple(args.win_range),
            crashed=args.crashed,
            min_off=args.min_off,
        )
        how = f"by rollouts of {args.rollout} trials cut at {args.truncate} turns"
        if args.siblings:
            how += f", {args.siblings} sibling plays on common dice"
    elif args.playout is None:
        random_play = 0.05 if args.random_play is None else args.random_play
        dataset = make_dataset(
            args.weights,
            args.games,
            args.plies,
            args.seed,
            args.jobs,
            random_play,
            ray_address=args.ray,
        )
        how = f"at {args.plies}-ply"
    else:
        random_play = 0.02 if args.random_play is None else args.random_play
        played = play_games_with(
            args.weights, args.games, args.seed, args.jobs, random_play, ray_address=args.ray
        )
        dataset = playout_dataset(played, args.playout)
        how = f"by playout at lambda {args.playout}"
    save_dataset(dataset, args.dataset)
    secs = time.perf_counter() - t
    stream.write(
        f"{len(dataset)} positions ({int(dataset.is_race().sum())} races) from {args.games} "
        f"games, labelled {how} in {secs:.0f} s: {args.dataset}\n"
    )
    return 0


def add_fit_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``nard fit``."""
    parser.add_argument("weights", help="networks file to write (.npz, every class)")
    parser.add_argument("--data", nargs="+", required=True, help="dataset files")
    parser.add_argument("--init", help="networks to start from (default: random weights)")
    parser.add_argument(
        "--classes",
        nargs="+",
        default=["contact", "race"],
        help="networks to fit: contact, race, crashed, and the cube's own cube-contact, "
        "cube-crashed (default: contact race)",
    )
    parser.add_argument(
        "--hidden",
        type=_layer_sizes,
        default=(80,),
        metavar="UNITS[,UNITS...]",
        help="hidden units of new networks, one size per hidden layer (several need "
        "--torch); a smaller --init network of one layer is widened to it",
    )
    parser.add_argument(
        "--torch",
        action="store_true",
        help="fit with PyTorch (pip install 'nard[train]'): any depth, on a GPU if there is one",
    )
    parser.add_argument(
        "--device",
        default="auto",
        help="PyTorch's device with --torch: auto (a GPU when there is one), cpu, cuda, cuda:1",
    )
    parser.add_argument(
        "--relative",
        type=float,
        default=0.0,
        metavar="WEIGHT",
        help="weight of the order of one roll's plays in the loss, for datasets with "
        "groups (nard label --siblings); default 0",
    )
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)


def _layer_sizes(text: str) -> tuple[int, ...]:
    """``--hidden``: one size, or sizes separated by commas (``256,128,64``)."""
    try:
        sizes = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"hidden layer sizes {text!r}: give whole numbers separated by commas"
        ) from None
    if min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"hidden layer sizes {text!r}: each must be at least 1")
    return sizes


def _starting_network(
    init: Network | None, sizes: tuple[int, ...], seed: int, stream: Any, name: str
) -> Network:
    """The network a class's fit starts from: ``init`` (widened to one layer of
    ``sizes[0]`` when it is a smaller one-layer network), or random weights of
    ``sizes`` when there is none or ``sizes`` asks for another stack of layers."""
    if init is not None and init.depth == 1 and len(sizes) == 1:
        return init.widened(sizes[0], seed=seed) if init.hidden < sizes[0] else init
    if init is not None and (len(sizes) == 1 or init.hidden_sizes == sizes):
        return init
    if init is not None:
        stream.write(
            f"{name}: --init's network has hidden layers {init.hidden_sizes}, not {sizes}; "
            "starting from random weights\n"
        )
    return Network.random(sizes[0] if len(sizes) == 1 else sizes, seed=seed)


_STARTS_FROM = {"crashed": "contact", "cube-contact": "contact", "cube-crashed": "cube-contact"}
"""The network a new one of a class starts from, copied: a crashed net from its
contact net, a cube net from its checker counterpart."""


def run_fit(args: argparse.Namespace, out: Any = None) -> int:
    """Run ``nard fit``: train each class's network on its positions of the datasets.

    ``contact`` trains on every contact position (crashed ones included, so it
    stays a whole contact net), ``race`` on the races, ``crashed`` on the crashed
    positions only (:func:`~nard.engine.encoding.crashed_flags`), starting from
    the ``--init`` crashed net or, without one, from a copy of the contact net.
    The cube networks (:data:`~nard.engine.network.CUBE_CLASSES`, what the cube
    analysis reads) train alike: ``cube-contact`` on the contact positions from
    the ``--init`` one or a copy of its contact net, ``cube-crashed`` on the
    crashed ones from the ``--init`` one or a copy of the cube contact net.
    Networks of ``--init`` that are not fitted are kept as they are, its pruning
    network too (``nard prune`` makes a new one).
    """
    stream = sys.stderr if out is None else out
    known = (*NET_CLASSES, *CUBE_CLASSES)
    for name in args.classes:
        if name not in known:
            raise DatasetError(f"unknown network class {name!r}: one of {', '.join(known)}")
    if args.relative < 0:
        raise DatasetError(f"--relative takes a weight of at least 0, not {args.relative}")
    sizes: tuple[int, ...] = args.hidden
    if len(sizes) > 1 and not args.torch:
        raise DatasetError(
            f"a network of {len(sizes)} hidden layers is fitted with PyTorch: add --torch"
        )
    if args.torch:
        where = pick_device(load_torch(), args.device)  # fail early, before the data
        stream.write(f"fitting with PyTorch on {where}\n")
    start = Networks.load(args.init) if args.init else None
    has_cube_contact = "cube-contact" in args.classes or (
        start is not None and start.cube_contact is not None
    )
    if "cube-crashed" in args.classes and not has_cube_contact:
        raise DatasetError("a cube-crashed network needs a cube-contact one: fit it too")
    parts = [load_dataset(p) for p in args.data]
    boards = np.concatenate([d.boards for d in parts])
    targets = np.concatenate([d.targets for d in parts])
    # Each file's groups, renumbered apart from every other file's; -1: a row alone.
    groups = np.full(len(boards), -1, dtype=np.int64)
    row = next_group = 0
    for d in parts:
        if d.groups is not None and len(d):
            _, renumbered = np.unique(d.groups, return_inverse=True)
            groups[row : row + len(d)] = renumbered.reshape(-1) + next_group
            next_group += int(renumbered.max()) + 1
        row += len(d)
    if args.relative and next_group == 0:
        raise DatasetError("--relative needs datasets with groups (nard label --siblings)")
    del parts
    race = race_flags(boards)
    nets: dict[str, Network] = {}
    if start is not None:
        nets = dict(start.by_class())
        nets.setdefault("race", start.contact.copy())
        cubes = (start.cube_contact, start.cube_crashed)
        for cube_name, net in zip(CUBE_CLASSES, cubes, strict=True):
            if net is not None:
                nets[cube_name] = net
    for name in args.classes:
        if name == "race":
            rows = race
        elif name in ("crashed", "cube-crashed"):
            rows = crashed_flags(boards)
        else:
            rows = ~race
        init = nets.get(name)
        source = _STARTS_FROM.get(name)
        if init is None and source is not None and source in nets:
            init = nets[source].copy()
        init = _starting_network(init, sizes, args.seed, stream, name)
        if init.depth > 1 and not args.torch:
            raise DatasetError(
                f"the {name} network of --init has {init.depth} hidden layers: add --torch"
            )
        stream.write(f"{name}: {int(rows.sum())} positions, {init!r}\n")
        # Each class's inputs are encoded on their own: millions of positions'
        # inputs take gigabytes.
        how: dict[str, Any] = {
            "epochs": args.epochs,
            "learning_rate": args.learning_rate,
            "batch": args.batch,
            "seed": args.seed,
            "log": stream,
            "groups": groups[rows],
            "relative": args.relative,
        }
        x = encode_boards(boards[rows])
        if args.torch:
            result = fit_torch(x, targets[rows], init, device=args.device, **how)
        else:
            result = fit(x, targets[rows], init, **how)
        nets[name] = result.network
    if "contact" not in nets:
        raise DatasetError("no contact network: fit the contact class or give --init")
    pruning = start.pruning if start is not None else None
    if pruning is not None:
        # It only ranks replies for the search; `nard prune` distils a new one.
        stream.write("the pruning network of --init is kept as it is\n")
    Networks(
        nets["contact"],
        nets.get("race"),
        nets.get("crashed"),
        pruning,
        nets.get("cube-contact"),
        nets.get("cube-crashed"),
    ).save(args.weights)
    stream.write(f"networks written to {args.weights}\n")
    return 0


# -- nard prune ---------------------------------------------------------------------------


def add_prune_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``nard prune``."""
    parser.add_argument("weights", help="the networks' bundle: the pruning network is added")
    parser.add_argument("--out", help="write the bundle here instead of over WEIGHTS")
    parser.add_argument("--games", type=int, default=150, help="self-play games per set")
    parser.add_argument(
        "--positions", type=int, default=2500, help="positions drawn from each set's games"
    )
    parser.add_argument("--sets", type=int, default=2, help="sets of games fitted on")
    parser.add_argument("--hidden", type=int, default=64, help="hidden units (default 64)")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--relative", type=float, default=10.0, help="weight of the order term")
    parser.add_argument("--keep", type=int, default=8, help="replies kept, for the report")
    parser.add_argument("--seed", type=int, default=1)


def run_prune(args: argparse.Namespace, out: Any = None) -> int:
    """Run ``nard prune``: distil a pruning network from the bundle's networks and
    write the bundle with it; report its recall on a further, held-out set."""
    stream = sys.stderr if out is None else out
    if min(args.games, args.positions, args.sets, args.hidden, args.epochs, args.keep) < 1:
        raise NardError("--games, --positions, --sets, --hidden, --epochs and --keep must be >= 1")
    nets = Networks.load(args.weights)
    evaluator = NeuralEvaluator.load(args.weights)
    sets = [
        pruning_groups(evaluator, args.games, args.positions, args.seed + k)
        for k in range(args.sets + 1)
    ]
    held_out = sets.pop()
    boards = np.concatenate([s[0] for s in sets])
    lengths = np.concatenate([s[1] for s in sets])
    targets = np.concatenate([s[2] for s in sets])
    stream.write(f"{len(boards)} plays in {len(lengths)} groups\n")
    network = fit_pruning(
        (boards, lengths, targets),
        hidden=args.hidden,
        epochs=args.epochs,
        relative=args.relative,
        seed=args.seed,
        log=stream,
    )
    missed, cost = top_k_recall(network, held_out, args.keep)
    stream.write(
        f"held out ({len(held_out[1])} groups), keeping {args.keep}: the best play left out "
        f"in {100 * missed:.2f}% of groups, {1000 * cost:.3f} thousandths of equity per group\n"
    )
    target = args.out or args.weights
    Networks(
        nets.contact, nets.race, nets.crashed, network, nets.cube_contact, nets.cube_crashed
    ).save(target)
    stream.write(f"networks written to {target}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
