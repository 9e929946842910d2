"""Benchmark: legal-play generation in nard against two peers, timed in one run.

Every engine generates the legal plays of the same fixed set of positions and
dice (sampled from seeded random games played by nard itself):

- nard ``Position.legal_plays`` (the public API: ``Play`` objects, one per
  distinct resulting position) and nard's raw generator
  ``nard.core._movegen.generate``, to show the cost of the wrapping;
- bgsage ``bgsage.board.possible_moves`` (C++ core; distinct resulting boards);
- gym-backgammon ``Backgammon.get_valid_plays`` (pure Python; move *sequences*,
  not de-duplicated by resulting position: timed as it is meant to be used).

Each position is converted to every peer's own representation before timing,
and the conversions are checked: each peer must find the same resulting
positions as nard (for gym-backgammon only after de-duplicating its sequences
by resulting board, which happens in the check, never in the timed loop).

Run from the repository root::

    bash bench/setup_peers.sh
    bench/.venv-peers/bin/python bench/movegen.py [--positions N] [--seed S] [--repeat R] [--json]

Without the peers installed, only nard is timed.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import platform
import random
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

from nard import Dice, Position
from nard.core import _movegen

TARGET = "nard faster than every pure-Python peer and at most 2x bgsage"
TARGET_BGSAGE_RATIO = 2.0

# Share of each kind of position in the sample (contact takes the rounding).
MIX = {"opening": 0.10, "contact": 0.35, "bar": 0.20, "race": 0.15, "bear-off": 0.20}
OPENING_PLIES = 4
"""The first two moves of each side count as openings."""

Board = tuple[int, ...]


# -- the fixed position set ---------------------------------------------------
@dataclass(frozen=True, slots=True)
class Case:
    """One position with the roll to play in it."""

    category: str
    position: Position
    dice: Dice


def category_of(pos: Position, ply: int) -> str:
    b = pos.board
    if ply < OPENING_PLIES:
        return "opening"
    if b[25] > 0:
        return "bar"
    if all(c <= 0 for c in b[7:26]):
        return "bear-off"
    return "race" if pos.is_race() else "contact"


def sample_cases(n: int, seed: int) -> list[Case]:
    """``n`` positions and rolls from random games (uniform among legal plays), mixed per MIX."""
    rng = random.Random(seed)
    quota = {k: int(n * share) for k, share in MIX.items()}
    quota["contact"] += n - sum(quota.values())
    pools: dict[str, list[Case]] = {k: [] for k in MIX}
    # Gather from enough whole games that every pool can be sampled, not just filled
    # by its first games: twice the quota of candidates.
    while any(len(pools[k]) < 2 * quota[k] for k in MIX):
        pos = Position()
        ply = 0
        while not pos.is_game_over():
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            category = category_of(pos, ply)
            pools[category].append(Case(category, pos, dice))
            # Sorted, so the set does not change when nard changes the order of its plays.
            results = sorted(p.result.board for p in pos.legal_plays(dice))
            pos = Position(rng.choice(results)) if results else pos.flip()
            ply += 1
    cases = [c for k in MIX for c in rng.sample(pools[k], quota[k])]
    rng.shuffle(cases)
    return cases


# -- engines ------------------------------------------------------------------
@dataclass(slots=True)
class Engine:
    """One move generator, ready to run over every case (already converted)."""

    name: str
    kind: str
    note: str
    run: Callable[[], object]
    best_s: float = float("inf")
    times_s: list[float] = field(default_factory=list)


def nard_engine(cases: Sequence[Case]) -> Engine:
    work = [(c.position, c.dice) for c in cases]

    def run() -> None:
        for pos, dice in work:
            pos.legal_plays(dice)

    return Engine("nard legal_plays", "pure Python", "Play objects, distinct positions", run)


def nard_raw_engine(cases: Sequence[Case]) -> Engine:
    work = [(c.position.board, c.dice[0], c.dice[1]) for c in cases]
    generate = _movegen.generate

    def run() -> None:
        for board, d1, d2 in work:
            generate(board, d1, d2, tuple, tuple)

    return Engine("nard _movegen.generate", "pure Python", "raw boards, distinct", run)


def to_bgsage(board: Board) -> list[int]:
    """bgsage: nard's layout, but the opponent's bar (index 0) is a positive count."""
    b = list(board)
    b[0] = -b[0]
    return b


def from_bgsage(board: Sequence[int]) -> Board:
    b = list(board)
    b[0] = -b[0]
    return tuple(b)


def bgsage_engine(cases: Sequence[Case]) -> Engine:
    from bgsage.board import possible_moves

    work = [(to_bgsage(c.position.board), c.dice[0], c.dice[1]) for c in cases]

    def run() -> None:
        for board, d1, d2 in work:
            possible_moves(board, d1, d2)

    return Engine("bgsage possible_moves", "C++ core", "distinct boards", run)


def bgsage_plays(board: Board, d1: int, d2: int) -> list[Board]:
    from bgsage.board import possible_moves

    bg = to_bgsage(board)
    results = [list(r) for r in possible_moves(bg, d1, d2)]
    if results == [bg]:
        return []  # bgsage returns the unchanged board when nothing can be played
    return [from_bgsage(r) for r in results]


def _import_gym_backgammon() -> Any:
    # gym prints an "unmaintained" notice on import; keep the report readable.
    with (
        contextlib.redirect_stderr(io.StringIO()),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        from gym_backgammon.envs import backgammon
    return backgammon


def to_gym(board: Board) -> Any:
    """A gym-backgammon game in ``board``: nard's side on roll is WHITE.

    WHITE moves from index 23 down to 0, so its point p is index p - 1 (and
    BLACK's point p is index 24 - p, the same square); WHITE's dice are negative.
    """
    bg = _import_gym_backgammon()
    game = bg.Backgammon()
    game.board = [
        (c, bg.WHITE) if c > 0 else (-c, bg.BLACK) if c < 0 else (0, None) for c in board[1:25]
    ]
    game.bar = [board[25], -board[0]]
    game.off = [
        15 - sum(c for c in board if c > 0),
        15 + sum(c for c in board if c < 0),
    ]
    game.players_positions = game.get_players_positions()
    game.state = game.save_state()
    return game


def from_gym(game: Any) -> Board:
    bg = _import_gym_backgammon()
    b = [0] * 26
    for i, (count, player) in enumerate(game.board):
        if player == bg.WHITE:
            b[i + 1] = count
        elif player == bg.BLACK:
            b[i + 1] = -count
    b[25] = game.bar[bg.WHITE]
    b[0] = -game.bar[bg.BLACK]
    return tuple(b)


def gym_roll(dice: Dice) -> tuple[int, int]:
    return (-dice[0], -dice[1])


def gym_engine(cases: Sequence[Case]) -> Engine:
    bg = _import_gym_backgammon()
    white = bg.WHITE
    work = [(to_gym(c.position.board), gym_roll(c.dice)) for c in cases]

    def run() -> None:
        for game, roll in work:
            game.get_valid_plays(white, roll)

    return Engine(
        "gym-backgammon get_valid_plays",
        "pure Python",
        "move sequences, NOT de-duplicated by position",
        run,
    )


def gym_plays(board: Board, dice: Dice) -> tuple[list[Board], int, int]:
    """gym-backgammon's resulting boards: (boards, sequences, sequences that crashed)."""
    bg = _import_gym_backgammon()
    game = to_gym(board)
    sequences = game.get_valid_plays(bg.WHITE, gym_roll(dice))
    if from_gym(game) != board:
        raise RuntimeError(f"gym-backgammon changed the board it generated plays for: {board}")
    results: list[Board] = []
    crashed = 0
    for seq in sequences:
        after = bg.Backgammon()
        after.restore_state(game.save_state())
        try:
            # execute_play checks the checker counts and draws the board when they are off.
            with contextlib.redirect_stdout(io.StringIO()):
                after.execute_play(bg.WHITE, seq)
        except (AssertionError, IndexError, TypeError):
            crashed += 1
            continue
        results.append(from_gym(after))
    return results, len(sequences), crashed


def load_peers(cases: Sequence[Case]) -> tuple[list[Engine], dict[str, str]]:
    """The peers that are installed, and why each missing one is missing."""
    engines: list[Engine] = []
    missing: dict[str, str] = {}
    makers: list[tuple[str, Callable[[Sequence[Case]], Engine]]] = [
        ("bgsage", bgsage_engine),
        ("gym-backgammon", gym_engine),
    ]
    for name, make in makers:
        try:
            engines.append(make(cases))
        except ImportError as e:
            missing[name] = f"not installed ({e}); run: bash bench/setup_peers.sh"
    return engines, missing


def version_of(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


# -- conversion checks -------------------------------------------------------
def describe(before: Board, after: Board) -> str:
    """What a play did, as the checkers it took from and put on points (for reports)."""
    taken = [f"{p}" + (f"x{before[p] - after[p]}" if before[p] - after[p] > 1 else "")
             for p in range(25, 0, -1) if after[p] < before[p] and before[p] > 0]  # fmt: skip
    put = [f"{p}" + (f"x{after[p] - max(before[p], 0)}" if after[p] - max(before[p], 0) > 1 else "")
           for p in range(24, 0, -1) if after[p] > max(before[p], 0)]  # fmt: skip
    off = sum(c for c in before if c > 0) - sum(c for c in after if c > 0)
    hits = before[0] - after[0]
    text = f"from {','.join(taken) or '-'} to {','.join(put) or '-'}"
    if off:
        text += f" off {off}"
    if hits:
        text += f" hits {hits}"
    return text


@dataclass(slots=True)
class Disagreement:
    category: str
    position_id: str
    dice: Dice
    nard: int
    peer: int
    peer_sequences: int | None
    only_nard: list[str]
    only_peer: list[str]


@dataclass(slots=True)
class Check:
    peer: str
    checked: int = 0
    count_agree: int = 0
    set_agree: int = 0
    duplicates: int = 0
    crashed_sequences: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)


def check_peer(
    peer: str,
    cases: Sequence[Case],
    plays: Callable[[Case], tuple[list[Board], int | None, int]],
) -> Check:
    """Compare a peer's resulting positions with nard's, case by case."""
    check = Check(peer)
    for case in cases:
        board = case.position.board
        # Through the public API: play.result is seen from the opponent, peers' from the mover.
        nard_moves = {p.result.flip().board for p in case.position.legal_plays(case.dice)}
        peer_boards, sequences, crashed = plays(case)
        peer_set = set(peer_boards)
        check.checked += 1
        check.crashed_sequences += crashed
        if sequences is None and len(peer_boards) != len(peer_set):
            check.duplicates += 1  # a peer that promises distinct boards repeated one
        if len(peer_set) == len(nard_moves):
            check.count_agree += 1
        if peer_set == nard_moves:
            check.set_agree += 1
            continue
        check.disagreements.append(
            Disagreement(
                case.category,
                case.position.position_id(),
                case.dice,
                len(nard_moves),
                len(peer_set),
                sequences,
                sorted(describe(board, r) for r in nard_moves - peer_set),
                sorted(describe(board, r) for r in peer_set - nard_moves),
            )
        )
    return check


def run_checks(cases: Sequence[Case], peers: Sequence[str]) -> list[Check]:
    checks: list[Check] = []
    if "bgsage" in peers:

        def bg(case: Case) -> tuple[list[Board], int | None, int]:
            return bgsage_plays(case.position.board, *case.dice), None, 0

        checks.append(check_peer("bgsage", cases, bg))
    if "gym-backgammon" in peers:

        def gym(case: Case) -> tuple[list[Board], int | None, int]:
            return gym_plays(case.position.board, case.dice)

        checks.append(check_peer("gym-backgammon", cases, gym))
    return checks


# -- timing ------------------------------------------------------------------
def time_engines(engines: Sequence[Engine], repeat: int) -> None:
    """Best of ``repeat`` passes for each engine, interleaved so drift hits all alike.

    The garbage collector is off during a pass, as in :mod:`timeit`.
    """
    for _ in range(repeat):
        for engine in engines:
            gc.collect()
            gc.disable()
            try:
                t0 = time.perf_counter()
                engine.run()
                elapsed = time.perf_counter() - t0
            finally:
                gc.enable()
            engine.times_s.append(elapsed)
            engine.best_s = min(engine.best_s, elapsed)


# -- report ------------------------------------------------------------------
def build_report(
    args: argparse.Namespace,
    cases: Sequence[Case],
    engines: Sequence[Engine],
    missing: dict[str, str],
    checks: Sequence[Check],
) -> dict[str, Any]:
    n = len(cases)
    us = {e.name: e.best_s / n * 1e6 for e in engines}
    nard_us = us["nard legal_plays"]
    raw_us = us["nard _movegen.generate"]
    peers = [e for e in engines if not e.name.startswith("nard ")]
    ratios = {
        e.name.split()[0]: {"legal_plays": nard_us / us[e.name], "raw": raw_us / us[e.name]}
        for e in peers
    }
    pure = [p for p in peers if p.kind == "pure Python"]
    met: bool | None = None
    if "bgsage" in ratios:
        met = ratios["bgsage"]["legal_plays"] <= TARGET_BGSAGE_RATIO and all(
            nard_us < us[p.name] for p in pure
        )
    plays = [len(c.position.legal_plays(c.dice)) for c in cases]
    return {
        "benchmark": "movegen",
        "positions": n,
        "seed": args.seed,
        "repeat": args.repeat,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "versions": {
            "nard": version_of("nard"),
            "bgsage": version_of("bgsage"),
            "gym-backgammon": version_of("gym-backgammon"),
        },
        "mix": dict(Counter(c.category for c in cases)),
        "doubles": sum(1 for c in cases if c.dice[0] == c.dice[1]),
        "no_legal_play": sum(1 for k in plays if k == 0),
        "mean_distinct_plays": sum(plays) / n,
        "engines": {
            e.name: {
                "kind": e.kind,
                "returns": e.note,
                "us_per_position": us[e.name],
                "all_passes_us_per_position": [t / n * 1e6 for t in e.times_s],
            }
            for e in engines
        },
        "missing": missing,
        "ratios": ratios,
        "wrapping_overhead_us": nard_us - raw_us,
        "target": {"text": TARGET, "met": met},
        "checks": [
            {
                "peer": c.peer,
                "checked": c.checked,
                "count_agree": c.count_agree,
                "set_agree": c.set_agree,
                "duplicates": c.duplicates,
                "crashed_sequences": c.crashed_sequences,
                "disagreements": [
                    {
                        "category": d.category,
                        "position_id": d.position_id,
                        "dice": list(d.dice),
                        "nard": d.nard,
                        "peer": d.peer,
                        "peer_sequences": d.peer_sequences,
                        "only_nard": d.only_nard,
                        "only_peer": d.only_peer,
                    }
                    for d in c.disagreements
                ],
            }
            for c in checks
        ],
    }


def print_report(r: dict[str, Any], show: int) -> None:
    mix = ", ".join(f"{k} {v}" for k, v in sorted(r["mix"].items()))
    print(
        f"legal-play generation: {r['positions']} positions (seed {r['seed']}, "
        f"best of {r['repeat']}), Python {r['python']} {r['machine']}"
    )
    print(f"  mix: {mix}; doubles {r['doubles']}; no legal play {r['no_legal_play']}")
    print(f"  distinct plays per position (nard): {r['mean_distinct_plays']:.1f}")
    print()
    print(f"  {'engine':32} {'kind':12} {'us/position':>11}  returns")
    for name, e in r["engines"].items():
        print(f"  {name:32} {e['kind']:12} {e['us_per_position']:11.1f}  {e['returns']}")
    for name, why in r["missing"].items():
        print(f"  {name:32} {why}")
    print()
    for peer, q in r["ratios"].items():
        print(f"  nard/{peer} = {q['legal_plays']:.2f}x  (raw generator: {q['raw']:.2f}x)")
    nard_us = r["engines"]["nard legal_plays"]["us_per_position"]
    print(
        f"  Play wrapping: legal_plays - generate = {r['wrapping_overhead_us']:.1f} us/position "
        f"({r['wrapping_overhead_us'] / nard_us:.0%} of legal_plays)"
    )
    met = r["target"]["met"]
    verdict = "unknown (bgsage not installed)" if met is None else ("MET" if met else "NOT MET")
    misses = [
        f"nard/{peer} = {q['legal_plays']:.2f}x"
        for peer, q in r["ratios"].items()
        if q["legal_plays"] > (TARGET_BGSAGE_RATIO if peer == "bgsage" else 1.0)
    ]
    if met is False and misses:
        verdict += f" ({', '.join(misses)})"
    print()
    print(f"target: {r['target']['text']}: {verdict}")
    for c in r["checks"]:
        print()
        print(
            f"check {c['peer']}: {c['checked']} positions; same number of distinct positions "
            f"as nard in {c['count_agree']}, same positions in {c['set_agree']}"
        )
        if c["duplicates"]:
            print(f"  repeated a resulting board in {c['duplicates']} positions")
        if c["crashed_sequences"]:
            print(f"  {c['crashed_sequences']} sequences could not be executed by the peer itself")
        by_category = Counter(d["category"] for d in c["disagreements"])
        if by_category:
            print(f"  disagreements by category: {dict(sorted(by_category.items()))}")
        for d in c["disagreements"][:show]:
            seqs = f" from {d['peer_sequences']} sequences" if d["peer_sequences"] else ""
            print(
                f"  {d['position_id']} {d['dice'][0]}-{d['dice'][1]} ({d['category']}): "
                f"nard {d['nard']}, {c['peer']} {d['peer']}{seqs}"
            )
            for text in d["only_nard"][:3]:
                print(f"      only nard: {text}")
            for text in d["only_peer"][:3]:
                print(f"      only {c['peer']}: {text}")
        if len(c["disagreements"]) > show:
            print(f"  ... {len(c['disagreements']) - show} more (all of them with --json)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--positions", type=int, default=2000, help="positions (default 2000)")
    parser.add_argument("--seed", type=int, default=20261201, help="seed of the random games")
    parser.add_argument("--repeat", type=int, default=7, help="timed passes; best counts")
    parser.add_argument(
        "--check",
        type=int,
        default=None,
        metavar="N",
        help="check the peers' results on the first N positions (default: all; 0: none)",
    )
    parser.add_argument("--show", type=int, default=5, help="disagreements printed per peer")
    parser.add_argument("--json", action="store_true", help="print one JSON document instead")
    args = parser.parse_args(argv)
    if args.positions < 1 or args.repeat < 1:
        parser.error("--positions and --repeat must be at least 1")

    cases = sample_cases(args.positions, args.seed)
    peers, missing = load_peers(cases)
    engines = [nard_engine(cases), nard_raw_engine(cases), *peers]
    checked = cases if args.check is None else cases[: args.check]
    checks = run_checks(checked, [e.name.split()[0] for e in peers])
    time_engines(engines, args.repeat)
    report = build_report(args, cases, engines, missing, checks)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        print_report(report, args.show)
    return 0


if __name__ == "__main__":
    sys.exit(main())
