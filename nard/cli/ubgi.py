"""``nard ubgi``: nard as an engine speaking UBGI v0.2, the Universal Backgammon
Interface (docs/engine-protocols.md).

One command per line on standard input, answers on standard output (flushed after
every line): ``ubgi`` (``id name``, ``id author``, ``proto 0.2``, ``ubgiok``),
``isready`` (``readyok``), ``newgame``, ``position gnubgid POSITION_ID[:MATCH_ID]``,
``position xgid XGID=...``, ``dice D1 D2``, ``go`` / ``go chequer`` (``bestmove``),
``go cube`` (``bestcube double|nodouble``), ``go turn`` (``bestturn cube=...
move=...``), ``set KEY VALUE``, ``get KEY`` (``value KEY VALUE``), ``keys``
(``key ...`` lines), ``quit``. Anything else is answered ``error CODE detail`` and
the engine goes on (codes ``bad_command``, ``bad_value``, ``bad_state``,
``unsupported``).

The position is seen from the side on roll (as gnubg's Position ID is); a Match ID
or XGID gives the cube, the score (money or match) and the dice. Moves are written
one checker step per die, ``from/to`` with ``bar`` and ``off`` (``24/18 18/13``;
``pass`` when the roll cannot be played).

>>> engine = UbgiEngine(lambda level: _FakeEngine())
>>> for line in ("ubgi", "position gnubgid 4HPwATDgc/ABMA", "dice 3 1", "go"):
...     print("\\n".join(engine.handle(line)))
id name nard
id author the nard developers
proto 0.2
...
ubgiok
<BLANKLINE>
<BLANKLINE>
bestmove 8/5 6/5
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, TextIO

from nard import __version__
from nard.core.dice import Dice, check_dice
from nard.core.errors import NardError
from nard.core.position import Play, Position
from nard.engine.cube import CubeContext, written_context
from nard.notation.positions import read_written_position

__all__ = ["KEYS", "UbgiEngine", "cmd_ubgi", "ubgi_move"]

LEVELS = ("beginner", "intermediate", "expert", "world-class", "roller")


@dataclass(frozen=True)
class Key:
    """One ``set``/``get`` key as ``keys`` declares it."""

    name: str
    kind: str
    domain: str
    default: str
    minor: bool
    description: str

    def line(self) -> str:
        minor = " !" if self.minor else ""
        domain = f" {self.domain}" if self.domain else ""
        return f"key {self.name} {self.kind}{domain} {self.default}{minor} {self.description}"


KEYS: tuple[Key, ...] = (
    Key("engine.level", "enum", "|".join(LEVELS), "expert", False, "playing level"),
    Key(
        "engine.ply",
        "int",
        "-1..3",
        "-1",
        False,
        "search depth in engine.plyconvention's count; -1: the level's own",
    ),
    Key(
        "engine.plyconvention",
        "enum",
        "gnubg|xg",
        "gnubg",
        True,
        "how plies are counted: gnubg (0 = the net alone) or xg (1 = the net alone)",
    ),
    Key("engine.seed", "int", "0..2147483647", "0", True, "seed of the levels' noise"),
    Key("game.variant", "enum", "backgammon", "backgammon", False, "the game played"),
)
_BY_NAME = {k.name: k for k in KEYS}


class UbgiError(NardError):
    """A command the engine answers with ``error CODE detail``."""

    def __init__(self, code: str, detail: str) -> None:
        super().__init__(f"{code} {detail}")
        self.code = code
        self.detail = detail


def ubgi_move(play: Play | None) -> str:
    """A play as UBGI writes it: one ``from/to`` per checker step, ``bar``/``off``;
    ``pass`` for no play.

    >>> pos = Position()
    >>> ubgi_move(pos.parse_play("24/13", (6, 5)))
    '24/18 18/13'
    >>> ubgi_move(None)
    'pass'
    """
    if play is None or not play.moves:
        return "pass"

    def point(n: int) -> str:
        return "bar" if n == 25 else "off" if n == 0 else str(n)

    return " ".join(f"{point(m[0])}/{point(m[1])}" for m in play.moves)


class UbgiEngine:
    """The protocol's state: the options, the position and its context, the dice;
    :meth:`handle` takes one line and gives the answer lines."""

    def __init__(self, make_engine: Callable[[str], Any]) -> None:
        self.make_engine = make_engine
        self.values = {k.name: k.default for k in KEYS}
        self._engines: dict[tuple[str, int, int], Any] = {}
        self.position: Position | None = None
        self.context = CubeContext()
        self.dice: Dice | None = None
        self.done = False

    # -- the engine for the options ---------------------------------------------
    def _plies(self) -> int | None:
        ply = int(self.values["engine.ply"])
        if ply < 0:
            return None
        gnubg = ply - 1 if self.values["engine.plyconvention"] == "xg" else ply
        if not 0 <= gnubg <= 2:
            raise UbgiError("unsupported", f"engine.ply {ply} is beyond the 0-2 gnubg plies")
        return gnubg

    def engine(self) -> Any:
        plies = self._plies()
        level = self.values["engine.level"]
        seed = int(self.values["engine.seed"])
        key = (level, -1 if plies is None else plies, seed)
        found = self._engines.get(key)
        if found is None:
            found = self.make_engine(level)
            found.seed = seed
            if plies is not None and hasattr(found, "settings"):
                found.settings = replace(found.settings, plies=plies, cube_plies=plies)
            self._engines[key] = found
        return found

    # -- the protocol ------------------------------------------------------------
    def handle(self, line: str) -> list[str]:
        """The answer to one line (no answer: [])."""
        words = line.split()
        if not words:
            return []
        try:
            return self._dispatch(words[0], words[1:])
        except UbgiError as exc:
            return [f"error {exc.code} {exc.detail}".rstrip()]
        except (NardError, ValueError) as exc:
            return [f"error bad_value {exc}"]

    def _dispatch(self, command: str, args: list[str]) -> list[str]:
        if command == "ubgi":
            return [
                "id name nard",
                "id author the nard developers",
                "proto 0.2",
                f"info version {__version__}",
                *(k.line() for k in KEYS),
                "ubgiok",
            ]
        if command == "isready":
            self.engine()  # the network loaded, the kernels compiled: then ready
            return ["readyok"]
        if command == "quit":
            self.done = True
            return []
        if command == "newgame":
            self.position, self.context, self.dice = None, CubeContext(), None
            return []
        if command == "position":
            return self._position(args)
        if command == "dice":
            if len(args) != 2 or not all(a.isdigit() for a in args):
                raise UbgiError("bad_command", "expected: dice <d1> <d2>")
            self.dice = check_dice((int(args[0]), int(args[1])))
            return []
        if command == "go":
            return self._go(args[0] if args else "chequer", args[1:])
        if command == "set":
            return self._set(args)
        if command == "get":
            if len(args) != 1:
                raise UbgiError("bad_command", "expected: get <key>")
            if args[0] not in _BY_NAME:
                raise UbgiError("unsupported", f"unknown key {args[0]}")
            return [f"value {args[0]} {self.values[args[0]]}"]
        if command == "keys":
            return [k.line() for k in KEYS]
        if command == "setoption":  # v0.1: setoption name <Name> value <Value>
            if len(args) == 4 and args[0] == "name" and args[2] == "value":
                return self._set([args[1], args[3]])
            raise UbgiError("bad_command", "expected: setoption name <Name> value <Value>")
        raise UbgiError("bad_command", f"unknown command {command}")

    def _position(self, args: list[str]) -> list[str]:
        if len(args) != 2 or args[0] not in ("gnubgid", "xgid"):
            raise UbgiError("bad_command", "expected: position gnubgid <id> | position xgid <id>")
        text = args[1]
        if args[0] == "xgid" and not text.upper().startswith("XGID="):
            text = f"XGID={text}"
        if args[0] == "gnubgid" and text.upper().startswith("XGID="):
            raise UbgiError("bad_value", "an XGID goes with position xgid")
        written = read_written_position(text)
        position, match = written.position, written.match
        self.position = position
        self.context = written_context(written)
        self.dice = match.dice if match is not None and match.dice else None
        return []

    def _set(self, args: list[str]) -> list[str]:
        if len(args) != 2:
            raise UbgiError("bad_command", "expected: set <key> <value>")
        name, value = args
        key = _BY_NAME.get(name)
        if key is None:
            raise UbgiError("unsupported", f"unknown key {name}")
        if key.kind == "enum" and value not in key.domain.split("|"):
            raise UbgiError("bad_value", f"{name} must_be {key.domain}")
        if key.kind == "int":
            low, high = (int(v) for v in key.domain.split(".."))
            ok = value.lstrip("-").isdigit() and low <= int(value) <= high
            if not ok:
                raise UbgiError("bad_value", f"{name} must_be {key.domain}")
        self.values[name] = value
        return []

    def _go(self, what: str, rest: list[str]) -> list[str]:
        if rest:
            raise UbgiError("bad_command", "expected: go [chequer|cube|turn]")
        if self.position is None:
            raise UbgiError("bad_state", "missing position")
        if self.position.is_game_over():
            raise UbgiError("bad_state", "the game is over")
        if what == "chequer":
            return [f"bestmove {self._move()}"]
        if what == "cube":
            return [f"bestcube {self._cube()}"]
        if what == "turn":
            return [f"bestturn cube={self._cube()} move={self._move()}"]
        raise UbgiError("unsupported", f"go {what}")

    def _move(self) -> str:
        if self.dice is None:
            raise UbgiError("bad_state", "missing dice")
        assert self.position is not None
        play = self.engine().best_play(self.position, self.dice, self.context)
        return ubgi_move(play)

    def _cube(self) -> str:
        assert self.position is not None
        if not self.context.can_double():
            return "nodouble"
        decision = self.engine().cube_action(self.position, self.context)
        return "double" if decision.double else "nodouble"


def cmd_ubgi(
    lines: Iterable[str] | None = None,
    out: TextIO | None = None,
    weights: str | None = None,
) -> int:
    """Serve UBGI on ``lines`` (default: standard input) until ``quit`` or the end."""
    from nard.engine import Engine

    out = out or sys.stdout
    engine = UbgiEngine(lambda level: Engine(level, weights=weights, time_limit=None))
    for line in lines if lines is not None else sys.stdin:
        for answer in engine.handle(line):
            out.write(answer + "\n")
            out.flush()
        if engine.done:
            break
    return 0


class _FakeEngine:
    """For the module's example: the first legal play, never a double."""

    seed = 0

    def best_play(self, position: Position, dice: Dice, context: CubeContext) -> Play | None:
        plays = position.legal_plays(dice)
        return position.parse_play("8/5 6/5", dice) if plays else None

    def cube_action(self, position: Position, context: CubeContext) -> Any:
        return type("Decision", (), {"double": False})()
