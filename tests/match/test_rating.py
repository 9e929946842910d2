"""The FIBS rating formula (nard.match.rating) against published numbers and the
test vectors of docs/ratings.md."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from nard.match.rating import (
    RatingState,
    experience_factor,
    rate_match,
    upset_probability,
    win_probability,
)

# "Batting average for favorite to maintain his rating" (bkgm.com, rec.games.backgammon
# article 45): the favourite's chance by the formula, by rating difference (rows) and
# match length (columns 1, 3, 5, 7, 9, 11), three decimals as published.
BATTING = {
    0: (0.500, 0.500, 0.500, 0.500, 0.500, 0.500),
    100: (0.529, 0.550, 0.564, 0.576, 0.585, 0.594),
    200: (0.557, 0.598, 0.626, 0.648, 0.666, 0.682),
    300: (0.585, 0.645, 0.684, 0.714, 0.738, 0.759),
    400: (0.613, 0.689, 0.737, 0.772, 0.799, 0.822),
    500: (0.640, 0.730, 0.784, 0.821, 0.849, 0.871),
    600: (0.666, 0.768, 0.824, 0.861, 0.888, 0.908),
    700: (0.691, 0.802, 0.858, 0.894, 0.918, 0.935),
}


@pytest.mark.parametrize("difference", sorted(BATTING))
def test_the_favourites_chances_are_the_published_ones(difference: int) -> None:
    for length, published in zip((1, 3, 5, 7, 9, 11), BATTING[difference], strict=True):
        favourite = 1.0 - upset_probability(difference, length)
        assert round(favourite, 3) == published, (difference, length)
        assert win_probability(1500 + difference, 1500, length) == pytest.approx(favourite)


def _doc_vectors() -> list[tuple[float, int, float, int, int, float, float]]:
    """The rows of docs/ratings.md's test vector table."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "ratings.md").read_text()
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and re.fullmatch(r"-?\d+(\.\d+)?", cells[0]):
            w, we, lo, le, n, gain, loss = cells
            rows.append((float(w), int(we), float(lo), int(le), int(n), float(gain), float(loss)))
    return rows


def test_the_documented_vectors_hold() -> None:
    """docs/ratings.md's table: winner's rating and experience, loser's, length, the
    winner's gain and the loser's loss to 4 decimals."""
    vectors = _doc_vectors()
    assert len(vectors) >= 8
    for w, we, lo, le, n, gain, loss in vectors:
        change = rate_match(RatingState(w, we), RatingState(lo, le), n)
        assert (round(change.winner_gain, 4), round(change.loser_loss, 4)) == (gain, loss)
        assert change.winner.rating == pytest.approx(w + gain, abs=1e-4)
        assert change.loser.rating == pytest.approx(lo - loss, abs=1e-4)
        assert (change.winner.experience, change.loser.experience) == (we + n, le + n)


def test_by_hand() -> None:
    """Two cases worked out by hand from the formula."""
    new = rate_match(RatingState(), RatingState(), 5)  # K = 5, P = 1/2
    assert new.winner_gain == pytest.approx(4 * 5 * math.sqrt(5) * 0.5)
    upset = rate_match(RatingState(1600, 400), RatingState(1800, 400), 7)  # K = 1
    p = 1 - 1 / (10 ** (200 * math.sqrt(7) / 2000) + 1)
    assert upset.winner_gain == pytest.approx(4 * math.sqrt(7) * p)
    assert (
        upset.winner_gain
        > rate_match(RatingState(1800, 400), RatingState(1600, 400), 7).winner_gain
    )


def test_only_ones_own_experience_counts() -> None:
    change = rate_match(RatingState(1500, 0), RatingState(1500, 1000), 3)
    assert change.winner_gain == pytest.approx(5 * change.loser_loss)
    assert [experience_factor(e) for e in (0, 100, 200, 300, 400)] == [5, 4, 3, 2, 1]


@pytest.mark.parametrize("length", [0, -1, True, 2.5])
def test_a_rated_match_has_a_length(length: object) -> None:
    with pytest.raises(ValueError, match="1 point or longer"):
        rate_match(RatingState(), RatingState(), length)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="finite"):
        RatingState(float("nan"))
    with pytest.raises(ValueError, match="experience"):
        RatingState(1500, -1)
