"""Benchmark: the engine's speed (evaluations and move decisions) against gnubg and bgsage.

Measured in one run, on one fixed set of decisions (a position and a roll with
at least two distinct legal plays, sampled from seeded random games by
:func:`movegen.sample_cases`):

- nard's static evaluations per second, ``Engine().evaluator.evaluate(...)``:
  one call per decision on that decision's candidate positions (as a 0-ply
  search makes them), one position per call, and batches of 4,096;
- nard's time per move decision, ``Engine(level=L, time_limit=None).best_play``,
  at every :class:`~nard.engine.engine.Level` (world class on the first
  ``--deep`` decisions only): median, mean, p95 and max;
- GNU Backgammon's **CPU** time per 0-ply (and 2-ply) ``gnubg.findbestmove``
  and per ``gnubg.evaluate``, measured with ``time.process_time()`` inside
  gnubg's embedded Python (each call also costs about 10 ms of idle wall time
  in that embedding, so its CPU time is the fair figure). gnubg caches
  evaluations, so its cache is emptied before every pass; ``gnubg.evaluate``
  carries a large per-call cost, so its CPU time per candidate inside
  ``findbestmove`` is reported too;
- bgsage's evaluations per second (``evaluate_board`` one position per call and
  ``batch_evaluate_post_move`` on one thread) and its time per move decision at
  its "1ply" (gnubg's 0-ply): ``BgBotAnalyzer(eval_level="1ply").checker_play``
  and ``batch_checker_play`` on one thread, run in ``bench/.venv-peers``'
  interpreter as a subprocess (nard itself never imports bgsage).

Fast calls (0-ply decisions, evaluations) are timed ``--repeat`` times and each
decision keeps its fastest time; the 2-ply searches run once. Everything is
reported as ratios against the peers measured in the same run, with the
issue's targets: a 0-ply move decision in at most 1.5x gnubg's CPU time, a
2-ply decision in under 0.5 s, a move decision at the default level in under
1 second. A script, not a test: it asserts nothing about time.

Run from the repository root::

    bash bench/setup_peers.sh                  # once, for bgsage (optional)
    .venv/bin/python bench/engine_speed.py [--positions N] [--deep N] [--seed S] [--json] [--quick]

Other options: ``--repeat R`` (passes over the fast calls), ``--gnubg-evals N``,
``--no-gnubg``, ``--no-bgsage``, ``--weights PATH`` (other networks than the
shipped ones).

Without gnubg (``/usr/games/gnubg``, or ``$NARD_GNUBG``) or bgsage
(``bench/.venv-peers``, or ``$NARD_PEERS_PYTHON``) those peers are skipped with
a note.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from movegen import Case, sample_cases, to_bgsage

from nard import Position
from nard.engine.engine import Engine, Level

BENCH = Path(__file__).resolve().parent
GNUBG = os.environ.get("NARD_GNUBG", "/usr/games/gnubg")
PEERS_PYTHON = os.environ.get("NARD_PEERS_PYTHON", str(BENCH / ".venv-peers" / "bin" / "python"))
PREFIX = "NARD_SPEED:"
BIG_BATCH = 4096

TARGET_ZERO_PLY_RATIO = 1.5
TARGET_TWO_PLY_S = 0.5
TARGET_DEFAULT_LEVEL_S = 1.0


# -- statistics ------------------------------------------------------------------
@dataclass(frozen=True)
class Stats:
    """Seconds per call over ``n`` calls (p95 by the nearest-rank rule)."""

    n: int
    median: float
    mean: float
    p95: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> Stats:
        if not values:
            nan = math.nan
            return cls(0, nan, nan, nan, nan)
        s = sorted(values)
        n = len(s)
        mid = (s[(n - 1) // 2] + s[n // 2]) / 2
        return cls(n, mid, sum(s) / n, s[max(0, math.ceil(0.95 * n) - 1)], s[-1])


@dataclass(frozen=True)
class Throughput:
    """Static evaluations: ``positions`` positions in ``calls`` calls, best pass."""

    name: str
    positions: int
    calls: int
    wall_s: float
    cpu_s: float | None

    @property
    def us_per_position(self) -> float:
        return self.wall_s / self.positions * 1e6

    @property
    def cpu_us_per_position(self) -> float | None:
        return None if self.cpu_s is None else self.cpu_s / self.positions * 1e6


@dataclass(frozen=True)
class Decisions:
    """Times per move decision: ``wall`` and ``cpu`` (``None`` where not measured)."""

    name: str
    plies: str
    note: str
    wall: Stats | None
    cpu: Stats | None
    over_half_s: int | None = None
    over_1_s: int | None = None

    @property
    def primary(self) -> Stats:
        stats = self.wall or self.cpu
        assert stats is not None
        return stats


def fastest(passes: Sequence[Sequence[float]]) -> list[float]:
    """Per call, the fastest of the passes (each pass lists the calls in the same order)."""
    return [min(times) for times in zip(*passes, strict=True)]


# -- the sample --------------------------------------------------------------------
def decisions_sample(n: int, seed: int) -> list[Case]:
    """``n`` positions with a roll that has at least two distinct plays (real decisions)."""
    cases = sample_cases(2 * n + 20, seed)
    chosen = [c for c in cases if len(c.position.legal_plays(c.dice)) >= 2][:n]
    if len(chosen) < n:
        sys.exit(f"engine_speed.py: only {len(chosen)} decisions in the sample, wanted {n}")
    return chosen


# -- nard --------------------------------------------------------------------------
def time_nard_evaluations(
    engine: Engine, candidates: Sequence[Sequence[Position]], single: int, repeat: int
) -> list[Throughput]:
    """Static evaluations per position: per decision's candidates, one by one, big batches."""
    evaluate = engine.evaluator.evaluate
    flat = [p for group in candidates for p in group]
    singles = [[p] for p in flat[:single]]
    big = [flat[i : i + BIG_BATCH] for i in range(0, len(flat), BIG_BATCH)]
    evaluate(flat[:64])  # warm-up (lazy imports, caches)
    out = []
    for name, batches in (
        ("nard evaluate, one decision's candidates per call", candidates),
        ("nard evaluate, one position per call", singles),
        (f"nard evaluate, batches of up to {BIG_BATCH}", big),
    ):
        best_wall, best_cpu = math.inf, math.inf
        for _ in range(repeat):
            gc.collect()
            c0, t0 = time.process_time(), time.perf_counter()
            for batch in batches:
                evaluate(batch)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
        positions = sum(len(b) for b in batches)
        out.append(Throughput(name, positions, len(batches), best_wall, best_cpu))
    return out


def time_calls(
    call: Callable[[Case], object], cases: Sequence[Case], repeat: int
) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of ``call`` per case, each the fastest of ``repeat`` passes."""
    walls: list[list[float]] = []
    cpus: list[list[float]] = []
    for _ in range(repeat):
        gc.collect()
        wall, cpu = [], []
        for case in cases:
            c0, t0 = time.process_time(), time.perf_counter()
            call(case)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        walls.append(wall)
        cpus.append(cpu)
    return fastest(walls), fastest(cpus)


def nard_decisions(
    name: str, plies: str, note: str, wall: list[float], cpu: list[float]
) -> Decisions:
    over_half = sum(t >= 0.5 for t in wall)
    over_1 = sum(t >= 1.0 for t in wall)
    return Decisions(name, plies, note, Stats.of(wall), Stats.of(cpu), over_half, over_1)


def time_nard_levels(
    cases: Sequence[Case],
    deep: int,
    repeat: int,
    progress: Callable[[str], None],
    weights: str | None = None,
) -> list[Decisions]:
    """``best_play`` at every level; at a searching level also ``rank_plays`` (the hint)."""
    out = []
    opening = Position()
    for level in Level:
        engine = Engine(level=level, weights=weights, time_limit=None)
        deep_search = engine.plies > 0
        work = cases[:deep] if deep_search else cases
        if not work:
            continue
        progress(f"nard {level.value}: {len(work)} decisions")
        engine.best_play(opening, (3, 1))  # warm-up

        def decide(case: Case, engine: Engine = engine) -> object:
            return engine.best_play(case.position, case.dice)

        wall, cpu = time_calls(decide, work, 1 if deep_search else repeat)
        noise = getattr(getattr(engine, "settings", None), "noise", None)
        note = "" if noise is None else f"noise {noise:g}" if noise > 0 else "no noise"
        if deep_search:
            note += "; stops when the filter leaves one play"
        plies = f"{engine.plies}-ply"
        out.append(nard_decisions(f"nard {level.value}", plies, note, wall, cpu))
        if deep_search:
            progress(f"nard {level.value} rank_plays: {len(work)} positions")

            def rank(case: Case, engine: Engine = engine) -> object:
                return engine.rank_plays(case.position, case.dice)

            wall, cpu = time_calls(rank, work, 1)
            note = "the hint: every filter survivor searched"
            out.append(nard_decisions(f"nard {level.value} rank_plays", plies, note, wall, cpu))
    return out


# -- peers in their own processes ---------------------------------------------------------
def run_peer(
    argv: list[str], script: str, payload: dict[str, Any], timeout: float
) -> dict[str, Any]:
    """Run ``script`` (reading ``input.json`` in its folder) and return its JSON answer."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "input.json").write_text(json.dumps(payload))
        path = Path(tmp) / "peer.py"
        path.write_text(script)
        proc = subprocess.run(
            [*argv, str(path)],
            cwd=tmp,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    for line in proc.stdout.splitlines():
        if line.startswith(PREFIX):
            answer: dict[str, Any] = json.loads(line[len(PREFIX) :])
            return answer
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
    raise RuntimeError(f"exit status {proc.returncode}, no answer: {' | '.join(tail)}")


# gnubg runs this in its embedded Python (``gnubg -t -q -p peer.py``), in the folder
# of input.json. Positions come as gnubg Position IDs (side on roll first, as nard's).
_GNUBG_SCRIPT = r"""
import json, os, time
import gnubg

data = json.load(open(os.path.join(os.getcwd(), 'input.json')))
repeat = data['repeat']
for command in ('set display off', 'set player 0 human', 'set player 1 human', 'new game'):
    gnubg.command(command)
cube = gnubg.cubeinfo()  # money, centred cube (needs a game)
ec0 = {'cubeful': 0, 'plies': 0, 'deterministic': 1, 'noise': 0.0}
ec2 = {'cubeful': 0, 'plies': 2, 'deterministic': 1, 'noise': 0.0}
decisions = [(gnubg.positionfromid(pid), (d1, d2)) for pid, d1, d2 in data['decisions']]
deep = decisions[:data['deep']]
evals = [gnubg.positionfromid(pid) for pid in data['evals']]
clock = time.process_time
CACHE = 1 << 20

sizes = [CACHE, 2 * CACHE]

def flush():
    # gnubg caches evaluations: a repeated position costs almost nothing, so every
    # pass starts from an empty cache. Resizing empties it, but only to another
    # size (gnubg rounds to powers of two and keeps a cache asked for at its own
    # size, hits and all), so the passes alternate two sizes; 0 and 1 are not used.
    sizes.reverse()
    gnubg.command('set cache %d' % sizes[0])

def per_call(fn, items, passes):
    best = None
    for _ in range(passes):
        flush()
        times = []
        for item in items:
            c0 = clock()
            fn(item)
            times.append(clock() - c0)
        best = times if best is None else [min(a, b) for a, b in zip(best, times)]
    return best or []

no_move = sum(1 for b, d in decisions if not any(gnubg.findbestmove(b, cube, ec0, d)))
for b, d in decisions[:5]:
    gnubg.evaluate(b, cube, ec0)
    gnubg.findbestmove(b, cube, ec0, d)
w0 = time.perf_counter()
zero = per_call(lambda bd: gnubg.findbestmove(bd[0], cube, ec0, bd[1]), decisions, repeat)
wall_zero = (time.perf_counter() - w0) / max(1, repeat * len(decisions))
ev = per_call(lambda b: gnubg.evaluate(b, cube, ec0), evals, 1)
two = per_call(lambda bd: gnubg.findbestmove(bd[0], cube, ec2, bd[1]), deep, 1)
print('NARD_SPEED:' + json.dumps({
    'decision0_cpu': zero, 'decision0_wall_mean': wall_zero,
    'eval_cpu': ev, 'decision2_cpu': two, 'no_move': no_move,
}), flush=True)
"""


def gnubg_version() -> str:
    try:
        out = subprocess.run(
            [GNUBG, "--version"], capture_output=True, text=True, timeout=30, check=False
        ).stdout
    except OSError:
        return "?"
    return out.splitlines()[0].strip() if out else "?"


def time_gnubg(
    cases: Sequence[Case],
    candidates: Sequence[Sequence[Position]],
    deep: int,
    evals: int,
    repeat: int,
) -> tuple[list[Decisions], list[Throughput], dict[str, Any]]:
    payload = {
        "repeat": repeat,
        "deep": deep,
        "decisions": [[c.position.position_id(), *c.dice] for c in cases],
        "evals": [p.position_id() for group in candidates for p in group][:evals],
    }
    answer = run_peer([GNUBG, "-t", "-q", "-p"], _GNUBG_SCRIPT, payload, timeout=1800)
    zero = Decisions(
        "gnubg findbestmove",
        "0-ply",
        "inside gnubg",
        None,
        Stats.of(answer["decision0_cpu"]),
    )
    two = Decisions(
        "gnubg findbestmove",
        "2-ply",
        "inside gnubg",
        None,
        Stats.of(answer["decision2_cpu"]),
    )
    ev = answer["eval_cpu"]
    cpu = float(sum(ev))
    n_candidates = sum(len(group) for group in candidates)
    decision_cpu = float(sum(answer["decision0_cpu"]))
    per_candidate = Throughput(
        "gnubg 0-ply findbestmove CPU / its candidates (derived)",
        n_candidates,
        len(cases),
        decision_cpu,
        decision_cpu,
    )
    evaluation = Throughput(
        "gnubg evaluate 0-ply, one position per call (CPU)", len(ev), len(ev), cpu, cpu
    )
    info = {
        "version": gnubg_version(),
        "decision0_wall_mean_s": answer["decision0_wall_mean"],
        "no_move": answer["no_move"],
    }
    return [zero, two], [per_candidate, evaluation], info


# bgsage runs in bench/.venv-peers' interpreter. Boards come in bgsage's layout
# (movegen.to_bgsage): decisions as (board, die1, die2); evaluations as the post-move
# board from the mover's side with the board before the move.
_BGSAGE_SCRIPT = r"""
import gc, json, os, time
from importlib.metadata import version
import bgbot_cpp
from bgsage import BgBotAnalyzer
from bgsage.weights import default_weights

data = json.load(open(os.path.join(os.getcwd(), 'input.json')))
repeat = data['repeat']
decisions = data['decisions']
evals = data['evals']
weights = default_weights()
analyzer = BgBotAnalyzer(eval_level='1ply', cubeful=False, parallel_threads=1)
strategy = bgbot_cpp.create_strategy(
    weights.strategy_type, weights.weight_paths_list, weights.hidden_sizes_list)
centred = bgbot_cpp.CubeOwner.CENTERED

def per_call(fn, items, passes):
    best_wall = best_cpu = None
    for _ in range(passes):
        gc.collect()
        wall, cpu = [], []
        for item in items:
            c0, t0 = time.process_time(), time.perf_counter()
            fn(item)
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        best_wall = wall if best_wall is None else [min(a, b) for a, b in zip(best_wall, wall)]
        best_cpu = cpu if best_cpu is None else [min(a, b) for a, b in zip(best_cpu, cpu)]
    return best_wall or [], best_cpu or []

def whole(fn, passes):
    best_wall = best_cpu = float('inf')
    for _ in range(passes):
        gc.collect()
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        best_wall = min(best_wall, time.perf_counter() - t0)
        best_cpu = min(best_cpu, time.process_time() - c0)
    return best_wall, best_cpu

moves = sum(len(analyzer.checker_play(b, d1, d2).moves) for b, d1, d2 in decisions)
for b, d1, d2 in decisions[:5]:
    analyzer.checker_play(b, d1, d2)
cp_wall, cp_cpu = per_call(lambda x: analyzer.checker_play(*x), decisions, repeat)
inputs = [{'board': b, 'die1': d1, 'die2': d2, 'cube_value': 1, 'cube_owner': centred}
          for b, d1, d2 in decisions]
batch_cp = whole(lambda: bgbot_cpp.batch_checker_play(inputs, strategy, 5, 0.08, 1), repeat)
ev_single = whole(lambda: [strategy.evaluate_board(post, pre) for post, pre in evals], repeat)
posts = [(post, centred) for post, _ in evals]
ev_batch = whole(lambda: bgbot_cpp.batch_evaluate_post_move(posts, strategy, 1), repeat)
print('NARD_SPEED:' + json.dumps({
    'version': version('bgsage'), 'moves': moves,
    'checker_play_wall': cp_wall, 'checker_play_cpu': cp_cpu,
    'batch_checker_play': batch_cp, 'eval_single': ev_single, 'eval_batch': ev_batch,
}), flush=True)
"""


def time_bgsage(
    cases: Sequence[Case], candidates: Sequence[Sequence[Position]], repeat: int
) -> tuple[list[Decisions], list[Throughput], dict[str, Any]]:
    evals = [
        [to_bgsage(p.flip().board), to_bgsage(c.position.board)]
        for c, group in zip(cases, candidates, strict=True)
        for p in group
    ]
    payload = {
        "repeat": repeat,
        "decisions": [[to_bgsage(c.position.board), *c.dice] for c in cases],
        "evals": evals,
    }
    answer = run_peer([PEERS_PYTHON], _BGSAGE_SCRIPT, payload, timeout=1800)
    n = len(cases)
    batch_wall, batch_cpu = answer["batch_checker_play"]
    decisions = [
        Decisions(
            "bgsage checker_play",
            "1ply",
            "BgBotAnalyzer, cubeless",
            Stats.of(answer["checker_play_wall"]),
            Stats.of(answer["checker_play_cpu"]),
        ),
        Decisions(
            "bgsage batch_checker_play",
            "1ply",
            "C++ loop, 1 thread; mean only",
            Stats(n, math.nan, batch_wall / n, math.nan, math.nan),
            Stats(n, math.nan, batch_cpu / n, math.nan, math.nan),
        ),
    ]
    m = len(evals)
    throughput = [
        Throughput("bgsage evaluate_board, one position per call", m, m, *answer["eval_single"]),
        Throughput("bgsage batch_evaluate_post_move, 1 thread", m, 1, *answer["eval_batch"]),
    ]
    info = {"version": answer["version"], "moves_found": answer["moves"]}
    return decisions, throughput, info


# -- the report ----------------------------------------------------------------------
def ratio(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or not b or math.isnan(a) or math.isnan(b):
        return None
    return a / b


def fmt_ratio(r: float | None) -> str:
    return "n/a" if r is None else f"{r:.2f}x"


def ms(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x * 1e3:.3f}"


def targets(
    levels: Sequence[Decisions],
    gnubg: Sequence[Decisions],
    default_level: str,
) -> dict[str, Any]:
    by_name = {d.name: d for d in levels}
    zero = by_name["nard expert"]  # gnubg's expert: 0-ply, no noise
    deep = [d for d in levels if d.plies == "2-ply"]
    default = by_name[f"nard {default_level}"]
    out: dict[str, Any] = {}
    g0 = next((d for d in gnubg if d.plies == "0-ply"), None)
    zero_cpu = zero.cpu.mean if zero.cpu else None
    r = ratio(zero_cpu, g0.cpu.mean if g0 and g0.cpu else None)
    out["zero_ply_vs_gnubg_cpu"] = {
        "target": f"a 0-ply move decision in at most {TARGET_ZERO_PLY_RATIO}x gnubg's CPU time",
        "nard": zero.name,
        "nard_mean_cpu_s": zero_cpu,
        "nard_mean_wall_s": zero.wall.mean if zero.wall else None,
        "gnubg_mean_cpu_s": g0.cpu.mean if g0 and g0.cpu else None,
        "ratio_cpu": r,
        "ratio_wall": ratio(
            zero.wall.mean if zero.wall else None, g0.cpu.mean if g0 and g0.cpu else None
        ),
        "met": None if r is None else r <= TARGET_ZERO_PLY_RATIO,
    }
    if deep:
        d = deep[0]
        g2 = next((g for g in gnubg if g.plies == "2-ply"), None)
        out["two_ply_time"] = {
            "target": f"a 2-ply decision in under {TARGET_TWO_PLY_S} s",
            "nard": d.name,
            "wall": asdict(d.primary),
            "over_target": d.over_half_s,
            "vs_gnubg_2ply_cpu_mean": ratio(
                d.cpu.mean if d.cpu else None, g2.cpu.mean if g2 and g2.cpu else None
            ),
            "met_median": d.primary.median < TARGET_TWO_PLY_S,
            "met_max": d.primary.max < TARGET_TWO_PLY_S,
        }
    hint = next((d for d in levels if d.plies == "2-ply" and "rank_plays" in d.name), None)
    if hint:
        out["two_ply_hint_time"] = {
            "nard": hint.name,
            "wall": asdict(hint.primary),
            "over_target": hint.over_half_s,
        }
    out["default_level_time"] = {
        "target": "a move decision at the default level in under "
        f"{TARGET_DEFAULT_LEVEL_S:g} second",
        "default_level": default_level,
        "wall": asdict(default.primary),
        "over_target": default.over_1_s,
        "met_max": default.primary.max < TARGET_DEFAULT_LEVEL_S,
    }
    return out


def print_report(report: dict[str, Any]) -> None:
    s = report["setup"]
    print(
        f"nard engine speed: {s['decisions']} decisions (seed {s['seed']}; "
        f"{s['candidates']} candidate positions, {s['candidates'] / s['decisions']:.1f} per "
        f"decision), 2-ply on the first {s['deep']}, fastest of {s['repeat']} pass(es)"
    )
    print(f"  {s['machine']}; categories: {s['categories']}")
    for note in report["notes"]:
        print(f"  note: {note}")
    print()
    print("Static evaluation (per position)")
    head = f"  {'':58} {'us/pos':>9} {'pos/s':>10} {'CPU us/pos':>11}"
    print(head)
    for t in report["evaluations"]:
        us, cpu = t["us_per_position"], t["cpu_us_per_position"]
        cpu_text = "-" if cpu is None else f"{cpu:.2f}"
        print(f"  {t['name']:58} {us:9.2f} {1e6 / us:10,.0f} {cpu_text:>11}")
    print()
    print("Move decisions (milliseconds per decision)")
    print(
        f"  {'':34} {'plies':>6} {'n':>5} {'median':>9} {'mean':>9} {'p95':>9} "
        f"{'max':>9} {'mean CPU':>9}  note"
    )
    for d in report["decisions"]:
        st = d["wall"] or d["cpu"]
        cpu = d["cpu"]["mean"] if d["cpu"] else None
        clock = "" if d["wall"] else " (CPU time)"
        print(
            f"  {d['name']:34} {d['plies']:>6} {st['n']:5} {ms(st['median']):>9} "
            f"{ms(st['mean']):>9} {ms(st['p95']):>9} {ms(st['max']):>9} {ms(cpu):>9}  "
            f"{d['note']}{clock}"
        )
    print()
    print("Targets")
    t = report["targets"]
    z = t["zero_ply_vs_gnubg_cpu"]
    if z["ratio_cpu"] is None:
        print(f"  {z['target']}: gnubg not measured")
    else:
        print(
            f"  {z['target']}: {z['nard']} mean CPU {ms(z['nard_mean_cpu_s'])} ms / gnubg "
            f"{ms(z['gnubg_mean_cpu_s'])} ms = {fmt_ratio(z['ratio_cpu'])} "
            f"(wall: {fmt_ratio(z['ratio_wall'])}) -> {'met' if z['met'] else 'NOT met'}"
        )
    if "two_ply_time" in t:
        w = t["two_ply_time"]
        print(
            f"  {w['target']}: {w['nard']} median {w['wall']['median']:.3f} s, "
            f"p95 {w['wall']['p95']:.3f} s, max {w['wall']['max']:.3f} s, "
            f"{w['over_target']} of {w['wall']['n']} at 0.5 s or more -> median "
            f"{'met' if w['met_median'] else 'NOT met'}, max {'met' if w['met_max'] else 'NOT met'}"
            f"; vs gnubg 2-ply CPU (mean): {fmt_ratio(w['vs_gnubg_2ply_cpu_mean'])}"
        )
    if "two_ply_hint_time" in t:
        h = t["two_ply_hint_time"]
        print(
            f"  the same for the 2-ply hint ({h['nard']}): median {h['wall']['median']:.3f} s, "
            f"p95 {h['wall']['p95']:.3f} s, max {h['wall']['max']:.3f} s, "
            f"{h['over_target']} of {h['wall']['n']} at 0.5 s or more"
        )
    dl = t["default_level_time"]
    print(
        f"  {dl['target']} ({dl['default_level']}): max {dl['wall']['max']:.3f} s, "
        f"p95 {dl['wall']['p95']:.3f} s, {dl['over_target']} of {dl['wall']['n']} at 1 s or more "
        f"-> {'met' if dl['met_max'] else 'NOT met'}"
    )
    if report["ratios"]:
        print()
        print("Ratios (nard / peer; above 1 means nard is slower)")
        for name, r in report["ratios"].items():
            print(f"  {name:70} {fmt_ratio(r)}")


def build_ratios(
    evaluations: Sequence[Throughput], decisions: Sequence[Decisions]
) -> dict[str, float | None]:
    ev = {t.name: t for t in evaluations}
    dec = {(d.name, d.plies): d for d in decisions}
    nard_batch = evaluations[0]
    nard_single = evaluations[1]
    out: dict[str, float | None] = {}
    gnubg_fbm = ev.get("gnubg 0-ply findbestmove CPU / its candidates (derived)")
    gnubg_ev = ev.get("gnubg evaluate 0-ply, one position per call (CPU)")
    if gnubg_fbm:
        out["evaluation, nard per-decision batch CPU / gnubg findbestmove CPU per candidate"] = (
            ratio(nard_batch.cpu_us_per_position, gnubg_fbm.cpu_us_per_position)
        )
    if gnubg_ev:
        out["evaluation, nard one position per call CPU / gnubg evaluate CPU"] = ratio(
            nard_single.cpu_us_per_position, gnubg_ev.cpu_us_per_position
        )
    bg_single = ev.get("bgsage evaluate_board, one position per call")
    bg_batch = ev.get("bgsage batch_evaluate_post_move, 1 thread")
    if bg_single and bg_batch:
        out["evaluation, nard per-decision batch / bgsage batch_evaluate_post_move"] = ratio(
            nard_batch.us_per_position, bg_batch.us_per_position
        )
        out["evaluation, nard one position per call / bgsage evaluate_board"] = ratio(
            nard_single.us_per_position, bg_single.us_per_position
        )
    zero = dec.get(("nard expert", "0-ply"))
    g0 = dec.get(("gnubg findbestmove", "0-ply"))
    g2 = dec.get(("gnubg findbestmove", "2-ply"))
    wc = dec.get(("nard world-class", "2-ply"))
    bg = dec.get(("bgsage checker_play", "1ply"))
    bgb = dec.get(("bgsage batch_checker_play", "1ply"))
    if zero and zero.cpu and g0 and g0.cpu:
        out["0-ply decision, nard expert mean CPU / gnubg 0-ply mean CPU"] = ratio(
            zero.cpu.mean, g0.cpu.mean
        )
        out["0-ply decision, nard expert median CPU / gnubg 0-ply median CPU"] = ratio(
            zero.cpu.median, g0.cpu.median
        )
    if wc and wc.cpu and g2 and g2.cpu:
        out["2-ply decision, nard world-class mean CPU / gnubg 2-ply mean CPU"] = ratio(
            wc.cpu.mean, g2.cpu.mean
        )
    if zero and zero.wall and bg and bg.wall:
        out["0-ply decision, nard expert mean / bgsage checker_play 1ply mean"] = ratio(
            zero.wall.mean, bg.wall.mean
        )
    if zero and zero.wall and bgb and bgb.wall:
        out["0-ply decision, nard expert mean / bgsage batch_checker_play 1ply mean"] = ratio(
            zero.wall.mean, bgb.wall.mean
        )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, help="decisions timed (default 200; quick 40)")
    parser.add_argument(
        "--deep", type=int, help="of which searched at 2 plies (default 50; quick 8)"
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of the sampled games")
    parser.add_argument("--repeat", type=int, help="passes over the fast calls (default 3)")
    parser.add_argument(
        "--gnubg-evals", type=int, help="positions gnubg evaluates (default 600; quick 150)"
    )
    parser.add_argument("--quick", action="store_true", help="a small run (about 30 s)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument("--no-gnubg", action="store_true", help="skip GNU Backgammon")
    parser.add_argument("--no-bgsage", action="store_true", help="skip bgsage")
    parser.add_argument("--weights", help="nard's networks (default: the shipped ones)")
    args = parser.parse_args(argv)
    positions = args.positions or (40 if args.quick else 200)
    deep = min(positions, args.deep if args.deep is not None else (8 if args.quick else 50))
    repeat = args.repeat or (1 if args.quick else 3)
    gnubg_evals = args.gnubg_evals or (150 if args.quick else 600)
    if positions < 1 or deep < 0 or repeat < 1 or gnubg_evals < 1:
        parser.error("--positions, --repeat and --gnubg-evals must be >= 1, --deep >= 0")

    def progress(text: str) -> None:
        if not args.json:
            print(f"... {text}", file=sys.stderr, flush=True)

    started = time.perf_counter()
    cases = decisions_sample(positions, args.seed)
    candidates = [[p.result for p in c.position.legal_plays(c.dice)] for c in cases]
    n_candidates = sum(len(g) for g in candidates)
    notes: list[str] = [
        "nard's searches run without the engine's time limit (Engine(time_limit=None))",
    ]

    progress("nard evaluations")
    default_engine = Engine(weights=args.weights)
    evaluations = time_nard_evaluations(default_engine, candidates, min(n_candidates, 1000), repeat)
    decisions = time_nard_levels(cases, deep, repeat, progress, args.weights)
    peers: dict[str, Any] = {}

    if args.no_gnubg:
        notes.append("gnubg skipped (--no-gnubg)")
    elif not Path(GNUBG).exists():
        notes.append(f"gnubg skipped: not found at {GNUBG} (apt-get install gnubg)")
    else:
        progress("gnubg")
        try:
            g_dec, g_ev, peers["gnubg"] = time_gnubg(cases, candidates, deep, gnubg_evals, repeat)
            decisions += g_dec
            evaluations += g_ev
            notes.append(
                "gnubg figures are CPU time (time.process_time() in its embedded Python); "
                "its mean wall time per 0-ply findbestmove call: "
                f"{peers['gnubg']['decision0_wall_mean_s'] * 1e3:.1f} ms (idle in its embedding)"
            )
            if peers["gnubg"]["no_move"]:
                notes.append(f"gnubg found no move in {peers['gnubg']['no_move']} decisions")
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            notes.append(f"gnubg skipped: {e}")

    if args.no_bgsage:
        notes.append("bgsage skipped (--no-bgsage)")
    elif not Path(PEERS_PYTHON).exists():
        notes.append(f"bgsage skipped: {PEERS_PYTHON} missing (bash bench/setup_peers.sh)")
    else:
        progress("bgsage")
        try:
            b_dec, b_ev, peers["bgsage"] = time_bgsage(cases, candidates, repeat)
            decisions += b_dec
            evaluations += b_ev
            if peers["bgsage"]["moves_found"] != n_candidates:
                notes.append(
                    f"bgsage found {peers['bgsage']['moves_found']} candidate plays, "
                    f"nard {n_candidates} (see bench/README.md on bgsage's bear-off rule)"
                )
        except (OSError, RuntimeError, subprocess.TimeoutExpired) as e:
            notes.append(f"bgsage skipped: {e}")

    levels = [d for d in decisions if d.name.startswith("nard ")]
    gnubg = [d for d in decisions if d.name.startswith("gnubg ")]
    report: dict[str, Any] = {
        "setup": {
            "decisions": len(cases),
            "deep": deep,
            "seed": args.seed,
            "repeat": repeat,
            "candidates": n_candidates,
            "categories": dict(Counter(c.category for c in cases)),
            "machine": f"{platform.python_implementation()} {platform.python_version()}, "
            f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}",
            "default_level": default_engine.level.value,
        },
        "peers": peers,
        "notes": notes,
        "evaluations": [
            {
                **asdict(t),
                "us_per_position": t.us_per_position,
                "cpu_us_per_position": t.cpu_us_per_position,
            }
            for t in evaluations
        ],
        "decisions": [asdict(d) for d in decisions],
        "targets": targets(levels, gnubg, default_engine.level.value),
        "ratios": build_ratios(evaluations, decisions),
    }
    report["setup"]["seconds"] = time.perf_counter() - started
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)
        print(f"\n({report['setup']['seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
