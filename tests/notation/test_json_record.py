"""nard's JSON match record: round trips and precise errors for bad documents."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nard import InvalidRecordError
from nard.notation.json_record import DiceCommitment, SeedContribution, read_json, write_json
from nard.notation.records import Action, ActionKind, GameRecord, MatchRecord

RECORD = MatchRecord(
    match_length=3,
    players=("Ali", "Sara"),
    games=(
        GameRecord(
            1,
            (0, 0),
            (
                Action(0, ActionKind.MOVE, dice=(3, 1), play="8/5 6/5"),
                Action(1, ActionKind.DOUBLE, cube=2),
                Action(0, ActionKind.DROP),
            ),
            winner=1,
            points=1,
        ),
    ),
    metadata={"event": "test"},
)
DICE = DiceCommitment("ab" * 32, "client", "cd" * 32, (3, 1, 6, 6))


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(write_json(RECORD, DICE))
    return doc


def test_round_trip() -> None:
    assert read_json(write_json(RECORD, DICE)) == (RECORD, DICE)
    assert read_json(write_json(RECORD)) == (RECORD, None)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda d: d.update(format="other"), "not a nard record: format is 'other'"),
        (lambda d: d.update(version=9), "unsupported nard record version 9"),
        (lambda d: d.update(extra=1), "unknown field(s) ['extra']"),
        (lambda d: d.update(match_length=99), "match_length must be a whole number 0-64"),
        (lambda d: d["games"][0]["actions"][0].update(dice=[7, 1]), "game 1, action 1: dice"),
        (lambda d: d["games"][0]["actions"][1].update(action="frob"), "unknown action 'frob'"),
        (lambda d: d["games"][0]["actions"][0].pop("dice"), "a move needs its dice"),
        (lambda d: d["games"][0]["actions"][2].update(player=2), "game 1, action 3: player"),
        (lambda d: d["games"][0].update(score=[0]), "game 1: score must be two numbers"),
        (lambda d: d["dice"].update(log=[0, 1]), "the dice log must hold dice 1-6"),
        (lambda d: d.update(players=["solo"]), "players must be two names"),
    ],
)
def test_bad_documents_name_the_problem(change: Any, fragment: str) -> None:
    doc = _doc()
    change(doc)
    with pytest.raises(InvalidRecordError) as info:
        read_json(json.dumps(doc))
    assert fragment in str(info.value)


def test_not_json_at_all() -> None:
    with pytest.raises(InvalidRecordError, match="invalid JSON at line 1"):
        read_json("{ nope")
    with pytest.raises(InvalidRecordError, match="expected an object"):
        read_json("[1, 2]")


# --- contributions to the client seed -------------------------------------------------

CONTRIBUTED = DiceCommitment(
    "ab" * 32,
    "ann-7f3a\n",
    "cd" * 32,
    (3, 1, 6, 6),
    contributions=(
        SeedContribution(0, "Ann", "ann-7f3a", "player"),
        SeedContribution(2, "Bob", "", "timeout"),
    ),
)


def _contributed_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(write_json(RECORD, CONTRIBUTED))
    return doc


def test_contributions_round_trip_in_seat_order() -> None:
    text = write_json(RECORD, CONTRIBUTED)
    assert read_json(text) == (RECORD, CONTRIBUTED)
    assert json.loads(text)["dice"]["contributions"] == [
        {"seat": 0, "player": "Ann", "seed": "ann-7f3a", "source": "player"},
        {"seat": 2, "player": "Bob", "seed": "", "source": "timeout"},
    ]


def test_no_contributions_are_not_written() -> None:
    assert "contributions" not in json.loads(write_json(RECORD, DICE))["dice"]
    assert DICE.contributions == ()


def test_the_reader_keeps_what_the_rules_refuse_for_the_verifier() -> None:
    """The form is the reader's; a seed with a tab, or a client seed that is not the
    join, is read as it is and refused by verify_record, which names it."""
    doc = _contributed_doc()
    doc["dice"]["contributions"][0]["seed"] = "ann\t7f3a"
    doc["dice"]["client_seed"] = "something else"
    _, dice = read_json(json.dumps(doc))
    assert dice is not None and dice.contributions[0].seed == "ann\t7f3a"
    assert dice.client_seed == "something else"


def _contribution(i: int, **fields: Any) -> Any:
    def change(d: dict[str, Any]) -> None:
        d["dice"]["contributions"][i].update(fields)

    return change


def _drop(i: int, key: str) -> Any:
    return lambda d: d["dice"]["contributions"][i].pop(key)


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (lambda d: d["dice"].update(contributions={}), "dice.contributions must be a list"),
        (lambda d: d["dice"].update(contributions=None), "dice.contributions must be a list"),
        (lambda d: d["dice"].update(contributions=[]), "must list at least one seat"),
        (lambda d: d["dice"]["contributions"].append("x"), "dice.contributions[2]: expected an"),
        (_contribution(0, extra=1), "dice.contributions[0]: unknown field(s) ['extra']"),
        (_drop(1, "source"), "dice.contributions[1]: missing field(s) ['source']"),
        (_drop(0, "seed"), "dice.contributions[0]: missing field(s) ['seed']"),
        (_contribution(0, seat=-1), "dice.contributions[0]: seat must be a whole number"),
        (_contribution(0, seat=True), "dice.contributions[0]: seat must be a whole number"),
        (_contribution(0, seat="0"), "dice.contributions[0]: seat must be a whole number"),
        (_contribution(1, seat=0), "dice.contributions[1]: seat 0 after seat 0"),
        (_contribution(0, seat=5), "dice.contributions[1]: seat 2 after seat 5"),
        (_contribution(0, player=None), "dice.contributions[0]: player must be text"),
        (_contribution(1, seed=0), "dice.contributions[1]: seed must be text"),
        (_contribution(1, source="late"), "source must be one of ['player', 'timeout']"),
    ],
)
def test_bad_contributions_name_the_field(change: Any, fragment: str) -> None:
    doc = _contributed_doc()
    change(doc)
    with pytest.raises(InvalidRecordError) as info:
        read_json(json.dumps(doc))
    assert fragment in str(info.value)
