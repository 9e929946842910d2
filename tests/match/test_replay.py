"""Replaying records through the rules: faithful for good records, precise for bad ones."""

from __future__ import annotations

import dataclasses
import random

import pytest

from nard.match import Match, MatchRules, MoneyRules, RecordError, SeededDice, Session, replay
from nard.notation.records import Action, ActionKind, GameRecord, MatchRecord
from tests.match.random_play import play_random_game


def _random_match(seed: int, length: int) -> Match:
    match = Match(length, dice=SeededDice(seed))
    rng = random.Random(seed)
    while not match.is_over:
        play_random_game(match.new_game(), rng)
    return match


def _random_session(seed: int, games: int, rules: MoneyRules) -> Session:
    session = Session(rules, dice=SeededDice(seed))
    rng = random.Random(seed)
    for _ in range(games):
        play_random_game(session.new_game(), rng)
    return session


@pytest.mark.parametrize(("seed", "length"), [(1, 1), (2, 3), (3, 5), (4, 7), (5, 9)])
def test_replaying_a_match_record_gives_the_same_games(seed: int, length: int) -> None:
    match = _random_match(seed, length)
    replayed = replay(match.to_record())
    assert replayed.final_score == match.score
    assert [(g.winner, g.points, g.result, g.cube) for g in replayed.games] == [
        (r.winner, r.points, r.kind, r.cube) for r in match.results
    ]
    summary = replayed.to_json()
    assert summary["match_length"] == length and summary["final_score"] == list(match.score)


def test_replaying_a_money_session_with_beavers_and_jacoby() -> None:
    rules = MoneyRules(jacoby=True, beavers=True, raccoons=True, cube_cap=None)
    session = _random_session(11, 12, rules)
    kinds = {a.kind for g in session.games for a in g.actions}
    assert ActionKind.DOUBLE in kinds
    replayed = replay(session.to_record())
    assert replayed.final_score == session.score
    assert replayed.match_length == 0


def _record() -> MatchRecord:
    return _random_match(3, 5).to_record()


def _with_action(record: MatchRecord, game: int, index: int, action: Action | None) -> MatchRecord:
    """``record`` with action ``index`` of game ``game`` replaced (or removed if None)."""
    g = record.games[game]
    actions = list(g.actions)
    if action is None:
        del actions[index]
    else:
        actions[index] = action
    games = list(record.games)
    games[game] = dataclasses.replace(g, actions=tuple(actions))
    return dataclasses.replace(record, games=tuple(games))


def _first(record: MatchRecord, kind: ActionKind) -> tuple[int, int, Action]:
    for gi, g in enumerate(record.games):
        for ai, a in enumerate(g.actions):
            if a.kind is kind and (kind is not ActionKind.MOVE or a.play):
                return gi, ai, a
    raise AssertionError(f"no {kind} in the record")


def test_an_illegal_move_names_game_action_and_reason() -> None:
    record = _record()
    gi, ai, move = _first(record, ActionKind.MOVE)
    bad = _with_action(record, gi, ai, dataclasses.replace(move, play="24/1"))
    with pytest.raises(RecordError, match=rf"game {gi + 1}, action {ai + 1} .*24/1"):
        replay(bad)


def test_an_impossible_roll() -> None:
    record = _record()
    gi, ai, _ = _first(record, ActionKind.MOVE)
    nxt = record.games[gi].actions[ai + 1]
    bad = _with_action(record, gi, ai + 1, dataclasses.replace(nxt, dice=(7, 1)))
    with pytest.raises(RecordError, match=rf"game {gi + 1}, action {ai + 2} .*invalid dice"):
        replay(bad)


def test_a_move_by_the_wrong_side() -> None:
    record = _record()
    g = record.games[0]
    second = g.actions[1]
    bad = _with_action(record, 0, 1, dataclasses.replace(second, player=1 - second.player))
    with pytest.raises(RecordError, match=r"game 1, action 2 .*not player"):
        replay(bad)


def test_a_take_without_a_double() -> None:
    record = _record()
    g = record.games[0]
    bad = _with_action(record, 0, 1, Action(1 - g.actions[1].player, ActionKind.TAKE))
    with pytest.raises(RecordError, match=r"game 1, action 2 .*take"):
        replay(bad)


def test_a_truncated_record() -> None:
    record = _record()
    g = record.games[-1]
    cut = dataclasses.replace(g, actions=g.actions[:3], winner=None, points=None)
    bad = dataclasses.replace(record, games=(*record.games[:-1], cut))
    with pytest.raises(RecordError, match=rf"game {len(record.games)}: .*truncated"):
        replay(bad)


def test_a_wrong_result_or_score_is_caught() -> None:
    record = _record()
    g = record.games[0]
    assert g.winner is not None and g.points is not None
    wrong = dataclasses.replace(g, points=g.points + 1)
    with pytest.raises(RecordError, match="game 1: the record says"):
        replay(dataclasses.replace(record, games=(wrong, *record.games[1:])))
    if len(record.games) > 1:
        g2 = dataclasses.replace(record.games[1], score=(9, 9))
        bad = dataclasses.replace(record, games=(g, g2, *record.games[2:]))
        with pytest.raises(RecordError, match="game 2: the record gives the score 9-9"):
            replay(bad)


def test_games_after_the_end_of_the_match() -> None:
    record = _record()
    extra = GameRecord(number=99, score=record.games[-1].score, actions=())
    with pytest.raises(RecordError, match="already over"):
        replay(dataclasses.replace(record, games=(*record.games, extra)))


def test_resignation_written_only_as_a_win() -> None:
    """gnubg's .mat keeps a resignation only as ``Wins N points``: the loser concedes."""
    match = Match(3, MatchRules())
    game = match.new_game()
    game.opening_roll((3, 1))
    game.play("8/5 6/5")
    record = match.to_record()
    as_written = dataclasses.replace(record.games[0], winner=0, points=2)
    replayed = replay(dataclasses.replace(record, games=(as_written,)))
    assert replayed.games[0].result.value == "resign" and replayed.final_score == (2, 0)
    odd = dataclasses.replace(record.games[0], winner=0, points=5)
    with pytest.raises(RecordError, match="not a resignation"):
        replay(dataclasses.replace(record, games=(odd,)))


def _match_without_crawford() -> MatchRecord:
    """A 3-point match played without the Crawford rule: after 2-0, the trailer
    doubles in game 2 (what would have been the Crawford game)."""
    from nard.match import FixedDice

    match = Match(3, MatchRules(crawford=False), FixedDice([(6, 1), (5, 2), (3, 1), (4, 2)]))
    first = match.new_game()
    first.opening_roll()
    first.concede(1, 2)  # 2-0
    second = match.new_game()
    assert not second.options.crawford and second.options.cube
    second.opening_roll()  # (5, 2): player 0 plays first
    second.play(second.legal_plays()[0])
    second.double()  # the trailer, player 1
    second.take()
    second.roll()
    second.play(second.legal_plays()[0])
    second.concede(0, 1)  # 2 points at the 2-cube: 2-2
    third = match.new_game()
    third.opening_roll()  # (4, 2)
    third.concede(1, 1)  # 3-2: player 0 wins the match
    return match.to_record(("Ann", "Bob"))


def test_a_double_in_what_would_be_the_crawford_game_means_the_rule_was_off() -> None:
    """A .mat file cannot say the Crawford rule was off: its doubles say it (gnubg
    accepts such files; nard refused them)."""
    from nard.notation.mat import read_mat, write_mat

    text = write_mat(_match_without_crawford())
    # nard writes a Crawford "Off" tag; gnubg's files have none.
    text = "\n".join(line for line in text.splitlines() if "[Crawford" not in line)
    record = read_mat(text)
    assert record.crawford_rule  # what such a file reads as
    replayed = replay(record)
    assert replayed.final_score == (3, 2) and not replayed.crawford_rule
    assert replayed.notes and "game 2" in replayed.notes[0] and "Crawford" in replayed.notes[0]
    with pytest.raises(RecordError, match="game 2"):
        replay(record, crawford=True)  # said explicitly, the rule refuses the double
    # Other faults in a Crawford game are not taken for the rule being off.
    broken = _with_action(record, 1, 1, Action(1, ActionKind.TAKE))  # game 2: a take, no double
    with pytest.raises(RecordError):
        replay(broken)


def test_a_concession_off_the_resigners_turn_replays_from_json() -> None:
    """Game.concede records a resignation by the player not on roll (then the
    acceptance): nard's JSON of such a game was refused as out of turn."""
    from nard.match import FixedDice
    from nard.notation.json_record import read_json, write_json

    match = Match(3, MatchRules(), FixedDice([(6, 1)]))
    game = match.new_game()
    game.opening_roll()  # player 0 to play 6-1
    game.concede(1, 2)  # player 1 gives up a gammon meanwhile
    record, _ = read_json(write_json(match.to_record()))
    replayed = replay(record)
    assert replayed.final_score == (2, 0) and replayed.games[0].points == 2
