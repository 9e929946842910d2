"""Checking a finished match played with provably fair dice (RULES.md 11, seed 004).

Three things must hold: the client seed is the players' contributions joined
in seat order (when the record lists them), every die in the record's dice log
is the one the revealed server seed gives (and the seed is the one committed
to before the match), and every roll in the games is the next dice of that log,
tied opening rolls included, with the opening roll played by the player whose
die is higher. ``nard verify RECORD`` runs :func:`verify_record`; the verify
page's ``verifyRecord`` (``nard/server/static/verify.js``) makes the same checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from nard.core import NardError
from nard.match.dice import (
    CommitmentMismatchError,
    InvalidFairDiceError,
    check_contribution,
    combine_contributions,
    verify_rolls,
)
from nard.notation.json_record import DiceCommitment
from nard.notation.records import ActionKind, MatchRecord

__all__ = ["UnverifiableRecordError", "Verification", "verify_record"]


class UnverifiableRecordError(NardError, ValueError):
    """A record that cannot be checked: no dice commitment, or the seed not revealed."""


@dataclass(frozen=True)
class Verification:
    """The outcome of :func:`verify_record`: ``problems`` is empty when all is well."""

    dice_checked: int
    rolls_checked: int
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_record(record: MatchRecord, dice: DiceCommitment | None) -> Verification:
    """Recompute every die of ``record`` from its revealed seed and compare.

    Every way the record can fail is one of ``problems``: a contribution that
    breaks the rules or a client seed that is not the contributions joined, a
    revealed seed that is not the committed one (or not 64 hex digits), a die
    the seed does not give, a roll of the games that is not the log's next
    one, dice of the log that no roll used. :class:`UnverifiableRecordError`
    when there is nothing to check (no commitment, or the seed not revealed).
    """
    if dice is None:
        raise UnverifiableRecordError("the record has no dice commitment: nothing to verify")
    if dice.server_seed is None:
        raise UnverifiableRecordError(
            "the server seed has not been revealed yet: it is published after the match"
        )
    problems = _contribution_problems(dice)
    try:
        mismatches = verify_rolls(dice.server_seed, dice.commitment, dice.client_seed, dice.log)
    except CommitmentMismatchError as exc:
        # Not the committed seed: no die can be trusted, so none is checked.
        return Verification(0, 0, (*problems, str(exc)))
    except InvalidFairDiceError as exc:
        return Verification(0, 0, (*problems, f"the dice cannot be recomputed: {exc}"))
    problems += [
        f"die {m.index + 1}: the seed gives {m.expected}, the dice log has {m.recorded}"
        for m in mismatches
    ]
    rolls, roll_problems = _rolls_against_log(record, dice.log, dice.preamble)
    return Verification(len(dice.log), rolls, (*problems, *roll_problems))


def _contribution_problems(dice: DiceCommitment) -> list[str]:
    """The contributions' rules, and the client seed as their join (docs/fair-dice.md)."""
    if not dice.contributions:
        return []  # an older record: one client seed, given as it is
    problems = []
    last_seat = -1
    for c in dice.contributions:
        who = f"the contribution of seat {c.seat} ({c.player})"
        if c.seat <= last_seat:
            problems.append(f"{who} follows seat {last_seat}: contributions are in seat order")
        last_seat = max(last_seat, c.seat)
        if c.source == "timeout":
            if c.seed:
                problems.append(f"{who} is marked as a timeout but is {c.seed!r}, not empty")
        elif c.source == "player":
            try:
                check_contribution(c.seed)
            except InvalidFairDiceError as exc:
                problems.append(f"{who}: {exc}")
        else:
            problems.append(f"{who} has an unknown source {c.source!r}")
    joined = combine_contributions([c.seed for c in dice.contributions])
    if dice.client_seed != joined:
        problems.append(
            f"the client seed {dice.client_seed!r} is not the contributions joined in seat "
            f"order, {joined!r}"
        )
    return problems


def _rolls_against_log(
    record: MatchRecord, log: tuple[int, ...], preamble: int
) -> tuple[int, list[str]]:
    """How many rolls the games show, and where they differ from the log."""
    problems: list[str] = []
    used = preamble  # dice rolled before the first game (a chouette's seating)
    rolls = 0
    for game in record.games:
        opening = True
        unplayed: tuple[int, tuple[int, int]] | None = None  # rolled, not yet played
        for index, action in enumerate(game.actions, start=1):
            if action.kind is not ActionKind.MOVE or action.dice is None:
                continue
            where = f"game {game.number}, action {index}"
            rolled = (action.dice[0], action.dice[1])
            if unplayed == (action.player, rolled):
                unplayed = None
                continue  # the play of dice already counted when they were rolled
            unplayed = (action.player, rolled) if action.play is None else None
            if opening:
                # Tied opening rolls are rolled again: skip them in the log.
                while used + 1 < len(log) and log[used] == log[used + 1]:
                    used += 2
            pair = log[used : used + 2]
            rolls += 1
            used += 2
            if len(pair) < 2:
                problems.append(f"{where}: rolled {_dice(rolled)} but the dice log has ended")
            elif opening:
                # Player 0's die first in the log; the higher die moves first, and
                # the record shows the mover's die first.
                starter = 0 if pair[0] > pair[1] else 1
                expected = (pair[starter], pair[1 - starter])
                if action.player != starter:
                    problems.append(
                        f"{where}: player {action.player} opened with {_dice(rolled)} but the "
                        f"dice log gives player 0 {pair[0]} and player 1 {pair[1]}, so player "
                        f"{starter} opens with {_dice(expected)} (dice {used - 1}-{used})"
                    )
                elif rolled != expected:
                    problems.append(
                        f"{where}: rolled {_dice(rolled)} but the dice log gives "
                        f"{_dice(expected)} (dice {used - 1}-{used})"
                    )
            elif rolled != (pair[0], pair[1]):
                problems.append(
                    f"{where}: rolled {_dice(rolled)} but the dice log gives "
                    f"{_dice((pair[0], pair[1]))} (dice {used - 1}-{used})"
                )
            opening = False
    if used < len(log):
        problems.append(f"the dice log has {len(log) - used} dice that no roll used")
    return rolls, problems


def _dice(d: tuple[int, int]) -> str:
    return f"{d[0]}-{d[1]}"
