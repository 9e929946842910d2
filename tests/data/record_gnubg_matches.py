"""Record tests/data/gnubg_matches/: complete matches and sessions GNU Backgammon played itself.

Run from the repository root: ``.venv/bin/python -m tests.data.record_gnubg_matches``.
gnubg plays both sides at 0-ply (some players with noise, so that wrong
doubles, beavers and gammons happen) and exports each match twice, with
``export match mat`` and ``save match`` (SGF). ``manifest.json`` records
gnubg's own view of every match, read from ``gnubg.match()`` after play: the
length, the rules, every game's score, winner, points, resignation and
Crawford flag, its cube actions, and the final score. The readers' tests
check nard against it where gnubg is not installed.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tests.gnubg_oracle import run_gnubg_script

OUT = Path(__file__).with_name("gnubg_matches")
MANIFEST = OUT / "manifest.json"
PROCESSES = 3
DATE = "2024-03-01"  # fixed, so that re-recording gives the same files


@dataclass(frozen=True)
class Spec:
    """One match (``length`` > 0) or money session (``length`` 0, ``games`` games)."""

    name: str
    length: int
    seed: int
    games: int = 0
    names: tuple[str, str] = ("gnubg", "root")
    crawford: bool = True
    jacoby: bool = False
    beavers: int = 0
    cube_noise: tuple[float, float] = (0.0, 0.0)
    chequer_noise: tuple[float, float] = (0.0, 0.0)


_NAMES = [("gnubg", "root"), ("Alice", "Bob"), ("White", "Black"), ("nard_a", "nard-b")]


def specs() -> list[Spec]:
    out: list[Spec] = []
    seed = 1000
    for length, count in ((1, 8), (3, 12), (5, 12), (7, 10)):
        for i in range(count):
            seed += 1
            # A third of the matches have a weaker player 1 (more gammons and
            # wrong cubes); some have a noisy cube on both sides.
            chequer = (0.0, 0.08) if i % 3 == 1 else (0.0, 0.0)
            cube = (0.15, 0.15) if i % 4 == 2 else (0.0, 0.0)
            out.append(
                Spec(
                    f"match{length}_{i + 1:02d}",
                    length,
                    seed,
                    names=_NAMES[i % len(_NAMES)],
                    cube_noise=cube,
                    chequer_noise=chequer,
                )
            )
    out.append(Spec("match5_nocrawford", 5, 2001, crawford=False, chequer_noise=(0.0, 0.05)))
    money = [
        # (games, jacoby, beavers, cube noise of player 1, chequer noise of player 1)
        (6, False, 0, 0.0, 0.0),
        (6, False, 0, 0.0, 0.06),
        (5, False, 0, 0.2, 0.0),
        (6, True, 0, 0.0, 0.0),
        (5, True, 1, 0.3, 0.0),
        (5, True, 1, 0.3, 0.05),
        (6, True, 3, 0.3, 0.0),
        (5, True, 3, 0.4, 0.1),
        (5, False, 1, 0.3, 0.0),
        (5, False, 3, 0.4, 0.0),
        (6, True, 0, 0.1, 0.08),
        (4, False, 0, 0.0, 0.1),
        (5, True, 2, 0.35, 0.0),
        (6, False, 2, 0.25, 0.05),
    ]
    for i, (games, jacoby, beavers, cube_1, chequer_1) in enumerate(money):
        out.append(
            Spec(
                f"money_{i + 1:02d}",
                0,
                3001 + i,
                games=games,
                names=_NAMES[i % len(_NAMES)],
                jacoby=jacoby,
                beavers=beavers,
                cube_noise=(0.0, cube_1),
                chequer_noise=(0.0, chequer_1),
            )
        )
    return out


_SCRIPT = """
import json
import gnubg

def emit(value):
    print('\\nNARD:' + json.dumps(value), flush=True)

specs = json.load(open(%(path)r))
out = %(out)r
for c in ('set display off', 'set automatic game off', 'set cube use on',
          'set player 0 gnubg', 'set player 1 gnubg'):
    gnubg.command(c)
for spec in specs:
    for p in (0, 1):
        for kind, noise in (('chequerplay', spec['chequer_noise'][p]),
                            ('cubedecision', spec['cube_noise'][p])):
            gnubg.command('set player %%d %%s evaluation plies 0' %% (p, kind))
            gnubg.command('set player %%d %%s evaluation deterministic on' %% (p, kind))
            gnubg.command('set player %%d %%s evaluation noise %%.3f' %% (p, kind, noise))
    gnubg.command('set automatic crawford ' + ('on' if spec['crawford'] else 'off'))
    gnubg.command('set jacoby ' + ('on' if spec['jacoby'] else 'off'))
    gnubg.command('set beavers %%d' %% spec['beavers'])
    gnubg.command('set defaultnames %%s %%s' %% tuple(spec['names']))
    gnubg.command('set seed %%d' %% spec['seed'])
    length = spec['length']
    gnubg.command('new match %%d' %% length if length else 'new session')
    while True:
        games = gnubg.match(analysis=0)['games']
        last = games[-1]['info']
        score = [last['score-X'], last['score-O']]
        if last.get('winner') in ('X', 'O'):
            score['XO'.index(last['winner'])] += last['points-won']
        if length and max(score) >= length:
            break
        if not length and len(games) >= spec['games']:
            break
        gnubg.command('new game')
    gnubg.command('set matchinfo date %(date)s')
    gnubg.command('analysis clear match')
    gnubg.command('export match mat %%s/%%s.mat' %% (out, spec['name']))
    gnubg.command('save match %%s/%%s.sgf' %% (out, spec['name']))
    m = gnubg.match(analysis=0)
    emit({'name': spec['name'], 'info': m['match-info'],
          'games': [{'info': g['info'],
                     'actions': [[a['action'], a['player']] for a in g['game']
                                 if a['action'] != 'move']} for g in m['games']]})
emit('done')
"""


def _play(chunk: list[Spec]) -> list[dict[str, Any]]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "specs.json"
        path.write_text(json.dumps([asdict(s) for s in chunk]))
        script = _SCRIPT % {"path": str(path), "out": str(OUT.resolve()), "date": DATE}
        lines = run_gnubg_script(script, timeout=3600)
    answers = [json.loads(line) for line in lines]
    if answers[-1:] != ["done"] or len(answers) != len(chunk) + 1:
        raise RuntimeError(f"gnubg stopped early: {answers[-2:]}")
    return list(answers[:-1])


def _entry(spec: Spec, answer: dict[str, Any]) -> dict[str, Any]:
    """gnubg's view of one match, in nard's player numbers (gnubg's X is player 0)."""
    games = []
    for g in answer["games"]:
        info = g["info"]
        winner = "XO".index(info["winner"]) if info.get("winner") in ("X", "O") else None
        actions = [(kind, "XO".index(player)) for kind, player in g["actions"]]
        counts = {"doubles": 0, "beavers": 0, "takes": 0, "drops": 0}
        offered_by: int | None = None
        for kind, player in actions:
            if kind == "double":
                # A double by the side just doubled (or re-doubled) is an animal.
                if offered_by is not None and player != offered_by:
                    counts["beavers"] += 1
                else:
                    counts["doubles"] += 1
                offered_by = player
            elif kind in ("take", "drop"):
                counts["takes" if kind == "take" else "drops"] += 1
                offered_by = None
        games.append(
            {
                "score": [info["score-X"], info["score-O"]],
                "winner": winner,
                "points": info.get("points-won"),
                "resigned": bool(info.get("resigned")),
                "crawford": bool(info.get("crawford")),
                **counts,
            }
        )
    last = games[-1]
    final = list(last["score"])
    if last["winner"] is not None:
        final[last["winner"]] += last["points"]
    info = answer["info"]
    return {
        "name": spec.name,
        "mat": f"{spec.name}.mat",
        "sgf": f"{spec.name}.sgf",
        "match_length": info["match-length"],
        "players": [info["X"]["name"], info["O"]["name"]],
        "rules": {
            "crawford": spec.crawford and spec.length > 0,
            "jacoby": spec.jacoby,
            "beavers": spec.beavers,
        },
        "seed": spec.seed,
        "noise": {"cube": list(spec.cube_noise), "chequer": list(spec.chequer_noise)},
        "games": games,
        "final_score": final,
    }


def _manifest_text(doc: dict[str, Any]) -> str:
    """JSON with one line per match header and per game (small diffs on re-recording)."""
    blocks = []
    for entry in doc["matches"]:
        head = json.dumps({k: v for k, v in entry.items() if k != "games"})
        games = ",\n".join("   " + json.dumps(g) for g in entry["games"])
        blocks.append(f'  {head[:-1]}, "games": [\n{games}\n  ]}}')
    matches = ",\n".join(blocks)
    return f'{{"source": {json.dumps(doc["source"])}, "matches": [\n{matches}\n]}}\n'


def record() -> None:
    OUT.mkdir(exist_ok=True)
    for old in [*OUT.glob("*.mat"), *OUT.glob("*.sgf")]:
        old.unlink()
    all_specs = specs()
    chunks = [all_specs[i::PROCESSES] for i in range(PROCESSES)]
    with ThreadPoolExecutor(PROCESSES) as pool:
        answers = [a for chunk in pool.map(_play, chunks) for a in chunk]
    by_name = {a["name"]: a for a in answers}
    entries = [_entry(spec, by_name[spec.name]) for spec in all_specs]
    doc = {
        "source": "GNU Backgammon 1.07.001 playing itself at 0-ply; "
        "`export match mat` and `save match` after `analysis clear match`",
        "matches": entries,
    }
    MANIFEST.write_text(_manifest_text(doc))
    games = sum(len(e["games"]) for e in entries)
    size = sum(p.stat().st_size for p in OUT.iterdir())
    print(f"wrote {len(entries)} matches and sessions, {games} games, {size} bytes to {OUT}")


if __name__ == "__main__":
    record()
