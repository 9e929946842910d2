"""``nard.analysis``: what each decision is judged, and the figures built from them."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from nard.analysis import Analyst, MatchAnalysis, Skill, analyse
from nard.analysis.analyse import Decision, Roll
from nard.analysis.stats import fibs_rating, player_stats
from nard.cli.records import load_record
from nard.core.dice import ALL_ROLLS
from nard.core.position import Position
from nard.engine.cube import CubeContext
from nard.match.replay import walk
from nard.notation.records import Action, ActionKind, GameRecord, MatchRecord

MATCHES = Path(__file__).resolve().parents[1] / "data" / "gnubg_matches"
MANIFEST = MATCHES / "manifest.json"
GNUBG_0PLY = Path(__file__).resolve().parents[2] / "bench" / "data" / "gnubg_analysis_0ply.json"


@pytest.fixture(scope="module")
def analyst() -> Analyst:
    return Analyst(0)


def _game(
    actions: list[Action], winner: int, points: int, score: tuple[int, int] = (0, 0)
) -> GameRecord:
    return GameRecord(1, score, tuple(actions), winner=winner, points=points)


def _move(player: int, dice: tuple[int, int], play: str) -> Action:
    return Action(player, ActionKind.MOVE, dice=dice, play=play)


def test_a_bad_opening_play_is_a_blunder_with_the_right_play_beside_it(analyst: Analyst) -> None:
    record = MatchRecord(
        0,
        (_game([_move(0, (3, 1), "24/21 24/23"), _move(1, (6, 5), "24/13")], 1, 1),),
        players=("Ann", "Bob"),
    )
    result = analyse(record, 0, analyst=analyst)
    first = result.decisions[0]
    assert (first.kind, first.player, first.seat, first.dice) == ("checker", "Ann", 0, (3, 1))
    assert first.best == "8/5 6/5"
    assert first.error > 0.12 and first.skill is Skill.BLUNDER
    assert first.counted and not first.obvious
    assert first.position_id == Position().position_id()
    # the 65 run is the right play: no error
    second = [d for d in result.decisions if d.kind == "checker"][1]
    assert second.played == "24/13" and second.error == pytest.approx(0.0, abs=1e-9)
    assert result.players[0].unforced_moves == 1
    assert result.players[0].checker_error_rate == pytest.approx(1000 * first.error)


def test_a_double_at_the_opening_and_its_answer_are_both_judged(analyst: Analyst) -> None:
    # Bob doubles at his first turn in a money game and Ann takes: a wrong double
    # (nothing has happened yet) and a right take.
    record = MatchRecord(
        0,
        (
            _game(
                [
                    _move(0, (3, 1), "8/5 6/5"),
                    Action(1, ActionKind.DOUBLE, cube=2),
                    Action(0, ActionKind.TAKE),
                    _move(1, (2, 1), "13/11 24/23"),
                ],
                0,
                2,
            ),
        ),
        players=("Ann", "Bob"),
    )
    result = analyse(record, 0, analyst=analyst)
    cube = [d for d in result.decisions if d.kind in ("cube", "take")]
    assert [(d.kind, d.player, d.played, d.best) for d in cube] == [
        ("cube", "Bob", "Double", "No double"),
        ("take", "Ann", "Take", "Take"),
    ]
    double, take = cube
    assert double.error > 0.1 and double.counted
    assert take.error == 0.0 and take.counted
    assert double.dice is None and take.match_id != double.match_id  # the offer is in the ID
    assert result.players[1].cube_decisions == 1 and result.players[0].cube_decisions == 1


def test_a_pass_of_a_take_is_an_error_in_match_equity_too(analyst: Analyst) -> None:
    record = MatchRecord(
        7,
        (
            _game(
                [
                    _move(0, (3, 1), "8/5 6/5"),
                    Action(1, ActionKind.DOUBLE, cube=2),
                    Action(0, ActionKind.DROP),
                ],
                1,
                1,
            ),
        ),
        players=("Ann", "Bob"),
    )
    result = analyse(record, 0, analyst=analyst)
    take = next(d for d in result.decisions if d.kind == "take")
    assert (take.played, take.best) == ("Pass", "Take")
    assert take.error > 0.3 and take.skill is Skill.BLUNDER
    assert take.error_mwc is not None and 0 < take.error_mwc < take.error
    assert result.players[0].rating is not None and result.players[0].rating < 2050


def test_luck_averages_to_nothing_over_every_roll(analyst: Analyst) -> None:
    position = Position.from_position_id("4HPwATDgc/ABMA").flip()
    for ctx in (CubeContext(), CubeContext(match_length=5, score=(3, 1))):
        luck = [analyst.luck(position, roll, ctx) for roll in ALL_ROLLS]
        weights = [1 if a == b else 2 for a, b in ALL_ROLLS]
        assert abs(sum(w * v for w, v in zip(weights, luck, strict=True))) < 1e-9
        opening = [
            analyst.luck(Position(), r, ctx, opening=True) for r in ALL_ROLLS if r[0] != r[1]
        ]
        mover = sum(opening)
        # over the 30 openings one side's luck averages to zero: the luck of its own 15
        # (as roller) equals the luck of the opponent's 15 (against it)
        theirs = sum(
            analyst.luck(Position(), r, ctx.swapped(), opening=True)
            for r in ALL_ROLLS
            if r[0] != r[1]
        )
        assert mover == pytest.approx(theirs, abs=1e-9)
    assert analyst.luck(Position(), (6, 6), CubeContext()) > analyst.luck(
        Position(), (2, 1), CubeContext()
    )


def _decision(
    seat: int, kind: str, error: float, counted: bool = True, obvious: bool = False
) -> Decision:
    return Decision(
        game=1,
        turn=1,
        seat=seat,
        player=f"p{seat}",
        kind=kind,
        position_id="",
        match_id="",
        dice=(3, 1) if kind == "checker" else None,
        played="",
        best="",
        error=error,
        error_mwc=None,
        skill=Skill.NONE,
        counted=counted,
        obvious=obvious,
    )


def test_the_figures_follow_gnubg_and_xg_formulas() -> None:
    decisions = [
        _decision(0, "checker", 0.04),
        _decision(0, "checker", 0.0),
        _decision(0, "checker", 0.0, counted=False, obvious=True),  # forced
        _decision(0, "checker", 0.0, obvious=True),  # unforced but every play equal
        _decision(0, "cube", 0.1),
        _decision(0, "cube", 0.0, counted=False, obvious=True),  # far from the window
        _decision(1, "take", 0.2),
    ]
    rolls = [Roll(1, t, t % 2, (3, 1), 0.1 * (t % 2), None, 1) for t in range(8)]
    record = MatchRecord(0, (), players=("p0", "p1"))
    a, b = player_stats(record, decisions, rolls, [(1.0, -1.0)])
    assert a.unforced_moves == 3 and a.cube_decisions == 1 and a.cube_decisions_total == 2
    assert a.checker_error_rate == pytest.approx(1000 * 0.04 / 3)
    assert a.cube_error_rate == pytest.approx(1000 * 0.1)
    assert a.error_rate == pytest.approx(1000 * 0.14 / 4)
    assert a.snowie_error_rate == pytest.approx(1000 * 0.14 / 8)  # both players' moves
    assert a.pr_decisions == 3 and a.pr == pytest.approx(500 * 0.14 / 3)
    assert b.luck == pytest.approx(0.4) and a.luck == 0.0
    assert a.luck_adjusted_result == pytest.approx(1.0 + 0.4)  # money: points
    assert a.rating is None  # gnubg rates match play only
    assert fibs_rating(0.01, 0.02, 5) == pytest.approx(
        2050 - 0.01 * (8798 + 25526 / 5) - 0.02 * (863 - 519 / 5)
    )


def test_walk_shows_every_action_before_it_is_applied() -> None:
    record, _ = load_record(str(MATCHES / "match3_03.mat"))
    seen: list[tuple[int, str, str]] = []
    walk(record, lambda n, g, a: seen.append((n, g.decision.value, a.kind.value)))
    total = sum(len(g.actions) for g in record.games)
    assert len(seen) == total
    assert seen[0] == (1, "opening roll", "move")
    doubles = [s for s in seen if s[2] == "double"]
    assert doubles and all(s[1] == "roll" for s in doubles)


def _gnubg_0ply() -> dict[str, dict[str, object]]:
    data: dict[str, dict[str, object]] = json.loads(GNUBG_0PLY.read_text())
    return data


@pytest.mark.parametrize(
    "name", ["match1_02", "match3_11", "match5_03", "match7_07", "money_05", "money_08"]
)
def test_the_unforced_moves_are_gnubgs_and_every_cube_action_is_judged(
    name: str, analyst: Analyst
) -> None:
    """Unforced moves counted as gnubg 0-ply counted them (recorded by
    bench/analysis_agreement.py), and a decision for every double, take, pass and
    beaver gnubg recorded playing the match (tests/data/gnubg_matches/manifest.json)."""
    record, _ = load_record(str(MATCHES / f"{name}.sgf"))
    result = analyse(record, 0, analyst=analyst)
    stats = _gnubg_0ply()[f"{name}.sgf"]["stats"]
    assert isinstance(stats, dict)
    unforced = [stats["0"]["unforced"], stats["1"]["unforced"]]
    assert [p.unforced_moves for p in result.players] == unforced
    games = next(m for m in json.loads(MANIFEST.read_text())["matches"] if m["name"] == name)[
        "games"
    ]
    played = [d.played for d in result.decisions if d.kind in ("cube", "take")]
    doubles = sum(1 for p in played if p in ("Double", "Redouble"))
    answers = sum(1 for p in played if p in ("Take", "Pass", "Beaver"))
    assert doubles == sum(g["doubles"] for g in games)
    # one answer per double: gnubg's record counts the doubler's acceptance of a
    # beaver as the take, nard judges the beaver as the answer
    assert answers == sum(g["takes"] + g["drops"] for g in games)


def test_the_json_has_the_documented_shape(analyst: Analyst) -> None:
    record, _ = load_record(str(MATCHES / "match5_03.sgf"))
    result: MatchAnalysis = analyse(record, 0, analyst=analyst)
    doc = json.loads(json.dumps(result.to_json()))
    assert doc["match_length"] == 5 and doc["plies"] == 0
    for player in doc["players"]:
        for key in (
            "name",
            "unforced_moves",
            "checker_error_rate",
            "cube_decisions",
            "cube_error_rate",
            "error_rate",
            "pr",
            "luck",
            "luck_adjusted_result",
            "rating",
        ):
            assert key in player
    kinds = {d["kind"] for d in doc["decisions"]}
    assert kinds <= {"checker", "cube", "take"} and "checker" in kinds
    for d in doc["decisions"]:
        assert d["error"] >= 0
        assert d["player"] in record.players
        assert (d["dice"] is None) == (d["kind"] != "checker")
        Position.from_position_id(d["position_id"])


def test_the_depth_must_be_offered() -> None:
    record = MatchRecord(0, ())
    with pytest.raises(ValueError, match="plies"):
        analyse(record, 3)


def test_without_the_cube_no_cube_decision_is_judged(analyst: Analyst) -> None:
    record = MatchRecord(
        0,
        (_game([_move(0, (3, 1), "8/5 6/5"), _move(1, (6, 5), "24/13")], 1, 1),),
        players=("Ann", "Bob"),
    )
    with_cube = analyse(record, 0, analyst=analyst)
    assert [d.player for d in with_cube.decisions if d.kind == "cube"] == ["Bob"]
    result = analyse(dataclasses.replace(record, cube=False), 0, analyst=analyst)
    assert [d.kind for d in result.decisions] == ["checker", "checker"]
    assert all(p.cube_decisions_total == 0 for p in result.players)
