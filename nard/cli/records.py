"""``nard replay``, ``nard verify`` and ``nard export``: match records on the command line."""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
from pathlib import Path

from nard.core.errors import InvalidRecordError
from nard.match.replay import ReplayedMatch, replay
from nard.match.verify import verify_record
from nard.notation.json_record import DiceCommitment, read_json, write_json
from nard.notation.records import MatchRecord

__all__ = [
    "FORMATS",
    "cmd_export",
    "cmd_replay",
    "cmd_verify",
    "load_record",
    "write_file",
    "write_record",
]

FORMATS = ("mat", "sgf", "json")


def _format_of(path: Path, text: str | None = None) -> str:
    suffix = path.suffix.lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    if text is not None:
        head = text.lstrip()[:200]
        if head.startswith("{"):
            return "json"
        if head.startswith("("):
            return "sgf"
        if "point match" in head:
            return "mat"
    raise InvalidRecordError(
        f"cannot tell the format of {str(path)!r}: name it .mat, .sgf or .json"
    )


def load_record(
    path: str, *, allow_unfinished: bool = False
) -> tuple[MatchRecord, DiceCommitment | None]:
    """Read a record file in any of the formats (chosen by extension, else content);
    ``allow_unfinished``: its last game may stop before its end (a saved match)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InvalidRecordError(f"{path!r} is not a text file (UTF-8)") from None
    except OSError as exc:
        raise InvalidRecordError(f"cannot read {path!r}: {exc.strerror}") from None
    fmt = _format_of(p, text)
    if fmt == "json":
        return read_json(text)
    if fmt == "mat":
        from nard.notation.mat import read_mat

        return read_mat(text, allow_unfinished=allow_unfinished), None
    from nard.notation.sgf import read_sgf

    return read_sgf(text, allow_unfinished=allow_unfinished), None


def write_record(record: MatchRecord, fmt: str) -> str:
    """``record`` as ``fmt`` (``mat``, ``sgf`` or ``json``)."""
    if fmt not in FORMATS:
        raise InvalidRecordError(
            f"cannot save as {fmt or 'no suffix'!r}: name it .mat, .sgf or .json"
        )
    return _render(record, fmt, None)


def _render(record: MatchRecord, fmt: str, dice: DiceCommitment | None) -> str:
    if fmt == "json":
        return write_json(record, dice)
    if fmt == "mat":
        from nard.notation.mat import write_mat

        return write_mat(record)
    from nard.notation.sgf import write_sgf

    return write_sgf(record)


def _summary(record: MatchRecord, replayed: ReplayedMatch) -> str:
    kind = f"{record.match_length}-point match" if record.match_length else "money session"
    lines = [f"{kind}: {record.players[0]} (player 0) vs {record.players[1]} (player 1)"]
    score = [0, 0]
    for g in replayed.games:
        score[g.winner] += g.points
        s = "s" if g.points != 1 else ""
        lines.append(
            f"game {g.number}: player {g.winner} wins {g.points} point{s} "
            f"({g.result.value}, cube {g.cube}); score {score[0]}-{score[1]}"
        )
    lines.append(f"final score: {replayed.final_score[0]}-{replayed.final_score[1]}")
    lines += [f"note: {note}" for note in replayed.notes]
    return "\n".join(lines)


def cmd_replay(path: str, as_json: bool, crawford: bool = True) -> int:
    record, _ = load_record(path)
    replayed = replay(record, crawford=None if crawford else False)
    if as_json:
        print(json.dumps(replayed.to_json()))
    else:
        print(_summary(record, replayed))
    return 0


def cmd_verify(path: str) -> int:
    record, dice = load_record(path)
    replay(record)  # the games themselves must be legal too
    report = verify_record(record, dice)
    if report.ok:
        print(
            f"verified: the seed matches its commitment and gives all {report.dice_checked} "
            f"dice; all {report.rolls_checked} rolls of the games are those dice"
        )
        return 0
    for problem in report.problems:
        print(f"MISMATCH {problem}")
    print(f"verification FAILED: {len(report.problems)} problem(s)")
    return 1


def write_file(target: str, text: str) -> None:
    """Write ``text`` beside ``target`` and rename it there: an interrupted write never
    leaves a half-written file in place of a good one."""
    directory = os.path.dirname(os.path.abspath(target))
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".nard-write-")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(tmp, target)
    except OSError as exc:
        raise InvalidRecordError(f"cannot write {target!r}: {exc.strerror}") from None


def cmd_export(source: str, target: str, to: str | None) -> int:
    record, dice = load_record(source)
    replayed = replay(record)  # never write out a record the rules reject
    if replayed.crawford_rule != record.crawford_rule:  # inferred: say it where the format can
        record = dataclasses.replace(record, crawford_rule=replayed.crawford_rule)
    for note in replayed.notes:
        print(f"note: {note}")
    fmt = to or _format_of(Path(target))
    write_file(target, _render(record, fmt, dice))
    print(f"wrote {target} ({fmt}, {len(record.games)} games)")
    return 0
