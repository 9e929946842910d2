"""Plays in standard notation: writing them as gnubg does, reading every common form.

Points are the mover's own numbers; ``bar`` is 25 and ``off`` is 0. A move by
several dice of one checker is written as one segment (``24/13``), showing an
intermediate point only where it hit (``24/18*/13``); equal segments are
grouped (``13/7(2)``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING

from nard.core._movegen import _target
from nard.core.dice import ALL_ROLLS, Dice, check_dice
from nard.core.errors import IllegalPlayError, InvalidNotationError

if TYPE_CHECKING:
    from nard.core.position import Move, Play, Position

__all__ = ["format_moves", "parse_play", "point_name"]


def point_name(point: int) -> str:
    """``bar`` for 25, ``off`` for 0, the number otherwise."""
    return "bar" if point == 25 else "off" if point == 0 else str(point)


def format_moves(moves: Sequence[Move] | Sequence[tuple[int, int, bool]]) -> str:
    """Write a sequence of single-die moves the way gnubg does.

    >>> from nard.core.position import Move
    >>> format_moves([Move(24, 18, True), Move(18, 13, False), Move(6, 5, False)])
    '24/18*/13 6/5'
    """
    # As gnubg does: the first arrival (in the order below) on a point where a
    # blot was hit carries the ``*``; an intermediate point is shown only when
    # it carries one; chains through the same points are grouped as the first.
    # Moves are read by index (from, to, hit): a Move or a plain tuple.
    hit_points = {m[1] for m in moves if m[2]}
    chains: list[list[tuple[int, bool]]] = []  # [(point, hit on arrival)], first = start
    for m in sorted(moves, key=_descending):
        arrival = (m[1], m[1] in hit_points)
        hit_points.discard(m[1])
        for chain in chains:
            if chain[-1][0] == m[0]:
                chain.append(arrival)
                break
        else:
            chains.append([(m[0], False), arrival])
    texts: dict[tuple[int, ...], list[str]] = {}
    for chain in chains:
        text = _NAMES[chain[0][0]]
        last = len(chain) - 1
        for i in range(1, last + 1):
            point, hit = chain[i]
            if hit:
                text += "/" + _NAMES[point] + "*"
            elif i == last:
                text += "/" + _NAMES[point]
        texts.setdefault(tuple([p for p, _ in chain]), []).append(text)
    out = [same[0] if len(same) == 1 else f"{same[0]}({len(same)})" for same in texts.values()]
    return " ".join(out)


def _descending(move: tuple[int, int, bool]) -> tuple[int, int]:
    return (-move[0], -move[1])


_NAMES = tuple(point_name(p) for p in range(26))


_TOKEN = re.compile(r"(?P<chain>[^()]+?)(?:\((?P<count>\d)\))?")
_POINT = re.compile(r"(?P<name>bar|b|off|o|\d{1,2})(?P<star>\*?)")


Path = tuple[int, ...]  # the points one checker passes through, start first


def _read_paths(text: str, where: str) -> tuple[list[Path], set[int]]:
    """The checker paths a play's text describes, and the points marked with ``*``."""
    if not isinstance(text, str):
        raise InvalidNotationError(f"a play must be text, not {text!r} ({where})")
    body = text.strip().lower().replace(",", " ")
    if not body:
        raise InvalidNotationError(f"empty play {text!r} ({where})")
    paths: list[Path] = []
    starred: set[int] = set()
    moves = 0
    for token in body.split():
        m = _TOKEN.fullmatch(token)
        if not m:
            raise InvalidNotationError(f"cannot read {token!r} in play {text!r} ({where})")
        names = re.split(r"[/-]", m.group("chain"))
        if len(names) < 2:
            raise InvalidNotationError(
                f"cannot read {token!r} in play {text!r}: expected from/to, such as 13/7 ({where})"
            )
        points: list[tuple[int, bool]] = []
        for name in names:
            pm = _POINT.fullmatch(name)
            if not pm:
                raise InvalidNotationError(f"cannot read point {name!r} in play {text!r} ({where})")
            raw = pm.group("name")
            point = 25 if raw in ("bar", "b") else 0 if raw in ("off", "o") else int(raw)
            if not 0 <= point <= 25:
                raise InvalidNotationError(
                    f"no point {raw!r} in play {text!r}: points are 1-24, bar and off ({where})"
                )
            points.append((point, pm.group("star") == "*"))
        if points[0][1]:
            raise InvalidNotationError(
                f"a hit mark on the starting point in {token!r} of play {text!r} ({where})"
            )
        for (a, _), (b, star) in pairwise(points):
            if a == 0:
                raise InvalidNotationError(
                    f"{token!r} in play {text!r} moves a checker that is already off ({where})"
                )
            if b == 25:
                raise InvalidNotationError(
                    f"{token!r} in play {text!r} moves a checker onto the bar ({where})"
                )
            if b >= a:
                raise InvalidNotationError(
                    f"{token!r} in play {text!r} moves backwards: checkers move from higher "
                    f"to lower points ({where})"
                )
            if star and b == 0:
                raise InvalidNotationError(
                    f"{token!r} in play {text!r} marks a hit when bearing off ({where})"
                )
            if star:
                starred.add(b)
        count = int(m.group("count") or 1)
        if not 1 <= count <= 4:
            raise InvalidNotationError(f"bad repeat count in {token!r} of play {text!r} ({where})")
        paths.extend([tuple(p for p, _ in points)] * count)
        moves += (len(points) - 1) * count
    if moves > 4:
        raise InvalidNotationError(
            f"play {text!r} has {moves} moves; a roll gives at most 4 ({where})"
        )
    return paths, starred


def _reachable(board: tuple[int, ...], paths: list[Path], dice: Dice) -> dict[tuple[int, ...], int]:
    """Boards reached by moving one checker along each path with ``dice``.

    Each checker moves die by die and may not pass a point its path names; the
    checkers' moves may interleave in any order (two checkers entering from
    the bar before either moves on, say). Values are the number of dice used.
    """
    pool = (dice[0],) * 4 if dice[0] == dice[1] else tuple(dice)
    out: dict[tuple[int, ...], int] = {}
    seen: set[tuple[tuple[int, ...], tuple[tuple[int, int], ...], tuple[int, ...]]] = set()

    def search(b: list[int], state: tuple[tuple[int, int], ...], left: tuple[int, ...]) -> None:
        key = (tuple(b), state, left)
        if key in seen:
            return
        seen.add(key)
        if all(step == len(path) for (_, step), path in zip(state, paths, strict=True)):
            board_after = tuple(b)
            out[board_after] = max(out.get(board_after, 0), len(pool) - len(left))
            return
        outside = sum(c for c in b[7:26] if c > 0)
        for i, ((at, step), path) in enumerate(zip(state, paths, strict=True)):
            if step == len(path):
                continue
            if b[25] > 0 and at != 25:
                continue
            if b[at] <= 0:
                continue
            for j, d in enumerate(left):
                if d in left[:j]:
                    continue
                to = _target(b, at, d, outside)
                if to < 0 or to < path[step]:
                    continue
                nb = list(b)
                nb[at] -= 1
                if to > 0:
                    if nb[to] == -1:
                        nb[to] = 1
                        nb[0] -= 1
                    else:
                        nb[to] += 1
                nstep = step + 1 if to == path[step] else step
                nstate = (*state[:i], (to, nstep), *state[i + 1 :])
                search(nb, nstate, left[:j] + left[j + 1 :])

    search(list(board), tuple((path[0], 1) for path in paths), pool)
    return out


def _hit_points(before: tuple[int, ...], after: tuple[int, ...]) -> set[int]:
    return {p for p in range(1, 25) if before[p] == -1 and after[p] >= 0}


def _why_impossible(pos: Position, paths: list[Path], dice: Dice) -> str:
    b = pos.board
    outside = sum(c for c in b[7:26] if c > 0)
    for path in paths:
        s, t = path[0], path[-1]
        if b[25] > 0 and s != 25:
            return "a checker on the bar must enter first"
        if b[s] <= 0:
            return f"there is no checker of the side on roll on {point_name(s)}"
        for p in path[1:]:
            if p > 0 and b[p] < -1:
                return f"point {p} is blocked (held by two or more of the opponent's checkers)"
        if t == 0 and outside:
            return "bearing off needs all 15 checkers in the home board"
    moves = "4 moves" if dice[0] == dice[1] else "one move of each die"
    return f"the dice {dice[0]}-{dice[1]} ({moves}) cannot make those moves"


def _moved_along(board: tuple[int, ...], paths: list[Path]) -> tuple[int, ...]:
    """The board after moving one checker along each path as written, seen from
    the opponent: a blot on every point named as a landing is hit, no other."""
    b = list(board)
    for p in {p for path in paths for p in path[1:] if 0 < p < 25}:
        if b[p] == -1:
            b[p] = 0
            b[0] -= 1
    for path in paths:
        b[path[0]] -= 1
        if path[-1]:
            b[path[-1]] += 1
    return tuple([-c for c in reversed(b)])


def parse_play(
    pos: Position,
    text: str,
    dice: Sequence[int] | None,
    plays: Sequence[Play] | None = None,
) -> Play:
    """See :meth:`Position.parse_play`. ``plays``, with ``dice``: their legal plays
    in ``pos``, where the caller has them (a game keeps its turn's)."""
    where = f"position {pos.position_id()}"
    paths, starred = _read_paths(text, where)
    before = pos.board
    if dice is not None:
        # Fast path: the checkers moved as written (hitting only where the text
        # lands) give one of the legal plays. Otherwise search every way the
        # dice can make the moves, and explain a failure.
        after = _moved_along(before, paths)
        for play in plays if plays is not None else pos.legal_plays(dice):
            if play.result == after:
                return play
    rolls: Sequence[Dice] = [check_dice(dice)] if dice is not None else ALL_ROLLS
    reached_any: dict[tuple[int, ...], int] = {}
    matches: list[Play] = []
    for roll in rolls:
        reached = _reachable(before, paths, roll)
        reached_any.update(reached)
        if not reached:
            continue
        for play in pos.legal_plays(roll):
            if play.result.flip().board in reached:
                matches.append(play)
    if not matches:
        if dice is not None:
            roll = rolls[0]
            if not reached_any:
                reason = _why_impossible(pos, paths, roll)
            else:
                reason = _must_play_reason(pos, roll, max(reached_any.values()))
            raise IllegalPlayError(
                f"illegal play {text!r} with {roll[0]}-{roll[1]} in {where}: {reason}"
            )
        reason = (
            "no roll allows it"
            if not reached_any
            else "it leaves dice unplayed that must be played"
        )
        raise IllegalPlayError(f"illegal play {text!r} in {where}: {reason}")
    distinct = {p.result: p for p in matches}
    if len(distinct) > 1:
        marked = [
            p for p in distinct.values() if _hit_points(before, p.result.flip().board) == starred
        ]
        if len(marked) == 1:
            return marked[0]
        options = ", ".join(sorted(pos.format_play(p) for p in distinct.values()))
        raise InvalidNotationError(
            f"ambiguous play {text!r} in {where}: it could mean {options}"
            + ("" if dice is not None else "; give the dice")
        )
    return matches[0]


def _must_play_reason(pos: Position, dice: Dice, used: int) -> str:
    plays = pos.legal_plays(dice)
    if not plays:
        return "no move is possible with this roll; the turn passes"
    need = len(plays[0].moves)
    if used < need:
        return f"it plays {used} of the dice but {need} can be played and must be"
    if dice[0] != dice[1] and need == 1:
        return "only one die can be played, and it must be the larger one when either can"
    return "it is not among the legal plays"
