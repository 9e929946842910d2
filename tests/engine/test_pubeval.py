"""pubeval: the encoding by hand, the scores against Tesauro's code, the race switch, strength."""

from __future__ import annotations

import numpy as np
import pytest

from nard.core.position import Position
from nard.engine.player import RandomPlayer, play_game
from nard.engine.pubeval import (
    CONTACT_WEIGHTS,
    RACE_WEIGHTS,
    WINNING_SCORE,
    PubevalPlayer,
    pubeval_inputs,
    pubeval_scores,
)
from nard.match.dice import SeededDice

# Scores of positions played into (Position IDs of ``Play.result``, seen from the
# opponent), computed by Tesauro's published C code (the pubeval() and setx() of
# gnubg's pub_eval.c, compiled unchanged outside the repository and fed the boards
# from the mover's side) with its contact and its race weights. It computes in
# float32, hence the tolerance.
REFERENCE_SCORES = [
    ("sGfwATDgc/ABMA", 10.343115, 11.180779),  # opening 31 played 8/5 6/5
    ("4HPwAyDgc/ABMA", 8.016515, 9.057155),  # opening 65 played 24/13
    ("4HPwBSDgc/ABMA", 7.602710, 9.621250),
    ("a94JAMCdZwAAAA", 9.622908, 2.814145),  # bearing off, both sides with checkers off
    ("s94DAMCdZwAAAA", 9.723742, 6.129533),
    ("s70JAMCdZwAAAA", 13.656167, 3.397944),
    ("4HPwQRDgc/ABUA", 10.377971, 8.539660),  # the opponent on the bar
    ("4GvwQSDgc/ABUA", 9.906150, 9.698690),
    ("0HPwQSDgc/ABUA", 10.176945, 9.292859),
    ("s5nIATDCt4MBSA", 13.793039, -1.072060),  # from random games
    ("zvYBIQHPSUgAWQ", 9.500140, 8.289359),
    ("+1MPAAC/BgCBDw", -2.750725, -19.322321),
    ("fz8AAMD/hEgCAA", -16.456402, -49.635921),
    ("yHPwAQPE2+ABMA", 8.053145, 5.043130),
    ("rG7BEwCR58EISA", 11.997746, 8.174846),
]


def _result(mine: dict[int, int], theirs: dict[int, int]) -> Position:
    """A position just played into, given from the mover's side (both in the mover's
    point numbers; ``theirs`` uses 0 for the opponent's bar), as ``Play.result`` sees it."""
    opponent = {25 - point: count for point, count in theirs.items()}
    return Position.from_points(mine, opponent).flip()


def _nonzero(x: np.ndarray) -> dict[int, float]:
    return {int(i): float(x[i]) for i in np.flatnonzero(x)}


def test_weights_are_two_vectors_of_122() -> None:
    assert len(RACE_WEIGHTS) == len(CONTACT_WEIGHTS) == 122
    # Spot checks against the published listing: first, last, and the off input.
    assert (RACE_WEIGHTS[1], RACE_WEIGHTS[119], RACE_WEIGHTS[121]) == (-0.17160, -12.32252, 3.42040)
    assert (CONTACT_WEIGHTS[0], CONTACT_WEIGHTS[120], CONTACT_WEIGHTS[121]) == (
        0.25696,
        5.62596,
        -2.75800,
    )


def test_encoding_of_the_starting_board() -> None:
    # Mover: 2 on 24, 5 on 13, 3 on 8, 5 on 6; block k describes point 24 - k.
    x = pubeval_inputs([Position()])[0]
    assert _nonzero(x) == {
        0 * 5 + 2: 1.0,  # 24-point: >= 2
        11 * 5 + 2: 1.0,  # 13-point: >= 2 ...
        11 * 5 + 4: 1.0,  # ... and (5 - 3) / 2
        16 * 5 + 2: 1.0,  # 8-point: >= 2 ...
        16 * 5 + 3: 1.0,  # ... and exactly 3
        18 * 5 + 2: 1.0,  # 6-point
        18 * 5 + 4: 1.0,
    }


def test_encoding_of_blots_stacks_bar_and_off() -> None:
    # Mover: 4 on 1, a blot on 6, 8 on 3 (2 off). Opponent: a blot on our 20, one on the bar.
    after = _result({1: 4, 6: 1, 3: 8}, {20: 1, 0: 1, 12: 13})
    x = pubeval_inputs([after])[0]
    assert _nonzero(x) == {
        4 * 5 + 0: 1.0,  # point 20: an opponent blot
        18 * 5 + 1: 1.0,  # point 6: our blot
        21 * 5 + 2: 1.0,  # point 3: 8 checkers
        21 * 5 + 4: 2.5,
        23 * 5 + 2: 1.0,  # point 1: 4 checkers
        23 * 5 + 4: 0.5,
        120: 0.5,  # one opponent checker on the bar
        121: pytest.approx(2 / 15),  # two of ours off
    }


def test_the_movers_own_bar_is_not_encoded() -> None:
    # As in Tesauro's code: a checker of ours on the bar only stops counting as off.
    off = pubeval_inputs([_result({6: 14}, {12: 15})])[0]
    on_bar = pubeval_inputs([_result({6: 14, 25: 1}, {12: 15})])[0]
    assert np.flatnonzero(off != on_bar).tolist() == [121]
    assert on_bar[121] == 0.0


@pytest.mark.parametrize(("position_id", "contact", "race"), REFERENCE_SCORES)
def test_scores_match_tesauros_code(position_id: str, contact: float, race: float) -> None:
    after = Position.from_position_id(position_id)
    assert pubeval_scores([after], race=False)[0] == pytest.approx(contact, abs=1e-4)
    assert pubeval_scores([after], race=True)[0] == pytest.approx(race, abs=1e-4)


def test_table_scores_equal_inputs_times_weights() -> None:
    results = [Position.from_position_id(pid) for pid, _, _ in REFERENCE_SCORES]
    x = pubeval_inputs(results)
    for race, weights in ((False, CONTACT_WEIGHTS), (True, RACE_WEIGHTS)):
        assert pubeval_scores(results, race) == pytest.approx(x @ np.array(weights))


def test_bearing_off_the_last_checker_scores_best() -> None:
    pos = Position.from_points({1: 1, 2: 1}, {6: 2})
    plays = pos.legal_plays((2, 1))
    scores = pubeval_scores([p.result for p in plays], race=True)
    assert sorted(pos.format_play(p) for p in plays) == ["2/off", "2/off 1/off"]
    assert sorted(scores)[-1] == WINNING_SCORE > sorted(scores)[0]
    best = PubevalPlayer().choose_play(pos, (2, 1))
    assert best is not None and best.result.is_game_over()
    assert pubeval_scores([], race=True).shape == (0,)


def test_race_weights_before_the_move_decide() -> None:
    # A bear-off race where the two weight sets disagree about 4-2.
    race = Position.from_position_id("d54BAGDmnQEAAA")
    assert race.is_race()
    plays = race.legal_plays((4, 2))
    results = [p.result for p in plays]
    by_race = plays[int(np.argmax(pubeval_scores(results, race=True)))]
    by_contact = plays[int(np.argmax(pubeval_scores(results, race=False)))]
    assert by_race != by_contact
    assert PubevalPlayer().choose_play(race, (4, 2)) == by_race
    # And a contact position, where the contact weights must be used.
    start = Position()
    assert start.is_contact()
    disagree = 0
    for dice in [(6, 4), (5, 2), (4, 3), (6, 2), (5, 4), (2, 1), (6, 6), (4, 4)]:
        plays = start.legal_plays(dice)
        results = [p.result for p in plays]
        by_contact = plays[int(np.argmax(pubeval_scores(results, race=False)))]
        by_race = plays[int(np.argmax(pubeval_scores(results, race=True)))]
        disagree += by_contact != by_race
        assert PubevalPlayer().choose_play(start, dice) == by_contact
    assert disagree


@pytest.mark.parametrize(("dice", "text"), [((3, 1), "8/5 6/5"), ((6, 5), "24/13")])
def test_opening_choices(dice: tuple[int, int], text: str) -> None:
    play = PubevalPlayer().choose_play(Position(), dice)
    assert play is not None
    assert Position().format_play(play) == text


def test_no_play_and_forced_play() -> None:
    home = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2}
    closed_out = Position.from_points({25: 1, 6: 14}, home)
    assert PubevalPlayer().choose_play(closed_out, (6, 5)) is None
    # Only 25/20 enters (the 5-point is open), then nothing moves: one legal play.
    del home[5]
    one_way = Position.from_points({25: 1}, home)
    plays = one_way.legal_plays((5, 5))
    assert len(plays) == 1
    assert PubevalPlayer().choose_play(one_way, (5, 5)) == plays[0]


def test_pubeval_beats_a_random_player_heavily() -> None:
    # 20 pairs of games with duplicate dice: each seed played from both seats.
    results = []
    for seed in range(20):
        results.append(play_game(PubevalPlayer(), RandomPlayer(seed), SeededDice(seed)))
        results.append(-play_game(RandomPlayer(seed), PubevalPlayer(), SeededDice(seed)))
    assert sum(r > 0 for r in results) >= 36
    assert sum(results) / len(results) > 1.5
