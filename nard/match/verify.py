"""Checking a finished match played with provably fair dice (RULES.md 11, seed 004).

Two things must hold: every die in the record's dice log is the one the
revealed server seed gives (and the seed is the one committed to before the
match), and every roll in the games is the next dice of that log, tied opening
rolls included. ``nard verify RECORD`` runs :func:`verify_record`.
"""

from __future__ import annotations

from dataclasses import dataclass

from nard.core import NardError
from nard.match.dice import verify_rolls
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

    Raises :class:`~nard.match.dice.CommitmentMismatchError` when the revealed
    seed is not the one committed to, :class:`UnverifiableRecordError` when
    there is nothing to check.
    """
    if dice is None:
        raise UnverifiableRecordError("the record has no dice commitment: nothing to verify")
    if dice.server_seed is None:
        raise UnverifiableRecordError(
            "the server seed has not been revealed yet: it is published after the match"
        )
    problems = [
        f"die {m.index + 1}: the seed gives {m.expected}, the dice log has {m.recorded}"
        for m in verify_rolls(dice.server_seed, dice.commitment, dice.client_seed, dice.log)
    ]
    log = dice.log
    used = dice.preamble  # dice rolled before the first game (a chouette's seating)
    rolls = 0
    for game in record.games:
        opening = True
        unplayed: tuple[int, tuple[int, int]] | None = None  # rolled, not yet played
        for index, action in enumerate(game.actions, start=1):
            if action.kind is not ActionKind.MOVE or action.dice is None:
                continue
            where = f"game {game.number}, action {index}"
            if unplayed == (action.player, tuple(action.dice)):
                unplayed = None
                continue  # the play of dice already counted when they were rolled
            unplayed = (action.player, action.dice) if action.play is None else None
            if opening:
                # Tied opening rolls are rolled again: skip them in the log.
                while used + 1 < len(log) and log[used] == log[used + 1]:
                    used += 2
                pair = log[used : used + 2]
                expected = None
                if len(pair) == 2:
                    mover_die = pair[action.player]
                    expected = (mover_die, pair[1 - action.player])
                opening = False
            else:
                pair = log[used : used + 2]
                expected = (pair[0], pair[1]) if len(pair) == 2 else None
            rolls += 1
            used += 2
            if expected is None:
                problems.append(f"{where}: rolled {_dice(action.dice)} but the dice log has ended")
            elif tuple(action.dice) != expected:
                problems.append(
                    f"{where}: rolled {_dice(action.dice)} but the dice log gives "
                    f"{_dice(expected)} (dice {used - 1}-{used})"
                )
    if used < len(log):
        problems.append(f"the dice log has {len(log) - used} dice that no roll used")
    return Verification(len(log), rolls, tuple(problems))


def _dice(d: tuple[int, int]) -> str:
    return f"{d[0]}-{d[1]}"
