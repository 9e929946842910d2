"""Legal-play generation on raw boards: the inner loop of everything else.

A *board* here is a 26-tuple of ints seen from the side on roll: index 1-24
hold that side's points (positive: its checkers, negative: the opponent's),
index 25 its bar (>= 0) and index 0 the opponent's bar (<= 0). Borne-off
checkers are implicit (15 minus those on the board).

Plays are collected in a dict keyed by an integer that identifies the
resulting board exactly (balanced base-32 digits, one per index), so two move
orders reaching one position are one play and no board is copied twice.
"""

from __future__ import annotations

__all__ = ["RawMove", "RawPlay", "generate"]

RawMove = tuple[int, int, bool]
"""One checker moved by one die: (from point, to point, hit); 25 = bar, 0 = off."""

RawPlay = tuple[tuple[int, ...], tuple[RawMove, ...]]
"""A resulting board (still seen from the side that moved) and one way to reach it."""

# Signed counts lie in -15..15, so base 32 gives every board a unique key.
_W = tuple(32**i for i in range(26))
_W0 = _W[0]


def _key(b: list[int]) -> int:
    k = 0
    for i in range(25, -1, -1):
        k = k * 32 + b[i]
    return k


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


def generate(board: tuple[int, ...], d1: int, d2: int) -> list[RawPlay]:
    """Every legal play of ``d1``-``d2`` on ``board``, one per resulting board.

    Dice must be 1-6 (unchecked here). An empty list means nothing can be played.
    """
    b = list(board)
    outside = 0
    for p in range(7, 26):
        if b[p] > 0:
            outside += b[p]
    if d1 == d2:
        return _doubles(b, d1, outside)
    if d1 < d2:
        d1, d2 = d2, d1
    return _non_doubles(b, d1, d2, outside)


def _non_doubles(b: list[int], hi: int, lo: int, outside0: int) -> list[RawPlay]:
    both: dict[int, RawPlay] = {}
    single: list[dict[int, RawPlay]] = [{}, {}]
    k0 = _key(b)
    on_bar = b[25] > 0
    for order, (a, c) in enumerate(((hi, lo), (lo, hi))):
        # Played the other way round, two different checkers reach the same board
        # as in the first order, unless the bar or bearing off makes the order
        # matter; then only one checker moving on (a chain) can add something new.
        chains_only = order == 1 and bool(both) and not on_bar and outside0 >= 2
        sources1 = (25,) if on_bar else range(24, 0, -1)
        for s1 in sources1:
            if b[s1] <= 0:
                continue
            t1 = _target(b, s1, a, outside0)
            if t1 < 0:
                continue
            # play s1/t1
            b[s1] -= 1
            k1 = k0 - _W[s1]
            hit1 = False
            if t1 > 0:
                if b[t1] == -1:
                    b[t1] = 1
                    b[0] -= 1
                    k1 += 2 * _W[t1] - _W0
                    hit1 = True
                else:
                    b[t1] += 1
                    k1 += _W[t1]
            outside1 = outside0 - 1 if (s1 > 6 and t1 <= 6) else outside0
            found = False
            if chains_only:
                sources2: tuple[int, ...] | range = (t1,) if t1 > 0 else ()
            elif b[25] > 0:
                sources2 = (25,)
            else:
                sources2 = range(24, 0, -1)
            for s2 in sources2:
                if b[s2] <= 0:
                    continue
                t2 = _target(b, s2, c, outside1)
                if t2 < 0:
                    continue
                found = True
                k2 = k1 - _W[s2]
                hit2 = False
                if t2 > 0:
                    if b[t2] == -1:
                        k2 += 2 * _W[t2] - _W0
                        hit2 = True
                    else:
                        k2 += _W[t2]
                if k2 not in both:
                    b[s2] -= 1
                    if t2 > 0:
                        if hit2:
                            b[t2] = 1
                            b[0] -= 1
                        else:
                            b[t2] += 1
                    both[k2] = (tuple(b), ((s1, t1, hit1), (s2, t2, hit2)))
                    if t2 > 0:
                        if hit2:
                            b[t2] = -1
                            b[0] += 1
                        else:
                            b[t2] -= 1
                    b[s2] += 1
            if not found and not both and not chains_only and k1 not in single[order]:
                single[order][k1] = (tuple(b), ((s1, t1, hit1),))
            # undo s1/t1
            if t1 > 0:
                if hit1:
                    b[t1] = -1
                    b[0] += 1
                else:
                    b[t1] -= 1
            b[s1] += 1
    if both:
        return list(both.values())
    # Only one die can be played: the larger one if it can be.
    return list(single[0].values()) if single[0] else list(single[1].values())


def _doubles(b: list[int], d: int, outside0: int) -> list[RawPlay]:
    results: dict[int, RawPlay] = {}
    best = 0
    moves: list[RawMove] = []

    # Checkers are moved in order of non-increasing starting point: every legal
    # sequence of equal dice can be reordered that way, so each combination of
    # moves is explored once instead of once per permutation.
    def extend(depth: int, top: int, outside: int, k: int) -> None:
        nonlocal best, results
        extended = False
        if depth < 4:
            sources = (25,) if b[25] > 0 else range(min(top, 24), 0, -1)
            for s in sources:
                if b[s] <= 0:
                    continue
                t = _target(b, s, d, outside)
                if t < 0:
                    continue
                extended = True
                b[s] -= 1
                nk = k - _W[s]
                hit = False
                if t > 0:
                    if b[t] == -1:
                        b[t] = 1
                        b[0] -= 1
                        nk += 2 * _W[t] - _W0
                        hit = True
                    else:
                        b[t] += 1
                        nk += _W[t]
                moves.append((s, t, hit))
                extend(depth + 1, s, outside - 1 if (s > 6 and t <= 6) else outside, nk)
                moves.pop()
                if t > 0:
                    if hit:
                        b[t] = -1
                        b[0] += 1
                    else:
                        b[t] -= 1
                b[s] += 1
        if not extended and depth >= best and depth > 0:
            if depth > best:
                best = depth
                results = {}
            if k not in results:
                results[k] = (tuple(b), tuple(moves))

    extend(0, 25, outside0, _key(b))
    return list(results.values())
