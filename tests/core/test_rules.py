"""One test per rule of RULES.md sections 3-6 (moving, must-play, the bar, bearing off).

Positions are written with :func:`tests.core.helpers.position`: both sides'
checkers in the *mover's* point numbers, so ``theirs={8: 2}`` means the
opponent holds the mover's 8-point. Every test states the exact set of legal
plays, written as nard (and gnubg) write them: a checker moved by both dice is
one segment (``13/5``), with an intermediate point shown only where it hits.
"""

from __future__ import annotations

import pytest

from nard import ALL_ROLLS, BAR, OFF, IllegalPlayError, Move, Position
from tests.core.helpers import play_texts, position

# -- 3. Moving ------------------------------------------------------------------


def test_each_die_is_a_separate_move_forward_only() -> None:
    """Each die is a separate move of that many pips, forward only. Two dice may
    move two checkers or one checker twice."""
    pos = position({13: 1, 6: 14}, {24: 15})
    plays = pos.legal_plays((5, 3))
    assert {pos.format_play(p) for p in plays} == {"13/5", "13/8 6/3", "13/10 6/1", "6/3 6/1"}
    for play in plays:
        assert sorted(m.from_point - m.to_point for m in play.moves) == [3, 5]
        assert all(m.to_point < m.from_point for m in play.moves)


def test_doubles_are_played_four_times() -> None:
    """Doubles are played four times (four separate moves)."""
    pos = position({13: 15}, {24: 15})
    plays = pos.legal_plays((4, 4))
    assert {pos.format_play(p) for p in plays} == {
        "13/9(4)",
        "13/5 13/9(2)",
        "13/5(2)",
        "13/1 13/9",
    }
    for play in plays:
        assert [m.from_point - m.to_point for m in play.moves] == [4, 4, 4, 4]


@pytest.mark.parametrize(
    ("mine", "theirs", "expected"),
    [
        pytest.param({13: 1}, {24: 15}, {"13/10"}, id="empty"),
        pytest.param(
            {13: 1, 10: 5},
            {24: 15},
            {"13/10", "13/11 10/9", "13/12 10/8", "10/9 10/8", "10/7"},
            id="own-checkers-no-limit",
        ),
        pytest.param({13: 1}, {10: 1, 24: 14}, {"13/10*"}, id="blot-is-hit"),
    ],
)
def test_checker_may_land_on_empty_own_or_blot(
    mine: dict[int, int], theirs: dict[int, int], expected: set[str]
) -> None:
    """A checker may land on: an empty point, a point with its own checkers (no
    limit), or a point with exactly one opposing checker (a blot), which it hits."""
    pos = position(mine, theirs)
    assert play_texts(pos, (2, 1)) == expected
    landed = pos.apply(pos.parse_play("13/10", (2, 1))).flip()
    assert landed.on_roll_at(10) == mine.get(10, 0) + 1
    assert landed.opponent_at(BAR) == theirs.get(10, 0)


def test_checker_never_lands_on_a_made_point() -> None:
    """It may never land on a point holding two or more opposing checkers: not at
    the end of a move and not at the intermediate stop when one checker plays
    both dice (or several moves of a double). It may jump over such points."""
    # At the end of a move: 13/10 is closed, so only one die can be played.
    assert play_texts(position({13: 1}, {10: 2, 24: 13}), (2, 1)) == {"13/11"}
    # At the intermediate stop (seed 000's 5-4): the back checker can move neither
    # 4 nor 5, so it cannot reach the open 15-point either.
    pos = position({24: 1, 13: 1}, {20: 2, 19: 2, 1: 11})
    assert play_texts(pos, (5, 4)) == {"13/4"}
    with pytest.raises(IllegalPlayError):
        pos.parse_play("24/15", (5, 4))
    # At a stop between the moves of a double: 24/21/18 is closed at 18.
    assert play_texts(position({24: 1}, {18: 2}), (3, 3)) == {"24/21"}


def test_checker_may_jump_over_made_points() -> None:
    """It may jump over such points."""
    pos = position({13: 1}, {12: 2, 11: 2, 9: 2, 24: 9})
    assert play_texts(pos, (5, 3)) == {"13/5"}
    pos = position({24: 1}, {23: 2, 22: 2, 21: 2, 20: 2})
    assert play_texts(pos, (6, 5)) == {"24/13"}


@pytest.mark.parametrize(
    ("blocked", "expected", "route"),
    [
        pytest.param((), {"13/5", "13/8 6/3", "13/10 6/1", "6/3 6/1"}, None, id="both-open"),
        pytest.param((8,), {"13/5", "13/10 6/1", "6/3 6/1"}, 10, id="8-blocked"),
        pytest.param((10,), {"13/5", "13/8 6/3", "6/3 6/1"}, 8, id="10-blocked"),
        pytest.param((8, 10), {"6/3 6/1"}, None, id="both-blocked"),
    ],
)
def test_13_5_with_5_3_goes_through_8_or_10(
    blocked: tuple[int, ...], expected: set[str], route: int | None
) -> None:
    """Example: a checker on 13 with 5-3 reaches 5 only via 8 or via 10; if both 8
    and 10 are blocked, 13/5 is illegal even if 5 is open. If only one route is
    open, that route is the play. The order of the dice matters and both orders
    must be considered."""
    theirs = {p: 2 for p in blocked}
    theirs[24] = 15 - 2 * len(blocked)
    pos = position({13: 1, 6: 2}, theirs)
    assert play_texts(pos, (5, 3)) == expected
    assert play_texts(pos, (3, 5)) == expected
    if "13/5" not in expected:
        with pytest.raises(IllegalPlayError, match=r"'13/5'"):
            pos.parse_play("13/5", (5, 3))
        return
    play = pos.parse_play("13/5", (5, 3))
    if route is None:
        # Both routes lead to one position: one play, written either way.
        assert pos.parse_play("13/8/5", (5, 3)) == play
        assert pos.parse_play("13/10/5", (5, 3)) == play
    else:
        assert play.moves == (Move(13, route), Move(route, 5))


def test_bar_is_not_a_point() -> None:
    """The bar is not a point: crossing it costs nothing."""
    # 19/18 and 7/6 cross the bar with a single pip, as does entering bar/24.
    pos = position({19: 1, 7: 1}, {1: 15})
    plays = pos.legal_plays((1, 1))
    assert {pos.format_play(p) for p in plays} == {
        "19/15",
        "19/16 7/6",
        "19/17 7/5",
        "19/18 7/4",
        "7/3",
    }
    for play in plays:
        assert play.result.pip_counts()[1] == pos.pip_counts()[0] - 4
    pos = position({BAR: 1}, {1: 15})
    assert play_texts(pos, (1, 1)) == {"bar/21"}
    (play,) = pos.legal_plays((1, 1))
    assert play.moves[0] == Move(BAR, 24)
    assert play.result.pip_counts()[1] == 21


# -- 4. Must-play rules ---------------------------------------------------------


def test_both_dice_must_be_played_when_possible() -> None:
    """If both dice can be played (in some order, by any checkers), both must be
    played."""
    # The 6 is playable only after the 2 (10/4 is closed), and only by the same
    # checker: 10/8/2 is the one play that uses both dice.
    pos = position({10: 1, 3: 1}, {4: 2, 24: 13})
    plays = pos.legal_plays((6, 2))
    assert {pos.format_play(p) for p in plays} == {"10/2"}
    assert plays[0].moves == (Move(10, 8), Move(8, 2))
    with pytest.raises(IllegalPlayError, match="plays 1 of the dice but 2"):
        pos.parse_play("10/8", (6, 2))


def test_first_move_that_blocks_the_other_die_is_illegal() -> None:
    """A first move that leaves the other die unplayable is illegal when a two-dice
    play exists."""
    # 3/1 is a legal 2 on its own, but then the 6 cannot be played (10/4 is closed
    # and no checker may bear off while the 10 is out).
    pos = position({10: 1, 3: 1}, {4: 2, 24: 13})
    assert play_texts(pos, (6, 2)) == {"10/2"}
    with pytest.raises(IllegalPlayError, match=r"'3/1'.*plays 1 of the dice but 2"):
        pos.parse_play("3/1", (6, 2))


@pytest.mark.parametrize(
    ("theirs", "expected"),
    [
        pytest.param({6: 2, 24: 13}, {"13/7"}, id="either-alone-larger"),
        pytest.param({12: 2, 6: 2, 24: 11}, {"13/7"}, id="only-larger"),
        pytest.param({7: 2, 6: 2, 24: 11}, {"13/12"}, id="only-smaller"),
    ],
)
def test_larger_die_rule(theirs: dict[int, int], expected: set[str]) -> None:
    """If only one die can be played in the whole turn, it must be played; if either
    die can be played alone but not both, the larger die must be played. If only
    the smaller can be played, play it."""
    pos = position({13: 1}, theirs)
    assert play_texts(pos, (6, 1)) == expected
    assert play_texts(pos, (1, 6)) == expected
    for play in pos.legal_plays((6, 1)):
        assert len(play.moves) == 1


def test_larger_die_must_be_played_when_either_can() -> None:
    """... if either die can be played alone but not both, the larger die must be
    played."""
    pos = position({13: 1}, {6: 2, 24: 13})
    with pytest.raises(IllegalPlayError, match="must be the larger one"):
        pos.parse_play("13/12", (6, 1))


@pytest.mark.parametrize(
    ("mine", "theirs", "expected", "moves"),
    [
        pytest.param({13: 1}, {9: 2, 24: 13}, set(), 0, id="0"),
        pytest.param({13: 1}, {5: 2, 24: 13}, {"13/9"}, 1, id="1"),
        pytest.param({13: 1}, {1: 2, 24: 13}, {"13/5"}, 2, id="2"),
        pytest.param({24: 1, 13: 1}, {20: 2, 23: 13}, {"13/1"}, 3, id="3"),
        pytest.param({13: 2}, {24: 15}, {"13/1 13/9", "13/5(2)"}, 4, id="4"),
    ],
)
def test_doubles_play_as_many_moves_as_possible(
    mine: dict[int, int], theirs: dict[int, int], expected: set[str], moves: int
) -> None:
    """Doubles: play as many of the four moves as possible (0 to 4)."""
    pos = position(mine, theirs)
    assert play_texts(pos, (4, 4)) == expected
    for play in pos.legal_plays((4, 4)):
        assert len(play.moves) == moves


def test_doubles_fewer_moves_than_possible_is_illegal() -> None:
    """Doubles: play as many of the four moves as possible (0 to 4)."""
    pos = position({24: 1, 13: 1}, {20: 2, 23: 13})
    with pytest.raises(IllegalPlayError, match="plays 2 of the dice but 3"):
        pos.parse_play("13/5", (4, 4))


def test_unplayable_dice_are_lost_but_passing_is_forbidden() -> None:
    """Unplayable dice are lost. Passing while a legal move exists is forbidden."""
    # Only 13/7 can be played: the 5 is lost, but the 6 must be played.
    pos = position({13: 1, 3: 3}, {8: 2, 2: 2, 24: 11})
    plays = pos.legal_plays((6, 5))
    assert [pos.format_play(p) for p in plays] == ["13/7"]
    assert plays[0].moves == (Move(13, 7),)


def test_legal_plays_are_distinct_resulting_positions() -> None:
    """The set of legal plays is a set of distinct resulting positions (two move
    orders that reach the same position are one play)."""
    # 13/8/5 and 13/10/5 reach one position; so do 13/8 6/3 and 6/3 13/8.
    pos = position({13: 1, 6: 2}, {24: 15})
    plays = pos.legal_plays((5, 3))
    assert len(plays) == 4
    assert pos.parse_play("6/3 13/8", (5, 3)) == pos.parse_play("13/8 6/3", (5, 3))
    assert pos.parse_play("6/3 13/8", (3, 5)).result == pos.parse_play("13/8 6/3", (5, 3)).result
    assert pos.parse_play("13/10/5", (5, 3)) == pos.parse_play("13/8/5", (5, 3))


# Distinct plays of each roll in the opening position, as GNU Backgammon 1.07 lists
# them (0-ply hint, which lists every play once per resulting position).
OPENING_PLAY_COUNTS = {
    (6, 6): 11, (6, 5): 7, (6, 4): 14, (6, 3): 14, (6, 2): 14, (6, 1): 10,
    (5, 5): 4, (5, 4): 9, (5, 3): 9, (5, 2): 8, (5, 1): 8,
    (4, 4): 52, (4, 3): 17, (4, 2): 18, (4, 1): 14,
    (3, 3): 73, (3, 2): 17, (3, 1): 16,
    (2, 2): 75, (2, 1): 15,
    (1, 1): 42,
}  # fmt: skip


@pytest.mark.parametrize("dice", ALL_ROLLS, ids=[f"{a}{b}" for a, b in ALL_ROLLS])
def test_opening_plays_are_distinct_positions_as_gnubg_counts_them(dice: tuple[int, int]) -> None:
    """The set of legal plays is a set of distinct resulting positions (two move
    orders that reach the same position are one play)."""
    plays = Position().legal_plays(dice)
    assert len({p.result for p in plays}) == len(plays) == OPENING_PLAY_COUNTS[dice]
    assert len(Position().legal_plays(dice[::-1])) == OPENING_PLAY_COUNTS[dice]


# -- 5. Hitting and the bar -----------------------------------------------------


def test_hit_checker_goes_to_the_bar() -> None:
    """A hit checker goes to the bar."""
    pos = position({13: 1}, {10: 1, 24: 14})
    assert pos.pip_counts() == (13, 14 + 15)
    after = pos.apply(pos.parse_play("13/10*", (2, 1)))
    # ``after`` is seen from the side that was hit: its checker is on its bar.
    assert after.on_roll_at(BAR) == 1
    assert after.on_roll_at(15) == 0
    assert after.pip_counts() == (14 + 25, 10)


def test_checkers_on_the_bar_enter_before_any_other_move() -> None:
    """A side with checkers on the bar must enter all of them before moving any
    other checker."""
    pos = position({BAR: 1, 13: 1}, {1: 2})
    plays = pos.legal_plays((6, 5))
    assert {pos.format_play(p) for p in plays} == {"bar/14", "bar/19 13/8", "bar/20 13/7"}
    assert all(p.moves[0].from_point == BAR for p in plays)
    with pytest.raises(IllegalPlayError, match="must enter first"):
        pos.parse_play("13/2", (6, 5))


@pytest.mark.parametrize(
    ("die", "expected"),
    [(1, "bar/24"), (2, "bar/23"), (3, "bar/22"), (4, "bar/9"), (5, "bar/5"), (6, "bar/1")],
)
def test_die_d_enters_on_the_25_minus_d_point(die: int, expected: str) -> None:
    """Entry is into the opponent's home board: die d enters on the side's
    (25-d)-point (a 1 enters on the 24-point, a 6 on the 19-point)."""
    # Every home point of the opponent is made but the entry point of ``die``.
    pos = position({BAR: 1}, {p: 2 for p in range(19, 25) if p != 25 - die})
    plays = pos.legal_plays((die, die))
    assert {pos.format_play(p) for p in plays} == {expected}
    assert plays[0].moves[0] == Move(BAR, 25 - die)


def test_dice_are_never_added_for_entry() -> None:
    """Each entry uses one die; the dice are never added for entry."""
    # 1 and 2 are closed; 3 (= 2 + 1) is open but cannot be reached from the bar.
    pos = position({BAR: 1, 13: 2}, {24: 2, 23: 2})
    assert play_texts(pos, (2, 1)) == set()
    assert play_texts(pos, (1, 1)) == set()


_FIVE_POINT_BOARD = {19: 2, 20: 2, 21: 2, 23: 2, 24: 2}  # the 22-point open


@pytest.mark.parametrize(
    ("mine", "theirs", "expected"),
    [
        pytest.param({BAR: 1}, {}, {"bar/22"}, id="empty"),
        pytest.param({BAR: 1, 22: 1}, {}, {"bar/22"}, id="own"),
        pytest.param({BAR: 1}, {22: 1}, {"bar/22*"}, id="blot"),
        pytest.param({BAR: 1}, {22: 2}, set(), id="made"),
    ],
)
def test_entry_point_must_be_open(
    mine: dict[int, int], theirs: dict[int, int], expected: set[str]
) -> None:
    """The entry point must be open (empty, own, or one opposing blot)."""
    pos = position(mine, _FIVE_POINT_BOARD | theirs)
    assert play_texts(pos, (3, 3)) == expected


def test_one_on_the_bar_enters_then_any_checker_plays_the_other_die() -> None:
    """With one checker on the bar, a player may enter with one die and then play
    the other die with any checker, the entered one included."""
    pos = position({BAR: 1, 13: 1}, {1: 2})
    assert play_texts(pos, (6, 5)) == {"bar/14", "bar/19 13/8", "bar/20 13/7"}


@pytest.mark.parametrize(
    ("mine", "theirs", "dice", "expected"),
    [
        pytest.param({BAR: 2, 13: 2}, {1: 2}, (6, 3), {"bar/22 bar/19"}, id="both-enter"),
        pytest.param({BAR: 2, 13: 2}, {19: 2}, (6, 3), {"bar/22"}, id="one-enters"),
        pytest.param(
            {BAR: 2, 13: 2},
            _FIVE_POINT_BOARD,
            (3, 3),
            {"bar/22(2) 13/10(2)", "bar/22(2) 13/7"},
            id="two-double",
        ),
        pytest.param(
            {BAR: 3, 13: 2}, _FIVE_POINT_BOARD, (3, 3), {"bar/22(3) 13/10"}, id="three-double"
        ),
        pytest.param({BAR: 4, 13: 2}, _FIVE_POINT_BOARD, (3, 3), {"bar/22(4)"}, id="four-double"),
        pytest.param({BAR: 2, 13: 2}, {22: 2, 1: 2}, (3, 3), set(), id="none-enters"),
    ],
)
def test_two_or_more_on_the_bar_each_die_enters_one(
    mine: dict[int, int], theirs: dict[int, int], dice: tuple[int, int], expected: set[str]
) -> None:
    """With two or more on the bar, each die (each of the four moves of a double)
    enters one checker until all are in; no other checker moves while any is left
    on the bar, so a die that cannot enter is lost."""
    assert play_texts(position(mine, theirs), dice) == expected


def test_no_entry_loses_the_turn() -> None:
    """If no entry is possible the turn is lost."""
    pos = position({BAR: 1, 13: 5}, {19: 2, 20: 2})
    assert pos.legal_plays((6, 5)) == []


def test_only_one_die_enters_then_the_other_is_played_if_it_can() -> None:
    """If only one die enters, that die must be used for it, then the other die is
    played if it can be."""
    pos = position({BAR: 1, 13: 2}, _FIVE_POINT_BOARD)
    assert play_texts(pos, (6, 3)) == {"bar/16", "bar/22 13/7"}
    with pytest.raises(IllegalPlayError):
        pos.parse_play("bar/19", (6, 3))
    # Against a 5-point board with 22/16 closed and nothing else to move, the 6 is lost.
    pos = position({BAR: 1}, _FIVE_POINT_BOARD | {16: 2})
    assert play_texts(pos, (6, 3)) == {"bar/22"}


@pytest.mark.parametrize("dice", ALL_ROLLS, ids=[f"{a}{b}" for a, b in ALL_ROLLS])
def test_closed_board_cannot_be_entered(dice: tuple[int, int]) -> None:
    """A closed board (all six home points made) cannot be entered: the player on
    the bar passes until a point opens."""
    pos = position({BAR: 1, 13: 5}, {p: 2 for p in range(19, 25)})
    assert pos.legal_plays(dice) == []


@pytest.mark.parametrize("dice", ALL_ROLLS, ids=[f"{a}{b}" for a, b in ALL_ROLLS])
def test_prime_of_six_cannot_be_jumped(dice: tuple[int, int]) -> None:
    """Six consecutive made points (a prime) cannot be jumped."""
    pos = position({24: 1, 13: 1}, {p: 2 for p in range(18, 24)})
    plays = pos.legal_plays(dice)
    assert plays, "the checker on 13 can always move"
    assert all(m.from_point != 24 for p in plays for m in p.moves)


def test_prime_of_six_against_prime_of_five() -> None:
    """Six consecutive made points (a prime) cannot be jumped."""
    six = position({24: 1, 13: 1}, {p: 2 for p in range(18, 24)})
    assert play_texts(six, (6, 5)) == {"13/2"}
    # With the 18-point open, a 6 jumps the five-point prime.
    five = position({24: 1, 13: 1}, {p: 2 for p in range(19, 24)})
    assert play_texts(five, (6, 5)) == {"24/13", "24/18 13/8", "13/2"}


def test_hitting_is_never_compulsory() -> None:
    """Hitting is never compulsory."""
    pos = position({13: 2}, {11: 1, 24: 14})
    assert play_texts(pos, (2, 1)) == {"13/11*/10", "13/12 13/11*", "13/10"}
    quiet = pos.parse_play("13/12/10", (2, 1))
    assert pos.format_play(quiet) == "13/10"
    assert not any(m.hit for m in quiet.moves)


# -- 6. Bearing off --------------------------------------------------------------


@pytest.mark.parametrize(
    ("mine", "theirs", "expected"),
    [
        pytest.param({3: 3}, {24: 2}, {"3/off(2)"}, id="all-home"),
        pytest.param({13: 1, 3: 3}, {8: 2, 7: 2}, set(), id="one-stuck-outside"),
        pytest.param({8: 1, 3: 3}, {24: 2}, {"8/off", "8/2 3/off"}, id="comes-home-first"),
    ],
)
def test_bear_off_only_when_all_checkers_are_home(
    mine: dict[int, int], theirs: dict[int, int], expected: set[str]
) -> None:
    """Allowed only while all 15 of a side's checkers are in its home board
    (borne-off ones count as home)."""
    assert play_texts(position(mine, theirs), (6, 5)) == expected


def test_hit_during_bear_off_must_come_home_before_bearing_off() -> None:
    """A side that gets hit during bear-off must re-enter and bring that checker
    home before bearing off again."""
    # The opponent, on roll, hits the blot on our 6-point (its 19-point).
    theirs = Position.from_points({24: 1, 1: 14}, {6: 1, 3: 4, 2: 4})
    hit = theirs.parse_play("24/19*/18", (5, 1))
    pos = theirs.apply(hit)
    assert pos == position({BAR: 1, 3: 4, 2: 4}, {7: 1, 24: 14})
    # Back on roll: we must enter, and may not bear off although 6-5 would.
    assert play_texts(pos, (6, 5)) == {"bar/14"}
    # Still outside: the 6-2 brings it home or towards home, bears nothing off.
    pos = position({14: 1, 3: 4, 2: 4}, {7: 1, 24: 14})
    assert play_texts(pos, (6, 2)) == {"14/6", "14/8 3/1"}
    # Home again: bearing off resumes.
    pos = position({6: 1, 3: 4, 2: 4}, {7: 1, 24: 14})
    # 6/off with the 6 and any 2; or 6/4 and then the 6 bears off from the 4-point.
    assert play_texts(pos, (6, 2)) == {"6/off 3/1", "6/off 2/off", "6/off"}
    assert pos.parse_play("6/4 4/off", (6, 2)).moves == (Move(6, 4), Move(4, OFF))


def test_bear_off_6_4_from_seed_000() -> None:
    """A die bears off a checker from the point of that number. ... A die may also
    be used to move inside the home board instead of bearing off, when that is
    legal. (Seed 000: with every home point holding two or more, 6-4 bears off
    from the 6-point; the 4 bears off from the 4-point or moves 6/2 or 5/1.)"""
    pos = position({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {24: 15})
    assert play_texts(pos, (6, 4)) == {"6/off 4/off", "6/2 6/off", "6/off 5/1"}


@pytest.mark.parametrize(
    ("mine", "dice", "expected"),
    [
        pytest.param({3: 2, 2: 1}, (6, 5), {"3/off(2)"}, id="both-from-3"),
        pytest.param({5: 1, 3: 1}, (6, 4), {"5/off 3/off", "5/1 3/off"}, id="then-next"),
        pytest.param({2: 1}, (6, 5), {"2/off"}, id="last-checker"),
    ],
)
def test_die_larger_than_highest_point_bears_off_from_it(
    mine: dict[int, int], dice: tuple[int, int], expected: set[str]
) -> None:
    """A die larger than the highest occupied point bears off from the highest
    occupied point."""
    assert play_texts(position(mine, {24: 2}), dice) == expected


@pytest.mark.parametrize(
    ("mine", "dice", "expected"),
    [
        pytest.param({6: 2}, (5, 4), {"6/2 6/1"}, id="5-4-from-6"),
        pytest.param({6: 2}, (6, 5), {"6/1 6/off"}, id="6-5-from-6"),
    ],
)
def test_die_for_an_empty_point_moves_inside_when_higher_points_are_occupied(
    mine: dict[int, int], dice: tuple[int, int], expected: set[str]
) -> None:
    """Otherwise (the point of that number is empty but higher points are occupied)
    the die must be played by moving a checker inside the board."""
    pos = position(mine, {24: 2})
    assert play_texts(pos, dice) == expected
    with pytest.raises(IllegalPlayError):
        pos.parse_play(f"{max(mine)}/off {min(mine)}/off", dice)


def test_section_4_applies_in_bear_off() -> None:
    """Section 4 applies in bear-off too (e.g. must play both dice when possible; a
    die is played with its full value whenever possible)."""
    pos = position({6: 1, 4: 1}, {24: 2})
    assert play_texts(pos, (6, 3)) == {"6/off 4/1", "6/3 4/off"}
    with pytest.raises(IllegalPlayError):
        pos.parse_play("6/off", (6, 3))
    # Only the 6 can be played (6/5 is closed): the 1 is lost.
    pos = position({6: 1}, {5: 2, 1: 13})
    assert play_texts(pos, (6, 1)) == {"6/off"}
