"""Provably fair dice end to end: play with FairDice, record, reveal, verify, tamper."""

from __future__ import annotations

import dataclasses
import itertools
import random

import pytest

from nard.match import FairDice, Match, replay
from nard.match.dice import RecordingDice, combine_contributions
from nard.match.verify import UnverifiableRecordError, verify_record
from nard.notation.json_record import DiceCommitment, SeedContribution, read_json, write_json
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
    report = verify_record(record, dataclasses.replace(dice, server_seed=other))
    # No die can be trusted, so none is checked: one problem, the seed.
    (problem,) = report.problems
    assert problem.startswith(f"server seed {other!r} does not match the commitment: its SHA-256")
    assert report.dice_checked == 0


def test_a_malformed_seed_is_a_problem() -> None:
    record, dice = fair_match(6, length=1)
    report = verify_record(record, dataclasses.replace(dice, server_seed="xyz"))
    assert report.problems == (
        "the dice cannot be recomputed: invalid server_seed_hex 'xyz': expected 64 hex digits",
    )


def _flip_first_game(record: MatchRecord, opening_dice: tuple[int, int]) -> MatchRecord:
    """Game 1 with the players' parts exchanged and the opening roll shown as given."""
    g = record.games[0]
    actions = [dataclasses.replace(a, player=1 - a.player) for a in g.actions]
    actions[0] = dataclasses.replace(actions[0], dice=opening_dice)
    winner = None if g.winner is None else 1 - g.winner
    game = dataclasses.replace(g, actions=tuple(actions), winner=winner)
    return dataclasses.replace(record, games=(game, *record.games[1:]))


def test_the_opening_roll_is_played_by_the_higher_die() -> None:
    record, dice = fair_match(9, length=1)
    opening = record.games[0].actions[0]
    assert opening.kind is ActionKind.MOVE and opening.dice is not None
    low_first = (opening.dice[1], opening.dice[0])
    # The other player opening with the dice in the log's order for them: legal
    # by the rules (the opening position is the same for both), wrong by the log.
    forged = _flip_first_game(record, low_first)
    replay(forged)
    report = verify_record(forged, dice)
    assert len(report.problems) == 1
    assert report.problems[0].startswith(
        f"game 1, action 1: player {1 - opening.player} opened with {low_first[0]}-{low_first[1]}"
    )
    assert f"so player {opening.player} opens with" in report.problems[0]


def test_the_opening_roll_shows_the_movers_die_first() -> None:
    record, dice = fair_match(9, length=1)
    opening = record.games[0].actions[0]
    assert opening.dice is not None
    swapped = dataclasses.replace(opening, dice=(opening.dice[1], opening.dice[0]))
    g = record.games[0]
    game = dataclasses.replace(g, actions=(swapped, *g.actions[1:]))
    report = verify_record(dataclasses.replace(record, games=(game,)), dice)
    assert [p.split(":")[0] for p in report.problems] == ["game 1, action 1"]


def test_a_roll_kept_before_a_refused_resignation_uses_its_dice_once() -> None:
    fair = FairDice.new("unplayed", rng=random.Random(3))
    dice = RecordingDice(fair)
    match = Match(1, dice=dice)
    game = match.new_game()
    game.opening_roll()
    game.play(game.legal_plays()[0])
    game.roll()
    game.resign(1)
    game.reject()
    play_random_game(game, random.Random(3))
    record = match.to_record()
    rolled = [a for a in record.games[0].actions if a.kind is ActionKind.MOVE]
    assert rolled[1].play is None and rolled[2].dice == rolled[1].dice
    commitment = DiceCommitment(fair.commitment, fair.client_seed, fair.reveal(), tuple(dice.log))
    report = verify_record(record, commitment)
    assert report.ok, report.problems
    repeats = sum(
        1
        for before, after in itertools.pairwise(rolled)
        if before.play is None and (before.player, before.dice) == (after.player, after.dice)
    )
    assert repeats >= 1 and report.rolls_checked == len(rolled) - repeats


# --- contributions to the client seed ------------------------------------------------


def contributed_match(
    *seeds: str | None, client_seed: str | None = None
) -> tuple[MatchRecord, DiceCommitment]:
    """A one-point match whose client seed is the seats' contributions (None: a timeout)."""
    parts = tuple(
        SeedContribution(i, f"P{i}", s or "", "timeout" if s is None else "player")
        for i, s in enumerate(seeds)
    )
    joined = combine_contributions([c.seed for c in parts])
    fair = FairDice(bytes(range(32)), joined if client_seed is None else client_seed)
    dice = RecordingDice(fair)
    match = Match(1, dice=dice)
    play_random_game(match.new_game(), random.Random(1))
    return match.to_record(), DiceCommitment(
        fair.commitment, fair.client_seed, fair.reveal(), tuple(dice.log), contributions=parts
    )


@pytest.mark.parametrize(
    "seeds", [("ann-7f3a", "bob-19c2"), ("ann-7f3a", None), ("sara",), (None, None, "c")]
)
def test_contributions_that_make_the_client_seed_verify(seeds: tuple[str | None, ...]) -> None:
    record, dice = contributed_match(*seeds)
    report = verify_record(record, dice)
    assert report.ok, report.problems


@pytest.mark.parametrize(
    ("seeds", "problem"),
    [
        (("ann\tx", "bob"), "the contribution of seat 0 (P0): invalid contribution 'ann\\tx': "),
        (("ann", "b" * 65), "the contribution of seat 1 (P1): invalid contribution 'bbbb"),
        (("ann", ""), "the contribution of seat 1 (P1): invalid contribution '': it is empty"),
    ],
)
def test_a_contribution_that_breaks_the_rules_is_a_problem(
    seeds: tuple[str, ...], problem: str
) -> None:
    record, dice = contributed_match(*seeds)
    report = verify_record(record, dice)
    assert len(report.problems) == 1 and report.problems[0].startswith(problem), report.problems


def test_a_timeout_with_a_seed_is_a_problem() -> None:
    record, dice = contributed_match("ann", "late")
    parts = (dice.contributions[0], dataclasses.replace(dice.contributions[1], source="timeout"))
    report = verify_record(record, dataclasses.replace(dice, contributions=parts))
    assert report.problems == (
        "the contribution of seat 1 (P1) is marked as a timeout but is 'late', not empty",
    )


def test_a_client_seed_that_is_not_the_contributions_is_a_problem() -> None:
    record, dice = contributed_match("ann", "bob", client_seed="server-picked")
    report = verify_record(record, dice)
    assert report.problems == (
        "the client seed 'server-picked' is not the contributions joined in seat order, "
        "'ann\\nbob'",
    )


def test_contributions_out_of_seat_order_are_a_problem() -> None:
    record, dice = contributed_match("ann", "bob")
    parts = (dice.contributions[1], dice.contributions[0])
    report = verify_record(
        record, dataclasses.replace(dice, contributions=parts, client_seed="bob\nann")
    )
    assert any("follows seat 1: contributions are in seat order" in p for p in report.problems)


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
