"""Race counts against the published examples of their authors' summaries."""

from __future__ import annotations

import pytest

from nard.cli.main import main
from nard.core import Position
from nard.engine.race import keith_count, kleinman_count, race_counts, thorp_count
from nard.notation import XgidRecord


def test_the_keith_count_of_a_published_position() -> None:
    """bgonline.org, Stick, 9 Dec 2014: "the Keith straight up ... 117 to 112 for a
    difference of 5 making it a no double" (Blue on roll, 102 against 112 pips)."""
    position = XgidRecord.from_xgid("XGID=-----CFACA-Aaaa-abaeba----:0:0:1:00:0:0:3:0:10").position
    assert position.pip_counts() == (102, 112)
    keith = keith_count(position)
    assert keith.counts == (117, 112) and not keith.double and not keith.redouble
    assert keith.take


@pytest.mark.parametrize(
    ("theirs", "k", "w"),
    [
        ({8: 8, 7: 7}, 1.383, 0.797),  # 100 against 113 pips (Johansen, rgb 22 Feb 2001)
        ({8: 6, 7: 7, 5: 1, 4: 1}, 0.495, 0.688),  # 100 against 106 pips
    ],
)
def test_the_kleinman_count_of_the_published_examples(
    theirs: dict[int, int], k: float, w: float
) -> None:
    position = Position.from_points({8: 5, 6: 10}, theirs)
    assert position.pip_counts()[0] == 100
    count = kleinman_count(position)
    assert count.counts[0] == pytest.approx(k, abs=5e-4)
    assert count.winning_chance == pytest.approx(w, abs=5e-4)


def test_the_thorp_count_follows_its_rule() -> None:
    race = Position.from_points({6: 3, 5: 3, 4: 3, 3: 3, 2: 3}, {6: 4, 5: 4, 4: 4, 3: 3})
    thorp = thorp_count(race)  # L = (60 + 30 + 0 - 5) x 1.1, T = 69 + 30 + 0 - 4
    assert thorp.counts[0] == pytest.approx(93.5) and thorp.counts[1] == 95.0
    assert thorp.double and thorp.redouble and thorp.take
    far = Position.from_points({6: 3, 5: 3, 4: 3, 3: 3, 2: 3}, {6: 8, 5: 7})
    assert not thorp_count(far).take  # T = 83 + 30 - 2 = 111 > L + 2: pass


def test_counts_are_for_races_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert race_counts(Position()) == []
    assert main(["show", "XGID=-----CFACA-Aaaa-abaeba----:0:0:1:00:0:0:3:0:10"]) == 0
    out = capsys.readouterr().out
    assert "Keith     117 - 112" in out and "Kleinman  K 0.93" in out
    assert main(["show", "4HPwATDgc/ABMA"]) == 0
    assert "Race counts" not in capsys.readouterr().out
