"""nard's JSON match record: round trips and precise errors for bad documents."""

from __future__ import annotations

import json
from typing import Any

import pytest

from nard import InvalidRecordError
from nard.notation.json_record import DiceCommitment, read_json, write_json
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
