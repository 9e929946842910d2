"""``nard play``: backgammon in the terminal, with the cube, money or a match.

Against the computer (an :class:`~nard.engine.Engine` at any level, which
plays, doubles, takes and answers resignations) or two people at one
keyboard. The rules are :mod:`nard.match`'s: a :class:`~nard.match.Match` to
N points (Crawford rule) or a money :class:`~nard.match.Session`, every game
started with its opening roll from a seeded dice source.

Plays are typed in standard notation and shown on the board before they
count: Enter confirms, ``undo`` takes the play back ("until the dice are
picked up"). Other commands: ``double``, ``take``, ``pass``, ``beaver``,
``hint``, ``moves``, ``board``, ``save [FILE]``, ``resign [1|2|3]``,
``quit``, ``help``. The board shows the position's Position ID, Match ID and
XGID. The match is saved on request, after every game and at the end (or on
quitting) to its save file (``.mat``, ``.sgf`` or ``.json``), from which
``nard play --resume FILE`` goes on where it stopped (a roll not yet played
included). Input and output are injected so tests can drive whole matches.
"""

from __future__ import annotations

import dataclasses
import getpass
import os
import random
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from nard.computer import computer_command, cube_context
from nard.core import NardError, Play, Position
from nard.core.diagram import draw
from nard.engine import Engine, Player
from nard.engine.cube import CubeContext
from nard.match import (
    Decision,
    Game,
    GameAction,
    Match,
    MatchRules,
    MoneyRules,
    ResultKind,
    SeededDice,
    Session,
)
from nard.match.commands import Command
from nard.match.ids import game_ids
from nard.match.replay import resume
from nard.notation.records import Action, ActionKind, MatchRecord

__all__ = ["Seat", "TableResult", "TerminalTable", "colour_board", "run_terminal_game"]

_COLOURS = {"X": "\x1b[1;33m", "O": "\x1b[1;36m"}  # bold yellow, bold cyan
_RESET = "\x1b[0m"

_RESULT_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}

HELP = """Plays are typed in standard notation, e.g. 24/18 13/9, 8/5 6/5, bar/22*, 6/off,
13/7(2), in any order, split (24/18 18/13) or combined (24/13); the board then shows
the play: press Enter to confirm it or type undo to take it back.
Before rolling: Enter (or roll) rolls, double offers the cube. Doubled: take, pass
(beaver where allowed). Any time: hint (the engine's best plays or cube decision),
moves (the legal plays), board, save [FILE] (the match so far: .mat, .sgf or .json;
nard play --resume FILE goes on from it), resign [1|2|3] (a single game, gammon,
backgammon), quit (stops here, saving to the save file if there is one; the game in
progress is not scored), help."""


def colour_board(diagram: str) -> str:
    """A board diagram (:func:`nard.core.diagram.draw`) with the checkers in colour
    (ANSI): ``X``, the side the board is drawn for, yellow; ``O`` cyan.

    >>> from nard.core import Position
    >>> lines = colour_board(str(Position())).splitlines()
    >>> lines[2].count("\x1b[1;33mX\x1b[0m"), lines[2].count("\x1b[1;36mO\x1b[0m")
    (2, 2)
    >>> lines[-1].startswith("\x1b[1;33mX\x1b[0m (on roll)")
    True
    """
    out = []
    for line in diagram.split("\n"):
        if line.startswith(" |"):
            line = re.sub("[XO]", lambda m: f"{_COLOURS[m.group()]}{m.group()}{_RESET}", line)
        elif line[:3] in ("X (", "O ("):
            line = f"{_COLOURS[line[0]]}{line[0]}{_RESET}{line[1:]}"
        out.append(line)
    return "\n".join(out)


@dataclass(frozen=True)
class Seat:
    """One side of the table: a person at the keyboard (``computer=None``) or a player.

    An :class:`~nard.engine.Engine` also doubles, takes and answers
    resignations by its analysis; any other :class:`~nard.engine.Player`
    only plays (it never doubles, takes every double and accepts every
    resignation).
    """

    name: str
    computer: Player | None = None

    @property
    def is_human(self) -> bool:
        return self.computer is None


@dataclass(frozen=True)
class TableResult:
    """How the session or match ended: the score by seat and who stopped it."""

    score: tuple[int, int]
    games: int
    quit_by: int | None = None
    """The seat that quit before the end, or ``None``."""


class _Quit(Exception):
    pass


class TerminalTable:
    """A money session or a match between two :class:`Seat` s at one terminal.

    ``games`` is the :class:`~nard.match.Match` or :class:`~nard.match.Session`
    (with its dice source) to play; a session plays ``money_games`` games.
    ``hints`` answers ``hint`` (default: the first computer seat's engine,
    else an expert engine made when first asked).
    """

    def __init__(
        self,
        games: Match | Session,
        seats: Sequence[Seat],
        read: Callable[[str], str],
        write: Callable[[str], None],
        *,
        money_games: int = 1,
        hints: Engine | None = None,
        colour: bool = False,
        home: str = "right",
        save_to: Path | None = None,
        rules: dict[str, object] | None = None,
        resumed: Game | None = None,
    ) -> None:
        if len(seats) != 2:
            raise ValueError(f"a table has two seats, not {len(seats)}")
        if money_games < 1:
            raise ValueError(f"money_games must be at least 1, not {money_games!r}")
        self.games = games
        self.seats = (seats[0], seats[1])
        self.read = read
        self.write = write
        self.money_games = money_games
        self.colour = colour
        if home not in ("right", "left"):
            raise ValueError(f"home board {home!r}: 'right' or 'left'")
        self.home = home
        engines = [s.computer for s in self.seats if isinstance(s.computer, Engine)]
        self._hints = hints or (engines[0] if engines else None)
        self.game: Game | None = resumed
        """The game being played."""
        self.save_to = save_to
        """Where the match is saved after every game and at the end (None: on request only)."""
        self.rules = dict(rules or {})
        """The rule options, kept in the saved file for ``--resume``."""
        self._resumed = resumed

    # -- the table -------------------------------------------------------
    @property
    def match_length(self) -> int:
        return self.games.length if isinstance(self.games, Match) else 0

    def play(self) -> TableResult:
        """Play to the end of the match (or the session's games); the final score."""
        played = len(self.games.games)
        try:
            if self._resumed is not None:  # a saved game goes on where it stopped
                self._announce_game(self._resumed, played)
                self._draw(self._resumed)
                self._play_game(self._resumed)
                self._report(self._resumed)
                self._autosave()
                self._resumed = None
            while not self._finished(played):
                self.game = self.games.new_game()
                played += 1
                self._announce_game(self.game, played)
                self._play_game(self.game)
                self._report(self.game)
                self._autosave()
        except _Quit as stop:
            seat = int(str(stop))
            self.write(f"{self.seats[seat].name} stops here.")
            if not isinstance(self.games, Match):
                self.write(f"Session total: {self._session_total()}.")
            self._autosave()
            return TableResult(self.games.score, played, quit_by=seat)
        score = self.games.score
        if isinstance(self.games, Match):
            winner = self.games.winner
            assert winner is not None
            self.write(
                f"{self.seats[winner].name} wins the {self.match_length}-point match "
                f"{max(score)}-{min(score)}."
            )
        else:
            games = f"{played} game{'s' if played != 1 else ''}"
            self.write(f"Session over after {games}: {self._session_total()}.")
        return TableResult(score, played)

    # -- saving ----------------------------------------------------------------
    def record(self) -> MatchRecord:
        """The match or session so far, the game in progress included (a roll made but
        not yet played as a move without a play, so that resuming keeps the dice)."""
        names = (self.seats[0].name, self.seats[1].name)
        record = self.games.to_record(names)
        metadata = {**record.metadata, "nard-rules": rules_text(self.rules)}
        games = list(record.games)
        game = self.game
        if games and game is not None and game.decision is Decision.PLAY and game.dice:
            pending = Action(game.on_roll, ActionKind.MOVE, dice=game.dice)
            games[-1] = dataclasses.replace(games[-1], actions=(*games[-1].actions, pending))
        return dataclasses.replace(record, games=tuple(games), metadata=metadata)

    def save(self, path: Path) -> None:
        """Write :meth:`record` to ``path``: ``.mat``, ``.sgf`` or ``.json`` by its suffix."""
        from nard.cli.records import write_record

        text = write_record(self.record(), path.suffix.lower().lstrip("."))
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)  # a crash mid-write leaves the old file, never half a new one

    def _save_command(self, arg: str) -> None:
        target = Path(arg) if arg else self.save_to
        if target is None:
            self.write("Save where? save FILE (.mat, .sgf or .json).")
            return
        try:
            self.save(target)
        except (OSError, NardError) as exc:
            self.write(f"Not saved: {exc}")
            return
        self.write(f"Saved to {target}.")

    def _autosave(self) -> None:
        if self.save_to is None:
            return
        try:
            self.save(self.save_to)
        except (OSError, NardError) as exc:
            self.write(f"Not saved to {self.save_to}: {exc}")

    def _session_total(self) -> str:
        """The points each side won in the money session, and who is ahead."""
        (a, b), score = self.seats, self.games.score
        net = score[0] - score[1]
        points = f"{abs(net)} point{'s' if abs(net) != 1 else ''}"
        lead = "even" if net == 0 else f"{(a if net > 0 else b).name} is up {points}"
        return f"{a.name} won {score[0]}, {b.name} {score[1]}; {lead}"

    def _finished(self, played: int) -> bool:
        if isinstance(self.games, Match):
            return self.games.is_over
        return played >= self.money_games

    def _announce_game(self, game: Game, number: int) -> None:
        a, b = self.seats
        score = self.games.score
        if isinstance(self.games, Match):
            crawford = (
                " (Crawford game: no cube)"
                if game.options.crawford
                else " (no cube)"
                if not game.options.cube
                else ""
            )
            self.write(
                f"Game {number} of a {self.match_length}-point match: {a.name} {score[0]}, "
                f"{b.name} {score[1]}{crawford}."
            )
        else:
            self.write(f"Money game {number}: {a.name} {score[0]:+d}, {b.name} {score[1]:+d}.")

    def _report(self, game: Game) -> None:
        result = game.result
        assert result is not None
        winner = self.seats[result.winner].name
        points = f"{result.points} point{'s' if result.points != 1 else ''}"
        if result.kind is ResultKind.PASS:
            how = "the double was passed"
        elif result.kind is ResultKind.RESIGN:
            how = "by resignation"
        else:
            how = _RESULT_NAMES[result.points // result.cube]
        self.write(f"{winner} wins {points} ({how}).")

    # -- one game ----------------------------------------------------------
    def _context(self, game: Game, player: int) -> CubeContext:
        return cube_context(game, player, self.match_length, self.games.score)

    def _computer(self, game: Game, seat: Seat) -> Command:
        assert seat.computer is not None
        return computer_command(seat.computer, game, self.match_length, self.games.score)

    def _viewer(self, game: Game) -> int:
        """The seat the board is drawn for: the only person, or the one to act."""
        humans = [i for i, s in enumerate(self.seats) if s.is_human]
        return humans[0] if len(humans) == 1 else game.turn

    def _draw(self, game: Game, position: Position | None = None) -> None:
        me = self._viewer(game)
        view = position if position is not None else game.position_for(me)
        text = draw(view, home=self.home)
        text = text.replace("X (on roll):  ", f"X ({self.seats[me].name}): ")
        text = text.replace("O (opponent): ", f"O ({self.seats[1 - me].name}): ")
        self.write(colour_board(text) if self.colour else text)
        owner = game.cube_owner
        cube = (
            "Crawford game: no cube"
            if game.options.crawford
            else "cube off"
            if not game.options.cube
            else f"cube {game.cube_value} "
            + ("in the centre" if owner is None else f"owned by {self.seats[owner].name}")
        )
        score = self.games.score
        self.write(
            f"{cube}; score {self.seats[0].name} {score[0]}, {self.seats[1].name} {score[1]}"
            + (f" (match to {self.match_length})" if self.match_length else " (money)")
        )
        ids = game_ids(game, self.match_length, score)
        if ids is not None:  # the diagram shows the Position ID: here the rest
            self.write(f"Match ID: {ids.match_id}" + (f"  {ids.xgid}" if ids.xgid else ""))

    def _play_game(self, game: Game) -> None:
        while game.result is None:
            decision = game.decision
            seat = self.seats[game.turn]
            if decision is Decision.OPENING_ROLL:
                game.opening_roll()
                dice = game.dice
                if dice is None:  # pragma: no cover - a tie is rolled again at once
                    continue
                starter = self.seats[game.on_roll].name
                self.write(f"Opening roll: {starter} plays first with {dice[0]}-{dice[1]}.")
                if game.decision is not Decision.PLAY:
                    self.write(f"{starter} cannot move.")
            elif decision is Decision.ROLL:
                self._roll_or_double(game, seat)
            elif decision is Decision.PLAY:
                self._play(game, seat)
            elif decision in (Decision.TAKE_OR_PASS, Decision.ACCEPT_OR_BEAVER):
                self._answer_double(game, seat)
            elif decision is Decision.RACCOON_OR_ROLL:
                self._raccoon_or_roll(game, seat)
            elif decision is Decision.ANSWER_RESIGNATION:
                self._answer_resignation(game, seat)
            else:  # pragma: no cover - GAME_OVER leaves the loop
                raise AssertionError(decision)

    def _ask(self, game: Game, prompt: str) -> str:
        """One line from the person to act; handles help, board, resign and quit."""
        while True:
            try:
                text = self.read(prompt).strip()
            except EOFError:
                text = "quit"
            command, _, arg = text.lower().partition(" ")
            if command in ("help", "?"):
                self.write(HELP)
            elif command == "board":
                self._draw(game)
            elif command == "save":
                self._save_command(text[len("save") :].strip())
            elif command in ("quit", "exit", "q"):
                raise _Quit(str(game.turn))
            elif command == "resign" and GameAction.RESIGN not in game.legal_actions():
                self.write("You can resign on your own turn.")
            elif command == "resign":
                points = {
                    "": 1,
                    "1": 1,
                    "single": 1,
                    "2": 2,
                    "gammon": 2,
                    "3": 3,
                    "backgammon": 3,
                }.get(arg.strip())
                if points is None:
                    self.write(f"Not resigned: resign 1, 2 or 3 points, not {arg!r}.")
                    continue
                game.resign(points)
                self.write(f"{self.seats[game.on_roll].name} offers to resign {points} x cube.")
                return "resigned"
            else:
                return command if command in _WORDS else text

    def _roll_or_double(self, game: Game, seat: Seat) -> None:
        me = game.turn
        can_double = GameAction.DOUBLE in game.legal_actions()
        if seat.is_human:
            while can_double:
                answer = self._ask(game, f"{seat.name}, roll or double> ")
                if answer == "resigned":
                    return
                if answer in ("", "roll", "r"):
                    break
                if answer in ("double", "d"):
                    self._double(game)
                    return
                if answer == "hint":
                    self._cube_hint(game, me)
                else:
                    self.write("Type Enter to roll or double to offer the cube (help for more).")
        elif self._computer(game, seat).action is GameAction.DOUBLE:
            self._double(game)
            return
        game.roll()
        if game.decision is not Decision.PLAY:  # no legal play: the turn has passed
            rolled = game.actions[-1].dice
            assert rolled is not None
            self.write(f"{seat.name}: {rolled[0]}-{rolled[1]}, cannot move.")

    def _double(self, game: Game) -> None:
        name = self.seats[game.on_roll].name
        self.write(f"{name} doubles to {2 * game.cube_value}.")
        game.double()

    def _play(self, game: Game, seat: Seat) -> None:
        dice = game.dice
        assert dice is not None
        plays = game.legal_plays()
        if not seat.is_human:
            text = self._computer(game, seat).play
            assert text is not None
            self.write(f"{seat.name}: {dice[0]}-{dice[1]}, {text}.")
            game.play(text)
            return
        if len(plays) == 1:
            self.write(
                f"{seat.name}: {dice[0]}-{dice[1]}, {game.position.format_play(plays[0])}"
                " (the only play)."
            )
            game.play(plays[0])
            return
        self._draw(game)
        you, them = game.position.pip_counts()
        self.write(f"{seat.name} to play {dice[0]}-{dice[1]}. Pips: {you} against {them}.")
        while True:
            text = self._ask(game, f"{seat.name}, play> ")
            if text == "resigned":
                return
            if text in ("", "roll", "double", "take", "pass", "beaver", "undo"):
                self.write("Type a play (moves lists them, help explains).")
                continue
            if text == "moves":
                self._list_plays(game, plays)
                continue
            if text == "hint":
                self._play_hint(game, dice)
                continue
            try:
                play = game.position.parse_play(text, dice)
            except NardError as exc:
                self.write(f"Not played: {exc}")
                continue
            outcome = self._confirm(game, play, dice, plays)
            if outcome is None:
                continue  # taken back: type another play
            if outcome == "resigned":
                return
            game.play(outcome)
            return

    def _list_plays(self, game: Game, plays: Sequence[Play], width: int = 78) -> None:
        """The legal plays, lines broken between plays (never inside one)."""
        texts = [game.position.format_play(p) for p in plays]
        lines: list[str] = []
        line = "Legal plays:"
        for n, text in enumerate(texts):
            item = f" {text}" + ("," if n < len(texts) - 1 else f" ({len(texts)})")
            if len(line) + len(item) > width:
                lines.append(line)
                line = " "
            line += item
        lines.append(line)
        self.write("\n".join(lines))

    def _confirm(
        self, game: Game, play: Play, dice: tuple[int, int], plays: Sequence[Play]
    ) -> Play | str | None:
        """Show ``play`` and ask for its confirmation: the play to make (perhaps another
        one typed at this prompt), ``None`` when taken back, ``"resigned"`` when the
        player offered to resign instead. Every other command works here too, and
        nothing but Enter (or yes) confirms."""
        while True:
            self._draw(
                game, play.result.flip() if self._viewer(game) == game.on_roll else play.result
            )
            shown = game.position.format_play(play)
            while True:
                answer = self._ask(game, "Enter to confirm or undo> ")
                if answer in ("", "y", "yes", "ok", "confirm"):
                    return play
                if answer in ("undo", "u", "n", "no"):
                    self.write("Taken back.")
                    return None
                if answer == "resigned":
                    return "resigned"
                if answer == "hint":
                    self._play_hint(game, dice)
                elif answer == "moves":
                    self._list_plays(game, plays)
                elif answer in _WORDS:
                    self.write(f"Enter confirms {shown}; undo takes it back.")
                else:
                    try:
                        play = game.position.parse_play(answer, dice)
                    except NardError as exc:
                        self.write(f"Still {shown}: {exc}")
                        continue
                    break  # another play typed here: show it and ask again

    def _answer_double(self, game: Game, seat: Seat) -> None:
        doubler = game.on_roll
        legal = game.legal_actions()
        if not seat.is_human:
            self._apply_answer(game, seat, self._computer(game, seat).action.value)
            return
        choices = " or ".join(
            a.value for a in (GameAction.TAKE, GameAction.PASS, GameAction.BEAVER) if a in legal
        )
        while True:
            answer = self._ask(game, f"{seat.name}, {choices}> ")
            if answer == "hint":
                self._cube_hint(game, doubler)
            elif answer in ("take", "pass", "beaver") and GameAction(answer) in legal:
                self._apply_answer(game, seat, answer)
                return
            else:
                self.write(f"Answer {choices}.")

    def _apply_answer(self, game: Game, seat: Seat, answer: str) -> None:
        if answer == "beaver":
            game.beaver()
            self.write(f"{seat.name} beavers: the cube is at {game.cube_value}.")
        elif answer == "pass":
            game.pass_double()
            self.write(f"{seat.name} passes.")
        else:
            game.take()
            self.write(f"{seat.name} takes: the cube is at {game.cube_value}.")

    def _raccoon_or_roll(self, game: Game, seat: Seat) -> None:
        if seat.is_human and GameAction.RACCOON in game.legal_actions():
            answer = self._ask(game, f"{seat.name}, raccoon or roll> ")
            if answer == "raccoon":
                game.raccoon()
                self.write(f"{seat.name} raccoons: the cube is at {game.cube_value}.")
                return
            if answer == "resigned":
                return
        self._roll_or_double(game, seat)

    def _answer_resignation(self, game: Game, seat: Seat) -> None:
        if seat.is_human:
            while True:
                answer = self._ask(game, f"{seat.name}, accept or reject> ")
                if answer in ("accept", "reject"):
                    break
                self.write("Answer accept or reject.")
        else:
            answer = self._computer(game, seat).action.value
        if answer == "accept":
            game.accept()
        else:
            game.reject()
            self.write(f"{seat.name} rejects the resignation: play on.")

    # -- hints -------------------------------------------------------------
    def _hint_engine(self) -> Engine:
        if self._hints is None:
            self._hints = Engine("expert")
        return self._hints

    def _play_hint(self, game: Game, dice: tuple[int, int]) -> None:
        engine = self._hint_engine()
        context = self._context(game, game.on_roll)
        ranked = engine.rank_plays(game.position, dice)[:5]
        for i, r in enumerate(ranked, start=1):
            self.write(
                f"  {i}. {game.position.format_play(r.play):<28} cubeless {r.equity:+.3f} "
                f"({r.ply}-ply)"
            )
        best = engine.best_play(game.position, dice, match=context)
        if best is not None:
            self.write(f"  With the cube and score: {game.position.format_play(best)}")

    def _cube_hint(self, game: Game, doubler: int) -> None:
        engine = self._hint_engine()
        decision = engine.cube_analysis(game.position_for(doubler), self._context(game, doubler))[2]
        self.write(
            f"  {decision.action}: no double {decision.no_double:+.3f}, double/take "
            f"{decision.double_take:+.3f}, double/pass {decision.double_pass:+.3f}"
        )


_WORDS = frozenset(
    {
        "",
        "roll",
        "r",
        "double",
        "d",
        "take",
        "pass",
        "beaver",
        "raccoon",
        "undo",
        "hint",
        "moves",
        "accept",
        "reject",
        "y",
        "yes",
        "ok",
        "confirm",
        "u",
        "n",
        "no",
    }
)


def _player_name() -> str:
    """The person's name at the table: their login name, as gnubg does."""
    try:
        name = getpass.getuser().strip()
    except (KeyError, OSError):  # no user name in the environment or the password file
        name = ""
    return name or "Player"


def rules_text(rules: dict[str, object]) -> str:
    """The rule options as saved in a record's metadata: ``key=value`` words (no
    quotes, which a ``.mat`` tag cannot hold); booleans as 0 and 1."""
    return " ".join(f"{k}={int(v) if isinstance(v, bool) else v}" for k, v in sorted(rules.items()))


def rules_from_text(text: str, where: str) -> dict[str, object]:
    """:func:`rules_text` read back."""
    rules: dict[str, object] = {}
    for word in text.split():
        key, sep, value = word.partition("=")
        if not sep or not value.isdigit():
            raise NardError(f"{where}: its rules ({text!r}) cannot be read at {word!r}")
        number = int(value)
        rules[key] = number if key in ("automatic_doubles", "backgammon") else bool(number)
    return rules


def make_games(match_length: int, rules: dict[str, object], dice: SeededDice) -> Match | Session:
    """A match to ``match_length`` points (0: a money session) under ``rules`` (the
    options ``nard play`` takes: cube, crawford, holland, jacoby, beavers, raccoons,
    automatic_doubles, backgammon)."""
    known = {f.name for f in (*dataclasses.fields(MatchRules), *dataclasses.fields(MoneyRules))}
    unknown = set(rules) - (known - {"cube_cap", "animals"})
    if unknown:
        raise NardError(f"unknown rule options {sorted(unknown)}")
    get = rules.get
    try:
        if match_length:
            if get("jacoby") or get("beavers") or get("raccoons") or get("automatic_doubles"):
                raise NardError(
                    "Jacoby, beavers, raccoons and automatic doubles are money rules, "
                    "not match rules"
                )
            return Match(
                match_length,
                MatchRules(
                    cube=bool(get("cube", True)),
                    crawford=bool(get("crawford", True)),
                    holland=bool(get("holland", False)),
                    backgammon=int(str(get("backgammon", 3))),
                ),
                dice,
            )
        if get("holland") or not get("crawford", True):
            raise NardError("the Crawford and Holland rules are match rules, not money rules")
        money = MoneyRules(
            cube=bool(get("cube", True)),
            jacoby=bool(get("jacoby", False)),
            beavers=bool(get("beavers", False)),
            raccoons=bool(get("raccoons", False)),
            automatic_doubles=int(str(get("automatic_doubles", 0))),
            backgammon=int(str(get("backgammon", 3))),
        )
        games = Session(money, dice)
        Session(money).new_game()  # the rules' own checks, before any game is played
        return games
    except ValueError as exc:
        raise NardError(f"these rules do not go together: {exc}") from None


def run_terminal_game(
    seed: int | None = None,
    level: str = "expert",
    match_length: int = 0,
    money_games: int = 1,
    two_players: bool = False,
    home: str = "right",
    names: Sequence[str] | None = None,
    opponent: str = "Computer",
    rules: dict[str, object] | None = None,
    save: str | None = None,
    resume_from: str | None = None,
) -> int:
    """Play on stdin/stdout: against the engine at ``level`` or two people; returns 0.

    ``match_length`` 0 is money play (``money_games`` games). The checkers are
    drawn in colour on a terminal unless ``NO_COLOR`` is set; ``home`` puts the
    home board at the bottom ``right`` or ``left``. ``names``: the person's name
    (two with ``two_players``), ``opponent`` the computer's. ``save``: the file the
    match is saved to after every game and at the end; ``resume_from``: a saved
    match to go on with (its rules and names; saved back to it unless ``save``).
    """
    from nard.cli.records import load_record

    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    dice = SeededDice(seed)
    rules = dict(rules or {})
    wanted = list(names or [])
    if len(wanted) > (2 if two_players else 1):
        raise NardError("--name: one name, or two with --two-players")
    resumed: Game | None = None
    if resume_from is not None:
        record, _ = load_record(resume_from, allow_unfinished=True)
        saved_rules = record.metadata.get("nard-rules")
        if saved_rules:
            rules = rules_from_text(saved_rules, resume_from)
        elif record.match_length:  # a file from elsewhere: the rules it can say
            rules = {"crawford": record.crawford_rule}
        else:
            rules = {"jacoby": record.jacoby}
        match_length = record.match_length
        games = make_games(match_length, rules, dice)
        resumed = resume(record, games)
        wanted = wanted or list(record.players[: 2 if two_players else 1])
        if not two_players:
            opponent = record.players[1]
        if match_length == 0:
            money_games = max(money_games, len(games.games) + (0 if resumed else 1))
        save = save or resume_from
    else:
        games = make_games(match_length, rules, dice)
    if two_players:
        wanted += ["Player 1", "Player 2"][len(wanted) :]
        seats = (Seat(wanted[0]), Seat(wanted[1]))
        who = "two players"
    else:
        seats = (
            Seat(wanted[0] if wanted else _player_name()),
            Seat(opponent, Engine(level=level, seed=seed)),
        )
        who = f"against the computer ({level})"
    if seats[0].name == seats[1].name:
        raise NardError(f"both players are named {seats[0].name!r}: give them different names")
    kind = f"a {match_length}-point match" if match_length else "money play"
    print(f"nard: {kind}, {who}; dice seed {seed}. Type 'help' for help.")
    if resume_from is not None:
        score = games.score
        print(f"Resuming {resume_from}: game {len(games.games)}, score {score[0]}-{score[1]}.")
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    TerminalTable(
        games,
        seats,
        input,
        print,
        money_games=money_games,
        colour=colour,
        home=home,
        save_to=Path(save) if save else None,
        rules=rules,
        resumed=resumed,
    ).play()
    return 0
