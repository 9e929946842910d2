"""Labelling on a Ray cluster (``nard label --ray ADDRESS``), with a stand-in for Ray
that runs each task at once in this process, its arguments pickled as Ray would."""

from __future__ import annotations

import pickle
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from nard.engine.engine import DEFAULT_WEIGHTS
from nard.training.dataset import DatasetError, make_dataset
from nard.training.playout import play_games_with
from nard.training.rollout import rollout_dataset


class _Ref:
    def __init__(self, value: Any) -> None:
        self.value = value


class FakeRay:
    """What nard uses of Ray: init, put, remote(f).remote(...), get."""

    def __init__(self, before_task: Callable[[], None] = lambda: None) -> None:
        self.address: str | None = "not initialised"
        self.tasks = 0
        self._before_task = before_task

    def init(self, address: str | None = None, **_: Any) -> None:
        self.address = address

    def put(self, value: Any) -> _Ref:
        return _Ref(pickle.loads(pickle.dumps(value)))

    def remote(self, function: Callable[..., Any]) -> Any:
        ray = self

        class Remote:
            def remote(self, *args: Any) -> _Ref:
                ray._before_task()
                ray.tasks += 1
                # a Ray worker gets its arguments pickled, object refs resolved
                sent = pickle.loads(pickle.dumps(args))
                given = [a.value if isinstance(a, _Ref) else a for a in sent]
                return _Ref(function(*given))

        return Remote()

    def get(self, ref: _Ref) -> Any:
        return ref.value


@pytest.fixture
def weights(tmp_path: Path) -> Path:
    path = tmp_path / "nets.npz"
    shutil.copyfile(DEFAULT_WEIGHTS, path)
    return path


def test_rollout_labels_on_ray_are_those_of_one_process(
    weights: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the workers have no copy of the file: it is moved away before any task runs
    hidden = weights.with_suffix(".away")

    def move_the_file_away() -> None:
        if weights.exists():
            weights.rename(hidden)

    ray = FakeRay(before_task=move_the_file_away)
    monkeypatch.setitem(sys.modules, "ray", ray)
    kwargs: dict[str, Any] = {"games": 4, "trials": 2, "truncate": 2, "share": 0.5, "seed": 3}
    on_ray = rollout_dataset(weights, chunk=2, ray_address="10.1.2.3:6379", **kwargs)
    assert ray.address == "10.1.2.3:6379" and ray.tasks == 2 and not weights.exists()
    hidden.rename(weights)
    here = rollout_dataset(weights, chunk=2, **kwargs)
    assert np.array_equal(on_ray.boards, here.boards)
    assert np.array_equal(on_ray.targets, here.targets)


def test_ply_labels_and_playouts_on_ray(weights: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ray = FakeRay()
    monkeypatch.setitem(sys.modules, "ray", ray)
    on_ray = make_dataset(weights, games=2, plies=0, seed=5, chunk=1, ray_address="local")
    assert ray.address is None and ray.tasks == 2  # "local": a cluster of this machine
    here = make_dataset(weights, games=2, plies=0, seed=5, chunk=1)
    assert np.array_equal(on_ray.targets, here.targets)
    games = play_games_with(weights, games=2, seed=5, chunk=1, ray_address="local")
    assert np.array_equal(games.boards, play_games_with(weights, 2, 5, chunk=1).boards)


def test_without_ray_the_error_says_how_to_get_it(
    weights: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray fails
    with pytest.raises(DatasetError, match=r"--ray needs Ray: pip install"):
        make_dataset(weights, games=1, plies=0, ray_address="local")
