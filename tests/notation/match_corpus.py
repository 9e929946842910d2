"""The corpus of matches GNU Backgammon played itself (tests/data/gnubg_matches).

``manifest.json`` is gnubg's own view of each match (see
tests/data/record_gnubg_matches.py). Each file is read once per test run;
:func:`gnubg_reimport` has one gnubg process import what nard writes.
"""

from __future__ import annotations

import json
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

from nard.notation.mat import read_mat, write_mat
from nard.notation.records import MatchRecord
from nard.notation.sgf import read_sgf, write_sgf
from tests.notation.gnubg_ids import run_in_gnubg

__all__ = [
    "CORPUS",
    "NAMES",
    "check_gnubg_reimport",
    "check_like_gnubg",
    "entry",
    "gnubg_reimport",
    "import_into_gnubg",
    "manifest",
    "mat_record",
    "sgf_record",
]

CORPUS = Path(__file__).parents[1] / "data" / "gnubg_matches"


@cache
def manifest() -> dict[str, dict[str, Any]]:
    """The manifest's matches by name, in recording order."""
    doc = json.loads((CORPUS / "manifest.json").read_text())
    return {m["name"]: m for m in doc["matches"]}


NAMES = list(manifest())


def entry(name: str) -> dict[str, Any]:
    return manifest()[name]


@cache
def mat_record(name: str) -> MatchRecord:
    return read_mat((CORPUS / entry(name)["mat"]).read_text())


@cache
def sgf_record(name: str) -> MatchRecord:
    return read_sgf((CORPUS / entry(name)["sgf"]).read_text())


def check_like_gnubg(record: MatchRecord, name: str, *, crawford: bool = True) -> None:
    """``record`` has the length, players, scores and results gnubg recorded for ``name``."""
    want = entry(name)
    assert record.match_length == want["match_length"]
    assert list(record.players) == want["players"]
    assert len(record.games) == len(want["games"])
    for game, expected in zip(record.games, want["games"], strict=True):
        assert list(game.score) == expected["score"], game.number
        assert game.winner == expected["winner"], game.number
        assert game.points == expected["points"], game.number
        if crawford:
            assert game.crawford == expected["crawford"], game.number
    last = record.games[-1]
    assert last.winner is not None and last.points is not None
    final = list(last.score)
    final[last.winner] += last.points
    assert final == want["final_score"]


_IMPORT = """
for name, jacoby, mat, sgf in payload:
    gnubg.command('set jacoby ' + ('on' if jacoby else 'off'))
    for kind, command, path in (('mat', 'import mat', mat), ('sgf', 'load match', sgf)):
        gnubg.command(command + ' ' + path)
        m = gnubg.match(analysis=0)
        emit([name, kind, m['match-info']['match-length'],
              [[[g['info']['score-X'], g['info']['score-O']], g['info'].get('winner'),
                g['info'].get('points-won'), bool(g['info'].get('resigned'))]
               for g in m['games']]])
"""


def import_into_gnubg(payload: list[list[Any]]) -> list[Any]:
    """gnubg imports each [name, jacoby, .mat path, .sgf path]; per file, answers
    [name, "mat" or "sgf", match length, per game [score, winner X/O, points, resigned]]."""
    return run_in_gnubg(_IMPORT, payload, timeout=300)


@cache
def gnubg_reimport() -> dict[tuple[str, str], tuple[int, list[list[Any]]]]:
    """What gnubg reads from the files nard writes for every corpus match.

    Keys are (name, "mat" or "sgf"); values the match length and, per game,
    [score before it, winner as 0/1, points, resigned]. ``.mat`` has no Jacoby flag, so gnubg
    imports each with the rule set as the match had it.
    """
    with tempfile.TemporaryDirectory() as tmp:
        payload = []
        for name in NAMES:
            mat = Path(tmp) / f"{name}.mat"
            sgf = Path(tmp) / f"{name}.sgf"
            mat.write_text(write_mat(mat_record(name)))
            sgf.write_text(write_sgf(sgf_record(name)))
            payload.append([name, entry(name)["rules"]["jacoby"], str(mat), str(sgf)])
        answers = import_into_gnubg(payload)
    out: dict[tuple[str, str], tuple[int, list[list[Any]]]] = {}
    for name, kind, length, games in answers:
        out[(name, kind)] = (
            length,
            [[s, "XO".index(w) if w in ("X", "O") else None, p, r] for s, w, p, r in games],
        )
    return out


def check_gnubg_reimport(name: str, kind: str) -> None:
    """gnubg read nard's ``kind`` ("mat" or "sgf") file of ``name`` as the manifest has it."""
    length, games = gnubg_reimport()[(name, kind)]
    want = entry(name)
    assert length == want["match_length"]
    assert games == [[g["score"], g["winner"], g["points"], g["resigned"]] for g in want["games"]]
    final = list(games[-1][0])
    final[games[-1][1]] += games[-1][2]
    assert final == want["final_score"]
