"""Small helpers to write test positions and read their legal plays."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from nard import Play, Position

__all__ = ["play_texts", "position", "results"]


def position(mine: Mapping[int, int], theirs: Mapping[int, int] | None = None) -> Position:
    """A position with both sides' checkers given in the *mover's* point numbers.

    ``mine`` maps the mover's points 1-24 (25 = its bar) to checker counts;
    ``theirs`` maps the mover's points 1-24 (0 = the opponent's bar) to the
    opponent's counts, so ``{19: 2}`` is the opponent's 6-point. Checkers not
    listed are borne off.
    """
    opponent = {25 - point: count for point, count in (theirs or {}).items()}
    return Position.from_points(mine, opponent)


def play_texts(pos: Position, dice: Sequence[int]) -> set[str]:
    """The legal plays of ``dice`` written as text; also checks they are distinct positions."""
    plays = pos.legal_plays(dice)
    assert len({p.result for p in plays}) == len(plays), "two plays lead to one position"
    texts = {pos.format_play(p) for p in plays}
    assert len(texts) == len(plays), "two plays are written alike"
    return texts


def results(plays: Sequence[Play]) -> set[Position]:
    """The resulting positions of ``plays``."""
    return {p.result for p in plays}
