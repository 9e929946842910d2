"""Jellyfish ``.mat`` match files, as GNU Backgammon exports and imports them.

A ``.mat`` file is a header `` N point match`` (0 for a money session) and,
per game, ``Game N``, the players with their scores, and numbered lines of
two columns: player 0's actions on the left, player 1's on the right.

>>> record = read_mat('''
...  0 point match
...
...  Game 1
...  Alice : 0                      Bob : 0
...   1) 31: 8/5 6/5                 52: 13/11 13/8
...   2)  Doubles => 2                Drops
...       Wins 1 point
... ''')
>>> record.match_length, record.players  # 0: a money session
(0, ('Alice', 'Bob'))
>>> [(a.player, a.kind.value, a.play) for a in record.games[0].actions]
[(0, 'move', '8/5 6/5'), (1, 'move', '13/11 13/8'), (0, 'double', None), (1, 'drop', None)]
>>> record.games[0].winner, record.games[0].points
(0, 1)
>>> print(write_mat(record), end="")
 0 point match
<BLANKLINE>
 Game 1
 Alice : 0                      Bob : 0
  1) 31: 8/5 6/5                 52: 13/8 13/11
  2)  Doubles => 2                Drops
      Wins 1 point
<BLANKLINE>

What the format leaves out, the reader derives or leaves unsaid:

- No Crawford marker: a game is the Crawford game when it is the first in
  which exactly one side needs one point (unless a ``; [Crawford "Off"]`` tag
  says the rule is off). Jacoby is not written either (nard writes and reads
  a ``; [Jacoby "On"]`` tag, which gnubg ignores).
- A resignation is only ``Wins N points`` with checkers left on the board:
  the game has a winner and points, and no resignation action
  (:func:`nard.match.replay` concludes it).
- A roll written alone (``64:``) is a roll with no legal play (``play=""``);
  if a play was possible, the player rolled and then resigned (``play=None``).
- A beaver is ``Beavers => N`` in the doubled side's column, a raccoon the
  same in the doubler's; the take that accepts them is implied.

Plays are read however they are written (gnubg's ``25/22* 6/0``, ``bar/22*``,
``24/13``, ``13/7(2)``), checked against the position, and kept in standard
notation as :meth:`~nard.core.position.Position.format_play` writes it.
:func:`write_mat` writes gnubg's layout, one die per move (``25/22*``,
``6/0``), which gnubg's ``import mat`` reads.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass

from nard.core.errors import InvalidRecordError
from nard.notation._transcript import (
    GameReader,
    check_games,
    crawford_games,
    record_error,
    walk_game,
)
from nard.notation.records import ActionKind, GameRecord, MatchRecord

__all__ = ["InvalidRecordError", "read_mat", "write_mat"]

_HEADER = re.compile(r"\s*(\d+)\s*point\s+match\b.*", re.IGNORECASE)
_GAME = re.compile(r"\s*game\s+(\d+)\s*", re.IGNORECASE)
_SCORE = re.compile(r"\s*(?P<n0>\S.*?)\s*:\s*(?P<s0>\d+)\s+(?P<n1>\S.*?)\s*:\s*(?P<s1>\d+)\s*")
_TAG = re.compile(r'[;#]\s*\[\s*(?P<key>[^"\]]*?)\s*"(?P<value>[^"]*)"\s*\]\s*')
_NUMBERED = re.compile(r"\s*(\d+)\)")
_DICE = re.compile(r"(\d+):")
_WORDS = {
    "doubles": "double",
    "double": "double",
    "beavers": "beaver",
    "beaver": "beaver",
    "raccoons": "raccoon",
    "raccoon": "raccoon",
    "takes": "take",
    "take": "take",
    "drops": "drop",
    "drop": "drop",
    "wins": "win",
    "win": "win",
}
_NO_PLAY = ({"cannot", "move"}, {"???"}, {"????"})  # XG's ways of writing "no play"
_RIGHT_GAP = 12  # a lone entry this far after "N)" is in the right column
_RIGHT_COLUMN = 20  # ... and on a line without a number, this far from the margin
_ON = {"on", "yes", "true", "1"}


# -- reading -------------------------------------------------------------------


@dataclass
class _Entry:
    column: int
    start: int
    tokens: list[str]


@dataclass
class _Game:
    number: int
    line: int
    reader: GameReader
    score: tuple[int, int] = (0, 0)
    names: tuple[str, str] = ("", "")
    result: tuple[int, int, int] | None = None  # (winner, points, line)


def read_mat(text: str, *, allow_unfinished: bool = False) -> MatchRecord:
    """Read a ``.mat`` file's text.

    Raises :class:`~nard.core.errors.InvalidRecordError` (a ``ValueError``)
    naming the line, the game and the problem for anything malformed: no
    header, a truncated or garbled line, bad dice, a take with no double, a
    roll out of turn, an illegal play, scores that do not follow from the
    results. A match that stops before anyone has won it, or whose last game
    stops without a result, is taken for a truncated file; pass
    ``allow_unfinished=True`` to read a match in progress.
    """
    if not isinstance(text, str):
        raise InvalidRecordError(f"a .mat file must be text, not {type(text).__name__}")
    length: int | None = None
    tags: dict[str, str] = {}
    games: list[GameRecord] = []
    game_lines: list[int] = []
    players: tuple[str, str] | None = None
    current: _Game | None = None
    awaiting_score = False

    def close(game: _Game, last: bool) -> None:
        winner, points, at = game.result or (None, None, None)
        games.append(
            game.reader.finish(
                game.score, winner, points, line=at, allow_unfinished=last and allow_unfinished
            )
        )
        game_lines.append(game.line)

    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.lstrip("\ufeff").rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        if stripped[0] in ";#":
            if stripped.lower().startswith("; set pos"):
                raise record_error(
                    "position set-up ('; Set Pos') is not supported",
                    line=lineno,
                    game=current.number if current else None,
                )
            tag = _TAG.fullmatch(stripped)
            if tag and length is None:
                tags[tag.group("key")] = tag.group("value")
            continue
        if length is None:
            header = _HEADER.fullmatch(line)
            if not header:
                raise record_error(
                    f"expected the header ' N point match', found {stripped!r}", line=lineno
                )
            length = int(header.group(1))
            continue
        game_header = _GAME.fullmatch(line)
        if game_header:
            if awaiting_score and current:
                raise record_error(
                    f"'Game {current.number}' is not followed by the players and scores",
                    line=lineno,
                    game=current.number,
                )
            if current:
                close(current, last=False)
            number = int(game_header.group(1))
            current = _Game(number, lineno, GameReader(number))
            awaiting_score = True
            continue
        if current is None:
            raise record_error(
                f"{stripped!r} comes before any 'Game N' line (a move for no game)", line=lineno
            )
        if awaiting_score:
            score = _SCORE.fullmatch(line)
            if not score:
                raise record_error(
                    f"expected the players and scores ('Name : 0   Name : 0'), found {stripped!r}",
                    line=lineno,
                    game=current.number,
                )
            current.names = (score.group("n0"), score.group("n1"))
            current.score = (int(score.group("s0")), int(score.group("s1")))
            if players is None:
                players = current.names
            elif current.names != players:
                raise record_error(
                    f"the players are {current.names[0]!r} and {current.names[1]!r}, "
                    f"but {players[0]!r} and {players[1]!r} in game 1",
                    line=lineno,
                    game=current.number,
                )
            awaiting_score = False
            continue
        for entry in _entries(line, lineno, current.number):
            _apply(current, entry, lineno)

    if length is None:
        raise record_error("no ' N point match' header: not a .mat file (or an empty one)")
    if current is None:
        raise record_error("no games: the file has no 'Game N' line")
    if awaiting_score:
        raise record_error(
            f"the file ends after 'Game {current.number}' (truncated?)", game=current.number
        )
    close(current, last=True)
    check_games(games, length, game_lines, allow_unfinished=allow_unfinished)
    crawford_tag = tags.pop("Crawford", "On").strip().lower() in _ON
    jacoby = tags.pop("Jacoby", "Off").strip().lower() in _ON
    # gnubg writes no Crawford rule for a 1-point match (it cannot apply): nor do we.
    crawford_rule = length > 1 and crawford_tag
    flags = crawford_games([g.score for g in games], length if crawford_rule else 0)
    return MatchRecord(
        match_length=length,
        games=tuple(dataclasses.replace(g, crawford=f) for g, f in zip(games, flags, strict=True)),
        players=players or ("", ""),
        jacoby=jacoby,
        crawford_rule=crawford_rule,
        metadata=tags,
    )


def _entries(line: str, lineno: int, game: int) -> list[_Entry]:
    """The line's entries (a roll and its play, a cube action, a result), each in its column."""
    numbered = _NUMBERED.match(line)
    body = numbered.end() if numbered else 0
    groups: list[_Entry] = []
    for m in re.finditer(r"\S+", line[body:]):
        token = m.group()
        if _DICE.fullmatch(token) or token.lower() in _WORDS:
            groups.append(_Entry(0, body + m.start(), [token]))
        elif not groups:
            raise record_error(f"cannot read {token!r} in {line.strip()!r}", line=lineno, game=game)
        else:
            groups[-1].tokens.append(token)
    if len(groups) > 2:
        raise record_error(
            f"more than two entries (one per column) in {line.strip()!r}", line=lineno, game=game
        )
    if len(groups) == 2:
        groups[1].column = 1
    elif groups:
        if numbered:
            groups[0].column = int(groups[0].start - body >= _RIGHT_GAP)
        else:
            groups[0].column = int(groups[0].start >= _RIGHT_COLUMN)
    return groups


def _apply(game: _Game, entry: _Entry, lineno: int) -> None:
    player = entry.column
    head, rest = entry.tokens[0], entry.tokens[1:]
    written = " ".join(entry.tokens)
    reader = game.reader
    if game.result is not None:
        raise record_error(
            f"{written!r} after the game's result (line {game.result[2]})",
            line=lineno,
            game=game.number,
        )
    dice = _DICE.fullmatch(head)
    if dice:
        digits = dice.group(1)
        if len(digits) != 2 or not all("1" <= d <= "6" for d in digits):
            raise record_error(
                f"invalid dice {head!r}: expected two dice 1-6 such as '64:'",
                line=lineno,
                game=game.number,
            )
        if rest and rest[0].lower() == "illegal":
            raise record_error(
                f"Snowie's 'Illegal play' is not supported: {written!r}",
                line=lineno,
                game=game.number,
            )
        no_play = not rest or {t.lower() for t in rest} in _NO_PLAY
        reader.move(
            player,
            (int(digits[0]), int(digits[1])),
            lineno,
            text=None if no_play else " ".join(rest),
        )
        return
    word = _WORDS[head.lower()]
    if word in ("double", "beaver", "raccoon"):
        value: int | None = None
        if rest:
            if len(rest) != 2 or rest[0] != "=>" or not rest[1].isdigit():
                raise record_error(
                    f"cannot read {written!r}: expected e.g. 'Doubles => 2'",
                    line=lineno,
                    game=game.number,
                )
            value = int(rest[1])
        reader.double(player, lineno, value, word=word)
    elif word in ("take", "drop"):
        if rest:
            raise record_error(
                f"cannot read {written!r}: nothing may follow {head!r}",
                line=lineno,
                game=game.number,
            )
        if word == "take":
            reader.take(player, lineno)
        else:
            reader.drop(player, lineno)
    else:
        words = [t.lower() for t in rest]
        if (
            len(words) not in (2, 5)
            or not words[0].isdigit()
            or words[1] not in ("point", "points")
            or (len(words) == 5 and words[2:] != ["and", "the", "match"])
        ):
            raise record_error(
                f"cannot read {written!r}: expected 'Wins N points'",
                line=lineno,
                game=game.number,
            )
        game.result = (player, int(words[0]), lineno)


# -- writing -------------------------------------------------------------------

_LEFT_WIDTH = 28  # gnubg's left column, after "NNN) "


def write_mat(record: MatchRecord) -> str:
    """Write ``record`` in gnubg's ``.mat`` layout (which ``gnubg``'s ``import mat`` reads).

    Plays are written one die per move, with 25 for the bar and 0 for off, as
    gnubg does. Declined resignations cannot be written in a ``.mat`` file and
    are left out. Raises :class:`~nard.core.errors.InvalidRecordError` if a
    play cannot be read or is illegal where it stands.
    """
    out: list[str] = [f'; [{key} "{value}"]' for key, value in record.metadata.items()]
    if record.jacoby:
        out.append('; [Jacoby "On"]')
    if record.match_length > 1 and not record.crawford_rule:
        out.append('; [Crawford "Off"]')
    if out:
        out.append("")
    out += [f" {record.match_length} point match", ""]
    name0, name1 = record.players
    for game in record.games:
        out.append(f" Game {game.number}")
        out.append(" " + f"{name0} : {game.score[0]}".ljust(31) + f"{name1} : {game.score[1]}")
        rows = _rows(game)
        result = ""
        if game.winner is not None and game.points is not None:
            unit = "point" if game.points == 1 else "points"
            result = f" Wins {game.points} {unit}"
            if game.winner == 1 and rows and rows[-1][1] is None:
                rows[-1][1] = result
                result = ""
        for number, (left, right) in enumerate(rows, start=1):
            text = f"{number:3d}) " + (left or "")
            if right is not None:
                text += " " * max(1, _LEFT_WIDTH - len(left or "")) + right
            out.append(text)
        if result:
            out.append(" " * (5 if game.winner == 0 else 5 + _LEFT_WIDTH) + result)
        out.append("")
    return "\n".join(out) + "\n"


def _rows(game: GameRecord) -> list[list[str | None]]:
    """The numbered lines: [player 0's entry, player 1's entry]."""
    rows: list[list[str | None]] = []
    for step in walk_game(game):
        action = step.action
        kind = action.kind
        if kind is ActionKind.MOVE:
            if action.dice is None:
                raise record_error("a move without dice", game=game.number)
            entry = f"{action.dice[0]}{action.dice[1]}:"
            if step.play is not None:
                entry += "".join(
                    f" {m.from_point}/{m.to_point}{'*' if m.hit else ''}" for m in step.play.moves
                )
        elif kind is ActionKind.DOUBLE:
            entry = f" Doubles => {step.cube}"
        elif kind in (ActionKind.BEAVER, ActionKind.RACCOON):
            entry = f" Beavers => {step.cube}"  # gnubg's word for every redouble
        elif kind is ActionKind.TAKE:
            entry = " Takes"
        elif kind is ActionKind.DROP:
            entry = " Drops"
        else:
            continue  # resignations: a .mat file has only the result
        if action.player == 0:
            rows.append([entry, None])
        elif rows and rows[-1][1] is None:
            rows[-1][1] = entry
        else:
            rows.append([None, entry])
    return [[left.rstrip() if left else left, right] for left, right in rows]
