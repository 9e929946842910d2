"""Jellyfish ``.mat`` files: gnubg's exports read, nard's imported by gnubg, bad ones refused."""

from __future__ import annotations

import dataclasses
import re

import pytest

from nard import InvalidNotationError
from nard.core.errors import InvalidRecordError
from nard.core.position import Position
from nard.notation._transcript import find_play
from nard.notation.mat import read_mat, write_mat
from nard.notation.records import Action, ActionKind, GameRecord, MatchRecord
from tests.notation.gnubg_ids import needs_gnubg
from tests.notation.match_corpus import (
    CORPUS,
    NAMES,
    check_gnubg_reimport,
    check_like_gnubg,
    entry,
    manifest,
    mat_record,
)

# -- the corpus -----------------------------------------------------------------


def test_corpus_covers_the_format() -> None:
    matches = list(manifest().values())
    assert len(matches) >= 50
    assert {m["match_length"] for m in matches} >= {0, 1, 3, 5, 7}
    games = [g for m in matches for g in m["games"]]
    for feature in ("doubles", "takes", "drops", "beavers"):
        assert sum(g[feature] for g in games) >= 10, feature
    assert sum(g["resigned"] for g in games) >= 10
    assert sum(g["crawford"] for g in games) >= 10
    assert {g["points"] for g in games} >= {1, 2, 3, 4}
    assert any(m["rules"]["jacoby"] for m in matches)
    files = [p for p in CORPUS.iterdir() if p.suffix in (".mat", ".sgf")]
    assert len(files) == 2 * len(matches)
    assert sum(p.stat().st_size for p in CORPUS.iterdir()) < 2_000_000


@pytest.mark.parametrize("name", NAMES)
def test_reads_what_gnubg_played(name: str) -> None:
    record = mat_record(name)
    # .mat has no Crawford marker: where gnubg played without the rule, the
    # reader (like gnubg's own importer) still takes the score's word for it.
    check_like_gnubg(record, name, crawford=entry(name)["rules"]["crawford"])
    assert record.crawford_rule == (record.match_length > 1)
    for game in record.games:
        for action in game.actions:
            if action.kind is ActionKind.MOVE:
                assert action.dice is not None
                assert action.play is not None  # gnubg never resigns after rolling


@pytest.mark.parametrize("name", NAMES)
def test_round_trip(name: str) -> None:
    record = mat_record(name)
    assert read_mat(write_mat(record)) == record


@pytest.mark.gnubg
@needs_gnubg
@pytest.mark.parametrize("name", NAMES)
def test_gnubg_imports_what_nard_writes(name: str) -> None:
    check_gnubg_reimport(name, "mat")


def test_writes_gnubg_layout() -> None:
    text = (CORPUS / "money_13.mat").read_text()
    written = write_mat(read_mat(text)).splitlines()
    original = text.splitlines()
    assert len(written) == len(original)
    for ours, theirs in zip(written, original, strict=True):
        # Same entries in the same columns; a play's moves may come in another order.
        assert _shape(ours) == _shape(theirs), (ours, theirs)


def _shape(line: str) -> list[tuple[int, str]]:
    return [
        (m.start(), m.group())
        for m in re.finditer(r"\d+\)|\d\d:|Doubles|Beavers|Takes|Drops|Wins|Game|point", line)
    ]


# -- reading what other programs write ----------------------------------------------

_GAME = """\
 0 point match

 Game 1
 Alice : 0                      Bob : 0
  1) 31: 8/5 6/5                 52: 13/11 13/8
  2)  Doubles => 2                Drops
      Wins 1 point
"""


def test_reads_a_small_session() -> None:
    record = read_mat(_GAME)
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
        ),
        players=("Alice", "Bob"),
        crawford_rule=False,
    )


@pytest.mark.parametrize("unplayed", ["???", "Cannot Move", ""])
def test_other_notations_are_normalised(unplayed: str) -> None:
    text = f"""\
; [Site "somewhere"]
; [Jacoby "On"]
 0 point match

 Game 1
 Ann Lee : 0   Bo : 0
 1) 64: 24/14 52: 13/8, 6/4
 2) 55: 13/3(2) 41: 24/20 6/5
 3) 63: 24/15 51: {unplayed}
      Wins 2 points and the match
"""
    record = read_mat(text)
    assert record.players == ("Ann Lee", "Bo")
    assert record.jacoby and not record.crawford_rule
    assert record.metadata == {"Site": "somewhere"}
    game = record.games[0]
    assert [a.play for a in game.actions] == [
        "24/14",  # 6-4 by one checker, by 18 or 20
        "13/8 6/4",
        "13/3(2)",
        "24/20 6/5",
        "24/15",  # by 18: by 21 it would hit Bo's blot
        None,  # Bo rolled 5-1, could play, and resigned instead (XG writes "???")
    ]
    assert (game.winner, game.points) == (0, 2)
    with pytest.raises(InvalidRecordError, match=r"line 10, game 1: player 0 rolls 32 after "):
        read_mat(text.replace("      Wins", " 4) 32: 6/3 6/4\n      Wins"))


@pytest.mark.parametrize(
    ("on_roll", "opponent", "dice", "texts", "expected"),
    [
        (
            {25: 1, 6: 2},
            {3: 1},
            (3, 1),
            ["bar/22* 6/5", "25/22* 6/5", "25/22 6/5", "b/22*, 6/5"],
            "bar/22* 6/5",
        ),
        (
            {6: 1, 5: 1},
            {1: 2},
            (6, 5),
            ["6/off 5/off", "6/0 5/0", "5/0 6/0", "6/o 5/o"],
            "6/off 5/off",
        ),
        (
            {24: 2, 13: 2},
            {},
            (4, 4),
            ["24/16(2)", "24/20/16 24/20/16", "24/20(2) 20/16(2)"],
            "24/16(2)",
        ),
    ],
)
def test_play_texts(
    on_roll: dict[int, int],
    opponent: dict[int, int],
    dice: tuple[int, int],
    texts: list[str],
    expected: str,
) -> None:
    pos = Position.from_points(on_roll, opponent)
    for text in texts:
        play = find_play(pos, dice, text=text)
        assert pos.format_play(play) == expected, text


def test_raccoons_and_crlf() -> None:
    text = """\r
 0 point match\r
\r
 Game 1\r
 A : 0                      B : 0\r
  1) 31: 8/5 6/5                  Doubles => 2\r
  2)  Beavers => 4                Raccoons => 8\r
  3)                             52: 13/11 13/8\r
      Wins 8 points\r
"""
    record = read_mat("\ufeff" + text)
    kinds = [(a.player, a.kind, a.cube) for a in record.games[0].actions]
    assert kinds[1:4] == [
        (1, ActionKind.DOUBLE, 2),
        (0, ActionKind.BEAVER, 4),
        (1, ActionKind.RACCOON, 8),
    ]
    assert read_mat(write_mat(record)) == record


def test_a_match_in_progress_needs_allow_unfinished() -> None:
    text = _GAME.replace(" 0 point match", " 3 point match")
    with pytest.raises(InvalidRecordError, match=r"game 1: the match to 3 stops at 1-0"):
        read_mat(text)
    assert read_mat(text, allow_unfinished=True).games[0].winner == 0
    cut = text.replace("      Wins 1 point\n", "").replace(
        "  2)  Doubles => 2                Drops\n", ""
    )
    with pytest.raises(InvalidRecordError, match=r"line 5, game 1: .*no result"):
        read_mat(cut)
    assert read_mat(cut, allow_unfinished=True).games[0].winner is None


def test_crawford_from_the_score() -> None:
    def game(number: int, score: int) -> str:
        return (
            f" Game {number}\n A : 0                      B : {score}\n"
            "  1) 31: 8/5 6/5                  Doubles => 2\n"
            "  2)  Drops\n" + " " * 33 + "Wins 1 point\n\n"
        )

    text = " 3 point match\n\n" + "".join(game(n, n - 1) for n in (1, 2, 3))
    # Game 3 at 0-2 is the Crawford game (its double is for the rules to refuse).
    record = read_mat(text)
    assert [g.crawford for g in record.games] == [False, False, True]
    no_rule = read_mat('; [Crawford "Off"]\n' + text)
    assert not no_rule.crawford_rule
    assert [g.crawford for g in no_rule.games] == [False, False, False]
    assert read_mat(write_mat(no_rule)) == no_rule


# -- refusing bad files --------------------------------------------------------------

_TWO_GAMES = (
    _GAME
    + "\n Game 2\n Alice : 1                      Bob : 0\n"
    + (
        "  1)                             52: 13/11 13/8\n"
        "  2) 31: 8/5 6/5                  Doubles => 2\n"
        "  3)  Drops                       Wins 1 point\n"
    )
)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("  2)  Doubles => 2", "  2)  Dobles => 2", r"line 6, game 1: cannot read 'Dobles'"),
        ("  1) 31:", "  1) 71:", r"line 5, game 1: invalid dice '71:'"),
        ("  1) 31:", "  1) 3:", r"line 5, game 1: invalid dice '3:'"),
        (" Doubles => 2                Drops", " Takes", r"line 6, game 1: player 0 takes but no"),
        (
            "52: 13/11 13/8\n  2)",
            "\n  2)",
            r"line 6, game 1: player 0 doubles but it is player 1's",
        ),
        ("31: 8/5 6/5", "31: 8/4 6/5", r"line 5, game 1: player 0: illegal play '8/4 6/5'"),
        ("Doubles => 2", "Doubles => 4", r"line 6, game 1: .*takes the cube to 2, not 4"),
        (
            "Wins 1 point\n",
            "Wins 1 point\n 12) 31: 8/5 6/5\n",
            r"line 8, game 1: .*after the game's",
        ),
        ("Wins 1 point\n", "Wins one point\n", r"line 7, game 1: cannot read 'Wins one point'"),
        (" 0 point match", " 0 pt match", r"line 1: expected the header"),
        (" Alice : 0", " Alice 0", r"line 4, game 1: expected the players and scores"),
        (" Game 2\n Alice : 1", " Game 3\n Alice : 1", r"line 9, game 3: game 3 is not game 2"),
        (" Game 2\n Alice : 1", " Game 2\n Alice : 2", r"line 9, game 2: the score 2-0 does not"),
        (
            " Game 2\n Alice : 1     ",
            " Game 2\n Carol : 1     ",
            r"line 10, game 2: the players are",
        ),
        ("      Wins 1 point\n\n", "\n", r"line 6, game 1: .*no result"),
        (" Game 1\n", "  1) 31: 8/5 6/5\n Game 1\n", r"line 3: '1\) 31: 8/5 6/5' comes before any"),
        (
            "  3)  Drops                       Wins 1 point",
            "  3)  Drops  Wins 1 point  Wins 1 point",
            r"line 13, game 2: more than two entries",
        ),
        (
            "  3)  Drops                       Wins 1 point",
            "  3)  Drops\n      Wins 1 point",
            r"line 14, game 2: the result gives the game to player 0, but player 1 doubled",
        ),
    ],
)
def test_refuses(old: str, new: str, message: str) -> None:
    assert old in _TWO_GAMES
    bad = _TWO_GAMES.replace(old, new, 1)
    with pytest.raises(InvalidRecordError, match=message) as info:
        read_mat(bad)
    assert isinstance(info.value, InvalidNotationError) and isinstance(info.value, ValueError)


@pytest.mark.parametrize("name", ["match3_04", "match5_06"])
def test_truncated_files_are_refused(name: str) -> None:
    text = (CORPUS / entry(name)["mat"]).read_text().rstrip()
    for cut in range(1, len(text) - 1, max(1, len(text) // 50)):
        with pytest.raises(InvalidRecordError):
            read_mat(text[:cut])
    assert read_mat(text) == mat_record(name)


def test_empty_and_not_text() -> None:
    with pytest.raises(InvalidRecordError, match="no ' N point match' header"):
        read_mat("")
    with pytest.raises(InvalidRecordError, match="no games"):
        read_mat(" 5 point match\n")
    with pytest.raises(InvalidRecordError, match="must be text"):
        read_mat(b" 5 point match\n")  # type: ignore[arg-type]


def test_writer_refuses_an_illegal_play() -> None:
    record = read_mat(_GAME)
    game = record.games[0]
    bad = dataclasses.replace(
        game, actions=(Action(0, ActionKind.MOVE, dice=(3, 1), play="8/4 6/5"), *game.actions[1:])
    )
    with pytest.raises(InvalidRecordError, match=r"game 1: action 1: illegal play '8/4 6/5'"):
        write_mat(dataclasses.replace(record, games=(bad,)))
