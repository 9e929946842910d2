"""A plain-text board diagram, drawn from the side on roll (``X``) against ``O``.

The home board of the side on roll is at the bottom right, as in gnubg's
default view, or at the bottom left (``home="left"``); both pip counts, the
bar and the borne-off checkers are shown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nard.core.position import Position

__all__ = ["draw"]

_ROWS = 5


def _cell(count: int, row: int) -> str:
    """Row ``row`` (0 = nearest the edge) of a point holding ``count`` checkers (signed)."""
    n = abs(count)
    mark = "X" if count > 0 else "O"
    if n > _ROWS and row == _ROWS - 1:
        return f"{n:>2} "
    return f" {mark} " if n > row else "   "


def draw(pos: Position, home: str = "right") -> str:
    """The diagram of ``pos``, the home board at the bottom ``right`` or ``left``.

    >>> from nard.core.position import Position
    >>> print(draw(Position()))  # doctest: +NORMALIZE_WHITESPACE
    Position ID: 4HPwATDgc/ABMA
     +13-14-15-16-17-18-+---+19-20-21-22-23-24-+
     | X           O    |   | O              X |
     | X           O    |   | O              X |
     | X           O    |   | O                |
     | X                |   | O                |
     | X                |   | O                |
     |                  |BAR|                  |
     | O                |   | X                |
     | O                |   | X                |
     | O           X    |   | X                |
     | O           X    |   | X              O |
     | O           X    |   | X              O |
     +12-11-10--9--8--7-+---+-6--5--4--3--2--1-+
    O (opponent): pips 167, on bar 0, off 0
    X (on roll):  pips 167, on bar 0, off 0
    >>> print(draw(Position(), home="left").splitlines()[-3])
     +-1--2--3--4--5--6-+---+-7--8--9-10-11-12-+
    """
    if home not in ("right", "left"):
        raise ValueError(f"home board {home!r}: 'right' or 'left'")
    b = pos.board
    top = list(range(13, 25))
    bottom = list(range(12, 0, -1))
    if home == "left":
        top.reverse()
        bottom.reverse()

    def line(points: list[int], row: int, bar: str) -> str:
        left = "".join(_cell(b[p], row) for p in points[:6])
        right = "".join(_cell(b[p], row) for p in points[6:])
        return f" |{left}|{bar}|{right}|"

    def bar_cell(count: int, mark: str, row: int) -> str:
        if count > _ROWS and row == _ROWS - 1:
            return f"{count:>2} "
        return f" {mark} " if count > row else "   "

    def edge(points: list[int]) -> str:
        left = "-".join(f"{p:>2}".replace(" ", "-") for p in points[:6])
        right = "-".join(f"{p:>2}".replace(" ", "-") for p in points[6:])
        return f" +{left}-+---+{right}-+"

    lines = [f"Position ID: {pos.position_id()}", edge(top)]
    for row in range(_ROWS):
        lines.append(line(top, row, bar_cell(-b[0], "O", row)))
    lines.append(" |                  |BAR|                  |")
    for row in reversed(range(_ROWS)):
        lines.append(line(bottom, row, bar_cell(b[25], "X", row)))
    lines.append(edge(bottom))
    mine, theirs = pos.pip_counts()
    lines.append(f"O (opponent): pips {theirs}, on bar {-b[0]}, off {pos.opponent_at(0)}")
    lines.append(f"X (on roll):  pips {mine}, on bar {b[25]}, off {pos.on_roll_at(0)}")
    return "\n".join(lines)
