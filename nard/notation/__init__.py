"""Notations: GNU Backgammon's Position ID and Match ID, eXtreme Gammon's XGID,
and match files (``.mat``, gnubg's SGF) read into and written from match records.

Each converts between text and nard's values at the edge; the core never
imports this package.

>>> from nard.notation import MatchState, XgidRecord
>>> MatchState.from_match_id("QYkqASAAIAAA").score
(2, 4)
>>> XgidRecord.from_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10").match.jacoby
True
"""

from __future__ import annotations

from nard.core.position_id import board_from_position_id, board_to_position_id
from nard.notation.mat import read_mat, write_mat
from nard.notation.match_id import (
    MAX_CUBE,
    MAX_MATCH_LENGTH,
    MAX_SCORE,
    CubeOwner,
    GameState,
    InvalidMatchStateError,
    MatchState,
    Resignation,
)
from nard.notation.sgf import read_sgf, write_sgf
from nard.notation.xgid import BOTTOM, TOP, XgidRecord

__all__ = [
    "BOTTOM",
    "MAX_CUBE",
    "MAX_MATCH_LENGTH",
    "MAX_SCORE",
    "TOP",
    "CubeOwner",
    "GameState",
    "InvalidMatchStateError",
    "MatchState",
    "Resignation",
    "XgidRecord",
    "board_from_position_id",
    "board_to_position_id",
    "read_mat",
    "read_sgf",
    "write_mat",
    "write_sgf",
]
