"""Differential test of legal plays and their notation against GNU Backgammon.

For ~2,250 positions of every category in :mod:`tests.samples`, gnubg's list
of legal plays (0-ply ``hint``, which lists every play) must give exactly the
same set of resulting positions as ``Position.legal_plays``; each of gnubg's
notations must parse back to the same play, and nard must write each play as
gnubg does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import pytest

from tests.gnubg_oracle import gnubg_plays, requires_gnubg
from tests.samples import CATEGORIES, Sample, varied_samples

pytestmark = [pytest.mark.gnubg, requires_gnubg]

PER_CATEGORY = 250
SEED = 20261201


def _apply_pairs(board: tuple[int, ...], pairs: Sequence[tuple[int, int]]) -> tuple[int, ...]:
    """Play gnubg's (from, to) pairs on a board: the only rule needed is that a blot is hit."""
    b = list(board)
    for s, t in pairs:
        assert b[s] > 0, f"gnubg moves from empty point {s}"
        b[s] -= 1
        if t > 0:
            if b[t] == -1:
                b[t] = 1
                b[0] -= 1
            else:
                b[t] += 1
    return tuple(b)


@pytest.fixture(scope="module")
def oracle() -> list[tuple[Sample, list[tuple[str, list[tuple[int, int]]]]]]:
    samples = varied_samples(SEED, PER_CATEGORY)
    answers = gnubg_plays([(pos.position_id(), d[0], d[1]) for _, pos, d in samples])
    return list(zip(samples, answers, strict=True))


def test_sample_covers_every_category(
    oracle: list[tuple[Sample, list[tuple[str, list[tuple[int, int]]]]]],
) -> None:
    counts = Counter(cat for (cat, _, _), _ in oracle)
    assert len(oracle) >= 2000
    assert all(counts[c] >= PER_CATEGORY for c in CATEGORIES), counts


def test_same_resulting_positions_as_gnubg(
    oracle: list[tuple[Sample, list[tuple[str, list[tuple[int, int]]]]]],
) -> None:
    mismatches = []
    for (cat, pos, dice), plays in oracle:
        theirs = {_apply_pairs(pos.board, pairs) for _, pairs in plays}
        ours = {p.result.flip().board for p in pos.legal_plays(dice)}
        if theirs != ours or len(plays) != len(theirs):
            mismatches.append(
                f"{cat} {pos.position_id()} {dice}: gnubg {len(theirs)} nard {len(ours)}; "
                f"only gnubg: {[t for t, pr in plays if _apply_pairs(pos.board, pr) not in ours]}"
            )
    assert not mismatches, f"{len(mismatches)} mismatches:\n" + "\n".join(mismatches[:20])


def test_gnubg_notation_parses_to_the_same_play(
    oracle: list[tuple[Sample, list[tuple[str, list[tuple[int, int]]]]]],
) -> None:
    failures = []
    checked = 0
    for (_, pos, dice), plays in oracle:
        for text, pairs in plays:
            checked += 1
            expected = _apply_pairs(pos.board, pairs)
            try:
                got = pos.parse_play(text, dice).result.flip().board
            except ValueError as exc:
                failures.append(f"{pos.position_id()} {dice} {text!r}: {exc}")
                continue
            if got != expected:
                failures.append(f"{pos.position_id()} {dice} {text!r}: parsed to another play")
    assert checked > 10000
    assert not failures, f"{len(failures)} of {checked}:\n" + "\n".join(failures[:20])


def test_nard_writes_plays_as_gnubg_does(
    oracle: list[tuple[Sample, list[tuple[str, list[tuple[int, int]]]]]],
) -> None:
    differ = []
    checked = 0
    for (_, pos, dice), plays in oracle:
        ours = {p.result.flip().board: pos.format_play(p) for p in pos.legal_plays(dice)}
        for text, pairs in plays:
            checked += 1
            mine = ours.get(_apply_pairs(pos.board, pairs))
            if mine != text:
                differ.append(f"{pos.position_id()} {dice}: gnubg {text!r} nard {mine!r}")
    assert not differ, f"{len(differ)} of {checked}:\n" + "\n".join(differ[:30])
