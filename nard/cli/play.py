"""``nard play``: a game in the terminal against the computer.

The board is always drawn from the human's side (``X``); moves are typed in
standard notation. Input and output are injected so tests can drive a game.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from nard.core import Dice, NardError, Play, Position
from nard.engine import Engine, Player

__all__ = ["GameResult", "TerminalGame", "run_terminal_game"]

_RESULT_NAMES = {1: "a single game", 2: "a gammon", 3: "a backgammon"}

HELP = """Type your play in standard notation, e.g. 24/18 13/9, 8/5 6/5, bar/22*, 6/off,
13/7(2). Moves may be written in either order, split (24/18 18/13) or combined
(24/13). Other commands: board (draw the board again), moves (list the legal
plays), help, quit."""


@dataclass(frozen=True)
class GameResult:
    """How a game ended: points won (negative: the human lost), or resigned."""

    points: int
    resigned: bool = False


class _Quit(Exception):
    pass


class TerminalGame:
    """One game, human (``X``) against the computer (``O``): any :class:`Player`."""

    def __init__(
        self,
        rng: random.Random,
        read: Callable[[str], str],
        write: Callable[[str], None],
        computer: Player,
    ) -> None:
        self.rng = rng
        self.read = read
        self.write = write
        self.computer = computer
        self.position = Position()
        self.human_on_roll = True
        self.dice: Dice | None = None
        """The roll the human must play now (``None`` between turns)."""

    def _roll(self) -> Dice:
        return (self.rng.randint(1, 6), self.rng.randint(1, 6))

    def _opening_roll(self) -> Dice:
        while True:
            human, computer = self.rng.randint(1, 6), self.rng.randint(1, 6)
            self.write(f"Opening roll: you {human}, computer {computer}.")
            if human != computer:
                self.human_on_roll = human > computer
                who = "You move" if self.human_on_roll else "The computer moves"
                self.write(f"{who} first with {max(human, computer)}-{min(human, computer)}.")
                return (max(human, computer), min(human, computer))
            self.write("Equal dice: roll again.")

    def _human_view(self) -> Position:
        return self.position if self.human_on_roll else self.position.flip()

    def _draw(self, dice: Dice | None = None) -> None:
        view = self._human_view()
        text = str(view).replace("X (on roll):  ", "X (you):      ")
        self.write(text.replace("O (opponent): ", "O (computer): "))
        if dice:
            you, them = view.pip_counts()
            self.write(f"You rolled {dice[0]}-{dice[1]}. Pips: you {you}, computer {them}.")

    def _human_turn(self, dice: Dice) -> Play | None:
        pos = self.position
        plays = pos.legal_plays(dice)
        self.dice = dice
        self._draw(dice)
        if not plays:
            self.write(f"You cannot move with {dice[0]}-{dice[1]}: the turn passes.")
            return None
        while True:
            try:
                text = self.read("Your play: ").strip()
            except EOFError:
                raise _Quit from None
            command = text.lower()
            if command in ("quit", "exit", "q", "resign"):
                raise _Quit
            if command in ("help", "?", ""):
                self.write(HELP)
                continue
            if command == "board":
                self._draw(dice)
                continue
            if command == "moves":
                self.write("Legal plays: " + ", ".join(pos.format_play(p) for p in plays))
                continue
            try:
                return pos.parse_play(text, dice)
            except NardError as exc:
                self.write(f"Not played: {exc}")

    def _computer_turn(self, dice: Dice) -> Play | None:
        play = self.computer.choose_play(self.position, dice)
        if play is None:
            self.write(f"The computer rolls {dice[0]}-{dice[1]} and cannot move.")
        else:
            played = self.position.format_play(play)
            self.write(f"The computer rolls {dice[0]}-{dice[1]} and plays {played}.")
        return play

    def play(self) -> GameResult:
        """Play the game to its end; the result is from the human's side."""
        dice: Dice | None = self._opening_roll()
        try:
            while True:
                roll = dice or self._roll()
                dice = None
                turn = self._human_turn if self.human_on_roll else self._computer_turn
                play = turn(roll)
                self.position = play.result if play else self.position.flip()
                self.human_on_roll = not self.human_on_roll
                outcome = self.position.outcome()
                if outcome:
                    # outcome is seen from the side now on roll, who lost.
                    points = -outcome if self.human_on_roll else outcome
                    self._draw()
                    winner = "You win" if points > 0 else "The computer wins"
                    self.write(
                        f"{winner} {_RESULT_NAMES[abs(points)]} ({abs(points)} "
                        f"point{'s' if abs(points) > 1 else ''})."
                    )
                    return GameResult(points)
        except _Quit:
            self.write("You resign the game.")
            return GameResult(-1, resigned=True)


def run_terminal_game(
    seed: int | None = None, computer_first: bool = False, level: str = "expert"
) -> int:
    """Play one game on stdin/stdout against the engine at ``level``; returns 0."""
    if seed is None:
        seed = random.SystemRandom().randrange(2**32)
    engine = Engine(level=level, seed=seed)
    print(f"nard: a game against the computer ({level}; dice seed {seed}). Type 'help' for help.")
    game = TerminalGame(random.Random(seed), input, print, engine)
    if computer_first:
        game.human_on_roll = False
    game.play()
    return 0
