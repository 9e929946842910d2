"""The roller's cube decisions against GNU Backgammon's rollouts of the same positions.

The 13 positions of ``bench/rollout_agreement.py`` (near the doubling window;
money, and 7-point match scores up to the Crawford game and a dead cube), whose
gnubg cubeful rollouts (1,296 trials) are cached in
``bench/data/gnubg_rollouts.json``, are put to nard's cube analysis at world
class (2-ply) and at the roller level (the same, with a close decision decided
again on probabilities rolled out from the position, :data:`ROLLER_CUBE_WINDOW`).
For each it prints no double (ND) and double/take (DT) against gnubg's, the
verdicts, and over all positions the root mean square of the differences. The
roller runs without a time limit (its full plan of trials), so the figures do not
depend on the machine. gnubg is the judge of a benchmark, never a source of
training targets.

Run: ``.venv/bin/python bench/roller_cube.py``
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nard.core.position import Position  # noqa: E402
from nard.engine import Engine  # noqa: E402
from nard.engine.cube import match_context  # noqa: E402
from nard.notation.match_id import MatchState  # noqa: E402

CACHE = ROOT / "bench" / "data" / "gnubg_rollouts.json"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    cached = json.loads(CACHE.read_text())["positions"]
    engines = {
        "world-class": Engine("world-class", time_limit=None),
        "roller": Engine("roller", time_limit=None),
    }
    rows = []
    for name, case in cached.items():
        if "cube" not in case:
            continue
        gnubg = case["cube"]
        position = Position.from_position_id(case["position_id"])
        ctx = match_context(MatchState.from_match_id(case["match_id"]))
        if not ctx.can_double():
            continue
        row = {"case": name, "gnubg": [gnubg["no_double"], gnubg["double_take"], gnubg["action"]]}
        for level, engine in engines.items():
            start = time.process_time()
            decision = engine.cube_analysis(position, ctx)[2]
            row[level] = [decision.no_double, decision.double_take, decision.action]
            row[level + "_cpu"] = time.process_time() - start
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'case':<22} {'gnubg ND/DT':>16} {'world class':>16} {'roller':>16}  verdicts")
    for row in rows:
        shown = [f"{row[k][0]:+.3f}/{row[k][1]:+.3f}" for k in ("gnubg", *engines)]
        same = ["=" if row[k][2] == row["gnubg"][2] else "x" for k in engines]
        print(f"{row['case']:<22} {shown[0]:>16} {shown[1]:>16} {shown[2]:>16}  {' '.join(same)}")
    for level in engines:
        nd = [row[level][0] - row["gnubg"][0] for row in rows]
        dt = [row[level][1] - row["gnubg"][1] for row in rows]
        agree = sum(row[level][2] == row["gnubg"][2] for row in rows)
        cpu = sum(row[level + "_cpu"] for row in rows) / len(rows)
        print(
            f"{level}: rms ND {math.sqrt(sum(d * d for d in nd) / len(nd)):.3f}, "
            f"DT {math.sqrt(sum(d * d for d in dt) / len(dt)):.3f}; "
            f"verdicts as gnubg's {agree}/{len(rows)}; {cpu:.2f} s CPU a decision"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
