"""A table in play: a match or money session, its seats and its fair dice.

:class:`LiveTable` is the server's game state, rebuilt from what is stored
(:mod:`nard.server.models`): the rules, the seats, the dice seeds and the log
of :class:`~nard.match.commands.Command` s. The rules themselves are
:mod:`nard.match`'s; this module adds who sits where, who may act, the
table's own steps (a new game starts and its opening roll is made as soon as
the previous game ends) and the view a client is sent.

>>> import random
>>> from nard.match.dice import FairDice
>>> seats = (SeatInfo("ann", player_id=1), SeatInfo("bob", player_id=2))
>>> dice = FairDice.new("c", rng=random.Random(1))
>>> table = LiveTable("t1", TableRules(match_length=3), seats, dice)
>>> table.start()
[(-1, Command(action=<GameAction.OPENING_ROLL: 'opening roll'>, play=None, points=None))]
>>> table.to_act in (0, 1), table.status
(True, 'playing')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from nard.core import Position
from nard.engine import Level
from nard.match.commands import Command, perform
from nard.match.dice import FairDice, RecordingDice
from nard.match.game import Decision, Game, GameAction, MatchStateError
from nard.match.match import Match, MatchRules, MoneyRules, Session
from nard.notation.json_record import DiceCommitment
from nard.notation.records import Action, ActionKind, MatchRecord

__all__ = [
    "TABLE_SEAT",
    "LiveTable",
    "NotYourTurnError",
    "SeatInfo",
    "TableBase",
    "TableClosedError",
    "TableRules",
    "game_view",
]

TABLE_SEAT = -1
"""The seat number the table's own steps (opening rolls) are logged under."""


class NotYourTurnError(MatchStateError):
    """A seat tried to act when the game waits for the other seat."""


class TableClosedError(MatchStateError):
    """An action at a table that is not in play (waiting for a player, or finished)."""


@dataclass(frozen=True)
class TableRules:
    """What is agreed when the table is set up (RULES.md sections 8 and 9).

    ``match_length`` 0 is money play, where ``jacoby``, ``beavers``,
    ``raccoons`` and ``automatic_doubles`` apply; ``crawford`` and ``holland``
    apply to matches.
    """

    match_length: int = 0
    cube: bool = True
    crawford: bool = True
    holland: bool = False
    jacoby: bool = False
    beavers: bool = False
    raccoons: bool = False
    automatic_doubles: int = 0
    backgammon: int = 3

    def __post_init__(self) -> None:
        if not 0 <= self.match_length <= 64:
            raise ValueError(f"match length {self.match_length!r}: 0 (money) or 1-64 points")
        # The rules' own checks, once, so a bad combination never reaches storage.
        self.games(None)

    def games(self, dice: RecordingDice | None) -> Match | Session:
        """A fresh match or session under these rules, rolling ``dice``."""
        if self.match_length:
            rules = MatchRules(
                cube=self.cube,
                crawford=self.crawford,
                holland=self.holland,
                backgammon=self.backgammon,
            )
            return Match(self.match_length, rules, dice)
        money = MoneyRules(
            cube=self.cube,
            jacoby=self.jacoby,
            beavers=self.beavers,
            raccoons=self.raccoons,
            automatic_doubles=self.automatic_doubles,
            backgammon=self.backgammon,
        )
        if dice is None:
            Session(money).new_game()  # the rules' own checks (GameOptions)
        return Session(money, dice)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TableRules:
        return cls(**dict(data))


@dataclass(frozen=True)
class SeatInfo:
    """One seat: a person (``player_id``; ``None`` while the seat is open) or the
    computer at ``level``."""

    name: str
    player_id: int | None = None
    level: Level | None = None

    @property
    def is_computer(self) -> bool:
        return self.level is not None

    @property
    def is_open(self) -> bool:
        return self.level is None and self.player_id is None


class TableBase:
    """What every kind of table has: an id, the agreed rules, seats, fair dice
    (every die recorded), and whether it has finished."""

    def __init__(
        self,
        table_id: str,
        rules: TableRules,
        seats: Sequence[SeatInfo],
        dice: FairDice,
        *,
        finished: bool = False,
    ) -> None:
        self.id = table_id
        self.rules = rules
        self.seats = list(seats)
        self.fair_dice = dice
        self.dice = RecordingDice(dice)
        self.finished = finished
        self.steps: list[dict[str, Any]] = []
        """The board after every logged action, for the replay viewer."""

    @property
    def game(self) -> Game | None:  # pragma: no cover - every kind of table has its own
        raise NotImplementedError

    def scores(self) -> list[int]:  # pragma: no cover - every kind of table has its own
        raise NotImplementedError

    def game_number(self) -> int:  # pragma: no cover - every kind of table has its own
        raise NotImplementedError

    def _snapshot(self, text: str) -> None:
        """Keep the board as it is after the action just logged (seat 0's side, or the
        box's in a chouette, as the view gives it)."""
        game = self.game
        if game is None:
            return
        board = game.position_for(0)
        self.steps.append(
            {
                "game": self.game_number(),
                "board": list(board),
                "off": borne_off(board),
                "dice": list(game.dice) if game.dice else None,
                "cube": game.cube_value,
                "cube_owner": game.cube_owner,
                "score": self.scores(),
                "text": text,
            }
        )

    @property
    def status(self) -> str:
        """``waiting`` (a seat is open), ``playing`` or ``finished``."""
        if self.finished:
            return "finished"
        if any(s.is_open for s in self.seats):
            return "waiting"
        return "playing"

    def finish(self) -> None:
        """End the table (the match is won, or the session or chouette stopped)."""
        self.finished = True

    def sit(self, seat: int, info: SeatInfo) -> None:
        if not self.seats[seat].is_open:
            raise TableClosedError(f"seat {seat} of table {self.id} is taken")
        self.seats[seat] = info

    def dice_commitment(self) -> DiceCommitment:
        """The commitment, the client seed, the seed once the table is finished, the dice."""
        return DiceCommitment(
            commitment=self.fair_dice.commitment,
            client_seed=self.fair_dice.client_seed,
            server_seed=self.revealed_seed(),
            log=tuple(self.dice.log),
        )

    def revealed_seed(self) -> str | None:
        """The server seed in hex once the table is finished, else None."""
        if not self.finished:
            return None
        return self.fair_dice.reveal()

    def _common_view(self, viewer: int | None) -> dict[str, Any]:
        """The parts of a client's view every kind of table shares."""
        return {
            "id": self.id,
            "status": self.status,
            "rules": self.rules.to_json(),
            "seats": [
                {
                    "name": s.name,
                    "kind": "computer" if s.is_computer else "open" if s.is_open else "person",
                    "level": s.level.value if s.level else None,
                }
                for s in self.seats
            ],
            "you": viewer,
            "dice_commitment": self.fair_dice.commitment,
            "client_seed": self.fair_dice.client_seed,
            "server_seed": self.revealed_seed(),
        }


class LiveTable(TableBase):
    """The game state of one table, driven by seats' commands."""

    def __init__(
        self,
        table_id: str,
        rules: TableRules,
        seats: Sequence[SeatInfo],
        dice: FairDice,
        *,
        finished: bool = False,
    ) -> None:
        if len(seats) != 2:
            raise ValueError(f"a table has two seats, not {len(seats)}")
        super().__init__(table_id, rules, seats, dice, finished=finished)
        self.games = rules.games(self.dice)
        self.log: list[tuple[int, Command]] = []

    # -- state ---------------------------------------------------------------

    @property
    def game(self) -> Game | None:
        """The game in progress or the last one played (None before the first)."""
        return self.games.games[-1] if self.games.games else None

    @property
    def match_length(self) -> int:
        return self.rules.match_length

    @property
    def to_act(self) -> int | None:
        """The seat the table waits for, or None (not in play, or between steps)."""
        game = self.game
        if self.status != "playing" or game is None or game.is_over:
            return None
        if game.decision is Decision.OPENING_ROLL:
            return None
        return game.turn

    def waiting_for(self) -> list[int]:
        """The seats the table waits for: the one to act, if any (as a chouette lists
        several)."""
        acting = self.to_act
        return [] if acting is None else [acting]

    def is_match_over(self) -> bool:
        return isinstance(self.games, Match) and self.games.is_over

    # -- acting --------------------------------------------------------------
    def start(self, *, next_game: bool = False) -> list[tuple[int, Command]]:
        """The table's own steps due now, done and returned for storing.

        In a match the next game starts (with its opening roll) as soon as the
        last one ends, and the table finishes when the match is won. A money
        session starts its first game at once and each later one only when
        asked (``next_game``), so that a player can stop between games.
        """
        if self.status != "playing":
            return []
        steps: list[tuple[int, Command]] = []
        game = self.game
        if game is None or game.is_over:
            if self.is_match_over():
                self.finish()
                return steps
            if game is not None and not self.match_length and not next_game:
                return steps
            game = self.games.new_game()
        if game.decision is Decision.OPENING_ROLL:
            command = Command(GameAction.OPENING_ROLL)
            perform(game, command)
            self._logged(TABLE_SEAT, command)
            steps.append((TABLE_SEAT, command))
        return steps

    def next_game(self) -> list[tuple[int, Command]]:
        """Start the next game of a money session (the last one is over)."""
        game = self.game
        if self.status != "playing" or self.match_length or game is None or not game.is_over:
            raise TableClosedError("a new game starts when a money game is over")
        return self.start(next_game=True)

    def act(self, seat: int, command: Command) -> list[tuple[int, Command]]:
        """``seat`` gives ``command``; returns it and the table steps that followed.

        Raises :class:`NotYourTurnError`, :class:`TableClosedError` or the rules'
        own error, and then nothing has changed.
        """
        if self.status != "playing":
            raise TableClosedError(f"table {self.id} is {self.status}: no actions now")
        if command.action is GameAction.OPENING_ROLL:
            raise MatchStateError("the opening roll is made by the table, not a seat")
        game = self.game
        assert game is not None and not game.is_over  # start() ran after every change
        if seat != game.turn:
            name = self.seats[game.turn].name
            raise NotYourTurnError(
                f"not seat {seat}'s turn: the game waits for {name} (seat {game.turn}) "
                f"to {game.decision.value}"
            )
        perform(game, command)
        self._logged(seat, command)
        return [(seat, command), *self.start()]

    def replay(self, log: Sequence[tuple[int, Command]]) -> None:
        """Apply a stored log (at a freshly built table) to rebuild its state."""
        for seat, command in log:
            game = self.game
            if seat == TABLE_SEAT and (game is None or game.is_over):
                game = self.games.new_game()  # the table's opening roll starts a game
            elif seat != TABLE_SEAT and (game is None or game.is_over or seat != game.turn):
                raise MatchStateError(f"stored action {len(self.log)} by seat {seat} out of turn")
            assert game is not None
            perform(game, command)
            self._logged(seat, command)

    def scores(self) -> list[int]:
        return list(self.games.score)

    def game_number(self) -> int:
        return len(self.games.games)

    def _logged(self, seat: int, command: Command) -> None:
        self.log.append((seat, command))
        game = self.game
        last = game.actions[-1] if game and game.actions and seat != TABLE_SEAT else None
        self._snapshot("" if last is None else self._step_text(last))

    def _step_text(self, action: Action) -> str:
        name = self.seats[action.player].name
        if action.kind is ActionKind.MOVE:
            dice = f"{action.dice[0]}-{action.dice[1]}" if action.dice else ""
            return f"{name}: {dice} {action.play or '(no move)'}"
        detail = f" {action.cube}" if action.cube else f" {action.resign}" if action.resign else ""
        return f"{name}: {action.kind.value}{detail}"

    # -- records -------------------------------------------------------------
    def record(self) -> MatchRecord:
        players = (self.seats[0].name, self.seats[1].name)
        return self.games.to_record(players)

    # -- the client's view -----------------------------------------------------
    def view(self, viewer: int | None) -> dict[str, Any]:
        """What a client sitting in seat ``viewer`` (None: a spectator) is sent."""
        game = self.game
        score = self.games.score
        acting = self.to_act
        out: dict[str, Any] = {
            **self._common_view(viewer),
            "kind": "match" if self.match_length else "money",
            "side": viewer,
            "you_act": acting is not None and acting == viewer,
            "roles": [],
            "waiting_for": self.waiting_for(),
            "votes": [],
            "score": list(score),
            "match_length": self.match_length,
            "game_number": self.game_number(),
            "crawford": bool(game and game.options.crawford),
            "seq": len(self.log),
            "to_act": acting,
            "game": None
            if game is None
            else game_view(
                game,
                acting is not None and acting == viewer,
                sorted(a.value for a in game.legal_actions())
                if acting is not None and acting == viewer
                else [],
            ),
            "winner": self.games.winner if isinstance(self.games, Match) else None,
            "between_games": bool(
                self.status == "playing" and not self.match_length and game and game.is_over
            ),
        }
        return out


def borne_off(board: Position) -> list[int]:
    """Checkers borne off by player 0 and player 1 of a board seen from player 0."""
    return [15 - sum(c for c in board if c > 0), 15 + sum(c for c in board if c < 0)]


def game_view(game: Game, show_plays: bool, legal_actions: Sequence[str]) -> dict[str, Any]:
    """A game as a client is sent it: the board from player 0's side (+n player 0's
    checkers, -n player 1's; 25 is player 0's bar, 0 player 1's), and the legal
    plays when ``show_plays`` (the viewer is to play)."""
    board = game.position_for(0)
    pips = board.pip_counts()
    plays: list[dict[str, Any]] = []
    if show_plays and game.decision is Decision.PLAY:
        position = game.position
        for play in game.legal_plays():
            after = play.result.flip()  # the mover's side, after the play
            plays.append(
                {
                    "play": position.format_play(play),
                    "moves": [[m[0], m[1]] for m in play.moves],
                    "result": after.position_id(),
                    "board": list(after),
                }
            )
    result = game.result
    resignation = None
    if game.decision is Decision.ANSWER_RESIGNATION:
        resignation = next(a.resign for a in reversed(game.actions) if a.resign)
    return {
        "board": list(board),
        "off": borne_off(board),
        "pips": [pips[0], pips[1]],
        "position_id": game.position.position_id(),
        "on_roll": game.on_roll,
        "turn": game.turn,
        "decision": game.decision.value,
        "dice": list(game.dice) if game.dice else None,
        "cube": game.cube_value,
        "cube_owner": game.cube_owner,
        "cube_in_play": game.options.cube,
        "legal_actions": list(legal_actions),
        "legal_plays": plays,
        "resignation": resignation,
        "result": None
        if result is None
        else {
            "winner": result.winner,
            "kind": result.kind.value,
            "cube": result.cube,
            "points": result.points,
        },
        "history": [_action_text(a) for a in game.actions],
    }


def _action_text(action: Action) -> dict[str, Any]:
    out: dict[str, Any] = {"seat": action.player, "kind": action.kind.value}
    for field in ("dice", "play", "cube", "resign"):
        value = getattr(action, field)
        if value is not None:
            out[field] = list(value) if field == "dice" else value
    return out
