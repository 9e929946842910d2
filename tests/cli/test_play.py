"""The terminal game: whole sessions and matches driven through its input, and a real pty."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from nard.cli.main import main
from nard.cli.play import Seat, TerminalTable, make_games, rules_from_text
from nard.cli.records import load_record
from nard.engine import Engine, HeuristicPlayer
from nard.engine.evaluator import FakeEvaluator
from nard.match import Match, MoneyRules, ResultKind, SeededDice, Session
from nard.match.replay import resume
from nard.notation.records import ActionKind

Script = Callable[[TerminalTable, str], str]


def _person(table: TerminalTable, prompt: str) -> str:
    """A scripted person: rolls, takes, confirms, and plays the first legal play after
    one illegal attempt per turn."""
    game = table.game
    assert game is not None
    if prompt.endswith("roll or double> "):
        return ""
    if "take" in prompt:
        return "take"
    if prompt.endswith("confirm or undo> "):
        return ""
    if prompt.endswith("accept or reject> "):
        return "accept"
    assert prompt.endswith("play> "), prompt
    assert game.dice is not None
    key = (game.position.position_id(), game.dice)
    tried = _person.__dict__.setdefault("tried", set())
    if key not in tried:
        tried.add(key)
        return "24/1"  # never legal with two dice
    return game.position.format_play(game.legal_plays()[0])


def _table(
    games: Match | Session, seats: tuple[Seat, Seat], script: Script = _person
) -> tuple[TerminalTable, list[str]]:
    log: list[str] = []
    table = TerminalTable(games, seats, lambda p: "", log.append)
    table.read = lambda prompt: script(table, prompt)
    return table, log


def test_money_games_against_a_player_reach_a_result() -> None:
    for seed in range(3):
        session = Session(dice=SeededDice(seed))
        table, log = _table(session, (Seat("Ann"), Seat("Computer", HeuristicPlayer())))
        result = table.play()
        assert result.games == 1 and result.quit_by is None
        assert sum(abs(s) for s in result.score) >= 1
        assert any(line.startswith("Not played: illegal play '24/1'") for line in log)
        assert any("Position ID:" in line for line in log)
        assert any(line.startswith("cube 1 in the centre; score Ann 0") for line in log)
        assert log[-2].startswith(("Ann wins", "Computer wins"))
        assert log[-1].startswith("Session over after 1 game: Ann won ")


def test_a_match_with_the_cube_against_the_engine() -> None:
    """A 3-point match: the person doubles whenever allowed; the engine answers,
    doubles and plays with the match score."""

    def doubler(table: TerminalTable, prompt: str) -> str:
        if prompt.endswith("roll or double> "):
            return "double"
        return _person(table, prompt)

    match = Match(3, dice=SeededDice(4))
    engine = Engine("expert", evaluator=FakeEvaluator(), seed=4)
    table, log = _table(match, (Seat("Ann"), Seat("Computer", engine)), doubler)
    result = table.play()
    assert match.is_over and max(result.score) >= 3
    assert result.games == len(match.games) >= 1
    assert any(line == "Ann doubles to 2." for line in log)
    assert any(line.startswith("Computer takes") or line == "Computer passes." for line in log)
    assert log[-1].startswith(("Ann wins the 3-point match", "Computer wins the 3-point match"))
    kinds = {a.kind for g in match.games for a in g.actions}
    assert ActionKind.DOUBLE in kinds


def test_undo_takes_a_play_back_before_it_counts() -> None:
    typed: list[str] = []

    def undoer(table: TerminalTable, prompt: str) -> str:
        game = table.game
        assert game is not None
        if prompt.endswith("play> "):
            plays = game.legal_plays()
            # First the last play listed, taken back; then the first, confirmed.
            answer = game.position.format_play(plays[-1] if not typed else plays[0])
            typed.append(answer)
            return answer
        if prompt.endswith("confirm or undo> "):
            if len(typed) == 1:
                return "undo"
            raise EOFError  # stop after the first confirmed play
        return _person(table, prompt)

    session = Session(dice=SeededDice(11))
    two = (Seat("Player 1"), Seat("Player 2"))
    table, log = _table(session, two, undoer)
    result = table.play()
    assert result.quit_by is not None
    assert "Taken back." in log
    game = session.games[0]
    assert not any(a.kind is ActionKind.MOVE for a in game.actions)  # none confirmed yet
    assert typed[0] != typed[1]


def test_two_players_double_and_pass() -> None:
    def script(table: TerminalTable, prompt: str) -> str:
        game = table.game
        assert game is not None
        moves = sum(a.kind is ActionKind.MOVE for a in game.actions)
        if prompt.endswith("roll or double> "):
            return "double" if moves >= 2 else ""
        if "take" in prompt:
            return "pass"
        return _person(table, prompt)

    session = Session(MoneyRules(), SeededDice(3))
    table, log = _table(session, (Seat("Player 1"), Seat("Player 2")), script)
    result = table.play()
    game = session.games[0]
    assert game.result is not None and game.result.kind is ResultKind.PASS
    assert game.result.points == 1 and sorted(result.score) == [0, 1]
    assert any(line.endswith("passes.") for line in log)


def test_resignation_is_answered_by_the_engine() -> None:
    def resigner(table: TerminalTable, prompt: str) -> str:
        if prompt.endswith("play> "):
            return "resign 3"
        return _person(table, prompt)

    session = Session(dice=SeededDice(2))
    engine = Engine("expert", evaluator=FakeEvaluator())
    table, log = _table(session, (Seat("Ann"), Seat("Computer", engine)), resigner)
    result = table.play()
    game = session.games[0]
    assert game.result is not None and game.result.kind is ResultKind.RESIGN
    assert game.result.points == 3 and result.score in ((0, 3), (3, 0))
    assert "Ann offers to resign 3 x cube." in log


def test_help_moves_board_hint_and_quit() -> None:
    answers = iter(["help", "moves", "board", "hint", "nonsense", "quit"])

    def script(table: TerminalTable, prompt: str) -> str:
        if prompt.endswith("play> "):
            return next(answers)
        return _person(table, prompt)

    engine = Engine("expert", evaluator=FakeEvaluator())
    session = Session(dice=SeededDice(1))
    table, log = _table(session, (Seat("Ann"), Seat("Computer", engine)), script)
    result = table.play()
    text = "\n".join(log)
    assert result.quit_by == 0 and session.games[0].result is None
    assert "standard notation" in text
    assert "Legal plays: " in text
    assert "  1. " in text and "With the cube and score: " in text
    assert "Not played: " in text
    assert log[-2:] == ["Ann stops here.", "Session total: Ann won 0, Computer 0; even."]


def test_end_of_input_stops() -> None:
    def read(_: TerminalTable, prompt: str) -> str:
        raise EOFError

    table, _ = _table(Session(dice=SeededDice(2)), (Seat("A"), Seat("B", HeuristicPlayer())), read)
    assert table.play().quit_by is not None


def test_a_table_needs_two_seats() -> None:
    with pytest.raises(ValueError, match="two seats"):
        TerminalTable(Session(), [Seat("A")], input, print)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--match", "0x"], "invalid int"),
        (["--match", "99"], "1-64"),
        (["--match", "65"], "1-64"),
        (["--games", "0"], "games"),
    ],
)
def test_bad_play_arguments_give_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = None
    try:
        code = main(["play", *args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_nard_play_a_26_point_match_against_the_computer(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`nard play --match 26`: the computer's plays and cube decisions read the
    match equity table beyond 25 points (a traceback before it was extended)."""
    out: list[str] = []
    played = 0
    seen = [0]  # lines of output read before the last "moves"

    def person(prompt: str) -> str:
        nonlocal played
        out.extend(capsys.readouterr().out.splitlines())
        if prompt.endswith("play> "):
            if played >= 3:
                return "quit"
            listed = [n for n, line in enumerate(out) if line.startswith("Legal plays: ")]
            if listed and listed[-1] >= seen[0]:  # the list asked for last time
                played += 1
                seen[0] = len(out)
                return out[listed[-1]].removeprefix("Legal plays: ").split(",")[0]
            seen[0] = len(out)
            return "moves"
        if prompt.endswith(("roll or double> ", "confirm or undo> ")):
            return ""
        if "take" in prompt:
            return "take"
        return "accept" if prompt.endswith("accept or reject> ") else "quit"

    monkeypatch.setenv("LOGNAME", "Ann")
    monkeypatch.setattr("builtins.input", person)
    assert main(["play", "--match", "26", "--seed", "3"]) == 0
    captured = capsys.readouterr()
    out.extend(captured.out.splitlines())
    assert "Traceback" not in captured.err and not captured.err
    assert out[0].startswith("nard: a 26-point match, against the computer (expert)")
    assert played == 3 and out[-1] == "Ann stops here."
    # The computer moved after each of Ann's plays: each turn began with its cube decision.
    moves = [line for line in out if line.startswith("Computer: ")]
    assert len(moves) >= 3


def test_nard_play_in_a_pty() -> None:
    """Type into `nard play` on a real terminal: an illegal move, a list, then quit."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the child
        os.execve(
            sys.executable,
            [sys.executable, "-m", "nard.cli.main", "play", "--seed", "5", "--match", "3"],
            {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
            | {"USER": "Ann", "LOGNAME": "Ann"},
        )
    out = b""

    def read_until(marker: bytes, timeout: float = 30.0) -> None:
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

    read_until(b"Ann, play> ")
    assert b"a 3-point match, against the computer (expert)" in out
    assert b"\x1b[1;33mX\x1b[0m (Ann)" in out  # the checkers in colour on a terminal
    os.write(fd, b"25/1\n")
    read_until(b"Not played")
    os.write(fd, b"moves\n")
    read_until(b"Legal plays: ")
    os.write(fd, b"quit\n")
    read_until(b"Ann stops here.")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    assert b"Traceback" not in out


def test_a_money_game_against_the_shipped_network() -> None:
    """`nard play`'s default opponent: the engine with the weights in the package."""
    session = Session(dice=SeededDice(9))
    table, _ = _table(session, (Seat("Ann"), Seat("Computer", Engine("expert", seed=9))))
    result = table.play()
    assert result.quit_by is None and session.games[0].result is not None


def test_a_one_point_match_is_played_without_the_cube() -> None:
    match = Match(1, dice=SeededDice(6))
    table, log = _table(match, (Seat("Ann"), Seat("Computer", HeuristicPlayer())))
    result = table.play()
    assert match.is_over and result.games == 1
    # Played without the cube, yet no Crawford game: nobody reached 0 points from 1.
    assert log[0] == "Game 1 of a 1-point match: Ann 0, Computer 0 (no cube)."
    assert any(line.startswith("cube off; score Ann 0") for line in log)
    assert not any("doubles" in line for line in log)


def test_the_home_board_can_be_drawn_on_the_left() -> None:
    session = Session(dice=SeededDice(1))
    log: list[str] = []
    table = TerminalTable(
        session,
        (Seat("Ann"), Seat("Computer", HeuristicPlayer())),
        lambda p: "",
        log.append,
        home="left",
    )
    table.read = lambda prompt: _person(table, prompt)
    table.play()
    boards = [line for line in log if "Position ID:" in line]
    assert boards and all(" +24-23-22-21-20-19-+" in board for board in boards)
    assert all(" +-1--2--3--4--5--6-+" in board for board in boards)
    with pytest.raises(ValueError, match="'up'"):
        TerminalTable(session, (Seat("A"), Seat("B")), input, print, home="up")


def test_every_command_works_at_the_confirmation_prompt() -> None:
    """Issue 28: at "Enter to confirm or undo" anything but undo used to confirm the
    pending play (a corrected play or hint played the old one silently) and resign
    ended the program with a traceback. Now a play typed there replaces the pending
    one, hint and moves answer and ask again, a stray word is refused, and only
    Enter confirms."""
    answers: list[str] = []
    shown: list[str] = []

    def script(table: TerminalTable, prompt: str) -> str:
        game = table.game
        assert game is not None
        if prompt.endswith("play> "):
            plays = game.legal_plays()
            if len(answers) >= 6:
                raise EOFError  # one turn is enough
            return game.position.format_play(plays[-1])
        if prompt.endswith("confirm or undo> "):
            plays = game.legal_plays()
            step = ["hint", "moves", "roll", "24/1", game.position.format_play(plays[0]), ""]
            answer = step[len(answers)]
            answers.append(answer)
            shown.append(game.position.position_id())
            return answer
        return _person(table, prompt)

    session = Session(dice=SeededDice(11))
    engine = Engine("expert", evaluator=FakeEvaluator(), seed=1)
    log: list[str] = []
    table = TerminalTable(session, (Seat("Ann"), Seat("Bob")), str, log.append, hints=engine)
    table.read = lambda prompt: script(table, prompt)
    table.play()
    game = session.games[0]
    moves = [a for a in game.actions if a.kind is ActionKind.MOVE]
    assert moves, "the play was never confirmed"
    first = moves[0]
    assert answers[-1] == "" and first.play == answers[4]  # the play typed at the prompt
    assert any(line.startswith("Legal plays: ") for line in log)
    assert any(line.startswith("Enter confirms ") for line in log)  # "roll" is no answer here
    assert any(line.startswith("Still ") for line in log)  # '24/1' is not legal


def test_resigning_at_the_confirmation_prompt_is_an_offer_not_a_crash() -> None:
    def script(table: TerminalTable, prompt: str) -> str:
        game = table.game
        assert game is not None
        if prompt.endswith("confirm or undo> "):
            return "resign"
        if prompt.endswith("accept or reject> "):
            return "accept"
        return _person(table, prompt)

    session = Session(dice=SeededDice(3))
    table, log = _table(session, (Seat("Ann"), Seat("Bob")), script)
    result = table.play()
    assert result.quit_by is None and result.games == 1
    game = session.games[0]
    assert game.result is not None and game.result.kind is ResultKind.RESIGN
    assert not any(a.kind is ActionKind.MOVE for a in game.actions[-2:])
    assert any("offers to resign 1 x cube" in line for line in log)


def test_the_legal_plays_break_between_plays_and_a_session_has_a_total() -> None:
    """Issue 28: the ``moves`` list wrapped in the middle of a play, and a money
    session ended without its total."""
    asked: list[str] = []

    def script(table: TerminalTable, prompt: str) -> str:
        game = table.game
        assert game is not None
        if prompt.endswith("play> ") and len(game.legal_plays()) > 12 and not asked:
            asked.append("moves")
            return "moves"
        return _person(table, prompt)

    session = Session(dice=SeededDice(5))
    table, log = _table(session, (Seat("Ann"), Seat("Computer", HeuristicPlayer())), script)
    table.money_games = 2
    result = table.play()
    listing = next(line for line in log if line.startswith("Legal plays: "))
    lines = listing.split("\n")
    assert len(lines) > 1 and all(len(line) <= 78 for line in lines)
    for line in lines:  # every line holds whole plays: "a/b c/d," ...
        for text in line.removeprefix("Legal plays:").rstrip(",").split(","):
            text = text.strip().split(" (")[0]
            assert text and all(part.count("/") >= 1 for part in text.split()), line
    a, b = result.score
    ahead = "even" if a == b else f"{'Ann' if a > b else 'Computer'} is up {abs(a - b)} point"
    assert log[-1].startswith(f"Session over after 2 games: Ann won {a}, Computer {b}; {ahead}")


class Terminal:
    """``nard`` on a real pseudo-terminal: what it wrote, what to type."""

    def __init__(self, *args: str) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # pragma: no cover - the child
            os.execve(
                sys.executable,
                [sys.executable, "-m", "nard.cli.main", *args],
                {k: v for k, v in os.environ.items() if k != "NO_COLOR"} | {"LOGNAME": "Ann"},
            )
        self.out = b""

    def read_until(self, marker: bytes, timeout: float = 60.0) -> bytes:
        end = time.monotonic() + timeout
        while marker not in self.out and time.monotonic() < end:
            ready, _, _ = select.select([self.fd], [], [], 0.2)
            if ready:
                try:
                    self.out += os.read(self.fd, 4096)
                except OSError:
                    break
        assert marker in self.out, self.out.decode(errors="replace")[-2000:]
        return self.out

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\n")

    def exit_code(self) -> int:
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


def last_roll(out: bytes, name: str) -> bytes:
    rolls = re.findall(name.encode() + rb" to play (\d-\d)\.", out)
    assert rolls, out.decode(errors="replace")[-1500:]
    return bytes(rolls[-1])


def test_a_match_saved_quit_and_resumed_in_a_pty(tmp_path: Path) -> None:
    """Names, rule options, the IDs on the board, save on request and at exit, and
    --resume going on with the same roll: tried on 2026-12-05, none of it existed."""
    saved = tmp_path / "match.json"
    first = Terminal(
        "play", "--seed", "5", "--match", "5", "--name", "Sara", "--opponent", "Bot",
        "--no-crawford", "--save", str(saved),
    )  # fmt: skip
    out = first.read_until(b"Sara, play> ")
    assert b" (Sara): pips" in out and b" (Bot): pips" in out
    assert re.search(rb"Match ID: [A-Za-z0-9+/]{12}  XGID=[-a-oA-O]{26}:", out)
    roll = last_roll(out, "Sara")
    first.type(f"save {tmp_path / 'copy.mat'}")
    first.read_until(b"Saved to ")
    first.type("quit")
    first.read_until(b"Sara stops here.")
    assert first.exit_code() == 0
    record = json.loads(saved.read_text())
    assert record["players"] == ["Sara", "Bot"] and record["match_length"] == 5
    assert "crawford=0" in record["metadata"]["nard-rules"]
    assert (tmp_path / "copy.mat").read_text().count("Sara") >= 1

    again = Terminal("play", "--resume", str(saved), "--seed", "77")
    out = again.read_until(b"Sara, play> ")
    assert b"Resuming " in out and b" (Bot): pips" in out
    assert last_roll(out, "Sara") == roll  # the roll made before saving, not a new one
    again.type("quit")
    again.read_until(b"Sara stops here.")
    assert again.exit_code() == 0
    assert b"Traceback" not in first.out + again.out


@pytest.mark.parametrize("suffix", ["json", "mat", "sgf"])
def test_a_match_saved_mid_turn_resumes_in_each_format(tmp_path: Path, suffix: str) -> None:
    rules: dict[str, object] = {"crawford": False, "backgammon": 2}
    games = make_games(5, rules, SeededDice(3))
    plays = [0]

    def person(table: TerminalTable, prompt: str) -> str:
        if prompt.endswith("play> "):
            plays[0] += 1
            if plays[0] > 3:
                return "quit"
            game = table.game
            assert game is not None
            return game.position.format_play(game.legal_plays()[0])
        return "take" if "take" in prompt else ""

    path = tmp_path / f"saved.{suffix}"
    table = TerminalTable(
        games,
        (Seat("Ann"), Seat("Bot", HeuristicPlayer())),
        lambda p: "",
        lambda s: None,
        save_to=path,
        rules=rules,
    )
    table.read = lambda prompt: person(table, prompt)
    table.play()
    assert table.game is not None and table.game.dice is not None
    record, _ = load_record(str(path), allow_unfinished=True)
    again = make_games(5, rules, SeededDice(4))
    game = resume(record, again)
    assert game is not None and game.dice == table.game.dice
    assert game.position == table.game.position
    if suffix != "sgf":  # SGF keeps only its own root properties
        assert rules_from_text(record.metadata["nard-rules"], "") == rules


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--resume", "/nonexistent/match.json"], "cannot read"),
        (["--name", "A", "--name", "B"], "two with --two-players"),
        (["--match", "5", "--jacoby"], "money rules"),
        (["--crawford-off"], "unrecognized arguments"),
        (["--name", "Computer"], "both players are named"),
    ],
)
def test_bad_options_of_nard_play_give_one_line(
    args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["play", *args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err, err
