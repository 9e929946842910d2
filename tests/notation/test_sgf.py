"""gnubg's SGF: its files read, agreeing with its ``.mat`` exports, nard's files loaded by gnubg."""

from __future__ import annotations

import dataclasses
from collections import Counter

import pytest

from nard.core.errors import InvalidRecordError
from nard.notation.records import Action, ActionKind, GameRecord, MatchRecord
from nard.notation.sgf import read_sgf, write_sgf
from tests.notation.gnubg_ids import needs_gnubg
from tests.notation.match_corpus import (
    CORPUS,
    NAMES,
    check_gnubg_reimport,
    check_like_gnubg,
    entry,
    mat_record,
    sgf_record,
)

# -- the corpus -----------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_reads_what_gnubg_played(name: str) -> None:
    record = sgf_record(name)
    check_like_gnubg(record, name)
    rules = entry(name)["rules"]
    # gnubg writes no Crawford rule for a 1-point match, where it cannot apply.
    assert record.crawford_rule == (rules["crawford"] and record.match_length > 1)
    assert record.jacoby == (rules["jacoby"] and record.match_length == 0)
    assert record.metadata == {"DT": "2024-03-01"}


@pytest.mark.parametrize("name", NAMES)
def test_agrees_with_the_mat_export(name: str) -> None:
    sgf, mat = sgf_record(name), mat_record(name)
    assert (sgf.match_length, sgf.players) == (mat.match_length, mat.players)
    for ours, theirs in zip(sgf.games, mat.games, strict=True):
        if not entry(name)["rules"]["crawford"]:
            # .mat has no Crawford marker: its reader infers the Crawford game.
            theirs = dataclasses.replace(theirs, crawford=False)
        assert ours == theirs  # dice, plays, cube actions, results


@pytest.mark.parametrize("name", NAMES)
def test_round_trip(name: str) -> None:
    record = sgf_record(name)
    assert read_sgf(write_sgf(record)) == record


@pytest.mark.gnubg
@needs_gnubg
@pytest.mark.parametrize("name", NAMES)
def test_gnubg_loads_what_nard_writes(name: str) -> None:
    check_gnubg_reimport(name, "sgf")


def test_writes_gnubg_nodes() -> None:
    # Same nodes as gnubg's own file once analysis and statistics are left out;
    # a play's single-die moves may come in another order, or a checker moved
    # by both dice may pass the other intermediate point.
    original = (CORPUS / "money_07.sgf").read_text()
    written = write_sgf(read_sgf(original))

    def nodes(text: str) -> list[str]:
        out = []
        for line in text.splitlines():
            if line.startswith(";"):
                head, _, value = line[1:].partition("[")
                value = value.split("]")[0]
                if value[:2].isdigit():  # the net move: chains may pass other points
                    starts = Counter(value[2::2])
                    ends = Counter(value[3::2])
                    value = value[:2] + "".join(sorted((starts - ends).elements()))
                    value += "/" + "".join(sorted((ends - starts).elements()))
                out.append(f"{head}[{value}]")
        return out

    assert nodes(written) == nodes(original)
    roots = [line for line in written.splitlines() if line.startswith("(")]
    assert roots[0].startswith(
        "(;FF[4]GM[6]CA[UTF-8]AP[nard]MI[length:0][game:0][ws:0][bs:0]PW[gnubg]PB[root]"
        "DT[2024-03-01]RU[Jacoby]"
    )


# -- reading ------------------------------------------------------------------------

_SMALL = """(;FF[4]GM[6]CA[UTF-8]AP[GNU Backgammon:1.07.001]MI[length:0][game:0][ws:0][bs:0]
PW[Alice]PB[Bob]RE[W+1]
;W[31hefe]A[analysis that is skipped]
;B[52lqln]
;W[double]
;B[drop])
(;FF[4]GM[6]CA[UTF-8]MI[length:0][game:1][ws:1][bs:0]PW[Alice]PB[Bob]RE[B+2R]
;B[21lnab]
;W[double]
;B[take]
;W[63])
"""


def test_reads_a_small_session() -> None:
    record = read_sgf(_SMALL)
    assert record == MatchRecord(
        0,
        (
            GameRecord(
                1,
                (0, 0),
                (
                    Action(0, ActionKind.MOVE, dice=(3, 1), play="8/5 6/5"),
                    Action(1, ActionKind.MOVE, dice=(5, 2), play="13/11 13/8"),
                    Action(0, ActionKind.DOUBLE, cube=2),
                    Action(1, ActionKind.DROP),
                ),
                winner=0,
                points=1,
            ),
            GameRecord(
                2,
                (1, 0),
                (
                    Action(1, ActionKind.MOVE, dice=(2, 1), play="24/23 13/11"),
                    Action(0, ActionKind.DOUBLE, cube=2),
                    Action(1, ActionKind.TAKE),
                    # 63 can be played: Alice rolled and then resigned (gnubg: PL[W]DI[63])
                    Action(0, ActionKind.MOVE, dice=(6, 3), play=None),
                ),
                winner=1,
                points=2,
            ),
        ),
        players=("Alice", "Bob"),
        crawford_rule=False,
    )
    assert ";PL[W]DI[63])" in write_sgf(record)
    assert read_sgf(write_sgf(record)) == record


def test_beavers_and_raccoons() -> None:
    text = """(;FF[4]GM[6]MI[length:0][game:0][ws:0][bs:0]PW[a]PB[b]RU[Jacoby]RE[B+8R]
;W[31hefe];B[double];W[double];B[double];W[take];B[52lqln])"""
    record = read_sgf(text)
    actions = record.games[0].actions
    assert [(a.player, a.kind, a.cube) for a in actions[1:4]] == [
        (1, ActionKind.DOUBLE, 2),
        (0, ActionKind.BEAVER, 4),
        (1, ActionKind.RACCOON, 8),
    ]
    assert actions[4].kind is ActionKind.MOVE  # the take is implied
    assert ";W[take]\n;B[52" in write_sgf(record)
    assert read_sgf(write_sgf(record)) == record


def test_escapes_and_variations() -> None:
    text = r"""(;FF[4]GM[6]MI[length:0][game:0][ws:0][bs:0]PW[A\]\\ b]PB[c:d]
C[a comment with \] and a soft\
break]RE[B+1]
;W[31hefe](;B[double];W[drop])(;B[52lqln];W[double];B[drop]))"""
    record = read_sgf(text)
    assert record.players == ("A]\\ b", "c:d")
    # The main line is the first variation.
    assert [a.kind for a in record.games[0].actions] == [
        ActionKind.MOVE,
        ActionKind.DOUBLE,
        ActionKind.DROP,
    ]
    assert record.games[0].winner == 1  # Black doubled, White dropped
    assert read_sgf(write_sgf(record)) == record
    # RE is on line 3, after the comment's soft line break.
    with pytest.raises(InvalidRecordError, match=r"line 3, game 1: the result gives the game to"):
        read_sgf(text.replace("RE[B+1]", "RE[W+1]"))


# -- refusing bad files --------------------------------------------------------------

_TWO = (CORPUS / "match3_04.sgf").read_text()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("GM[6]", "GM[1]", r"line 1, game 1: not a backgammon game: GM\[1\]"),
        (";W[51mhxw]", ";W[71mhxw]", r"line 2, game 1: invalid dice '71'"),
        (";W[51mhxw]", ";W[51mh]", r"line 2, game 1: player 0: illegal play '13/8' with 5-1"),
        (";W[51mhxw]", ";W[51mhx]", r"line 2, game 1: cannot read the move W\[51mhx\]"),
        (";W[51mhxw]", ";W[51zymh]", r"line 2, game 1: cannot read the move W\[51zymh\]: zy"),
        (";W[51mhxw]", ";W[51mhxw]\n;W[take]", r"line 3, game 1: player 0 takes but no double"),
        (";W[51mhxw]", ";W[51mhxw]\n;W[42hdfd]", r"line 3, game 1: player 0 rolls 42 but it is"),
        (";W[51mhxw]", ";W[51mhxw]\n;AE[a:y]", r"line 3, game 1: position set-up \(AE\)"),
        ("RE[B+1]", "RE[B+1x]", r"line 1, game 1: cannot read the result RE\[B\+1x\]"),
        ("RE[B+1]", "RE[W+1]", r"line 1, game 1: the result gives the game to player 0, but "),
        ("RE[B+1]", "RE[B+1R]", r"line 1, game 1: the result says resigned, but "),
        ("[game:1]", "[game:2]", r"line 17, game 3: game 3 is not game 2"),
        (
            "[game:1][ws:0][bs:1]",
            "[game:1][ws:0][bs:2]",
            r"line 17, game 2: the score 0-2 does not",
        ),
        ("MI[length:3][game:0]", "MI[length:5][game:0]", r"line 17, game 2: a 3-point game in a 5"),
        ("RU[Crawford]", "RU[Crawford:Nackgammon]", r"line 1, game 1: the variant Nackgammon"),
        ("PB[nard-b]", "PB[nard-b]CV[2]", r"line 1, game 1: automatic doubles"),
        ("MI[length:3][game:0][ws:0][bs:0]", "", r"line 1, game 1: no MI\[...\]"),
    ],
)
def test_refuses(old: str, new: str, message: str) -> None:
    assert old in _TWO
    with pytest.raises(InvalidRecordError, match=message):
        read_sgf(_TWO.replace(old, new, 1))


def test_truncated_files_are_refused() -> None:
    text = _TWO.rstrip()
    for cut in range(1, len(text) - 1, max(1, len(text) // 120)):
        with pytest.raises(InvalidRecordError):
            read_sgf(text[:cut])
    assert read_sgf(text) == sgf_record("match3_04")
    first_game = text[: text.index(")\n(") + 1]
    with pytest.raises(InvalidRecordError, match="the match to 3 stops at 0-1"):
        read_sgf(first_game)
    assert len(read_sgf(first_game, allow_unfinished=True).games) == 1


def test_empty_and_not_text() -> None:
    with pytest.raises(InvalidRecordError, match="no game tree"):
        read_sgf("  ")
    with pytest.raises(InvalidRecordError, match="line 1: unexpected 'hello'"):
        read_sgf("hello")
    with pytest.raises(InvalidRecordError, match="must be text"):
        read_sgf(None)  # type: ignore[arg-type]
