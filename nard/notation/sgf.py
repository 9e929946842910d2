"""GNU Backgammon's SGF match files (``save match`` / ``load match``).

SGF (Smart Game Format, ``GM[6]`` for backgammon) holds one game tree per
game. The root node has the match (``MI[length:5][game:0][ws:0][bs:0]``:
length, game number from 0, White's and Black's score), the players
(``PW``/``PB``), the rules (``RU[Crawford:CrawfordGame]``, ``RU[Jacoby]``, ``RU[NoCube]``)
and the result (``RE[W+2]``, ``RE[B+4R]`` when the loser resigned). Each
later node is one action: ``W[31hefe]`` is White's roll 3-1 and its moves,
one letter pair per die, ``W[double]``, ``B[take]``, ``B[drop]``. White is
player 0.

Points are letters from White's side for both players: ``a`` is White's
point 1 and Black's 24, ``x`` White's 24 and Black's 1; ``y`` is the bar
and ``z`` off.

>>> record = read_sgf('''(;FF[4]GM[6]CA[UTF-8]MI[length:0][game:0][ws:0][bs:0]
... PW[Alice]PB[Bob]RE[W+1]
... ;W[31hefe];B[52lnlq];W[double];B[drop])''')
>>> [(a.player, a.kind.value, a.play) for a in record.games[0].actions]
[(0, 'move', '8/5 6/5'), (1, 'move', '13/11 13/8'), (0, 'double', None), (1, 'drop', None)]
>>> print(write_sgf(record))
(;FF[4]GM[6]CA[UTF-8]AP[nard]MI[length:0][game:0][ws:0][bs:0]PW[Alice]PB[Bob]RE[W+1]
;W[31hefe]
;B[52lqln]
;W[double]
;B[drop])
<BLANKLINE>

gnubg's conventions, which the reader and writer keep: a beaver is a
``double`` node by the side just doubled (a raccoon, one by the doubler
again), followed by a ``take`` that nard's records leave implied; a
resignation is only the ``R`` of ``RE`` (the record has the winner and
points, and no resignation action); a roll with no legal play is the dice
alone (``W[64]``); a roll made and then not played is ``PL[W]DI[64]``.
Analysis, comments and statistics (``A``, ``DA``, ``GS``, ``C`` ...) are
skipped; position set-up (``AE``/``AB``/``AW``, ``CV``, ``CP``) and the
variants (Nackgammon, Hypergammon) are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from nard.core.errors import InvalidRecordError
from nard.notation._transcript import (
    GameReader,
    check_games,
    ended_by_resignation,
    record_error,
    walk_game,
)
from nard.notation.records import ActionKind, GameRecord, MatchRecord

__all__ = ["InvalidRecordError", "read_sgf", "write_sgf"]

_ROOT_INFO = ("DT", "EV", "RO", "PC", "AN", "GC", "WR", "BR")  # kept in ``metadata``
_IGNORED = frozenset(
    {"A", "DA", "LU", "GB", "GW", "BM", "DO", "BC", "DC", "MR", "CR", "C", "N", "GS", "V", "TE"}
)
_SETUP = frozenset({"AE", "AB", "AW", "CV", "CP"})
_MOVE = re.compile(r"(?P<d1>\d)(?P<d2>\d)(?P<moves>[a-z]*)")
_RESULT = re.compile(r"(?P<side>[WB])\+(?P<points>\d+)(?P<resigned>R?)", re.IGNORECASE)


# -- parsing the tree ----------------------------------------------------------

_IDENT = re.compile(r"[A-Za-z]+")
_VALUE = re.compile(r"((?:[^\]\\]|\\.)*)\]", re.DOTALL)  # up to the unescaped ]
_ESCAPE = re.compile(r"\\(\r\n|\n|.)", re.DOTALL)


def _unescape(m: re.Match[str]) -> str:
    """``\\`` escapes the next character; an escaped line break is a soft break (nothing)."""
    return "" if m.group(1) in ("\n", "\r\n") else m.group(1)


@dataclass
class _Node:
    line: int
    props: list[tuple[str, list[str], int]] = field(default_factory=list)

    def get(self, ident: str) -> list[str] | None:
        for name, values, _ in self.props:
            if name == ident:
                return values
        return None


def _parse(text: str) -> list[list[_Node]]:
    """The collection's game trees, each as its main line of nodes (first variations)."""
    games: list[list[_Node]] = []
    trees: list[list[bool]] = []  # per open tree: [on the main line, a subtree seen]
    i, n, line = 0, len(text), 1

    def fail(problem: str, at: int | None = None) -> InvalidRecordError:
        return record_error(problem, line=line if at is None else at, game=len(games) or None)

    def skip_space(i: int) -> int:
        nonlocal line
        while i < n and text[i].isspace():
            if text[i] == "\n":
                line += 1
            i += 1
        return i

    while (i := skip_space(i)) < n:
        ch = text[i]
        i += 1
        if ch == "(":
            if not trees:
                games.append([])
                trees.append([True, False])
            else:
                parent = trees[-1]
                trees.append([parent[0] and not parent[1], False])
                parent[1] = True
        elif ch == ")":
            if not trees:
                raise fail("')' with no game tree open")
            trees.pop()
        elif ch == ";":
            if not trees:
                raise fail("a node outside any game tree")
            node = _Node(line)
            if trees[-1][0]:
                games[-1].append(node)
            while m := _IDENT.match(text, i := skip_space(i)):
                ident = "".join(c for c in m.group() if c.isupper())
                at = line
                values: list[str] = []
                i = m.end()
                while (i := skip_space(i)) < n and text[i] == "[":
                    v = _VALUE.match(text, i + 1)
                    if v is None:
                        raise fail(f"the file ends inside {ident}[...] (truncated?)", at)
                    raw = v.group(1)
                    line += raw.count("\n")
                    values.append(_ESCAPE.sub(_unescape, raw))
                    i = v.end()
                if not values:
                    raise fail(f"property {m.group()!r} has no value")
                node.props.append((ident, values, at))
        else:
            raise fail(f"unexpected {text[i - 1 : i + 19]!r}")
    if trees:
        raise fail("the file ends inside a game tree: a ')' is missing (truncated?)")
    return games


# -- reading -------------------------------------------------------------------


def read_sgf(text: str, *, allow_unfinished: bool = False) -> MatchRecord:
    """Read gnubg's SGF: one game tree per game of the match or session.

    Raises :class:`~nard.core.errors.InvalidRecordError` (a ``ValueError``)
    naming the line, the game and the problem for anything malformed:
    unbalanced brackets, a game that is not backgammon, bad dice or point
    letters, a take with no double, a roll out of turn, an illegal play,
    scores that do not follow from the results. A match that stops before
    anyone has won it, or whose last game stops without a result, is taken
    for a truncated file; pass ``allow_unfinished=True`` to read a match in
    progress.
    """
    if not isinstance(text, str):
        raise InvalidRecordError(f"an SGF file must be text, not {type(text).__name__}")
    trees = _parse(text.lstrip("\ufeff"))
    if not trees:
        raise record_error("no game tree: not an SGF file (or an empty one)")
    games: list[GameRecord] = []
    lines: list[int | None] = []
    length: int | None = None
    players: tuple[str, str] | None = None
    jacoby = False
    crawford_rule = False
    cube = True
    metadata: dict[str, str] = {}
    for index, nodes in enumerate(trees):
        if not nodes:
            raise record_error("an empty game tree", game=index + 1)
        root = nodes[0]
        info = _root(root, index)
        if length is None:
            length = info.length
            players = info.players
            jacoby = info.jacoby
            crawford_rule = info.crawford_rule
            cube = info.cube
            metadata = {k: v[0] for k in _ROOT_INFO if (v := root.get(k)) is not None}
        elif info.length != length:
            raise record_error(
                f"a {info.length}-point game in a {length}-point match",
                line=root.line,
                game=info.number,
            )
        elif info.players != players:
            assert players is not None
            raise record_error(
                f"the players are {info.players[0]!r} and {info.players[1]!r}, "
                f"but {players[0]!r} and {players[1]!r} in game 1",
                line=root.line,
                game=info.number,
            )
        reader = GameReader(info.number)
        for node in nodes[1:]:
            _node(reader, node)
        is_last = index == len(trees) - 1
        games.append(
            reader.finish(
                info.score,
                info.winner,
                info.points,
                line=info.result_line,
                resigned=info.resigned,
                crawford=info.crawford,
                allow_unfinished=is_last and allow_unfinished,
            )
        )
        lines.append(root.line)
    assert length is not None and players is not None
    check_games(games, length, lines, allow_unfinished=allow_unfinished)
    return MatchRecord(
        match_length=length,
        games=tuple(games),
        players=players,
        jacoby=jacoby,
        crawford_rule=crawford_rule,
        metadata=metadata,
        cube=cube,
    )


@dataclass
class _Root:
    number: int
    length: int
    score: tuple[int, int]
    players: tuple[str, str]
    crawford_rule: bool
    crawford: bool
    jacoby: bool
    cube: bool
    winner: int | None
    points: int | None
    resigned: bool | None
    result_line: int | None


def _root(root: _Node, index: int) -> _Root:
    game = index + 1

    def fail(problem: str, line: int) -> InvalidRecordError:
        return record_error(problem, line=line, game=game)

    gm = root.get("GM")
    if gm is None or gm[0].strip() != "6":
        raise fail(
            f"not a backgammon game: GM[{gm[0] if gm else ''}] (backgammon is GM[6])", root.line
        )
    fields: dict[str, int] = {}
    mi = root.get("MI")
    if mi is None:
        raise fail("no MI[...] match information (length, game, scores)", root.line)
    for value in mi:
        key, _, number = value.partition(":")
        if key not in ("length", "game", "ws", "bs"):
            continue
        if not number.strip().isdigit():
            raise fail(f"cannot read MI[{value}]: expected a number", root.line)
        fields[key] = int(number)
    missing = [k for k in ("length", "game", "ws", "bs") if k not in fields]
    if missing:
        raise fail(f"MI[...] lacks {', '.join(missing)}", root.line)
    rules: list[str] = []
    for value in root.get("RU") or []:
        rules += value.split(":")
    for rule in rules:
        if rule in ("Nackgammon", "Hypergammon1", "Hypergammon2", "Hypergammon3"):
            raise fail(f"the variant {rule} is not supported", root.line)
    if root.get("CV") is not None:
        raise fail("automatic doubles (CV[...]) are not supported", root.line)
    names = (root.get("PW") or [""])[0], (root.get("PB") or [""])[0]
    winner = points = None
    resigned: bool | None = None
    result_line: int | None = None
    for name, values, line in root.props:
        if name == "RE":
            result_line = line
            m = _RESULT.fullmatch(values[0].strip())
            if not m:
                raise fail(
                    f"cannot read the result RE[{values[0]}]: expected e.g. W+2 or B+4R", line
                )
            winner = "WB".index(m.group("side").upper())
            points = int(m.group("points"))
            resigned = bool(m.group("resigned"))
    return _Root(
        number=fields["game"] + 1,
        length=fields["length"],
        score=(fields["ws"], fields["bs"]),
        players=(names[0].strip(), names[1].strip()),
        crawford_rule="Crawford" in rules,
        crawford="CrawfordGame" in rules,
        jacoby="Jacoby" in rules,
        cube="NoCube" not in rules,
        winner=winner,
        points=points,
        resigned=resigned,
        result_line=result_line if result_line is not None else root.line,
    )


def _point(letter: str, player: int) -> int:
    """A letter's point in ``player``'s own numbers (25 bar, 0 off)."""
    if letter == "y":
        return 25
    if letter == "z":
        return 0
    index = ord(letter) - ord("a")
    return index + 1 if player == 0 else 24 - index


def _node(reader: GameReader, node: _Node) -> None:
    game = reader.number
    moves = [(name, values, line) for name, values, line in node.props if name in ("W", "B")]
    setup = [name for name, _, _ in node.props if name in _SETUP]
    if setup:
        raise record_error(
            f"position set-up ({', '.join(setup)}) is not supported", line=node.line, game=game
        )
    dice_set = node.get("DI")
    if dice_set is not None and not moves:
        who = node.get("PL")
        if who is None or who[0] not in ("W", "B"):
            raise record_error(
                "DI[...] (dice set) without PL[W] or PL[B]", line=node.line, game=game
            )
        dice = _dice(dice_set[0][:2], node.line, game)
        reader.move("WB".index(who[0]), dice, node.line)
        return
    if not moves:
        return  # analysis or comments only
    if len(moves) > 1:
        raise record_error("a node with two moves (W and B)", line=node.line, game=game)
    name, values, line = moves[0]
    player = "WB".index(name)
    value = values[0].strip()
    if value == "double":
        reader.double(player, line)
    elif value == "take":
        reader.take(player, line)
    elif value == "drop":
        reader.drop(player, line)
    else:
        m = _MOVE.fullmatch(value)
        if not m:
            raise record_error(
                f"cannot read the move {name}[{value}]: expected dice and point letters such "
                "as 31hefe, or double, take, drop",
                line=line,
                game=game,
            )
        dice = _dice(m.group("d1") + m.group("d2"), line, game)
        letters = m.group("moves")
        if len(letters) % 2 or len(letters) > 8:
            raise record_error(
                f"cannot read the move {name}[{value}]: the points come in from/to pairs, "
                "at most four",
                line=line,
                game=game,
            )
        pairs = []
        for k in range(0, len(letters), 2):
            src, dst = letters[k], letters[k + 1]
            if src > "y" or dst == "y" or src == "z":
                raise record_error(
                    f"cannot read the move {name}[{value}]: {src}{dst} is not a move "
                    "(a-x points, y bar, z off)",
                    line=line,
                    game=game,
                )
            pairs.append((_point(src, player), _point(dst, player)))
        reader.move(player, dice, line, pairs=pairs)


def _dice(text: str, line: int, game: int) -> tuple[int, int]:
    if len(text) != 2 or not all("1" <= c <= "6" for c in text):
        raise record_error(f"invalid dice {text!r}: each die must be 1-6", line=line, game=game)
    return int(text[0]), int(text[1])


# -- writing -------------------------------------------------------------------


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _letter(point: int, player: int) -> str:
    if point == 25:
        return "y"
    if point == 0:
        return "z"
    return chr(ord("a") + (point - 1 if player == 0 else 24 - point))


def write_sgf(record: MatchRecord) -> str:
    """Write ``record`` as gnubg's SGF, one game tree per game (``load match`` reads it).

    Declined resignations cannot be written in SGF and are left out. Raises
    :class:`~nard.core.errors.InvalidRecordError` if a play cannot be read
    or is illegal where it stands.
    """
    out: list[str] = []
    for index, game in enumerate(record.games):
        root = (
            f"(;FF[4]GM[6]CA[UTF-8]AP[nard]MI[length:{record.match_length}]"
            f"[game:{game.number - 1}][ws:{game.score[0]}][bs:{game.score[1]}]"
            f"PW[{_escape(record.players[0])}]PB[{_escape(record.players[1])}]"
        )
        if index == 0:
            root += "".join(
                f"{key}[{_escape(record.metadata[key])}]"
                for key in _ROOT_INFO
                if key in record.metadata
            )
        rules = []
        if not record.cube:
            rules.append("NoCube")
        if record.match_length and record.crawford_rule:
            rules.append("Crawford")
        if game.crawford:
            rules.append("CrawfordGame")
        if not record.match_length and record.jacoby:
            rules.append("Jacoby")
        if rules:
            root += f"RU[{':'.join(rules)}]"
        if game.winner is not None and game.points is not None:
            resigned = "R" if ended_by_resignation(game) else ""
            root += f"RE[{'WB'[game.winner]}+{game.points}{resigned}]"
        nodes = [root]
        for step in walk_game(game):
            action = step.action
            side = "WB"[action.player]
            if step.implied_take is not None:
                nodes.append(f";{'WB'[step.implied_take]}[take]")
            kind = action.kind
            if kind is ActionKind.MOVE:
                if action.dice is None:
                    raise record_error("a move without dice", game=game.number)
                dice = f"{action.dice[0]}{action.dice[1]}"
                if action.play is None:
                    nodes.append(f";PL[{side}]DI[{dice}]")
                    continue
                letters = "".join(
                    _letter(m.from_point, action.player) + _letter(m.to_point, action.player)
                    for m in (step.play.moves if step.play is not None else ())
                )
                nodes.append(f";{side}[{dice}{letters}]")
            elif kind in (ActionKind.DOUBLE, ActionKind.BEAVER, ActionKind.RACCOON):
                nodes.append(f";{side}[double]")
            elif kind is ActionKind.TAKE:
                nodes.append(f";{side}[take]")
            elif kind is ActionKind.DROP:
                nodes.append(f";{side}[drop]")
            # resignations: SGF has only the result's R
        out.append("\n".join(nodes) + ")\n")
    return "".join(out)
