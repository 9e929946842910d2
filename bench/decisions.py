"""Benchmark: checker-play decisions judged by GNU Backgammon's deeper search.

A position benchmark, far less noisy than games: a fixed sample of positions
from nard's self-play, each with a seeded roll that leaves a choice, is put to
every player; the play each one picks is judged by gnubg's cubeless n-ply
evaluation of the resulting position (2-ply by default, which is much
stronger than any player here at 0-ply). For every player it prints the mean
equity it gives up per decision against the best of the plays the players
picked (x1000, "millipoints"), by class of position, and each player's
difference from the first one with a 95% confidence interval.

Classes: ``race`` (no contact), ``straggler`` (contact, and one side has 1-3
checkers in the other's home board or on the bar while the other side has
none back: the positions where nard was found biased), ``contact`` (the rest).

    python bench/decisions.py --players expert expert@PATH gnubg --positions 2000

gnubg is the judge of a benchmark, never a source of training targets.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt
from strength import (
    GNUBG,
    GnubgProcess,
    half_width,
    make_player,
    player_name,
)

from nard.core.dice import ALL_ROLLS
from nard.core.position import Position
from nard.engine.bearoff import is_bearoff
from nard.engine.encoding import race_flags
from nard.engine.engine import DEFAULT_WEIGHTS
from nard.engine.network import NeuralEvaluator
from nard.training.playout import play_games

T = TypeVar("T")
A = TypeVar("A")
R = TypeVar("R")

# gnubg evaluates one position ID per line, side on roll, cubeless at PLIES: its
# winning chance and equity.
_JUDGE_SCRIPT = r"""
import sys
import gnubg
ci = gnubg.cubeinfo(1, -1, 0, 0, (0, 0), 0, 0)
ctx = {'cubeful': 0, 'plies': PLIES, 'deterministic': 1, 'noise': 0.0}
print('NARD:ready', flush=True)
for line in sys.stdin:
    r = gnubg.evaluate(gnubg.positionfromid(line.strip()), ci, ctx)
    print('NARD:%r %r' % (r[0], r[5]), flush=True)
"""


class Judge:
    """gnubg's cubeless equity (and winning chance) of positions (side on roll) at
    ``plies``, cached."""

    def __init__(self, plies: int) -> None:
        if not Path(GNUBG).exists():
            sys.exit(f"decisions.py: GNU Backgammon not found at {GNUBG} (apt-get install gnubg)")
        self._gnubg = GnubgProcess(_JUDGE_SCRIPT.replace("PLIES", str(plies)), "decisions.py")
        self._cache: dict[str, tuple[float, float]] = {}

    def win_and_equity(self, position: Position) -> tuple[float, float]:
        """The side on roll's winning chance and cubeless equity."""
        if position.is_game_over():
            value = float(position.outcome())
            return float(value > 0), value
        key = position.position_id()
        if key not in self._cache:
            win, equity = self._gnubg.ask(key).split()
            self._cache[key] = float(win), float(equity)
        return self._cache[key]

    def equity(self, position: Position) -> float:
        """The side on roll's cubeless equity."""
        return self.win_and_equity(position)[1]


def _judge_chunk(args: tuple[list[str], int]) -> list[tuple[float, float]]:
    ids, plies = args
    judge = Judge(plies)
    return [judge.win_and_equity(Position.from_position_id(pid)) for pid in ids]


def spread(
    work: Callable[[tuple[list[T], A]], list[R]], items: Sequence[T], arg: A, jobs: int
) -> list[R]:
    """``work`` done on ``items`` in ``jobs`` processes, each given every ``jobs``-th item
    (so that each gets a share of every part of the sample) and ``arg``; the answers in
    the items' order. ``work`` takes ``(chunk, arg)`` and answers one result an item."""
    if not items:
        return []
    jobs = max(1, min(jobs, len(items)))
    chunks = [list(items[i::jobs]) for i in range(jobs)]
    with ProcessPoolExecutor(jobs) as pool:
        parts = list(pool.map(work, [(c, arg) for c in chunks]))
    out: list[R] = [None] * len(items)  # type: ignore[list-item]  # every slot filled below
    for j, part in enumerate(parts):
        out[j::jobs] = part
    return out


def judge_all(positions: Sequence[Position], plies: int, jobs: int) -> npt.NDArray[np.float64]:
    """gnubg's winning chance and cubeless equity of each position (side on roll) at
    ``plies``, an ``(n, 2)`` array, in ``jobs`` gnubg processes."""
    ids = [p.position_id() for p in positions]
    return np.array(spread(_judge_chunk, ids, plies, jobs), dtype=np.float64).reshape(-1, 2)


def classify(position: Position) -> str:
    """``race``, ``straggler`` or ``contact`` (module docstring)."""
    board = np.array([list(position)], dtype=np.int64)
    if bool(race_flags(board)[0]):
        return "race"
    mine_back = sum(max(position[p], 0) for p in range(19, 26))
    theirs_back = sum(max(-position[p], 0) for p in range(0, 7))
    if (1 <= mine_back <= 3 and theirs_back == 0) or (1 <= theirs_back <= 3 and mine_back == 0):
        return "straggler"
    return "contact"


def sample_decisions(count: int, seed: int) -> list[tuple[Position, tuple[int, int]]]:
    """``count`` (position, roll) pairs with at least two distinct plays, from self-play of
    the shipped networks (pure bear-offs, exact in the database, left out)."""
    rng = np.random.default_rng(seed)
    games = play_games(NeuralEvaluator.load(DEFAULT_WEIGHTS), max(20, count // 20), seed=seed)
    order = rng.permutation(len(games))
    out: list[tuple[Position, tuple[int, int]]] = []
    for i in order.tolist():
        position = Position(tuple(int(c) for c in games.boards[i]))
        if is_bearoff(position) or position == Position():
            continue
        roll = ALL_ROLLS[int(rng.integers(len(ALL_ROLLS)))]
        if len(position.legal_plays(roll)) < 2:
            continue
        out.append((position, roll))
        if len(out) == count:
            break
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", nargs="+", type=player_name, default=["expert", "gnubg"])
    parser.add_argument("--positions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--judge-plies", type=int, default=2)
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    decisions = sample_decisions(args.positions, args.seed)
    players = [make_player(name, args.seed) for name in args.players]
    judge = Judge(args.judge_plies)
    losses: dict[str, list[list[float]]] = defaultdict(list)  # class -> per decision
    for position, roll in decisions:
        values = []
        for player in players:
            play = player.choose_play(position, roll)
            assert play is not None
            values.append(-judge.equity(play.result))
        best = max(values)
        losses[classify(position)].append([best - v for v in values])
    secs = time.perf_counter() - t0
    print(
        f"{len(decisions)} decisions (seed {args.seed}), judged by gnubg {args.judge_plies}-ply "
        f"cubeless; equity given up per decision against the best play picked, x1000"
    )
    header = f"{'class':<10} {'count':>6} " + " ".join(f"{n[-24:]:>24}" for n in args.players)
    print(header)
    everything = [row for rows in losses.values() for row in rows]
    for name, rows in [*sorted(losses.items()), ("all", everything)]:
        data = np.array(rows)
        cells = " ".join(f"{1000 * data[:, j].mean():>24.1f}" for j in range(len(players)))
        print(f"{name:<10} {len(rows):>6} {cells}")
    data = np.array(everything)
    for j in range(1, len(players)):
        diff = data[:, j] - data[:, 0]
        half = half_width(diff.tolist())
        print(
            f"{args.players[j]} - {args.players[0]}: {1000 * diff.mean():+.1f} ± {1000 * half:.1f} "
            f"per decision; differs in {100 * float((diff != 0).mean()):.0f}% of decisions"
        )
    print(f"{secs:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
