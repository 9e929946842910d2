"""Rebuild tests/data/fair_dice_vectors/: fair-dice match records and their verdicts.

Run from the repository root: ``.venv/bin/python -m tests.data.make_fair_dice_vectors``.
Every vector is one JSON file ``{"name", "description", "verdict", "reason",
"record"}``: ``record`` is a complete nard JSON match record
(``docs/record-format.md``), ``verdict`` what any verifier must say of it:
``"verified"``, ``"tampered"`` (``reason`` says what was changed) or
``"unverifiable"`` (nothing to check yet). The records are real: matches,
sessions and a chouette played by random legal moves on
:class:`~nard.match.FairDice` with the server seed ``bytes(range(32))``, then
(for the tampered ones) changed in one place, so that the games still replay
by the rules and only the dice give the change away. ``nard verify`` and the
verify page (``verify.js``) are both tested against every vector
(``tests/match/test_fair_dice_vectors.py``, ``tests/server/test_verify_vectors.py``);
an independent verifier can be too.
"""

from __future__ import annotations

import dataclasses
import json
import random
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nard.match import Chouette, FairDice, Game, GameAction, Match, MoneyRules, Session, replay
from nard.match.dice import RecordingDice, combine_contributions, fair_die
from nard.notation.json_record import DiceCommitment, SeedContribution, write_json
from nard.notation.records import Action, ActionKind, GameRecord, MatchRecord

OUT = Path(__file__).with_name("fair_dice_vectors")
SEED = bytes(range(32))
OTHER_SEED = bytes(range(1, 33))

Record = tuple[MatchRecord, DiceCommitment]

# How often an optional action is taken when it is offered (rolling on otherwise).
_TAKEN = {
    GameAction.DOUBLE: 0.08,
    GameAction.RESIGN: 0.01,
    GameAction.PASS: 0.25,
    GameAction.BEAVER: 0.3,
    GameAction.RACCOON: 0.3,
    GameAction.ACCEPT: 0.5,
}


def play_random_game(game: Game, rng: random.Random) -> None:
    """Play ``game`` to its end by random legal actions, the same on every run
    (tests.match.random_play's, but with no set or hash order in the choices)."""
    for _ in range(5000):
        if game.is_over:
            return
        legal = sorted(game.legal_actions())
        optional = [a for a in legal if a in _TAKEN and rng.random() < _TAKEN[a]]
        forced = [a for a in legal if a not in _TAKEN]
        action = rng.choice(optional) if optional else rng.choice(forced)
        if action is GameAction.OPENING_ROLL:
            game.opening_roll()
        elif action is GameAction.ROLL:
            game.roll()
        elif action is GameAction.PLAY:
            game.play(rng.choice(sorted(game.legal_plays(), key=lambda p: p.result.position_id())))
        elif action is GameAction.RESIGN:
            game.resign(rng.randint(1, 3))
        elif action is GameAction.PASS:
            game.pass_double()
        else:
            getattr(game, action.value)()
    raise AssertionError("the game did not end in 5000 steps")


def _commitment(fair: FairDice, dice: RecordingDice, **extra: Any) -> DiceCommitment:
    return DiceCommitment(
        fair.commitment, fair.client_seed, fair.reveal(), tuple(dice.log), **extra
    )


def play_match(
    length: int,
    client_seed: str,
    rng_seed: int,
    contributions: Sequence[SeedContribution] = (),
    players: tuple[str, str] = ("Ann", "Bob"),
) -> Record:
    """A match on fair dice, played by random legal actions, its seed revealed."""
    fair = FairDice(SEED, client_seed)
    dice = RecordingDice(fair)
    match = Match(length, dice=dice)
    rng = random.Random(rng_seed)
    while not match.is_over:
        play_random_game(match.new_game(), rng)
    return match.to_record(players), _commitment(fair, dice, contributions=tuple(contributions))


def play_session(client_seed: str, rng_seed: int, games: int) -> Record:
    """A money session (Jacoby, beavers, raccoons) of ``games`` games."""
    fair = FairDice(SEED, client_seed)
    dice = RecordingDice(fair)
    rules = MoneyRules(jacoby=True, beavers=True, raccoons=True)
    session = Session(rules, dice)
    rng = random.Random(rng_seed)
    for _ in range(games):
        play_random_game(session.new_game(), rng)
    return session.to_record(("Ann", "Bob")), _commitment(fair, dice)


def play_chouette(client_seed: str, rng_seed: int, games: int) -> Record:
    """A chouette of three, seated by the dice (the log's preamble), as the server
    records one (``ChouetteTable.record``): player 0 the box, player 1 the team."""
    fair = FairDice(SEED, client_seed)
    dice = RecordingDice(fair)
    names = ["Ann", "Bob", "Cyrus"]
    chouette = Chouette.draw(names, dice, MoneyRules(cube=True, automatic_doubles=0))
    preamble = len(dice.log)
    rng = random.Random(rng_seed)
    played = []
    for _ in range(games):
        current = chouette.new_game()
        play_random_game(current.game, rng)
        played.append(current)
    records = []
    score = [0, 0]
    metadata = {"event": "chouette"}
    for number, current in enumerate(played, start=1):
        result = current.game.result
        assert result is not None
        records.append(
            GameRecord(
                number,
                (score[0], score[1]),
                current.game.actions,
                winner=result.winner,
                points=result.points,
            )
        )
        score[result.winner] += result.points
        metadata[f"game {number}"] = f"box {current.box}; team {', '.join(current.team)}"
    record = MatchRecord(0, tuple(records), players=("box", "team"), metadata=metadata)
    return record, _commitment(fair, dice, preamble=preamble)


def play_with_an_unplayed_roll(client_seed: str, rng_seed: int) -> Record:
    """A one-point match in which a player rolls, offers to resign before playing,
    is refused and then plays: the roll is in the record twice (rolled, then played)."""
    fair = FairDice(SEED, client_seed)
    dice = RecordingDice(fair)
    match = Match(1, dice=dice)
    game = match.new_game()
    rng = random.Random(rng_seed)
    game.opening_roll()
    game.play(rng.choice(sorted(game.legal_plays(), key=lambda p: p.result.position_id())))
    for _ in range(20):  # a roll that can be played (one that cannot passes the turn)
        game.roll()
        if game.legal_plays():
            break
    game.resign(1)
    game.reject()
    play_random_game(game, rng)
    return match.to_record(("Ann", "Bob")), _commitment(fair, dice)


def contributions(*seeds: str | None) -> tuple[SeedContribution, ...]:
    """Seats 0, 1, ... of Ann, Bob, Cyrus...; ``None`` for a seat that timed out."""
    names = ["Ann", "Bob", "Cyrus", "Dara"]
    return tuple(
        SeedContribution(i, names[i], "" if s is None else s, "timeout" if s is None else "player")
        for i, s in enumerate(seeds)
    )


def with_contributions(length: int, rng_seed: int, *seeds: str | None) -> Record:
    parts = contributions(*seeds)
    return play_match(length, combine_contributions([c.seed for c in parts]), rng_seed, parts)


# -- tampering: each changes one thing ----------------------------------------------


def _replace_action(record: MatchRecord, game: int, index: int, action: Action) -> MatchRecord:
    g = record.games[game]
    actions = (*g.actions[:index], action, *g.actions[index + 1 :])
    games = list(record.games)
    games[game] = dataclasses.replace(g, actions=actions)
    return dataclasses.replace(record, games=tuple(games))


def _moves(record: MatchRecord) -> list[tuple[int, int, Action]]:
    """Every played roll after a game's opening roll: (game, action index, action)."""
    out = []
    for gi, g in enumerate(record.games):
        first = next(i for i, a in enumerate(g.actions) if a.kind is ActionKind.MOVE)
        for i, a in enumerate(g.actions):
            if i > first and a.kind is ActionKind.MOVE and a.play and a.dice:
                out.append((gi, i, a))
    return out


def _replays(record: MatchRecord) -> bool:
    try:
        replay(record)
    except ValueError:
        return False
    return True


def swap_a_roll(record: MatchRecord) -> MatchRecord:
    """The two dice of one later roll (not a double) in the other order."""
    for gi, i, a in _moves(record)[3:]:
        assert a.dice is not None
        if a.dice[0] != a.dice[1]:
            return _replace_action(record, gi, i, dataclasses.replace(a, dice=a.dice[::-1]))
    raise AssertionError("no roll to swap")


def change_a_roll(record: MatchRecord) -> MatchRecord:
    """One later roll shown as other dice with which the same play is still legal."""
    for gi, i, a in _moves(record)[3:]:
        assert a.dice is not None
        for other in [(d1, d2) for d1 in range(1, 7) for d2 in range(1, 7)]:
            if sorted(other) == sorted(a.dice):
                continue
            changed = _replace_action(record, gi, i, dataclasses.replace(a, dice=other))
            if _replays(changed):
                return changed
    raise AssertionError("no roll could be changed and stay legal")


def give_the_opening_to_the_other_player(record: MatchRecord) -> MatchRecord:
    """The last game replayed with the players' parts exchanged: the one whose opening
    die was lower opens, showing the dice as (own die, other's die), as the record
    shows an opening roll. The games stay legal (the opening position is the same for
    both), and a verifier that does not ask who opens finds every die in its place."""
    g = record.games[-1]
    first = next(i for i, a in enumerate(g.actions) if a.kind is ActionKind.MOVE)
    actions = []
    for i, a in enumerate(g.actions):
        flipped = dataclasses.replace(a, player=1 - a.player)
        if i == first:
            assert a.dice is not None
            flipped = dataclasses.replace(flipped, dice=(a.dice[1], a.dice[0]))
        actions.append(flipped)
    winner = None if g.winner is None else 1 - g.winner
    game = dataclasses.replace(g, actions=tuple(actions), winner=winner)
    return dataclasses.replace(record, games=(*record.games[:-1], game))


# -- the vectors -------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Vector:
    name: str
    description: str
    verdict: str  # "verified", "tampered" or "unverifiable"
    build: Callable[[], tuple[MatchRecord, DiceCommitment | None]]
    reason: str = ""


def _tamper_dice(base: Record, **changes: Any) -> Record:
    return base[0], dataclasses.replace(base[1], **changes)


def vectors() -> list[Vector]:
    match = play_match(3, "nard", 13)
    fair_log = match[1].log
    changed_log = (*fair_log[:7], fair_log[7] % 6 + 1, *fair_log[8:])
    next_die = fair_die(SEED, "nard", len(fair_log))
    two = with_contributions(1, 2, "ann-7f3a", "bob-19c2")
    return [
        Vector(
            "valid-match",
            "A 3-point match with one client seed given as it is (no contributions).",
            "verified",
            lambda: match,
        ),
        Vector(
            "valid-money-session",
            "A money session of three games (Jacoby, beavers, raccoons, one automatic "
            "double); tied opening rolls stay in the log.",
            "verified",
            lambda: play_session("money", 10, 3),
        ),
        Vector(
            "valid-chouette",
            "A chouette of three seated by one die each (the log's preamble, ties rolled "
            "again), then two games box against team.",
            "verified",
            lambda: play_chouette("chouette", 4, 2),
        ),
        Vector(
            "valid-two-contributions",
            "Two players' contributions (docs/fair-dice.md's example): the client seed is "
            "'ann-7f3a\\nbob-19c2'.",
            "verified",
            lambda: two,
        ),
        Vector(
            "valid-timeout-contribution",
            "Bob gave nothing before the deadline: his contribution is empty, marked "
            "timeout, and the client seed is 'ann-7f3a\\n'.",
            "verified",
            lambda: with_contributions(1, 5, "ann-7f3a", None),
        ),
        Vector(
            "valid-one-contribution",
            "One contribution: the client seed is that contribution itself.",
            "verified",
            lambda: with_contributions(1, 6, "sara"),
        ),
        Vector(
            "valid-unicode-contributions",
            "Contributions outside ASCII: Persian text, and 64 characters beyond the BMP "
            "(64 by Python's len, 128 UTF-16 code units).",
            "verified",
            lambda: with_contributions(1, 7, "علی ۱۴۰۳", "🎲" * 64),
        ),
        Vector(
            "valid-unplayed-roll",
            "A roll offered to resign on and played after the refusal: the same dice "
            "appear twice in the game, once rolled and once played, and use two dice.",
            "verified",
            lambda: play_with_an_unplayed_roll("unplayed", 8),
        ),
        Vector(
            "tampered-log-die-changed",
            "The valid match with die 8 of the log changed.",
            "tampered",
            lambda: _tamper_dice(match, log=changed_log),
            "die 8 of the log is not the one the seed gives",
        ),
        Vector(
            "tampered-roll-swapped",
            "The valid match with the two dice of one later roll swapped in the game.",
            "tampered",
            lambda: (swap_a_roll(match[0]), match[1]),
            "a roll shows its dice in the other order than the log",
        ),
        Vector(
            "tampered-extra-die",
            "The valid match with one more die (the seed's next) at the end of the log.",
            "tampered",
            lambda: _tamper_dice(match, log=(*fair_log, next_die)),
            "the log has a die that no roll used",
        ),
        Vector(
            "tampered-missing-die",
            "The valid match with the last die of the log removed.",
            "tampered",
            lambda: _tamper_dice(match, log=fair_log[:-1]),
            "the last roll is not in the log",
        ),
        Vector(
            "tampered-seed-not-committed",
            "The valid match revealing another seed than the committed one.",
            "tampered",
            lambda: _tamper_dice(match, server_seed=OTHER_SEED.hex()),
            "the revealed seed's SHA-256 is not the commitment",
        ),
        Vector(
            "tampered-seed-malformed",
            "The valid match revealing a seed that is not 64 hex digits.",
            "tampered",
            lambda: _tamper_dice(match, server_seed="zz" + SEED.hex()[2:]),
            "the revealed seed is not 64 hex digits",
        ),
        Vector(
            "tampered-roll-not-in-log",
            "The valid match with one later roll shown as other dice (the play is still "
            "legal with them).",
            "tampered",
            lambda: (change_a_roll(match[0]), match[1]),
            "a roll of the games is not the log's",
        ),
        Vector(
            "tampered-opening-wrong-player",
            "The valid match's last game with the players' parts exchanged: the player "
            "whose opening die was lower opens.",
            "tampered",
            lambda: (give_the_opening_to_the_other_player(match[0]), match[1]),
            "the opening roll is played by the player with the lower die",
        ),
        Vector(
            "tampered-client-seed-not-contributions",
            "The dice come from a client seed the server chose, not from the listed contributions.",
            "tampered",
            lambda: play_match(1, "server-picked", 9, contributions("ann-7f3a", "bob-19c2")),
            "the client seed is not the contributions joined",
        ),
        Vector(
            "tampered-contribution-control-character",
            "A contribution with a tab in it (the client seed is its join, the dice are "
            "the seed's).",
            "tampered",
            lambda: with_contributions(1, 10, "ann\t7f3a", "bob-19c2"),
            "a contribution has a control character",
        ),
        Vector(
            "tampered-contribution-newline",
            "A contribution with a line feed, making three lines of two contributions.",
            "tampered",
            lambda: with_contributions(1, 11, "ann\nx", "bob-19c2"),
            "a contribution has a control character",
        ),
        Vector(
            "tampered-contribution-too-long",
            "A contribution of 65 characters.",
            "tampered",
            lambda: with_contributions(1, 12, "a" * 65, "bob-19c2"),
            "a contribution is longer than 64 characters",
        ),
        Vector(
            "tampered-contribution-empty",
            "An empty contribution said to come from the player (only a timeout is empty).",
            "tampered",
            lambda: with_contributions(1, 13, "ann-7f3a", ""),
            "a player's contribution is empty",
        ),
        Vector(
            "tampered-timeout-not-empty",
            "A contribution marked as a timeout that is not empty.",
            "tampered",
            lambda: _timeout_with_a_seed(),
            "a timeout's contribution is not empty",
        ),
        Vector(
            "unverifiable-seed-not-revealed",
            "The valid match before the seed is revealed (server_seed null).",
            "unverifiable",
            lambda: _tamper_dice(match, server_seed=None),
            "the server seed is not revealed",
        ),
        Vector(
            "unverifiable-no-commitment",
            "The valid match's games without any dice commitment (dice null).",
            "unverifiable",
            lambda: (match[0], None),
            "the record has no dice commitment",
        ),
    ]


def _timeout_with_a_seed() -> Record:
    parts = (
        SeedContribution(0, "Ann", "ann-7f3a", "player"),
        SeedContribution(1, "Bob", "late", "timeout"),
    )
    return play_match(1, combine_contributions([c.seed for c in parts]), 14, parts)


def to_json(vector: Vector) -> str:
    record, dice = vector.build()
    # The games themselves are legal: only the dice can give a change away.
    replay(record)
    doc: dict[str, Any] = {
        "name": vector.name,
        "description": vector.description,
        "verdict": vector.verdict,
    }
    if vector.reason:
        doc["reason"] = vector.reason
    doc["record"] = json.loads(write_json(record, dice))
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    for vector in vectors():
        (OUT / f"{vector.name}.json").write_text(to_json(vector), encoding="utf-8")
        print(vector.name, vector.verdict)


if __name__ == "__main__":
    main()
