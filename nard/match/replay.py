"""Replaying a recorded match through the rules, and what it proves.

:func:`replay` takes a :class:`~nard.notation.records.MatchRecord` (read from
``.mat``, SGF or nard's JSON) and plays every action through a
:class:`~nard.match.match.Match` or :class:`~nard.match.match.Session`: each
roll, play and cube action must be legal where it stands. The first one that
is not raises :class:`RecordError` naming the game, the action and the reason.
The result lists every game's winner, points, kind of result and cube, and
the final score (plain sums, not capped at the match length).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from nard.core import NardError
from nard.match.dice import DiceSource
from nard.match.game import Decision, Game, MatchStateError, ResultKind
from nard.match.match import Match, MatchRules, MoneyRules, Session
from nard.notation.records import Action, ActionKind, GameRecord, MatchRecord

__all__ = [
    "Observer",
    "RecordError",
    "ReplayedGame",
    "ReplayedMatch",
    "replay",
    "resume",
    "rules_of",
    "walk",
]

Observer = Callable[[int, Game, Action], None]
"""Called by :func:`walk` before each action with the game's number (from 1), the
game as it stands and the action about to be applied."""


class RecordError(NardError, ValueError):
    """A record that the rules reject: names the game, the action and the reason.

    ``action`` is the action refused (None when the fault is not one action's),
    ``where`` its game ("game 3") and ``crawford_game`` whether that game was played
    as the Crawford game."""

    def __init__(
        self,
        message: str,
        *,
        action: Action | None = None,
        where: str = "",
        crawford_game: bool = False,
    ) -> None:
        super().__init__(message)
        self.action = action
        self.where = where
        self.crawford_game = crawford_game


@dataclass(frozen=True)
class ReplayedGame:
    """One game as the rules scored it."""

    number: int
    winner: int
    points: int
    result: ResultKind
    cube: int
    game: Game


@dataclass(frozen=True)
class ReplayedMatch:
    """A whole record, replayed."""

    match_length: int
    games: tuple[ReplayedGame, ...]
    final_score: tuple[int, int]
    crawford_rule: bool = True
    """The Crawford rule the match was replayed under."""
    notes: tuple[str, ...] = ()
    """What the replay inferred that the record did not say."""

    def to_json(self) -> dict[str, Any]:
        """The summary ``nard replay --json`` prints."""
        return {
            "match_length": self.match_length,
            "games": [
                {"winner": g.winner, "points": g.points, "result": g.result.value, "cube": g.cube}
                for g in self.games
            ],
            "final_score": list(self.final_score),
            "crawford_rule": self.crawford_rule,
            "notes": list(self.notes),
        }


def _describe(action: Action) -> str:
    text = f"player {action.player} {action.kind.value}"
    if action.dice:
        text += f" {action.dice[0]}{action.dice[1]}"
    if action.play:
        text += f" {action.play}"
    if action.cube:
        text += f" to {action.cube}"
    if action.resign:
        text += f" {action.resign}"
    return text


def replay(record: MatchRecord, *, crawford: bool | None = None) -> ReplayedMatch:
    """Replay ``record`` through the rules; raises :class:`RecordError` on the first fault.

    ``crawford`` overrides the record's Crawford rule (a ``.mat`` file cannot
    say that a match was played without it). Left unsaid (None), a record that
    doubles in what would be the Crawford game was played without the rule: it
    is replayed so, and the result's ``notes`` say so (gnubg accepts such files).
    """
    if crawford is not None:
        return _replay(dataclasses.replace(record, crawford_rule=crawford))
    try:
        return _replay(record)
    except RecordError as exc:
        doubled = exc.action is not None and exc.action.kind is ActionKind.DOUBLE
        if not (record.match_length and record.crawford_rule and exc.crawford_game and doubled):
            raise
        try:
            replayed = _replay(dataclasses.replace(record, crawford_rule=False))
        except RecordError:
            raise exc from None
        note = f"the Crawford rule was off ({exc.where} doubles in what would be the Crawford game)"
        return dataclasses.replace(replayed, notes=(*replayed.notes, note))


def walk(record: MatchRecord, observe: Observer, *, crawford: bool | None = None) -> ReplayedMatch:
    """:func:`replay` ``record``, showing ``observe`` every game before each of its actions.

    The record is checked first (and its Crawford rule inferred as :func:`replay`
    does), so ``observe`` only sees a record the rules accept. The acceptance of a
    concession made off the resigner's turn is applied with it, unseen. ``observe``
    must not change the game.
    """
    replayed = replay(record, crawford=crawford)
    games = rules_of(dataclasses.replace(record, crawford_rule=replayed.crawford_rule))
    for number, game_record in enumerate(record.games, start=1):
        game, where = _start_game(games, game_record, number)
        _apply_actions(game, game_record, where, functools.partial(observe, number))
        if not game.is_over:
            _conclude_by_resignation(game, game_record, where)
    return replayed


def rules_of(record: MatchRecord, dice: DiceSource | None = None) -> Match | Session:
    """A fresh match or session under the rules ``record`` says it was played by
    (beavers, raccoons and their limit read from its actions), rolling ``dice``."""
    beavers = any(a.kind is ActionKind.BEAVER for g in record.games for a in g.actions)
    raccoons = any(a.kind is ActionKind.RACCOON for g in record.games for a in g.actions)
    animals = max((_longest_chain(g) for g in record.games), default=0)
    try:
        if record.match_length:
            return Match(
                record.match_length,
                MatchRules(
                    cube=record.cube,
                    cube_cap=MatchRules.cube_cap if record.cube_cap is None else record.cube_cap,
                    crawford=record.crawford_rule,
                    holland=record.holland,
                    backgammon=record.backgammon,
                ),
                dice,
            )
        rules = MoneyRules(
            cube=record.cube,
            jacoby=record.jacoby,
            beavers=beavers,
            raccoons=raccoons,
            cube_cap=record.cube_cap,
            animals=animals if beavers else None,
            automatic_doubles=record.automatic_doubles,
            backgammon=record.backgammon,
        )
        return Session(rules, dice)
    except ValueError as exc:
        raise RecordError(f"invalid record: {exc}") from None


def _automatic_doubles(game: Game, record: GameRecord, where: str) -> None:
    """The tied opening rolls that doubled the cube before ``record``'s game began."""
    for _ in range(record.automatic_doubles):
        before = game.cube_value
        game.opening_roll((1, 1))  # a tie: its faces do not matter to the rules
        if game.cube_value == before:
            raise RecordError(
                f"{where}: the record has {record.automatic_doubles} automatic doubles, "
                "more than the rules allow"
            )


def _replay(record: MatchRecord) -> ReplayedMatch:
    games = rules_of(record)
    replayed: list[ReplayedGame] = []
    for number, game_record in enumerate(record.games, start=1):
        game, where = _start_game(games, game_record, number)
        _replay_game(game, game_record, where)
        result = game.result
        assert result is not None
        replayed.append(
            ReplayedGame(number, result.winner, result.points, result.kind, result.cube, game)
        )
    return ReplayedMatch(
        record.match_length, tuple(replayed), games.score, crawford_rule=record.crawford_rule
    )


def resume(record: MatchRecord, games: Match | Session) -> Game | None:
    """Replay ``record`` into ``games`` (fresh, under the record's rules, with the dice
    to go on with) to play on: every game but the last must be complete; the last
    may stop anywhere (a roll not yet played included) and is returned, to be played
    on (``None`` when it is over and the next game is due).

    Raises :class:`RecordError` like :func:`replay`.
    """
    if games.games:
        raise ValueError("resume into a fresh match or session")
    if record.match_length != (games.length if isinstance(games, Match) else 0):
        raise RecordError(
            f"the record is a {record.match_length or 'money'}-point record, "
            "not the kind of play being resumed"
        )
    last: Game | None = None
    for number, game_record in enumerate(record.games, start=1):
        if last is not None and not last.is_over:
            raise RecordError(f"game {number}: game {number - 1} stops before its end")
        last, where = _start_game(games, game_record, number)
        _apply_actions(last, game_record, where)
        if not last.is_over and game_record.winner is not None:
            _conclude_by_resignation(last, game_record, where)
    if last is None or last.is_over:
        return None
    return last


def _start_game(games: Match | Session, record: GameRecord, number: int) -> tuple[Game, str]:
    """The next game of ``games`` for ``record`` (its score checked, its automatic
    doubles made), and how errors name it."""
    where = f"game {number}"
    if isinstance(games, Match) and games.is_over:
        raise RecordError(f"{where}: the match was already over at {games.score}")
    if record.score != games.score:
        raise RecordError(
            f"{where}: the record gives the score {record.score[0]}-"
            f"{record.score[1]} but the games before make it "
            f"{games.score[0]}-{games.score[1]}"
        )
    game = games.new_game()
    _automatic_doubles(game, record, where)
    return game, where


def _apply_actions(
    game: Game,
    record: GameRecord,
    where: str,
    observe: Callable[[Game, Action], None] | None = None,
) -> None:
    actions = record.actions
    skip = False
    for index, action in enumerate(actions, start=1):
        if skip:  # the acceptance of a concession, made with it
            skip = False
            continue
        at = f"{where}, action {index} ({_describe(action)})"
        if game.is_over:
            raise RecordError(f"{at}: the game was already over")
        if observe is not None:
            observe(game, action)
        try:
            following = actions[index] if index < len(actions) else None
            if _is_concession(game, action, following):
                # Resigned off the resigner's turn and accepted (Game.concede's record).
                game.concede(action.player, action.resign or 1)
                skip = True
            else:
                _apply(game, action)
        except (MatchStateError, ValueError) as exc:
            raise RecordError(
                f"{at}: {exc}", action=action, where=where, crawford_game=game.options.crawford
            ) from None


def _is_concession(game: Game, action: Action, following: Action | None) -> bool:
    """A resignation by the player not on roll, accepted at once by the other."""
    return (
        action.kind is ActionKind.RESIGN
        and game.decision.value not in ("opening roll", "game over")
        and action.player != game.on_roll
        and following is not None
        and following.kind is ActionKind.ACCEPT
        and following.player != action.player
    )


def _replay_game(game: Game, record: GameRecord, where: str) -> None:
    _apply_actions(game, record, where)
    if not game.is_over:
        _conclude_by_resignation(game, record, where)
    result = game.result
    assert result is not None
    if record.winner is not None and record.winner != result.winner:
        raise RecordError(
            f"{where}: the record says player {record.winner} won, "
            f"but the rules give the game to player {result.winner}"
        )
    if record.points is not None and record.points != result.points:
        raise RecordError(
            f"{where}: the record says {record.points} points, "
            f"but the rules score the game {result.points} ({result.kind.value}, "
            f"cube {result.cube})"
        )


def _longest_chain(game: GameRecord) -> int:
    """The most beavers and raccoons in a row after one double in ``game``."""
    longest = run = 0
    for action in game.actions:
        if action.kind in (ActionKind.BEAVER, ActionKind.RACCOON):
            run += 1
            longest = max(longest, run)
        elif action.kind is not ActionKind.TAKE:
            run = 0
    return longest


def _apply(game: Game, action: Action) -> None:
    kind = action.kind
    if game.decision is Decision.ACCEPT_OR_BEAVER and kind not in (
        ActionKind.TAKE,
        ActionKind.BEAVER,
    ):
        game.take()  # records leave the acceptance of a raccoon implied
    actor = game.on_roll if kind in _BY_ROLLER else 1 - game.on_roll
    if game.decision.value != "opening roll" and action.player != actor:
        raise ValueError(
            f"it is player {actor}'s {'turn' if kind in _BY_ROLLER else 'answer'}, "
            f"not player {action.player}'s"
        )
    if kind is ActionKind.MOVE:
        if action.dice is None:
            raise ValueError("a move without dice")
        d1, d2 = action.dice
        if game.decision.value == "play":
            # The roll was recorded before (rolled, then a resignation was declined).
            if game.dice is None or sorted(game.dice) != sorted((d1, d2)):
                raise ValueError(f"the dice rolled were {game.dice}, not {d1}{d2}")
        elif game.decision.value == "opening roll":
            if d1 == d2:
                raise ValueError(f"an opening roll cannot be a double ({d1}{d2})")
            hi, lo = max(d1, d2), min(d1, d2)
            game.opening_roll((hi, lo) if action.player == 0 else (lo, hi))
        else:
            game.roll((d1, d2))
        if game.dice is None:  # nothing could be played: the turn has passed
            if action.play:
                raise ValueError(f"{action.play!r} was played but the roll cannot be played")
            return
        if action.play is None:
            return  # rolled, not played (a resignation follows)
        if not action.play:
            raise ValueError(
                f"no play recorded but {d1}{d2} can be played "
                f"(in position {game.position.position_id()})"
            )
        game.play(action.play)
    elif kind is ActionKind.DOUBLE:
        game.double()
        _check_cube(game, action, game.cube_value * 2)
    elif kind is ActionKind.TAKE:
        game.take()
    elif kind is ActionKind.DROP:
        game.pass_double()
    elif kind is ActionKind.BEAVER:
        game.beaver()
        _check_cube(game, action, game.cube_value)
    elif kind is ActionKind.RACCOON:
        game.raccoon()
        _check_cube(game, action, game.cube_value)
    elif kind is ActionKind.RESIGN:
        game.resign(action.resign or 1)
    elif kind is ActionKind.ACCEPT:
        game.accept()
    elif kind is ActionKind.REJECT:
        game.reject()


_BY_ROLLER = frozenset({ActionKind.MOVE, ActionKind.DOUBLE, ActionKind.RESIGN, ActionKind.RACCOON})


def _check_cube(game: Game, action: Action, value: int) -> None:
    if action.cube is not None and action.cube != value:
        raise ValueError(f"the cube goes to {value}, not {action.cube}")


def _conclude_by_resignation(game: Game, record: GameRecord, where: str) -> None:
    """A game that stops with checkers on the board ended by a resignation.

    gnubg's ``.mat`` files write only ``Wins N points`` for it: N must be 1, 2
    or 3 times the cube, and the loser resigns it.
    """
    if record.winner is None or record.points is None:
        raise RecordError(f"{where}: the record ends before the game does (truncated?)")
    level, rest = divmod(record.points, game.cube_value)
    if rest or level not in (1, 2, 3):
        raise RecordError(
            f"{where}: the game stops with checkers on the board, and {record.points} "
            f"points are not a resignation of 1, 2 or 3 times the cube ({game.cube_value})"
        )
    try:
        game.concede(1 - record.winner, level)
    except MatchStateError as exc:
        raise RecordError(f"{where}: {exc}") from None
