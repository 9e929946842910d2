"""A simple computer opponent: one-ply choice by a hand-written position score.

A baseline for benchmarks and tests (``nard play`` uses the neural engine):
it races when the race is on, makes points, hits, and avoids leaving direct
shots, but looks no further than the play in hand. Deterministic: ties go to
the first play generated.
"""

from __future__ import annotations

from collections.abc import Sequence

from nard.core.position import Play, Position

__all__ = ["HeuristicPlayer", "heuristic_score"]

# Number of the 36 rolls that hit a blot at a given distance (direct or combined
# shots, ignoring blocking): the standard table backgammon players learn.
_SHOTS = (0, 11, 12, 14, 15, 15, 17, 6, 6, 5, 3, 2, 3, 0, 0, 1, 1, 0, 1, 0, 1, 0, 0, 0, 1)


def heuristic_score(after: Position) -> float:
    """Score of a position just played into, seen from the side that played.

    ``after`` is seen from the opponent (now on roll), as ``Play.result`` is.
    Higher is better for the side that played.
    """
    me = after.flip()
    b = me.board
    my_pips, their_pips = me.pip_counts()
    score = float(their_pips - my_pips)
    if me.is_race():
        return score * 2.0 + 3.0 * me.on_roll_at(0)
    for p in range(1, 25):
        if b[p] >= 2:
            score += 4.0 if p <= 6 else 2.5 if p <= 11 else 0.5
            if 18 <= p <= 21:
                score += 3.0  # an advanced anchor
    # Blots the opponent can hit next turn: weighted by how many rolls hit them.
    their_positions = [i for i in range(0, 25) if b[i] < 0]
    for p in range(1, 25):
        if b[p] != 1:
            continue
        shots = 0
        for q in their_positions:
            if q < p and p - q <= 24:
                shots = max(shots, _SHOTS[p - q])
        if shots:
            score -= shots * (0.25 + (25 - p) / 40.0)
    # Prime: the longest run of made points.
    run = best = 0
    for p in range(1, 25):
        run = run + 1 if b[p] >= 2 else 0
        best = max(best, run)
    score += 1.5 * best * best / 6.0
    return score


class HeuristicPlayer:
    """Chooses the play with the best :func:`heuristic_score`."""

    name = "heuristic"

    def choose_play(self, position: Position, dice: Sequence[int]) -> Play | None:
        """The chosen play, or ``None`` when the roll cannot be played."""
        plays = position.legal_plays(dice)
        if not plays:
            return None
        return max(plays, key=lambda play: heuristic_score(play.result))
