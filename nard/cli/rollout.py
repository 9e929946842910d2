"""``nard rollout POSITION[:MATCH] [DICE]``: a roll's candidate plays, or the cube, rolled out."""

from __future__ import annotations

import argparse
import json
import os
import sys

from nard.core.errors import NardError

__all__ = ["add_arguments", "cmd_rollout"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``nard rollout``'s options."""
    from nard.analysis.rollout import RolloutSettings

    default = RolloutSettings()
    parser.add_argument(
        "position_id",
        metavar="POSITION",
        help="a Position ID, POSITION_ID:MATCH_ID or an XGID (the cube and score from it)",
    )
    parser.add_argument(
        "dice", metavar="DICE", nargs="?", help="the roll (default: the Match ID's; none: the cube)"
    )
    parser.add_argument(
        "--trials", type=int, default=default.trials, help=f"default {default.trials}"
    )
    parser.add_argument(
        "--truncate",
        type=int,
        default=default.truncate,
        help=f"turns per trial before the 1-ply evaluation closes it (default {default.truncate})",
    )
    parser.add_argument("--seed", type=int, default=default.seed, help="dice seed (default 1)")
    parser.add_argument(
        "--candidates",
        type=int,
        default=default.candidates,
        help=f"plays rolled out at most (default {default.candidates})",
    )
    parser.add_argument(
        "--window",
        type=float,
        default=default.window,
        help=f"candidates within this equity of the best at 1-ply (default {default.window})",
    )
    parser.add_argument(
        "--stop",
        type=float,
        default=None,
        metavar="Z",
        help="stop once the best leads every other by Z standard errors",
    )
    parser.add_argument(
        "--cubeful",
        action="store_true",
        help="turn the cube inside the trials (default: cubeless trials, the cube at the root)",
    )
    parser.add_argument(
        "--jobs", type=int, default=0, metavar="N", help="worker processes (default: one per core)"
    )
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="run on Ray: a cluster's address (auto, ray://host:10001) or local",
    )
    parser.add_argument("--weights", metavar="PATH", help="network weights")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--progress", choices=("auto", "on", "off"), default="auto", help="progress bar on stderr"
    )


def cmd_rollout(args: argparse.Namespace) -> int:
    """Run ``nard rollout`` with parsed ``args``."""
    from nard.analysis.rollout import RolloutSettings, rollout_cube, rollout_plays
    from nard.cli.analyse import _Bar
    from nard.core import parse_dice
    from nard.engine.cube import written_context
    from nard.notation.positions import read_written_position

    if args.jobs < 0:
        raise NardError(f"--jobs {args.jobs}: give 1 or more (0: one per core)")
    settings = RolloutSettings(
        trials=args.trials,
        truncate=args.truncate,
        seed=args.seed,
        candidates=args.candidates,
        window=args.window,
        stop=args.stop,
        cubeful=args.cubeful,
    )
    written = read_written_position(args.position_id)
    position, match = written.position, written.match
    if position.is_game_over():
        raise NardError(f"the game of {args.position_id!r} is over: there is nothing to roll out")
    dice = parse_dice(args.dice) if args.dice else (match.dice if match is not None else None)
    ctx = written_context(written)
    jobs = args.jobs or os.cpu_count() or 1
    show = args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty())
    bar = _Bar(sys.stderr, "rolling out", "trials") if show else None
    common = {"weights": args.weights, "jobs": jobs, "ray_address": args.ray, "progress": bar}
    if dice is not None:
        plays = rollout_plays(position, dice, ctx, settings, **common)
        if args.json:
            print(json.dumps(plays.to_json()))
            return 0
        kind = "cubeful" if settings.cubeful else "cubeless"
        print(
            f"Rollout ({kind}) of {plays.dice[0]}-{plays.dice[1]} in {plays.position_id}: "
            f"{plays.trials} trials, truncated at {plays.truncate} turns, seed {plays.seed}"
            + (" (stopped early: the best is clear)" if plays.stopped_early else "")
        )
        best = plays.candidates[0].cubeful
        for i, c in enumerate(plays.candidates, start=1):
            diff = "" if i == 1 else f" ({c.cubeful - best:+.3f})"
            if c.probabilities is None or c.cubeless is None:
                print(f"{i:>3}. {c.name:<28} eq {c.cubeful:+.3f}{diff} +- {c.standard_error:.3f}")
                continue
            w, wg, wbg, lg, lbg = c.probabilities
            print(
                f"{i:>3}. {c.name:<28} eq {c.cubeful:+.3f}{diff}  cubeless {c.cubeless:+.3f}"
                f" +- {c.standard_error:.3f}"
            )
            print(f"     {w:.3f} {wg:.3f} {wbg:.3f} - {1 - w:.3f} {lg:.3f} {lbg:.3f}")
        return 0
    cube = rollout_cube(position, ctx, settings, **common)
    if args.json:
        print(json.dumps(cube.to_json()))
        return 0
    d = cube.decision
    print(
        f"Cube rollout ({'cubeful' if settings.cubeful else 'cubeless'}) of "
        f"{cube.position_id}: {cube.trials} trials, truncated at {cube.truncate} turns, "
        f"seed {cube.seed}"
    )
    here = cube.position
    if here.probabilities is not None and here.cubeless is not None:
        w, wg, wbg, lg, lbg = here.probabilities
        print(f"  cubeless equity {here.cubeless:+.3f} +- {here.standard_error:.3f}")
        print(f"  {w:.3f} {wg:.3f} {wbg:.3f} - {1 - w:.3f} {lg:.3f} {lbg:.3f}")
    else:
        print(f"  no double +- {here.standard_error:.3f}")
    print(f"  no double     {d.no_double:+.3f}")
    print(f"  double, take  {d.double_take:+.3f}")
    print(f"  double, pass  {d.double_pass:+.3f}")
    print(f"  proper cube action: {d.action}")
    return 0
