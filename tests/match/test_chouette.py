"""Chouette: seating, the team's and the box's doubles, rotation and settlement."""

from __future__ import annotations

import pytest

from nard.match import FixedDice, MatchStateError
from nard.match.chouette import Chouette, ChouetteGame


def _table() -> Chouette:
    return Chouette.from_rolls({"Ali": 2, "Sara": 6, "Reza": 5, "Mina": 4})


def _team_wins(cg: ChouetteGame, points: int = 1) -> None:
    """The box (player 0) resigns ``points`` and the team accepts."""
    cg.game.opening_roll((6, 1))  # the box starts
    cg.game.resign(points)
    cg.game.accept()


def _box_wins(cg: ChouetteGame, points: int = 1) -> None:
    cg.game.opening_roll((1, 6))  # the team starts
    cg.game.resign(points)
    cg.game.accept()


def test_seating_follows_the_rolls() -> None:
    table = _table()
    assert table.line == ("Sara", "Reza", "Mina", "Ali")
    assert (table.box, table.captain) == ("Sara", "Reza")
    with pytest.raises(ValueError, match="rolled again"):
        Chouette.from_rolls({"A": 3, "B": 3, "C": 1})
    with pytest.raises(ValueError, match="3-8 players"):
        Chouette(["A", "B"])


def test_drawing_for_seats_rolls_again_for_ties() -> None:
    # Ali 4, Sara 6, Reza 4, Mina 2; then Ali and Reza roll again: 3, 5.
    dice = FixedDice([(4, 6), (4, 2), (3, 5)])
    table = Chouette.draw(["Ali", "Sara", "Reza", "Mina"], dice)
    assert table.line == ("Sara", "Reza", "Ali", "Mina")
    assert table.dice is dice


def test_rotation_and_settlement_over_several_games() -> None:
    table = _table()
    cg = table.new_game()
    assert (cg.box, cg.team, cg.captain) == ("Sara", ("Reza", "Mina", "Ali"), "Reza")
    _box_wins(cg, 2)  # team loses: captain to the end, box stays
    assert table.line == ("Sara", "Mina", "Ali", "Reza")
    assert table.standings() == {"Sara": 6, "Reza": -2, "Mina": -2, "Ali": -2}
    _team_wins(table.new_game())  # team wins: captain into the box, old box to the end
    assert table.line == ("Mina", "Ali", "Reza", "Sara")
    assert table.standings() == {"Sara": 3, "Reza": -1, "Mina": -1, "Ali": -1}
    _box_wins(table.new_game(), 1)
    assert table.line == ("Mina", "Reza", "Sara", "Ali")
    standings = table.standings()
    assert standings == {"Sara": 2, "Reza": -2, "Mina": 2, "Ali": -2}
    assert sum(standings.values()) == 0


def test_box_double_each_member_takes_or_passes() -> None:
    table = _table()
    cg = table.new_game()
    cg.game.opening_roll((6, 1))
    cg.game.play("13/7 8/7")
    cg.game.roll((3, 1))
    cg.game.play("8/5 6/5")
    cg.game.double()  # the box doubles
    with pytest.raises(MatchStateError, match="no answer from"):
        cg.answer_box_double({"Reza": True})
    cg.answer_box_double({"Reza": True, "Mina": False, "Ali": True})
    assert cg.active == ["Reza", "Ali"] and cg.game.cube_value == 2
    cg.game.roll((2, 1))
    cg.game.resign(1)  # the box resigns: the team wins 1 x 2 each
    cg.game.accept()
    settlement = cg.settle()
    assert dict(settlement.payments) == {"Mina": -1, "Reza": 2, "Ali": 2}
    assert settlement.box_total == -3


def test_everyone_passing_ends_the_game() -> None:
    cg = _table().new_game()
    cg.game.opening_roll((6, 1))
    cg.game.play("13/7 8/7")
    cg.game.roll((3, 1))
    cg.game.play("8/5 6/5")
    cg.game.double()
    cg.answer_box_double(dict.fromkeys(("Reza", "Mina", "Ali"), False))
    assert cg.game.is_over
    assert cg.settle().box_total == 3
    assert cg.active == [] and cg.captain == "Reza"  # was an IndexError: no one in


def test_team_double_must_be_unanimous() -> None:
    cg = _table().new_game()
    cg.game.opening_roll((1, 6))  # the team is on roll
    cg.game.play("13/7 8/7")
    cg.game.roll((3, 1))
    cg.game.play("8/5 6/5")
    with pytest.raises(MatchStateError, match="unanimous"):
        cg.team_double({"Reza": True, "Mina": False, "Ali": True})
    assert cg.game.turn == 1 and cg.game.cube_value == 1
    cg.team_double(dict.fromkeys(("Reza", "Mina", "Ali"), True))
    cg.game.pass_double()  # the box passes: it pays each member the stake
    assert dict(cg.settle().payments) == {"Reza": 1, "Mina": 1, "Ali": 1}
