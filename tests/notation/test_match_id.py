"""GNU Backgammon's Match ID: decoding, encoding and gnubg as the oracle."""

from __future__ import annotations

import base64
import dataclasses
import random
from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nard import InvalidMatchIdError
from nard.notation import (
    CubeOwner,
    GameState,
    InvalidMatchStateError,
    MatchState,
    Resignation,
)
from tests.notation.gnubg_ids import needs_gnubg, run_in_gnubg
from tests.notation.strategies import match_states

# -- known IDs ------------------------------------------------------------------


def test_manual_example() -> None:
    # gnubg manual, "A technical description of the Match ID".
    state = MatchState.from_match_id("QYkqASAAIAAA")
    assert state == MatchState(
        cube_value=2,
        cube_owner=CubeOwner.PLAYER_0,
        dice_owner=1,
        crawford=False,
        game_state=GameState.PLAYING,
        turn=1,
        double_offered=False,
        resignation=Resignation.NONE,
        dice=(5, 2),
        match_length=9,
        score=(2, 4),
        jacoby=True,  # the manual predates the Jacoby bit: it is 0 there
    )
    assert state.match_id() == "QYkqASAAIAAA"


@pytest.mark.parametrize(
    ("match_id", "expected"),
    [
        # gnubg 1.07's own IDs, from the states named.
        ("cAkgAQAAAAAE", MatchState(dice_owner=1, match_length=9)),
        (
            "MBngABAAEAAE",
            MatchState(double_offered=True, match_length=7, score=(1, 2)),
        ),
        (
            "cATgABAAGAAE",
            MatchState(
                dice_owner=1,
                turn=0,
                game_state=GameState.DROPPED,
                match_length=7,
                score=(1, 3),
            ),
        ),
        (
            "cMPlACAAAAAE",
            MatchState(
                dice_owner=1,
                turn=0,
                game_state=GameState.RESIGNED,
                resignation=Resignation.GAMMON,
                dice=(3, 1),
                match_length=7,
                score=(2, 0),
            ),
        ),
        ("cIkOAAAAAAAA", MatchState(dice_owner=1, dice=(5, 3), jacoby=True)),
        ("XAkHAAAAAAAA", MatchState(4096, CubeOwner.PLAYER_1, 1, dice=(6, 1), jacoby=True)),
        # A match won by more points than were needed (0-14 in a 5-point match).
        (
            "AmugAAAAcAAE",
            MatchState(
                cube_value=4,
                cube_owner=CubeOwner.PLAYER_0,
                turn=1,
                game_state=GameState.RESIGNED,
                resignation=Resignation.BACKGAMMON,
                match_length=5,
                score=(0, 14),
            ),
        ),
    ],
)
def test_gnubg_ids(match_id: str, expected: MatchState) -> None:
    assert MatchState.from_match_id(match_id) == expected
    assert expected.match_id() == match_id


def test_defaults_are_player_0_to_roll_in_money_play() -> None:
    state = MatchState()
    assert (state.cube_value, state.cube_owner, state.turn, state.dice) == (
        1,
        CubeOwner.CENTRED,
        0,
        None,
    )
    assert state.is_money()
    assert state.match_id() == "MAEAAAAAAAAE"


def test_turn_defaults_to_who_must_decide() -> None:
    assert MatchState(dice_owner=1).turn == 1
    assert MatchState(dice_owner=1, double_offered=True).turn == 0


def test_a_pending_beaver_is_the_doublers_turn_with_the_cube_on_the_other_side() -> None:
    # gnubg's ID after player 1 beavers player 0's double (money, Jacoby off).
    state = MatchState.from_match_id("EREAAAAAAAAE")
    assert state.beaver_offered and not MatchState(double_offered=True).beaver_offered
    assert (state.cube_value, state.cube_owner, state.dice_owner, state.turn) == (
        2,
        CubeOwner.PLAYER_1,
        0,
        0,
    )
    assert state.match_id() == "EREAAAAAAAAE"
    assert state.swap_players().beaver_offered
    # Not in match play (no beavers), nor with the cube anywhere else.
    with pytest.raises(InvalidMatchStateError, match="must have the turn"):
        dataclasses.replace(state, match_length=5)
    with pytest.raises(InvalidMatchStateError, match="must have the turn"):
        dataclasses.replace(state, cube_owner=CubeOwner.CENTRED)


def test_dice_are_kept_higher_first() -> None:
    assert MatchState(dice=(2, 5)).dice == (5, 2)
    assert MatchState(dice=(2, 5)) == MatchState(dice=(5, 2))
    # An ID with the lower die first (gnubg never writes one, but reads it) too.
    assert MatchState.from_match_id(_id(die1=2, die2=5)).dice == (5, 2)


def test_enum_fields_accept_their_values() -> None:
    state = MatchState(cube_owner=1, game_state=4, resignation=2)  # type: ignore[arg-type]
    assert state.cube_owner is CubeOwner.PLAYER_1
    assert state.game_state is GameState.DROPPED
    assert state.resignation is Resignation.GAMMON


def test_swap_players() -> None:
    state = MatchState.from_match_id("QYkqASAAIAAA")
    swapped = state.swap_players()
    assert (swapped.score, swapped.cube_owner, swapped.dice_owner, swapped.turn) == (
        (4, 2),
        CubeOwner.PLAYER_1,
        0,
        0,
    )
    assert swapped.swap_players() == state
    assert MatchState().swap_players().cube_owner is CubeOwner.CENTRED


def test_is_a_frozen_hashable_value() -> None:
    state = MatchState()
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.cube_value = 2  # type: ignore[misc]
    assert len({MatchState(), MatchState(), MatchState(cube_value=2)}) == 2


def test_whitespace_around_the_id_is_ignored() -> None:
    assert MatchState.from_match_id("  QYkqASAAIAAA\n").match_id() == "QYkqASAAIAAA"


# -- properties -------------------------------------------------------------------


@given(match_states())
def test_round_trip_from_state(state: MatchState) -> None:
    text = state.match_id()
    assert len(text) == 12
    assert MatchState.from_match_id(text) == state
    assert MatchState.from_match_id(text).match_id() == text


@given(st.binary(min_size=9, max_size=9))
def test_any_key_decodes_or_fails_cleanly(key: bytes) -> None:
    text = base64.b64encode(key).decode()
    try:
        state = MatchState.from_match_id(text)
    except InvalidMatchIdError as exc:
        assert repr(text) in str(exc)
        return
    again = state.match_id()
    assert MatchState.from_match_id(again) == state
    number = int.from_bytes(key, "little")
    if (number >> 15) & 7 >= (number >> 18) & 7:  # dice already higher first
        assert again == text


# -- malformed IDs ------------------------------------------------------------------


def _id(**fields: int) -> str:
    """A Match ID built field by field, bypassing MatchState's checks."""
    layout = {
        "cube": (0, 4),
        "owner": (4, 2),
        "move": (6, 1),
        "crawford": (7, 1),
        "state": (8, 3),
        "turn": (11, 1),
        "double": (12, 1),
        "resign": (13, 2),
        "die1": (15, 3),
        "die2": (18, 3),
        "length": (21, 15),
        "score0": (36, 15),
        "score1": (51, 15),
        "nojacoby": (66, 1),
        "reserved": (67, 5),
    }
    values = {"owner": 3, "state": 1, "nojacoby": 1} | fields
    key = 0
    for name, value in values.items():
        offset, width = layout[name]
        assert 0 <= value < 1 << width
        key |= value << offset
    return base64.b64encode(key.to_bytes(9, "little")).decode()


def test_field_builder_matches_the_encoder() -> None:
    assert _id(length=9, score0=2, score1=4, cube=1, owner=0, move=1, turn=1, die1=5, die2=2,
               nojacoby=0) == "QYkqASAAIAAA"  # fmt: skip


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "expected 12 characters, got 0"),
        ("QYkqASAAIAA", "expected 12 characters, got 11"),
        ("QYkqASAAIAAAA", "expected 12 characters, got 13"),
        ("QYkqASAAIA==", "characters '=' are not base64"),
        ("QYkq ASAAIAA", "characters ' ' are not base64"),
        ("QYkqASAAIAA!", "characters '!' are not base64"),
        ("QYkqASAAIAAé", "characters 'é' are not base64"),
        (_id(owner=2), "cube owner field is 2"),
        (_id(state=5), "game state field is 5"),
        (_id(state=7), "game state field is 7"),
        (_id(die1=7, die2=1), "die 7 is not 1-6"),
        (_id(die1=3, die2=7), "die 7 is not 1-6"),
        (_id(die1=0, die2=3), "one die is 0"),
        (_id(die1=4, die2=0), "one die is 0"),
        (_id(cube=13), "cube value 2**13 is above 4096"),
        (_id(cube=15, owner=0), "cube value 2**15 is above 4096"),
        (_id(length=7, score0=8), "player 0's score 8 is above the match length 7"),
        (_id(length=7, score1=9, state=0), "player 1's score 9 is above the match length 7"),
        (_id(length=5, score0=5, score1=6, state=2), "both players have reached"),
        (_id(length=65), "match length 65 is not 0 (money) to 64"),
        (_id(length=32767), "match length 32767"),
        (_id(crawford=1), "money play has no Crawford game"),
        (_id(crawford=1, length=7, score0=4, score1=5), "needs a player 1 point away"),
        (_id(double=1, move=0, turn=1, die1=3, die2=1), "the dice (3, 1) are already rolled"),
        (_id(double=1, move=1, turn=1), "player 0 must have the turn"),
        (_id(reserved=1), "reserved bits 67-71 are set"),
        (_id(reserved=16), "reserved bits 67-71 are set"),
    ],
)
def test_malformed_ids(text: str, problem: str) -> None:
    with pytest.raises(InvalidMatchIdError) as info:
        MatchState.from_match_id(text)
    message = str(info.value)
    assert message.startswith(f"invalid Match ID {text!r}: ")
    assert problem in message


@pytest.mark.parametrize("value", [None, 12, b"QYkqASAAIAAA"])
def test_non_string_ids(value: object) -> None:
    with pytest.raises(InvalidMatchIdError, match="must be a string"):
        MatchState.from_match_id(value)  # type: ignore[arg-type]


def test_errors_are_value_errors() -> None:
    with pytest.raises(ValueError):
        MatchState.from_match_id("nonsense")
    with pytest.raises(ValueError):
        MatchState(cube_value=3)


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"cube_value": 3}, "cube value 3 is not a power of two"),
        ({"cube_value": 0}, "cube value 0"),
        ({"cube_value": 8192}, "cube value 8192"),
        ({"cube_value": 2.0}, "cube value 2.0"),
        ({"cube_value": True}, "cube value True"),
        ({"cube_owner": 2}, "cube owner 2 is not one of -1 (CENTRED), 0 (PLAYER_0), 1 (PLAYER_1)"),
        ({"cube_owner": "centred"}, "cube owner 'centred'"),
        ({"game_state": 5}, "game state 5"),
        ({"resignation": 4}, "resignation 4"),
        ({"dice_owner": 2}, "dice_owner must be player 0 or 1, not 2"),
        ({"dice_owner": True}, "dice_owner must be player 0 or 1, not True"),
        ({"turn": -2}, "turn must be player 0 or 1, not -2"),
        ({"crawford": 1}, "crawford must be True or False, not 1"),
        ({"jacoby": "yes"}, "jacoby must be True or False"),
        ({"double_offered": None}, "double_offered must be True or False"),
        ({"dice": (0, 3)}, "die 0 is not 1-6"),
        ({"dice": (3, 7)}, "die 7 is not 1-6"),
        ({"dice": (3,)}, "must be None or a pair of dice"),
        ({"dice": "31"}, "must be None or a pair of dice"),
        ({"match_length": -1}, "match length -1"),
        ({"match_length": 65}, "match length 65"),
        ({"score": (1, 2, 3)}, "must be a pair"),
        ({"score": (-1, 0)}, "player 0's score -1"),
        ({"score": (0, 32768)}, "player 1's score 32768"),
        ({"match_length": 3, "score": (4, 0)}, "player 0's score 4 is above the match length 3"),
        ({"crawford": True}, "money play has no Crawford game"),
        ({"crawford": True, "match_length": 5, "score": (2, 2)}, "needs a player 1 point away"),
        ({"double_offered": True, "dice": (6, 6)}, "already rolled"),
        ({"double_offered": True, "turn": 0}, "player 1 must have the turn"),
    ],
)
def test_invalid_states(fields: dict[str, object], problem: str) -> None:
    with pytest.raises(InvalidMatchStateError) as info:
        MatchState(**fields)  # type: ignore[arg-type]
    assert problem in str(info.value)


def test_score_may_pass_the_match_length_once_the_match_is_won() -> None:
    for state in (GameState.OVER, GameState.RESIGNED, GameState.DROPPED):
        won = MatchState(game_state=state, match_length=5, score=(3, 9))
        assert MatchState.from_match_id(won.match_id()) == won
    with pytest.raises(InvalidMatchStateError, match="above the match length"):
        MatchState(game_state=GameState.PLAYING, match_length=5, score=(3, 9))


# -- gnubg as the oracle --------------------------------------------------------------

GNUBG_SEED = 20261207
GNUBG_CASES = 600


@dataclass(frozen=True)
class _Scenario:
    """Commands that bring gnubg to ``expected``."""

    commands: tuple[str, ...]
    expected: MatchState


def _end_game(
    state: MatchState, winner: int, points: int, how: GameState, **changes: object
) -> MatchState:
    """The state gnubg records when ``winner`` takes ``points`` and the game ends."""
    score = list(state.score)
    score[winner] += points
    length = state.match_length
    crawford = False
    if length and not state.crawford:
        post_crawford = length - 1 in state.score
        crawford = not post_crawford and score[winner] == length - 1
    return dataclasses.replace(
        state,
        game_state=how,
        score=(score[0], score[1]),
        crawford=crawford,
        **changes,  # type: ignore[arg-type]
    )


def _scenario(rng: random.Random) -> _Scenario:
    commands: list[str] = []
    length = rng.choice([0, 0, 0, 1, 3, 5, 7, 9, 11, 13, 15, 17, 21, 25, 64, rng.randint(1, 64)])
    if length:
        jacoby = False
        commands.append(f"new match {length}")
        score = (rng.randrange(length), rng.randrange(length))
        if rng.random() < 0.3:
            score = rng.choice([(length - 1, score[1]), (score[0], length - 1)])
        commands.append(f"set score {score[0]} {score[1]}")
        crawford = False
        if length - 1 in score:
            crawford = rng.random() < 0.5
            commands.append(f"set crawford {'on' if crawford else 'off'}")
    else:
        jacoby = rng.random() < 0.5
        commands += [f"set jacoby {'on' if jacoby else 'off'}", "new session"]
        score = (rng.choice([0, rng.randint(0, 99)]), rng.choice([0, rng.randint(0, 99)]))
        commands.append(f"set score {score[0]} {score[1]}")
        crawford = False
    player = rng.randint(0, 1)
    action = rng.choice(["roll", "roll", "wait", "double", "double", "resign", "bear off"])
    cube, owner = 1, CubeOwner.CENTRED
    if not crawford:  # gnubg disables the cube in the Crawford game
        # gnubg 1.07 crashes on `set dice` with a cube far beyond the points
        # either player needs (a 128-cube at 9-away/49-away): keep cubes below
        # twice the larger away score.
        top = 12 if not length else (length - min(score)).bit_length()
        cube = 1 << min(top, rng.choice([0, 0, 1, 1, 2, 3, rng.randint(0, top)]))
        owners = [CubeOwner.CENTRED, CubeOwner(player)]
        owner = rng.choice(owners if action == "double" else list(CubeOwner))
        commands.append(f"set cube value {cube}")
        commands.append(
            "set cube centre" if owner is CubeOwner.CENTRED else f"set cube owner {int(owner)}"
        )
    commands.append(f"set turn {player}")
    state = MatchState(
        cube_value=cube,
        cube_owner=owner,
        dice_owner=player,
        crawford=crawford,
        match_length=length,
        score=score,
        jacoby=jacoby,
    )
    can_double = (
        not crawford
        and owner in (CubeOwner.CENTRED, player)
        and cube <= 64
        and (not length or cube < length - score[player])
    )
    if action == "double" and can_double:
        commands.append("double")
        state = dataclasses.replace(state, double_offered=True, turn=1 - player)
        answer = rng.choice(["none", "take", "drop"])
        if answer == "take":
            commands.append("take")
            state = dataclasses.replace(
                state,
                double_offered=False,
                turn=player,
                cube_value=2 * cube,
                cube_owner=CubeOwner(1 - player),
            )
        elif answer == "drop":
            commands.append("drop")
            state = _end_game(state, player, cube, GameState.DROPPED, double_offered=False)
    elif action == "resign":
        if rng.random() < 0.5:
            roll = (rng.randint(1, 6), rng.randint(1, 6))
            commands.append(f"set dice {roll[0]} {roll[1]}")
            state = dataclasses.replace(state, dice=roll)
        resignation = rng.choice(list(Resignation)[1:])
        commands.append(f"resign {['', 'normal', 'gammon', 'backgammon'][resignation]}")
        state = dataclasses.replace(state, resignation=resignation, turn=1 - player)
        answer = rng.choice(["none", "accept", "reject"])
        if answer == "accept":
            commands.append("accept")
            state = _end_game(state, 1 - player, resignation * cube, GameState.RESIGNED)
        elif answer == "reject":
            commands.append("reject")
            state = dataclasses.replace(state, resignation=Resignation.NONE, turn=player)
    elif action == "bear off":
        # The player on roll bears off its last checker; the opponent has borne
        # off some checkers (a single game) or none (a gammon).
        gammon = rng.random() < 0.5
        board = "4P8PAAABAAAAAA" if gammon else "IAAABAAAAAAAAA"
        commands += [f"set board {board}", "set dice 2 1", "move 1/off"]
        # The Jacoby rule: no gammons in money play before the cube is turned.
        if gammon and not (jacoby and owner is CubeOwner.CENTRED):
            cube *= 2
        state = _end_game(
            state, player, cube, GameState.OVER, dice_owner=1 - player, turn=1 - player
        )
    elif action == "roll":
        roll = (rng.randint(1, 6), rng.randint(1, 6))
        commands.append(f"set dice {roll[0]} {roll[1]}")
        state = dataclasses.replace(state, dice=roll)
    return _Scenario(tuple(commands), state)


_GNUBG_SCENARIOS = """
for commands in payload:
    for command in commands:
        gnubg.command(command)
    emit(gnubg.matchid())
"""


def test_scenarios_cover_every_kind() -> None:
    rng = random.Random(GNUBG_SEED)
    states = [_scenario(rng).expected for _ in range(GNUBG_CASES)]
    assert {s.game_state for s in states} == set(GameState) - {GameState.NONE}
    assert any(s.double_offered for s in states)
    assert any(s.resignation and s.game_state is GameState.PLAYING for s in states)
    assert any(s.crawford for s in states)
    assert any(s.is_money() and s.jacoby for s in states)
    assert any(s.match_length and max(s.score) > s.match_length for s in states)


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_ids_decode_to_the_states_gnubg_was_given() -> None:
    """gnubg plays out each scenario; nard must read its Match ID as the state we set up."""
    rng = random.Random(GNUBG_SEED)
    scenarios = [_scenario(rng) for _ in range(GNUBG_CASES)]
    answers = run_in_gnubg(_GNUBG_SCENARIOS, [list(s.commands) for s in scenarios])
    assert len(answers) == len(scenarios)
    wrong = []
    for scenario, match_id in zip(scenarios, answers, strict=True):
        decoded = MatchState.from_match_id(match_id)
        if decoded != scenario.expected or scenario.expected.match_id() != match_id:
            wrong.append((scenario.commands, match_id, decoded, scenario.expected))
    assert not wrong, f"{len(wrong)} of {len(scenarios)} differ, e.g. {wrong[:3]}"


def _settable_state(rng: random.Random) -> MatchState:
    """A random state that gnubg's ``set matchid`` keeps exactly as it is.

    gnubg rebuilds the state through its own commands, so it steps back from a
    pending double, drops a pending resignation (and the turn that goes with
    it) in a game in play, cannot roll dice or turn the cube once a game has
    ended or in the Crawford game, and clears the Crawford flag of a 1-point
    match.
    """
    length = rng.choice(
        [0, 0, 1, 2, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 25, 64, rng.randint(1, 64)]
    )
    state = rng.choice(
        [GameState.PLAYING] * 5 + [GameState.OVER, GameState.RESIGNED, GameState.DROPPED]
    )
    if length:
        score = [rng.randrange(length), rng.randint(0, length)]
        if rng.random() < 0.3:
            score[0] = length - 1
        rng.shuffle(score)
        crawford = length > 1 and length - 1 in score and rng.random() < 0.5
    else:
        score = [rng.choice([0, rng.randint(0, 200), rng.randint(0, 32767)]) for _ in "01"]
        crawford = False
    player = rng.randint(0, 1)
    playing = state is GameState.PLAYING
    cube = 1 << rng.choice([0, 0, 1, 2, 3, rng.randint(0, 12)]) if playing and not crawford else 1
    return MatchState(
        cube_value=cube,
        cube_owner=rng.choice(list(CubeOwner)) if playing else CubeOwner.CENTRED,
        dice_owner=player,
        crawford=crawford,
        game_state=state,
        turn=player if playing else rng.randint(0, 1),
        resignation=(
            rng.choice(list(Resignation)) if state is GameState.RESIGNED else Resignation.NONE
        ),
        dice=(rng.randint(1, 6), rng.randint(1, 6)) if playing and rng.random() < 0.7 else None,
        match_length=length,
        score=(score[0], score[1]),
        jacoby=rng.random() < 0.5,
    )


_GNUBG_SET_MATCH_ID = """
for match_id in payload:
    gnubg.command('new match 3')
    gnubg.command('set matchid ' + match_id)
    emit(gnubg.matchid())
"""


@pytest.mark.gnubg
@needs_gnubg
def test_gnubg_reads_nard_ids_back_unchanged() -> None:
    """gnubg takes each of nard's Match IDs and writes the very same ID again."""
    rng = random.Random(GNUBG_SEED + 1)
    states = [_settable_state(rng) for _ in range(GNUBG_CASES)]
    ids = [state.match_id() for state in states]
    answers = run_in_gnubg(_GNUBG_SET_MATCH_ID, ids)
    wrong = [(s, mine, theirs) for s, mine, theirs in zip(states, ids, answers, strict=True)
             if mine != theirs]  # fmt: skip
    assert not wrong, f"{len(wrong)} of {len(ids)} differ, e.g. {wrong[:3]}"
