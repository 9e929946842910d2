"""The neural network: an MLP from the encoded position to gnubg's five probabilities.

:class:`Network` is ``INPUTS -> hidden (sigmoid) -> 5 (sigmoid)``, weights in
``float64`` (TD updates are small; ``float64`` keeps training exactly
repeatable and resumable), batched :meth:`~Network.forward` and the gradient of
every output for TD learning (:meth:`~Network.output_gradients`). Inputs are
:func:`nard.engine.encoding.encode`'s, outputs the five probabilities of the
:mod:`~nard.engine.evaluator` seam, for the side on roll before it rolls.

Weights are stored as ``.npz`` (:meth:`~Network.save`/:meth:`~Network.load`)
with a format tag, the encoding version, the input count and the hidden size;
a missing, corrupt or mismatched file raises :class:`WeightsError` naming the
file and how to restore it, never a silent fallback.

:class:`Networks` is the engine's set of nets, one per class of position, as
gnubg has them: ``contact`` for positions where the sides can still hit,
``race`` for races (no contact left) and, optionally, ``crashed`` for contact
positions where a side has crashed (:func:`~nard.engine.encoding.crashed_flags`).
All read the same encoding. A bundle file (format :data:`BUNDLE_FORMAT`) holds
them; a single-network file loads as a set whose contact net evaluates
everything. A bundle may also hold **cube networks** (:data:`CUBE_CLASSES`):
contact and crashed networks that the engine's cube analysis reads in place of
those its checker play reads (:meth:`Networks.for_cube`), since labels that
teach a net the level of a position and those that teach it the order of one
roll's plays pull apart (docs/engine.md, model card steps 17 and 18).

:class:`NeuralEvaluator` puts the nets behind the ``Evaluator`` seam: exact
values for finished games, the exact one-sided bear-off database
(:mod:`nard.engine.bearoff`) for pure bear-offs (every checker of both sides in
its home board), the race net for the other races, the crashed net (when there
is one) for crashed positions, the contact net for the rest, and gnubg's
consistency rules on every network output.

>>> from nard.engine.evaluator import WIN, WIN_GAMMON
>>> net = Network.random(hidden=8, seed=1)
>>> p = NeuralEvaluator(net).evaluate([Position()])
>>> p.shape, bool(p[0, WIN_GAMMON] <= p[0, WIN])
((1, 5), True)
"""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from nard.core.errors import NardError
from nard.core.position import Position
from nard.engine import _kernels
from nard.engine._npz import read_arrays
from nard.engine.bearoff import BearoffDatabase
from nard.engine.encoding import (
    ENCODING_VERSION,
    INPUTS,
    OFF_INPUT,
    OPPONENT_OFF_INPUT,
    RAW_INPUTS,
    encode_boards,
    encode_raw_boards,
)
from nard.engine.evaluator import (
    NUM_OUTPUTS,
    Boards,
    Evaluator,
    Probabilities,
    boards_of,
    fill_outcomes,
)

__all__ = [
    "BUNDLE_FORMAT",
    "CUBE_CLASSES",
    "DEEP_FORMAT",
    "FORMAT",
    "NET_CLASSES",
    "PRUNING",
    "Network",
    "Networks",
    "NeuralEvaluator",
    "PruningEvaluator",
    "WeightsError",
    "cube_evaluator",
    "read_npz",
    "sanity_check",
    "write_npz_atomic",
]

FORMAT = "nard-mlp-1"
"""The format tag of a single network's weights file (one hidden layer); a file with
another tag is refused."""
DEEP_FORMAT = "nard-mlp-2"
"""The format tag of a network of two or more hidden layers (:meth:`Network.from_layers`)."""
BUNDLE_FORMAT = "nard-nets-1"
"""The format tag of a :class:`Networks` file: one network per class, arrays prefixed
``contact.`` and ``race.``."""
NET_CLASSES = ("contact", "race", "crashed")
"""The classes of positions with a network of their own, in file order: ``contact``
(required), ``race`` and ``crashed`` (optional; without them the contact net
evaluates those positions too)."""
PRUNING = "pruning"
"""The bundle's name for the optional pruning network (:attr:`Networks.pruning`)."""
CUBE_CLASSES = ("cube-contact", "cube-crashed")
"""The bundle's names for the optional cube networks (:attr:`Networks.cube_contact`,
:attr:`Networks.cube_crashed`): what the cube analysis reads for contact and crashed
positions instead of ``contact`` and ``crashed`` (races and bear-offs as for play)."""

FloatArray = npt.NDArray[np.float64]

_RESTORE = (
    "restore it from version control (`git checkout -- {path}`), "
    "or train a new one with `nard train`"
)
_TINY = 1e-4
"""Probabilities under this become 0 (gnubg's SanityCheck)."""


class WeightsError(NardError):
    """A network weights file is missing, unreadable or does not fit this nard; the
    message names the file and how to restore it."""


_Floats = TypeVar("_Floats", npt.NDArray[np.float64], npt.NDArray[np.float32])


def _sigmoid(z: _Floats) -> _Floats:
    """In place: 1 / (1 + exp(-z)) written as (1 + tanh(z / 2)) / 2, which never
    overflows (in the array's own precision)."""
    z *= 0.5
    np.tanh(z, out=z)
    z += 1.0
    z *= 0.5
    return z


class Network:
    """An ``inputs -> hidden (-> hidden ...) -> 5`` MLP with sigmoid units (see the
    module docstring).

    Each layer is one array, its weights with its biases as a last row
    (:attr:`layers`: ``(fan_in + 1, fan_out)``, ``float64``), which training
    updates in place. The constructor takes the one-hidden-layer network
    (``w1`` ``(inputs, hidden)``, ``b1`` ``(hidden,)``, ``w2`` ``(hidden, 5)``,
    ``b2`` ``(5,)``); :meth:`from_layers` any depth (two or three hidden layers,
    as wildbg's networks). :attr:`w1`/:attr:`b1` are always the first layer and
    :attr:`w2`/:attr:`b2` the output layer (views).
    """

    def __init__(self, w1: FloatArray, b1: FloatArray, w2: FloatArray, b2: FloatArray) -> None:
        self.layers: list[FloatArray] = _stacked([w1, w2], [b1, b2])
        """Every layer's ``(fan_in + 1, fan_out)`` array: weights, then biases."""

    @classmethod
    def from_layers(cls, weights: Sequence[FloatArray], biases: Sequence[FloatArray]) -> Network:
        """A network of ``len(weights) - 1`` hidden layers: ``weights[i]`` is layer
        ``i``'s ``(fan_in, fan_out)``, ``biases[i]`` its ``(fan_out,)``; the last
        layer has 5 outputs.

        >>> net = Network.from_layers(
        ...     [np.zeros((3, 4)), np.zeros((4, 2)), np.zeros((2, 5))],
        ...     [np.zeros(4), np.zeros(2), np.zeros(5)],
        ... )
        >>> net, net.depth, net.forward(np.ones((1, 3))).tolist()
        (Network(inputs=3, hidden=(4, 2)), 2, [[0.5, 0.5, 0.5, 0.5, 0.5]])
        """
        net = cls.__new__(cls)
        net.layers = _stacked(weights, biases)
        return net

    @property
    def layer1(self) -> FloatArray:
        """The first layer's array: ``w1`` then ``b1`` (training adds to it in place)."""
        return self.layers[0]

    @layer1.setter
    def layer1(self, value: FloatArray) -> None:
        if value.shape != self.layers[0].shape:
            raise ValueError(f"layer1 has shape {self.layers[0].shape}, not {value.shape}")
        self.layers[0] = value

    @property
    def layer2(self) -> FloatArray:
        """The output layer's array: ``w2`` then ``b2`` (training adds to it in place)."""
        return self.layers[-1]

    @layer2.setter
    def layer2(self, value: FloatArray) -> None:
        if value.shape != self.layers[-1].shape:
            raise ValueError(f"layer2 has shape {self.layers[-1].shape}, not {value.shape}")
        self.layers[-1] = value

    @property
    def w1(self) -> FloatArray:
        """Input-to-first-hidden weights, ``(inputs, hidden)`` (a view)."""
        return self.layers[0][:-1]

    @property
    def b1(self) -> FloatArray:
        """The first hidden layer's biases (a view)."""
        row: FloatArray = self.layers[0][-1]
        return row

    @property
    def w2(self) -> FloatArray:
        """Last-hidden-to-output weights, ``(hidden, 5)`` (a view)."""
        return self.layers[-1][:-1]

    @property
    def b2(self) -> FloatArray:
        """Output biases (a view)."""
        row: FloatArray = self.layers[-1][-1]
        return row

    @classmethod
    def random(
        cls,
        hidden: int | Sequence[int] = 80,
        seed: int = 0,
        inputs: int = INPUTS,
        scale: float = 0.1,
    ) -> Network:
        """Small uniform random weights in ``[-scale, scale]``, from a seeded generator;
        ``hidden`` a size, or the sizes of several hidden layers.

        >>> Network.random(hidden=4, seed=3) == Network.random(hidden=4, seed=3)
        True
        >>> Network.random(hidden=(8, 4)).depth
        2
        """
        rng = np.random.default_rng(seed)
        sizes = [hidden] if isinstance(hidden, int) else list(hidden)
        if not sizes or min(sizes) < 1:
            raise ValueError(f"hidden layers need at least one unit each, not {hidden!r}")
        fans = [inputs, *sizes, NUM_OUTPUTS]
        weights, biases = [], []
        for fan_in, fan_out in itertools.pairwise(fans):
            weights.append(rng.uniform(-scale, scale, (fan_in, fan_out)))
            biases.append(rng.uniform(-scale, scale, fan_out))
        return cls.from_layers(weights, biases)

    @property
    def inputs(self) -> int:
        """Inputs per position."""
        return int(self.layers[0].shape[0] - 1)

    @property
    def hidden(self) -> int:
        """Units of the first hidden layer."""
        return int(self.layers[0].shape[1])

    @property
    def hidden_sizes(self) -> tuple[int, ...]:
        """Units of every hidden layer."""
        return tuple(int(layer.shape[1]) for layer in self.layers[:-1])

    @property
    def depth(self) -> int:
        """Hidden layers."""
        return len(self.layers) - 1

    def __repr__(self) -> str:
        shown = self.hidden if self.depth == 1 else self.hidden_sizes
        return f"Network(inputs={self.inputs}, hidden={shown})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Network):
            return NotImplemented
        return len(self.layers) == len(other.layers) and all(
            np.array_equal(a, b) for a, b in zip(self.layers, other.layers, strict=True)
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def _one_hidden_layer(self, what: str) -> None:
        if self.depth != 1:
            raise ValueError(
                f"{what} is for networks of one hidden layer, not {self.depth} "
                "(fit deeper networks with `nard fit --torch`)"
            )

    def parameters(self) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """``(w1, b1, w2, b2)``, the arrays themselves (not copies), of a network of one
        hidden layer."""
        self._one_hidden_layer("parameters()")
        return (self.w1, self.b1, self.w2, self.b2)

    def weights_and_biases(self) -> tuple[list[FloatArray], list[FloatArray]]:
        """Every layer's weights and biases (views), first layer first."""
        return [layer[:-1] for layer in self.layers], [layer[-1] for layer in self.layers]

    def copy(self) -> Network:
        """An independent copy."""
        return Network.from_layers(*self.weights_and_biases())

    def widened(self, hidden: int, seed: int = 0, scale: float = 0.1) -> Network:
        """A copy with ``hidden`` hidden units that computes the same outputs (one
        hidden layer).

        The new units get small random input weights and zero output weights,
        so training can put them to use from where this network stands.

        >>> net = Network.random(hidden=3, seed=1)
        >>> wide = net.widened(5)
        >>> wide.hidden, bool(np.allclose(wide.forward(np.ones((1, net.inputs))),
        ...                               net.forward(np.ones((1, net.inputs)))))
        (5, True)
        """
        self._one_hidden_layer("widened()")
        extra = hidden - self.hidden
        if extra < 0:
            raise ValueError(f"cannot widen {self.hidden} hidden units to {hidden}")
        rng = np.random.default_rng(seed)
        return Network(
            np.concatenate([self.w1, rng.uniform(-scale, scale, (self.inputs, extra))], axis=1),
            np.concatenate([self.b1, rng.uniform(-scale, scale, extra)]),
            np.concatenate([self.w2, np.zeros((extra, NUM_OUTPUTS))]),
            self.b2,
        )

    # -- evaluation -----------------------------------------------------------------
    def forward(self, x: npt.ArrayLike) -> FloatArray:
        """The ``(n, 5)`` outputs for ``(n, inputs)`` inputs, straight from the net.

        No clamps or exact values here: :class:`NeuralEvaluator` adds those.
        """
        return self.forward_hidden(x)[1]

    def forward_hidden(self, x: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """``(last hidden layer's activations (n, hidden), outputs (n, 5))``."""
        h = np.asarray(x, dtype=np.float64)
        for layer in self.layers[:-1]:
            z = h @ layer[:-1]
            z += layer[-1]
            h = _sigmoid(z)
        z2 = h @ self.w2
        z2 += self.b2
        return h, _sigmoid(z2)

    def output_gradients(
        self, x: npt.ArrayLike
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
        """The outputs of one position and the gradient of each output (one hidden layer).

        For an input row ``x`` of shape ``(inputs,)``, returns ``(y, d_w1, d_b1,
        d_w2, d_b2)``: ``y`` the ``(5,)`` outputs and ``d_p[k]`` the gradient of
        ``y[k]`` with respect to parameter ``p``, so ``d_w1`` is ``(5, inputs,
        hidden)``, ``d_b1`` ``(5, hidden)``, ``d_w2`` ``(5, hidden, 5)`` and
        ``d_b2`` ``(5, 5)``. See :meth:`output_deltas` for the compact form that
        training uses.
        """
        row = np.asarray(x, dtype=np.float64).reshape(-1)
        y, h, g, d = self.output_deltas(row)
        d_w1 = row[None, :, None] * d[:, None, :]
        d_w2 = np.zeros((NUM_OUTPUTS, self.hidden, NUM_OUTPUTS))
        d_b2 = np.zeros((NUM_OUTPUTS, NUM_OUTPUTS))
        for k in range(NUM_OUTPUTS):
            d_w2[k, :, k] = g[k] * h
            d_b2[k, k] = g[k]
        return y, d_w1, d, d_w2, d_b2

    def output_deltas(self, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """``(y, h, g, d)`` for one input row: outputs ``(5,)``, hidden ``(hidden,)``,
        ``g[k] = dy[k]/dz2[k]`` ``(5,)`` and ``d[k] = dy[k]/dz1`` ``(5, hidden)``
        (one hidden layer).

        The gradient of ``y[k]`` is then ``outer(x, d[k])`` for ``w1``, ``d[k]``
        for ``b1``, ``g[k] * h`` in column ``k`` of ``w2`` and ``g[k]`` at ``b2[k]``.
        """
        self._one_hidden_layer("output_deltas()")
        h, y = self.forward_hidden(x)
        g = y * (1.0 - y)
        d = (g[:, None] * self.w2.T) * (h * (1.0 - h))[None, :]
        return y, h, g, d

    # -- storage --------------------------------------------------------------------
    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The arrays of a weights file: the parameters and the metadata checked on load.
        One hidden layer is format :data:`FORMAT` (``w1 b1 w2 b2``), more
        :data:`DEEP_FORMAT` (``w1 b1 ... wK bK``, ``hidden`` every layer's size)."""
        one = self.depth == 1
        arrays: dict[str, npt.NDArray[Any]] = {
            "format": np.array(FORMAT if one else DEEP_FORMAT),
            "encoding_version": np.array(ENCODING_VERSION, dtype=np.int64),
            "inputs": np.array(self.inputs, dtype=np.int64),
            "hidden": np.array(self.hidden if one else self.hidden_sizes, dtype=np.int64),
        }
        for i, layer in enumerate(self.layers, start=1):
            arrays[f"w{i}"] = layer[:-1]
            arrays[f"b{i}"] = layer[-1]
        return arrays

    def save(self, path: str | Path) -> None:
        """Write the weights to ``path`` (``.npz``), atomically: a temporary file is
        renamed over it, so a crash never leaves a half-written file."""
        write_npz_atomic(path, self.to_arrays())

    @classmethod
    def load(cls, path: str | Path) -> Network:
        """Read weights written by :meth:`save` (or a training checkpoint, which holds them).

        Raises :class:`WeightsError` when the file is missing, corrupt, of another
        format, or made for another input encoding.
        """
        return cls.from_arrays(read_npz(path), path)

    @classmethod
    def from_arrays(
        cls, arrays: Mapping[str, npt.NDArray[Any]], path: str | Path, inputs: int = INPUTS
    ) -> Network:
        """A network from a weights file's arrays; ``path`` names the file in errors.
        ``inputs`` is the input count the file must have (the pruning network's is
        :data:`~nard.engine.encoding.RAW_INPUTS`)."""
        problem = _check_arrays(arrays, inputs)
        if problem:
            raise WeightsError(
                f"network weights {str(path)!r} are corrupt or incompatible ({problem}); "
                + _RESTORE.format(path=path)
            )
        layers = len(np.asarray(arrays["hidden"]).reshape(-1)) + 1
        return cls.from_layers(
            [arrays[f"w{i}"] for i in range(1, layers + 1)],
            [arrays[f"b{i}"] for i in range(1, layers + 1)],
        )


def _stacked(weights: Sequence[npt.ArrayLike], biases: Sequence[npt.ArrayLike]) -> list[FloatArray]:
    """Each layer's weights with its biases as a last row, float64, shapes checked."""
    if len(weights) != len(biases) or len(weights) < 2:
        raise ValueError(f"{len(weights)} weight arrays and {len(biases)} biases: need 2 or more")
    layers = []
    fan_in: int | None = None
    for i, (w, b) in enumerate(zip(weights, biases, strict=True), start=1):
        w, b = np.asarray(w, dtype=np.float64), np.asarray(b, dtype=np.float64)
        if w.ndim != 2 or b.shape != (w.shape[1],) or (fan_in is not None and w.shape[0] != fan_in):
            raise ValueError(f"inconsistent shapes: w{i} {w.shape}, b{i} {b.shape}")
        fan_in = w.shape[1]
        layers.append(np.concatenate([w, b[None, :]]))
    if fan_in != NUM_OUTPUTS:
        raise ValueError(f"the output layer has {fan_in} outputs, expected {NUM_OUTPUTS}")
    return layers


class Networks:
    """The engine's networks by class of position (see the module docstring).

    ``race`` and ``crashed`` may be ``None``: the contact net then evaluates
    those positions too. ``crashed`` is for contact positions where a side has
    crashed (:func:`~nard.engine.encoding.crashed_flags`). ``pruning`` (optional)
    is not a class of positions: a small network on the raw inputs
    (:data:`~nard.engine.encoding.RAW_INPUTS`) that ranks a search's replies for
    :class:`~nard.engine.search.Pruning` (:class:`PruningEvaluator`), stored in
    the bundle as ``pruning``. ``cube_contact`` and ``cube_crashed`` (optional) are
    the cube networks (:meth:`for_cube`).

    >>> nets = Networks(Network.random(hidden=4, seed=1), Network.random(hidden=3, seed=2))
    >>> nets.race is not None and nets.race.hidden
    3
    >>> list(nets.by_class())
    ['contact', 'race']
    """

    def __init__(
        self,
        contact: Network,
        race: Network | None = None,
        crashed: Network | None = None,
        pruning: Network | None = None,
        cube_contact: Network | None = None,
        cube_crashed: Network | None = None,
    ) -> None:
        self.contact = contact
        self.race = race
        self.crashed = crashed
        if cube_crashed is not None and cube_contact is None:
            raise ValueError("a cube crashed network needs a cube contact network beside it")
        self.cube_contact = cube_contact
        self.cube_crashed = cube_crashed
        if pruning is not None and pruning.inputs != RAW_INPUTS:
            raise ValueError(
                f"a pruning network takes the {RAW_INPUTS} raw inputs, not {pruning.inputs}"
            )
        self.pruning = pruning

    def __repr__(self) -> str:
        shown = f"Networks(contact={self.contact!r}, race={self.race!r}"
        if self.crashed is not None:
            shown += f", crashed={self.crashed!r}"
        if self.pruning is not None:
            shown += f", pruning={self.pruning!r}"
        if self.cube_contact is not None:
            shown += f", cube_contact={self.cube_contact!r}"
        if self.cube_crashed is not None:
            shown += f", cube_crashed={self.cube_crashed!r}"
        return shown + ")"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Networks):
            return NotImplemented
        return (
            self.by_class() == other.by_class()
            and self.pruning == other.pruning
            and self.cube_contact == other.cube_contact
            and self.cube_crashed == other.cube_crashed
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def by_class(self) -> dict[str, Network]:
        """The networks present, by class name, in :data:`NET_CLASSES` order."""
        nets = {"contact": self.contact, "race": self.race, "crashed": self.crashed}
        return {name: net for name, net in nets.items() if net is not None}

    def for_cube(self) -> Networks:
        """The networks the cube analysis reads: the cube networks in place of the
        contact and crashed ones, the race network as it is; without cube networks,
        these networks themselves.

        >>> nets = Networks(Network.random(hidden=4, seed=1))
        >>> nets.for_cube() is nets
        True
        >>> cubed = Networks(nets.contact, cube_contact=Network.random(hidden=3, seed=2))
        >>> cubed.for_cube().contact.hidden, cubed.for_cube().crashed is None
        (3, True)
        """
        if self.cube_contact is None:
            return self
        return Networks(self.cube_contact, self.race, self.cube_crashed)

    def to_arrays(self) -> dict[str, npt.NDArray[Any]]:
        """The arrays of a bundle file."""
        nets = self.by_class()
        if self.pruning is not None:
            nets[PRUNING] = self.pruning
        for name, net in zip(CUBE_CLASSES, (self.cube_contact, self.cube_crashed), strict=True):
            if net is not None:
                nets[name] = net
        arrays: dict[str, npt.NDArray[Any]] = {
            "format": np.array(BUNDLE_FORMAT),
            "classes": np.array(list(nets)),
        }
        for name, net in nets.items():
            for key, value in net.to_arrays().items():
                arrays[f"{name}.{key}"] = value
        return arrays

    def save(self, path: str | Path) -> None:
        """Write a bundle file atomically (see :meth:`Network.save`)."""
        write_npz_atomic(path, self.to_arrays())

    @classmethod
    def load(cls, path: str | Path) -> Networks:
        """Read a bundle file, or a single network's file (as the contact net).

        Raises :class:`WeightsError` when the file is missing or corrupt.
        """
        return cls.from_arrays(read_npz(path), path)

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, npt.NDArray[Any]], path: str | Path) -> Networks:
        """The networks in a weights file's arrays; ``path`` names the file in errors."""
        tag = arrays.get("format")
        name = str(tag) if tag is not None and tag.dtype.kind == "U" and tag.shape == () else None
        if name in (FORMAT, DEEP_FORMAT):
            return cls(Network.from_arrays(arrays, path))
        problem = ""
        if name != BUNDLE_FORMAT:
            shown = None if tag is None else tag.tolist()
            problem = f"format {shown!r}, expected {BUNDLE_FORMAT!r} or {FORMAT!r}"
        elif "classes" not in arrays or arrays["classes"].dtype.kind != "U":
            problem = "no list of network classes"
        else:
            classes = [str(c) for c in arrays["classes"].reshape(-1)]
            known = {*NET_CLASSES, PRUNING, *CUBE_CLASSES}
            if "contact" not in classes or not set(classes) <= known:
                expected = [*NET_CLASSES, PRUNING, *CUBE_CLASSES]
                problem = f"network classes {classes!r}, expected some of {expected!r}"
        if problem:
            raise WeightsError(
                f"network weights {str(path)!r} are corrupt or incompatible ({problem}); "
                + _RESTORE.format(path=path)
            )
        nets = {}
        for name in classes:
            prefix = name + "."
            part = {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}
            try:
                inputs = RAW_INPUTS if name == PRUNING else INPUTS
                nets[name] = Network.from_arrays(part, path, inputs)
            except WeightsError as exc:
                raise WeightsError(f"{exc} (the {name} network)") from None
        if CUBE_CLASSES[1] in nets and CUBE_CLASSES[0] not in nets:
            raise WeightsError(
                f"network weights {str(path)!r} are corrupt or incompatible (a "
                f"{CUBE_CLASSES[1]} network without a {CUBE_CLASSES[0]} one); "
                + _RESTORE.format(path=path)
            )
        return cls(
            nets["contact"],
            nets.get("race"),
            nets.get("crashed"),
            nets.get(PRUNING),
            nets.get(CUBE_CLASSES[0]),
            nets.get(CUBE_CLASSES[1]),
        )


def read_npz(path: str | Path) -> dict[str, npt.NDArray[Any]]:
    """Every array of an ``.npz`` file; :class:`WeightsError` when missing or unreadable."""
    return read_arrays(path, WeightsError, "network weights", _RESTORE.format(path=path))


def write_npz_atomic(path: str | Path, arrays: Mapping[str, npt.NDArray[Any]]) -> None:
    """Write ``arrays`` as an uncompressed ``.npz`` at ``path`` via a temporary file
    in the same folder and a rename (atomic on POSIX and Windows)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            contents: dict[str, Any] = dict(arrays)
            np.savez(f, **contents)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _check_arrays(arrays: Mapping[str, npt.NDArray[Any]], expected_inputs: int = INPUTS) -> str:
    """What is wrong with a weights file's arrays, or '' when they are sound."""
    for name in ("format", "encoding_version", "inputs", "hidden"):
        if name not in arrays:
            return f"no array {name!r}"
    tag = arrays["format"]
    if tag.dtype.kind != "U" or tag.shape != () or str(tag) not in (FORMAT, DEEP_FORMAT):
        return f"format {tag.tolist()!r}, expected {FORMAT!r} or {DEEP_FORMAT!r}"
    deep = str(tag) == DEEP_FORMAT
    for name in ("encoding_version", "inputs"):
        if arrays[name].shape != () or arrays[name].dtype.kind not in "iu":
            return f"{name} is not an integer"
    hidden_array = arrays["hidden"]
    if hidden_array.dtype.kind not in "iu" or hidden_array.ndim != (1 if deep else 0):
        return "hidden is not " + ("a list of layer sizes" if deep else "an integer")
    sizes = [int(v) for v in hidden_array.reshape(-1)]
    if (deep and len(sizes) < 2) or min(sizes, default=0) < 1:
        return f"hidden layer sizes {sizes}"
    version = int(arrays["encoding_version"])
    if version != ENCODING_VERSION:
        return f"input encoding version {version}, this nard uses {ENCODING_VERSION}"
    inputs = int(arrays["inputs"])
    if inputs != expected_inputs:
        return f"{inputs} inputs, encoding version {ENCODING_VERSION} has {expected_inputs}"
    fans = [inputs, *sizes, NUM_OUTPUTS]
    shapes: dict[str, tuple[int, ...]] = {}
    for i, (fan_in, fan_out) in enumerate(itertools.pairwise(fans), start=1):
        shapes[f"w{i}"] = (fan_in, fan_out)
        shapes[f"b{i}"] = (fan_out,)
    for name, shape in shapes.items():
        if name not in arrays:
            return f"no array {name!r}"
        a = arrays[name]
        if a.shape != shape:
            return f"{name} has shape {a.shape}, expected {shape}"
        if a.dtype.kind != "f":
            return f"{name} has dtype {a.dtype}"
        if not np.isfinite(a).all():
            return f"{name} has non-finite values"
    return ""


# -- the evaluator ----------------------------------------------------------------------


def sanity_check(probs: FloatArray, x: npt.NDArray[np.float32]) -> FloatArray:
    """gnubg's consistency rules, in place on ``(n, 5)`` probabilities with inputs ``x``.

    Clamp to ``[0, 1]``; no gammon once the loser has borne off a checker;
    ``wg <= win``, ``lg <= 1 - win``; each backgammon at most its gammon; values
    under ``1e-4`` become 0. Returns ``probs``.
    """
    # Compiled (one pass, no temporaries); borne-off inputs above half a checker
    # mean that side has a checker off, so it cannot be gammoned.
    _kernels.sanity_into(probs, x, OFF_INPUT, OPPONENT_OFF_INPUT, _TINY)
    return probs


_ROUTES = 5
"""The kinds of :func:`nard.engine._kernels.route_into`."""
_Float32Weights = tuple[Any, ...]


def _float32(net: Network) -> _Float32Weights:
    """The parameters as the compiled forward pass takes them: float32, contiguous.
    One hidden layer: ``(w1, b1, w2 transposed, b2)``
    (:func:`~nard.engine._kernels.forward_into`'s); deeper: ``(w1, b1, the later
    layers' weights transposed, their biases)``, the last two tuples
    (:func:`~nard.engine._kernels.deep_forward_into`'s)."""
    if net.depth == 1:
        w1, b1, w2, b2 = net.parameters()
        return tuple(np.ascontiguousarray(p, dtype=np.float32) for p in (w1, b1, w2.T, b2))
    weights, biases = net.weights_and_biases()
    return (
        np.ascontiguousarray(weights[0], dtype=np.float32),
        np.ascontiguousarray(biases[0], dtype=np.float32),
        tuple(np.ascontiguousarray(w.T, dtype=np.float32) for w in weights[1:]),
        tuple(np.ascontiguousarray(b, dtype=np.float32) for b in biases[1:]),
    )


def _forward32(weights: _Float32Weights, x: npt.NDArray[np.float32]) -> FloatArray:
    """:meth:`Network.forward` in float32, compiled (:mod:`nard.engine._kernels`), as float64."""
    x = np.ascontiguousarray(x)
    if isinstance(weights[2], tuple):
        w1, b1, dense_wt, dense_b = weights
        out: FloatArray = np.empty((x.shape[0], dense_b[-1].shape[0]), dtype=np.float64)
        _kernels.deep_forward_into(x, w1, b1, dense_wt, dense_b, out)
        return out
    w1, b1, w2t, b2 = weights
    out = np.empty((x.shape[0], b2.shape[0]), dtype=np.float64)
    _kernels.forward_into(x, w1, b1, w2t, b2, out)
    return out


class NeuralEvaluator:
    """The engine's networks behind the ``Evaluator`` seam (see the module docstring).

    ``networks`` is a :class:`Networks` set or a single :class:`Network` (used for
    every class); ``bearoff`` the exact database for pure bear-offs (``None``:
    the nets evaluate those too). Finished games get their exact values
    (:func:`outcome_probabilities`). One forward pass per network per call,
    however many positions.

    >>> ev = NeuralEvaluator(Network.random(hidden=4))
    >>> ev.evaluate([Position.from_points({6: 15}, {})]).tolist()  # gammoned
    [[0.0, 0.0, 0.0, 1.0, 0.0]]
    >>> ev = NeuralEvaluator(Network.random(hidden=4), BearoffDatabase.load())
    >>> round(float(ev.evaluate([Position.from_points({1: 1}, {1: 1})])[0, 0]), 6)
    1.0
    """

    def __init__(
        self, networks: Network | Networks, bearoff: BearoffDatabase | None = None
    ) -> None:
        self.networks = networks if isinstance(networks, Networks) else Networks(networks)
        self.bearoff = bearoff
        # Inference runs in float32 (three times faster than float64 here, and
        # far inside the nets' accuracy) on a snapshot of the weights taken now:
        # a network trained further needs a new evaluator.
        self._contact32 = _float32(self.networks.contact)
        race, crashed = self.networks.race, self.networks.crashed
        self._race32 = _float32(race) if race is not None else None
        self._crashed32 = _float32(crashed) if crashed is not None else None
        self._for_cube: NeuralEvaluator | None = None

    def for_cube(self) -> NeuralEvaluator:
        """The evaluator the cube analysis reads: the cube networks
        (:meth:`Networks.for_cube`) with the same bear-off database, made once; this
        evaluator itself when there are none."""
        if self.networks.cube_contact is None:
            return self
        if self._for_cube is None:
            self._for_cube = NeuralEvaluator(self.networks.for_cube(), self.bearoff)
        return self._for_cube

    @property
    def network(self) -> Network:
        """The contact network."""
        return self.networks.contact

    def __repr__(self) -> str:
        return f"NeuralEvaluator({self.networks!r}, bearoff={self.bearoff!r})"

    @classmethod
    def load(cls, path: str | Path, bearoff: BearoffDatabase | None = None) -> NeuralEvaluator:
        """An evaluator with the networks stored at ``path`` (see :meth:`Networks.load`)
        and ``bearoff`` (default: the database shipped with nard)."""
        return cls(Networks.load(path), bearoff if bearoff is not None else BearoffDatabase.load())

    def evaluate(self, positions: Sequence[Position]) -> Probabilities:
        """The five probabilities of each position, side on roll, before it rolls."""
        return self.evaluate_boards(boards_of(positions))

    def evaluate_boards(self, boards: Boards) -> Probabilities:
        """:meth:`evaluate` of raw ``(n, 26)`` boards (``tuple(position)`` rows)."""
        n = boards.shape[0]
        boards = np.ascontiguousarray(boards, dtype=np.int64)
        x = encode_boards(boards)
        kinds = np.empty(n, dtype=np.int8)
        _kernels.route_into(
            boards,
            kinds,
            self._race32 is not None,
            self._crashed32 is not None,
            self.bearoff is not None,
        )
        counts = np.bincount(kinds, minlength=_ROUTES)
        probs = np.zeros((n, NUM_OUTPUTS), dtype=np.float64)
        for kind, net in (
            (_kernels.ROUTE_CONTACT, self._contact32),
            (_kernels.ROUTE_RACE, self._race32),
            (_kernels.ROUTE_CRASHED, self._crashed32),
        ):
            if net is None or not counts[kind]:
                continue
            if counts[kind] == n:
                probs = _forward32(net, x)
            else:
                rows = kinds == kind
                probs[rows] = _forward32(net, x[rows])
        sanity_check(probs, x)
        if counts[_kernels.ROUTE_BEAROFF] and self.bearoff is not None:
            rows = np.flatnonzero(kinds == _kernels.ROUTE_BEAROFF)
            probs[rows] = self.bearoff.probabilities_of_boards(boards[rows])
        # A side with no checker left has won: the game is over.
        if counts[_kernels.ROUTE_OVER]:
            fill_outcomes(probs, boards, np.flatnonzero(kinds == _kernels.ROUTE_OVER))
        return probs


def cube_evaluator(evaluator: Evaluator) -> Evaluator:
    """What a cube analysis reads with ``evaluator``: a neural evaluator's cube
    networks where its bundle has them (:meth:`NeuralEvaluator.for_cube`), else
    ``evaluator`` itself."""
    return evaluator.for_cube() if isinstance(evaluator, NeuralEvaluator) else evaluator


class PruningEvaluator:
    """A pruning network behind the ``Evaluator`` seam: raw inputs
    (:func:`~nard.engine.encoding.encode_raw_boards`, no features), one network
    for every position, exact values for finished games, no bear-off database.
    Cheap and rough: :class:`~nard.engine.search.Pruning` uses it only to rank
    one roll's replies before the full evaluator sees the best few.

    >>> net = Network.random(hidden=4, inputs=RAW_INPUTS, seed=1)
    >>> PruningEvaluator(net).evaluate([Position(), Position.from_points({6: 1}, {})]).shape
    (2, 5)
    """

    def __init__(self, network: Network) -> None:
        if network.inputs != RAW_INPUTS:
            raise ValueError(
                f"a pruning network takes the {RAW_INPUTS} raw inputs, not {network.inputs}"
            )
        self.network = network
        self._weights32 = _float32(network)

    def __repr__(self) -> str:
        return f"PruningEvaluator({self.network!r})"

    def evaluate(self, positions: Sequence[Position]) -> Probabilities:
        """The five probabilities of each position, side on roll, before it rolls."""
        return self.evaluate_boards(boards_of(positions))

    def evaluate_boards(self, boards: Boards) -> Probabilities:
        """:meth:`evaluate` of raw ``(n, 26)`` boards (``tuple(position)`` rows)."""
        boards = np.ascontiguousarray(boards, dtype=np.int64)
        x = encode_raw_boards(boards)
        probs = _forward32(self._weights32, x)
        sanity_check(probs, x)
        fill_outcomes(probs, boards, np.flatnonzero(_kernels.finished(boards)))
        return probs
