"""Provably fair dice end to end: play with FairDice, record, reveal, verify, tamper."""

from __future__ import annotations

import dataclasses
import random

import pytest

from nard.match import CommitmentMismatchError, FairDice, Match, replay
from nard.match.dice import RecordingDice
from nard.match.verify import UnverifiableRecordError, verify_record
from nard.notation.json_record import DiceCommitment, read_json, write_json
from nard.notation.records import ActionKind, MatchRecord
from tests.match.random_play import play_random_game


def fair_match(seed: int, length: int = 5) -> tuple[MatchRecord, DiceCommitment]:
    """A match played with fair dice, its seed revealed at the end."""
    fair = FairDice.new("client-" + str(seed), rng=random.Random(seed))
    dice = RecordingDice(fair)
    match = Match(length, dice=dice)
    rng = random.Random(seed)
    while not match.is_over:
        play_random_game(match.new_game(), rng)
    commitment = DiceCommitment(fair.commitment, fair.client_seed, fair.reveal(), tuple(dice.log))
    return match.to_record(("Ali", "Sara")), commitment


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_honest_record_verifies(seed: int) -> None:
    record, dice = fair_match(seed)
    report = verify_record(record, dice)
    assert report.ok, report.problems
    assert report.dice_checked == len(dice.log) and report.rolls_checked > 10
    # ... and survives the JSON round trip.
    again, dice_again = read_json(write_json(record, dice))
    assert again == record and dice_again == dice
    assert verify_record(again, dice_again).ok


def test_a_tampered_roll_is_detected() -> None:
    record, dice = fair_match(4)
    g = record.games[0]
    index = next(
        i for i, a in enumerate(g.actions) if a.kind is ActionKind.MOVE and i > 2 and a.play
    )
    action = g.actions[index]
    assert action.dice is not None
    forged_dice = (action.dice[0] % 6 + 1, action.dice[1])
    forged = dataclasses.replace(action, dice=forged_dice)
    games = (dataclasses.replace(g, actions=(*g.actions[:index], forged, *g.actions[index + 1 :])),)
    report = verify_record(dataclasses.replace(record, games=games + record.games[1:]), dice)
    assert not report.ok
    assert any(f"game 1, action {index + 1}: rolled" in p for p in report.problems)


def test_a_tampered_dice_log_is_detected() -> None:
    record, dice = fair_match(5)
    log = list(dice.log)
    log[7] = log[7] % 6 + 1
    report = verify_record(record, dataclasses.replace(dice, log=tuple(log)))
    assert any(p.startswith("die 8: the seed gives") for p in report.problems)


def test_a_tampered_seed_is_detected() -> None:
    record, dice = fair_match(6)
    assert dice.server_seed is not None
    other = ("0" if dice.server_seed[0] != "0" else "1") + dice.server_seed[1:]
    with pytest.raises(CommitmentMismatchError):
        verify_record(record, dataclasses.replace(dice, server_seed=other))


def test_nothing_to_verify() -> None:
    record, dice = fair_match(7, length=1)
    with pytest.raises(UnverifiableRecordError, match="not been revealed"):
        verify_record(record, dataclasses.replace(dice, server_seed=None))
    with pytest.raises(UnverifiableRecordError, match="no dice commitment"):
        verify_record(record, None)


def test_replay_agrees_with_the_match() -> None:
    record, _ = fair_match(8)
    replayed = replay(record)
    assert replayed.final_score[0] >= 5 or replayed.final_score[1] >= 5
