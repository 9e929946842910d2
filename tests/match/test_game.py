"""The game state machine: every action, its legality, and what it leaves behind."""

from __future__ import annotations

import pytest

from nard import Position
from nard.match import (
    Decision,
    Game,
    GameAction,
    GameOptions,
    GameResult,
    MatchStateError,
    ResultKind,
)
from nard.match.dice import FixedDice
from nard.notation.records import Action, ActionKind


def _snapshot(game: Game) -> tuple[object, ...]:
    return (
        game.decision,
        game.turn,
        game.on_roll,
        game.position,
        game.dice,
        game.cube_value,
        game.cube_owner,
        game.result,
        game.actions,
    )


def _refused(game: Game, action: str, *args: object) -> str:
    """Call ``action``; it must raise MatchStateError and leave the game unchanged."""
    before = _snapshot(game)
    with pytest.raises(MatchStateError) as info:
        getattr(game, action)(*args)
    assert _snapshot(game) == before
    return str(info.value)


# -- opening roll ------------------------------------------------------------


def test_higher_die_moves_first_with_both_numbers() -> None:
    game = Game()
    game.opening_roll((2, 5))
    assert (game.on_roll, game.turn, game.dice, game.decision) == (1, 1, (5, 2), Decision.PLAY)
    assert game.legal_actions() == {GameAction.PLAY, GameAction.RESIGN}


def test_equal_opening_dice_are_rolled_again() -> None:
    game = Game()
    game.opening_roll((4, 4))
    assert game.decision is Decision.OPENING_ROLL and game.cube_value == 1
    game.opening_roll((6, 1))
    assert game.on_roll == 0 and game.dice == (6, 1)


def test_a_dice_source_rolls_again_by_itself() -> None:
    game = Game(dice=FixedDice([(3, 3), (2, 2), (1, 6)]))
    game.opening_roll()
    assert game.on_roll == 1 and game.dice == (6, 1)


@pytest.mark.parametrize(("limit", "ties", "cube"), [(0, 2, 1), (1, 2, 2), (2, 2, 4), (3, 1, 2)])
def test_automatic_doubles_up_to_the_agreed_number(limit: int, ties: int, cube: int) -> None:
    game = Game(GameOptions(automatic_doubles=limit))
    for _ in range(ties):
        game.opening_roll((5, 5))
    game.opening_roll((3, 1))
    assert game.cube_value == cube
    assert game.cube_owner is None  # the cube stays in the middle


def test_opening_roll_refused_later_and_for_bad_dice() -> None:
    game = Game()
    assert "invalid dice" in _refused(game, "opening_roll", (0, 3))
    assert "no dice source" in _refused(game, "opening_roll")
    game.opening_roll((3, 1))
    assert "waiting for: play" in _refused(game, "opening_roll", (3, 1))


# -- rolling and playing -------------------------------------------------------


def test_play_by_text_then_the_other_side_is_on_roll() -> None:
    game = Game()
    game.opening_roll((3, 1))
    game.play("6/5 8/5")
    assert game.actions == (Action(0, ActionKind.MOVE, dice=(3, 1), play="8/5 6/5"),)
    assert game.on_roll == 1 and game.decision is Decision.ROLL
    assert game.position == Position.from_position_id("sGfwATDgc/ABMA")
    assert game.position_for(0) == game.position.flip()


def test_illegal_play_is_refused_and_changes_nothing() -> None:
    game = Game()
    game.opening_roll((3, 1))
    message = _refused(game, "play", "24/18")
    assert "cannot play" in message and "24/18" in message and "4HPwATDgc/ABMA" in message
    other = Position().legal_plays((6, 5))[0]
    assert "not a legal play" in _refused(game, "play", other)
    assert "InvalidNotation" not in _refused(game, "play", "hello")


def test_roll_that_cannot_be_played_passes_the_turn() -> None:
    closed = Position.from_points({25: 1, 6: 14}, {p: 2 for p in range(1, 7)} | {12: 3})
    game = Game.from_position(closed, on_roll=1)
    game.roll((6, 4))
    assert game.actions == (Action(1, ActionKind.MOVE, dice=(6, 4), play=""),)
    assert game.on_roll == 0 and game.decision is Decision.ROLL


def test_no_rolling_twice_or_playing_before_rolling() -> None:
    game = Game()
    game.opening_roll((3, 1))
    assert "waiting for: play" in _refused(game, "roll", (2, 2))
    game.play("8/5 6/5")
    assert "waiting for: roll" in _refused(game, "play", "24/23 24/21")


# -- the cube ------------------------------------------------------------------


def _rolled_game() -> Game:
    game = Game()
    game.opening_roll((3, 1))
    game.play("8/5 6/5")
    return game


def test_double_take_and_the_taker_owns_the_cube() -> None:
    game = _rolled_game()
    game.double()
    assert (game.turn, game.decision) == (0, Decision.TAKE_OR_PASS)
    assert game.legal_actions() == {GameAction.TAKE, GameAction.PASS}
    game.take()
    assert (game.cube_value, game.cube_owner, game.turn, game.decision) == (2, 0, 1, Decision.ROLL)
    assert "player 0 owns the cube" in _refused(game, "double")
    game.roll((2, 1))
    game.play("13/11 6/5")
    game.double()  # the owner may redouble
    game.take()
    assert (game.cube_value, game.cube_owner) == (4, 1)


def test_pass_ends_the_game_at_the_stake_before_the_offer() -> None:
    game = _rolled_game()
    game.double()
    game.pass_double()
    assert game.result == GameResult(1, ResultKind.PASS, 1, 1)
    assert game.decision is Decision.GAME_OVER and game.legal_actions() == set()
    assert "waiting for: game over" in _refused(game, "roll", (3, 1))


def test_no_double_after_rolling_or_without_a_cube() -> None:
    game = Game()
    game.opening_roll((3, 1))
    assert "waiting for: play" in _refused(game, "double")
    crawford = Game(GameOptions(cube=False, crawford=True))
    crawford.opening_roll((3, 1))
    crawford.play("8/5 6/5")
    assert "Crawford game" in _refused(crawford, "double")
    assert GameAction.DOUBLE not in crawford.legal_actions()


def test_a_blocked_side_may_double() -> None:
    closed = Position.from_points({25: 1, 6: 14}, {p: 2 for p in range(1, 7)} | {12: 3})
    game = Game.from_position(closed, on_roll=1)
    assert GameAction.DOUBLE in game.legal_actions()
    game.double()
    game.take()
    assert game.cube_owner == 0


def test_cube_cap() -> None:
    game = Game.from_position(Position(), 0, cube_value=64, cube_owner=0)
    assert "limit (64)" in _refused(game, "double")
    uncapped = Game.from_position(
        Position(), 0, cube_value=64, cube_owner=0, options=GameOptions(cube_cap=None)
    )
    uncapped.double()
    uncapped.take()
    assert uncapped.cube_value == 128


def test_beaver_and_raccoon() -> None:
    options = GameOptions(beavers=True, raccoons=True)
    game = Game.from_position(Position(), 0, options=options)
    game.double()
    assert GameAction.BEAVER in game.legal_actions()
    game.beaver()
    assert (game.cube_value, game.cube_owner, game.turn) == (4, 1, 0)
    assert game.decision is Decision.RACCOON_OR_ROLL
    game.raccoon()
    # As in gnubg, the cube stays with the side that was doubled.
    assert (game.cube_value, game.cube_owner, game.turn) == (8, 1, 1)
    assert game.decision in (Decision.ACCEPT_OR_BEAVER,)  # mypy narrows "is"
    assert game.legal_actions() == {GameAction.TAKE}  # two animals: the default limit
    assert "no more than 2" in _refused(game, "beaver")
    game.take()
    assert (game.turn, game.decision, game.cube_value) == (0, Decision.ROLL, 8)
    kinds = [a.kind for a in game.actions]
    assert kinds == [ActionKind.DOUBLE, ActionKind.BEAVER, ActionKind.RACCOON, ActionKind.TAKE]
    assert [a.cube for a in game.actions] == [2, 4, 8, None]


def test_longer_chains_of_animals_when_agreed() -> None:
    """gnubg's ``set beavers 4``: beaver, raccoon, beaver, raccoon after one double."""
    options = GameOptions(beavers=True, raccoons=True, animals=4, cube_cap=None)
    game = Game.from_position(Position(), 0, options=options)
    game.double()
    game.beaver()
    game.raccoon()
    game.beaver()
    game.raccoon()
    assert (game.cube_value, game.cube_owner) == (32, 1)
    assert game.legal_actions() == {GameAction.TAKE}
    game.take()
    assert game.decision is Decision.ROLL and game.on_roll == 0


def test_beaver_then_roll_declines_the_raccoon() -> None:
    game = Game.from_position(Position(), 0, options=GameOptions(beavers=True))
    game.double()
    game.beaver()
    assert GameAction.RACCOON not in game.legal_actions()
    assert "raccoons are not allowed" in _refused(game, "raccoon")
    game.roll((3, 1))
    assert game.decision is Decision.PLAY and game.cube_value == 4


def test_no_beaver_unless_agreed() -> None:
    game = _rolled_game()
    game.double()
    assert "beavers are not allowed" in _refused(game, "beaver")


# -- resignations ----------------------------------------------------------------


@pytest.mark.parametrize("level", [1, 2, 3])
def test_accepted_resignation_scores_its_value_times_the_cube(level: int) -> None:
    game = Game.from_position(Position(), 1, cube_value=2, cube_owner=0)
    game.resign(level)
    assert (game.turn, game.decision) == (0, Decision.ANSWER_RESIGNATION)
    game.accept()
    assert game.result == GameResult(0, ResultKind.RESIGN, 2, 2 * level)


def test_rejected_resignation_resumes_play() -> None:
    game = Game()
    game.opening_roll((3, 1))
    game.resign(2)
    game.reject()
    assert (game.turn, game.decision, game.dice) == (0, Decision.PLAY, (3, 1))
    assert "1, 2 or 3" in _refused(game, "resign", 4)


# -- the end of a game and its score -----------------------------------------------

# The side on roll (player 0) bears off its last checker with any roll; the
# opponent's checkers make the result single, gammon or backgammon.
_LAST = {1: 1}
_LOSERS = {
    ResultKind.SINGLE: {6: 14},  # 1 borne off
    ResultKind.GAMMON: {6: 15},
    ResultKind.BACKGAMMON: {6: 14, 20: 1},  # one in the winner's home board
}


@pytest.mark.parametrize(
    ("kind", "cube", "turned", "jacoby", "backgammon", "points"),
    [
        (ResultKind.SINGLE, 1, False, False, 3, 1),
        (ResultKind.GAMMON, 1, False, False, 3, 2),
        (ResultKind.BACKGAMMON, 1, False, False, 3, 3),
        (ResultKind.BACKGAMMON, 1, False, False, 2, 2),
        (ResultKind.SINGLE, 4, True, False, 3, 4),
        (ResultKind.GAMMON, 4, True, False, 3, 8),
        (ResultKind.BACKGAMMON, 4, True, False, 3, 12),
        (ResultKind.BACKGAMMON, 8, True, False, 2, 16),
        # Jacoby: with the cube never turned, gammons and backgammons are singles.
        (ResultKind.GAMMON, 1, False, True, 3, 1),
        (ResultKind.BACKGAMMON, 1, False, True, 3, 1),
        (ResultKind.GAMMON, 2, True, True, 3, 4),
        (ResultKind.BACKGAMMON, 2, True, True, 3, 6),
        (ResultKind.SINGLE, 2, True, True, 3, 2),
    ],
)
def test_scoring_table(
    kind: ResultKind, cube: int, turned: bool, jacoby: bool, backgammon: int, points: int
) -> None:
    pos = Position.from_points(_LAST, _LOSERS[kind])
    options = GameOptions(jacoby=jacoby, backgammon=backgammon)
    game = Game.from_position(
        pos, 0, cube_value=cube, cube_owner=1 if turned else None, options=options
    )
    game.roll((6, 5))
    game.play("1/off")
    assert game.result == GameResult(0, kind, cube, points)
    assert game.is_over and game.decision is Decision.GAME_OVER


def test_jacoby_counts_an_automatic_double_as_not_turned() -> None:
    options = GameOptions(jacoby=True, automatic_doubles=1)
    game = Game(options)
    game.opening_roll((2, 2))
    game.opening_roll((6, 5))
    assert game.cube_value == 2
    # Jump to a gammon: not possible from here in one move, so check the flag
    # through a set-up game with the same cube history instead.
    setup = Game.from_position(
        Position.from_points(_LAST, _LOSERS[ResultKind.GAMMON]), 0, cube_value=2, options=options
    )
    setup.roll((3, 2))
    setup.play("1/off")
    assert setup.result == GameResult(0, ResultKind.GAMMON, 2, 2)


@pytest.mark.parametrize("kind", [ResultKind.SINGLE, ResultKind.GAMMON, ResultKind.BACKGAMMON])
@pytest.mark.parametrize("cube_history", ["centred", "doubled", "beavered", "automatic"])
@pytest.mark.parametrize("jacoby", [False, True])
@pytest.mark.parametrize("backgammon", [2, 3])
def test_scoring_by_cube_history(
    kind: ResultKind, cube_history: str, jacoby: bool, backgammon: int
) -> None:
    """Every combination of result x how the cube got its value x Jacoby x the
    backgammon count, reached through real cube actions."""
    options = GameOptions(jacoby=jacoby, backgammon=backgammon, beavers=True, automatic_doubles=1)
    pos = Position.from_points(_LAST, _LOSERS[kind])
    if cube_history == "automatic":
        # An automatic double on the opening roll: value 2, never turned.
        game = Game(options)
        game.opening_roll((4, 4))
        cube, turned = 2, False
        setup = Game.from_position(pos, 0, cube_value=2, options=options)
        assert game.cube_value == 2 and game.cube_owner is None
        game = setup
    else:
        # Player 1 (the loser-to-be) is on roll first, so that it can double.
        game = Game.from_position(pos.flip(), 1, options=options)
        cube, turned = 1, False
        if cube_history == "doubled":
            game.double()
            game.take()
            cube, turned = 2, True
        elif cube_history == "beavered":
            game.double()
            game.beaver()  # player 0 beavers; player 1 declines to raccoon
            cube, turned = 4, True
        game.roll((1, 1))
        # Player 1 moves only its 6-point checkers (a back checker stays back).
        game.play(next(p for p in game.legal_plays() if all(m.from_point == 6 for m in p.moves)))
    assert game.on_roll == 0
    game.roll((6, 5))
    game.play("1/off")
    value = {ResultKind.SINGLE: 1, ResultKind.GAMMON: 2, ResultKind.BACKGAMMON: backgammon}[kind]
    if jacoby and not turned:
        value = 1
    assert game.result == GameResult(0, kind, cube, value * cube)
