"""GNU Backgammon's Position ID, bit-exact with gnubg 1.07.

The 80-bit key lists the opponent's checkers first, then those of the side on
roll; for each side its points 1-24 (from its own side) and then its bar, each
as one 1-bit per checker followed by a 0-bit. Bit ``k`` is stored in byte
``k // 8`` at bit ``k % 8``; the 10 bytes are written in standard base64 with
the trailing ``==`` removed (14 characters).

>>> board_to_position_id(STARTING_BOARD)
'4HPwATDgc/ABMA'
"""

from __future__ import annotations

import base64
import binascii
import re

from nard.core.errors import InvalidPositionIdError

__all__ = ["STARTING_BOARD", "board_from_position_id", "board_to_position_id"]

STARTING_BOARD: tuple[int, ...] = (
    0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0,
)  # fmt: skip

_ID_CHARS = re.compile(r"[A-Za-z0-9+/]{14}")


_ONES = tuple((1 << n) - 1 for n in range(16))  # n checkers on a point: n 1-bits


def board_to_position_id(board: tuple[int, ...]) -> str:
    """The Position ID of a board seen from the side on roll."""
    ones = _ONES
    key = 0
    bit = 0
    for count in board[24:0:-1]:  # the opponent's points 1-24, from its side
        if count < 0:
            key |= ones[-count] << bit
            bit -= count
        bit += 1
    key |= ones[-board[0]] << bit  # the opponent's bar
    bit += 1 - board[0]
    for count in board[1:25]:  # the side on roll's points 1-24
        if count > 0:
            key |= ones[count] << bit
            bit += count
        bit += 1
    key |= ones[board[25]] << bit  # its bar
    return base64.b64encode(key.to_bytes(10, "little"))[:14].decode("ascii")


def board_from_position_id(position_id: str) -> tuple[int, ...]:
    """The board (seen from the side on roll) that a Position ID encodes.

    Raises :class:`InvalidPositionIdError` naming what is wrong.
    """
    if not isinstance(position_id, str):
        raise InvalidPositionIdError(f"Position ID must be a string, not {position_id!r}")
    text = position_id.strip()
    if not _ID_CHARS.fullmatch(text):
        raise InvalidPositionIdError(
            f"invalid Position ID {position_id!r}: expected 14 base64 characters"
        )
    try:
        raw = base64.b64decode(text + "==", validate=True)
    except (binascii.Error, ValueError) as exc:  # pragma: no cover - regex guards this
        raise InvalidPositionIdError(f"invalid Position ID {position_id!r}: {exc}") from exc
    key = int.from_bytes(raw, "little")
    sides: list[list[int]] = [[], []]
    bit = 0
    for side in sides:
        while len(side) < 25:
            count = 0
            while bit < 80 and (key >> bit) & 1:
                count += 1
                bit += 1
            if bit >= 80:
                raise InvalidPositionIdError(
                    f"invalid Position ID {position_id!r}: the key ends before both sides "
                    "are complete"
                )
            bit += 1  # the 0 that ends this point
            side.append(count)
        total = sum(side)
        if total > 15:
            who = "the opponent" if side is sides[0] else "the side on roll"
            raise InvalidPositionIdError(
                f"invalid Position ID {position_id!r}: {who} has {total} checkers (at most 15)"
            )
    if key >> bit:
        raise InvalidPositionIdError(
            f"invalid Position ID {position_id!r}: bits set after the end of the key"
        )
    opponent, on_roll = sides
    board = [0] * 26
    for p in range(1, 25):
        mine, theirs = on_roll[p - 1], opponent[24 - p]
        if mine and theirs:
            raise InvalidPositionIdError(
                f"invalid Position ID {position_id!r}: both sides have checkers on point {p}"
            )
        board[p] = mine - theirs
    board[25] = on_roll[24]
    board[0] = -opponent[24]
    return tuple(board)
