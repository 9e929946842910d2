"""Chouette: one player (the box) against a team of 2-7, as in RULES.md section 10.

Everyone rolls a die: the highest is in the box, the second highest the
captain, who moves the team's checkers; the rest follow in the order of their
rolls. The box is player 0 of each :class:`~nard.match.game.Game` and the team
player 1; the cube actions that differ from a two-player game go through the
:class:`ChouetteGame`: the team doubles only when every member agrees; when
the box doubles, each member takes or passes alone, and those who pass pay the
box the stake before the double and leave the game. At the end the box
settles with each member still in. Then the line rotates: if the team lost,
the captain goes to the end of the line and the next in line becomes captain;
if the team won, the captain goes into the box, the next in line becomes
captain, and the former box joins the end of the line.

>>> from nard.match.dice import FixedDice
>>> table = Chouette.from_rolls({"Ali": 3, "Sara": 6, "Reza": 5}, dice=FixedDice([(6, 1)]))
>>> table.box, table.captain, table.line
('Sara', 'Reza', ('Sara', 'Reza', 'Ali'))
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from nard.match.dice import DiceSource
from nard.match.game import Game, GameOptions, MatchStateError
from nard.match.match import MoneyRules

__all__ = ["Chouette", "ChouetteGame", "ChouetteSettlement"]

BOX, TEAM = 0, 1


@dataclass(frozen=True)
class ChouetteSettlement:
    """What one game paid: member name to points received from the box (negative: paid)."""

    payments: Mapping[str, int]
    team_won: bool

    @property
    def box_total(self) -> int:
        """What the box received in all."""
        return -sum(self.payments.values())


class ChouetteGame:
    """One game of a chouette: the box against the team members still in."""

    def __init__(self, box: str, team: Sequence[str], game: Game) -> None:
        self.box = box
        self.team = tuple(team)  # in line order, captain first
        self.game = game
        self.active = list(team)
        self._payments: dict[str, int] = {}
        self._last_captain = self.team[0]

    @property
    def captain(self) -> str:
        """The member who moves the team's checkers (the first still in); once every
        member has passed the box's double, which ends the game, the one who was.

        >>> from nard.match.game import Game
        >>> cg = ChouetteGame("Sara", ["Reza", "Ali"], Game())
        >>> cg.captain
        'Reza'
        """
        return self.active[0] if self.active else self._last_captain

    def team_double(self, consent: Mapping[str, bool]) -> None:
        """The team doubles the box: every member still in must agree."""
        missing = [m for m in self.active if m not in consent]
        if missing:
            raise MatchStateError(f"cannot double for the team: no answer from {missing}")
        against = [m for m in self.active if not consent[m]]
        if against:
            raise MatchStateError(
                f"cannot double for the team: the decision must be unanimous; {against} disagree"
            )
        if self.game.on_roll != TEAM:
            raise MatchStateError("cannot double for the team: it is the box's turn")
        self.game.double()

    def answer_box_double(self, takes: Mapping[str, bool]) -> None:
        """Each member still in takes (True) or passes (False) the box's double."""
        missing = [m for m in self.active if m not in takes]
        if missing:
            raise MatchStateError(f"cannot answer the double: no answer from {missing}")
        if self.game.on_roll != BOX or self.game.turn != TEAM:
            raise MatchStateError("cannot answer a double: the box has not doubled")
        stake = self.game.cube_value
        self._last_captain = self.active[0]
        passers = [m for m in self.active if not takes[m]]
        if len(passers) == len(self.active):
            self.game.pass_double()
        else:
            self.game.take()
        for m in passers:
            self._payments[m] = -stake
            self.active.remove(m)

    def settle(self) -> ChouetteSettlement:
        """The payments of the finished game (members who passed included)."""
        result = self.game.result
        if result is None:
            raise MatchStateError("cannot settle: the game is not over")
        payments = dict(self._payments)
        sign = 1 if result.winner == TEAM else -1
        for m in self.active:
            payments[m] = sign * result.points
        return ChouetteSettlement(payments, team_won=result.winner == TEAM)


class Chouette:
    """A chouette table for 3-8 players, with its line, games and totals."""

    def __init__(
        self, line: Sequence[str], rules: MoneyRules | None = None, dice: DiceSource | None = None
    ) -> None:
        names = list(line)
        if not 3 <= len(names) <= 8:
            raise ValueError(f"a chouette is for 3-8 players, not {len(names)}")
        if len(set(names)) != len(names):
            raise ValueError(f"players' names must differ: {names!r}")
        self._line = names
        self.rules = rules or MoneyRules()
        self.dice = dice
        self.games: list[ChouetteGame] = []
        self.totals: dict[str, int] = dict.fromkeys(names, 0)
        self._settled = 0

    @classmethod
    def from_rolls(
        cls,
        rolls: Mapping[str, int],
        rules: MoneyRules | None = None,
        dice: DiceSource | None = None,
    ) -> Chouette:
        """Seat the players by the dice they rolled: highest in the box, then captain...

        Equal rolls must be settled first (those players roll again).
        """
        values = list(rolls.values())
        if any(not 1 <= v <= 6 for v in values):
            raise ValueError(f"a die shows 1-6: {dict(rolls)!r}")
        if len(set(values)) != len(values):
            raise ValueError(f"equal rolls must be rolled again: {dict(rolls)!r}")
        return cls(sorted(rolls, key=lambda name: -rolls[name]), rules, dice)

    @classmethod
    def draw(
        cls, players: Sequence[str], dice: DiceSource, rules: MoneyRules | None = None
    ) -> Chouette:
        """Seat ``players`` by rolling one die each from ``dice``; players who tie
        roll again among themselves for their places. The table keeps ``dice``."""
        pending: list[int] = []

        def die() -> int:
            if not pending:
                pending.extend(dice.roll())
            return pending.pop(0)

        def order(group: list[str]) -> list[str]:
            if len(group) == 1:
                return group
            rolls = {name: die() for name in group}
            ordered: list[str] = []
            for value in sorted(set(rolls.values()), reverse=True):
                ordered += order([n for n in group if rolls[n] == value])
            return ordered

        if len(set(players)) != len(players):
            raise ValueError(f"players' names must differ: {list(players)!r}")
        return cls(order(list(players)), rules, dice)

    @property
    def line(self) -> tuple[str, ...]:
        """Box, captain, then the others in order (after the finished games' rotation)."""
        self._settle_finished()
        return tuple(self._line)

    @property
    def box(self) -> str:
        return self.line[0]

    @property
    def captain(self) -> str:
        return self.line[1]

    def new_game(self) -> ChouetteGame:
        """Start the next game (the previous one must be over and is settled first)."""
        self._settle_finished()
        if self.games and not self.games[-1].game.is_over:
            raise MatchStateError("cannot start a game: the current one is not over")
        r = self.rules
        options = GameOptions(
            cube=r.cube,
            cube_cap=r.cube_cap,
            backgammon=r.backgammon,
            jacoby=r.jacoby,
            automatic_doubles=r.automatic_doubles,
        )
        game = ChouetteGame(self._line[0], self._line[1:], Game(options, self.dice))
        self.games.append(game)
        return game

    def _settle_finished(self) -> None:
        while self._settled < len(self.games) and self.games[self._settled].game.is_over:
            played = self.games[self._settled]
            settlement = played.settle()
            for member, amount in settlement.payments.items():
                self.totals[member] += amount
            self.totals[played.box] += settlement.box_total
            self._rotate(settlement.team_won)
            self._settled += 1

    def _rotate(self, team_won: bool) -> None:
        box, captain, *rest = self._line
        if team_won:
            self._line = [captain, *rest, box]
        else:
            self._line = [box, *rest, captain]

    def standings(self) -> dict[str, int]:
        """Each player's net points over the finished games (they sum to zero)."""
        self._settle_finished()
        return dict(self.totals)
