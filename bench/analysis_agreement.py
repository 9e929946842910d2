"""How closely ``nard analyse`` agrees with GNU Backgammon 2-ply, against gnubg's own 0-ply.

The matches are those gnubg played itself (``tests/data/gnubg_matches``: 57
matches and money sessions, some players with noise so that errors happen).
gnubg analyses each at 2 plies (the reference) and at 0 plies; nard analyses
each at ``--plies`` (default: ``nard analyse``'s default). Printed, for nard and
for gnubg 0-ply, against gnubg 2-ply:

- unforced moves per player: how many players' counts equal gnubg's;
- the mean absolute difference of per-player checker error rates (mEMG: equity
  lost per unforced move x1000);
- the share of gnubg 2-ply's checker errors of 0.04 or more to which the
  analysis gives 0.02 or more (decisions matched by game, Position ID and roll);
- the share of the analysis's own errors of 0.04 or more to which gnubg 2-ply
  gives 0.02 or more (errors it should not have found, the other way round);
- CPU seconds per match, nard at its depth against gnubg at the same depth
  (``time.process_time`` inside each process; nard in this process, one job).

The issue's bar (#29): nard at its default depth agrees with gnubg 2-ply at
least as well as gnubg 0-ply does, on the second and third figures.

gnubg's analyses are cached in ``bench/data/gnubg_analysis_{plies}ply.json``
(``--refresh`` recomputes them: about 10 minutes on two cores for 2-ply).

Run: ``.venv/bin/python bench/analysis_agreement.py [--plies N] [--matches GLOB] [--json]``
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from nard.analysis import DEFAULT_PLIES, Analyst, analyse  # noqa: E402
from nard.cli.records import load_record  # noqa: E402
from tests.gnubg_oracle import run_gnubg_script  # noqa: E402

MATCHES = ROOT / "tests" / "data" / "gnubg_matches"
CACHE = ROOT / "bench" / "data"
ERROR = 0.04
SEEN = 0.02

_SCRIPT = r"""
import gnubg, json, time
gnubg.command('set automatic game off')
gnubg.command('set display off')
gnubg.command('set threads 1')
for part in ('chequerplay', 'cubedecision'):
    gnubg.command('set analysis %s evaluation plies %d' % (part, PLIES))
    gnubg.command('set analysis %s evaluation prune on' % part)
for path in PATHS:
    gnubg.command('load match ' + path)
    start = time.process_time()
    gnubg.command('analyse match')
    cpu = time.process_time() - start
    m = gnubg.match(analysis=1, boards=1, statistics=1)
    moves = []
    for number, game in enumerate(m['games'], start=1):
        for a in game['game']:
            an = a.get('analysis') or {}
            if a.get('action') != 'move' or 'moves' not in an or 'imove' not in an:
                continue
            scores = [mv['score'] for mv in an['moves']]
            moves.append([number, 0 if a['player'] == 'X' else 1, a['board'],
                          sorted(a['dice'], reverse=True), scores[0] - scores[an['imove']],
                          len(scores)])
    stats = {}
    for key, seat in (('X', 0), ('O', 1)):
        s = m['stats'][key]
        stats[seat] = {'unforced': s['moves']['unforced-moves'],
                       'checker_error': s['moves']['error-skill'],
                       'close_cube': s['cube']['close-cube'],
                       'cube_error': s['cube']['error-skill']}
    print('NARD:' + json.dumps({'path': path, 'cpu': cpu, 'moves': moves, 'stats': stats}))
"""


def gnubg_analyses(paths: list[Path], plies: int, processes: int = 2) -> dict[str, Any]:
    """gnubg's analysis of each match at ``plies``, by file name."""
    groups = [paths[i::processes] for i in range(processes)]

    def run(group: list[Path]) -> list[str]:
        if not group:
            return []
        script = _SCRIPT.replace("PLIES", str(plies)).replace(
            "PATHS", json.dumps([str(p) for p in group])
        )
        return run_gnubg_script(script, timeout=3600)

    out: dict[str, Any] = {}
    with ThreadPoolExecutor(processes) as pool:
        for lines in pool.map(run, groups):
            for line in lines:
                row = json.loads(line)
                out[Path(row["path"]).name] = row
    return out


def cached(paths: list[Path], plies: int, refresh: bool) -> dict[str, Any]:
    file = CACHE / f"gnubg_analysis_{plies}ply.json"
    have: dict[str, Any] = {}
    if file.exists() and not refresh:
        have = json.loads(file.read_text())
    missing = [p for p in paths if p.name not in have]
    if missing:
        print(f"gnubg {plies}-ply: analysing {len(missing)} matches ...", file=sys.stderr)
        have.update(gnubg_analyses(missing, plies))
        CACHE.mkdir(exist_ok=True)
        file.write_text(json.dumps(have, separators=(",", ":"), sort_keys=True) + "\n")
    return {p.name: have[p.name] for p in paths}


def _rates(stats: dict[str, Any]) -> list[tuple[int, float]]:
    out = []
    for seat in ("0", "1"):
        s = stats[seat]
        n = s["unforced"]
        out.append((n, 1000.0 * s["checker_error"] / n if n else 0.0))
    return out


def _errors(moves: list[list[Any]]) -> dict[tuple[int, str, tuple[int, ...]], float]:
    return {(m[0], m[2], tuple(m[3])): m[4] for m in moves}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plies", type=int, default=DEFAULT_PLIES)
    parser.add_argument("--matches", default="*", help="glob of match names (default all)")
    parser.add_argument("--refresh", action="store_true", help="recompute gnubg's analyses")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    paths = sorted(p for p in MATCHES.glob("*.sgf") if fnmatch.fnmatch(p.stem, args.matches))
    reference = cached(paths, 2, args.refresh)
    shallow = cached(paths, 0, args.refresh)
    same_depth = reference if args.plies == 2 else cached(paths, args.plies, args.refresh)

    analyst = Analyst(args.plies)
    nard_cpu = 0.0
    counts = {"nard": [0, 0], "gnubg0": [0, 0]}
    seen = {"nard": [0, 0], "gnubg0": [0, 0]}
    confirmed = {"nard": [0, 0], "gnubg0": [0, 0]}
    diffs: dict[str, list[float]] = {"nard": [], "gnubg0": []}
    for path in paths:
        record, _ = load_record(str(path))
        start = time.process_time()
        result = analyse(record, args.plies, analyst=analyst)
        nard_cpu += time.process_time() - start
        ref = reference[path.name]
        ref_rates = _rates(ref["stats"])
        nard_rates = [(p.unforced_moves, p.checker_error_rate) for p in result.players]
        g0_rates = _rates(shallow[path.name]["stats"])
        for name, rates in (("nard", nard_rates), ("gnubg0", g0_rates)):
            for (n, rate), (n_ref, rate_ref) in zip(rates, ref_rates, strict=True):
                counts[name][0] += n == n_ref
                counts[name][1] += 1
                if n_ref:
                    diffs[name].append(abs(rate - rate_ref))
        ref_errors = _errors(ref["moves"])
        nard_errors = {
            (d.game, d.position_id, tuple(d.dice or ())): d.error
            for d in result.decisions
            if d.kind == "checker"
        }
        g0_errors = _errors(shallow[path.name]["moves"])
        for key, err in ref_errors.items():
            if err < ERROR:
                continue
            for name, found in (("nard", nard_errors), ("gnubg0", g0_errors)):
                seen[name][1] += 1
                seen[name][0] += found.get(key, 0.0) >= SEEN
        for name, found in (("nard", nard_errors), ("gnubg0", g0_errors)):
            for key, err in found.items():
                if err >= ERROR and key in ref_errors:
                    confirmed[name][1] += 1
                    confirmed[name][0] += ref_errors[key] >= SEEN
    gnubg_cpu = sum(same_depth[p.name]["cpu"] for p in paths)
    report = {
        "matches": len(paths),
        "plies": args.plies,
        "unforced_counts_equal": {k: f"{v[0]}/{v[1]}" for k, v in counts.items()},
        "checker_error_rate_mean_abs_diff": {
            k: round(sum(v) / len(v), 3) if v else None for k, v in diffs.items()
        },
        "gnubg2_errors_seen": {
            k: {"seen": v[0], "of": v[1], "share": round(v[0] / v[1], 3) if v[1] else None}
            for k, v in seen.items()
        },
        "errors_confirmed_by_gnubg2": {
            k: {"confirmed": v[0], "of": v[1], "share": round(v[0] / v[1], 3) if v[1] else None}
            for k, v in confirmed.items()
        },
        "cpu_seconds_per_match": {
            "nard": round(nard_cpu / len(paths), 3),
            f"gnubg_{args.plies}ply": round(gnubg_cpu / len(paths), 3),
            "ratio_nard_to_gnubg": round(nard_cpu / gnubg_cpu, 3) if gnubg_cpu else None,
        },
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{len(paths)} matches; nard at {args.plies} plies, gnubg 0-ply, against gnubg 2-ply")
    for name, label in (("nard", f"nard {args.plies}-ply"), ("gnubg0", "gnubg 0-ply")):
        share = report["gnubg2_errors_seen"][name]
        print(
            f"  {label:12} unforced counts equal {report['unforced_counts_equal'][name]:>8}  "
            f"|checker ER diff| {report['checker_error_rate_mean_abs_diff'][name]:6.3f} mEMG  "
            f"errors >= {ERROR} seen (>= {SEEN}) {share['seen']}/{share['of']} = {share['share']}"
        )
        conf = report["errors_confirmed_by_gnubg2"][name]
        print(
            f"  {'':12} its own errors >= {ERROR} that gnubg 2-ply gives >= {SEEN}: "
            f"{conf['confirmed']}/{conf['of']} = {conf['share']}"
        )
    cpu = report["cpu_seconds_per_match"]
    print(
        f"  CPU per match: nard {cpu['nard']:.2f} s, gnubg {args.plies}-ply "
        f"{cpu[f'gnubg_{args.plies}ply']:.2f} s, ratio {cpu['ratio_nard_to_gnubg']}"
    )


if __name__ == "__main__":
    main()
