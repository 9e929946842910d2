"""``nard analyse FILE``: every decision of a match record judged, and both players' figures."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path
from typing import TextIO

from nard.core.errors import NardError

__all__ = ["add_arguments", "cmd_analyse"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``nard analyse``'s options."""
    from nard.analysis import DEFAULT_PLIES

    parser.add_argument("file", metavar="FILE", help="a match record: .mat, .sgf or nard's .json")
    parser.add_argument(
        "--plies",
        type=int,
        choices=(0, 1, 2),
        default=DEFAULT_PLIES,
        help=f"search depth of the analysis (default {DEFAULT_PLIES})",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="worker processes (default: one per core)",
    )
    parser.add_argument("--json", action="store_true", help="print the analysis as JSON")
    parser.add_argument("--html", metavar="PAGE", help="also write a self-contained HTML report")
    parser.add_argument(
        "--all", action="store_true", help="list every decision, not only the marked ones"
    )
    parser.add_argument(
        "--weights", metavar="PATH", help="network weights (default: the bundled networks)"
    )
    parser.add_argument(
        "--no-crawford",
        action="store_true",
        help="the match was played without the Crawford rule (a .mat file cannot say so)",
    )
    parser.add_argument(
        "--no-cube",
        action="store_true",
        help="the games were played without the doubling cube (a .mat file cannot say so)",
    )
    parser.add_argument(
        "--progress",
        choices=("auto", "on", "off"),
        default="auto",
        help="progress bar on stderr (auto: when stderr is a terminal)",
    )


class _Bar:
    """A one-line progress bar on ``out``."""

    def __init__(self, out: TextIO, doing: str = "analysing", units: str = "turns") -> None:
        self.out = out
        self.doing = doing
        self.units = units
        self.start = time.monotonic()

    def __call__(self, done: int, total: int) -> None:
        width = 30
        filled = width * done // max(1, total)
        elapsed = time.monotonic() - self.start
        self.out.write(
            f"\r{self.doing} [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {self.units} "
            f"{elapsed:5.1f} s"
        )
        if done == total:
            self.out.write("\n")
        self.out.flush()


def cmd_analyse(args: argparse.Namespace) -> int:
    """Run ``nard analyse`` with parsed ``args``."""
    from nard.analysis import analyse
    from nard.analysis.report import html_report, text_report
    from nard.cli.records import load_record, write_file

    if args.jobs < 0:
        raise NardError(f"--jobs {args.jobs}: give 1 or more (0: one per core)")
    if args.weights is not None and not Path(args.weights).is_file():
        raise NardError(f"network weights {args.weights!r} not found")
    record, _ = load_record(args.file)
    if args.no_cube:
        record = dataclasses.replace(record, cube=False)
    jobs = args.jobs or os.cpu_count() or 1
    show = args.progress == "on" or (args.progress == "auto" and sys.stderr.isatty())
    result = analyse(
        record,
        args.plies,
        jobs=jobs,
        weights=args.weights,
        progress=_Bar(sys.stderr) if show else None,
        crawford=False if args.no_crawford else None,
    )
    if args.html:
        write_file(args.html, html_report(result))
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(text_report(result, all_decisions=args.all))
        if args.html:
            print(f"wrote {args.html}")
    return 0
