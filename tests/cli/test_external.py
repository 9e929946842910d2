"""``nard external``: GNU Backgammon plays a match against nard as its external
player (gnubg's ``set player 0 external HOST:PORT``): every board gnubg sends is read,
every answer is taken, and the match gnubg records holds nard's plays, checked by
replaying gnubg's own ``.mat`` export through nard's rules."""

from __future__ import annotations

import re
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from nard.cli import external
from nard.cli.external import FibsBoardError, parse_fibs_board, serve_gnubg
from nard.core.position import Position
from nard.engine import Engine
from nard.match.replay import replay
from nard.notation import read_mat
from nard.notation.records import ActionKind
from tests.gnubg_oracle import GNUBG, requires_gnubg


@requires_gnubg
@pytest.mark.gnubg
def test_gnubg_plays_a_match_against_nard(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = Engine("expert", time_limit=None)
    sent: list[tuple[str, str]] = []
    answer = external.answer

    def recorded(board: external.FibsBoard, eng: Engine) -> str:
        reply = answer(board, eng)
        sent.append((board.position.position_id(), reply))
        return reply

    monkeypatch.setattr(external, "answer", recorded)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    made: list[int] = []
    server = threading.Thread(target=lambda: made.append(serve_gnubg(listener, engine)))
    server.start()
    record = tmp_path / "match.mat"
    script = "\n".join(
        [
            'set defaultnames "nard" "gnubg0"',
            f"set player 0 external 127.0.0.1:{port}",
            "set player 0 name nard",
            "set player 1 gnubg",
            "set player 1 name gnubg0",
            "set player 1 chequerplay evaluation plies 0",
            "set player 1 cubedecision evaluation plies 0",
            "set seed 11",
            "new match 3",
            f"export match mat {record}",
            "",
        ]
    )
    done = subprocess.run(
        [GNUBG, "-t", "-q"], input=script, capture_output=True, text=True, timeout=600
    )
    server.join(timeout=30)
    listener.close()
    assert "has won the match" in done.stdout, done.stdout[-2000:]
    assert made and made[0] == len(sent) > 10
    match = read_mat(record.read_text())
    replay(match)  # gnubg's record of the match is legal by nard's rules
    me = match.players.index("nard")
    plays = [
        a.play
        for game in match.games
        for a in game.actions
        if a.player == me and a.kind is ActionKind.MOVE and a.play
    ]
    moves = [reply for _, reply in sent if "/" in reply]
    assert all(reply in ("roll", "double", "take", "drop", "") or "/" in reply for _, reply in sent)
    assert len(plays) == len(moves) > 5  # every play nard sent was played, none dropped
    cube = [reply for _, reply in sent if reply in ("double", "take", "drop")]
    recorded_cube = [
        a.kind
        for game in match.games
        for a in game.actions
        if a.player == me and a.kind in (ActionKind.DOUBLE, ActionKind.TAKE, ActionKind.DROP)
    ]
    assert len(cube) == len(recorded_cube)


def test_a_board_line_is_read_from_the_side_on_move() -> None:
    """gnubg writes the board from player 1's side; the turn field says who moves."""
    line = (
        "board:nard:gnubg:5:1:3:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:"
        "-1:0:0:0:0:2:0:1:0:1:-1:0:25:0:0:0:0:0:0:0:0"
    )
    board = parse_fibs_board(line)
    assert board.position == Position()  # the opening position from either side
    ctx = board.context
    assert (ctx.match_length, ctx.score, ctx.cube, ctx.owner.value) == (5, (1, 3), 2, "on roll")
    for bad in ("hello", "board:a:b:x:0:0", "board:a:b:" + ":".join(["99"] * 50)):
        with pytest.raises(FibsBoardError):
            parse_fibs_board(bad)


BOARD = (
    "board:nard:gnubg:5:1:3:0:-2:0:0:0:0:5:0:3:0:0:0:-5:5:0:0:0:-3:0:-5:0:0:0:0:2:0:"
    "1:3:1:0:0:1:1:1:0:1:-1:0:25:0:0:0:0:0:0:0:0"
)
"""A 5-point match at 1-3, the opening position, 3-1 to play: fields 3-5 the length and
score, 33-34 the dice, 37 the cube."""


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        (34, "7", "dice 3-7"),  # a die of 7 failed in the engine (InvalidDiceError)
        (33, "-1", "dice -1-1"),
        (3, "65", "match length 65"),
        (3, "-3", "match length -3"),
        (4, "5", "score 5-3 in a 5-point match"),  # a score beyond the table: ValueError
        (5, "-1", "score 1--1"),
        (37, "3", "cube 3"),
        (37, str(2**16), "cube 65536"),
    ],
)
def test_a_board_line_with_numbers_no_game_has_is_refused(
    field: int, value: str, problem: str
) -> None:
    """Found by mutating board lines, each was taken as a game: the dice and the scores
    failed in the engine (a NardError that ended the session, a ValueError with a
    traceback), the rest were judged at a cube or match length no game has."""
    board = parse_fibs_board(BOARD)
    assert (board.dice, board.context.match_length, board.context.cube) == ((3, 1), 5, 1)
    fields = BOARD.split(":")
    fields[field] = value
    with pytest.raises(FibsBoardError, match=f"no game's {re.escape(problem)}"):
        parse_fibs_board(":".join(fields))
