"""Invariants of positions and plays, checked with hypothesis on random games and boards.

Games are driven by hypothesis-drawn dice and play choices (no hidden
randomness), so every failure shrinks to a short, replayable game. Legal plays
are also checked against a naive generator written straight from RULES.md
sections 3-6.
"""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from nard import BAR, CHECKERS, OFF, Dice, Play, Position

# -- strategies -------------------------------------------------------------------

dice_st = st.tuples(st.integers(1, 6), st.integers(1, 6))
Step = tuple[int, int, int]
steps_st = st.lists(
    st.tuples(st.integers(1, 6), st.integers(1, 6), st.integers(0, 1 << 16)),
    min_size=40,
    max_size=200,
)


def _game(steps: list[Step]) -> Iterator[tuple[Position, Dice, list[Play], Play | None]]:
    """Play ``steps`` (dice and a choice index) from the opening until the game ends."""
    pos = Position()
    for d1, d2, choice in steps:
        if pos.is_game_over():
            return
        plays = pos.legal_plays((d1, d2))
        play = plays[choice % len(plays)] if plays else None
        yield pos, (d1, d2), plays, play
        pos = play.result if play else pos.flip()


@st.composite
def game_positions(draw: st.DrawFn) -> Position:
    """A position met in a random game."""
    last = Position()
    for pos, _, _, _ in _game(draw(steps_st)):
        last = pos
    return last


@st.composite
def boards(draw: st.DrawFn) -> Position:
    """Any legal-looking board: up to 15 checkers a side, anywhere, the bar included."""
    b = [0] * 26
    home_only = draw(st.booleans())
    for sign in (1, -1):
        count = draw(st.integers(1 if sign > 0 else 0, CHECKERS))
        for _ in range(count):
            if sign > 0:
                point = draw(st.integers(1, 6) if home_only else st.integers(1, 25))
            else:
                point = draw(st.integers(0, 24))
            if b[point] * sign >= 0:
                b[point] += sign
    return Position(b)


any_position = st.one_of(game_positions(), boards())


# -- a naive reference generator, written from the rule book ------------------------

Board = tuple[int, ...]


def _single_moves(b: Board, d: int) -> Iterator[tuple[int, int]]:
    if b[BAR] > 0:
        sources: list[int] = [BAR]
    else:
        sources = [p for p in range(1, 25) if b[p] > 0]
    all_home = not any(b[p] > 0 for p in range(7, 26))
    for s in sources:
        t = s - d
        if t >= 1:
            if b[t] >= -1:  # empty, own, or a blot
                yield s, t
        elif all_home and (t == 0 or not any(b[p] > 0 for p in range(s + 1, 7))):
            yield s, OFF


def _moved(b: Board, s: int, t: int) -> Board:
    n = list(b)
    n[s] -= 1
    if t != OFF:
        if n[t] == -1:
            n[t] = 1
            n[0] -= 1
        else:
            n[t] += 1
    return tuple(n)


def reference_results(board: Board, d1: int, d2: int) -> set[Board]:
    """Every board a legal play of d1-d2 leads to (seen from the mover), by brute force."""
    orders = [(d1,) * 4] if d1 == d2 else [(d1, d2), (d2, d1)]
    ends: dict[int, set[tuple[Board, int]]] = {}  # dice used -> (board, first die)
    for order in orders:
        frontier = {board}
        for used, d in enumerate(order):
            nxt: set[Board] = set()
            for b in frontier:
                moves = list(_single_moves(b, d))
                if not moves:
                    ends.setdefault(used, set()).add((b, order[0]))
                nxt.update(_moved(b, s, t) for s, t in moves)
            frontier = nxt
        ends.setdefault(len(order), set()).update((b, order[0]) for b in frontier)
    most = max(used for used, found in ends.items() if found)
    if most == 0:
        return set()
    found = ends[most]
    if d1 != d2 and most == 1:
        # Only one die can be played: the larger one if it can be.
        larger = {b for b, first in found if first == max(d1, d2)}
        if larger:
            return larger
    return {b for b, _ in found}


# -- properties ------------------------------------------------------------------


def _checkers(pos: Position) -> tuple[int, int]:
    b = pos.board
    return sum(c for c in b if c > 0), -sum(c for c in b if c < 0)


@settings(deadline=None, max_examples=40)
@given(steps_st)
def test_random_games_keep_every_invariant(steps: list[Step]) -> None:
    off = [0, 0]  # borne off so far by (side on roll, opponent), counted from the moves
    for pos, dice, plays, play in _game(steps):
        mine, theirs = _checkers(pos)
        assert mine + off[0] == CHECKERS
        assert theirs + off[1] == CHECKERS
        assert pos.on_roll_at(OFF) == off[0]
        assert pos.opponent_at(OFF) == off[1]
        assert Position.from_position_id(pos.position_id()) == pos
        assert pos.flip().flip() == pos
        assert len({p.result for p in plays}) == len(plays)
        if play is None:
            off.reverse()
            continue
        assert pos.apply(play) == play.result
        _check_pips(pos, dice, play)
        off[0] += sum(1 for m in play.moves if m.to_point == OFF)
        if play.result.is_game_over():
            assert off[0] == CHECKERS
            assert play.result.outcome() < 0  # seen from the loser
            assert play.result.flip().outcome() > 0
        off.reverse()


def _check_pips(pos: Position, dice: Dice, play: Play) -> None:
    """The mover's pips drop by the pips its checkers moved; the opponent's rise by
    the pips of each hit checker (from where it stood to the bar)."""
    before_mine, before_theirs = pos.pip_counts()
    after_theirs, after_mine = play.result.pip_counts()
    moved = sum(m.from_point - m.to_point for m in play.moves)
    assert before_mine - after_mine == moved
    # A checker hit on our point t stood on the opponent's point 25 - t; on its bar it
    # is 25 pips from home, t more.
    assert after_theirs - before_theirs == sum(m.to_point for m in play.moves if m.hit)
    pool = [dice[0]] * 4 if dice[0] == dice[1] else sorted(dice)
    for m in sorted(play.moves, key=lambda m: m.from_point - m.to_point, reverse=True):
        # Each move uses one die: its full value, or less only when bearing off.
        fits = [d for d in pool if d == m.from_point - m.to_point]
        if not fits and m.to_point == OFF:
            fits = [d for d in pool if d > m.from_point]
        assert fits, (pos.position_id(), dice, play.moves)
        pool.remove(fits[0])
    assert moved <= sum(dice) * (2 if dice[0] == dice[1] else 1)


@settings(deadline=None, max_examples=300)
@given(any_position, dice_st)
def test_legal_plays_match_the_rule_book(pos: Position, dice: Dice) -> None:
    plays = pos.legal_plays(dice)
    assert {p.result.flip().board for p in plays} == reference_results(pos.board, *dice)
    assert len({p.result for p in plays}) == len(plays)
    for play in plays:
        assert play.dice == (max(dice), min(dice))
        assert len(play.moves) == len(plays[0].moves)
        # The moves, in their order, are single legal moves of the dice, one die each.
        board = pos.board
        pool = [dice[0]] * 4 if dice[0] == dice[1] else list(dice)
        for m in play.moves:
            die = next(d for d in pool if (m.from_point, m.to_point) in _single_moves(board, d))
            pool.remove(die)
            assert m.hit == (m.to_point != OFF and board[m.to_point] == -1)
            board = _moved(board, m.from_point, m.to_point)
        assert board == play.result.flip().board


@settings(deadline=None, max_examples=50)
@given(any_position)
def test_position_id_round_trips(pos: Position) -> None:
    assert Position.from_position_id(pos.position_id()) == pos
    assert Position(pos.board) == pos
    assert (
        Position.from_points(
            {p: pos.on_roll_at(p) for p in range(1, 26)},
            {p: pos.opponent_at(p) for p in range(1, 26)},
        )
        == pos
    )


@settings(deadline=None, max_examples=50)
@given(any_position)
def test_flip_is_an_involution(pos: Position) -> None:
    flipped = pos.flip()
    assert flipped.flip() == pos
    assert flipped.pip_counts() == pos.pip_counts()[::-1]
    assert flipped.is_race() == pos.is_race()
    assert flipped.outcome() == -pos.outcome()
    assert (flipped == pos) == (flipped.position_id() == pos.position_id())


@settings(deadline=None, max_examples=60)
@given(any_position, dice_st)
def test_format_parse_round_trip(pos: Position, dice: Dice) -> None:
    for play in pos.legal_plays(dice):
        text = pos.format_play(play)
        assert pos.parse_play(text, dice) == play, text
