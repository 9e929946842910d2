"""A table in play: a match or money session, its seats and its fair dice.

:class:`LiveTable` is the server's game state, rebuilt from what is stored
(:mod:`nard.server.models`): the rules, the seats, the dice seeds and the log
of what happened (the seats' commands, as JSON, and the table's own
actions). The rules themselves are
:mod:`nard.match`'s; this module adds who sits where, who may act, the
table's own steps (a new game starts and its opening roll is made as soon as
the previous game ends) and the view a client is sent.

>>> seats = (SeatInfo("ann", player_id=1), SeatInfo("bob", player_id=2))
>>> table = LiveTable("t1", TableRules(match_length=3), seats, bytes(range(32)))
>>> table.status, table.missing_contributions()
('seeding', [0, 1])
>>> table.contribute(0, "ann-7f3a")
[(0, {'action': 'seed', 'seed': 'ann-7f3a', 'source': 'player'})]
>>> table.contribute(1, "bob-19c2")[1:]
[(-1, {'action': 'opening roll'})]
>>> table.to_act in (0, 1), table.status, table.fair_dice.client_seed
(True, 'playing', 'ann-7f3a\\nbob-19c2')
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from nard.core.dice import Dice
from nard.engine import Level
from nard.match.clock import Clocks, TimeControl
from nard.match.commands import Command, perform
from nard.match.dice import (
    FairDice,
    RecordingDice,
    check_contribution,
    combine_contributions,
    seed_commitment,
)
from nard.match.game import Decision, Game, GameAction, GameResult, MatchStateError
from nard.match.match import Match, MatchRules, MoneyRules, Session
from nard.notation.json_record import DiceCommitment, SeedContribution
from nard.notation.records import Action, ActionKind, MatchRecord

__all__ = [
    "TABLE_ACTIONS",
    "TABLE_SEAT",
    "Contribution",
    "ContributionClosedError",
    "GameOverError",
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


TABLE_ACTIONS = frozenset({"sit", "leave", "seed", "end", "claim", "timeout"})
"""The table's own actions in its log (the rest are the game's commands)."""


class NotYourTurnError(MatchStateError):
    """A seat tried to act when the game waits for the other seat."""


class TableClosedError(MatchStateError):
    """An action at a table that is not in play (waiting for a player, or finished)."""


class GameOverError(MatchStateError):
    """An action in a money session between games: the next game starts when a
    player asks for it (or the session ends)."""


class ContributionClosedError(MatchStateError):
    """A contribution to the dice that is not taken: given already, too late, or
    from a seat that does not contribute."""


@dataclass(frozen=True)
class Contribution:
    """One seat's contribution to the table's client seed (``source`` ``player``, or
    ``timeout`` with an empty seed when it did not come in time)."""

    seat: int
    seed: str
    source: str = "player"


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
        # Every field is a number or a flag: a plain dict of them (asdict deep-copies,
        # and every view of every table asks for it).
        return {name: getattr(self, name) for name in _RULE_FIELDS}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TableRules:
        return cls(**dict(data))


_RULE_FIELDS = tuple(f.name for f in fields(TableRules))


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
    (every die recorded), the log of everything that happened at it, and
    whether it has finished.

    The dice: the server's secret seed is fixed (and committed to) when the
    table is created; then every seated person adds a contribution
    (``seed`` actions), and only when all of them are in (or the deadline
    passed and the missing ones were logged as ``timeout``) is the client
    seed formed and the first die rolled (docs/fair-dice.md). A table made
    before contributions existed has its one ``client_seed`` from the start.

    Besides the game's own commands the log holds the table's: ``sit`` (a
    person takes an open seat), ``leave`` (gives it up before the first
    roll), ``seed`` (a contribution) and ``end`` (the table stops). Every entry
    is ``(seat, JSON object)`` as stored, and the table's sequence number is
    the length of its log.
    """

    def __init__(
        self,
        table_id: str,
        rules: TableRules,
        seats: Sequence[SeatInfo],
        server_seed: bytes,
        *,
        client_seed: str | None = None,
    ) -> None:
        self.id = table_id
        self.rules = rules
        self.seats = list(seats)
        self._server_seed = server_seed
        self.commitment = seed_commitment(server_seed)
        self.contributions: dict[int, Contribution] = {}
        self.fair_dice: FairDice | None = None
        self.dice = RecordingDice(_NotSeeded())
        if client_seed is not None:  # a table from before contributions
            self._seed_dice(client_seed)
        self.finished = False
        self.abandoned = False  # ended unfinished by its player (against the computer)
        self.log: list[tuple[int, dict[str, Any]]] = []
        self._steps: list[tuple[Any, ...]] = []
        """The board after every logged game action, for the replay viewer (``steps``)."""
        self.invite_token = ""
        self.public = False
        self.rated = False
        """A rated match (:mod:`nard.server.ratings`)."""
        self.challenged: int | None = None
        """The one player who may take the open seat (a challenge, or a rematch)."""
        self.rematch_of: str | None = None
        self.seek: dict[str, Any] | None = None
        """A lobby seek's rating range (``min_rating``, ``max_rating``; None: any)."""
        self.clocks: Clocks | None = None
        """The players' clocks under the table's time control (None: untimed)."""
        self.timed_out: int | None = None
        """The seat that lost by forfeit (see :attr:`forfeit`), if one did."""
        self.forfeit: str | None = None
        """Why: ``clock`` (its time ran out), ``disconnected`` (away past the grace
        period, claimed by the opponent) or ``left`` (it left the match)."""
        self.time_ms: Callable[[], int] | None = None
        """The server's clock (ms), for the clocks' view; set by the service."""
        self.seed_deadline: datetime | None = None
        """When the contributions are due (set by the service once every seat is filled)."""

    @property
    def seq(self) -> int:
        """The table's sequence number: how many actions it has logged."""
        return len(self.log)

    @property
    def game(self) -> Game | None:  # pragma: no cover - every kind of table has its own
        raise NotImplementedError

    def scores(self) -> list[int]:  # pragma: no cover - every kind of table has its own
        raise NotImplementedError

    def game_number(self) -> int:  # pragma: no cover - every kind of table has its own
        raise NotImplementedError

    def waiting_for(self) -> list[int]:  # pragma: no cover - every kind of table has its own
        raise NotImplementedError

    def is_match_over(self) -> bool:
        return False

    def start(self, *, next_game: bool = False) -> list[tuple[int, dict[str, Any]]]:
        raise NotImplementedError  # pragma: no cover - every kind of table has its own

    def _replay_game_action(self, seat: int, command: Mapping[str, Any]) -> None:
        raise NotImplementedError  # pragma: no cover - every kind of table has its own

    def _snapshot(self, caption: dict[str, Any] | None) -> None:
        """Keep the board as it is after the action just logged (seat 0's side, or the
        box's in a chouette, as the view gives it), with its caption (what happened,
        for the page to say in its language) and the caption in English (``text``)."""
        game = self.game
        if game is None:
            return
        board = game.position_for(0)
        self._steps.append(
            (
                self.game_number(),
                tuple(board),
                tuple(game.dice) if game.dice else None,
                game.cube_value,
                game.cube_owner,
                tuple(self.scores()),
                None
                if caption is None
                else tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in caption.items()),
                caption_text(caption),
            )
        )

    @property
    def steps(self) -> list[dict[str, Any]]:
        """The board after each action, with its caption, for the replay viewer.

        Kept as flat tuples of numbers and text and made into dicts only when asked
        for: CPython stops tracking such tuples, and a live table keeps one per
        action (kept as dicts of lists, a full collection walked them all: pauses
        of 70-110 ms under load, tests/server/test_memory.py)."""
        return [
            {
                "game": game,
                "board": list(board),
                "off": borne_off(board),
                "dice": list(dice) if dice is not None else None,
                "cube": cube,
                "cube_owner": owner,
                "score": list(score),
                "caption": None
                if caption is None
                else {k: list(v) if isinstance(v, tuple) else v for k, v in caption},
                "text": text,
            }
            for game, board, dice, cube, owner, score, caption, text in self._steps
        ]

    # -- who sits, and the dice --------------------------------------------------
    @property
    def status(self) -> str:
        """``waiting`` (a seat is open), ``seeding`` (the dice contributions are not all
        in), ``playing`` or ``finished``."""
        if self.finished:
            return "finished"
        if any(s.is_open for s in self.seats):
            return "waiting"
        if self.fair_dice is None:
            return "seeding"
        return "playing"

    @property
    def started(self) -> bool:
        """Whether the first die has been rolled (the seats and seeds are final)."""
        return self.fair_dice is not None

    def contributors(self) -> list[int]:
        """The seats that contribute to the dice: every seat of a person."""
        return [n for n, s in enumerate(self.seats) if not s.is_computer]

    def missing_contributions(self) -> list[int]:
        """The seats (filled or open) whose contribution is not in yet."""
        if self.started:
            return []
        return [n for n in self.contributors() if n not in self.contributions]

    def sit(self, seat: int, info: SeatInfo) -> list[tuple[int, dict[str, Any]]]:
        """A person takes the open ``seat``; the log entry."""
        if self.finished or self.started:
            raise TableClosedError(f"table {self.id} has started: no seat is open")
        if not 0 <= seat < len(self.seats) or not self.seats[seat].is_open:
            raise TableClosedError(f"seat {seat} of table {self.id} is taken")
        return self._seat_person("sit", seat, info)

    def claim(self, seat: int, info: SeatInfo) -> list[tuple[int, dict[str, Any]]]:
        """The account ``info`` takes over ``seat`` from the guest who sat there (the
        guest signed in): at any time, the game and its record going on under the
        account's name. The log entry."""
        if not 0 <= seat < len(self.seats) or self.seats[seat].player_id is None:
            raise TableClosedError(f"seat {seat} of table {self.id} has no person to claim")
        return self._seat_person("claim", seat, info)

    def _seat_person(
        self, action: str, seat: int, info: SeatInfo
    ) -> list[tuple[int, dict[str, Any]]]:
        if info.player_id is None:
            raise ValueError(f"a seat is taken by a person, not {info!r}")
        entry = {"action": action, "player_id": info.player_id, "name": info.name}
        self._apply_table_action(seat, entry)
        return [(seat, entry)]

    def leave(self, seat: int) -> list[tuple[int, dict[str, Any]]]:
        """The person in ``seat`` gives it up before the first roll; the log entry."""
        if self.finished or self.started:
            raise TableClosedError(f"table {self.id} has started: resign instead of leaving")
        entry = {"action": "leave"}
        self._apply_table_action(seat, entry)
        return [(seat, entry)]

    def contribute(
        self, seat: int, seed: str, *, source: str = "player"
    ) -> list[tuple[int, dict[str, Any]]]:
        """``seat``'s contribution to the dice; when it is the last one, the table's
        first steps follow (the opening roll). Raises before changing anything."""
        if self.finished or self.started:
            raise ContributionClosedError(
                f"table {self.id} has rolled its first die: contributions are closed"
            )
        if seat not in self.contributors():
            raise ContributionClosedError(f"seat {seat} does not contribute to the dice")
        if seat in self.contributions:
            raise ContributionClosedError(f"seat {seat} has given its contribution")
        if source == "player":
            check_contribution(seed)
        entry = {"action": "seed", "seed": seed, "source": source}
        self._apply_table_action(seat, entry)
        return [(seat, entry), *self.start()]

    def time_out_contributions(self) -> list[tuple[int, dict[str, Any]]]:
        """Log an empty contribution for every seated person who did not give theirs
        (the deadline passed), then start: the entries."""
        if any(s.is_open for s in self.seats):
            raise TableClosedError(f"table {self.id} waits for a player: it cannot start")
        entries: list[tuple[int, dict[str, Any]]] = []
        for seat in self.missing_contributions():
            entry = {"action": "seed", "seed": "", "source": "timeout"}
            self._apply_table_action(seat, entry)
            entries.append((seat, entry))
        return [*entries, *self.start()]

    def end(self, seat: int, *, abandoned: bool = False) -> list[tuple[int, dict[str, Any]]]:
        """``seat`` stops the table (``abandoned``: a match or game left unfinished);
        the log entry."""
        if self.finished:
            raise TableClosedError(f"table {self.id} is finished")
        entry: dict[str, Any] = (
            {"action": "end", "abandoned": True} if abandoned else {"action": "end"}
        )
        self._apply_table_action(seat, entry)
        return [(seat, entry)]

    def _apply_table_action(self, seat: int, command: Mapping[str, Any]) -> None:
        action = command["action"]
        if action in ("sit", "claim"):
            self.seats[seat] = SeatInfo(str(command["name"]), player_id=int(command["player_id"]))
        elif action == "leave":
            self.seats[seat] = SeatInfo("open seat")
            self.contributions.pop(seat, None)
        elif action == "seed":
            self.contributions[seat] = Contribution(
                seat, str(command["seed"]), str(command.get("source", "player"))
            )
            if not self.missing_contributions() and not any(s.is_open for s in self.seats):
                ordered = [self.contributions[n] for n in sorted(self.contributions)]
                self._seed_dice(combine_contributions([c.seed for c in ordered]))
        elif action == "end":
            self.finished = True
            self.abandoned = bool(command.get("abandoned", False))
        elif action == "timeout":
            self.forfeit = str(command.get("reason", "clock"))
            self._time_out(int(command["seat"]))
        else:  # pragma: no cover - TABLE_ACTIONS lists the cases above
            raise AssertionError(action)
        self.log.append((seat, dict(command)))

    def _seed_dice(self, client_seed: str) -> None:
        self.fair_dice = FairDice(self._server_seed, client_seed)
        self.dice.source = self.fair_dice

    def replay(self, log: Sequence[tuple[int, Mapping[str, Any]]]) -> None:
        """Apply stored actions (at a freshly built table, or one that fell behind); the
        time each was committed at (``at``, ms) runs the clocks as it did."""
        for seat, stored in log:
            command = {k: v for k, v in stored.items() if k != "at"}
            if command.get("action") in TABLE_ACTIONS:
                self._apply_table_action(seat, command)
            else:
                self._replay_game_action(seat, command)
            at = stored.get("at")
            if isinstance(at, int) and not isinstance(at, bool):
                self.clock_after([(seat, command)], at)
        if self.is_match_over():
            self.finished = True

    # -- clocks ------------------------------------------------------------------
    def set_time_control(self, control: TimeControl) -> None:
        """Put the table under ``control`` (before anything is logged)."""
        raise TableClosedError("this kind of table has no clocks")

    def clock_after(self, entries: Sequence[tuple[int, Mapping[str, Any]]], at: int) -> None:
        """The clocks after ``entries`` were committed at ``at`` (ms): the running
        player pays for its wait if it acted; then the clock runs for whoever the
        table waits for now (from ``at``), unless that is still the same wait."""
        clocks = self.clocks
        if clocks is None:
            return
        acted = {seat for seat, _ in entries}
        running = clocks.running
        if running is not None and running in acted:
            clocks.stop(at)
        if any(c.get("action") == "opening roll" for _, c in entries) and not self.match_length:
            clocks.refill()  # money play: a reserve per game
        waiting = self._clocked_seat()
        if waiting is None:  # nobody's clock runs (between games, the table ended)
            clocks.running = clocks.started = None
        elif waiting != clocks.running:
            clocks.start(waiting, at)

    def _clocked_seat(self) -> int | None:
        """The seat whose clock should run: a person the table waits for, in play."""
        return None

    @property
    def match_length(self) -> int:
        return self.rules.match_length

    def time_out(self, seat: int, reason: str = "clock") -> list[tuple[int, dict[str, Any]]]:
        """``seat`` loses by forfeit: its time is up (see :mod:`nard.match.clock`), it
        was away too long, or it left (``reason``); the log entry."""
        if self.finished:
            raise TableClosedError(f"table {self.id} is finished")
        entry: dict[str, Any] = {"action": "timeout", "seat": seat}
        if reason != "clock":
            entry["reason"] = reason
        self._apply_table_action(TABLE_SEAT, entry)
        return [(TABLE_SEAT, entry)]

    def _time_out(self, seat: int) -> None:
        self.timed_out = seat
        self.finished = True
        if self.clocks is not None:
            self.clocks.reserves[seat] = min(self.clocks.reserves[seat], 0)
            self.clocks.running = self.clocks.started = None

    def clock_view(self) -> dict[str, Any] | None:
        if self.clocks is None:
            return None
        now = self.time_ms() if self.time_ms is not None else 0
        return {**self.clocks.view(now), "timed_out": self.timed_out}

    def finish(self) -> None:
        """End the table (the match is won, or the session or chouette stopped)."""
        self.finished = True

    def dice_commitment(self) -> DiceCommitment:
        """The commitment, the client seed and its contributions, the seed once the
        table is finished, the dice."""
        return DiceCommitment(
            commitment=self.commitment,
            client_seed=self.fair_dice.client_seed if self.fair_dice else "",
            server_seed=self.revealed_seed(),
            log=tuple(self.dice.log),
            contributions=tuple(
                SeedContribution(c.seat, self.seats[c.seat].name, c.seed, c.source)
                for c in sorted(self.contributions.values(), key=lambda c: c.seat)
            ),
        )

    def revealed_seed(self) -> str | None:
        """The server seed in hex once the table is finished, else None."""
        if not self.finished:
            return None
        if self.fair_dice is not None:
            self.fair_dice.reveal()
        return self._server_seed.hex()

    def _common_view(self, viewer: int | None) -> dict[str, Any]:
        """The parts of a client's view every kind of table shares."""
        missing = self.missing_contributions()
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
            "dice_commitment": self.commitment,
            "client_seed": self.fair_dice.client_seed if self.fair_dice else None,
            "contributions": [
                {
                    "seat": n,
                    "given": n in self.contributions,
                    "seed": self.contributions[n].seed if n in self.contributions else None,
                    "source": self.contributions[n].source if n in self.contributions else None,
                }
                for n in self.contributors()
            ],
            "you_contribute": viewer is not None
            and viewer in missing
            and not self.seats[viewer].is_open
            and not self.finished,
            "seed_deadline": None
            if self.seed_deadline is None or self.started
            else self.seed_deadline.isoformat(),
            "server_seed": self.revealed_seed(),
            "invite": None,
            "abandoned": self.abandoned,
            "rated": self.rated,
            "clock": self.clock_view(),
            "timed_out": self.timed_out,
            "forfeit": self.forfeit,
            "challenged": self.challenged,
            "rematch_of": self.rematch_of,
            "seek": self.seek,
        }


class _NotSeeded:
    """The dice source of a table whose contributions are not all in: it cannot roll."""

    def roll(self) -> Dice:
        raise TableClosedError("the dice are not seeded yet: contributions are missing")

    def opening_roll(self) -> Dice:
        return self.roll()


class LiveTable(TableBase):
    """The game state of one table, driven by seats' commands."""

    def __init__(
        self,
        table_id: str,
        rules: TableRules,
        seats: Sequence[SeatInfo],
        server_seed: bytes,
        *,
        client_seed: str | None = None,
    ) -> None:
        if len(seats) != 2:
            raise ValueError(f"a table has two seats, not {len(seats)}")
        super().__init__(table_id, rules, seats, server_seed, client_seed=client_seed)
        self.games = rules.games(self.dice)

    # -- state ---------------------------------------------------------------

    @property
    def game(self) -> Game | None:
        """The game in progress or the last one played (None before the first)."""
        return self.games.games[-1] if self.games.games else None

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

    @property
    def winner(self) -> int | None:
        """The seat that won the match: by the score, or the other seat when one's
        time ran out (None: undecided, or money play)."""
        if not isinstance(self.games, Match):
            return None
        if self.games.winner is not None:
            return self.games.winner
        return None if self.timed_out is None else 1 - self.timed_out

    # -- clocks --------------------------------------------------------------
    def set_time_control(self, control: TimeControl) -> None:
        if self.log:
            raise TableClosedError("the time control is set before anything happens")
        self.clocks = Clocks(control, self.match_length)

    def _clocked_seat(self) -> int | None:
        seat = self.to_act
        return None if seat is None or self.seats[seat].is_computer else seat

    def _time_out(self, seat: int) -> None:
        """In money play the game in progress is lost at the cube (a gammon when no
        checker is off); a match is lost whatever the score. The table ends."""
        game = self.game
        in_play = game is not None and game.decision not in (Decision.OPENING_ROLL,)
        if not self.match_length and game is not None and in_play and not game.is_over:
            board = game.position_for(seat)
            gammon = sum(c for c in board if c > 0) == 15
            game.concede(seat, 2 if gammon else 1)
        super()._time_out(seat)

    # -- acting --------------------------------------------------------------
    def start(self, *, next_game: bool = False) -> list[tuple[int, dict[str, Any]]]:
        """The table's own steps due now, done and returned for storing.

        In a match the next game starts (with its opening roll) as soon as the
        last one ends, and the table finishes when the match is won. A money
        session starts its first game at once and each later one only when
        asked (``next_game``), so that a player can stop between games.
        """
        if self.status != "playing":
            return []
        steps: list[tuple[int, dict[str, Any]]] = []
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
            steps.append((TABLE_SEAT, command.to_json()))
        return steps

    def next_game(self) -> list[tuple[int, dict[str, Any]]]:
        """Start the next game of a money session (the last one is over)."""
        game = self.game
        if self.status != "playing" or self.match_length or game is None or not game.is_over:
            raise TableClosedError("a new game starts when a money game is over")
        return self.start(next_game=True)

    def act(self, seat: int, command: Command) -> list[tuple[int, dict[str, Any]]]:
        """``seat`` gives ``command``; returns it and the table steps that followed.

        Raises :class:`NotYourTurnError`, :class:`TableClosedError` or the rules'
        own error, and then nothing has changed.
        """
        if self.status != "playing":
            raise TableClosedError(f"table {self.id} is {self.status}: no actions now")
        if command.action is GameAction.OPENING_ROLL:
            raise MatchStateError("the opening roll is made by the table, not a seat")
        game = self.game
        if game is None or game.is_over:
            # start() begins every match game at once; a money session's next game
            # waits until a player asks for it.
            raise GameOverError(
                "the game is over: start the next game (next-game) or end the session"
            )
        if seat != game.turn:
            name = self.seats[game.turn].name
            raise NotYourTurnError(
                f"not seat {seat}'s turn: the game waits for {name} (seat {game.turn}) "
                f"to {game.decision.value}"
            )
        perform(game, command)
        self._logged(seat, command)
        return [(seat, command.to_json()), *self.start()]

    def _replay_game_action(self, seat: int, data: Mapping[str, Any]) -> None:
        command = Command.from_json(data)
        game = self.game
        if seat == TABLE_SEAT and (game is None or game.is_over):
            game = self.games.new_game()  # the table's opening roll starts a game
        elif seat != TABLE_SEAT and (game is None or game.is_over or seat != game.turn):
            raise MatchStateError(f"stored action {self.seq} by seat {seat} out of turn")
        assert game is not None
        perform(game, command)
        self._logged(seat, command)

    def scores(self) -> list[int]:
        return list(self.games.score)

    def game_number(self) -> int:
        return len(self.games.games)

    def _logged(self, seat: int, command: Command) -> None:
        self.log.append((seat, command.to_json()))
        game = self.game
        if game is None:
            return
        name = self.seats[seat].name if seat != TABLE_SEAT else None
        self._snapshot(step_caption(game, command.action, name, lambda s: self.seats[s].name))

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
            "seq": self.seq,
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
            "results": [result_view(r) for r in self.games.results],
            "winner": self.winner,
            "between_games": bool(
                self.status == "playing" and not self.match_length and game and game.is_over
            ),
        }
        return out


def borne_off(board: Sequence[int]) -> list[int]:
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
                    "moves": [[m[0], m[1]] for m in play[2]],
                    "result": after.position_id(),
                    "board": list(after),
                }
            )
    result = game.result
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
        "resignation": game.resignation,
        "result": None if result is None else result_view(result),
        "history": history_view(game),
    }


_HISTORIES: weakref.WeakKeyDictionary[Game, tuple[Action, list[dict[str, Any]]]] = (
    weakref.WeakKeyDictionary()
)
"""Each live game's history as clients are sent it, and its last action: a game only
adds actions, so a view renders only those added since the last (a view of a long
game rendered every action of it, each time)."""


def history_view(game: Game) -> list[dict[str, Any]]:
    """The game's actions as clients are sent them, oldest first (a list that later
    views of the game extend: callers must not change it)."""
    actions = game.actions
    cached = _HISTORIES.get(game)
    if cached is not None:
        last, rendered = cached
        n = len(rendered)
        if 0 < n <= len(actions) and actions[n - 1] is last:
            if n < len(actions):
                rendered = rendered + [_action_text(a) for a in actions[n:]]
                _HISTORIES[game] = (actions[-1], rendered)
            return rendered
    rendered = [_action_text(a) for a in actions]
    if actions:
        _HISTORIES[game] = (actions[-1], rendered)
    return rendered


def step_caption(
    game: Game,
    action: str,
    name: str | None,
    side_name: Callable[[int], str],
    recorded: bool = True,
) -> dict[str, Any]:
    """What the step just taken did, for the replay viewer: ``kind`` (``opening``,
    ``roll``, ``no_play``, ``play``, ``double``, ``take``, ``drop``, ``beaver``,
    ``raccoon``, ``resign``, ``accept``, ``reject``, or in a chouette ``seating``,
    ``propose_double``, ``agree``, ``refuse`` and a member's own ``take`` or
    ``drop``), ``who`` and what goes with it (``dice``, ``play``, ``cube``,
    ``points``). ``name`` is who acted (None: the table itself), ``side_name``
    names the player of a side of the game, and ``recorded`` says whether the step
    added an action to the game (a chouette member's vote does not)."""
    last = game.actions[-1] if game.actions else None
    if action == GameAction.OPENING_ROLL:
        dice = list(game.dice) if game.dice else None
        return {"kind": "opening", "who": side_name(game.on_roll), "dice": dice}
    if action == GameAction.ROLL:
        unplayed = last is not None and last.kind is ActionKind.MOVE and not last.play
        if unplayed and last is not None and game.decision is not Decision.PLAY:
            return {"kind": "no_play", "who": name, "dice": _listed(last.dice)}
        return {"kind": "roll", "who": name, "dice": _listed(game.dice)}
    if recorded and last is not None and action in set(GameAction):
        if last.kind is ActionKind.MOVE:
            return {"kind": "play", "who": name, "dice": _listed(last.dice), "play": last.play}
        return {"kind": last.kind.value, "who": name, "cube": last.cube, "points": last.resign}
    kinds = {"seat": "seating", "double": "propose_double", "pass": "drop"}
    return {"kind": kinds.get(action, action), "who": name}


def _listed(dice: Sequence[int] | None) -> list[int] | None:
    return list(dice) if dice else None


def caption_text(caption: Mapping[str, Any] | None) -> str:
    """A step's caption in English."""
    if caption is None:
        return ""
    who = caption.get("who") or ""
    dice = caption.get("dice")
    rolled = f"{dice[0]}-{dice[1]}" if dice else ""
    kind = caption["kind"]
    if kind == "opening":
        return f"Opening roll {rolled}: {who} plays first"
    if kind == "roll":
        return f"{who} rolls {rolled}"
    if kind == "no_play":
        return f"{who} rolls {rolled}: no legal play"
    if kind == "play":
        return f"{who}: {rolled} {caption.get('play') or ''}".rstrip()
    if kind in ("double", "beaver", "raccoon"):
        return f"{who}: {kind} to {caption.get('cube')}"
    if kind == "resign":
        return f"{who}: resigns {caption.get('points')} point(s)"
    if kind == "seating":
        return "The players take their places"
    if kind == "propose_double":
        return f"{who}: proposes to double"
    return f"{who}: {kind}"


def result_view(result: GameResult) -> dict[str, Any]:
    """A finished game's result as clients are sent it."""
    return {
        "winner": result.winner,
        "kind": result.kind.value,
        "cube": result.cube,
        "points": result.points,
    }


def _action_text(action: Action) -> dict[str, Any]:
    """An action as a game's history shows it: numbers, text and tuples only, so that
    the garbage collector does not track what a live game keeps of every action."""
    out: dict[str, Any] = {"seat": action.player, "kind": action.kind.value}
    if action.dice is not None:
        out["dice"] = tuple(action.dice)
    if action.play is not None:
        out["play"] = action.play
    if action.cube is not None:
        out["cube"] = action.cube
    if action.resign is not None:
        out["resign"] = action.resign
    return out
