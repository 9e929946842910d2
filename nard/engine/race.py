"""Race counts: the over-the-board formulas players use for cube decisions in a race.

Each adjusts the pip counts for wasted pips and gives a verdict for the side on roll
(double, redouble) and for its opponent (take). They are published rules of thumb,
shown beside the engine's own analysis (``nard show``), never used by it:

- **Keith count** (Tom Keith; bgonline.org/keith.html, bkgm.com glossary): each
  side's pips, plus 2 for each checker beyond one on its 1-point, plus 1 for each
  beyond one on its 2-point, plus 1 for each beyond three on its 3-point, plus 1 for
  each empty point among its 4-, 5- and 6-points; the side on roll then adds a
  seventh of its count (rounded down). Double when its count exceeds the
  opponent's by no more than 4, redouble by no more than 3; take when the doubler's
  count exceeds the taker's by at least 2.
- **Thorp count** (Edward O. Thorp, popularised in Robertie's *Advanced Backgammon*
  vol. 2; as summarised by Simon Woodhead, rec.games.backgammon, 11 Sep 1991): pips,
  plus 2 per checker left, plus 1 per checker on the 1-point, minus 1 per occupied
  home point; the side on roll adds 10% when its count is over 30 (not rounded, as
  Chuck Bower suggests, rgb 16 Sep 1999). With L the roller's count and T the
  opponent's: double when T >= L - 2, redouble when T >= L - 1, take when
  T <= L + 2 (pass when the taker is further behind).
- **Kleinman count** (Danny Kleinman, *Vision Laughs at Counting*, 1980; the
  formulas for W by Chuck Bower (K < 1) and Oystein Johansen (K > 1), rgb
  22 Feb 2001): D = the opponent's pips - the roller's + 4, S = both pips - 4,
  K = D^2 / S (negative D: K counts as 0, the roller trails); the roller's race
  winning chance W = 0.5 + 0.267 sqrt(K) for K < 1, 0.76 + 0.114 ln K above.
  Kleinman's landmarks: K 0.5 a double, 0.7 a redouble, up to 1.2 a take.

>>> from nard.core import Position
>>> race = Position.from_points({6: 3, 5: 3, 4: 3, 3: 3, 2: 3}, {6: 4, 5: 4, 4: 4, 3: 3})
>>> keith = keith_count(race)
>>> keith.counts, keith.double, keith.take  # 9 pips and the roll ahead: double, pass
((70, 69), True, False)
>>> thorp = thorp_count(race)
>>> round(thorp.counts[0], 1), thorp.counts[1], thorp.double, thorp.take
(93.5, 95.0, True, True)
>>> round(kleinman_count(race).winning_chance, 3)
0.794
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nard.core import Position

__all__ = ["RaceCount", "keith_count", "kleinman_count", "race_counts", "thorp_count"]


@dataclass(frozen=True)
class RaceCount:
    """A count's figures (the side on roll's, adjusted for being on roll, and its
    opponent's) and its verdicts: the roller doubles (centred cube), redoubles (its
    own cube), the opponent takes. ``winning_chance`` where the count gives one."""

    name: str
    counts: tuple[float, float]
    double: bool
    redouble: bool
    take: bool
    winning_chance: float | None = None


def _points(position: Position, mine: bool) -> list[int]:
    """Checkers of a side on its own points 0 (unused) to 25 (bar)."""
    at = position.on_roll_at if mine else position.opponent_at
    return [0] + [at(p) for p in range(1, 26)]


def _keith_raw(position: Position, mine: bool) -> int:
    pips = position.pip_counts()[0 if mine else 1]
    b = _points(position, mine)
    wasted = 2 * max(b[1] - 1, 0) + max(b[2] - 1, 0) + max(b[3] - 3, 0)
    gaps = sum(1 for p in (4, 5, 6) if b[p] == 0)
    return pips + wasted + gaps


def keith_count(position: Position) -> RaceCount:
    """Tom Keith's count for the side on roll and its opponent (see the module)."""
    roller = _keith_raw(position, True)
    roller += roller // 7
    other = _keith_raw(position, False)
    lead = roller - other  # how far the roller's count exceeds the opponent's
    return RaceCount("Keith", (roller, other), lead <= 4, lead <= 3, lead >= 2)


def _thorp_raw(position: Position, mine: bool) -> int:
    pips = position.pip_counts()[0 if mine else 1]
    b = _points(position, mine)
    left = sum(b[1:])
    home = sum(1 for p in range(1, 7) if b[p] > 0)
    return pips + 2 * left + b[1] - home


def thorp_count(position: Position) -> RaceCount:
    """Edward Thorp's count for the side on roll (L) and its opponent (T)."""
    leader = float(_thorp_raw(position, True))
    if leader > 30:
        leader *= 1.1
    trailer = float(_thorp_raw(position, False))
    return RaceCount(
        "Thorp",
        (leader, trailer),
        trailer >= leader - 2,
        trailer >= leader - 1,
        trailer <= leader + 2,
    )


def kleinman_count(position: Position) -> RaceCount:
    """Danny Kleinman's count K and the race winning chance it gives the roller."""
    mine, theirs = position.pip_counts()
    d = theirs - mine + 4
    s = mine + theirs - 4
    k = d * d / s if d > 0 and s > 0 else 0.0
    w = 0.5 + 0.267 * math.sqrt(k) if k < 1.0 else 0.76 + 0.114 * math.log(k)
    return RaceCount("Kleinman", (k, float(s)), k >= 0.5, k >= 0.7, k <= 1.2, min(w, 1.0))


def race_counts(position: Position) -> list[RaceCount]:
    """Every count of a race position (none while the sides are in contact)."""
    if position.is_contact() or position.is_game_over():
        return []
    return [keith_count(position), thorp_count(position), kleinman_count(position)]
