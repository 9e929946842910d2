"""Rated matches at the server's tables (docs/ratings.md).

A table is rated when it is created so (``rated``): a match (not money play, not a
chouette) between two accounts, or an account and the computer. When the match
ends, its result is rated once by :meth:`nard.server.storage.Storage.rate_match`
with the FIBS formula (:mod:`nard.match.rating`): the winner is the match's winner,
or, where a player ran out of time or left the match unfinished (``end`` with
``abandoned``), the other side. The computer's levels count at the fixed ratings of
:data:`COMPUTER_RATINGS` and are not changed by their games.
"""

from __future__ import annotations

from nard.engine import Level
from nard.match.match import Match
from nard.server.storage import RatedSide
from nard.server.tables import LiveTable, TableBase

__all__ = ["COMPUTER_RATINGS", "rated_result"]

COMPUTER_RATINGS: dict[Level, float] = {
    Level.BEGINNER: 1575.0,
    Level.INTERMEDIATE: 1825.0,
    Level.EXPERT: 1960.0,
    Level.WORLD_CLASS: 2010.0,
    Level.ROLLER: 2010.0,
}
"""The fixed rating each level of the computer plays at in rated matches
(docs/ratings.md says where the figures come from)."""


def rated_result(table: TableBase) -> tuple[RatedSide, RatedSide, int] | None:
    """The rated table's result as (winner, loser, match length), or None when there is
    none to rate: not rated, not finished, a chouette or money session, or ended
    before its first roll."""
    if not getattr(table, "rated", False) or not table.finished:
        return None
    if not isinstance(table, LiveTable) or not isinstance(table.games, Match):
        return None
    winner = table.winner  # by the score, or the other side of a player out of time
    if winner is None:
        if not (table.abandoned and table.started):
            return None
        leaver = next(
            (seat for seat, command in reversed(table.log) if command.get("action") == "end"),
            None,
        )
        if leaver not in (0, 1):
            return None
        winner = 1 - leaver
    sides = [_side(table, seat) for seat in (0, 1)]
    if any(s is None for s in sides):
        return None
    win, lose = sides[winner], sides[1 - winner]
    assert win is not None and lose is not None
    return win, lose, table.games.length


def _side(table: LiveTable, seat: int) -> RatedSide | None:
    info = table.seats[seat]
    if info.level is not None:
        return RatedSide(None, info.name, COMPUTER_RATINGS[info.level])
    if info.player_id is None:
        return None
    return RatedSide(info.player_id, info.name)
