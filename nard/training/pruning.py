"""The pruning network: distilled from the engine's own networks to rank a search's replies.

A 2-ply evaluation of one position looks at some 9,000 replies, in groups (one
roll's plays) of 26 on average, and only the best of each group counts. gnubg
ranks each group with a small *pruning net* first and evaluates only the best
few in full; nard does the same (:class:`~nard.engine.search.Pruning`). nard's
pruning network is a small MLP (:class:`~nard.engine.network.Network`) on the
raw inputs (:data:`~nard.engine.encoding.RAW_INPUTS`: no features, which cost
four fifths of the full encoding), stored in the weights bundle as ``pruning``
(:attr:`~nard.engine.network.Networks.pruning`) and made by ``nard prune``
(:func:`nard.training.cli.run_prune`):

1. :func:`pruning_groups`: self-play games of the full networks at 0-ply; from
   ``positions`` of their positions, drawn at random, every roll's distinct
   plays (:func:`~nard.engine.search.children`), each group labelled with the
   full evaluator's own 0-ply probabilities;
2. :func:`fit_pruning`: the small network fitted to them
   (:func:`~nard.training.fitting.fit`, cross-entropy plus ``relative`` times
   the square error of each play's equity relative to its group's: the order
   within a roll is what the pruning needs).

It learns nothing the full networks do not know; it only has to put their
best play among its first few, and :func:`top_k_recall` measures how often it
does on groups it was not fitted on.

>>> from nard.engine.network import Network, NeuralEvaluator
>>> ev = NeuralEvaluator(Network.random(hidden=4, seed=1))
>>> boards, lengths, targets = pruning_groups(ev, games=1, positions=2, seed=1)
>>> int(lengths.sum()) == len(boards) == len(targets), len(lengths)
(True, 42)
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import numpy.typing as npt

from nard.engine.encoding import RAW_INPUTS, encode_raw_boards
from nard.engine.evaluator import Evaluator, cubeless_equity, evaluate_boards
from nard.engine.network import Network, PruningEvaluator
from nard.engine.search import children
from nard.training.dataset import collect_positions
from nard.training.fitting import fit

__all__ = ["fit_pruning", "pruning_groups", "top_k_recall"]

Groups = tuple[npt.NDArray[np.int8], npt.NDArray[np.int64], npt.NDArray[np.float32]]


def pruning_groups(evaluator: Evaluator, games: int, positions: int, seed: int) -> Groups:
    """Boards ``(n, 26)`` int8, group sizes and the evaluator's ``(n, 5)``
    probabilities of every roll's plays from ``positions`` positions drawn from
    ``games`` self-play games (see the module docstring); seeded."""
    rng = random.Random(seed)
    found = collect_positions(evaluator, games=games, rng=rng)
    picked = np.random.default_rng(seed).permutation(len(found))[:positions]
    kids, lengths = children(found[np.sort(picked)].astype(np.int64))
    targets = np.concatenate(
        [evaluate_boards(evaluator, kids[i : i + 50_000]) for i in range(0, len(kids), 50_000)]
        or [np.zeros((0, 5))]
    )
    return kids.astype(np.int8), lengths, targets.astype(np.float32)


def fit_pruning(
    groups: Groups,
    hidden: int = 64,
    epochs: int = 15,
    learning_rate: float = 3e-3,
    relative: float = 10.0,
    seed: int = 0,
    log: Any = None,
) -> Network:
    """A pruning network of ``hidden`` units fitted to ``groups`` from seeded random
    weights (whole groups held out for the validation line of ``log``)."""
    boards, lengths, targets = groups
    member = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    start = Network.random(hidden=hidden, seed=seed, inputs=RAW_INPUTS)
    result = fit(
        encode_raw_boards(boards),
        targets,
        start,
        epochs=epochs,
        learning_rate=learning_rate,
        batch=256,
        seed=seed,
        log=log,
        groups=member,
        relative=relative,
    )
    return result.network


def top_k_recall(network: Network, groups: Groups, keep: int) -> tuple[float, float]:
    """How well ``network`` prunes ``groups`` (those of more than one play) to ``keep``:
    the share of groups whose best play by the targets it leaves out, and the
    mean equity (targets') that costs per group.

    >>> net = Network.random(hidden=3, seed=2, inputs=RAW_INPUTS)
    >>> from nard.engine.network import NeuralEvaluator
    >>> g = pruning_groups(NeuralEvaluator(Network.random(hidden=4)), 1, 3, seed=2)
    >>> top_k_recall(net, g, keep=1000)
    (0.0, 0.0)
    """
    boards, lengths, targets = groups
    mine = -cubeless_equity(targets.astype(np.float64))  # the mover's, after its play
    ranked = -cubeless_equity(PruningEvaluator(network).evaluate_boards(boards.astype(np.int64)))
    missed = 0
    cost = 0.0
    counted = 0
    start = 0
    for n in lengths.tolist():
        if n > 1:
            counted += 1
            truth = mine[start : start + n]
            top = np.argsort(-ranked[start : start + n], kind="stable")[:keep]
            loss = float(truth.max() - truth[top].max())
            if loss > 0.0:
                missed += 1
                cost += loss
        start += n
    if not counted:
        return 0.0, 0.0
    return missed / counted, cost / counted
