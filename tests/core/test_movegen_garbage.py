"""Generating plays leaves no garbage in reference cycles.

The generator of doubles recurses through closures, and a closure that calls
itself holds itself through its cell: a cycle that only the garbage collector
frees. Each turn left dozens of such objects (cells, lists, tuples, functions) for
a server's young collections to walk; emptied at the end, they are freed at once.
"""

from __future__ import annotations

import gc

from nard.core import _movegen
from nard.core.position import Play, Position


def board(mine: dict[int, int], theirs: dict[int, int]) -> Position:
    b = [0] * 26
    for point, count in mine.items():
        b[point] = count
    for point, count in theirs.items():
        b[point] = -count
    return Position(tuple(b))


THEIRS = {1: 2, 12: 5, 17: 3, 19: 5}
POSITIONS = (
    Position(),  # no bar, checkers outside: the four-moves shortcut
    board({25: 1, 24: 1, 13: 5, 8: 3, 6: 5}, THEIRS),  # a checker on the bar
    board({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {24: 2, 13: 5, 8: 3, 6: 0, 19: 5}),  # bearing off
)


def test_generating_plays_leaves_no_cycles() -> None:
    gc.collect()
    gc.disable()
    try:
        made = 0
        for position in POSITIONS:
            for d1 in range(1, 7):
                for d2 in range(1, 7):
                    made += len(_movegen.generate(position, d1, d2, Position, Play))
        found = gc.collect()
    finally:
        gc.enable()
    assert made > 1000
    assert found == 0, f"{found} objects in reference cycles"
