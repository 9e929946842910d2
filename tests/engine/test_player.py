"""The player seam: the protocol, 0-ply choice by an evaluator, random play, a game loop."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from nard.core.position import Play, Position
from nard.engine import HeuristicPlayer
from nard.engine.evaluator import (
    NUM_OUTPUTS,
    WIN,
    FakeEvaluator,
    Probabilities,
    cubeless_equity,
)
from nard.engine.player import EvaluatorPlayer, Player, PubevalPlayer, RandomPlayer, play_game
from nard.match.dice import FixedDice, SeededDice


class _TableEvaluator:
    """Scores each position by a table (win chance only), counting its calls."""

    def __init__(self, wins: dict[Position, float]) -> None:
        self.wins = wins
        self.calls: list[int] = []

    def evaluate(self, positions: Sequence[Position]) -> Probabilities:
        self.calls.append(len(positions))
        out = np.zeros((len(positions), NUM_OUTPUTS))
        out[:, WIN] = [self.wins.get(p, 0.5) for p in positions]
        return out


def test_every_player_satisfies_the_protocol() -> None:
    players: list[Player] = [
        HeuristicPlayer(),
        PubevalPlayer(),
        RandomPlayer(0),
        EvaluatorPlayer(FakeEvaluator()),
    ]
    for player in players:
        assert isinstance(player, Player)
        play = player.choose_play(Position(), (5, 3))
        assert play is not None and play in Position().legal_plays((5, 3))


def test_evaluator_player_flips_the_view_of_the_result() -> None:
    # Results are seen from the opponent: the best play leaves the opponent worst off.
    plays = Position().legal_plays((4, 2))
    worst_for_opponent = plays[5]
    wins = {p.result: 0.6 for p in plays}
    wins[worst_for_opponent.result] = 0.1
    evaluator = _TableEvaluator(wins)
    assert EvaluatorPlayer(evaluator).choose_play(Position(), (4, 2)) == worst_for_opponent
    assert evaluator.calls == [len(plays)]  # one batch for the whole roll


def test_evaluator_player_takes_the_first_of_equal_plays() -> None:
    plays = Position().legal_plays((6, 1))
    player = EvaluatorPlayer(_TableEvaluator({}))
    assert player.choose_play(Position(), (6, 1)) == plays[0]


def test_evaluator_player_without_a_choice_does_not_evaluate() -> None:
    evaluator = _TableEvaluator({})
    player = EvaluatorPlayer(evaluator)
    home = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2}
    assert player.choose_play(Position.from_points({25: 1, 6: 14}, home), (6, 5)) is None
    del home[5]
    one_way = Position.from_points({25: 1}, home)
    assert player.choose_play(one_way, (5, 5)) == one_way.legal_plays((5, 5))[0]
    assert evaluator.calls == []


def test_evaluator_player_maximises_the_movers_equity() -> None:
    ev = FakeEvaluator()
    pos = Position.from_position_id("sGfwATDgc/ABMA")
    for dice in [(6, 5), (2, 2), (4, 1)]:
        plays = pos.legal_plays(dice)
        mover_equity = -cubeless_equity(ev.evaluate([p.result for p in plays]))
        chosen = EvaluatorPlayer(ev).choose_play(pos, dice)
        assert chosen == plays[int(np.argmax(mover_equity))]


def test_random_player_is_repeatable_and_legal() -> None:
    a, b = RandomPlayer(9), RandomPlayer(9)
    pos = Position()
    for dice in [(6, 5), (3, 3), (2, 1), (6, 4)]:
        pa, pb = a.choose_play(pos, dice), b.choose_play(pos, dice)
        assert pa == pb
        assert pa in pos.legal_plays(dice)
    choices = {RandomPlayer(s).choose_play(pos, (3, 3)) for s in range(20)}
    assert len(choices) > 5


def test_play_game_rerolls_ties_and_gives_seat_zero_the_first_die() -> None:
    class Recorder:
        def __init__(self) -> None:
            self.rolls: list[tuple[int, ...]] = []
            self.inner = PubevalPlayer()

        def choose_play(self, position: Position, dice: Sequence[int]) -> Play | None:
            self.rolls.append(tuple(dice))
            return self.inner.choose_play(position, dice)

    a, b = Recorder(), Recorder()
    # Opening 3-3 is rolled again; then 2-5: seat 1 (b) has the higher die and starts.
    dice = FixedDice(["33", "25", "61", "42"] + ["64", "53", "21", "66"] * 200)
    play_game(a, b, dice)
    assert b.rolls[:2] == [(2, 5), (4, 2)]
    assert a.rolls[0] == (6, 1)


def test_play_game_returns_the_points_of_the_first_player() -> None:
    results = [play_game(PubevalPlayer(), RandomPlayer(s), SeededDice(s)) for s in range(6)]
    assert all(r in (-3, -2, -1, 1, 2, 3) for r in results)
    # Same players, same dice: the same game.
    again = [play_game(PubevalPlayer(), RandomPlayer(s), SeededDice(s)) for s in range(6)]
    assert results == again


def test_evaluator_player_takes_a_win_over_any_estimate() -> None:
    """Bearing off the last checker wins now; a (fake) evaluator that rates the
    opponent's position as hopeless after a non-winning play must not tempt it."""
    from nard.engine.evaluator import FakeEvaluator

    class Hopeless(FakeEvaluator):
        def evaluate(self, positions: Sequence[Position]) -> npt.NDArray[np.float64]:
            # Exact for the game that is over (a gammon lost: equity -2), but an
            # overconfident -3 (backgammon) for playing on.
            rows = [[0, 0, 0, 1, 0] if p.outcome() else [0, 0, 0, 1, 1] for p in positions]
            return np.array(rows, dtype=np.float64)

    pos = Position.from_points({1: 1, 2: 1}, {13: 15})
    play = EvaluatorPlayer(Hopeless()).choose_play(pos, (2, 1))
    assert play is not None and play.result.outcome() < 0
