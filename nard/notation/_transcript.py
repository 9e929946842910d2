"""What the ``.mat`` and SGF readers and writers share: following a game as it is written.

A file gives each game's actions in its own terms (text such as ``25/22*``, or
SGF's from/to letters). :class:`GameReader` follows them on the board and in
the cube's life, so that every play comes out in standard notation
(``Position.format_play``) and every structural fault (a take with no double,
a roll out of turn, a play the dice do not allow) is reported with the line
and game where the file has it. The rules proper (Crawford, Jacoby, the
points a game is worth) are :mod:`nard.match.replay`'s business.

:func:`walk_game` goes the other way, for the writers: it replays a
:class:`~nard.notation.records.GameRecord` and gives each play's single-die
moves.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from nard.core.errors import IllegalPlayError, InvalidNotationError, InvalidRecordError
from nard.core.position import Play, Position
from nard.notation.records import Action, ActionKind, GameRecord

__all__ = [
    "GameReader",
    "WalkedAction",
    "check_games",
    "crawford_games",
    "ended_by_resignation",
    "find_play",
    "record_error",
    "walk_game",
]


def record_error(
    problem: str, *, line: int | None = None, game: int | None = None
) -> InvalidRecordError:
    """An :class:`InvalidRecordError` whose message starts with where: ``line 12, game 3: ...``."""
    where = ", ".join(
        part
        for part in (
            f"line {line}" if line is not None else "",
            f"game {game}" if game is not None else "",
        )
        if part
    )
    return InvalidRecordError(f"{where}: {problem}" if where else problem)


# -- plays ---------------------------------------------------------------------


def find_play(
    pos: Position,
    dice: tuple[int, int],
    *,
    text: str | None = None,
    pairs: Sequence[tuple[int, int]] | None = None,
) -> Play:
    """The legal play of ``dice`` in ``pos`` that the text or the from/to pairs describe.

    Raises :class:`InvalidNotationError` or :class:`IllegalPlayError`.
    """
    if pairs is not None:
        text = " ".join(f"{_name(a)}/{_name(b)}" for a, b in pairs)
    assert text is not None
    if not pos.legal_plays(dice):
        raise IllegalPlayError(
            f"illegal play {text!r} with {dice[0]}-{dice[1]} in position "
            f"{pos.position_id()}: no move is possible with this roll"
        )
    return pos.parse_play(text, dice)


def _name(point: int) -> str:
    return "bar" if point == 25 else "off" if point == 0 else str(point)


# -- reading -------------------------------------------------------------------


@dataclass(frozen=True)
class _Offer:
    player: int
    value: int


class GameReader:
    """Follows one game's actions as a file gives them, checking and normalising each.

    ``player`` is 0 or 1; ``line`` is where the file has the action, for
    messages. Cube actions keep gnubg's conventions: a double by the side
    just doubled is a beaver (a raccoon when the original doubler redoubles
    again), and the take that gnubg's SGF writes after a beaver is implied,
    so it is not kept (nor is one that a ``.mat`` might write).
    """

    def __init__(self, number: int) -> None:
        self.number = number
        self.actions: list[Action] = []
        self._pos = Position()
        self._view = 0  # whose side ``_pos`` is seen from
        self._turn: int | None = None  # who rolls (or doubles) next; None before the opening
        self._cube = 1
        self._offers: list[_Offer] = []
        self._ended_by: str | None = None  # "play" or "drop"
        self._last_mover: int | None = None
        self._unplayed: tuple[int, int] | None = None  # (line, player) of a roll left unplayed
        self._last_line: int | None = None

    # -- helpers
    def _error(self, problem: str, line: int | None) -> InvalidRecordError:
        return record_error(problem, line=line, game=self.number)

    def _check_open(self, what: str, line: int | None) -> None:
        if self._ended_by is not None:
            ended = "was played out" if self._ended_by == "play" else "ended with a drop"
            raise self._error(f"{what} after the game {ended}", line)
        if self._unplayed is not None:
            raise self._error(
                f"{what} after player {self._unplayed[1]}'s roll on line {self._unplayed[0]} "
                "that was not played (only a resignation may follow it)",
                line,
            )

    # -- actions
    def move(
        self,
        player: int,
        dice: tuple[int, int],
        line: int | None,
        *,
        text: str | None = None,
        pairs: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        """A roll of ``dice`` and its play, written as ``text`` or from/to ``pairs``
        (neither, or empty: nothing written)."""
        self._last_line = line
        self._check_open(f"player {player} rolls {dice[0]}{dice[1]}", line)
        if self._offers:
            if len(self._offers) > 1 and player == self._offers[0].player:
                self._settle()  # the beaver is taken by rolling on, as gnubg writes it
            else:
                offer = self._offers[-1]
                raise self._error(
                    f"player {player} rolls {dice[0]}{dice[1]} while player {offer.player}'s "
                    f"double to {offer.value} is unanswered",
                    line,
                )
        if self._turn is not None and player != self._turn:
            raise self._error(
                f"player {player} rolls {dice[0]}{dice[1]} but it is player {self._turn}'s turn",
                line,
            )
        for die in dice:
            if not 1 <= die <= 6:
                raise self._error(f"invalid dice {dice[0]}{dice[1]}: each die must be 1-6", line)
        if self._view != player:
            self._pos = self._pos.flip()
            self._view = player
        written = bool(pairs) or bool(text and text.strip())
        play_text: str | None
        if written:
            try:
                play = find_play(self._pos, dice, text=text if pairs is None else None, pairs=pairs)
            except (InvalidNotationError, IllegalPlayError) as exc:
                raise self._error(f"player {player}: {exc}", line) from None
            play_text = self._pos.format_play(play)
            self._pos = play.result
            self._view = 1 - player
        elif self._pos.legal_plays(dice):
            play_text = None  # rolled, then resigned (XG writes "???")
            self._unplayed = (line or 0, player)
        else:
            play_text = ""
        self.actions.append(Action(player, ActionKind.MOVE, dice=dice, play=play_text))
        self._turn = 1 - player
        self._last_mover = player
        if self._pos.is_game_over():
            self._ended_by = "play"

    def double(
        self, player: int, line: int | None, value: int | None = None, *, word: str = "double"
    ) -> None:
        """A double; or, while a double is unanswered, the doubled side's beaver
        (and the doubler's raccoon after it). ``value`` is the cube as written."""
        self._last_line = line
        self._check_open(f"player {player} {word}s", line)
        if self._offers:
            last = self._offers[-1]
            if player == last.player:
                raise self._error(
                    f"player {player} {word}s again before player {1 - player} answers "
                    f"the double to {last.value}",
                    line,
                )
            kind = ActionKind.BEAVER if player != self._offers[0].player else ActionKind.RACCOON
            new = last.value * 2
        else:
            if word != "double":
                raise self._error(f"a {word} without a double", line)
            if self._turn is None:
                raise self._error(f"player {player} doubles before the opening roll", line)
            if player != self._turn:
                raise self._error(
                    f"player {player} doubles but it is player {self._turn}'s turn", line
                )
            kind = ActionKind.DOUBLE
            new = self._cube * 2
        if value is not None and value != new:
            raise self._error(
                f"player {player}'s {word} takes the cube to {new}, not {value}", line
            )
        self._offers.append(_Offer(player, new))
        self.actions.append(Action(player, kind, cube=new))

    def take(self, player: int, line: int | None) -> None:
        """A take (after a beaver: the implied acceptance, which is not kept)."""
        self._last_line = line
        self._check_open(f"player {player} takes", line)
        if not self._offers:
            raise self._error(f"player {player} takes but no double was offered", line)
        last = self._offers[-1]
        if player == last.player:
            raise self._error(f"player {player} takes their own double to {last.value}", line)
        implied = len(self._offers) > 1
        self._settle()
        if not implied:
            self.actions.append(Action(player, ActionKind.TAKE))

    def drop(self, player: int, line: int | None) -> None:
        """A drop (pass): the game ends."""
        self._last_line = line
        self._check_open(f"player {player} drops", line)
        if not self._offers:
            raise self._error(f"player {player} drops but no double was offered", line)
        last = self._offers[-1]
        if player == last.player:
            raise self._error(f"player {player} drops their own double to {last.value}", line)
        self.actions.append(Action(player, ActionKind.DROP))
        self._ended_by = "drop"
        self._last_mover = last.player

    def _settle(self) -> None:
        last = self._offers[-1]
        # Who owns the cube now is for the rules to say (gnubg gives it to the
        # side first doubled even after a raccoon, whose maker should keep it).
        self._cube = last.value
        self._offers = []

    # -- the end
    def finish(
        self,
        score: tuple[int, int],
        winner: int | None,
        points: int | None,
        *,
        line: int | None,
        resigned: bool | None = None,
        crawford: bool = False,
        allow_unfinished: bool = False,
    ) -> GameRecord:
        """The game as read, given the result the file writes (``winner``/``points``,
        None if it writes none). ``resigned`` is what the file says about a
        resignation (SGF's ``R``), None when it does not say (``.mat``)."""
        if winner is not None:
            if self._ended_by is not None and winner != self._last_mover:
                how = "bore off last" if self._ended_by == "play" else "doubled and was dropped"
                raise self._error(
                    f"the result gives the game to player {winner}, but player "
                    f"{self._last_mover} {how}",
                    line,
                )
            if self._ended_by is not None and resigned:
                how = "played out" if self._ended_by == "play" else "ended with a drop"
                raise self._error(f"the result says resigned, but the game was {how}", line)
            if self._ended_by is None and resigned is False:
                raise self._error(
                    "the result says the game was won without a resignation, but it is not over",
                    line,
                )
            if points is not None and points < 1:
                raise self._error(f"a game won for {points} points", line)
        elif not allow_unfinished:
            at = line if line is not None else self._last_line
            if self._ended_by is not None:
                raise self._error("the game is over but no result is written (truncated?)", at)
            raise self._error(
                "the game stops before it is over and no result is written (truncated?)", at
            )
        return GameRecord(
            number=self.number,
            score=score,
            actions=tuple(self.actions),
            winner=winner,
            points=points,
            crawford=crawford,
        )


def check_games(
    games: Sequence[GameRecord],
    match_length: int,
    lines: Sequence[int | None],
    *,
    allow_unfinished: bool = False,
) -> None:
    """Games numbered 1, 2, ... with scores that follow from the results, none after
    the match is won, and (unless ``allow_unfinished``) a match played to the end."""
    for i, game in enumerate(games):
        line = lines[i]
        if game.number != i + 1:
            raise record_error(
                f"game {game.number} is not game {i + 1}: games must be numbered in order from 1",
                line=line,
                game=game.number,
            )
        if i:
            before = games[i - 1]
            if before.winner is None or before.points is None:
                raise record_error(
                    f"game {before.number} has no result, yet game {game.number} follows",
                    line=line,
                    game=game.number,
                )
            expected = list(before.score)
            expected[before.winner] += before.points
            if list(game.score) != expected:
                raise record_error(
                    f"the score {game.score[0]}-{game.score[1]} does not follow from game "
                    f"{before.number} (player {before.winner} won {before.points} from "
                    f"{before.score[0]}-{before.score[1]}: {expected[0]}-{expected[1]})",
                    line=line,
                    game=game.number,
                )
        if match_length and max(game.score) >= match_length:
            raise record_error(
                f"the match to {match_length} was already won at {game.score[0]}-{game.score[1]}",
                line=line,
                game=game.number,
            )
    last = games[-1]
    if match_length and not allow_unfinished and last.winner is not None and last.points:
        final = list(last.score)
        final[last.winner] += last.points
        if max(final) < match_length:
            raise record_error(
                f"the match to {match_length} stops at {final[0]}-{final[1]} before anyone "
                "has won it (truncated? pass allow_unfinished=True to read a match in progress)",
                game=last.number,
            )


def crawford_games(scores: Sequence[tuple[int, int]], match_length: int) -> list[bool]:
    """Which games are Crawford games, from the scores alone (``.mat`` has no marker):
    the first where exactly one side needs one point."""
    out: list[bool] = []
    seen = False
    for s0, s1 in scores:
        is_crawford = (
            match_length > 1 and not seen and (s0 == match_length - 1) != (s1 == match_length - 1)
        )
        seen = seen or is_crawford
        out.append(is_crawford)
    return out


# -- writing -------------------------------------------------------------------


@dataclass(frozen=True)
class WalkedAction:
    """One action of a record, as the writers need it."""

    action: Action
    play: Play | None  # the play of a MOVE (None: no play, or none written)
    implied_take: int | None  # before this action, gnubg writes a take by this player
    cube: int | None  # the value a double, beaver or raccoon offers


def walk_game(game: GameRecord) -> Iterator[WalkedAction]:
    """Replay ``game``'s actions on the board (plays only; the rules are not checked).

    Raises :class:`InvalidRecordError` for a play that cannot be read or is
    illegal where it stands.
    """
    pos = Position()
    view = 0
    cube = offered = 1
    animals_by: int | None = None  # who made the last beaver/raccoon, until it is taken
    for index, action in enumerate(_portable(game.actions), start=1):
        implied: int | None = None
        value: int | None = None
        if action.kind is ActionKind.DOUBLE:
            offered = value = action.cube or cube * 2
        elif action.kind in (ActionKind.BEAVER, ActionKind.RACCOON):
            offered = value = action.cube or offered * 2
            animals_by = action.player
        elif action.kind is ActionKind.TAKE:
            cube = offered
            animals_by = None
        elif action.kind is ActionKind.MOVE and animals_by is not None:
            implied = 1 - animals_by
            cube = offered
            animals_by = None
        play: Play | None = None
        if action.kind is ActionKind.MOVE and action.play:
            if action.dice is None:
                raise record_error(
                    f"action {index}: a play ({action.play!r}) without dice", game=game.number
                )
            if view != action.player:
                pos = pos.flip()
                view = action.player
            try:
                play = find_play(pos, action.dice, text=action.play)
            except (InvalidNotationError, IllegalPlayError) as exc:
                raise record_error(f"action {index}: {exc}", game=game.number) from None
            pos = play.result
            view = 1 - action.player
        yield WalkedAction(action, play, implied, value)


def _portable(actions: Sequence[Action]) -> list[Action]:
    """The actions less a roll kept unplayed while a resignation was declined.

    nard records a roll before a resignation offer (``play`` None) and the
    play of the same roll once the offer is declined; the file formats hold
    neither the declined offer nor the roll twice, only the play.
    """
    out: list[Action] = []
    for i, action in enumerate(actions):
        if action.kind is ActionKind.MOVE and action.play is None:
            rest = actions[i + 1 :]
            later = next((j for j, a in enumerate(rest) if a.kind is ActionKind.MOVE), None)
            if later is not None:
                between = {a.kind for a in rest[:later]}
                move = rest[later]
                if (
                    between <= {ActionKind.RESIGN, ActionKind.REJECT}
                    and move.player == action.player
                    and move.dice == action.dice
                    and move.play is not None
                ):
                    continue
        out.append(action)
    return out


def ended_by_resignation(game: GameRecord) -> bool:
    """True when ``game`` has a winner but was neither played out nor dropped."""
    if game.winner is None:
        return False
    if game.actions and game.actions[-1].kind is ActionKind.ACCEPT:
        return True
    if game.actions and game.actions[-1].kind is ActionKind.DROP:
        return False
    last_play = None
    for step in walk_game(game):
        if step.play is not None:
            last_play = step.play
    return last_play is None or not last_play.result.is_game_over()
