"""A chouette table on the server: 3-8 players, the box against the team (RULES.md 10).

:class:`ChouetteTable` runs a :class:`~nard.match.chouette.Chouette` of
money games for its seats (people or the computer). The seats are drawn for
the box, the captain and the crew by the table's fair dice once every seat is
filled. The box plays its side; the captain rolls and moves for the team. A
team double needs every member still in the game to agree: the captain
proposes (``double``) and each other member answers ``agree`` or ``refuse``.
When the box doubles, each member answers ``take`` or ``pass`` alone; those
who pass pay and leave the game. After each game the line rotates, and the
standings carry the points won and lost; a new game starts when a seated
player asks for it.

Like :class:`~nard.server.tables.LiveTable` it is rebuilt from its log of
commands (here JSON objects, since ``agree`` and ``refuse`` are not game
actions) on the same dice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from nard.match.chouette import Chouette, ChouetteGame
from nard.match.commands import Command, InvalidCommandError, perform
from nard.match.game import Decision, Game, GameAction, MatchStateError
from nard.match.match import MoneyRules
from nard.notation.json_record import DiceCommitment
from nard.notation.records import GameRecord, MatchRecord
from nard.server.tables import (
    TABLE_SEAT,
    NotYourTurnError,
    SeatInfo,
    TableBase,
    TableClosedError,
    TableRules,
    game_view,
    result_view,
    step_caption,
)

__all__ = ["ChouetteTable"]

BOX, TEAM = 0, 1
MEMBER_ACTIONS = ("roll", "play", "double", "take", "pass", "agree", "refuse")


def parse_command(data: Mapping[str, Any]) -> dict[str, Any]:
    """A chouette command's JSON, checked: ``{"action": ..., "play": ...}``."""
    if not isinstance(data, Mapping):
        raise InvalidCommandError(f"a command is a JSON object, not {type(data).__name__}")
    action = data.get("action")
    if action not in MEMBER_ACTIONS:
        raise InvalidCommandError(
            f"unknown chouette action {action!r}: one of {', '.join(MEMBER_ACTIONS)}"
        )
    extra = set(data) - {"action", "play"}
    if extra or (action == "play") != ("play" in data):
        raise InvalidCommandError(f"bad fields for {action!r}: {sorted(set(data))}")
    if action == "play" and not isinstance(data["play"], str):
        raise InvalidCommandError(f"play must be text, not {data['play']!r}")
    return dict(data)


class ChouetteTable(TableBase):
    """The game state of one chouette table, driven by its seats' commands."""

    def __init__(
        self,
        table_id: str,
        rules: TableRules,
        seats: Sequence[SeatInfo],
        server_seed: bytes,
        *,
        client_seed: str | None = None,
    ) -> None:
        if not 3 <= len(seats) <= 8:
            raise ValueError(f"a chouette is for 3-8 players, not {len(seats)}")
        if rules.match_length:
            raise ValueError("a chouette is played for money (match length 0)")
        super().__init__(table_id, rules, seats, server_seed, client_seed=client_seed)
        self.chouette: Chouette | None = None
        self.seating_dice = 0  # the dice of the draw for the box and the captain
        self.votes: dict[int, bool] = {}  # a team double being agreed
        self.answers: dict[int, bool] = {}  # the members' answers to the box's double
        self.double_refused = False  # the team said no this turn: the captain rolls

    @property
    def match_length(self) -> int:
        return 0

    # -- state ---------------------------------------------------------------

    @property
    def current(self) -> ChouetteGame | None:
        if self.chouette is None or not self.chouette.games:
            return None
        return self.chouette.games[-1]

    @property
    def game(self) -> Game | None:
        current = self.current
        return current.game if current else None

    def seat_of_key(self, key: str) -> int:
        return int(key)

    def waiting_for(self) -> list[int]:
        """The seats whose answer the table waits for (several while members vote)."""
        current = self.current
        if self.status != "playing" or current is None or current.game.is_over:
            return []
        game = current.game
        box = self.seat_of_key(current.box)
        captain = self.seat_of_key(current.captain)
        members = [self.seat_of_key(m) for m in current.active]
        if self.votes:
            return [m for m in members if m not in self.votes]
        if game.decision is Decision.TAKE_OR_PASS:
            if game.on_roll == BOX:
                return [m for m in members if m not in self.answers]
            return [box]
        if game.decision is Decision.OPENING_ROLL:
            return []
        return [box] if game.on_roll == BOX else [captain]

    @property
    def to_act(self) -> int | None:
        """One seat the table waits for (the first), for drivers that take turns."""
        waiting = self.waiting_for()
        return waiting[0] if waiting else None

    def legal_for(self, seat: int) -> list[str]:
        """The actions ``seat`` may send now."""
        if seat not in self.waiting_for():
            return []
        game = self.game
        current = self.current
        assert game is not None and current is not None
        if self.votes:
            return ["agree", "refuse"]
        if game.decision is Decision.TAKE_OR_PASS:
            return ["pass", "take"]
        legal = game.legal_actions()
        if self.double_refused:
            legal.discard(GameAction.DOUBLE)
        out = [a.value for a in (GameAction.DOUBLE, GameAction.PLAY, GameAction.ROLL) if a in legal]
        return sorted(out)

    # -- acting --------------------------------------------------------------
    def start(self, *, next_game: bool = False) -> list[tuple[int, dict[str, Any]]]:
        """The table's own steps due now: seating by the dice once everyone is there,
        the first game, and a later one when asked."""
        if self.status != "playing":
            return []
        steps: list[tuple[int, dict[str, Any]]] = []
        if self.chouette is None:
            self._seat_players()
            steps.append((TABLE_SEAT, {"action": "seat"}))
            self._logged(*steps[-1])
        current = self.current
        if current is None or (current.game.is_over and next_game):
            self.chouette_new_game()
            steps.append((TABLE_SEAT, {"action": "opening roll"}))
            self._logged(*steps[-1])
        return steps

    def _seat_players(self) -> None:
        money = MoneyRules(
            cube=True,
            jacoby=self.rules.jacoby,
            automatic_doubles=0,
            backgammon=self.rules.backgammon,
        )
        keys = [str(i) for i in range(len(self.seats))]
        self.chouette = Chouette.draw(keys, self.dice, money)
        self.seating_dice = len(self.dice.log)

    def chouette_new_game(self) -> None:
        assert self.chouette is not None
        game = self.chouette.new_game().game
        perform(game, Command(GameAction.OPENING_ROLL))
        self.votes.clear()
        self.answers.clear()
        self.double_refused = False

    def next_game(self) -> list[tuple[int, dict[str, Any]]]:
        game = self.game
        if self.status != "playing" or game is None or not game.is_over:
            raise TableClosedError("a new game starts when the last one is over")
        return self.start(next_game=True)

    def act(self, seat: int, data: Mapping[str, Any]) -> list[tuple[int, dict[str, Any]]]:
        """``seat`` sends ``data``; returns it (the table's steps cannot follow)."""
        if self.status != "playing":
            raise TableClosedError(f"table {self.id} is {self.status}: no actions now")
        command = parse_command(data)
        action = command["action"]
        if seat not in self.waiting_for():
            raise NotYourTurnError(f"the table does not wait for seat {seat} now")
        if action not in self.legal_for(seat):
            allowed = ", ".join(self.legal_for(seat))
            raise MatchStateError(f"{action!r} is not possible now; seat {seat} may: {allowed}")
        before = self._actions()
        self._apply(seat, command)
        self._logged(seat, command, before)
        return [(seat, command)]

    def _apply(self, seat: int, command: Mapping[str, Any]) -> None:
        current = self.current
        assert current is not None
        game = current.game
        action = command["action"]
        box = self.seat_of_key(current.box)
        members = [self.seat_of_key(m) for m in current.active]
        if action in ("agree", "refuse"):
            if action == "refuse":
                self.votes.clear()  # the captain rolls instead
                self.double_refused = True
                return
            self.votes[seat] = True
            if all(m in self.votes for m in members):
                current.team_double({str(m): True for m in members})
                self.votes.clear()
            return
        if action == "double" and seat != box:
            self.votes = {seat: True}
            if len(members) == 1:
                current.team_double({str(seat): True})
                self.votes.clear()
            return
        if action in ("take", "pass") and game.on_roll == BOX:
            self.answers[seat] = action == "take"
            if all(m in self.answers for m in members):
                current.answer_box_double({str(m): self.answers[m] for m in members})
                self.answers.clear()
            return
        if action == "play":
            perform(game, Command(GameAction.PLAY, play=command["play"]))
        else:
            perform(game, Command(GameAction(action)))
        if action == "roll":
            self.double_refused = False

    def _replay_game_action(self, seat: int, command: Mapping[str, Any]) -> None:
        if seat == TABLE_SEAT:
            if command["action"] == "seat":
                self._seat_players()
            else:
                self.chouette_new_game()
            self._logged(seat, dict(command))
            return
        before = self._actions()
        self._apply(seat, parse_command(command))
        self._logged(seat, dict(command), before)

    def scores(self) -> list[int]:
        return self.standings()

    def game_number(self) -> int:
        return len(self.chouette.games) if self.chouette else 0

    def _actions(self) -> int:
        """How many actions the game in play has recorded."""
        return len(self.game.actions) if self.game else 0

    def _logged(self, seat: int, command: dict[str, Any], before: int = 0) -> None:
        self.log.append((seat, command))
        game = self.game
        if game is None:
            return
        current = self.current
        assert current is not None

        def side_name(side: int) -> str:
            key = current.box if side == BOX else current.captain
            return self.seats[self.seat_of_key(key)].name

        name = self.seats[seat].name if seat != TABLE_SEAT else None
        recorded = len(game.actions) > before
        self._snapshot(step_caption(game, command["action"], name, side_name, recorded))

    # -- records and the client's view ------------------------------------------
    def record(self) -> MatchRecord:
        """The chouette's games as a money record: player 0 is the box, player 1 the
        team (its score the points each side won game after game, whoever held it);
        the metadata names who was box and team in each game. The standings, with
        the members who passed a double, are the table's, not the record's."""
        played = self.chouette.games if self.chouette else []
        games = []
        score = [0, 0]  # points won by whoever was box, and by the team, game after game
        for number, current in enumerate(played, start=1):
            result = current.game.result
            games.append(
                GameRecord(
                    number=number,
                    score=(score[0], score[1]),
                    actions=current.game.actions,
                    winner=result.winner if result else None,
                    points=result.points if result else None,
                )
            )
            if result is not None:
                score[result.winner] += result.points
        metadata = {"event": "chouette"}
        for number, current in enumerate(played, start=1):
            team = ", ".join(self.seats[int(k)].name for k in current.team)
            metadata[f"game {number}"] = f"box {self.seats[int(current.box)].name}; team {team}"
        return MatchRecord(
            match_length=0,
            games=tuple(games),
            players=("box", "team"),
            jacoby=self.rules.jacoby,
            metadata=metadata,
        )

    def dice_commitment(self) -> DiceCommitment:
        return replace(super().dice_commitment(), preamble=self.seating_dice)

    def standings(self) -> list[int]:
        if self.chouette is None:
            return [0] * len(self.seats)
        totals = self.chouette.standings()
        return [totals[str(i)] for i in range(len(self.seats))]

    def view(self, viewer: int | None) -> dict[str, Any]:
        current = self.current
        game = self.game
        side: int | None = None
        roles: list[str] = ["" for _ in self.seats]
        if current is not None:
            box = self.seat_of_key(current.box)
            roles[box] = "box"
            for key in current.team:
                member = self.seat_of_key(key)
                if key not in current.active:
                    roles[member] = "out"  # passed the box's double
                else:
                    roles[member] = "captain" if key == current.captain else "crew"
            if viewer is not None:
                side = BOX if viewer == box else TEAM
        waiting = self.waiting_for()
        legal = self.legal_for(viewer) if viewer is not None else []
        gview = None
        if game is not None:
            acting = viewer is not None and "play" in legal
            gview = game_view(game, acting, legal)
        return {
            **self._common_view(viewer),
            "kind": "chouette",
            "side": side,
            "you_act": bool(legal),
            "roles": roles,
            "score": self.standings(),
            "match_length": 0,
            "game_number": len(self.chouette.games) if self.chouette else 0,
            "crawford": False,
            "seq": self.seq,
            "to_act": waiting[0] if waiting else None,
            "waiting_for": waiting,
            "game": gview,
            "results": [
                result_view(g.game.result)
                for g in (self.chouette.games if self.chouette else [])
                if g.game.result is not None
            ],
            "winner": None,
            "between_games": bool(self.status == "playing" and game is not None and game.is_over),
            "votes": sorted(self.votes),
        }
