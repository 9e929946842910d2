"""n-ply evaluation, move filters and time-limited ranking (nard.engine.search)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import pytest

from nard.core.dice import ALL_ROLLS
from nard.core.position import Position
from nard.engine.evaluator import (
    WIN,
    Evaluator,
    FakeEvaluator,
    Probabilities,
    cubeless_equity,
    flip_probabilities,
    outcome_probabilities,
)
from nard.engine.network import Network, NeuralEvaluator
from nard.engine.search import (
    DEFAULT_FILTER,
    GNUBG_FILTERS,
    FilterStep,
    MoveFilter,
    Pruning,
    SearchPlayer,
    best_play,
    children,
    evaluate_ply,
    rank_plays,
)

NEURAL = NeuralEvaluator(Network.random(hidden=16, seed=7, scale=0.3))
EVALUATORS: list[Evaluator] = [FakeEvaluator(), NEURAL]
WIDE = MoveFilter((FilterStep(100, 0, 0.0),))
"""Keeps every play at every ply: an unfiltered search."""

# A small bear-off: two checkers each side, no gammons possible either way.
BEAROFF = Position.from_points({5: 1, 3: 1}, {4: 1, 2: 1}).flip().flip()


class _Counting:
    """Wraps an evaluator, recording the batch size of each call."""

    def __init__(self, inner: Evaluator) -> None:
        self.inner = inner
        self.calls: list[int] = []

    def evaluate(self, positions: Sequence[Position]) -> Probabilities:
        self.calls.append(len(positions))
        return self.inner.evaluate(positions)


class _Refusing:
    """An evaluator that must not be called."""

    def evaluate(self, positions: Sequence[Position]) -> Probabilities:
        raise AssertionError(f"evaluator called on {len(positions)} positions")


def _one_ply_by_hand(position: Position, evaluator: Evaluator) -> Probabilities:
    """The 1-ply definition written out: roll by roll, best reply by 0-ply equity."""
    total = np.zeros(5)
    for d1, d2 in ALL_ROLLS:
        weight = (1 if d1 == d2 else 2) / 36
        results = [p.result for p in position.legal_plays((d1, d2))] or [position.flip()]
        probs = evaluator.evaluate(results)
        best = int(np.argmin(cubeless_equity(probs)))  # worst for the opponent
        total += weight * flip_probabilities(probs[best])
    return total


@pytest.mark.parametrize("evaluator", EVALUATORS, ids=["fake", "neural"])
def test_one_ply_is_the_average_over_the_21_rolls(evaluator: Evaluator) -> None:
    for position in (BEAROFF, BEAROFF.flip(), Position()):
        got = evaluate_ply([position], evaluator, 1)[0]
        np.testing.assert_allclose(got, _one_ply_by_hand(position, evaluator), atol=1e-12)


def test_two_ply_of_a_bearoff_is_exact_whatever_the_evaluator() -> None:
    # Two checkers on the 6-point against one on the opponent's 1-point: the side on
    # roll wins only by bearing both off now (6-6, 5-5, 4-4, 3-3); otherwise any roll
    # wins for the opponent. Every leaf of the 2-ply tree is a finished game.
    position = Position.from_points({6: 2}, {1: 1})
    for evaluator in EVALUATORS:
        np.testing.assert_allclose(
            evaluate_ply([position], evaluator, 2)[0], [4 / 36, 0, 0, 0, 0], atol=1e-12
        )


def test_two_ply_is_one_ply_of_the_chosen_replies() -> None:
    position = Position().legal_plays((3, 1))[0].result
    got = evaluate_ply([position], NEURAL, 2)[0]
    total = np.zeros(5)
    for d1, d2 in ALL_ROLLS:
        results = [p.result for p in position.legal_plays((d1, d2))]
        best = results[int(np.argmin(cubeless_equity(NEURAL.evaluate(results))))]
        weight = (1 if d1 == d2 else 2) / 36
        total += weight * flip_probabilities(evaluate_ply([best], NEURAL, 1)[0])
    np.testing.assert_allclose(got, total, atol=1e-12)


def test_a_position_and_its_flip_agree() -> None:
    # The side on roll bears off its last checker now, whatever it rolls: it wins a
    # gammon (the loser has nothing off and nothing in the winner's home board).
    winning = Position.from_points({1: 1}, {13: 14, 12: 1})
    for evaluator in EVALUATORS:
        one = evaluate_ply([winning], evaluator, 1)[0]
        np.testing.assert_array_equal(one, [1, 1, 0, 0, 0])
        # Seen from the loser one turn earlier: whatever it plays, the same gammon follows.
        np.testing.assert_array_equal(
            evaluate_ply([winning.flip()], evaluator, 2)[0], flip_probabilities(one)
        )


def test_ranked_probabilities_are_the_movers_view_of_the_result() -> None:
    for plies in (0, 1):
        for ranked in rank_plays(BEAROFF, (4, 1), NEURAL, plies, WIDE):
            result = evaluate_ply([ranked.play.result], NEURAL, plies)[0]
            np.testing.assert_allclose(ranked.probabilities, flip_probabilities(result))
            assert ranked.equity == pytest.approx(-float(cubeless_equity(result)))
            assert ranked.ply == plies


@pytest.mark.parametrize("plies", [0, 1, 2])
def test_finished_games_are_exact_at_every_ply(plies: int) -> None:
    finished = [
        Position.from_points({6: 15}, {}),  # gammoned
        Position.from_points({6: 14}, {}),  # lost a single game
        Position.from_points({25: 1, 6: 14}, {}),  # backgammoned
    ]
    finished += [p.flip() for p in finished]
    got = evaluate_ply(finished, _Refusing(), plies)
    expected = [outcome_probabilities(p) for p in finished]
    np.testing.assert_array_equal(got, np.array(expected))


def test_each_level_goes_to_the_evaluator_in_large_batches() -> None:
    counting = _Counting(FakeEvaluator())
    positions = [Position(), BEAROFF, Position().legal_plays((6, 5))[0].result]
    evaluate_ply(positions, counting, 1)
    assert len(counting.calls) == 1 and counting.calls[0] > 21 * len(positions)
    counting.calls.clear()
    evaluate_ply(positions, counting, 2)
    # The second level: the chosen replies (at most 63) in groups of 32 positions,
    # each group's children in calls of at most 4,096.
    assert 3 <= len(counting.calls) <= 1 + 2 * 4
    assert max(counting.calls) <= 4096 and sorted(counting.calls)[-2] == 4096
    counting.calls.clear()
    many = [p.result for p in Position().legal_plays((3, 1))] * 3  # 48 positions
    evaluate_ply(many, counting, 1)
    assert 2 <= len(counting.calls) <= 2 * 4 and max(counting.calls) == 4096


def test_filter_steps_follow_gnubg() -> None:
    step = FilterStep(0, 8, 0.16)
    assert step.survivors([]) == 0
    assert step.survivors([0.3]) == 1
    assert step.survivors([0.3, 0.2, 0.15, 0.13, 0.0]) == 3
    assert step.survivors([0.3] * 12) == 8
    assert FilterStep(3, 0, 0.0).survivors([0.3, -1.0, -2.0, -3.0]) == 3
    assert GNUBG_FILTERS["normal"].step(0) == step and GNUBG_FILTERS["normal"].step(1) is None
    assert DEFAULT_FILTER.step(1) == FilterStep(0, 2, 0.04)
    with pytest.raises(ValueError):
        FilterStep(-1, 0, 0.0)


@pytest.mark.parametrize("move_filter", [DEFAULT_FILTER, GNUBG_FILTERS["tiny"]])
def test_filtering_keeps_the_best_play(move_filter: MoveFilter) -> None:
    position = Position().legal_plays((6, 4))[2].result
    for dice in ((3, 1), (6, 6), (5, 2)):
        ranking = rank_plays(position, dice, NEURAL, 1, move_filter)
        full = rank_plays(position, dice, NEURAL, 1, WIDE)
        zero = rank_plays(position, dice, NEURAL, 0)
        survivors = [r for r in ranking if r.ply == 1]
        step = move_filter.step(0)
        assert step is not None
        assert 1 <= len(survivors) <= step.accept + step.extra
        # The survivors are the best of 0-ply, re-ranked at 1-ply; the rest keep their order.
        assert {r.play for r in survivors} == {r.play for r in zero[: len(survivors)]}
        assert [r.play for r in ranking[len(survivors) :]] == [
            r.play for r in zero[len(survivors) :]
        ]
        if full[0].play in {r.play for r in zero[: len(survivors)]}:
            assert ranking[0].play == full[0].play
        assert best_play(position, dice, NEURAL, 1, move_filter) == ranking[0].play


def test_a_skipped_ply_goes_straight_deeper() -> None:
    counting = _Counting(FakeEvaluator())
    ranking = rank_plays(BEAROFF, (4, 1), counting, 2, GNUBG_FILTERS["normal"])
    assert {r.ply for r in ranking} <= {0, 2} and ranking[0].ply == 2
    assert len(counting.calls) == 3  # 0-ply, then the two levels of one 2-ply search


def test_no_play_and_forced_play() -> None:
    home = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2}  # the opponent's closed board
    closed = Position.from_points({25: 1, 13: 14}, home)
    assert rank_plays(closed, (3, 4), NEURAL, 2) == []
    assert best_play(closed, (3, 4), _Refusing(), 2) is None
    last = Position.from_points({1: 1}, {13: 15})
    plays = last.legal_plays((6, 5))
    assert len(plays) == 1
    assert best_play(last, (6, 5), _Refusing(), 2) == plays[0]  # forced and final: exact


class _FakeClock:
    """Time that moves only when the evaluator works: one tick per position evaluated."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Ticking:
    def __init__(self, inner: Evaluator, clock: _FakeClock) -> None:
        self.inner = inner
        self.clock = clock

    def evaluate(self, positions: Sequence[Position]) -> Probabilities:
        self.clock.now += len(positions)
        return self.inner.evaluate(positions)


def test_time_limit_returns_the_deepest_complete_ranking() -> None:
    position = Position().legal_plays((6, 4))[2].result
    clock = _FakeClock()
    evaluator = _Ticking(NEURAL, clock)
    work = []
    for plies in (0, 1):
        clock.now = 0.0
        rank_plays(position, (5, 2), evaluator, plies, clock=clock)
        work.append(clock.now)
    for limit, deepest in ((0.0, 0), (work[0] + 1, 0), (work[1] + 0.5, 1), (1e9, 2)):
        clock.now = 0.0
        ranking = rank_plays(position, (5, 2), evaluator, 2, time_limit=limit, clock=clock)
        assert max(r.ply for r in ranking) == deepest, limit
        # Checks come between batches of at most 4096 positions: never far past the limit.
        assert clock.now <= max(limit, work[0]) + 4096
        expected = rank_plays(position, (5, 2), NEURAL, deepest)
        assert [(r.play, r.ply) for r in ranking] == [(r.play, r.ply) for r in expected]


def test_a_tiny_time_limit_still_answers() -> None:
    position = Position().legal_plays((6, 4))[2].result
    play = best_play(position, (5, 2), NEURAL, 2, time_limit=1e-9)
    assert play == best_play(position, (5, 2), NEURAL, 0)


def test_search_player_plays_legal_moves() -> None:
    player = SearchPlayer(FakeEvaluator(), plies=1)
    assert "plies=1" in repr(player)
    play = player.choose_play(Position(), (6, 5))
    assert play is not None and play in Position().legal_plays((6, 5))


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="plies"):
        evaluate_ply([Position()], FakeEvaluator(), -1)
    with pytest.raises(ValueError, match="time_limit"):
        rank_plays(Position(), (3, 1), FakeEvaluator(), 1, time_limit=-1.0)
    with pytest.raises(ValueError):
        MoveFilter(())


def test_report_time_per_decision(capsys: pytest.CaptureFixture[str]) -> None:
    # Printed, never asserted: tests do not judge wall-clock time (bench/ does).
    evaluator = NeuralEvaluator(Network.random(hidden=80, seed=1))
    position = Position().legal_plays((3, 1))[0].result.legal_plays((6, 4))[3].result
    assert position.is_contact()
    lines = []
    for plies in (0, 1, 2):
        start = time.perf_counter()
        best_play(position, (5, 2), evaluator, plies)
        lines.append(f"{plies}-ply decision: {1e3 * (time.perf_counter() - start):.1f} ms")
    with capsys.disabled():
        print("\n" + "; ".join(lines))
    assert WIN == 0


# -- pruning -------------------------------------------------------------------------------

CONTACT = Position().legal_plays((3, 1))[0].result.legal_plays((6, 4))[3].result


class _Reversed:
    """Ranks every reply backwards: the worst by ``inner`` first."""

    def __init__(self, inner: Evaluator) -> None:
        self.inner = inner

    def evaluate(self, positions: Sequence[Position]) -> Probabilities:
        return flip_probabilities(self.inner.evaluate(positions))


def test_pruning_by_the_evaluator_itself_changes_nothing() -> None:
    # The pruner's first choice is the evaluator's best reply: keeping 1 is exact.
    pruning = Pruning(NEURAL, keep=1)
    for plies in (1, 2):
        plain = evaluate_ply([CONTACT, CONTACT.flip()], NEURAL, plies)
        pruned = evaluate_ply([CONTACT, CONTACT.flip()], NEURAL, plies, pruning=pruning)
        np.testing.assert_allclose(pruned, plain, atol=1e-12)


def test_pruning_that_keeps_every_reply_changes_nothing() -> None:
    pruning = Pruning(_Refusing(), keep=10_000)  # never needs to rank anything
    plain = evaluate_ply([CONTACT], NEURAL, 2)
    np.testing.assert_array_equal(evaluate_ply([CONTACT], NEURAL, 2, pruning=pruning), plain)


def test_a_bad_pruner_changes_the_search_and_keeps_the_best_of_its_picks() -> None:
    # Pruning by the reversed ranking keeps the evaluator's worst replies only.
    pruning = Pruning(_Reversed(NEURAL), keep=1)
    plain = evaluate_ply([CONTACT], NEURAL, 1)
    pruned = evaluate_ply([CONTACT], NEURAL, 1, pruning=pruning)
    # The side on roll is left its worst play of each roll.
    assert cubeless_equity(pruned)[0] < cubeless_equity(plain)[0]
    kids, lengths = children(np.array([list(CONTACT)], dtype=np.int64))
    picked = pruning.select(kids, lengths)
    assert picked is not None and len(picked) == len(lengths)  # one per roll
    starts = np.cumsum(lengths) - lengths
    assert (np.searchsorted(starts, picked, side="right") - 1).tolist() == list(range(21))


def test_pruning_selects_the_best_few_of_each_roll_in_order() -> None:
    kids, lengths = children(np.array([list(CONTACT)], dtype=np.int64))
    picked = Pruning(NEURAL, keep=3).select(kids, lengths)
    assert picked is not None
    assert picked.tolist() == sorted(picked.tolist())
    theirs = cubeless_equity(NEURAL.evaluate([Position(k.tolist()) for k in kids]))
    start = 0
    for n in lengths.tolist():
        mine = [int(i) - start for i in picked if start <= i < start + n]
        best3 = np.argsort(theirs[start : start + n], kind="stable")[:3]
        assert sorted(mine) == sorted(best3.tolist())
        start += n
    assert Pruning(NEURAL, keep=int(lengths.max())).select(kids, lengths) is None


def test_pruned_ranking_and_player() -> None:
    pruning = Pruning(NEURAL, keep=1)
    ranking = rank_plays(CONTACT, (5, 2), NEURAL, 2, pruning=pruning)
    plain = rank_plays(CONTACT, (5, 2), NEURAL, 2)
    assert [r.play for r in ranking] == [r.play for r in plain]
    player = SearchPlayer(NEURAL, plies=2, pruning=pruning)
    assert "pruning=Pruning(" in repr(player)
    assert player.choose_play(CONTACT, (5, 2)) == best_play(CONTACT, (5, 2), NEURAL, 2)
    with pytest.raises(ValueError, match="keep"):
        Pruning(NEURAL, keep=0)
