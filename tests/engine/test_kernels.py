"""The compiled kernels (nard.engine._kernels) against the Python reference code."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from nard.core.dice import ALL_ROLLS
from nard.core.position import Position
from nard.engine import _kernels
from nard.engine.evaluator import boards_of
from nard.engine.network import Network, _float32, _forward32
from nard.engine.player import RandomPlayer
from nard.engine.search import _ROLLS, children
from nard.match.dice import SeededDice


def _positions(games: int, seed: int) -> list[Position]:
    """Positions of random games, game-over ones left out."""
    player = RandomPlayer(seed)
    out: list[Position] = []
    for game in range(games):
        position, dice = Position(), SeededDice(seed * 1000 + game)
        while True:
            out.append(position)
            play = player.choose_play(position, dice.roll())
            position = position.flip() if play is None else play.result
            if min(position) >= 0 or max(position) <= 0:
                break
    return out


POSITIONS = _positions(12, 5)


def _reference_children(position: Position) -> list[list[tuple[int, ...]]]:
    out = []
    for roll in ALL_ROLLS:
        results = [tuple(p.result) for p in position.legal_plays(roll)]
        out.append(sorted(results) if results else [tuple(position.flip())])
    return out


def _split(kids: np.ndarray, counts: np.ndarray) -> list[list[tuple[int, ...]]]:
    ends = np.cumsum(counts)
    rows = [tuple(r) for r in kids.tolist()]
    return [sorted(rows[e - c : e]) for c, e in zip(counts.tolist(), ends.tolist(), strict=True)]


def test_children_are_the_legal_plays_results() -> None:
    # Every roll of positions from random games: the same set of boards as the
    # Python generator's plays (which other tests check against gnubg), no duplicates.
    kids, counts = children(boards_of(POSITIONS))
    assert counts.shape == (21 * len(POSITIONS),)
    assert len(kids) == int(counts.sum())
    got = _split(kids, counts)
    expected = [rows for p in POSITIONS for rows in _reference_children(p)]
    assert got == expected
    assert all(len(set(rows)) == len(rows) for rows in got)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(POSITIONS), min_size=1, max_size=3))
def test_children_of_any_batch(batch: list[Position]) -> None:
    kids, counts = children(boards_of(batch))
    assert _split(kids, counts) == [rows for p in batch for rows in _reference_children(p)]


def test_expand_reports_a_full_buffer_and_children_grows_it() -> None:
    boards = boards_of(POSITIONS[:30])
    small = np.empty((8, 26), dtype=np.int64)
    counts = np.empty(21 * 30, dtype=np.int64)
    assert _kernels.expand(boards, _ROLLS, small, np.empty(8, dtype=np.int64), counts) == -1
    kids, counts = children(boards)
    assert len(kids) == int(counts.sum()) > 8


def test_bar_and_bearoff_rolls() -> None:
    # Two on the bar against a 5-point board, and a bear-off with gaps.
    barred = Position.from_points({25: 2, 6: 13}, {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 12: 5})
    bearing = Position.from_points({6: 1, 4: 2, 1: 1}, {22: 2, 3: 3})
    for position in (barred, bearing):
        kids, counts = children(boards_of([position]))
        assert _split(kids, counts) == _reference_children(position)


def test_forward_matches_the_float64_network() -> None:
    from nard.engine.encoding import encode

    net = Network.random(hidden=24, seed=3, scale=0.5)
    x = encode(POSITIONS[:200])
    got = _forward32(_float32(net), x)
    assert np.abs(got - net.forward(x.astype(np.float64))).max() < 1e-5


def test_hidden_sigmoid_is_exact_to_float32() -> None:
    from nard.engine._kernels import _EXP2, _sigmoid_into_c

    z = np.linspace(-120.0, 120.0, 480_001).astype(np.float32)
    exact = 1.0 / (1.0 + np.exp(-z.astype(np.float64)))
    bits = np.empty(z.shape[0], dtype=np.int32)
    got = z.copy()
    _sigmoid_into_c(got, bits, bits.view(np.float32))
    assert np.abs(got - exact).max() < 2e-7
    assert got[0] == 0.0 or got[0] < 1e-30
    assert got[-1] == 1.0
    # The polynomial is the one its comment says: refit it.
    f = 0.5 * np.cos(np.linspace(0.0, np.pi, 20_001))
    cheb = np.polynomial.chebyshev.chebfit(2.0 * f, 2.0**f, 6)
    powers = np.polynomial.chebyshev.cheb2poly(cheb) * 2.0 ** np.arange(7)
    np.testing.assert_allclose(powers, _EXP2, rtol=1e-9)


def test_forward_of_a_row_hardly_depends_on_its_batch() -> None:
    # Rows computed from an earlier row's sums agree with the row alone to rounding.
    net = Network.random(hidden=64, seed=4, scale=0.5)
    weights = _float32(net)
    kids, _ = children(boards_of(POSITIONS[:8]))
    from nard.engine.encoding import encode_boards

    x = encode_boards(kids)
    batch = _forward32(weights, x)
    alone = np.concatenate([_forward32(weights, x[i : i + 1]) for i in range(len(x))])
    assert np.abs(batch - alone).max() < 2e-6
    assert np.abs(batch - net.forward(x.astype(np.float64))).max() < 1e-5


def test_finished_marks_games_with_a_side_borne_off() -> None:
    live = boards_of(POSITIONS)
    mover_off = Position.from_points({}, {6: 2}).board
    opponent_off = Position.from_points({1: 1}, {}).board
    boards = np.vstack([live, [mover_off, opponent_off]]).astype(np.int64)
    over = _kernels.finished(boards)
    assert not over[: len(live)].any()
    assert over[len(live) :].tolist() == [True, True]
    assert _kernels.finished(np.empty((0, 26), dtype=np.int64)).shape == (0,)
