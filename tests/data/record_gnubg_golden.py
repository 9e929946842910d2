"""Record tests/data/gnubg_plays_golden.json from GNU Backgammon.

Run from the repository root: ``.venv/bin/python -m tests.data.record_gnubg_golden``.
The golden file lets the rules tests check nard against gnubg's answers even
where gnubg is not installed; the live differential test re-asks gnubg.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.gnubg_oracle import gnubg_plays
from tests.samples import varied_samples

GOLDEN = Path(__file__).with_name("gnubg_plays_golden.json")
SEED = 7
PER_CATEGORY = 40


def record() -> None:
    samples = varied_samples(SEED, PER_CATEGORY)
    queries = [(pos.position_id(), d[0], d[1]) for _, pos, d in samples]
    answers = gnubg_plays(queries)
    rows = [
        {"category": cat, "position_id": q[0], "dice": [q[1], q[2]], "plays": [t for t, _ in a]}
        for (cat, _, _), q, a in zip(samples, queries, answers, strict=True)
    ]
    lines = ",\n".join(json.dumps(row) for row in rows)
    source = "GNU Backgammon 1.07.001, 0-ply hint (every legal play)"
    GOLDEN.write_text(f'{{"source": "{source}", "samples": [\n{lines}\n]}}\n')
    print(f"wrote {len(rows)} samples to {GOLDEN}")


if __name__ == "__main__":
    record()
