"""Legal plays against answers recorded from GNU Backgammon (runs without gnubg).

``tests/data/gnubg_plays_golden.json`` holds gnubg 1.07's complete list of
plays for 360 positions of every category (re-record it with
``python -m tests.data.record_gnubg_golden``); nard must list the same plays,
written the same way, and each text must parse back to its play.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nard import Position

GOLDEN = Path(__file__).parents[1] / "data" / "gnubg_plays_golden.json"
SAMPLES: list[dict[str, Any]] = json.loads(GOLDEN.read_text())["samples"]


def test_golden_file_covers_every_category() -> None:
    categories = {s["category"] for s in SAMPLES}
    assert len(SAMPLES) == 360
    assert categories >= {"opening", "contact", "bar-1", "bar-2", "bar-3", "closed-board"}
    assert categories >= {"bearoff-contact", "race", "no-play"}


@pytest.mark.parametrize("sample", SAMPLES, ids=lambda s: f"{s['position_id']}-{s['dice']}")
def test_same_plays_as_gnubg(sample: dict[str, Any]) -> None:
    pos = Position.from_position_id(sample["position_id"])
    dice = (sample["dice"][0], sample["dice"][1])
    plays = pos.legal_plays(dice)
    assert sorted(pos.format_play(p) for p in plays) == sorted(sample["plays"])
    assert {pos.parse_play(text, dice) for text in sample["plays"]} == set(plays)
