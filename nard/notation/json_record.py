"""nard's own match record: JSON holding every action, the rules and the dice commitment.

Unlike ``.mat`` and SGF it keeps everything needed to check a match played
with provably fair dice (``docs/fair-dice.md``): the commitment published
before the match, the client seed (and the players' contributions it is made
of), the server seed once revealed, and every die drawn in order (tied opening
rolls included). ``docs/record-format.md``
describes the format.

>>> from nard.notation.records import Action, ActionKind, GameRecord, MatchRecord
>>> game = GameRecord(1, (0, 0), (Action(0, ActionKind.MOVE, dice=(3, 1), play="8/5 6/5"),))
>>> record, dice = read_json(write_json(MatchRecord(3, (game,))))
>>> record.games[0].actions[0].play, dice
('8/5 6/5', None)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from nard.core.errors import InvalidRecordError
from nard.notation.records import Action, ActionKind, GameRecord, MatchRecord

__all__ = [
    "CONTRIBUTION_SOURCES",
    "FORMAT",
    "VERSION",
    "DiceCommitment",
    "SeedContribution",
    "read_json",
    "write_json",
]

FORMAT = "nard-match-record"
VERSION = 1


CONTRIBUTION_SOURCES = ("player", "timeout")
"""Where a contribution to the client seed came from: the seated person, or the
deadline passing without one (then its seed is "")."""


@dataclass(frozen=True)
class SeedContribution:
    r"""One seat's part of the client seed (``docs/fair-dice.md``).

    ``source`` is ``"player"`` (``seed`` is what the person gave) or
    ``"timeout"`` (nothing came before the deadline: ``seed`` is ``""``). The
    reader checks the form; :func:`nard.match.verify.verify_record` checks
    the rules and that the client seed is the seeds joined by ``"\n"``.
    """

    seat: int
    player: str
    seed: str
    source: str  # "player" or "timeout"


@dataclass(frozen=True)
class DiceCommitment:
    """What a match played with fair dice publishes: see ``docs/fair-dice.md``."""

    commitment: str
    client_seed: str
    server_seed: str | None = None  # hex, once revealed after the match
    log: tuple[int, ...] = ()  # every die drawn, in order
    preamble: int = 0  # dice drawn before the first game (a chouette's seating), in no game
    contributions: tuple[SeedContribution, ...] = ()  # the client seed's parts, in seat order


def write_json(record: MatchRecord, dice: DiceCommitment | None = None) -> str:
    """The record as nard's JSON (stable key order, one action per line)."""
    doc: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "match_length": record.match_length,
        "players": list(record.players),
        "rules": {
            "crawford": record.crawford_rule,
            "jacoby": record.jacoby,
            "backgammon": record.backgammon,
            "automatic_doubles": record.automatic_doubles,
            "holland": record.holland,
            **({} if record.cube else {"cube": False}),
            **({} if record.cube_cap is None else {"cube_cap": record.cube_cap}),
        },
        "metadata": dict(record.metadata),
        "dice": None
        if dice is None
        else {
            "commitment": dice.commitment,
            "client_seed": dice.client_seed,
            "server_seed": dice.server_seed,
            "log": list(dice.log),
            **({"preamble": dice.preamble} if dice.preamble else {}),
            **(
                {"contributions": [_contribution_to_json(c) for c in dice.contributions]}
                if dice.contributions
                else {}
            ),
        },
        "games": [
            {
                "number": g.number,
                "score": list(g.score),
                "crawford": g.crawford,
                "winner": g.winner,
                "points": g.points,
                **({"automatic_doubles": g.automatic_doubles} if g.automatic_doubles else {}),
                "actions": [_action_to_json(a) for a in g.actions],
            }
            for g in record.games
        ],
    }
    return json.dumps(doc, indent=1, ensure_ascii=False) + "\n"


def _contribution_to_json(c: SeedContribution) -> dict[str, Any]:
    return {"seat": c.seat, "player": c.player, "seed": c.seed, "source": c.source}


def _action_to_json(a: Action) -> dict[str, Any]:
    out: dict[str, Any] = {"player": a.player, "action": a.kind.value}
    if a.dice is not None:
        out["dice"] = list(a.dice)
    if a.play is not None:
        out["play"] = a.play
    if a.cube is not None:
        out["cube"] = a.cube
    if a.resign is not None:
        out["resign"] = a.resign
    return out


def read_json(text: str) -> tuple[MatchRecord, DiceCommitment | None]:
    """Read nard's JSON record; :class:`InvalidRecordError` names what is wrong and where."""
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidRecordError(
            f"not a nard record: invalid JSON at line {exc.lineno}: {exc.msg}"
        ) from None
    r = _Reader("the record")
    obj = r.obj(
        doc, {"format", "version", "match_length", "players", "rules", "metadata", "dice", "games"}
    )
    if obj.get("format") != FORMAT:
        raise InvalidRecordError(f"not a nard record: format is {obj.get('format')!r}")
    if obj.get("version") != VERSION:
        raise InvalidRecordError(f"unsupported nard record version {obj.get('version')!r}")
    length = r.int_(obj.get("match_length"), "match_length", 0, 64)
    players_raw = r.list_(obj.get("players", ["Player 0", "Player 1"]), "players")
    if len(players_raw) != 2 or not all(isinstance(p, str) for p in players_raw):
        raise InvalidRecordError(f"players must be two names, not {players_raw!r}")
    rules = r.obj(
        obj.get("rules", {}),
        {"crawford", "jacoby", "backgammon", "automatic_doubles", "holland", "cube", "cube_cap"},
    )
    cap = rules.get("cube_cap")
    metadata = r.obj(obj.get("metadata", {}), None)
    if not all(isinstance(v, str) for v in metadata.values()):
        raise InvalidRecordError("metadata values must be text")
    games = tuple(
        _read_game(g, i) for i, g in enumerate(r.list_(obj.get("games"), "games"), start=1)
    )
    record = MatchRecord(
        match_length=length,
        games=games,
        players=(players_raw[0], players_raw[1]),
        jacoby=r.bool_(rules.get("jacoby", False), "rules.jacoby"),
        crawford_rule=r.bool_(rules.get("crawford", True), "rules.crawford"),
        metadata=dict(metadata),
        backgammon=r.int_(rules.get("backgammon", 3), "rules.backgammon", 2, 3),
        automatic_doubles=r.int_(
            rules.get("automatic_doubles", 0), "rules.automatic_doubles", 0, 6
        ),
        holland=r.bool_(rules.get("holland", False), "rules.holland"),
        cube=r.bool_(rules.get("cube", True), "rules.cube"),
        cube_cap=None if cap is None else r.int_(cap, "rules.cube_cap", 1, 1 << 30),
    )
    return record, _read_dice(obj.get("dice"))


def _read_dice(raw: Any) -> DiceCommitment | None:
    if raw is None:
        return None
    r = _Reader("the dice")
    d = r.obj(raw, {"commitment", "client_seed", "server_seed", "log", "preamble", "contributions"})
    log = r.list_(d.get("log", []), "dice.log")
    if not all(isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= 6 for x in log):
        raise InvalidRecordError("the dice log must hold dice 1-6")
    server = d.get("server_seed")
    if server is not None and not isinstance(server, str):
        raise InvalidRecordError(f"dice.server_seed must be hex text, not {server!r}")
    return DiceCommitment(
        commitment=r.str_(d.get("commitment"), "dice.commitment"),
        client_seed=r.str_(d.get("client_seed"), "dice.client_seed"),
        server_seed=server,
        log=tuple(log),
        preamble=r.int_(d.get("preamble", 0), "dice.preamble", 0, len(log)),
        contributions=_read_contributions(d["contributions"]) if "contributions" in d else (),
    )


def _read_contributions(raw: Any) -> tuple[SeedContribution, ...]:
    """The form only (the rules of a contribution are the verifier's to check)."""
    items = _Reader("the dice").list_(raw, "dice.contributions")
    if not items:
        raise InvalidRecordError("the dice: dice.contributions must list at least one seat")
    out: list[SeedContribution] = []
    for i, item in enumerate(items):
        r = _Reader(f"dice.contributions[{i}]")
        c = r.obj(item, {"seat", "player", "seed", "source"})
        missing = sorted({"seat", "player", "seed", "source"} - set(c))
        if missing:
            raise r.fail(f"missing field(s) {missing}")
        seat = r.int_(c["seat"], "seat", 0, 1 << 20)
        if out and seat <= out[-1].seat:
            raise r.fail(
                f"seat {seat} after seat {out[-1].seat}: contributions are in seat order, "
                "one per seat"
            )
        source = c["source"]
        if source not in CONTRIBUTION_SOURCES:
            raise r.fail(f"source must be one of {list(CONTRIBUTION_SOURCES)}, not {source!r}")
        out.append(
            SeedContribution(seat, r.str_(c["player"], "player"), r.str_(c["seed"], "seed"), source)
        )
    return tuple(out)


def _read_game(raw: Any, number: int) -> GameRecord:
    r = _Reader(f"game {number}")
    g = r.obj(
        raw, {"number", "score", "crawford", "winner", "points", "automatic_doubles", "actions"}
    )
    score = r.list_(g.get("score"), "score")
    if len(score) != 2:
        raise InvalidRecordError(f"game {number}: score must be two numbers, not {score!r}")
    winner = g.get("winner")
    if winner is not None:
        winner = r.int_(winner, "winner", 0, 1)
    points = g.get("points")
    if points is not None:
        points = r.int_(points, "points", 1, 1 << 20)
    actions = tuple(
        _read_action(a, number, i) for i, a in enumerate(r.list_(g.get("actions"), "actions"), 1)
    )
    return GameRecord(
        number=r.int_(g.get("number", number), "number", 1, 1 << 20),
        score=(r.int_(score[0], "score", 0, 1 << 20), r.int_(score[1], "score", 0, 1 << 20)),
        actions=actions,
        winner=winner,
        points=points,
        crawford=r.bool_(g.get("crawford", False), "crawford"),
        automatic_doubles=r.int_(g.get("automatic_doubles", 0), "automatic_doubles", 0, 6),
    )


def _read_action(raw: Any, game: int, index: int) -> Action:
    r = _Reader(f"game {game}, action {index}")
    a = r.obj(raw, {"player", "action", "dice", "play", "cube", "resign"})
    try:
        kind = ActionKind(str(a.get("action")))
    except ValueError:
        known = ", ".join(k.value for k in ActionKind)
        raise InvalidRecordError(
            f"game {game}, action {index}: unknown action {a.get('action')!r} (one of {known})"
        ) from None
    dice = a.get("dice")
    if dice is not None:
        dl = r.list_(dice, "dice")
        if len(dl) != 2:
            raise InvalidRecordError(f"game {game}, action {index}: dice must be two numbers")
        dice = (r.int_(dl[0], "dice", 1, 6), r.int_(dl[1], "dice", 1, 6))
    if kind is ActionKind.MOVE and dice is None:
        raise InvalidRecordError(f"game {game}, action {index}: a move needs its dice")
    play = a.get("play")
    if play is not None and not isinstance(play, str):
        raise InvalidRecordError(f"game {game}, action {index}: play must be text, not {play!r}")
    cube = a.get("cube")
    resign = a.get("resign")
    return Action(
        player=r.int_(a.get("player"), "player", 0, 1),
        kind=kind,
        dice=dice,
        play=play,
        cube=None if cube is None else r.int_(cube, "cube", 2, 1 << 30),
        resign=None if resign is None else r.int_(resign, "resign", 1, 3),
    )


class _Reader:
    """Type checks that name where in the record a value is wrong."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, message: str) -> InvalidRecordError:
        return InvalidRecordError(f"{self.where}: {message}")

    def obj(self, value: Any, keys: set[str] | None) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"expected an object, not {type(value).__name__}")
        if keys is not None:
            unknown = sorted(set(value) - keys)
            if unknown:
                raise self.fail(f"unknown field(s) {unknown}")
        return value

    def list_(self, value: Any, name: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(f"{name} must be a list, not {value!r}")
        return value

    def int_(self, value: Any, name: str, lo: int, hi: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise self.fail(f"{name} must be a whole number {lo}-{hi}, not {value!r}")
        return value

    def bool_(self, value: Any, name: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(f"{name} must be true or false, not {value!r}")
        return value

    def str_(self, value: Any, name: str) -> str:
        if not isinstance(value, str):
            raise self.fail(f"{name} must be text, not {value!r}")
        return value
