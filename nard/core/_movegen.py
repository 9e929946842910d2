"""Legal-play generation on raw boards: the inner loop of everything else.

A *board* here is a 26-tuple of ints seen from the side on roll: index 1-24
hold that side's points (positive: its checkers, negative: the opponent's),
index 25 its bar (>= 0) and index 0 the opponent's bar (<= 0). Borne-off
checkers are implicit (15 minus those on the board).

Plays are collected in a dict keyed by an integer that identifies the
resulting board exactly (balanced base-32 digits, one per index), updated
incrementally per move, so two move orders reaching one position are one play
and no board is copied twice. Next to the board, the generator keeps it as the
opponent sees it (``f[25 - i] == -b[i]``), so each result is copied out already
seen from the side that will be on roll next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

__all__ = ["RawMove", "RawPlay", "generate"]

RawMove = tuple[int, int, bool]
"""One checker moved by one die: (from point, to point, hit); 25 = bar, 0 = off."""

Board = TypeVar("Board", bound=tuple[int, ...])
PlayT = TypeVar("PlayT", bound=tuple[Any, ...])

RawPlay = tuple[Board, tuple[int, int], tuple[RawMove, ...]]
"""The layout of a play: the resulting board seen from the opponent (next on
roll), the dice (larger first) and one way to reach it."""

_new = tuple.__new__

# Keys start at 0 and add each move's change per index: no index changes by
# more than 15 in one play, so base-32 digits keep every resulting board apart.
_W = tuple(32**i for i in range(26))
_W0 = _W[0]
_HIT = tuple(2 * w - _W0 for w in _W)  # key change of landing on a blot at i, besides -_W[s]
# Key change of a move from s by die d: to an empty or own point, or hitting there.
_STEP = tuple(tuple(_W[s - d] - _W[s] if s > d else -_W[s] for s in range(26)) for d in range(7))
_STEP_HIT = tuple(tuple(_HIT[s - d] - _W[s] if s > d else 0 for s in range(26)) for d in range(7))


def _target(b: list[int], s: int, d: int, outside: int) -> int:
    """The point a checker on ``s`` reaches with die ``d``, or -1 if it cannot move."""
    t = s - d
    if t > 0:
        return t if b[t] >= -1 else -1
    if outside:
        return -1  # bearing off needs all 15 checkers home
    if t < 0:
        # A die larger than needed bears off only from the highest occupied point.
        for p in range(s + 1, 7):
            if b[p] > 0:
                return -1
    return 0


def generate(
    board: Sequence[int], d1: int, d2: int, cls: type[Board], pcls: type[PlayT]
) -> list[PlayT]:
    """Every legal play of ``d1``-``d2`` on ``board``, one per resulting board.

    Each play is a ``pcls`` laid out as :data:`RawPlay`, its board a ``cls``
    (``tuple`` or subclasses of it: building the final objects here spares a
    copy per play). Dice must be 1-6 (unchecked here). An empty list means
    nothing can be played.
    """
    b = list(board)
    outside = b[25] + sum([c for c in b[7:25] if c > 0])
    if d1 == d2:
        if outside >= 4 and not b[25]:
            plays = _four_moves_no_bar_no_bearoff(b, d1, cls, pcls)
            if plays:
                return plays
        return _doubles(b, d1, outside, cls, pcls)
    if d1 < d2:
        d1, d2 = d2, d1
    if outside >= 2 and not b[25]:
        plays = _non_doubles_no_bar_no_bearoff(b, d1, d2, cls, pcls)
        if plays:
            return plays
    return _non_doubles(b, d1, d2, outside, cls, pcls)


def _single_moves(b: list[int], d: int) -> list[tuple[int, int, bool]]:
    """The legal moves of die ``d`` by checkers on points 1-24 that stay on the board."""
    return [(s, s - d, b[s - d] == -1) for s in range(24, d, -1) if b[s] > 0 and b[s - d] >= -1]


def _non_doubles_no_bar_no_bearoff(
    b: list[int], hi: int, lo: int, cls: type[Board], pcls: type[PlayT]
) -> list[PlayT]:
    """The plays of both dice when no checker is on the bar and none can bear off.

    Then the opponent's checkers only change where one is hit, so the moves of
    each die legal on the starting board are legal after the other die's move
    too, except from a point it emptied; a new one is the moved checker going
    on. Every ordered pair is thus read off two precomputed lists, without
    re-checking points. Returns ``[]`` when no play of both dice exists (the
    general generator then decides which single die must be played).
    """
    dice = (hi, lo)
    f = [-c for c in b[::-1]]
    both: dict[int, PlayT] = {}
    moves_lo = _single_moves(b, lo)
    step_hi, hit_hi, step_lo, hit_lo = _STEP[hi], _STEP_HIT[hi], _STEP[lo], _STEP_HIT[lo]
    for order in (0, 1):
        first = _single_moves(b, hi) if order == 0 else moves_lo
        step1, hit_step1 = (step_hi, hit_hi) if order == 0 else (step_lo, hit_lo)
        c = lo if order == 0 else hi
        for s1, t1, hit1 in first:
            k1 = hit_step1[s1] if hit1 else step1[s1]
            f[25 - s1] += 1
            if hit1:
                f[25 - t1] = -1
                f[25] += 1
            else:
                f[25 - t1] -= 1
            # The same checker moving on with the other die (and, in the first
            # order, any other checker: in the second order those plays are
            # the first order's, since no order can matter here).
            t2 = t1 - c
            second: list[tuple[int, int, bool]] = (
                [(t1, t2, b[t2] == -1)] if t2 > 0 and b[t2] >= -1 and b[t1] <= 0 else []
            )
            if order == 0:
                second += moves_lo
            for s2, t2, hit2 in second:
                if s2 == s1 and b[s1] == 1:
                    continue  # its only checker has just moved
                if t2 == t1 and hit1:
                    hit2 = False  # the blot there is already hit
                if order == 0:
                    k2 = k1 + (hit_lo[s2] if hit2 else step_lo[s2])
                else:
                    k2 = k1 + (hit_hi[s2] if hit2 else step_hi[s2])
                if k2 in both:
                    continue
                f[25 - s2] += 1
                if hit2:
                    f[25 - t2] = -1
                    f[25] += 1
                    both[k2] = _new(pcls, (_new(cls, f), dice, ((s1, t1, hit1), (s2, t2, True))))
                    f[25] -= 1
                    f[25 - t2] = 1
                else:
                    f[25 - t2] -= 1
                    both[k2] = _new(pcls, (_new(cls, f), dice, ((s1, t1, hit1), (s2, t2, False))))
                    f[25 - t2] += 1
                f[25 - s2] -= 1
            if hit1:
                f[25] -= 1
                f[25 - t1] = 1
            else:
                f[25 - t1] += 1
            f[25 - s1] -= 1
    return list(both.values())


def _non_doubles(
    b: list[int], hi: int, lo: int, outside0: int, cls: type[Board], pcls: type[PlayT]
) -> list[PlayT]:
    dice = (hi, lo)
    f = b[::-1]
    for i in range(26):
        f[i] = -f[i]
    both: dict[int, PlayT] = {}
    single: tuple[dict[int, PlayT], dict[int, PlayT]] = ({}, {})
    k0 = 0
    on_bar = b[25] > 0
    points = [p for p in range(24, 0, -1) if b[p] > 0]
    first_sources = [25] if on_bar else points
    for order, (a, c) in enumerate(((hi, lo), (lo, hi))):
        # Played the other way round, two different checkers reach the same board
        # as in the first order, unless the bar or bearing off makes the order
        # matter; then only one checker moving on (a chain) can add something new.
        chains_only = order == 1 and bool(both) and not on_bar and outside0 >= 2
        found_any = bool(both)
        step, step_hit = _STEP[c], _STEP_HIT[c]
        for s1 in first_sources:
            t1 = s1 - a
            hit1 = False
            if t1 > 0:
                x = b[t1]
                if x < -1:
                    continue
                b[s1] -= 1
                f[25 - s1] += 1
                if x == -1:
                    hit1 = True
                    b[t1] = 1
                    b[0] -= 1
                    f[25 - t1] = -1
                    f[25] += 1
                    k1 = k0 - _W[s1] + _HIT[t1]
                else:
                    b[t1] = x + 1
                    f[25 - t1] -= 1
                    k1 = k0 - _W[s1] + _W[t1]
            else:
                if outside0 or (t1 < 0 and max(b[s1 + 1 : 7]) > 0):
                    continue
                t1 = 0
                b[s1] -= 1
                f[25 - s1] += 1
                k1 = k0 - _W[s1]
            outside1 = outside0 - 1 if (s1 > 6 and t1 <= 6) else outside0
            if chains_only:
                sources: list[int] = [t1] if t1 > 0 else []
            elif b[25] > 0:
                sources = [25]
            elif t1 > 0 and b[t1] == 1:
                sources = [*points, t1]  # the first move landed on a new point
            else:
                sources = points
            found = False
            for s2 in sources:
                if b[s2] <= 0:
                    continue
                t2 = s2 - c
                if t2 > 0:
                    x = b[t2]
                    if x < -1:
                        continue
                    k2 = k1 + (step_hit[s2] if x == -1 else step[s2])
                else:
                    if outside1 or (t2 < 0 and max(b[s2 + 1 : 7]) > 0):
                        continue
                    t2 = 0
                    x = 0
                    k2 = k1 + step[s2]
                found = True
                if k2 in both:
                    continue
                f[25 - s2] += 1
                if t2 > 0:
                    if x == -1:
                        f[25 - t2] = -1
                        f[25] += 1
                        both[k2] = _new(
                            pcls, (_new(cls, f), dice, ((s1, t1, hit1), (s2, t2, True)))
                        )
                        f[25] -= 1
                        f[25 - t2] = 1
                    else:
                        f[25 - t2] -= 1
                        both[k2] = _new(
                            pcls, (_new(cls, f), dice, ((s1, t1, hit1), (s2, t2, False)))
                        )
                        f[25 - t2] += 1
                else:
                    both[k2] = _new(pcls, (_new(cls, f), dice, ((s1, t1, hit1), (s2, 0, False))))
                f[25 - s2] -= 1
            if not found and not found_any and k1 not in single[order]:
                single[order][k1] = _new(pcls, (_new(cls, f), dice, ((s1, t1, hit1),)))
            found_any = found_any or found
            # undo s1/t1
            if t1 > 0:
                if hit1:
                    b[t1] = -1
                    b[0] += 1
                    f[25 - t1] = 1
                    f[25] -= 1
                else:
                    b[t1] -= 1
                    f[25 - t1] += 1
            b[s1] += 1
            f[25 - s1] -= 1
    if both:
        return list(both.values())
    # Only one die can be played: the larger one if it can be.
    return list(single[0].values()) if single[0] else list(single[1].values())


def _doubles(
    b: list[int], d: int, outside0: int, cls: type[Board], pcls: type[PlayT]
) -> list[PlayT]:
    dice = (d, d)
    f = [-c for c in reversed(b)]
    # Plays found, by number of moves; only the longest ones are legal.
    found: list[list[PlayT]] = [[], [], [], [], []]
    best = 0
    moves: list[RawMove] = []
    # Every point a checker could start a move from during this turn, highest
    # first: those occupied now and those reachable by up to three moves of d.
    reach = {25} if b[25] > 0 else set()
    for p in range(1, 25):
        if b[p] > 0:
            reach.update(q for q in (p, p - d, p - 2 * d, p - 3 * d) if q > 0)
    if b[25] > 0:
        reach.update(q for q in (25 - d, 25 - 2 * d, 25 - 3 * d) if q > 0)
    sources = sorted(reach, reverse=True)
    n = len(sources)
    fours = found[4]

    # Checkers are moved in order of non-increasing starting point: every legal
    # sequence of equal dice can be reordered that way, and each multiset of
    # moves has one such order. Different multisets of moves of one die never
    # reach the same board (within each line of points d apart, the numbers of
    # checkers leaving each point follow from the result, top down), so every
    # play found is distinct and needs no de-duplication.
    def last_move(first: int, outside: int) -> bool:
        """The fourth move: played on ``f`` only; True if any was legal."""
        before = len(fours)
        on_bar = b[25] > 0
        for i in range(first, n):
            s = sources[i]
            if b[s] <= 0:
                continue
            if on_bar and s != 25:
                break
            t = s - d
            f[25 - s] += 1
            if t > 0:
                x = b[t]
                if x < -1:
                    f[25 - s] -= 1
                    continue
                if x == -1:
                    f[25 - t] = -1
                    f[25] += 1
                    fours.append(_new(pcls, (_new(cls, f), dice, (*moves, (s, t, True)))))
                    f[25] -= 1
                    f[25 - t] = 1
                else:
                    f[25 - t] -= 1
                    fours.append(_new(pcls, (_new(cls, f), dice, (*moves, (s, t, False)))))
                    f[25 - t] += 1
            elif outside or (t < 0 and max(b[s + 1 : 7]) > 0):
                f[25 - s] -= 1
                continue
            else:
                fours.append(_new(pcls, (_new(cls, f), dice, (*moves, (s, 0, False)))))
            f[25 - s] -= 1
        return len(fours) > before

    def extend(depth: int, first: int, outside: int) -> None:
        nonlocal best
        if depth == 3:
            if last_move(first, outside):
                best = 4
            elif best <= 3:
                best = 3
                found[3].append(_new(pcls, (_new(cls, f), dice, tuple(moves))))
            return
        extended = False
        for i in range(first, n):
            s = sources[i]
            if b[s] <= 0:
                continue
            if b[25] > 0 and s != 25:
                break
            t = s - d
            if t > 0:
                x = b[t]
                if x < -1:
                    continue
                extended = True
                b[s] -= 1
                f[25 - s] += 1
                if x == -1:
                    b[t] = 1
                    b[0] -= 1
                    f[25 - t] = -1
                    f[25] += 1
                    moves.append((s, t, True))
                    extend(depth + 1, i, outside - (s > 6 >= t))  # noqa: F821 (del below)
                    f[25] -= 1
                    f[25 - t] = 1
                    b[0] += 1
                    b[t] = -1
                else:
                    b[t] = x + 1
                    f[25 - t] -= 1
                    moves.append((s, t, False))
                    extend(depth + 1, i, outside - (s > 6 >= t))  # noqa: F821 (del below)
                    f[25 - t] += 1
                    b[t] = x
                moves.pop()
                b[s] += 1
                f[25 - s] -= 1
            else:
                if outside or (t < 0 and max(b[s + 1 : 7]) > 0):
                    continue
                extended = True
                b[s] -= 1
                f[25 - s] += 1
                moves.append((s, 0, False))
                extend(depth + 1, i, outside)  # noqa: F821 (del below)
                moves.pop()
                b[s] += 1
                f[25 - s] -= 1
        if not extended and depth > 0 and best <= depth:
            best = depth
            found[depth].append(_new(pcls, (_new(cls, f), dice, tuple(moves))))

    extend(0, 0, outside0)
    # The recursive closure refers to itself through its cell: emptied, the
    # closures and their lists are freed here rather than left as a cycle for
    # the garbage collector (which a server's young collections then walked).
    del extend
    return found[best]


def _four_moves_no_bar_no_bearoff(
    b: list[int], d: int, cls: type[Board], pcls: type[PlayT]
) -> list[PlayT]:
    """The plays of all four moves of a double with no checker on the bar and
    too many checkers outside the home board to bear off this turn.

    Then whether a point can be landed on never changes (the opponent's points
    only change where a blot is hit, and then it is ours), so a sequence of
    moves is legal exactly when each starts where a checker is at that moment.
    Sequences are taken with non-increasing starting points, each multiset of
    moves once, and distinct multisets reach distinct boards (see
    :func:`_doubles`). Returns ``[]`` when four moves cannot be played.
    """
    dice = (d, d)
    f = [-c for c in b[::-1]]
    count = [c if c > 0 else 0 for c in b]  # the side on roll's checkers per point
    blot = [c == -1 for c in b]  # a blot of the opponent's, not yet hit
    starts = [s for s in range(24, d, -1) if b[s - d] >= -1]
    n = len(starts)
    plays: list[PlayT] = []
    new = _new
    moves: list[RawMove] = []

    def move(i0: int, left: int) -> None:
        for i in range(i0, n):
            s = starts[i]
            if not count[s]:
                continue
            t = s - d
            hit = blot[t]
            count[s] -= 1
            count[t] += 1
            f[25 - s] += 1
            if hit:
                blot[t] = False
                f[25 - t] = -1
                f[25] += 1
            else:
                f[25 - t] -= 1
            if left == 1:
                plays.append(new(pcls, (new(cls, f), dice, (*moves, (s, t, hit)))))
            else:
                moves.append((s, t, hit))
                move(i, left - 1)  # noqa: F821 (del below)
                moves.pop()
            if hit:
                blot[t] = True
                f[25 - t] = 1
                f[25] -= 1
            else:
                f[25 - t] += 1
            f[25 - s] -= 1
            count[t] -= 1
            count[s] += 1

    move(0, 4)
    del move  # its cell refers to itself: emptied, no cycle is left (see _doubles)
    return plays
