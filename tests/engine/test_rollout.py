"""Rollout trials (``nard.engine.rollout``): what ``nard rollout`` and the rollout labels
average. The labels' tests are in ``tests/training/test_rollout_labels.py``, the
rollouts' in ``tests/analysis/test_rollout.py``."""

from __future__ import annotations

import numpy as np

from nard.engine.rollout import consistent


def test_consistent_orders_the_probabilities() -> None:
    probs = np.array([[1.2, 0.5, 0.6, 0.3, 0.1], [0.4, 0.1, 0.0, 0.7, 0.9]])
    assert consistent(probs).tolist() == [[1.0, 0.5, 0.5, 0.0, 0.0], [0.4, 0.1, 0.0, 0.6, 0.6]]
