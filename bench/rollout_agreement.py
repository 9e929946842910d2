"""How closely ``nard rollout`` agrees with GNU Backgammon's own rollouts.

A fixed set of positions near the doubling window (money with the cube centred
and owned, 7-point match scores: level, trailing, leading, owned cube,
post-Crawford, the Crawford game and a dead cube; contact and race) is rolled out
by gnubg 1.07 and by nard with the same number of trials, both truncated after
the same number of turns:

- **cubeful**: the cube decision of the side on roll (no double and double/take,
  their standard errors and the verdict), the cube turned inside the trials:
  gnubg's ``analyse rollout cube`` with 0-ply checker play and 0-ply cube
  decisions in the trials and its 1-ply evaluation at the cut; nard's
  ``rollout_cube(..., RolloutSettings(cubeful=True))`` (0-ply checker play, the
  cube by formula on 1-ply probabilities, 1-ply at the cut). Where the side on
  roll has no access to the cube (the Crawford game, a dead cube) both roll out
  the position's cubeful equity alone (gnubg's ``rollout`` command);
- **cubeless**: each position's probabilities (money play, cubeless trials):
  gnubg's ``rollout`` with ``set rollout cubeful off`` (0-ply cubeless checker
  play) against nard's ``rollout_cube(..., RolloutSettings(cubeful=False))``.

Both use variance reduction and quasi-random dice; their dice differ, so the
differences carry both standard errors (the ``z`` columns divide by the root of
the sum of squares) on top of the two engines' differences.

gnubg's rollouts are cached in ``bench/data/gnubg_rollouts.json`` (``--refresh``
reruns them: 163 s in two gnubg processes); the bench runs without gnubg then.
nard's side takes far longer (2026-12-06, ``--jobs 2`` on a shared two-core
machine: 23-190 s a contact position, 80-290 s a race; cubeful trials of a race
cost about 25 times cubeless ones when measured, before the cube efficiencies of the
rolls were computed at once: about 3 times since).
gnubg prints a rollout's figures only when its standard output is a terminal, so
it runs under a pseudo-terminal here and its output is captured command by command
(see ../shared/GNUBG-ORACLE.md, "Rollouts").
``tests/analysis/test_rollout_gnubg.py`` checks nard against the same file.

Measured 2026-12-06 (both 1,296 trials, nard less gnubg): no double +0.013 on
average (|diff| at most 0.044; races within 0.003), double/take +0.024 (at most
0.082); verdicts agree on 10 of 11 (m7-0-0: gnubg's close "No double, take", nard
"Double, take"); cubeless equity +0.011 on average, at most +0.038 (contact; races
within 0.002). Applying nard's formulas to gnubg's rolled-out probabilities gives
gnubg's no double to 1e-5 where the cube is out of play (Crawford game, dead cube):
the differences beyond noise are the networks' (nard's 2-ply evaluations of the same
contact positions run up to +0.05 above gnubg's) and, in match play, gnubg's
score-aware checker play in the trials against nard's cubeless money play.

Run: ``.venv/bin/python bench/rollout_agreement.py [--trials N] [--jobs J]
[--cases GLOB] [--refresh] [--json]``
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import math
import os
import pty
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nard.analysis.rollout import RolloutSettings, rollout_cube  # noqa: E402
from nard.core.position import Position  # noqa: E402
from nard.engine.cube import CubeContext, CubeOwner, match_context  # noqa: E402
from nard.engine.engine import load_evaluator  # noqa: E402
from nard.notation.match_id import CubeOwner as IdCubeOwner  # noqa: E402
from nard.notation.match_id import MatchState  # noqa: E402
from tests.gnubg_oracle import prepare_gnubg_home  # noqa: E402

CACHE = ROOT / "bench" / "data" / "gnubg_rollouts.json"
GNUBG = os.environ.get("NARD_GNUBG", "/usr/games/gnubg")
TRIALS = 1296
TRUNCATE = 7
SEED = 1
PROCESSES = 2
_PREFIX = "NARD:"


@dataclass(frozen=True)
class Case:
    """A position (side on roll, before it rolls) in a cube and score setting."""

    name: str
    position_id: str
    context: CubeContext
    note: str

    @property
    def match_id(self) -> str:
        """The Match ID of the setting, player 0 on roll with no dice (Jacoby off)."""
        ctx = self.context
        owner = {CubeOwner.CENTRED: IdCubeOwner.CENTRED, CubeOwner.ON_ROLL: IdCubeOwner.PLAYER_0}
        return MatchState(
            cube_value=ctx.cube,
            cube_owner=owner.get(ctx.owner, IdCubeOwner.PLAYER_1),
            dice_owner=0,
            crawford=ctx.crawford,
            match_length=ctx.match_length,
            score=ctx.score,
            jacoby=ctx.jacoby,
        ).match_id()


def _m7(score: tuple[int, int], *, owned: bool = False, crawford: bool = False) -> CubeContext:
    """7-point match at ``score``; ``owned``: the side on roll owns a 2-cube."""
    if owned:
        return CubeContext(2, CubeOwner.ON_ROLL, 7, score, crawford=crawford)
    return CubeContext(match_length=7, score=score, crawford=crawford)


_OWNED = CubeContext(cube=2, owner=CubeOwner.ON_ROLL)

CASES = (
    Case("money-contact-dp", "OLeBwBGYb4MDCA", CubeContext(), "money, centred: double point"),
    Case("money-contact-tp", "tt0BCBjnzjMAAA", CubeContext(), "money, centred: take point"),
    Case("money-race-dp", "s9uJBACz7VoAAA", CubeContext(), "money, centred, race 76-80"),
    Case("money-race-tp", "290GAgDavQMAAA", CubeContext(), "money, centred, race 58-61"),
    Case("money-owned", "a8wxAyC03cAABw", _OWNED, "money, own 2-cube"),
    Case("money-owned-race", "3W4nAAB7Xg8AAA", _OWNED, "money, own 2-cube, race"),
    Case("m7-0-0", "zB7DAVDadgCIIw", _m7((0, 0)), "7 points, 0-0"),
    Case("m7-2-4", "ONsGgCPMzjEDIA", _m7((2, 4)), "7 points, 2-4 (trailing)"),
    Case("m7-4-2-race", "tdspAQBrtwsBAA", _m7((4, 2)), "7 points, 4-2 (leading), race"),
    Case("m7-1-3-owned", "bGaWASTCu4MBAw", _m7((1, 3), owned=True), "7 points, 1-3, own 2-cube"),
    Case("m7-3-6-postcrawford", "330AFABudwMAAg", _m7((3, 6)), "7 points, 3-6 post-Crawford"),
    Case("m7-6-4-crawford", "4PngYAgyz4wBAw", _m7((6, 4), crawford=True), "Crawford, leader"),
    Case("m7-5-3-dead", "zGYwDDHGbmAhIg", _m7((5, 3), owned=True), "5-3, own 2-cube: dead"),
)  # fmt: skip
"""The positions: chosen from nard's self-play where gnubg 0-ply and 2-ply put them
near the double or the take point (the last two: no cube access)."""

# -- gnubg ------------------------------------------------------------------------

_SCRIPT = r"""
import ctypes, json, os, re, sys, tempfile, time
import gnubg
_libc = ctypes.CDLL(None)

def run(cmd):
    # gnubg's C stdout is captured per command: fd 1 on a file while it runs
    _libc.fflush(None)
    sys.stdout.flush()
    with tempfile.TemporaryFile() as f:
        saved = os.dup(1)
        os.dup2(f.fileno(), 1)
        try:
            gnubg.command(cmd)
            _libc.fflush(None)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        return f.read().decode('utf-8', 'replace').replace('\r', '')

NUM = r'([+-]?\d+\.\d+)'

def figures(text):
    # the probability line and the standard error line of a rollout result
    lines = [l for l in text.splitlines() if ' CL ' in l]
    out = []
    for l in lines:
        nums = [float(x) for x in re.findall(r'[+-]?\d+\.\d+', l)]
        out.append(nums)
    return out

def setup(length, match_id, position_id):
    run('new match %d' % length if length else 'new session')
    run('set matchid ' + match_id)
    run('set board ' + position_id)
    if (gnubg.positionid(), gnubg.matchid()) != (position_id, match_id):
        raise SystemExit('gnubg set up %s:%s, not %s:%s' % (
            gnubg.positionid(), gnubg.matchid(), position_id, match_id))

for c in ['set threads 1', 'set display off', 'set player 0 human', 'set player 1 human',
          'set automatic roll off', 'set jacoby off', 'set beavers 0',
          'set output mwc off', 'set output digits 5',
          'set rollout trials TRIALS', 'set rollout seed SEED',
          'set rollout varredn on', 'set rollout quasirandom on',
          'set rollout chequerplay plies 0', 'set rollout cubedecision plies 0',
          'set rollout truncation enable on', 'set rollout truncation plies TRUNCATE',
          'set rollout truncation chequerplay plies 1',
          'set rollout truncation cubedecision plies 1',
          'set evaluation cubedecision evaluation plies 0']:
    run(c)

for case in json.loads(CASES):
    name, pid, mid, length, can_double = case
    row = {'name': name, 'position_id': pid, 'match_id': mid}
    run('set rollout cubeful on')
    run('set rollout chequerplay cubeful on')
    setup(length, mid, pid)
    start = time.process_time()
    if can_double:
        run('hint')
        run('analyse rollout cube')
        text = run('hint')
        eq = {}
        for m in re.finditer(r'^\d\. (.+?)\s+' + NUM, text, re.M):
            kind = 'dp' if 'pass' in m.group(1) else 'dt' if 'take' in m.group(1) else 'nd'
            eq[kind] = float(m.group(2))
        action = re.search(r'Proper cube action: (.+?)(?: \([\d.]+%\))?$', text, re.M).group(1)
        details = figures(text.split('Rollout details:')[1])
        row['cube'] = {'no_double': eq['nd'], 'double_take': eq['dt'],
                       'double_pass': eq['dp'], 'action': action,
                       'no_double_se': details[1][-1], 'double_take_se': details[3][-1],
                       'text': text.strip()}
    else:
        text = run('rollout')
        last = text.split('Printing final results.')[-1]
        value, se = figures(last)[:2]
        row['cube'] = {'no_double': value[-1], 'no_double_se': se[-1],
                       'action': 'no cube access', 'text': last.strip()}
    row['cubeful_cpu'] = time.process_time() - start
    # cubeless: money play, cube centred, cubeless checker play
    run('set rollout cubeful off')
    run('set rollout chequerplay cubeful off')
    setup(0, 'cAkAAAAAAAAE', pid)
    start = time.process_time()
    text = run('rollout').split('Printing final results.')[-1]
    probs, ses = figures(text)[:2]
    row['cubeless'] = {'probabilities': probs[0:3] + probs[4:6], 'equity': probs[6],
                       'probabilities_se': ses[0:3] + ses[4:6], 'equity_se': ses[6]}
    row['cubeless_cpu'] = time.process_time() - start
    print('\nNARD:' + json.dumps(row), flush=True)
"""


def run_gnubg_pty(script: str, timeout: float = 1800.0) -> list[str]:
    """Run ``script`` in gnubg with its standard output on a pseudo-terminal (gnubg
    prints rollout results only to a terminal); what it printed after ``NARD:``."""
    prepare_gnubg_home()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "script.py"
        path.write_text(script)
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            [GNUBG, "-t", "-q", "-p", str(path)],
            stdin=subprocess.DEVNULL,
            stdout=slave,
            stderr=slave,
            cwd=tmp,
        )
        os.close(slave)
        chunks: list[bytes] = []
        deadline = time.monotonic() + timeout
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
            if time.monotonic() > deadline:
                proc.kill()
                break
        os.close(master)
        code = proc.wait()
    text = b"".join(chunks).decode("utf-8", "replace").replace("\r", "")
    lines = [line[len(_PREFIX) :] for line in text.splitlines() if line.startswith(_PREFIX)]
    if code != 0 or not lines:
        raise RuntimeError(f"gnubg failed (exit {code}):\n{text[-3000:]}")
    return lines


def gnubg_rollouts(cases: list[Case], trials: int, processes: int = PROCESSES) -> dict[str, Any]:
    """gnubg's rollouts of ``cases`` by name, in ``processes`` gnubg processes."""
    groups = [cases[i::processes] for i in range(processes)]

    def run(group: list[Case]) -> list[str]:
        if not group:
            return []
        spec = [
            [c.name, c.position_id, c.match_id, c.context.match_length, c.context.can_double()]
            for c in group
        ]
        script = (
            _SCRIPT.replace("CASES", repr(json.dumps(spec)))
            .replace("TRIALS", str(trials))
            .replace("SEED", str(SEED))
            .replace("TRUNCATE", str(TRUNCATE))
        )
        return run_gnubg_pty(script)

    out: dict[str, Any] = {}
    with ThreadPoolExecutor(processes) as pool:
        for lines in pool.map(run, groups):
            for line in lines:
                row = json.loads(line)
                out[row["name"]] = row
    return out


def cached(cases: list[Case], refresh: bool) -> dict[str, Any]:
    """The cache file's contents, with ``cases`` rolled out by gnubg where missing."""
    have: dict[str, Any] = {}
    if CACHE.exists() and not refresh:
        have = json.loads(CACHE.read_text())
    settings = {"trials": TRIALS, "truncate": TRUNCATE, "seed": SEED}
    rows: dict[str, Any] = have.get("positions", {})
    if have.get("settings") != settings:
        rows = {}
    stale = [
        c
        for c in cases
        if c.name not in rows
        or (rows[c.name]["position_id"], rows[c.name]["match_id"]) != (c.position_id, c.match_id)
    ]
    if stale:
        print(f"gnubg: rolling out {len(stale)} positions ...", file=sys.stderr)
        start = time.monotonic()
        rows.update(gnubg_rollouts(stale, TRIALS))
        print(f"gnubg: {time.monotonic() - start:.0f} s", file=sys.stderr)
        have = {
            "gnubg": "1.07.001",
            "settings": settings,
            "how": (
                "cubeful: 'analyse rollout cube' (no cube access: 'rollout'), 0-ply cubeful "
                "checker play and 0-ply cube decisions in the trials, truncated after "
                f"{TRUNCATE} plies with 1-ply evaluation, variance reduction, quasi-random "
                "dice, Jacoby and beavers off, equities normalised (EMG in match play); "
                "cubeless: 'rollout' with 'set rollout cubeful off' and cubeless 0-ply "
                "checker play in a money session, cube centred"
            ),
            "positions": dict(sorted(rows.items())),
        }
        CACHE.parent.mkdir(exist_ok=True)
        CACHE.write_text(json.dumps(have, indent=1, sort_keys=True) + "\n")
    return have


# -- nard -------------------------------------------------------------------------


def nard_cube(
    position: Position, ctx: CubeContext, settings: RolloutSettings, evaluator: Any, jobs: int
) -> dict[str, Any]:
    """:func:`~nard.analysis.rollout.rollout_cube`'s cubeful rollout: both lines'
    equities, their standard errors and the verdict."""
    made = rollout_cube(
        position, ctx, replace(settings, cubeful=True), evaluator=evaluator, jobs=jobs
    )
    return {
        "no_double": made.decision.no_double,
        "no_double_se": made.position.standard_error,
        "double_take": made.decision.double_take,
        "double_take_se": made.double_take_error,
        "action": made.decision.action,
    }


def nard_rollouts(case: Case, trials: int, jobs: int, evaluator: Any) -> dict[str, Any]:
    """nard's cubeful cube rollout and cubeless rollout of ``case``."""
    position = Position.from_position_id(case.position_id)
    ctx = match_context(MatchState.from_match_id(case.match_id))
    assert ctx == case.context, (ctx, case.context)
    settings = RolloutSettings(trials=trials, truncate=TRUNCATE, seed=SEED, cubeful=True)
    start = time.monotonic()
    out = nard_cube(position, ctx, settings, evaluator, jobs)
    cubeful_s = time.monotonic() - start
    start = time.monotonic()
    plain = rollout_cube(
        position,
        CubeContext(),
        RolloutSettings(trials=trials, truncate=TRUNCATE, seed=SEED),
        evaluator=evaluator,
        jobs=jobs,
    )
    cubeless_s = time.monotonic() - start
    assert plain.position.probabilities is not None and plain.position.cubeless is not None
    out |= {
        "probabilities": list(plain.position.probabilities),
        "equity": plain.position.cubeless,
        "equity_se": plain.position.standard_error,
        "seconds": [cubeful_s, cubeless_s],
    }
    return out


def _z(a: float, sa: float, b: float, sb: float) -> float:
    s = math.hypot(sa, sb)
    return (a - b) / s if s > 0 else math.inf


def print_report(rows: list[dict[str, Any]], trials: int) -> None:
    """The two tables: cubeful cube rollouts, then cubeless probabilities."""
    print(
        f"Cubeful cube rollouts, {TRIALS} trials (gnubg) and {trials} (nard), truncated "
        f"after {TRUNCATE} turns; normalised equity of the side on roll (EMG in match play)"
    )
    head = (
        f"{'case':22} {'gnubg ND':>15} {'nard ND':>15} {'diff':>7} {'z':>5}"
        f" {'gnubg DT':>15} {'nard DT':>15} {'diff':>7} {'z':>5}  verdicts"
    )
    print(head)
    nd_diffs: list[float] = []
    dt_diffs: list[float] = []
    for r in rows:
        g, n = r["gnubg"]["cube"], r["nard"]
        dnd = n["no_double"] - g["no_double"]
        nd_diffs.append(dnd)
        line = (
            f"{r['case']:22} {g['no_double']:+.3f} ± {g['no_double_se']:.3f}"
            f" {n['no_double']:+.3f} ± {n['no_double_se']:.3f} {dnd:+.3f}"
            f" {_z(n['no_double'], n['no_double_se'], g['no_double'], g['no_double_se']):+5.1f}"
        )
        if "double_take" in g:
            ddt = n["double_take"] - g["double_take"]
            dt_diffs.append(ddt)
            z = _z(n["double_take"], n["double_take_se"], g["double_take"], g["double_take_se"])
            same = "agree" if g["action"] == n["action"] else "DIFFER"
            line += (
                f" {g['double_take']:+.3f} ± {g['double_take_se']:.3f}"
                f" {n['double_take']:+.3f} ± {n['double_take_se']:.3f} {ddt:+.3f} {z:+5.1f}"
                f"  {same}: gnubg '{g['action']}', nard '{n['action']}'"
            )
        else:
            line += f" {'':>15} {'':>15} {'':>7} {'':>5}  no cube access ({n['action']})"
        print(line)
    for label, ds in (("ND", nd_diffs), ("DT", dt_diffs)):
        if ds:
            print(
                f"  {label}: mean diff {sum(ds) / len(ds):+.4f}, mean |diff| "
                f"{sum(abs(d) for d in ds) / len(ds):.4f}, max |diff| {max(map(abs, ds)):.4f}"
            )
    print()
    print("Cubeless rollouts (money play): win, gammon, backgammon of each side; equity")
    print(
        f"{'case':22} {'':6} {'win':>6} {'w g':>6} {'w bg':>6} {'l g':>6} {'l bg':>6}"
        f" {'equity':>16} {'z':>5}"
    )
    eq_diffs = []
    for r in rows:
        g, n = r["gnubg"]["cubeless"], r["nard"]
        for who, p, e, s in (
            ("gnubg", g["probabilities"], g["equity"], g["equity_se"]),
            ("nard", n["probabilities"], n["equity"], n["equity_se"]),
        ):
            print(
                f"{r['case'] if who == 'gnubg' else '':22} {who:6}"
                + "".join(f" {x:6.3f}" for x in p)
                + f" {e:+.3f} ± {s:.3f}"
            )
        diff = [a - b for a, b in zip(n["probabilities"], g["probabilities"], strict=True)]
        de = n["equity"] - g["equity"]
        eq_diffs.append(de)
        z = _z(n["equity"], n["equity_se"], g["equity"], g["equity_se"])
        print(
            f"{'':22} {'diff':6}"
            + "".join(f" {x:+6.3f}" for x in diff)
            + f" {de:+.3f}{'':8} {z:+5.1f}"
        )
    if eq_diffs:
        print(
            f"  cubeless equity: mean diff {sum(eq_diffs) / len(eq_diffs):+.4f}, mean |diff| "
            f"{sum(abs(d) for d in eq_diffs) / len(eq_diffs):.4f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--trials", type=int, default=TRIALS, help=f"nard's (default {TRIALS})")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--cases", default="*", help="glob of case names (default all)")
    parser.add_argument("--refresh", action="store_true", help="rerun gnubg's rollouts")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    cases = [c for c in CASES if fnmatch.fnmatch(c.name, args.cases)]
    gnubg = cached(list(CASES), args.refresh)["positions"]
    evaluator = load_evaluator()
    rows = []
    for case in cases:
        g = gnubg[case.name]
        n = nard_rollouts(case, args.trials, args.jobs, evaluator)
        rows.append({"case": case.name, "note": case.note, "gnubg": g, "nard": n})
        print(f"  {case.name}: {sum(n['seconds']):.0f} s", file=sys.stderr)
    if args.json:
        for r in rows:
            r["gnubg"] = {k: v for k, v in r["gnubg"].items() if k != "cube"} | {
                "cube": {k: v for k, v in r["gnubg"]["cube"].items() if k != "text"}
            }
        print(json.dumps(rows, indent=1))
        return 0
    print_report(rows, args.trials)
    return 0


if __name__ == "__main__":
    sys.exit(main())
