"""Position: construction, validation, pip counts, flip, race, outcome, diagram, Position ID."""

from __future__ import annotations

from typing import Any, cast

import pytest

from nard import (
    BAR,
    OFF,
    STARTING,
    IllegalPlayError,
    InvalidDiceError,
    InvalidPositionError,
    InvalidPositionIdError,
    NardError,
    Play,
    Position,
    check_dice,
    parse_dice,
)
from tests.core.helpers import position

START = {24: 2, 13: 5, 8: 3, 6: 5}
START_ID = "4HPwATDgc/ABMA"
START_BOARD = (0, -2, 0, 0, 0, 0, 5, 0, 3, 0, 0, 0, -5, 5, 0, 0, 0, -3, 0, -5, 0, 0, 0, 0, 2, 0)

# -- construction ---------------------------------------------------------------


def test_opening_position_every_way() -> None:
    pos = Position()
    assert pos == STARTING
    assert pos == Position.from_points(START, START)
    assert pos == Position.from_position_id(START_ID)
    assert pos == Position(START_BOARD)
    assert pos.board == START_BOARD
    assert pos.position_id() == START_ID


def test_from_points_uses_each_sides_own_numbering() -> None:
    pos = Position.from_points({6: 2, BAR: 1}, {1: 1, BAR: 2})
    assert pos.board[6] == 2
    assert pos.board[25] == 1
    assert pos.board[24] == -1  # the opponent's 1-point is our 24-point
    assert pos.board[0] == -2  # the opponent's bar
    assert (pos.on_roll_at(6), pos.on_roll_at(BAR), pos.on_roll_at(OFF)) == (2, 1, 12)
    assert (pos.opponent_at(1), pos.opponent_at(BAR), pos.opponent_at(OFF)) == (1, 2, 12)
    assert pos.opponent_at(24) == 0
    assert Position.from_points({6: 2, 8: 0}, {}) == Position.from_points({6: 2}, {})


def test_board_constructor_round_trips() -> None:
    pos = position({BAR: 1, 20: 3, 6: 4}, {0: 2, 19: 2, 5: 1})
    assert Position(pos.board) == pos
    assert Position(list(pos.board)) == pos


def test_position_is_immutable_and_hashable() -> None:
    pos = Position()
    with pytest.raises((AttributeError, TypeError)):
        pos.__setattr__("_board", ())
    with pytest.raises(TypeError):
        pos.board[3] = 1  # type: ignore[index]
    copy = Position.from_points(START, START)
    assert hash(copy) == hash(pos)
    assert {pos: 1}[copy] == 1
    assert pos != "4HPwATDgc/ABMA"  # type: ignore[comparison-overlap]
    assert pos != Position.from_points(START, {24: 2, 13: 5, 8: 3, 6: 4})


# -- validation -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("on_roll", "opponent", "quoted"),
    [
        pytest.param({6: 16}, {}, "16", id="16-on-roll"),
        pytest.param({6: 10, 8: 6}, {}, "16", id="16-on-roll-spread"),
        pytest.param({}, {6: 9, BAR: 7}, "16", id="16-opponent"),
        pytest.param({6: 2}, {19: 2}, "19", id="both-on-a-point"),
        pytest.param({19: 1}, {6: 1}, "6", id="both-on-a-blot"),
        pytest.param({0: 1}, {}, "0", id="point-0"),
        pytest.param({26: 1}, {}, "26", id="point-26"),
        pytest.param({-1: 1}, {}, "-1", id="point-negative"),
        pytest.param({"6": 1}, {}, "'6'", id="point-text"),
        pytest.param({}, {0: 1}, "0", id="opponent-point-0"),
        pytest.param({6: -1}, {}, "-1", id="count-negative"),
        pytest.param({6: 1.5}, {}, "1.5", id="count-float"),
    ],
)
def test_from_points_rejects_impossible_positions(
    on_roll: dict[Any, Any], opponent: dict[Any, Any], quoted: str
) -> None:
    with pytest.raises(InvalidPositionError) as info:
        Position.from_points(on_roll, opponent)
    assert quoted in str(info.value)
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, NardError)


@pytest.mark.parametrize(
    ("board", "reason"),
    [
        pytest.param(START_BOARD[:25], "expected 26 integers", id="short"),
        pytest.param((*START_BOARD, 0), "expected 26 integers", id="long"),
        pytest.param((*START_BOARD[:25], "x"), "expected 26 integers", id="text"),
        pytest.param((*START_BOARD[:25], True), "expected 26 integers", id="bool"),
        pytest.param((*START_BOARD[:25], -1), "negative", id="negative-bar"),
        pytest.param((1, *START_BOARD[1:]), "opponent's bar", id="positive-opponent-bar"),
    ],
)
def test_board_constructor_rejects_bad_boards(board: tuple[Any, ...], reason: str) -> None:
    with pytest.raises(InvalidPositionError) as info:
        Position(board)
    assert reason in str(info.value)
    assert repr(board) in str(info.value)


@pytest.mark.parametrize(
    ("board", "count"),
    [
        pytest.param((0, 16, *[0] * 24), "16", id="on-roll"),
        pytest.param((-9, -7, *[0] * 24), "16", id="opponent"),
    ],
)
def test_board_constructor_rejects_more_than_15_checkers(
    board: tuple[int, ...], count: str
) -> None:
    with pytest.raises(InvalidPositionError, match=f"has {count} checkers"):
        Position(board)


def test_too_many_checkers_message_quotes_the_board() -> None:
    board = (0, 16, *[0] * 24)
    with pytest.raises(InvalidPositionError) as info:
        Position(board)
    assert repr(board) in str(info.value)


@pytest.mark.parametrize(
    "dice",
    [(7, 1), (0, 1), (1, 7), (1,), (1, 2, 3), (True, 1), (1.0, 2), "61", None, ()],
    ids=repr,
)
def test_bad_dice_raise_invalid_dice_error_quoting_them(dice: Any) -> None:
    with pytest.raises(InvalidDiceError) as info:
        Position().legal_plays(dice)
    assert repr(dice) in str(info.value)
    assert isinstance(info.value, ValueError)
    with pytest.raises(InvalidDiceError):
        check_dice(dice)
    if dice is not None:  # None asks parse_play to infer the roll
        with pytest.raises(InvalidDiceError):
            Position().parse_play("24/18 13/8", dice)


def test_dice_keep_the_order_rolled() -> None:
    assert check_dice((1, 6)) == (1, 6)
    assert check_dice([6, 1]) == (6, 1)


@pytest.mark.parametrize("text", ["64", "6-4", "6,4", "6 4", " 6-4 ", "6/4"])
def test_parse_dice(text: str) -> None:
    assert parse_dice(text) == (6, 4)


@pytest.mark.parametrize("text", ["70", "6", "", "6-4-1", "66a", "six four"])
def test_parse_dice_rejects_bad_text(text: str) -> None:
    with pytest.raises(InvalidDiceError, match=f"invalid dice {text!r}"):
        parse_dice(text)


# -- views ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mine", "theirs", "pips"),
    [
        pytest.param(START, START, (167, 167), id="opening"),
        pytest.param({6: 2, BAR: 1}, {1: 1}, (37, 1), id="bar-is-25"),
        pytest.param({BAR: 2, 6: 5, 13: 8}, {BAR: 1, 6: 3, 5: 3, 4: 3, 3: 3, 1: 2}, (184, 81)),
        pytest.param({}, {24: 1}, (0, 24), id="all-off"),
    ],
)
def test_pip_counts(mine: dict[int, int], theirs: dict[int, int], pips: tuple[int, int]) -> None:
    pos = Position.from_points(mine, theirs)
    assert pos.pip_counts() == pips
    assert pos.flip().pip_counts() == pips[::-1]


def test_pip_counts_after_a_hit() -> None:
    pos = Position()
    after = pos.apply(pos.parse_play("24/18 13/8", (6, 5)))
    assert after.pip_counts() == (167, 156)
    # The opponent hits our blot on its 7-point (our 18) with 6-1: 13/7*, 8/7.
    hit = after.apply(after.parse_play("13/7* 8/7", (6, 1)))
    assert hit.pip_counts() == (156 - 18 + 25, 167 - 7)


def test_flip() -> None:
    assert Position().flip() == Position()
    a = {BAR: 1, 20: 3, 6: 4}
    b = {BAR: 2, 18: 2, 3: 1}
    pos = Position.from_points(a, b)
    flipped = pos.flip()
    assert flipped == Position.from_points(b, a)
    assert flipped.flip() == pos
    assert flipped.board == tuple(-c for c in reversed(pos.board))
    assert flipped.on_roll_at(BAR) == pos.opponent_at(BAR)
    assert flipped.opponent_at(20) == pos.on_roll_at(20)


@pytest.mark.parametrize(
    ("mine", "theirs", "race"),
    [
        pytest.param(START, START, False, id="opening"),
        pytest.param({6: 5, 1: 2}, {6: 5, 1: 2}, True, id="both-home"),
        pytest.param({7: 1}, {17: 1}, True, id="passed-each-other"),
        pytest.param({8: 1}, {18: 1}, False, id="adjacent-not-passed"),
        pytest.param({6: 1}, {BAR: 1}, False, id="opponent-on-bar"),
        pytest.param({BAR: 1}, {6: 2}, False, id="on-roll-on-bar"),
    ],
)
def test_is_race(mine: dict[int, int], theirs: dict[int, int], race: bool) -> None:
    pos = Position.from_points(mine, theirs)
    assert pos.is_race() is race
    assert pos.is_contact() is not race
    assert pos.flip().is_race() is race


@pytest.mark.parametrize(
    ("mine", "theirs", "points"),
    [
        pytest.param(START, START, 0, id="going-on"),
        pytest.param({}, {6: 1}, 1, id="single"),
        pytest.param({}, {6: 14, 12: 1}, 2, id="gammon"),
        pytest.param({}, {7: 15}, 2, id="gammon-all-on-7"),
        pytest.param({}, {6: 14, 19: 1}, 3, id="backgammon-in-winners-home"),
        pytest.param({}, {6: 14, 24: 1}, 3, id="backgammon-on-winners-1"),
        pytest.param({}, {6: 14, BAR: 1}, 3, id="backgammon-on-bar"),
        pytest.param({}, {19: 1}, 1, id="single-despite-checker-in-winners-home"),
    ],
)
def test_outcome_from_both_views(mine: dict[int, int], theirs: dict[int, int], points: int) -> None:
    pos = Position.from_points(mine, theirs)
    assert pos.outcome() == points
    assert pos.flip().outcome() == -points
    assert pos.is_game_over() is (points != 0)
    assert pos.flip().is_game_over() is (points != 0)


def test_outcome_after_the_last_checker_is_borne_off() -> None:
    pos = Position.from_points({1: 1}, {18: 15})
    (play,) = pos.legal_plays((2, 1))
    assert pos.format_play(play) == "1/off"
    # The result is seen from the loser, now (nominally) on roll.
    assert play.result.outcome() == -2
    assert play.result.flip().outcome() == 2


# -- text -----------------------------------------------------------------------

BAR_DIAGRAM = """\
Position ID: c3cHAEDgA/4BYA
 +13-14-15-16-17-18-+---+19-20-21-22-23-24-+
 | X                | O | O  O  O  O     O |
 | X                |   | O  O  O  O     O |
 | X                |   | O  O  O  O       |
 | X                |   |                  |
 | 8                |   |                  |
 |                  |BAR|                  |
 |                  |   | X                |
 |                  |   | X                |
 |                  |   | X                |
 |                  | X | X                |
 |                  | X | X                |
 +12-11-10--9--8--7-+---+-6--5--4--3--2--1-+
O (opponent): pips 81, on bar 1, off 0
X (on roll):  pips 184, on bar 2, off 0"""


def test_str_draws_the_diagram() -> None:
    pos = Position.from_points({BAR: 2, 6: 5, 13: 8}, {BAR: 1, 6: 3, 5: 3, 4: 3, 3: 3, 1: 2})
    assert str(pos) == BAR_DIAGRAM
    lines = str(Position()).splitlines()
    assert lines[0] == f"Position ID: {START_ID}"
    assert lines[-2:] == [
        "O (opponent): pips 167, on bar 0, off 0",
        "X (on roll):  pips 167, on bar 0, off 0",
    ]
    off = str(Position.from_points({6: 1}, {1: 1}))
    assert off.endswith(
        "O (opponent): pips 1, on bar 0, off 14\nX (on roll):  pips 6, on bar 0, off 14"
    )


def test_repr_evaluates_back() -> None:
    pos = Position.from_points({BAR: 2, 6: 5, 13: 8}, {BAR: 1, 6: 3, 1: 2})
    assert eval(repr(pos), {"Position": Position}) == pos


# Position IDs computed by GNU Backgammon 1.07 (gnubg.positionid) for the same boards.
KNOWN_IDS = [
    pytest.param(START, START, "4HPwATDgc/ABMA", id="opening"),
    pytest.param(START, {24: 2, 13: 5, 8: 2, 6: 4, 5: 2}, "sGfwATDgc/ABMA", id="after-31"),
    pytest.param(
        {BAR: 2, 6: 5, 13: 8}, {BAR: 1, 6: 3, 5: 3, 4: 3, 3: 3, 1: 2}, "c3cHAEDgA/4BYA", id="bar"
    ),
    pytest.param({6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 1: 2}, {6: 1}, "IAAAbLs7AAAAAA", id="bear-off"),
    pytest.param({1: 1}, {1: 1}, "AQAABAAAAAAAAA", id="last-checkers"),
]


@pytest.mark.parametrize(("mine", "theirs", "position_id"), KNOWN_IDS)
def test_position_id_of_known_positions(
    mine: dict[int, int], theirs: dict[int, int], position_id: str
) -> None:
    pos = Position.from_points(mine, theirs)
    assert pos.position_id() == position_id
    assert Position.from_position_id(position_id) == pos
    assert repr(pos) == f"Position.from_position_id({position_id!r})"


def test_after_31_is_the_opening_position_id_flipped() -> None:
    pos = Position()
    after = pos.apply(pos.parse_play("8/5 6/5", (3, 1)))
    assert after.position_id() == "sGfwATDgc/ABMA"
    assert after.flip() == Position.from_points({24: 2, 13: 5, 8: 2, 6: 4, 5: 2}, START)


@pytest.mark.parametrize(
    "bad",
    ["", "4HPwATDgc/ABM", "4HPwATDgc/ABMAA", "4HPwATDgc/AB!A", "//////////////"],
)
def test_bad_position_ids_raise_quoting_them(bad: str) -> None:
    with pytest.raises(InvalidPositionIdError) as info:
        Position.from_position_id(bad)
    assert repr(bad) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_position_id_must_be_text() -> None:
    with pytest.raises(InvalidPositionIdError, match="123"):
        Position.from_position_id(cast(str, 123))


def test_apply_rejects_a_play_from_another_position() -> None:
    other = position({13: 1}, {24: 15})
    play = other.parse_play("13/10", (2, 1))
    with pytest.raises(IllegalPlayError) as info:
        Position().apply(play)
    assert START_ID in str(info.value)
    assert "'13/10'" in str(info.value)


@pytest.mark.parametrize("point", [-1, 26, 1.5, True])
def test_checker_counts_reject_points_off_the_board(point: Any) -> None:
    with pytest.raises(InvalidPositionError, match="invalid point"):
        Position().on_roll_at(point)
    with pytest.raises(InvalidPositionError, match="invalid point"):
        Position().opponent_at(point)


def test_race_and_game_over_by_their_definitions() -> None:
    """is_race (every checker past all the opponent's) and is_game_over (a side has
    borne off all fifteen) on positions of random games, against their definitions
    written out (the methods take shortcuts)."""
    import random

    rng = random.Random(5)
    seen = 0
    kinds = set()
    for _ in range(40):
        position = Position()
        while True:
            b = list(position)
            back = max((p for p in range(1, 26) if b[p] > 0), default=0)
            front = min((i for i in range(0, 25) if b[i] < 0), default=25)
            over = position.on_roll_at(0) == 15 or position.opponent_at(0) == 15
            assert position.is_race() == (back < front)
            assert position.is_game_over() == over
            kinds.add((back < front, over))
            seen += 1
            if over:
                break
            plays = position.legal_plays((rng.randint(1, 6), rng.randint(1, 6)))
            position = rng.choice(plays).result if plays else position.flip()
    assert {(False, False), (True, False), (True, True)} <= kinds and seen > 1000


def test_positions_and_plays_pickle_whole() -> None:
    """A play crosses to and from the engine's worker processes (the server's hints and
    engine API): pickled and read back it is the same play, moves and all (a play
    could be pickled but not read back)."""
    import pickle

    opening = Position.from_position_id("4HPwATDgc/ABMA")
    for dice in ((3, 1), (6, 6), (5, 2)):
        for play in opening.legal_plays(dice):
            copy = pickle.loads(pickle.dumps(play))
            assert type(copy) is Play and copy == play
            assert copy.moves == play.moves and copy.dice == play.dice
            assert opening.format_play(copy) == opening.format_play(play)
    assert pickle.loads(pickle.dumps(opening)) == opening
