"""The one-sided bear-off database: hand-checked cases, an independent brute
force, its own dynamic programming re-evaluated through the public move API,
whole-table invariants, the file and its errors, and GNU Backgammon (its
bear-off index, its one-sided database file and its evaluation of races)."""

from __future__ import annotations

import json
import os
import random
import tempfile
import zipfile
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from nard.core.position import Position
from nard.engine.bearoff import (
    MAX_CHECKERS,
    POSITIONS,
    SCALE,
    BearoffDatabase,
    BearoffDatabaseError,
    NotBearoffError,
    _all_sides,
    _quantize,
    bearoff_index,
    build,
    checkers_from_index,
    default_path,
    home_checkers,
    is_bearoff,
    write_npz,
)
from tests.gnubg_oracle import requires_gnubg, run_gnubg_script

ROLLS = [(a, b) for a in range(1, 7) for b in range(1, a + 1)]
QUANTUM = 1 / SCALE


@pytest.fixture(scope="module")
def db() -> BearoffDatabase:
    return BearoffDatabase.load()


def race(me: tuple[int, ...], them: tuple[int, ...]) -> Position:
    """A pure bear-off race: each side's counts on its own points 1-6."""
    return Position.from_points(
        {p: c for p, c in enumerate(me, 1) if c}, {p: c for p, c in enumerate(them, 1) if c}
    )


def random_side(rng: random.Random, low: int = 1, high: int = MAX_CHECKERS) -> tuple[int, ...]:
    side = [0] * 6
    for _ in range(rng.randint(low, high)):
        side[rng.randrange(6)] += 1
    return tuple(side)


# -- an independent brute force: its own bear-off rules, exact fractions ----------


def _one_die(side: tuple[int, ...], d: int) -> set[tuple[int, ...]]:
    if not any(side):
        return {side}
    highest = max(p for p in range(1, 7) if side[p - 1])
    out = set()
    for p in range(1, 7):
        if side[p - 1] and (p >= d or p == highest):
            s = list(side)
            s[p - 1] -= 1
            if p > d:
                s[p - d - 1] += 1
            out.add(tuple(s))
    return out


def _successors(side: tuple[int, ...], a: int, b: int) -> set[tuple[int, ...]]:
    # With every checker home some checker can always move, so every die is played.
    orders = [(a,) * 4] if a == b else [(a, b), (b, a)]
    out: set[tuple[int, ...]] = set()
    for dice in orders:
        now = {side}
        for d in dice:
            now = {t for s in now for t in _one_die(s, d)}
        out |= now
    return out


@cache
def exact_expected(side: tuple[int, ...]) -> Fraction:
    if not any(side):
        return Fraction(0)
    return 1 + sum(
        (
            Fraction(1 if a == b else 2, 36)
            * min(exact_expected(s) for s in _successors(side, a, b))
            for a, b in ROLLS
        ),
        Fraction(0),
    )


# -- hand-checked cases --------------------------------------------------------------


def test_one_checker_on_the_one_point_takes_one_roll(db: BearoffDatabase) -> None:
    assert db.expected_rolls((1, 0, 0, 0, 0, 0)) == 1.0
    assert list(db.distribution((1, 0, 0, 0, 0, 0))[:3]) == [0.0, 1.0, 0.0]
    assert db.expected_rolls((0,) * 6) == 0.0
    assert db.distribution((0,) * 6)[0] == 1.0


def test_one_checker_higher_up(db: BearoffDatabase) -> None:
    # On the 4-point only 2-1 fails (3 pips): 2 rolls of 36. On the 5-point
    # 2-1, 3-1 and 1-1 fail: 5. On the 6-point 2-1, 3-1, 4-1, 3-2 and 1-1: 9.
    # A checker left on a lower point is off with any roll after that.
    for point, failing in ((3, 0), (4, 2), (5, 5), (6, 9)):
        side = tuple(1 if p == point else 0 for p in range(1, 7))
        assert db.expected_rolls(side) == pytest.approx(1 + failing / 36, abs=1e-12)
        dist = db.distribution(side)
        assert dist[2] == pytest.approx(failing / 36, abs=QUANTUM)


def test_fifteen_checkers_on_the_one_point(db: BearoffDatabase) -> None:
    # Every non-double bears off 2 checkers and every double 4:
    # E(n) = 1 + 30/36 E(n - 2) + 6/36 E(n - 4), and likewise the distribution.
    dist: dict[int, dict[int, Fraction]] = {}
    expected: dict[int, Fraction] = {}
    for n in range(-3, 16):
        if n <= 0:
            dist[n], expected[n] = {0: Fraction(1)}, Fraction(0)
            continue
        expected[n] = 1 + Fraction(30, 36) * expected[n - 2] + Fraction(6, 36) * expected[n - 4]
        dist[n] = {}
        for m, w in ((n - 2, Fraction(30, 36)), (n - 4, Fraction(6, 36))):
            for k, p in dist[m].items():
                dist[n][k + 1] = dist[n].get(k + 1, Fraction(0)) + w * p
    for n in (1, 2, 5, 15):
        side = (n, 0, 0, 0, 0, 0)
        assert db.expected_rolls(side) == pytest.approx(float(expected[n]), abs=1e-12)
        got = db.distribution(side)
        for k in range(len(got)):
            assert got[k] == pytest.approx(float(dist[n].get(k, 0)), abs=QUANTUM)
    # 15 checkers: at least 4 rolls (all doubles), at most 8 (no double).
    assert expected[15] == Fraction(1953839, 279936)  # about 6.98
    assert np.flatnonzero(db.distribution((15, 0, 0, 0, 0, 0))).tolist() == [4, 5, 6, 7, 8]


def test_two_checkers_on_the_six_point(db: BearoffDatabase) -> None:
    assert exact_expected((0, 0, 0, 0, 0, 2)) == Fraction(49213, 23328)
    assert db.expected_rolls((0, 0, 0, 0, 0, 2)) == pytest.approx(49213 / 23328, abs=1e-12)


def test_an_independent_brute_force_for_every_side_of_up_to_5_checkers(
    db: BearoffDatabase,
) -> None:
    sides = _all_sides(5)
    assert len(sides) == 462
    for side in sides:
        assert db.expected_rolls(side) == pytest.approx(float(exact_expected(side)), abs=1e-12)


# -- the dynamic programming, re-evaluated through Position.legal_plays --------------


def test_each_choice_is_the_best_play_by_the_database(db: BearoffDatabase) -> None:
    rng = random.Random(20261204)
    dist_all, expected_all = db.distributions, db.expectations
    for _ in range(250):
        side = random_side(rng)
        pos = race(side, (0, 0, 0, 0, 0, 1))
        total = 0.0
        recomposed = np.zeros(dist_all.shape[1])
        for a, b in ROLLS:
            successors = [
                bearoff_index(home_checkers(play.result, opponent=True))
                for play in pos.legal_plays((a, b))
            ]
            assert successors
            low = min(expected_all[k] for k in successors)
            best = min(k for k in successors if expected_all[k] == low)
            weight = (1 if a == b else 2) / 36
            total += weight * low
            recomposed[1:] += weight * dist_all[best][:-1]
        assert db.expected_rolls(side) == pytest.approx(1 + total, abs=1e-12)
        np.testing.assert_allclose(db.distribution(side), recomposed, rtol=0, atol=2 * QUANTUM)


def test_a_small_build_is_a_prefix_of_the_shipped_file(db: BearoffDatabase) -> None:
    tables = build(max_checkers=6)
    n = tables.expected.shape[0]
    assert n == 924
    np.testing.assert_array_equal(tables.expected, db.expectations[:n])
    stored = np.rint(db.distributions[:n] * SCALE).astype(np.int64)
    mine = _quantize(tables.rolls).astype(np.int64)
    assert not stored[:, mine.shape[1] :].any()
    np.testing.assert_array_equal(mine, stored[:, : mine.shape[1]])
    # The first-off table here is for sides of exactly 6 checkers.
    sixes = [s for s in _all_sides(6) if sum(s) == 6]
    assert tables.first_off.shape[0] == len(sixes)


def test_the_file_is_written_reproducibly() -> None:
    tables = build(max_checkers=3)
    with tempfile.TemporaryDirectory() as tmp:
        a, b = Path(tmp) / "a.npz", Path(tmp) / "b.npz"
        write_npz(tables, a)
        write_npz(tables, b)
        assert a.read_bytes() == b.read_bytes()


# -- whole-table invariants ----------------------------------------------------------


def test_every_distribution_sums_to_one_and_matches_its_expectation(db: BearoffDatabase) -> None:
    dist = db.distributions
    assert dist.shape == (POSITIONS, db.max_rolls + 1)
    np.testing.assert_allclose(dist.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert (dist >= 0).all()
    from_dist = dist @ np.arange(dist.shape[1])
    assert np.abs(from_dist - db.expectations).max() < 1e-3
    assert dist[0, 0] == 1.0 and not dist[1:, 0].any()
    assert not dist.flags.writeable


def test_more_checkers_never_need_fewer_rolls(db: BearoffDatabase) -> None:
    # (Moving a checker higher can need fewer: (1, 1, 0, 0, 0, 1) is better
    # spread than (2, 0, 0, 0, 0, 1).)
    expected = db.expectations
    worse = []
    for i in range(POSITIONS):
        side = checkers_from_index(i)
        if sum(side) == MAX_CHECKERS:
            continue
        for p in range(6):
            more = list(side)
            more[p] += 1
            if expected[bearoff_index(more)] < expected[i] - 1e-12:
                worse.append((side, more))
    assert worse == []
    assert db.expected_rolls((1, 1, 0, 0, 0, 1)) < db.expected_rolls((2, 0, 0, 0, 0, 1))


def test_first_off_distributions() -> None:
    db = BearoffDatabase.load()
    assert db.first_off_expected_rolls((14, 0, 0, 0, 0, 0)) == 0.0
    assert db.first_off_distribution((14, 0, 0, 0, 0, 0))[0] == 1.0
    # 15 on the 1-point: any roll bears one off.
    assert db.first_off_expected_rolls((15, 0, 0, 0, 0, 0)) == 1.0
    # 15 on the 6-point: one is off on the first roll with a 6, with 5-1 or 4-2
    # (one checker moves 6 pips), or with 3-3 or 2-2; 4-4, 5-5 and 1-1 do not
    # (a checker below the 6-point cannot bear off with a larger die while
    # others stay there). 11 + 2 + 2 + 1 + 1 = 17 rolls of 36.
    e = db.first_off_expected_rolls((0, 0, 0, 0, 0, 15))
    assert 1 + 19 / 36 < e < 2
    dist = db.first_off_distribution((0, 0, 0, 0, 0, 15))
    first = sum(
        (1 if a == b else 2)
        for a, b in ROLLS
        if a == 6 or (a != b and a + b == 6) or (a, b) in ((3, 3), (2, 2))
    )
    assert first == 17
    assert dist[1] == pytest.approx(first / 36, abs=QUANTUM)
    np.testing.assert_allclose(dist.sum(), 1.0, atol=1e-12)


# -- races ---------------------------------------------------------------------------


def test_win_probability_hand_cases(db: BearoffDatabase) -> None:
    assert db.win_probability(race((1, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 15))) == 1.0
    # One checker each, mine on the 6-point, theirs on the 1-point: I must bear
    # off now (27 rolls of 36) or lose.
    assert db.win_probability(race((0, 0, 0, 0, 0, 1), (1, 0, 0, 0, 0, 0))) == pytest.approx(
        27 / 36, abs=2 * QUANTUM
    )
    # The side on roll has borne off everything: it has won.
    assert db.win_probability(race((0,) * 6, (2, 0, 0, 0, 0, 0))) == 1.0
    # A position with no checkers left for the opponent: lost.
    assert db.win_probability(race((2, 0, 0, 0, 0, 0), (0,) * 6)) == 0.0


def test_probabilities_follow_the_turn_order(db: BearoffDatabase) -> None:
    rng = random.Random(7)
    for _ in range(200):
        me, them = random_side(rng), random_side(rng)
        p_me, p_them = db.distribution(me), db.distribution(them)
        # I finish on my i-th roll, before the opponent's i-th: I win if it needs >= i.
        win = sum(
            p_me[i] * p_them[j] for i in range(len(p_me)) for j in range(len(p_them)) if j >= i
        )
        probs = db.probabilities(race(me, them))
        assert probs[0] == pytest.approx(win, abs=1e-12)
        assert probs[2] == probs[4] == 0.0
        if sum(them) < MAX_CHECKERS:
            assert probs[1] == 0.0
        if sum(me) < MAX_CHECKERS:
            assert probs[3] == 0.0
        # Being on roll is worth something: swapping the sides never helps.
        assert probs[0] >= 1 - db.win_probability(race(them, me)) - 1e-9


def test_gammons_in_a_race(db: BearoffDatabase) -> None:
    # The opponent has 15 checkers on its 6-point, mine are 2 on the 1-point:
    # I finish on my first roll, before its first roll: always a gammon.
    probs = db.probabilities(race((2, 0, 0, 0, 0, 0), (0, 0, 0, 0, 0, 15)))
    assert probs[0] == 1.0 and probs[1] == pytest.approx(1.0, abs=1e-12)
    # Mirror: I have the 15 and am on roll; it finishes on its first roll.
    # I lose a gammon unless I bear off one now.
    probs = db.probabilities(race((0, 0, 0, 0, 0, 15), (2, 0, 0, 0, 0, 0)))
    no_first = 1 - db.first_off_distribution((0, 0, 0, 0, 0, 15))[1]
    assert probs[0] == 0.0
    assert probs[3] == pytest.approx(no_first, abs=1e-12)


# -- inputs and errors ----------------------------------------------------------------


def test_index_round_trip_and_order() -> None:
    sides = _all_sides(MAX_CHECKERS)
    assert len(sides) == POSITIONS == 54264
    assert [bearoff_index(s) for s in sides[:8]] == list(range(8))
    rng = random.Random(3)
    for i in [0, 1, 6, 7, 637, 38759, 38760, POSITIONS - 1, *rng.sample(range(POSITIONS), 300)]:
        assert bearoff_index(checkers_from_index(i)) == i
        assert checkers_from_index(i) == sides[i]


def test_sides_from_positions() -> None:
    pos = race((1, 2, 0, 0, 0, 3), (0, 0, 4, 0, 0, 0))
    assert is_bearoff(pos)
    assert home_checkers(pos) == (1, 2, 0, 0, 0, 3)
    assert home_checkers(pos, opponent=True) == (0, 0, 4, 0, 0, 0)
    assert home_checkers(pos.flip()) == (0, 0, 4, 0, 0, 0)
    assert not is_bearoff(Position())
    assert not is_bearoff(Position.from_points({7: 1}, {1: 1}))
    assert not is_bearoff(Position.from_points({1: 1}, {25: 1}))
    assert home_checkers(Position.from_points({1: 1}, {7: 1})) == (1, 0, 0, 0, 0, 0)


def test_bad_input(db: BearoffDatabase) -> None:
    outside = Position.from_points({7: 1}, {1: 1})
    with pytest.raises(NotBearoffError, match=outside.position_id()):
        db.expected_rolls(outside)
    with pytest.raises(NotBearoffError, match="the opponent"):
        db.win_probability(Position.from_points({1: 1}, {25: 1}))
    for bad in [(1, 2, 3), (0, 0, 0, 0, 0, 16), (-1, 0, 0, 0, 0, 0), (8, 8, 0, 0, 0, 0)]:
        with pytest.raises(NotBearoffError, match="invalid bear-off side"):
            db.distribution(bad)
    with pytest.raises(NotBearoffError):
        checkers_from_index(POSITIONS)
    assert isinstance(NotBearoffError("x"), ValueError)


def test_load_is_a_cached_singleton() -> None:
    assert BearoffDatabase.load() is BearoffDatabase.load()
    assert BearoffDatabase.load().path == default_path()


def _corrupt_copies(tmp: Path) -> dict[str, Path]:
    good = default_path()
    raw = good.read_bytes()
    files = {
        "truncated": raw[: len(raw) // 2],
        "garbage": b"not a zip file at all",
        "flipped": raw[:5000] + bytes([raw[5000] ^ 0xFF]) + raw[5001:],
    }
    out = {}
    for name, data in files.items():
        out[name] = tmp / f"{name}.npz"
        out[name].write_bytes(data)
    # Sound zip, wrong contents: a distribution that no longer sums to one.
    with np.load(good) as data:
        arrays = {k: data[k] for k in data.files}
    arrays["rolls"] = arrays["rolls"].copy()
    arrays["rolls"][123, 2] += 1
    out["unnormalised"] = tmp / "unnormalised.npz"
    np.savez_compressed(out["unnormalised"], **arrays)
    arrays.pop("first_off")
    out["incomplete"] = tmp / "incomplete.npz"
    np.savez_compressed(out["incomplete"], **arrays)
    return out


def test_a_missing_or_corrupt_file_is_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere" / "bearoff1.npz"
    with pytest.raises(BearoffDatabaseError, match="missing") as info:
        BearoffDatabase.load(missing)
    assert str(missing) in str(info.value) and "--build" in str(info.value)
    for name, path in _corrupt_copies(tmp_path).items():
        with pytest.raises(BearoffDatabaseError, match="corrupt") as info:
            BearoffDatabase.from_file(path)
        message = str(info.value)
        assert str(path) in message and "git checkout" in message, name


def test_the_shipped_file_is_small() -> None:
    assert default_path().stat().st_size < 3_000_000
    with zipfile.ZipFile(default_path()) as z:
        assert sorted(z.namelist()) == sorted(
            f"{n}.npy" for n in ("format", "rolls", "expected", "first_off", "first_off_expected")
        )


# -- GNU Backgammon ---------------------------------------------------------------------

GNUBG_OS0 = Path(os.environ.get("NARD_GNUBG_OS0", "/usr/share/gnubg/gnubg_os0.bd"))


def _read_gnubg_os0(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """gnubg's one-sided database file, compressed format with gammons: a
    40-byte header, then per side 8 bytes (offset of its data in uint16s,
    count and first roll of its distribution, the same for its first-off
    distribution), then the uint16 values (units of 1/65535)."""
    raw = path.read_bytes()
    header = raw[:40].decode("ascii")
    assert header.startswith("gnubg-OS-06-15-1-1-"), header
    index = np.frombuffer(raw, dtype=np.uint8, count=8 * POSITIONS, offset=40).reshape(-1, 8)
    offsets = index[:, :4].copy().view("<u4")[:, 0].astype(np.int64)
    data = np.frombuffer(raw, dtype="<u2", offset=40 + 8 * POSITIONS).astype(np.float64)
    rolls = np.zeros((POSITIONS, 32))
    first = np.zeros((POSITIONS, 32))
    for i in range(POSITIONS):
        o, nz, start, nzg, startg = offsets[i], *(int(x) for x in index[i, 4:])
        rolls[i, start : start + nz] = data[o : o + nz]
        first[i, startg : startg + nzg] = data[o + nz : o + nz + nzg]
    return rolls / SCALE, first / SCALE


def _need_gnubg_file() -> None:
    if not GNUBG_OS0.exists():
        if os.environ.get("NARD_REQUIRE_GNUBG"):
            raise AssertionError(f"{GNUBG_OS0} not found and NARD_REQUIRE_GNUBG is set")
        pytest.skip(f"{GNUBG_OS0} not found (apt-get install -y gnubg)")


@pytest.mark.gnubg
def test_against_gnubgs_one_sided_database_file(db: BearoffDatabase) -> None:
    _need_gnubg_file()
    theirs, their_first = _read_gnubg_os0(GNUBG_OS0)
    ours = np.zeros((POSITIONS, 32))
    ours[:, : db.distributions.shape[1]] = db.distributions
    # Expected rolls: gnubg's come from its rounded distributions.
    their_expected = theirs @ np.arange(32)
    assert np.abs(their_expected - db.expectations).max() < 1e-3
    # Distributions: equal to rounding, except where equally good plays (to
    # rounding) differ in spread; those are few and small.
    diff = np.abs(theirs - ours).max(axis=1)
    assert diff.max() < 0.01
    assert (diff > 1e-4).sum() < POSITIONS // 100
    # First-off distributions of the 15-checker sides.
    full = np.array([sum(checkers_from_index(i)) == MAX_CHECKERS for i in range(POSITIONS)])
    for i in np.flatnonzero(full)[::7]:
        mine = db.first_off_distribution(checkers_from_index(int(i)))
        np.testing.assert_allclose(their_first[i, : len(mine)], mine, atol=5 * QUANTUM)
    assert (their_first[~full, 0] == 1.0).all()


_EVALUATE_SCRIPT = """
import json
import gnubg
gnubg.command('set player 0 human')
gnubg.command('set player 1 human')
gnubg.command('new game')
context = {'cubeful': 0, 'plies': 0, 'deterministic': 1, 'noise': 0.0}
for pid in json.load(open(%(path)r)):
    board = gnubg.positionfromid(pid)
    probs = gnubg.evaluate(board, gnubg.cubeinfo(), context)[:5]
    ids = [gnubg.positionbearoff(list(board[1])), gnubg.positionbearoff(list(board[0]))]
    print('NARD:' + json.dumps([pid, gnubg.classifypos(board), list(probs), ids]))
print('NARD:done')
"""

# gnubg's position classes met here: a two-sided database (exact for both
# sides' best play, up to 6 checkers each) and its one-sided database.
_GNUBG_TWO_SIDED, _GNUBG_ONE_SIDED = 4, 6


@pytest.mark.gnubg
@requires_gnubg
def test_race_probabilities_against_gnubg(db: BearoffDatabase) -> None:
    rng = random.Random(20261205)
    races = []
    for k in range(300):
        # Mostly many checkers (gnubg's one-sided class), some few (its two-sided).
        high = 6 if k % 4 == 0 else MAX_CHECKERS
        races.append(race(random_side(rng, 1, high), random_side(rng, 1, high)))
    races.append(race((0, 0, 0, 0, 0, 15), (15, 0, 0, 0, 0, 0)))
    races.append(race((0, 0, 3, 4, 4, 4), (0, 0, 0, 0, 0, 15)))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "races.json"
        path.write_text(json.dumps([pos.position_id() for pos in races]))
        lines = run_gnubg_script(_EVALUATE_SCRIPT % {"path": str(path)})
    assert lines[-1] == "done" and len(lines) == len(races) + 1
    worst = {_GNUBG_TWO_SIDED: 0.0, _GNUBG_ONE_SIDED: 0.0}
    for pos, line in zip(races, lines, strict=False):
        pid, cls, theirs, ids = json.loads(line)
        assert pid == pos.position_id()
        assert ids == [
            bearoff_index(home_checkers(pos)),
            bearoff_index(home_checkers(pos, opponent=True)),
        ]
        assert cls in worst, f"gnubg class {cls} for {pid}"
        ours = db.probabilities(pos)
        diff = max(abs(a - b) for a, b in zip(ours, theirs, strict=True))
        worst[cls] = max(worst[cls], diff)
    # Same one-sided method: equal to the rounding of stored probabilities.
    assert worst[_GNUBG_ONE_SIDED] < 5e-4
    # gnubg's two-sided database holds the exact chances under the best play
    # for winning (an exact two-sided solve agrees with it to 5e-5), where
    # both sides here play to minimise expected rolls: close, not equal (up
    # to 0.010 in 379 such positions).
    assert worst[_GNUBG_TWO_SIDED] < 0.015


def _reference_probabilities(
    db: BearoffDatabase, pos: Position
) -> tuple[float, float, float, float, float]:
    """The five probabilities straight from the formulas, with numpy: the winner's
    rolls against the chance the loser still needs as many; a gammon needs the
    loser's first checker still on the board."""

    def still_needs(p: np.ndarray, lag: int) -> np.ndarray:
        survive = 1.0 - np.concatenate(([0.0], np.cumsum(p)[:-1]))
        if lag:
            survive = np.concatenate((survive[lag:], np.zeros(lag)))
        return np.clip(survive, 0.0, 1.0)

    me, them = home_checkers(pos), home_checkers(pos, opponent=True)
    p_me, p_them = db.distribution(me), db.distribution(them)
    win = min(max(float(p_me @ still_needs(p_them, 0)), 0.0), 1.0)
    win_gammon = lose_gammon = 0.0
    if sum(them) == MAX_CHECKERS and sum(me) > 0:
        win_gammon = float(p_me @ still_needs(db.first_off_distribution(them), 0))
    if sum(me) == MAX_CHECKERS and sum(them) > 0:
        lose_gammon = float(p_them @ still_needs(db.first_off_distribution(me), 1))
    return (win, min(win_gammon, win), 0.0, min(lose_gammon, 1.0 - win), 0.0)


def test_the_compiled_bear_off_probabilities_follow_the_formulas() -> None:
    """Many bear-offs at once (an evaluator's batch) give what the formulas give one
    by one, and one at a time the same floats as in a batch."""
    db = BearoffDatabase.load()
    rng = random.Random(17)
    positions = []
    for _ in range(3000):
        full_me, full_them = rng.random() < 0.3, rng.random() < 0.3
        me = random_side(rng, MAX_CHECKERS if full_me else 1)
        them = random_side(rng, MAX_CHECKERS if full_them else 1)
        positions.append(race(me, them))
    batch = db.probabilities_of_boards(np.array(positions, dtype=np.int64))
    reference = np.array([_reference_probabilities(db, p) for p in positions])
    assert np.abs(batch - reference).max() < 1e-12
    assert (batch[:, 1] > 0).sum() > 100 and (batch[:, 3] > 0).sum() > 10  # gammons met
    for i in range(0, 3000, 97):
        assert list(db.probabilities(positions[i])) == batch[i].tolist()
