"""Round trips with GNU Backgammon, both ways.

gnubg's own matches and money sessions (tests/data/gnubg_matches, 57 of them,
each as .mat and SGF) replay through nard's rules to gnubg's results; and
matches nard plays are exported to .mat and SGF and imported by gnubg, which
must agree on every game's winner and points and on the final score.
"""

from __future__ import annotations

import dataclasses
import random
import tempfile
from pathlib import Path
from typing import Any

import pytest

from nard.match import Match, MatchRules, MoneyRules, SeededDice, Session, replay
from nard.notation.mat import read_mat, write_mat
from nard.notation.records import ActionKind, MatchRecord
from nard.notation.sgf import read_sgf, write_sgf
from tests.gnubg_oracle import requires_gnubg
from tests.match.random_play import play_random_game
from tests.notation.match_corpus import NAMES, entry, import_into_gnubg, mat_record, sgf_record


def _expected(name: str) -> list[tuple[int, int]]:
    return [(g["winner"], g["points"]) for g in entry(name)["games"]]


@pytest.mark.parametrize("name", NAMES)
def test_gnubg_matches_replay_to_gnubg_results(name: str) -> None:
    want = entry(name)
    rules = want["rules"]
    for record in (mat_record(name), sgf_record(name)):
        if not record.match_length:
            record = dataclasses.replace(record, jacoby=rules["jacoby"])  # .mat cannot say
        crawford = rules["crawford"] if record.match_length > 1 else None
        replayed = replay(record, crawford=crawford)
        assert [(g.winner, g.points) for g in replayed.games] == _expected(name)
        assert list(replayed.final_score) == want["final_score"]


def test_the_corpus_has_what_the_issue_asks_for() -> None:
    kinds: dict[ActionKind, int] = {}
    crawford_games = 0
    lengths = set()
    for name in NAMES:
        record = sgf_record(name)
        lengths.add(record.match_length)
        crawford_games += sum(g.crawford for g in record.games)
        for game in record.games:
            for action in game.actions:
                kinds[action.kind] = kinds.get(action.kind, 0) + 1
    assert len(NAMES) >= 50
    assert {0, 1, 3, 5, 7} <= lengths
    for kind in (ActionKind.DOUBLE, ActionKind.TAKE, ActionKind.DROP, ActionKind.BEAVER):
        assert kinds.get(kind, 0) >= 10, kind
    assert crawford_games >= 10
    results = {g["points"] for name in NAMES for g in entry(name)["games"]}
    assert {1, 2, 4} <= results  # singles, gammons, redoubled games


def _nard_records() -> list[tuple[str, MatchRecord]]:
    """Matches and sessions nard plays with random legal actions."""
    out = []
    for seed, length in [(1, 1), (2, 3), (3, 5), (4, 7), (5, 5), (6, 3), (7, 9), (8, 7)]:
        match = Match(length, MatchRules(), dice=SeededDice(seed))
        rng = random.Random(seed)
        while not match.is_over:
            play_random_game(match.new_game(), rng)
        out.append((f"match-{seed}", match.to_record(("Ali", "Sara"))))
    for seed, jacoby in [(11, False), (12, True), (13, False)]:
        session = Session(MoneyRules(jacoby=jacoby, cube_cap=None), dice=SeededDice(seed))
        rng = random.Random(seed)
        for _ in range(6):
            play_random_game(session.new_game(), rng)
        out.append((f"money-{seed}", session.to_record(("Ali", "Sara"))))
    return out


@requires_gnubg
@pytest.mark.gnubg
def test_gnubg_imports_matches_nard_played() -> None:
    records = _nard_records()
    with tempfile.TemporaryDirectory() as tmp:
        payload: list[list[Any]] = []
        for name, record in records:
            mat, sgf = Path(tmp) / f"{name}.mat", Path(tmp) / f"{name}.sgf"
            mat.write_text(write_mat(record))
            sgf.write_text(write_sgf(record))
            # nard reads its own files back to the same results.
            for reread in (read_mat(mat.read_text()), read_sgf(sgf.read_text())):
                again = replay(dataclasses.replace(reread, jacoby=record.jacoby))
                assert again.final_score == replay(record).final_score
            payload.append([name, record.jacoby, str(mat), str(sgf)])
        answers = import_into_gnubg(payload)
    by_name = dict(records)
    seen = 0
    for name, kind, length, games in answers:
        record = by_name[name]
        replayed = replay(record)
        assert length == record.match_length
        assert [[w, p] for _, w, p, _ in games] == [
            ["XO"[g.winner], g.points] for g in replayed.games
        ], (name, kind)
        seen += 1
    assert seen == 2 * len(records)
