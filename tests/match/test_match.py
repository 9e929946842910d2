"""Matches and money sessions: the score, Crawford, post-Crawford, Holland, the end."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nard import CHECKERS
from nard.match import Decision, Game, GameAction, GameOptions, MatchStateError
from nard.match.dice import SeededDice
from nard.match.match import Match, MatchRules, MoneyRules, Session
from tests.match.random_play import random_step


def _win(games: Match | Session, winner: int, points: int) -> Game:
    """Play a game that ``winner`` wins by the loser resigning ``points`` (1-3)."""
    game = games.new_game()
    loser = 1 - winner
    game.opening_roll((6, 1) if loser == 0 else (1, 6))
    game.resign(points)
    game.accept()
    return game


def test_match_ends_when_a_player_reaches_the_length() -> None:
    match = Match(3)
    _win(match, 0, 2)
    assert match.score == (2, 0) and not match.is_over and match.winner is None
    _win(match, 1, 1)
    _win(match, 0, 3)
    assert match.score == (5, 1) and match.is_over and match.winner == 0
    with pytest.raises(MatchStateError, match="the match is over"):
        match.new_game()


def test_a_game_must_end_before_the_next_starts() -> None:
    match = Match(5)
    match.new_game()
    with pytest.raises(MatchStateError, match="game 1 is not over"):
        match.new_game()


def test_crawford_game_is_the_first_game_at_one_away() -> None:
    match = Match(5)
    _win(match, 0, 2)
    _win(match, 0, 2)  # 4-0: player 0 is one away
    assert match.is_crawford_game()
    crawford = match.new_game()
    assert crawford.options.crawford and not crawford.options.cube
    crawford.opening_roll((6, 1))
    crawford.play("13/7 8/7")
    assert GameAction.DOUBLE not in crawford.legal_actions()
    crawford.resign(1)  # player 1, on roll, resigns
    crawford.accept()
    assert match.score == (5, 0) and match.is_over


def test_post_crawford_games_have_the_cube_again() -> None:
    match = Match(5)
    _win(match, 0, 3)
    _win(match, 0, 1)  # 4-0
    _win(match, 1, 1)  # the Crawford game: 4-1
    assert not match.is_crawford_game()
    game = match.new_game()
    assert game.options.cube and not game.options.crawford
    assert game.options.holland_player is None


def test_no_crawford_game_when_the_rule_is_off_or_when_one_away_is_skipped() -> None:
    off = Match(3, MatchRules(crawford=False))
    _win(off, 0, 2)
    assert not off.is_crawford_game()
    jump = Match(5)
    _win(jump, 1, 3)  # 0-3
    _win(jump, 0, 3)  # 3-3: nobody one away
    assert not jump.is_crawford_game()
    _win(jump, 0, 1)  # 4-3: the first time one away
    assert jump.is_crawford_game()


def test_both_one_away_after_the_crawford_game() -> None:
    match = Match(3)
    _win(match, 0, 2)  # 2-0: Crawford next
    _win(match, 1, 2)  # Crawford game: 2-2
    assert not match.is_crawford_game()


def test_holland_rule_restricts_the_trailer_post_crawford() -> None:
    match = Match(5, MatchRules(holland=True))
    _win(match, 0, 3)
    _win(match, 0, 1)  # 4-0
    _win(match, 1, 1)  # Crawford: 4-1
    game = match.new_game()
    assert game.options.holland_player == 1
    game.opening_roll((1, 6))  # player 1 starts: 1 roll for player 1
    game.play("13/7 8/7")
    game.roll((3, 1))  # player 0: 1 roll
    game.play("8/5 6/5")
    with pytest.raises(MatchStateError, match="Holland rule"):
        game.double()
    game.roll((2, 1))
    game.play("13/11 6/5")
    game.roll((4, 2))
    game.play("8/4 6/4")  # both sides have now played two rolls
    assert GameAction.DOUBLE in game.legal_actions()


def test_session_keeps_running_totals_and_its_options() -> None:
    rules = MoneyRules(jacoby=True, beavers=True, raccoons=True, automatic_doubles=1)
    session = Session(rules)
    _win(session, 1, 2)
    _win(session, 1, 1)
    _win(session, 0, 3)
    assert session.score == (3, 3)
    assert [r.points for r in session.results] == [2, 1, 3]
    game = session.new_game()
    assert game.options == GameOptions(
        jacoby=True, beavers=True, raccoons=True, automatic_doubles=1
    )


@pytest.mark.parametrize("length", [0, 65, -1])
def test_match_length_must_be_1_to_64(length: int) -> None:
    with pytest.raises(ValueError, match="invalid match length"):
        Match(length)


def _checkers(game: Game) -> tuple[int, int]:
    pos = game.position
    on_roll = sum(c for c in pos if c > 0) + pos.on_roll_at(0)
    opponent = -sum(c for c in pos if c < 0) + pos.opponent_at(0)
    return on_roll, opponent


@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 3, 5]))
def test_random_matches_keep_every_invariant(seed: int, length: int) -> None:
    """Random legal actions through Match and Game: 15 checkers a side, the cube in
    range, the score never falling, exactly one winner per game and per match."""
    rng = random.Random(seed)
    match = Match(length, dice=SeededDice(seed))
    previous = (0, 0)
    while not match.is_over:
        game = match.new_game()
        while not game.is_over:
            assert _checkers(game) == (CHECKERS, CHECKERS)
            assert 1 <= game.cube_value <= 64
            random_step(game, rng)
        assert game.decision is Decision.GAME_OVER
        result = game.result
        assert result is not None and result.winner in (0, 1) and result.points >= 1
        score = match.score
        assert score[result.winner] == previous[result.winner] + result.points
        assert score[1 - result.winner] == previous[1 - result.winner]
        previous = score
    assert match.winner in (0, 1)
    assert sum(1 for s in match.score if s >= length) == 1
