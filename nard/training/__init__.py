"""Training nard's networks: self-play, labels, fitting and pruning.

The engine (:mod:`nard.engine`) plays and analyses with the networks; this
package makes them, on top of the engine, which imports nothing from it:

- :mod:`~nard.training.td`: TD(lambda) self-play from random weights, with
  resumable checkpoints and a pubeval benchmark (``nard train``);
- :mod:`~nard.training.dataset`: self-play positions labelled by nard's own
  n-ply search, and the dataset files (``nard label``);
- :mod:`~nard.training.playout`: self-play games labelled by their
  luck-corrected outcomes (``nard label --playout LAM``);
- :mod:`~nard.training.rollout`: positions labelled by truncated rollouts of
  :mod:`nard.engine.rollout`'s trials, optionally one roll's sibling plays on
  common dice (``nard label --rollout TRIALS [--siblings K]``);
- :mod:`~nard.training.fitting`: Adam on the cross-entropy of the five outputs,
  optionally weighing the order of one roll's plays (``nard fit``);
- :mod:`~nard.training.torch_fit`: the same fit with PyTorch, for networks of
  several hidden layers, on a GPU when there is one (``nard fit --torch``);
- :mod:`~nard.training.pruning`: the pruning network distilled from a bundle's
  own networks (``nard prune``);
- :mod:`~nard.training.cli`: the four commands' options and runs.

Dependencies point one way: ``dataset`` <- ``playout`` <- ``rollout``;
``dataset`` and ``fitting`` <- ``pruning``; ``fitting`` <- ``torch_fit``; ``td``
alone; ``cli`` on all of them; none imports another lazily. Every kind of label
runs over processes or, with ``--ray ADDRESS``, on a Ray cluster.
``docs/engine.md`` has the recipe that made the shipped networks.
"""

from __future__ import annotations

from nard.training.dataset import (
    DATASET_FORMAT,
    Dataset,
    DatasetError,
    collect_positions,
    label_positions,
    load_dataset,
    make_dataset,
    save_dataset,
)
from nard.training.fitting import FitResult, fit
from nard.training.td import TrainConfig, TrainingError, benchmark_vs_pubeval, train

__all__ = [
    "DATASET_FORMAT",
    "Dataset",
    "DatasetError",
    "FitResult",
    "TrainConfig",
    "TrainingError",
    "benchmark_vs_pubeval",
    "collect_positions",
    "fit",
    "label_positions",
    "load_dataset",
    "make_dataset",
    "save_dataset",
    "train",
]
