"""The match equity table extended to 64 points: its shape, GNU Backgammon's
numbers, and the computer's cube at scores beyond the published 25 points."""

from __future__ import annotations

import json

import pytest

from nard import Position
from nard.computer import computer_command
from nard.engine import Engine
from nard.engine.cube import (
    KAZAROSS_XG2,
    KAZAROSS_XG2_64,
    MAX_MATCH_LENGTH,
    CubeContext,
    MatchEquityTable,
    cube_decision,
)
from nard.match import Game, GameAction
from tests.gnubg_oracle import requires_gnubg, run_gnubg_script

MET = KAZAROSS_XG2_64
PUBLISHED = KAZAROSS_XG2.length  # 25
AWAYS = range(1, MAX_MATCH_LENGTH + 1)


# The table ----------------------------------------------------------------


def test_the_default_table_covers_every_match_length() -> None:
    assert MAX_MATCH_LENGTH == 64
    assert MET.length == 64 and len(MET.pre) == 64
    assert all(len(row) == 64 for row in MET.pre)
    assert CubeContext().met is MET
    with pytest.raises(ValueError, match="beyond the 64-point table"):
        MET.equity(65, 1)


def test_the_published_entries_are_unchanged() -> None:
    for i in range(PUBLISHED):
        assert MET.pre[i][:PUBLISHED] == KAZAROSS_XG2.pre[i]
    assert MET.post[:PUBLISHED] == KAZAROSS_XG2.post
    assert KAZAROSS_XG2.extended(PUBLISHED) == KAZAROSS_XG2
    with pytest.raises(ValueError, match="cannot be extended"):
        KAZAROSS_XG2.extended(24)


def test_each_score_is_the_other_side_of_its_mirror() -> None:
    for a in AWAYS:
        assert MET.equity(a, a) == pytest.approx(0.5, abs=1e-8)
        for b in AWAYS:
            # Kazaross's own entries are rounded to 5 digits; computed ones are exact.
            tolerance = 2e-5 if max(a, b) <= PUBLISHED else 1e-8
            assert MET.equity(a, b) + MET.equity(b, a) == pytest.approx(1.0, abs=tolerance)
            assert MET.equity(a, b, post_crawford=True) + MET.equity(
                b, a, post_crawford=True
            ) == pytest.approx(1.0, abs=tolerance)


def test_more_points_away_is_worth_less() -> None:
    for a in AWAYS:
        for b in AWAYS:
            if a < MAX_MATCH_LENGTH:
                assert MET.equity(a + 1, b) < MET.equity(a, b), (a, b)
            if b < MAX_MATCH_LENGTH:
                assert MET.equity(a, b + 1) > MET.equity(a, b), (a, b)
    assert all(MET.post[i + 1] < MET.post[i] for i in range(MAX_MATCH_LENGTH - 1))
    assert 0.0 < MET.equity(64, 1) < MET.equity(63, 1) < 1e-6
    assert 0.0 < MET.post[-1] < 1e-7


def test_values_gnubg_shows() -> None:
    """``show matchequitytable 30`` in gnubg 1.07 with its default Kazaross-XG2
    table (MWC in percent, 4 decimals)."""
    shown = {
        (1, 26): 99.9179,
        (26, 1): 0.0821,
        (1, 30): 99.9673,
        (25, 30): 64.8363,
        (30, 25): 35.1637,
        (26, 26): 50.0000,
        (27, 13): 10.5537,
        (30, 29): 47.0683,
    }
    for (a, b), percent in shown.items():
        assert 100 * MET.equity(a, b) == pytest.approx(percent, abs=5e-5), (a, b)
    # Post-Crawford, trailer 26-away: 0.1061 %.
    assert 100 * MET.equity(26, 1, post_crawford=True) == pytest.approx(0.1061, abs=5e-5)


def test_a_short_table_is_extended_with_the_post_crawford_free_drops() -> None:
    """From a 1-point table, the post-Crawford recurrence takes gnubg's free
    drops off at 2- and 4-away (Zadeh's model with a 25% gammon rate)."""
    tiny = MatchEquityTable("one point", ((0.5,),), (0.5,)).extended(5)
    g = 0.25
    two = g * 0.5 * 1.0 + (1 - g) * 0.5 * 1.0 - 0.015
    three = g * 0.5 * 1.0 + (1 - g) * 0.5 * 0.5
    four = g * 0.5 * 1.0 + (1 - g) * 0.5 * two - 0.004
    assert tiny.post == pytest.approx(
        (0.5, two, three, four, g * 0.5 * 0.5 + (1 - g) * 0.5 * three)
    )
    assert tiny.length == 5 and tiny.pre[0][0] == 0.5


# GNU Backgammon -------------------------------------------------------------

_GNUBG_MET = """
import json
import gnubg
pre, post0, post1 = gnubg.met(64)[:3]
print('\\nNARD:' + json.dumps({'pre': pre, 'post': [post0, post1]}))
"""

# gnubg keeps its tables in float32: a stored MWC is off by up to half an ulp
# (3e-8 near 1), and its erff/sqrtf arithmetic adds a few ulps; measured at
# most 7.0e-8 over the whole 64 x 64 table.
FLOAT32 = 2e-7


@pytest.mark.gnubg
@requires_gnubg
def test_the_extension_agrees_with_gnubg() -> None:
    answer = json.loads(run_gnubg_script(_GNUBG_MET, timeout=120)[-1])
    pre, (post0, post1) = answer["pre"], answer["post"]
    assert len(pre) == 64 and all(len(row) == 64 for row in pre)
    assert post0 == post1  # the same table for both players
    # gnubg's default table is ours: the published entries agree to float32.
    for i in range(PUBLISHED):
        for j in range(PUBLISHED):
            assert pre[i][j] == pytest.approx(MET.pre[i][j], abs=FLOAT32)
    # Every pre-Crawford score beyond 25-away: Montgomery's normal model.
    worst = max(
        abs(pre[i][j] - MET.pre[i][j])
        for i in range(64)
        for j in range(64)
        if max(i, j) >= PUBLISHED
    )
    print(f"\nNARD: pre-Crawford beyond 25-away: largest difference from gnubg {worst:.2e}")
    assert worst < FLOAT32
    # Post-Crawford: gnubg recomputes the table's last entry (25-away) instead
    # of keeping Kazaross's 0.00123; nard keeps it. Seeded with gnubg's value,
    # the same recurrence gives gnubg's table to float32 ...
    assert post0[PUBLISHED - 1] == pytest.approx(
        0.125 * KAZAROSS_XG2.post[20] + 0.375 * KAZAROSS_XG2.post[22], abs=FLOAT32
    )
    seeded = MatchEquityTable(
        "Kazaross-XG2, gnubg's 25-away post-Crawford",
        KAZAROSS_XG2.pre,
        (*KAZAROSS_XG2.post[:-1], post0[PUBLISHED - 1]),
    ).extended(64)
    assert max(abs(a - b) for a, b in zip(seeded.post, post0, strict=True)) < FLOAT32
    # ... and the kept entry moves nard's by at most 0.375 of its 4.9e-5 (27-away).
    post_worst = max(abs(post0[i] - MET.post[i]) for i in range(PUBLISHED, 64))
    print(f"NARD: post-Crawford beyond 25-away: largest difference from gnubg {post_worst:.2e}")
    assert post_worst < 2e-5
    assert abs(post0[PUBLISHED - 1] - MET.post[PUBLISHED - 1]) < 5e-5


# The computer at long matches ---------------------------------------------


@pytest.fixture(scope="module")
def expert() -> Engine:
    return Engine("expert", seed=1)


@pytest.mark.parametrize(
    ("length", "score", "on_roll"),
    [(64, (0, 0), 0), (40, (30, 12), 0), (40, (30, 12), 1), (26, (0, 0), 1)],
)
def test_the_computer_cubes_in_long_matches(
    expert: Engine, length: int, score: tuple[int, int], on_roll: int
) -> None:
    # The opening position, and a race the side on roll leads by 13 pips (66 to 79).
    race = Position.from_points(
        {6: 4, 5: 4, 4: 3, 3: 2, 2: 2}, {6: 3, 5: 3, 4: 3, 3: 2, 2: 2, 12: 2}
    )
    for position in (Position(), race):
        game = Game.from_position(position, on_roll)
        assert GameAction.DOUBLE in game.legal_actions()
        command = computer_command(expert, game, length, score)
        context = CubeContext(match_length=length, score=(score[on_roll], score[1 - on_roll]))
        decision = expert.cube_action(position, context)
        assert command.action is (GameAction.DOUBLE if decision.double else GameAction.ROLL)
        game.double()
        answer = computer_command(expert, game, length, score)
        assert answer.action in (GameAction.TAKE, GameAction.PASS)
        assert (answer.action is GameAction.TAKE) == decision.take


def test_cube_decisions_at_every_score_of_a_64_point_match() -> None:
    probs = [0.7, 0.2, 0.01, 0.05, 0.0]
    for mine in range(64):
        for theirs in range(64):
            for crawford in (False, True) if 63 in (mine, theirs) else (False,):
                ctx = CubeContext(match_length=64, score=(mine, theirs), crawford=crawford)
                decision = cube_decision(probs, ctx)
                assert decision.mwc_no_double is not None
                assert 0.0 <= decision.mwc_no_double <= 1.0
