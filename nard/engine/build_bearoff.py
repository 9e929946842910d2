"""``python -m nard.engine.build_bearoff --build PATH``: (re)build the bear-off database.

Deterministic: the same file, byte for byte, as the one shipped in
``nard/engine/data`` (see :mod:`nard.engine.bearoff`).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from nard.engine.bearoff import POSITIONS, build, default_path, write_npz

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m nard.engine.build_bearoff --build PATH``: compute and write the database."""
    parser = argparse.ArgumentParser(
        prog="python -m nard.engine.build_bearoff",
        description="Build nard's one-sided bear-off database.",
    )
    parser.add_argument(
        "--build",
        metavar="PATH",
        required=True,
        help=f"write the database here (the shipped one is {default_path()})",
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    tables = build()
    built = time.perf_counter() - start
    write_npz(tables, args.build)
    size = Path(args.build).stat().st_size
    print(
        f"{args.build}: {POSITIONS} sides, up to {tables.rolls.shape[1] - 1} rolls, "
        f"{size / 1e6:.2f} MB, built in {built:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
