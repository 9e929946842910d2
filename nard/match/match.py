"""Matches to N points and money sessions: games in sequence, with the score.

A :class:`Match` starts each game with the options its score calls for (the
Crawford game without the cube, Holland after it when agreed) and ends when a
player reaches the match length. A :class:`Session` plays money games for as
long as wanted and keeps running totals. Both keep every game, with every
action, so they can be replayed and exported.

>>> from nard.match.dice import FixedDice
>>> match = Match(3, dice=FixedDice([(5, 5), (6, 1)]))
>>> game = match.new_game()
>>> game.opening_roll()  # 5-5: a tie, rolled again; then 6-1 for player 0
>>> game.play("13/7 8/7")
>>> game.resign(1); game.accept()  # player 1, now on roll, resigns a single game
>>> match.score, match.is_over
((1, 0), False)
"""

from __future__ import annotations

from dataclasses import dataclass

from nard.match.dice import DiceSource
from nard.match.game import Game, GameOptions, GameResult, MatchStateError
from nard.notation.records import GameRecord, MatchRecord

__all__ = ["Match", "MatchRules", "MoneyRules", "Session"]


@dataclass(frozen=True)
class MatchRules:
    """Options of match play (RULES.md 8.5, 8.6, 9)."""

    cube: bool = True
    cube_cap: int = 64
    crawford: bool = True
    holland: bool = False
    backgammon: int = 3


@dataclass(frozen=True)
class MoneyRules:
    """Options agreed before a money session (RULES.md 8.2-8.4, 9)."""

    cube: bool = True
    cube_cap: int | None = 64
    jacoby: bool = False
    beavers: bool = False
    raccoons: bool = False
    automatic_doubles: int = 0
    backgammon: int = 3
    animals: int | None = None  # beavers and raccoons in a row (see GameOptions)


class _Games:
    """What matches and sessions share: the games played and the running score."""

    def __init__(self, dice: DiceSource | None) -> None:
        self.dice = dice
        self.games: list[Game] = []
        self._counted = 0
        self._score = [0, 0]

    @property
    def score(self) -> tuple[int, int]:
        """Points won so far by players 0 and 1 (finished games only)."""
        self._count_finished()
        return (self._score[0], self._score[1])

    @property
    def results(self) -> list[GameResult]:
        """The results of the finished games, in order."""
        return [g.result for g in self.games if g.result is not None]

    def _count_finished(self) -> None:
        while self._counted < len(self.games) and self.games[self._counted].result:
            result = self.games[self._counted].result
            assert result is not None
            self._score[result.winner] += result.points
            self._counted += 1

    def _game_records(self) -> tuple[GameRecord, ...]:
        records = []
        score = [0, 0]
        for number, game in enumerate(self.games, start=1):
            result = game.result
            records.append(
                GameRecord(
                    number=number,
                    score=(score[0], score[1]),
                    actions=game.actions,
                    winner=result.winner if result else None,
                    points=result.points if result else None,
                    crawford=game.options.crawford,
                    automatic_doubles=game.automatic_doubles,
                )
            )
            if result:
                score[result.winner] += result.points
        return tuple(records)

    def _check_can_start(self) -> None:
        if self.games and not self.games[-1].is_over:
            raise MatchStateError(
                f"cannot start game {len(self.games) + 1}: game {len(self.games)} is not over"
            )


class Match(_Games):
    """A match to ``length`` points between players 0 and 1."""

    def __init__(
        self, length: int, rules: MatchRules | None = None, dice: DiceSource | None = None
    ) -> None:
        if isinstance(length, bool) or not isinstance(length, int) or not 1 <= length <= 64:
            raise ValueError(f"invalid match length {length!r}: a match is to 1-64 points")
        super().__init__(dice)
        self.length = length
        self.rules = rules or MatchRules()
        self._starts: list[tuple[int, int]] = []  # the score as each game began

    @property
    def is_over(self) -> bool:
        return max(self.score) >= self.length

    @property
    def winner(self) -> int | None:
        """The player who has won the match, or None."""
        s = self.score
        return None if max(s) < self.length else (0 if s[0] > s[1] else 1)

    def is_crawford_game(self) -> bool:
        """Whether the next game is the Crawford game: the first game that starts
        with a player one point from winning (and the Crawford rule is on)."""
        first_time = all(self.length - 1 not in start for start in self._starts)
        # A 1-point match starts at 0-0, one point from the end, but nobody reached
        # it: its first game is no Crawford game (gnubg's Match ID agrees).
        reached = self.length > 1 and self.length - 1 in self.score
        return self.rules.crawford and reached and first_time

    def new_game(self) -> Game:
        """Start the next game with the options the score calls for."""
        if self.is_over:
            raise MatchStateError(f"cannot start a game: the match is over at {self.score}")
        self._check_can_start()
        score = self.score
        crawford = self.is_crawford_game()
        post_crawford = self.rules.crawford and not crawford and self.length - 1 in score
        holland = None
        if self.rules.holland and post_crawford and score[0] != score[1]:
            holland = 0 if score[0] < score[1] else 1  # the trailer; none at equal scores
        options = GameOptions(
            # A 1-point match is played without the cube: a double could only kill it.
            cube=self.rules.cube and not crawford and self.length > 1,
            cube_cap=self.rules.cube_cap,
            backgammon=self.rules.backgammon,
            holland_player=holland,
            crawford=crawford,
        )
        game = Game(options, self.dice)
        self.games.append(game)
        self._starts.append(score)
        return game

    def to_record(self, players: tuple[str, str] = ("Player 0", "Player 1")) -> MatchRecord:
        """The match as a record (for the file formats), every action included."""
        return MatchRecord(
            match_length=self.length,
            games=self._game_records(),
            players=players,
            crawford_rule=self.rules.crawford,
            backgammon=self.rules.backgammon,
            holland=self.rules.holland,
            cube=self.rules.cube,
            cube_cap=None if self.rules.cube_cap == MatchRules.cube_cap else self.rules.cube_cap,
        )


class Session(_Games):
    """Money play: any number of games, each settled at its final stake."""

    def __init__(self, rules: MoneyRules | None = None, dice: DiceSource | None = None) -> None:
        super().__init__(dice)
        self.rules = rules or MoneyRules()

    def new_game(self) -> Game:
        """Start the next game."""
        self._check_can_start()
        r = self.rules
        game = Game(
            GameOptions(
                cube=r.cube,
                cube_cap=r.cube_cap,
                backgammon=r.backgammon,
                jacoby=r.jacoby,
                beavers=r.beavers,
                raccoons=r.raccoons,
                automatic_doubles=r.automatic_doubles,
                animals=r.animals,
            ),
            self.dice,
        )
        self.games.append(game)
        return game

    def to_record(self, players: tuple[str, str] = ("Player 0", "Player 1")) -> MatchRecord:
        """The session as a record (match length 0), every action included."""
        return MatchRecord(
            match_length=0,
            games=self._game_records(),
            players=players,
            jacoby=self.rules.jacoby,
            backgammon=self.rules.backgammon,
            automatic_doubles=self.rules.automatic_doubles,
            cube=self.rules.cube,
            cube_cap=None if self.rules.cube_cap == MoneyRules.cube_cap else self.rules.cube_cap,
        )
