"""Deterministic samples of varied positions for differential tests.

Every sample comes from an explicit seed. Categories follow the issue's list:
openings, contact, the bar (1-3 checkers), closed boards, bear-off with
contact, races, and positions where the roll cannot be played at all.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from nard import ALL_ROLLS, Dice, Position

__all__ = ["CATEGORIES", "Sample", "category_of", "random_game_positions", "varied_samples"]

Sample = tuple[str, Position, Dice]

CATEGORIES = (
    "opening",
    "contact",
    "bar-1",
    "bar-2",
    "bar-3",
    "closed-board",
    "bearoff-contact",
    "race",
    "no-play",
)


def _roll(rng: random.Random) -> Dice:
    return (rng.randint(1, 6), rng.randint(1, 6))


def random_game_positions(rng: random.Random, games: int) -> Iterator[Position]:
    """Every position met in ``games`` games of uniformly random legal plays."""
    for _ in range(games):
        pos = Position()
        while not pos.is_game_over():
            yield pos
            plays = pos.legal_plays(_roll(rng))
            pos = rng.choice(plays).result if plays else pos.flip()


def category_of(pos: Position, dice: Dice) -> str:
    """The first category of :data:`CATEGORIES` (but opening) that fits."""
    b = pos.board
    if not pos.legal_plays(dice):
        return "no-play"
    if b[25] >= 3:
        return "bar-3"
    if b[25] == 2:
        return "bar-2"
    if b[25] == 1:
        made = sum(1 for p in range(19, 25) if b[p] <= -2)
        return "closed-board" if made >= 5 else "bar-1"
    if all(b[p] <= 0 for p in range(7, 26)):
        return "race" if pos.is_race() else "bearoff-contact"
    return "race" if pos.is_race() else "contact"


def _random_board(rng: random.Random) -> Position:
    """A random legal-looking board: 15 or fewer checkers a side, no shared points."""
    b = [0] * 26
    for sign in (1, -1):
        n = rng.randint(1, 15)
        lo, hi = (1, 6) if rng.random() < 0.3 else (1, 24)
        for _ in range(n):
            for _attempt in range(20):
                p = rng.randint(lo, hi) if sign > 0 else 25 - rng.randint(lo, hi)
                if rng.random() < 0.04:
                    p = 25 if sign > 0 else 0
                if b[p] * sign >= 0:
                    b[p] += sign
                    break
    return Position(b)


def _closed_board(rng: random.Random, points: int, on_bar: int) -> Position:
    """The side on roll has ``on_bar`` checkers on the bar against ``points`` made home points."""
    b = [0] * 26
    home = rng.sample(range(19, 25), points)
    left = 15
    for p in home:
        b[p] = -2
        left -= 2
    for _ in range(left):
        p = rng.choice([p for p in range(1, 19) if b[p] <= 0] + home)
        b[p] -= 1
    b[25] = on_bar
    for _ in range(15 - on_bar - rng.randint(0, 3)):
        p = rng.choice([p for p in range(1, 19) if b[p] >= 0])
        b[p] += 1
    return Position(b)


def _bearoff_with_contact(rng: random.Random) -> Position:
    b = [0] * 26
    for _ in range(rng.randint(2, 15)):
        b[rng.randint(1, 6)] += 1
    blockers = rng.randint(1, 4)
    for _ in range(blockers):
        p = rng.choice([p for p in range(0, 7) if b[p] <= 0] + [0] * 2)
        b[p] -= 1
    for _ in range(rng.randint(0, 15 - blockers)):
        p = rng.choice([p for p in range(7, 25) if b[p] <= 0])
        b[p] -= 1
    return Position(b)


def varied_samples(seed: int, per_category: int) -> list[Sample]:
    """At least ``per_category`` samples of every category, deterministically from ``seed``."""
    rng = random.Random(seed)
    buckets: dict[str, list[Sample]] = {c: [] for c in CATEGORIES}

    def add(pos: Position, dice: Dice) -> None:
        if pos.is_game_over():
            return
        cat = category_of(pos, dice)
        if len(buckets[cat]) < per_category:
            buckets[cat].append((cat, pos, dice))

    start = Position()
    for dice in ALL_ROLLS:
        buckets["opening"].append(("opening", start, dice))
    for pos in random_game_positions(rng, 3 * per_category):
        if len(buckets["opening"]) < per_category and sum(pos.pip_counts()) > 300:
            buckets["opening"].append(("opening", pos, _roll(rng)))
        else:
            add(pos, _roll(rng))
        if all(len(v) >= per_category for k, v in buckets.items() if k in ("contact", "race")):
            break
    makers = [
        lambda: _closed_board(rng, rng.choice((5, 6)), rng.randint(1, 3)),
        lambda: _bearoff_with_contact(rng),
        lambda: _random_board(rng),
    ]
    for _ in range(200 * per_category):
        if all(len(v) >= per_category for v in buckets.values()):
            break
        add(rng.choice(makers)(), _roll(rng))
    return [s for c in CATEGORIES for s in buckets[c]]
