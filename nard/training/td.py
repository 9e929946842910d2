"""TD(lambda) self-play training of a :class:`~nard.engine.network.Network`, TD-Gammon style.

One network plays both sides. At each turn the side on roll generates its
legal plays, evaluates every candidate result in one batch and takes the play
whose result is best for it at 0-ply (lowest cubeless equity for the opponent,
now on roll); the network's estimate of the position before the roll, ``V(s_t)``,
is then moved toward that of the chosen result seen from the mover,
``V(s_t+1)``, or toward the exact outcome (:meth:`Position.outcome`) when the
play ends the game. Positions are evaluated from the side on roll, so the
eligibility traces are kept in player 0's fixed frame: a player 1 turn's
gradient is flipped (win <-> loss, gammons exchanged) before it enters them.
With ``lam = 0`` the traces reduce to the current gradient (a cheaper path).

:func:`train` runs games to a total, resumable: the checkpoint (``.npz``: the
weights, which :meth:`Network.load` reads directly, plus games played, the
random state and the configuration) is written atomically every
``checkpoint_every`` games, and every ``benchmark_every`` games the network
plays ``benchmark_games`` games against pubeval with duplicate dice, the
figure appended to a JSON-lines log beside the checkpoint
(:func:`log_path`). All randomness comes from ``random.Random(seed)`` (dice)
and ``numpy.random.default_rng(seed)`` (initial weights): a run resumed from a
checkpoint ends exactly where the uninterrupted run does. ``nard train``
(:func:`nard.training.cli.run_train`) runs it from the command line.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as d:
...     summary = train(TrainConfig(hidden=4, seed=1), pathlib.Path(d) / "td.npz", games=2)
>>> summary.games
2
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from nard.core.errors import NardError
from nard.core.position import Position
from nard.engine.encoding import OPPONENT_OFF_INPUT, encode, swap_sides
from nard.engine.evaluator import NUM_OUTPUTS, outcome_probabilities
from nard.engine.network import Network, NeuralEvaluator, read_npz, write_npz_atomic
from nard.engine.player import EvaluatorPlayer, play_game
from nard.engine.pubeval import PubevalPlayer

__all__ = [
    "CHECKPOINT_FORMAT",
    "BenchmarkResult",
    "TDTrainer",
    "TrainConfig",
    "TrainProgress",
    "TrainSummary",
    "TrainingError",
    "benchmark_vs_pubeval",
    "load_checkpoint",
    "log_path",
    "train",
]

CHECKPOINT_FORMAT = "nard-td-checkpoint-1"
"""The tag of a training checkpoint's extra arrays."""

FloatArray = npt.NDArray[np.float64]

_ALL_OFF = 1.0 - 0.5 / 15
"""A borne-off input above this: all 15 checkers are off."""

# Seeing a player 1 evaluation from player 0: v0 = _SIGN * v1[_PERM] + _OFFSET.
_PERM = np.array([0, 3, 4, 1, 2])
_SIGN = np.array([-1.0, 1.0, 1.0, 1.0, 1.0])
# Cubeless equity up to a constant: 2 win + wg + wbg - lg - lbg.
_EQUITY = np.array([2.0, 1.0, 1.0, -1.0, -1.0])


class TrainingError(NardError):
    """A checkpoint that cannot be resumed with the given configuration."""


@dataclass(frozen=True)
class TrainConfig:
    """The settings of a training run.

    ``hidden``, ``seed`` and ``init_scale`` shape a new network and are fixed
    once a checkpoint exists; the others may change between sessions
    (a lower ``alpha`` later on, say).
    """

    hidden: int = 80
    """Hidden units of a new network."""
    alpha: float = 0.1
    """Learning rate."""
    lam: float = 0.7
    """TD(lambda)'s trace decay; 0 gives TD(0)."""
    seed: int = 0
    """Seed of the dice and of the initial weights."""
    init_scale: float = 0.1
    """Initial weights are uniform in ``[-init_scale, init_scale]``."""
    checkpoint_every: int = 1000
    """Games between checkpoints (one is always written at the end)."""
    benchmark_every: int = 10_000
    """Games between benchmark figures (0: none)."""
    benchmark_games: int = 1000
    """Games per benchmark figure, played in duplicate-dice pairs."""
    benchmark_seed: int = 20_000
    """Dice seed of the benchmark, the same every time so that figures compare."""

    def __post_init__(self) -> None:
        if self.hidden < 1:
            raise ValueError(f"hidden must be positive, not {self.hidden!r}")
        if not 0.0 <= self.lam <= 1.0:
            raise ValueError(f"lam must be in [0, 1], not {self.lam!r}")
        if not self.alpha > 0.0:
            raise ValueError(f"alpha must be positive, not {self.alpha!r}")
        if self.checkpoint_every < 1:
            raise ValueError(f"checkpoint_every must be positive, not {self.checkpoint_every!r}")
        if self.benchmark_every < 0 or self.benchmark_games < 0:
            raise ValueError("benchmark_every and benchmark_games must not be negative")


@dataclass(frozen=True)
class BenchmarkResult:
    """Points per game of the network against pubeval, with a 95% half-width."""

    games: int
    ppg: float
    ci95: float


@dataclass(frozen=True)
class TrainProgress:
    """What :func:`train` reports to its ``progress`` callback after each game."""

    games: int
    """Games played in all, this session and earlier ones."""
    target: int
    """The total being trained to."""
    session_games: int
    seconds: float
    """Seconds of this session so far."""
    games_per_second: float
    """Training speed of this session (benchmarks excluded)."""
    benchmark: BenchmarkResult | None
    """The figure measured after this game, if one was."""


@dataclass(frozen=True)
class TrainSummary:
    """The result of :func:`train`."""

    games: int
    session_games: int
    seconds: float
    training_seconds: float
    plies: int
    """Turns played in this session's training games."""

    @property
    def games_per_second(self) -> float:
        """Self-play training games per second (benchmarks and checkpoints excluded)."""
        return self.session_games / self.training_seconds if self.training_seconds else 0.0


class TDTrainer:
    """Plays self-play games with ``network``, updating it in place after every turn."""

    def __init__(self, network: Network, alpha: float, lam: float, rng: random.Random) -> None:
        self.network = network
        self.alpha = alpha
        self.lam = lam
        self.rng = rng
        self.plies = 0

    def _roll(self) -> tuple[int, int]:
        r = self.rng
        return (r.randint(1, 6), r.randint(1, 6))

    def play_game(self, start: Position | None = None) -> int:
        """Play one game to the end, learning; the points won by the side first on roll.

        From ``start`` (default: the starting position, whose first roll is
        never a double, as an opening roll) with dice from the trainer's rng.
        """
        net = self.network
        alpha, lam = self.alpha, self.lam
        position = Position() if start is None else start
        roll = self._roll()
        while start is None and roll[0] == roll[1]:
            roll = self._roll()
        if position.outcome():
            return int(position.outcome())
        # Inputs and hidden activations with a trailing 1: the biases' "input".
        xa = np.ones(net.inputs + 1)
        xa[:-1] = encode([position])[0]
        ha = np.ones(net.hidden + 1)
        flipped = False  # is player 1 on roll?
        traces: tuple[FloatArray, FloatArray] | None = None
        if lam > 0.0:
            traces = (
                np.zeros((NUM_OUTPUTS, *net.layer1.shape)),
                np.zeros((NUM_OUTPUTS, *net.layer2.shape)),
            )
        while True:
            y, h, g, d = net.output_deltas(xa[:-1])
            ha[:-1] = h
            target, next_position, next_x, finished = self._choose(position, roll, xa[:-1])
            delta = target - y  # in the mover's frame
            if traces is None:
                # TD(0): sum over k of delta_k * grad y_k, in closed form.
                net.layer1 += np.outer(xa, alpha * (delta @ d))
                net.layer2 += np.outer(ha, alpha * (delta * g))
            else:
                self._trace_step(traces, xa, ha, g, d, delta, flipped)
            self.plies += 1
            if finished:
                result = next_position.outcome()  # seen from the loser, on roll
                return int(result if flipped else -result)
            position = next_position
            xa[:-1] = next_x
            flipped = not flipped
            roll = self._roll()

    def _choose(
        self, position: Position, roll: tuple[int, int], x: FloatArray
    ) -> tuple[FloatArray, Position, npt.NDArray[np.float32], bool]:
        """(target in the mover's frame, next position, its inputs, whether the game ended)."""
        net = self.network
        plays = position.legal_plays(roll)
        if not plays:
            next_x = swap_sides(x[None, :].astype(np.float32))
            return _flip(net.forward(next_x)[0]), position.flip(), next_x[0], False
        results = [p.result for p in plays]
        xs = encode(results)
        ys = net.forward(xs)
        # In a result the mover is the opponent: all its checkers off, it has just won.
        done = np.flatnonzero(xs[:, OPPONENT_OFF_INPUT] > _ALL_OFF)
        for i in done:
            exact = outcome_probabilities(results[i])
            if exact is not None:
                ys[i] = exact
        if len(done):
            # Winning now beats any estimate of going on (a net can overrate that).
            best = int(done[np.argmin(ys[done] @ _EQUITY)])
        else:
            best = int(np.argmin(ys @ _EQUITY))
        return _flip(ys[best]), results[best], xs[best], len(done) > 0

    def _trace_step(
        self,
        traces: tuple[FloatArray, FloatArray],
        xa: FloatArray,
        ha: FloatArray,
        g: FloatArray,
        d: FloatArray,
        delta: FloatArray,
        flipped: bool,
    ) -> None:
        e1, e2 = traces
        lam, alpha = self.lam, self.alpha
        # Gradient of output k: outer(xa, d[k]) for layer 1, outer(ha, m[k]) for layer 2.
        m = np.diag(g)
        if flipped:  # into player 0's frame
            d = _SIGN[:, None] * d[_PERM]
            m = _SIGN[:, None] * m[_PERM]
            delta = _SIGN * delta[_PERM]
        nz = np.flatnonzero(xa)  # the inputs are sparse
        e1 *= lam
        e1[:, nz, :] += xa[nz][None, :, None] * d[:, None, :]
        e2 *= lam
        e2 += ha[None, :, None] * m[:, None, :]
        net = self.network
        net.layer1 += ((alpha * delta) @ e1.reshape(NUM_OUTPUTS, -1)).reshape(net.layer1.shape)
        net.layer2 += ((alpha * delta) @ e2.reshape(NUM_OUTPUTS, -1)).reshape(net.layer2.shape)


def _flip(p: FloatArray) -> FloatArray:
    """flip_probabilities for one row, cheaply."""
    out: FloatArray = _SIGN * p[_PERM]
    out[0] += 1.0
    return out


# -- benchmark --------------------------------------------------------------------------


class _Dice:
    """Seeded dice with the interface :func:`play_game` needs (the engine does not
    import nard.match)."""

    def __init__(self, seed: int) -> None:
        self._rng = random.Random(seed)

    def roll(self) -> tuple[int, int]:
        return (self._rng.randint(1, 6), self._rng.randint(1, 6))

    def opening_roll(self) -> tuple[int, int]:
        return self.roll()


def benchmark_vs_pubeval(network: Network, games: int, seed: int) -> BenchmarkResult:
    """Cubeless points per game of ``network`` at 0-ply against pubeval.

    ``games`` is rounded up to an even number: pairs of games with the same
    dice, sides swapped. The 95% half-width comes from the spread of the pair
    means.
    """
    pairs = (games + 1) // 2
    if pairs == 0:
        return BenchmarkResult(0, 0.0, 0.0)
    nard_player = EvaluatorPlayer(NeuralEvaluator(network), name="nard")
    pubeval = PubevalPlayer()
    means = []
    for i in range(pairs):
        s = seed * 1_000_003 + i
        a = play_game(nard_player, pubeval, _Dice(s))
        b = -play_game(pubeval, nard_player, _Dice(s))
        means.append((a + b) / 2.0)
    mu = sum(means) / pairs
    var = sum((m - mu) ** 2 for m in means) / (pairs - 1) if pairs > 1 else 0.0
    return BenchmarkResult(2 * pairs, mu, 1.96 * math.sqrt(var / pairs))


# -- checkpoints and the training loop ----------------------------------------------------


def log_path(checkpoint_path: str | Path) -> Path:
    """The JSON-lines benchmark log beside a checkpoint: ``td.npz`` -> ``td.log.jsonl``."""
    p = Path(checkpoint_path)
    return p.with_name(p.stem + ".log.jsonl")


def _save_checkpoint(
    path: Path, network: Network, games: int, rng: random.Random, config: TrainConfig
) -> None:
    version, internal, gauss = rng.getstate()
    arrays = network.to_arrays()
    arrays.update(
        checkpoint_format=np.array(CHECKPOINT_FORMAT),
        games=np.array(games, dtype=np.int64),
        rng_version=np.array(version, dtype=np.int64),
        rng_state=np.array(internal, dtype=np.int64),
        rng_gauss=np.array(math.nan if gauss is None else gauss, dtype=np.float64),
        config=np.array(json.dumps(asdict(config), sort_keys=True)),
    )
    write_npz_atomic(path, arrays)


def load_checkpoint(path: str | Path) -> tuple[Network, int, random.Random, dict[str, Any]]:
    """``(network, games played, dice rng, configuration as saved)`` from a checkpoint.

    Raises :class:`~nard.engine.network.WeightsError` when the file is missing
    or corrupt, :class:`TrainingError` when it is weights without training state.
    """
    arrays = read_npz(path)
    network = Network.from_arrays(arrays, path)
    names = ("checkpoint_format", "games", "rng_version", "rng_state", "rng_gauss", "config")
    missing = [n for n in names if n not in arrays]
    if missing or str(arrays["checkpoint_format"]) != CHECKPOINT_FORMAT:
        raise TrainingError(
            f"{str(path)!r} holds network weights but no {CHECKPOINT_FORMAT} training state "
            f"(missing {missing!r}); start from another checkpoint path"
        )
    rng = random.Random()
    gauss = float(arrays["rng_gauss"])
    rng.setstate(
        (
            int(arrays["rng_version"]),
            tuple(int(v) for v in arrays["rng_state"]),
            None if math.isnan(gauss) else gauss,
        )
    )
    saved: dict[str, Any] = json.loads(str(arrays["config"]))
    return network, int(arrays["games"]), rng, saved


def _read_log(path: Path, up_to: int) -> list[str]:
    """The log's lines for games <= ``up_to`` (later ones were never checkpointed)."""
    if not path.exists():
        return []
    kept = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and json.loads(line)["games"] <= up_to:
            kept.append(line)
    return kept


def _write_text_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def train(
    config: TrainConfig,
    checkpoint_path: str | Path,
    games: int,
    progress: Callable[[TrainProgress], None] | None = None,
) -> TrainSummary:
    """Train by self-play until ``games`` games have been played in all.

    Resumes from ``checkpoint_path`` when it exists (its network must have
    ``config.hidden`` hidden units), else starts a new network from
    ``config.seed``. See the module docstring for checkpoints and the log.
    """
    path = Path(checkpoint_path)
    log = log_path(path)
    if path.exists():
        network, played, rng, saved = load_checkpoint(path)
        if network.hidden != config.hidden:
            raise TrainingError(
                f"checkpoint {str(path)!r} has {network.hidden} hidden units, "
                f"the configuration {config.hidden}; use the same --hidden or another path"
            )
        if saved.get("seed") != config.seed:
            raise TrainingError(
                f"checkpoint {str(path)!r} was started with seed {saved.get('seed')!r}, "
                f"not {config.seed!r}; use the same seed or another path"
            )
    else:
        network = Network.random(config.hidden, seed=config.seed, scale=config.init_scale)
        played = 0
        rng = random.Random(config.seed)
    # Drop figures logged after the checkpoint: this session will measure them again.
    lines = _read_log(path=log, up_to=played)
    if log.exists():
        _write_text_atomic(log, "".join(line + "\n" for line in lines))
    trainer = TDTrainer(network, config.alpha, config.lam, rng)
    start = time.perf_counter()
    training_seconds = 0.0
    session = 0
    while played < games:
        t = time.perf_counter()
        trainer.play_game()
        training_seconds += time.perf_counter() - t
        played += 1
        session += 1
        figure = None
        if config.benchmark_every and played % config.benchmark_every == 0:
            figure = benchmark_vs_pubeval(network, config.benchmark_games, config.benchmark_seed)
            entry = {
                "games": played,
                "opponent": "pubeval",
                "ppg": round(figure.ppg, 6),
                "ci95": round(figure.ci95, 6),
                "benchmark_games": figure.games,
                "alpha": config.alpha,
                "lam": config.lam,
                "hidden": network.hidden,
                "games_per_second": round(session / training_seconds, 3),
                "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            }
            log.parent.mkdir(parents=True, exist_ok=True)
            with log.open("a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")
        if played % config.checkpoint_every == 0 or played == games:
            _save_checkpoint(path, network, played, rng, config)
        if progress is not None:
            elapsed = time.perf_counter() - start
            progress(
                TrainProgress(
                    played,
                    games,
                    session,
                    elapsed,
                    session / training_seconds if training_seconds else 0.0,
                    figure,
                )
            )
    return TrainSummary(
        played, session, time.perf_counter() - start, training_seconds, trainer.plies
    )
