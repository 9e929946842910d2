"""``nard external``: nard as an external player GNU Backgammon plays against.

gnubg's ``set player N external HOST:PORT`` makes gnubg connect to a socket and,
for each decision of that player, send a FIBS board line (``board:...``, as gnubg's
``FIBSBoard`` writes it: names, match length and score, the opponent's bar, the 24
points in the player's own numbering with its checkers positive and the
opponent's negative, the player's bar, whose turn, the dice, the cube, who may
double, whether a double is offered, checkers borne off, the Crawford game) and
read one line back: ``roll`` or ``double`` before a roll, ``take`` or ``drop``
when doubled, or the play (``24/18 18/13``, ``bar/22``, ``6/off``; an empty line
when the roll cannot be played: gnubg stops at anything it cannot read).

>>> board = parse_fibs_board(
...     "board:nard:gnubg:3:0:0:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:"
...     "1:3:1:3:1:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:0")
>>> board.position == Position(), board.dice, board.context.match_length
(True, (3, 1), 3)
"""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass
from typing import Any

from nard.cli.ubgi import ubgi_move
from nard.core.errors import NardError
from nard.core.position import Position
from nard.engine.cube import MAX_MATCH_LENGTH, CubeContext, CubeOwner

MAX_CUBE = 2**15
"""The largest cube a board line may hold (gnubg's own limit is far below it)."""

__all__ = ["FibsBoard", "answer", "cmd_external", "parse_fibs_board", "serve_gnubg"]


class FibsBoardError(NardError, ValueError):
    """A board line that is not gnubg's FIBS board."""


@dataclass(frozen=True)
class FibsBoard:
    """What a FIBS board line tells the player it is sent to."""

    position: Position
    """The board seen from the side on move (the doubler while a double is offered)."""
    dice: tuple[int, int] | None
    context: CubeContext
    doubled: bool
    """A double is offered: the player answers it (take, drop or beaver)."""


def parse_fibs_board(line: str) -> FibsBoard:
    """Read gnubg's FIBS board line (the module doc says its fields)."""
    fields = line.strip().split(":")
    if len(fields) < 52 or fields[0] != "board":
        raise FibsBoardError(f"not a FIBS board line: {line.strip()[:80]!r}")
    try:
        numbers = [int(f) for f in fields[3:]]
    except ValueError:
        raise FibsBoardError(f"a FIBS board has numbers after the names: {line[:80]!r}") from None
    length, score, opponent_score = numbers[0], numbers[1], numbers[2]
    points = numbers[3:29]  # the opponent's bar (<= 0), points 1-24, this player's bar
    board = [0] * 26
    board[0] = -abs(points[0])
    for k in range(1, 25):
        board[k] = points[k]
    board[25] = abs(points[25])
    rest = numbers[29:]
    # As gnubg reads its own lines (ExtFIBSBoard): the side on move is the positive
    # one when the turn field is positive, else the negative one; the first score is
    # the side on move's; the "may double" flags are the positive side's and the
    # negative side's.
    positive_moves = rest[0] > 0
    dice = (rest[1], rest[2]) if rest[1] and rest[2] else None
    if dice is None and rest[3] and rest[4]:
        dice = (rest[3], rest[4])
    cube, positive_may, negative_may, doubled = rest[5], rest[6], rest[7], rest[8]
    crawford = bool(rest[19]) if len(rest) > 19 else False
    _check_numbers(line, length, (score, opponent_score), dice, cube)
    mover_may, other_may = (
        (positive_may, negative_may) if positive_moves else (negative_may, positive_may)
    )
    if mover_may and not other_may:
        owner = CubeOwner.ON_ROLL
    elif other_may and not mover_may:
        owner = CubeOwner.OPPONENT
    else:
        owner = CubeOwner.CENTRED
    try:
        position = Position(board) if positive_moves else Position(board).flip()
        context = CubeContext(
            cube=max(1, cube),
            owner=owner,
            match_length=length,
            score=(score, opponent_score),
            crawford=crawford and length > 0,
        )
    except (NardError, ValueError) as exc:
        raise FibsBoardError(f"{exc} in {line.strip()[:80]!r}") from None
    return FibsBoard(position, dice, context, bool(doubled))


def _check_numbers(
    line: str, length: int, score: tuple[int, int], dice: tuple[int, int] | None, cube: int
) -> None:
    """The match length, score, dice and cube of a board line are ones a game can have
    (the engine took a die of 7 or a score of 600,000 and failed deep inside)."""
    problem = None
    if not 0 <= length <= MAX_MATCH_LENGTH:
        problem = f"match length {length} (0, money, or 1-{MAX_MATCH_LENGTH})"
    elif any(s < 0 or (length and s >= length) for s in score):
        problem = f"score {score[0]}-{score[1]} in a {length}-point match"
    elif dice is not None and not all(1 <= d <= 6 for d in dice):
        problem = f"dice {dice[0]}-{dice[1]}"
    elif cube > 1 and (cube & (cube - 1) or cube > MAX_CUBE):
        problem = f"cube {cube} (a power of 2 up to {MAX_CUBE})"
    if problem is not None:
        raise FibsBoardError(f"a FIBS board with no game's {problem}: {line.strip()[:80]!r}")


def answer(board: FibsBoard, engine: Any) -> str:
    """The line to send back: the engine's decision at this board."""
    if board.doubled:
        # The board is the doubler's: its cube decision says whether the taker takes.
        decision = engine.cube_action(board.position, board.context)
        return "take" if decision.take else "drop"
    if board.dice is not None:
        play = engine.best_play(board.position, board.dice, board.context)
        return "" if play is None else ubgi_move(play)  # gnubg takes an empty line as no play
    if board.context.can_double() and engine.doubles(board.position, board.context):
        return "double"
    return "roll"


def serve_gnubg(listener: socket.socket, engine: Any, log: Any = None) -> int:
    """Take one connection from gnubg on ``listener`` and answer every board it sends
    until it hangs up; the number of decisions made."""
    connection, _ = listener.accept()
    made = 0
    with connection, connection.makefile("rwb", buffering=0) as stream:
        while True:
            raw = stream.readline()
            if not raw:
                return made
            # gnubg writes its C strings with their terminating NUL
            line = raw.decode("ascii", "replace").replace("\x00", "").strip()
            if not line:
                continue
            try:
                reply = answer(parse_fibs_board(line), engine)
            except FibsBoardError as exc:
                if log is not None:
                    log(f"nard external: {exc}")
                reply = "roll"
            made += 1
            stream.write(reply.encode() + b"\n")


def cmd_external(host: str, port: int, level: str, weights: str | None = None) -> int:
    """``nard external``: listen on ``host:port`` for gnubg's external player
    connection and play for that player at ``level``."""
    from nard.engine import Engine

    engine = Engine(level, weights=weights, time_limit=None)
    with socket.create_server((host, port), reuse_port=False) as listener:
        print(f"nard external: waiting for gnubg on {host}:{port} (level {level})", flush=True)
        made = serve_gnubg(listener, engine, lambda text: print(text, file=sys.stderr))
    print(f"nard external: {made} decisions made", flush=True)
    return 0
