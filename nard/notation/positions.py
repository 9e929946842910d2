"""A position as players and programs write it: a Position ID, gnubg's
``POSITION_ID:MATCH_ID``, or an XGID.

>>> position, match = read_position("4HPwATDgc/ABMA:cAkAAAAAAAAA")
>>> position.position_id(), match.match_length
('4HPwATDgc/ABMA', 0)
>>> read_position("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10")[1].dice
(5, 2)
"""

from __future__ import annotations

from nard.core.position import Position
from nard.notation.match_id import MatchState
from nard.notation.xgid import XgidRecord

__all__ = ["read_position"]


def read_position(text: str) -> tuple[Position, MatchState | None]:
    """A Position ID, ``POSITION_ID:MATCH_ID`` as gnubg shows it, or an XGID: the
    position (side on roll) and the match state, if the text has one."""
    text = text.strip()
    if text.upper().startswith("XGID="):
        record = XgidRecord.from_xgid(text)
        return record.position, record.match
    if ":" in text:
        position_id, match_id = text.split(":", 1)
        return Position.from_position_id(position_id), MatchState.from_match_id(match_id)
    return Position.from_position_id(text), None
