"""A position as players and programs write it: a Position ID, gnubg's
``POSITION_ID:MATCH_ID``, or an XGID.

>>> position, match = read_position("4HPwATDgc/ABMA:cAkAAAAAAAAA")
>>> position.position_id(), match.match_length
('4HPwATDgc/ABMA', 0)
>>> read_position("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10")[1].dice
(5, 2)

An XGID also says whether beavers are allowed in money play, and the cube's
limit, which gnubg's IDs have no place for: :func:`read_written_position` keeps
them.

>>> written = read_written_position("XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10")
>>> written.match.jacoby, written.beavers, written.max_cube
(True, True, 1024)
"""

from __future__ import annotations

from dataclasses import dataclass

from nard.core.position import Position
from nard.notation.match_id import MatchState
from nard.notation.xgid import XgidRecord

__all__ = ["WrittenPosition", "read_position", "read_written_position"]


@dataclass(frozen=True, slots=True)
class WrittenPosition:
    """Everything a Position ID, gnubg ID or XGID says: the position (side on roll),
    the match state when the text has one, and XG's two rules (``beavers``, money
    play only, and ``max_cube``; an XGID's own, the defaults otherwise)."""

    position: Position
    match: MatchState | None
    beavers: bool = False
    max_cube: int = 1024

    def to_xgid(self, bottom_on_roll: MatchState) -> str:
        """The XGID of this position with the match state ``bottom_on_roll`` (the
        text's own, or a default for a bare Position ID) and XG's rules kept."""
        return XgidRecord(
            self.position, bottom_on_roll, beavers=self.beavers, max_cube=self.max_cube
        ).to_xgid()


def read_written_position(text: str) -> WrittenPosition:
    """A Position ID, ``POSITION_ID:MATCH_ID`` as gnubg shows it, or an XGID, read
    whole (:class:`WrittenPosition`)."""
    text = text.strip()
    if text.upper().startswith("XGID="):
        record = XgidRecord.from_xgid(text)
        return WrittenPosition(record.position, record.match, record.beavers, record.max_cube)
    if ":" in text:
        position_id, match_id = text.split(":", 1)
        return WrittenPosition(
            Position.from_position_id(position_id), MatchState.from_match_id(match_id)
        )
    return WrittenPosition(Position.from_position_id(text), None)


def read_position(text: str) -> tuple[Position, MatchState | None]:
    """A Position ID, ``POSITION_ID:MATCH_ID`` as gnubg shows it, or an XGID: the
    position (side on roll) and the match state, if the text has one."""
    written = read_written_position(text)
    return written.position, written.match
