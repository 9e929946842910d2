"""A game in play as GNU Backgammon and eXtreme Gammon name it: its Position ID,
Match ID and XGID.

The players keep their numbers (nard's player 0 is gnubg's player 0); the
Position ID and the XGID's board are seen from the player on roll (the doubler
while a double awaits its answer), as both programs write them.

>>> from nard.match import FixedDice, Game
>>> game = Game(dice=FixedDice([(3, 1)]))
>>> game_ids(game) is None  # before the opening roll there is no game in play
True
>>> game.opening_roll()
>>> ids = game_ids(game)
>>> ids.position_id, ids.match_id
('4HPwATDgc/ABMA', 'MIEFAAAAAAAE')
>>> ids.xgid
'XGID=-b----E-C---eE---c-e----B-:0:0:-1:31:0:0:0:0:6'
"""

from __future__ import annotations

from dataclasses import dataclass

from nard.core import NardError
from nard.match.game import Decision, Game
from nard.notation.match_id import CubeOwner, GameState, MatchState, Resignation
from nard.notation.xgid import XgidRecord

__all__ = ["GameIds", "game_ids", "match_state"]

MAX_CUBE = 1024
"""The largest cube an XGID names when the rules set no limit."""


@dataclass(frozen=True)
class GameIds:
    """The Position ID, the Match ID and the XGID (None where an XGID cannot say
    the state: a resignation on offer)."""

    position_id: str
    match_id: str
    xgid: str | None


def match_state(game: Game, match_length: int = 0, score: tuple[int, int] = (0, 0)) -> MatchState:
    """``game``'s Match ID fields, at ``score`` in a match to ``match_length`` (0: money,
    ``score`` the session's points). The game must be in play (not before its opening
    roll, not over)."""
    decision = game.decision
    if decision in (Decision.OPENING_ROLL, Decision.GAME_OVER):
        raise NardError(f"no Match ID for a game at its {decision.value}")
    resignation = Resignation(game.resignation or 0)
    dice = game.dice
    options = game.options
    return MatchState(
        cube_value=game.cube_value,
        cube_owner=CubeOwner.CENTRED if game.cube_owner is None else CubeOwner(game.cube_owner),
        dice_owner=game.on_roll,
        crawford=options.crawford,
        game_state=GameState.PLAYING,
        turn=game.turn,
        double_offered=decision in (Decision.TAKE_OR_PASS, Decision.ACCEPT_OR_BEAVER),
        resignation=resignation,
        dice=None if dice is None else (max(dice), min(dice)),
        match_length=match_length,
        score=score,
        jacoby=options.jacoby and not match_length,
    )


def game_ids(game: Game, match_length: int = 0, score: tuple[int, int] = (0, 0)) -> GameIds | None:
    """The IDs of ``game`` as it stands (None before its opening roll and once over)."""
    if game.decision in (Decision.OPENING_ROLL, Decision.GAME_OVER):
        return None
    state = match_state(game, match_length, score)
    xgid = None
    if state.resignation is Resignation.NONE:
        cap = game.options.cube_cap
        record = XgidRecord(
            game.position,
            state,
            beavers=game.options.beavers and not match_length,
            max_cube=MAX_CUBE if cap is None else cap,
        )
        xgid = record.to_xgid()
    return GameIds(game.position.position_id(), state.match_id(), xgid)
