"""Hypothesis strategies for the notation tests: valid match states and XGID records."""

from __future__ import annotations

from hypothesis import strategies as st

from nard import Position
from nard.notation import (
    MAX_CUBE,
    MAX_MATCH_LENGTH,
    MAX_SCORE,
    CubeOwner,
    GameState,
    MatchState,
    Resignation,
    XgidRecord,
)

__all__ = ["boards", "match_states", "positions", "xgid_records"]

_ENDED = (GameState.OVER, GameState.RESIGNED, GameState.DROPPED)
dice = st.tuples(st.integers(1, 6), st.integers(1, 6)).map(lambda d: (max(d), min(d)))


@st.composite
def match_states(draw: st.DrawFn, *, xgid: bool = False) -> MatchState:
    """Any valid state; with ``xgid``, only those an XGID can record."""
    length = draw(st.one_of(st.just(0), st.integers(1, MAX_MATCH_LENGTH)))
    state = GameState.PLAYING if xgid else draw(st.sampled_from(GameState))
    if length == 0:
        score = draw(st.tuples(st.integers(0, MAX_SCORE), st.integers(0, MAX_SCORE)))
        crawford = False
    else:
        loser = draw(st.integers(0, length - 1))
        cap = MAX_SCORE if state in _ENDED else length
        other = draw(st.integers(0, length - 1) | st.integers(0, cap))
        score = draw(st.sampled_from([(loser, other), (other, loser)]))
        crawford = length - 1 in score and draw(st.booleans())
    double_offered = draw(st.booleans())
    dice_owner = draw(st.integers(0, 1))
    if double_offered:
        turn = 1 - dice_owner
    elif xgid:
        turn = dice_owner
    else:
        turn = draw(st.integers(0, 1))
    return MatchState(
        cube_value=1 << draw(st.integers(0, MAX_CUBE.bit_length() - 1)),
        cube_owner=draw(st.sampled_from(CubeOwner)),
        dice_owner=dice_owner,
        crawford=crawford,
        game_state=state,
        turn=turn,
        double_offered=double_offered,
        resignation=Resignation.NONE if xgid else draw(st.sampled_from(Resignation)),
        dice=None if double_offered else draw(st.none() | dice),
        match_length=length,
        score=score,
        jacoby=draw(st.booleans()) and not (xgid and length),
    )


@st.composite
def boards(draw: st.DrawFn) -> tuple[int, ...]:
    """A board seen from the side on roll: up to 15 checkers a side, bars included."""
    board = [0] * 26
    for side in (1, -1):
        for _ in range(draw(st.integers(0, 15))):
            free = [
                i for i in range(26) if (i != (0 if side == 1 else 25)) and board[i] * side >= 0
            ]
            board[draw(st.sampled_from(free))] += side
    return tuple(board)


positions = boards().map(Position)


@st.composite
def xgid_records(draw: st.DrawFn) -> XgidRecord:
    """Any record an XGID can hold."""
    match = draw(match_states(xgid=True))
    beavers = match.is_money() and draw(st.booleans())
    max_cube = 1 << draw(st.integers(0, 15))
    return XgidRecord(draw(positions), match, beavers=beavers, max_cube=max_cube)
