"""A game's Position ID, Match ID and XGID against GNU Backgammon: gnubg reads each
XGID nard writes for a game in play and must name the same position and match state
by its own Position ID and Match ID."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from nard.core import NardError
from nard.match import (
    Decision,
    FixedDice,
    Game,
    GameAction,
    Match,
    MatchRules,
    MoneyRules,
    SeededDice,
    Session,
)
from nard.match.ids import game_ids, match_state
from nard.notation import MatchState
from nard.notation.xgid import TOP
from tests.gnubg_oracle import requires_gnubg, run_gnubg_script


def states(seed: int, count: int) -> list[tuple[str, str, str, int]]:
    """(XGID, Position ID, Match ID, match length) of game states met in seeded random
    matches and money games: rolls, doubles, takes, redoubles, the Crawford game."""
    rng = random.Random(seed)
    out: list[tuple[str, str, str, int]] = []
    while len(out) < count:
        length = rng.choice([0, 0, 3, 5, 7, 11])
        dice = SeededDice(rng.randrange(2**32))
        games: Match | Session = (
            Match(length, MatchRules(), dice)
            if length
            else Session(MoneyRules(jacoby=rng.random() < 0.5, beavers=False), dice)
        )
        for _ in range(3 if length else 1):
            if (isinstance(games, Match) and games.is_over) or len(out) >= count:
                break
            game = games.new_game()
            while not game.is_over and len(out) < count:
                ids = game_ids(game, length, games.score)
                if ids is not None and ids.xgid is not None:
                    out.append((ids.xgid, ids.position_id, ids.match_id, length))
                legal = game.legal_actions()
                if game.decision is Decision.OPENING_ROLL:
                    game.opening_roll()
                elif GameAction.DOUBLE in legal and rng.random() < 0.15:
                    game.double()
                elif GameAction.TAKE in legal:
                    game.take() if rng.random() < 0.7 else game.pass_double()
                elif game.decision in (Decision.ROLL, Decision.RACCOON_OR_ROLL):
                    game.roll()
                elif game.decision is Decision.PLAY:
                    game.play(rng.choice(game.legal_plays()))
                else:  # pragma: no cover - no resignations or beavers here
                    raise AssertionError(game.decision)
    return out


@requires_gnubg
def test_gnubg_reads_our_xgid_as_our_position_and_match_ids() -> None:
    cases = states(2026, 300)
    assert len({c[2] for c in cases}) > 100  # many different match states
    script = f"""
import gnubg, json
for xgid, length in json.loads({json.dumps(json.dumps([(c[0], c[3]) for c in cases]))}):
    gnubg.command("new match %d" % length if length else "new session")
    gnubg.command("set xgid " + xgid)
    print("NARD:" + json.dumps([gnubg.positionid(), gnubg.matchid()]))
"""
    answers = [json.loads(line) for line in run_gnubg_script(script)]
    assert len(answers) == len(cases)
    for (xgid, position_id, match_id, _), (gnubg_position, gnubg_match) in zip(
        cases, answers, strict=True
    ):
        # gnubg steps back from an offered double and shows the side on roll as its
        # player 1 (tests/notation/test_xgid.py): the same match state, so taken.
        state = MatchState.from_match_id(match_id)
        if state.double_offered:
            state = dataclasses.replace(state, double_offered=False, turn=state.dice_owner)
        if state.dice_owner == TOP:
            state = state.swap_players()
        assert (position_id, state.match_id()) == (gnubg_position, gnubg_match), xgid


def test_the_match_id_reads_back_as_the_game_stands() -> None:
    game = Game(dice=FixedDice([(5, 2), (6, 4)]))
    with pytest.raises(NardError):
        match_state(game)
    game.opening_roll()  # player 0 plays 5-2 first
    game.play(game.legal_plays()[0])
    game.double()  # player 1 doubles before rolling
    ids = game_ids(game, 7, (2, 4))
    assert ids is not None and ids.xgid is not None
    state = MatchState.from_match_id(ids.match_id)
    assert (state.dice_owner, state.turn, state.double_offered) == (1, 0, True)
    assert (state.cube_value, state.match_length, state.score) == (1, 7, (2, 4))
    game.take()
    game.roll()
    state = MatchState.from_match_id(match_state(game, 7, (2, 4)).match_id())
    assert (state.cube_value, int(state.cube_owner), state.dice) == (2, 0, (6, 4))
