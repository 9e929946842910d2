"""The shared fair-dice vectors (tests/data/fair_dice_vectors/) through `nard verify`.

Each vector is a complete match record and the verdict every verifier must
give: ``verify_record`` and the ``nard verify`` command here, the verify page's
``verifyRecord`` in tests/server/test_verify_vectors.py.
``tests/data/make_fair_dice_vectors.py`` rebuilds them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nard.cli.main import main
from nard.match.verify import UnverifiableRecordError, verify_record
from nard.notation.json_record import read_json

VECTORS = Path(__file__).resolve().parents[1] / "data" / "fair_dice_vectors"


def load_vectors() -> list[dict[str, Any]]:
    vectors = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(VECTORS.glob("*.json"))]
    assert vectors, f"no vectors in {VECTORS}"
    return vectors


ALL = load_vectors()
IDS = [v["name"] for v in ALL]

# What `nard verify` names for each tampered vector (a part of one of its problems).
PROBLEM = {
    "tampered-log-die-changed": "die 8: the seed gives",
    "tampered-roll-swapped": "but the dice log gives",
    "tampered-extra-die": "the dice log has 1 dice that no roll used",
    "tampered-missing-die": "but the dice log has ended",
    "tampered-seed-not-committed": "does not match the commitment",
    "tampered-seed-malformed": "expected 64 hex digits",
    "tampered-roll-not-in-log": "but the dice log gives",
    "tampered-opening-wrong-player": "player 1 opened with",
    "tampered-client-seed-not-contributions": "is not the contributions joined in seat order",
    "tampered-contribution-control-character": "control character U+0009 at position 4",
    "tampered-contribution-newline": "control character U+000A at position 4",
    "tampered-contribution-too-long": "too long, 65 characters",
    "tampered-contribution-empty": "it is empty",
    "tampered-timeout-not-empty": "is marked as a timeout but is 'late'",
}


def verdict(record_json: str) -> tuple[str, tuple[str, ...]]:
    record, dice = read_json(record_json)
    try:
        report = verify_record(record, dice)
    except UnverifiableRecordError as exc:
        return "unverifiable", (str(exc),)
    return ("verified" if report.ok else "tampered"), report.problems


def test_the_vectors_cover_every_case() -> None:
    names = set(IDS)
    assert set(PROBLEM) == {n for n in names if n.startswith("tampered-")}
    assert {v["verdict"] for v in ALL} == {"verified", "tampered", "unverifiable"}
    for v in ALL:
        assert v["name"].startswith({"verified": "valid-"}.get(v["verdict"], v["verdict"]))
        assert (v["verdict"] == "verified") != bool(v.get("reason")), v["name"]
    records = {v["name"]: v["record"] for v in ALL}
    assert records["valid-chouette"]["dice"]["preamble"] > 0
    assert records["valid-money-session"]["match_length"] == 0
    assert [
        c["source"] for c in records["valid-timeout-contribution"]["dice"]["contributions"]
    ] == [
        "player",
        "timeout",
    ]
    # A tied opening roll was rolled again somewhere.
    assert any(_has_tied_opening(r["dice"], r["games"]) for r in records.values() if r["dice"])


def _has_tied_opening(dice: dict[str, Any], games: list[dict[str, Any]]) -> bool:
    """Whether a game's opening roll comes after a tie in the log."""
    log, used = dice["log"], dice.get("preamble", 0)
    for game in games:
        unplayed = None
        moves = [a for a in game["actions"] if a["action"] == "move"]
        for n, action in enumerate(moves):
            key = (action["player"], action["dice"])
            if key == unplayed:  # played after a refused resignation: rolled once
                unplayed = None
                continue
            unplayed = key if "play" not in action else None
            if n == 0 and log[used] == log[used + 1]:
                return True
            used += 2
    return False


@pytest.mark.parametrize("vector", ALL, ids=IDS)
def test_verify_record_gives_the_verdict(vector: dict[str, Any]) -> None:
    got, problems = verdict(json.dumps(vector["record"]))
    assert got == vector["verdict"], problems
    if got == "tampered":
        assert any(PROBLEM[vector["name"]] in p for p in problems), problems


@pytest.mark.parametrize("vector", ALL, ids=IDS)
def test_nard_verify_gives_the_verdict(
    vector: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"{vector['name']}.json"
    path.write_text(json.dumps(vector["record"], ensure_ascii=False), encoding="utf-8")
    status = main(["verify", str(path)])
    out, err = capsys.readouterr()
    expected = {"verified": 0, "tampered": 1, "unverifiable": 2}[vector["verdict"]]
    assert status == expected, (out, err)
    if vector["verdict"] == "verified":
        assert out.startswith("verified:")
    elif vector["verdict"] == "tampered":
        assert "verification FAILED" in out and PROBLEM[vector["name"]] in out
    else:
        assert err.startswith("nard: error:") and ("not been revealed" in err or "no dice" in err)


def test_the_vectors_are_what_the_generator_makes() -> None:
    from tests.data.make_fair_dice_vectors import to_json, vectors

    built = {v.name: to_json(v) for v in vectors()}
    on_disk = {p.stem: p.read_text(encoding="utf-8") for p in VECTORS.glob("*.json")}
    assert built == on_disk
