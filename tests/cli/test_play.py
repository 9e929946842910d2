"""The terminal game: full games driven through its input, and through a real pty."""

from __future__ import annotations

import os
import pty
import random
import select
import sys
import time

from nard.cli.play import TerminalGame
from nard.engine import HeuristicPlayer


def _autoplayer(game: TerminalGame, log: list[str]) -> None:
    """Make ``game`` read the first legal play each turn, after one illegal attempt."""
    attempts: dict[tuple[str, tuple[int, int]], int] = {}

    def read(prompt: str) -> str:
        assert game.dice is not None
        turn = (game.position.position_id(), game.dice)
        attempts[turn] = attempts.get(turn, 0) + 1
        if attempts[turn] == 1:
            return "24/1"  # never legal with two dice
        plays = game.position.legal_plays(game.dice)
        return game.position.format_play(plays[0])

    game.read = read
    game.write = log.append


def test_full_games_reach_a_result() -> None:
    for seed in range(5):
        log: list[str] = []
        game = TerminalGame(random.Random(seed), input, print, HeuristicPlayer())
        _autoplayer(game, log)
        result = game.play()
        assert result.points in (-3, -2, -1, 1, 2, 3)
        assert not result.resigned
        assert game.position.is_game_over()
        assert any(line.startswith("Not played: illegal play '24/1'") for line in log)
        assert any("Position ID:" in line for line in log)
        assert log[-1].startswith(("You win", "The computer wins"))


def test_help_moves_and_quit() -> None:
    log: list[str] = []
    answers = iter(["help", "moves", "board", "quit"])
    game = TerminalGame(random.Random(1), lambda _: next(answers), log.append, HeuristicPlayer())
    result = game.play()
    assert result.resigned and result.points == -1
    text = "\n".join(log)
    assert "standard notation" in text
    assert "Legal plays: " in text
    assert log[-1] == "You resign the game."


def test_end_of_input_resigns() -> None:
    def read(_: str) -> str:
        raise EOFError

    log: list[str] = []
    assert TerminalGame(random.Random(2), read, log.append, HeuristicPlayer()).play().resigned


def test_nard_play_in_a_pty() -> None:
    """Type into `nard play` on a real terminal: an illegal move, a list, then quit."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execv(sys.executable, [sys.executable, "-m", "nard.cli.main", "play", "--seed", "5"])
    out = b""

    def read_until(marker: bytes, timeout: float = 20.0) -> None:
        nonlocal out
        end = time.monotonic() + timeout
        while marker not in out and time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    out += os.read(fd, 4096)
                except OSError:
                    break
        assert marker in out, out.decode(errors="replace")[-2000:]

    read_until(b"Your play: ")
    os.write(fd, b"25/1\n")
    read_until(b"Not played")
    os.write(fd, b"moves\n")
    read_until(b"Legal plays: ")
    os.write(fd, b"quit\n")
    read_until(b"You resign the game.")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"Traceback" not in out


def test_a_full_game_against_the_shipped_network() -> None:
    """`nard play`'s default opponent: the engine with the weights in the package."""
    from nard.engine import Engine

    log: list[str] = []
    game = TerminalGame(random.Random(9), input, print, Engine(level="expert", seed=9))
    _autoplayer(game, log)
    result = game.play()
    assert result.points in (-3, -2, -1, 1, 2, 3) and game.position.is_game_over()
