"""eXtreme Gammon's XGID: reading, writing, and gnubg's importer as the oracle."""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nard import InvalidXgidError, Position
from nard.notation import (
    BOTTOM,
    TOP,
    CubeOwner,
    GameState,
    InvalidMatchStateError,
    MatchState,
    Resignation,
    XgidRecord,
)
from tests.notation.gnubg_ids import needs_gnubg, run_in_gnubg
from tests.notation.strategies import xgid_records

START = "-b----E-C---eE---c-e----B-"
# An asymmetric position: bottom has 13 checkers on the board, top 12.
ASYM = "-a---BD-B---cD---cAc-b----"

# -- known XGIDs ------------------------------------------------------------------------


def test_documented_example() -> None:
    # eXtreme Gammon's documentation: the opening position, bottom to play 5-2,
    # money play with the Jacoby and beaver rules, cube limit 2**10.
    record = XgidRecord.from_xgid("XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10")
    assert record.position == Position()
    assert record.match == MatchState(dice_owner=BOTTOM, dice=(5, 2), jacoby=True)
    assert record.beavers
    assert record.max_cube == 1024
    assert record.to_xgid() == "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:3:0:10"


def test_bottom_is_player_1_and_the_board_is_seen_from_bottom() -> None:
    record = XgidRecord.from_xgid(f"{ASYM}:1:1:1:52:4:2:1:5:8")
    state = record.match
    assert state.dice_owner == BOTTOM == 1 and state.turn == BOTTOM
    assert state.cube_value == 2 and state.cube_owner is CubeOwner.PLAYER_1
    assert state.score == (2, 4)  # (player 0 = top, player 1 = bottom)
    assert state.crawford and state.match_length == 5 and not state.jacoby
    assert record.max_cube == 256
    # Bottom's checkers: 2 on its 5-point, 4 on its 6-point, ...
    assert [record.position.on_roll_at(p) for p in (5, 6, 8, 13, 18)] == [2, 4, 2, 4, 1]
    # ... and top's, in top's own numbering (XGID point 1 is top's 24-point).
    assert [record.position.opponent_at(p) for p in (24, 13, 8, 6, 4)] == [1, 3, 3, 3, 2]
    # gnubg 1.07 `set xgid` of this XGID (with 00 dice) gives this Position ID.
    assert record.position.position_id() == "mHNwAAT2DB4EAA"


def test_top_on_roll_sees_the_board_from_top() -> None:
    bottom = XgidRecord.from_xgid(f"{ASYM}:1:0:1:00:4:2:0:9:10")
    top = XgidRecord.from_xgid(f"{ASYM}:1:0:-1:00:4:2:0:9:10")
    assert top.match.dice_owner == TOP == 0
    assert top.position == bottom.position.flip()
    assert top.position.position_id() == "sGfwIADmHBwAAQ"  # as gnubg 1.07 has it


def test_d_means_the_player_on_roll_has_doubled() -> None:
    # As gnubg reads it: the turn field names the doubler, the other player answers.
    record = XgidRecord.from_xgid(f"{ASYM}:1:0:-1:D:4:2:0:9:10")
    assert record.match.double_offered
    assert record.match.dice_owner == TOP and record.match.turn == BOTTOM
    assert record.match.dice is None
    assert record.position.position_id() == "sGfwIADmHBwAAQ"
    assert record.to_xgid() == f"XGID={ASYM}:1:0:-1:D:4:2:0:9:10"


@pytest.mark.parametrize(
    ("rules", "length", "crawford", "jacoby", "beavers"),
    [
        (0, 7, False, False, False),
        (1, 7, True, False, False),
        (0, 0, False, False, False),
        (1, 0, False, True, False),
        (2, 0, False, False, True),
        (3, 0, False, True, True),
    ],
)
def test_rules_field(rules: int, length: int, crawford: bool, jacoby: bool, beavers: bool) -> None:
    text = f"XGID={START}:0:0:1:00:6:0:{rules}:{length}:10"
    record = XgidRecord.from_xgid(text)
    assert (record.match.crawford, record.match.jacoby, record.beavers) == (
        crawford,
        jacoby,
        beavers,
    )
    assert record.to_xgid() == text


def test_prefix_whitespace_and_dice_order() -> None:
    record = XgidRecord.from_xgid(f"  {START}:0:0:-1:25:0:0:0:0:10\n")
    assert record.match.dice == (5, 2)
    assert record.to_xgid() == f"XGID={START}:0:0:-1:52:0:0:0:0:10"


def test_jacoby_in_match_play_is_not_written() -> None:
    # gnubg's Match IDs may carry the Jacoby bit in a match (the manual's example does).
    match = MatchState.from_match_id("QYkqASAAIAAA")
    assert match.jacoby and match.match_length == 9
    record = XgidRecord(Position(), match)
    assert record.to_xgid() == f"XGID={START}:1:-1:1:52:4:2:0:9:10"
    assert XgidRecord.from_xgid(record.to_xgid()).match == dataclasses.replace(match, jacoby=False)


def test_gnubg_id() -> None:
    record = XgidRecord.from_xgid(f"XGID={START}:1:-1:1:52:4:2:0:9:10")
    assert record.gnubg_id() == "4HPwATDgc/ABMA:QYkqASAAIAAE"


def test_bars_and_borne_off_checkers() -> None:
    position = Position.from_points({25: 2, 3: 1}, {25: 1, 24: 3})
    record = XgidRecord(position, MatchState(dice_owner=BOTTOM))
    text = record.to_xgid()
    board = text.split("=")[1].split(":")[0]
    assert len(board) == 26
    assert board[0] == "a" and board[25] == "B" and board[3] == "A" and board[1] == "c"
    assert XgidRecord.from_xgid(text) == record


# -- properties -----------------------------------------------------------------------


@given(xgid_records())
def test_round_trip_from_record(record: XgidRecord) -> None:
    text = record.to_xgid()
    assert XgidRecord.from_xgid(text) == record
    assert XgidRecord.from_xgid(text).to_xgid() == text


@given(st.text(alphabet="-ABCDEFGHIJKLMNOPabcdop:0123456789DBRXGI=", max_size=60))
def test_any_text_reads_or_fails_cleanly(text: str) -> None:
    try:
        XgidRecord.from_xgid(text)
    except InvalidXgidError as exc:
        assert repr(text) in str(exc)


# -- malformed XGIDs ----------------------------------------------------------------------


def _xgid(
    board: str = START,
    cube: str = "0",
    owner: str = "0",
    turn: str = "1",
    dice: str = "00",
    bottom: str = "0",
    top: str = "0",
    rules: str = "0",
    length: str = "7",
    max_cube: str = "10",
) -> str:
    return "XGID=" + ":".join(
        (board, cube, owner, turn, dice, bottom, top, rules, length, max_cube)
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "expected 10 fields separated by ':', got 1"),
        ("XGID=", "expected 10 fields"),
        (_xgid()[:-3], "got 9"),
        (_xgid() + ":0", "got 11"),
        (_xgid(board=START[:-1]), "has 25 characters, not 26"),
        (_xgid(board=START + "-"), "has 27 characters, not 26"),
        (_xgid(board=START.replace("E", "P", 1)), "character 'P' at 6 is not"),
        (_xgid(board=START.replace("-", "x", 1)), "character 'x' at 0"),
        (_xgid(board=START.replace("-", " ", 1)), "character ' ' at 0"),
        (_xgid(board="A" + START[1:]), "top player's bar, but holds bottom checkers"),
        (_xgid(board=START[:-1] + "a"), "bottom player's bar, but holds top checkers"),
        (_xgid(board=START.replace("E", "F", 1)), "the bottom player has 16 checkers"),
        (_xgid(board=START.replace("e", "f", 1)), "the top player has 16 checkers"),
        (_xgid(cube="x"), "cube value 'x' is not a whole number"),
        (_xgid(cube=""), "cube value '' is not a whole number"),
        (_xgid(cube="+1"), "cube value '+1' is not a whole number"),
        (_xgid(cube="-1"), "cube value field -1 is not 0-12"),
        (_xgid(cube="13"), "cube value field 13 is not 0-12"),
        (_xgid(cube="999999999"), "cube value field 999999999 is not 0-12"),
        (_xgid(bottom="9" * 5000), "bottom score '999"),
        (_xgid(length="1234567890"), "match length '1234567890' is out of range"),
        (_xgid(owner="2"), "cube owner 2 is not 1 (bottom), -1 (top) or 0"),
        (_xgid(turn="0"), "turn 0 is not 1 (bottom) or -1 (top)"),
        (_xgid(turn="2"), "turn 2"),
        (_xgid(dice="B"), "dice 'B' (beavered)"),
        (_xgid(dice="R"), "dice 'R' (raccooned)"),
        (_xgid(dice="70"), "dice '70' are not '00', 'D' or two dice 1-6"),
        (_xgid(dice="07"), "dice '07'"),
        (_xgid(dice="30"), "dice '30'"),
        (_xgid(dice="0"), "dice '0'"),
        (_xgid(dice="123"), "dice '123'"),
        (_xgid(dice="d"), "dice 'd'"),
        (_xgid(bottom="-1"), "bottom score -1 is negative"),
        (_xgid(top="-3"), "top score -3 is negative"),
        (_xgid(bottom="8"), "player 1's score 8 is above the match length 7"),
        (_xgid(top="9"), "player 0's score 9 is above the match length 7"),
        (_xgid(length="-1"), "match length -1 is not 0 (money) to 64"),
        (_xgid(length="65"), "match length 65"),
        (_xgid(rules="2"), "rules field 2 in match play is not 0 or 1"),
        (_xgid(rules="4", length="0"), "rules field 4 in money play is not 0-3"),
        (_xgid(rules="1", bottom="3", top="2"), "the Crawford game needs a player 1 point away"),
        (_xgid(max_cube="16"), "max cube field 16 is not 0-15"),
        (_xgid(max_cube="-1"), "max cube field -1"),
        (_xgid(max_cube="ten"), "max cube 'ten' is not a whole number"),
    ],
)
def test_malformed_xgids(text: str, problem: str) -> None:
    with pytest.raises(InvalidXgidError) as info:
        XgidRecord.from_xgid(text)
    message = str(info.value)
    assert message.startswith(f"invalid XGID {text!r}: ")
    assert problem in message


@pytest.mark.parametrize("value", [None, 7, b"XGID="])
def test_non_string_xgids(value: object) -> None:
    with pytest.raises(InvalidXgidError, match="must be a string"):
        XgidRecord.from_xgid(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("match", "extra", "problem"),
    [
        (MatchState(game_state=GameState.OVER), {}, "game in play, not game state OVER"),
        (MatchState(game_state=GameState.NONE), {}, "not game state NONE"),
        (MatchState(resignation=Resignation.SINGLE, turn=1), {}, "resignation on offer"),
        (MatchState(turn=1), {}, "cannot give the turn to player 1 while player 0 is on roll"),
        (MatchState(match_length=5), {"beavers": True}, "money-play rule"),
        (MatchState(), {"beavers": 1}, "beavers must be True or False"),
        (MatchState(), {"max_cube": 3}, "max cube 3 is not a power of two"),
        (MatchState(), {"max_cube": 1 << 16}, "max cube 65536"),
        (MatchState(), {"max_cube": 0}, "max cube 0"),
    ],
)
def test_invalid_records(match: MatchState, extra: dict[str, object], problem: str) -> None:
    with pytest.raises(InvalidMatchStateError, match=problem):
        XgidRecord(Position(), match, **extra)  # type: ignore[arg-type]


def test_record_fields_are_typed() -> None:
    with pytest.raises(InvalidMatchStateError, match="position must be a Position"):
        XgidRecord("4HPwATDgc/ABMA", MatchState())  # type: ignore[arg-type]
    with pytest.raises(InvalidMatchStateError, match="match must be a MatchState"):
        XgidRecord(Position(), "QYkqASAAIAAA")  # type: ignore[arg-type]


# -- gnubg's importer as the oracle ---------------------------------------------------------

GNUBG_SEED = 20261208
GNUBG_CASES = 600


def _random_position(rng: random.Random) -> Position:
    """A position with 1-15 checkers a side on the board, now and then on the bar."""
    board = [0] * 26
    for side in (1, -1):
        for _ in range(rng.choice([15, 15, rng.randint(1, 15)])):
            while True:
                bar = 25 if side == 1 else 0
                index = bar if rng.random() < 0.04 else rng.randint(1, 24)
                if board[index] * side >= 0:
                    board[index] += side
                    break
    return Position(board)


def _random_record(rng: random.Random) -> XgidRecord:
    length = rng.choice([0, 0, 0, 2, 3, 5, 7, 9, 11, 13, 15, 17, 21, 25, 64, rng.randint(2, 64)])
    on_roll = rng.randint(0, 1)
    if length:
        score = [rng.randrange(length), rng.randrange(length)]
        if rng.random() < 0.3:
            score[rng.randint(0, 1)] = length - 1
        # gnubg 1.07 crashes on dice with a cube far beyond what either side needs.
        top = (length - min(score)).bit_length()
        crawford = length - 1 in score and rng.random() < 0.5
    else:
        score = [rng.choice([0, 0, rng.randint(0, 500)]) for _ in "01"]
        top = 12
        crawford = False
    cube = 1 if crawford else 1 << min(top, rng.choice([0, 0, 1, 2, 3, rng.randint(0, top)]))
    owner = CubeOwner.CENTRED if cube == 1 else rng.choice(list(CubeOwner))
    can_double = not crawford and owner in (CubeOwner.CENTRED, on_roll) and cube < 4096
    kind = rng.choice(["roll", "roll", "wait", "double" if can_double else "wait"])
    match = MatchState(
        cube_value=cube,
        cube_owner=owner,
        dice_owner=on_roll,
        crawford=crawford,
        double_offered=kind == "double",
        dice=(rng.randint(1, 6), rng.randint(1, 6)) if kind == "roll" else None,
        match_length=length,
        score=(score[0], score[1]),
        jacoby=not length and rng.random() < 0.5,
    )
    return XgidRecord(
        _random_position(rng),
        match,
        beavers=not length and rng.random() < 0.5,
        max_cube=1 << rng.choice([10, 10, 8, rng.randint(0, 15)]),
    )


def _as_gnubg_imports(record: XgidRecord) -> tuple[str, str]:
    """The Position ID and Match ID gnubg 1.07 holds after ``set xgid``.

    It steps back from an offered double to the doubler's turn, and when the
    top player is on roll it swaps the players to show that one at the bottom.
    """
    state = record.match
    if state.double_offered:
        state = dataclasses.replace(state, double_offered=False, turn=state.dice_owner)
    if state.dice_owner == TOP:
        state = state.swap_players()
    return record.position.position_id(), state.match_id()


_GNUBG_SET_XGID = """
for xgid in payload:
    gnubg.command('new match 3')
    gnubg.command('set xgid ' + xgid)
    emit([gnubg.positionid(), gnubg.matchid()])
"""


def test_gnubg_sample_covers_every_kind() -> None:
    rng = random.Random(GNUBG_SEED)
    records = [_random_record(rng) for _ in range(GNUBG_CASES)]
    states = [r.match for r in records]
    assert {s.dice_owner for s in states} == {TOP, BOTTOM}
    assert sum(s.double_offered for s in states) >= 50
    assert any(s.crawford for s in states) and any(s.jacoby for s in states)
    assert any(r.beavers for r in records)
    assert {s.cube_owner for s in states} == set(CubeOwner)
    assert any(r.position.board[25] for r in records) and any(r.position.board[0] for r in records)


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_imports_nard_xgids_as_nard_reads_them() -> None:
    rng = random.Random(GNUBG_SEED)
    records = [_random_record(rng) for _ in range(GNUBG_CASES)]
    answers = run_in_gnubg(_GNUBG_SET_XGID, [r.to_xgid() for r in records])
    wrong = [
        (record.to_xgid(), tuple(answer), _as_gnubg_imports(record))
        for record, answer in zip(records, answers, strict=True)
        if tuple(answer) != _as_gnubg_imports(record)
    ]
    assert not wrong, f"{len(wrong)} of {len(records)} differ, e.g. {wrong[:3]}"


_GNUBG_REFUSES = """
for xgid in payload:
    gnubg.command('new match 3')
    before = gnubg.matchid()
    gnubg.command('set xgid ' + xgid)
    emit(gnubg.matchid() == before)
"""


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_refuses_what_nard_refuses_for_the_same_reason() -> None:
    """XGIDs that both reject: beavered/raccooned cubes, a 2**13 cube, bad rules fields."""
    refused = [
        _xgid(dice="B", length="0"),
        _xgid(dice="R", length="0"),
        _xgid(cube="13", dice="31"),
        _xgid(rules="2", dice="31"),
        _xgid(rules="4", length="0", dice="31"),
        _xgid()[:-3],
    ]
    for text in refused:
        with pytest.raises(InvalidXgidError):
            XgidRecord.from_xgid(text)
    assert run_in_gnubg(_GNUBG_REFUSES, refused) == [True] * len(refused)
