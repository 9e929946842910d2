"""``nard ubgi``: the Universal Backgammon Interface v0.2 (docs/engine-protocols.md),
as a controller drives it: the handshake, options, positions by Position ID, Match ID
and XGID, the engine's answers equal to its own choices, and errors that name the
problem and let the session go on."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from nard.cli.ubgi import UbgiEngine, ubgi_move
from nard.core.position import Position
from nard.engine import Engine
from nard.engine.cube import CubeContext

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def expert() -> Engine:
    return Engine("expert", time_limit=None)


def _session(lines: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "nard.cli.main", "ubgi"],
        input=lines,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=True,
    )
    assert not done.stderr, done.stderr
    return done.stdout.splitlines()


def test_a_controller_session_over_stdin_and_stdout() -> None:
    out = _session(
        "ubgi\nisready\nnewgame\nposition gnubgid 4HPwATDgc/ABMA\ndice 3 1\ngo\n"
        "go cube\ngo turn\nquit\nisready\n"
    )
    handshake = out[: out.index("ubgiok") + 1]
    assert handshake[:3] == ["id name nard", "id author the nard developers", "proto 0.2"]
    assert any(line.startswith("key engine.level enum ") for line in handshake)
    rest = out[len(handshake) :]
    assert rest == [
        "readyok",
        "bestmove 8/5 6/5",
        "bestcube nodouble",
        "bestturn cube=nodouble move=8/5 6/5",
    ]  # nothing after quit


def test_the_answers_are_the_engines_own(expert: Engine) -> None:
    """Random positions of self-play games, rolls of every kind (bar entries, bear-offs,
    no legal play): bestmove is the engine's best play written step by step."""
    engine = UbgiEngine(lambda level: expert)
    rng = random.Random(3)
    kinds: set[str] = set()
    for _ in range(4):
        position = Position()
        while not position.is_game_over():
            dice = (rng.randint(1, 6), rng.randint(1, 6))
            engine.handle(f"position gnubgid {position.position_id()}")
            engine.handle(f"dice {dice[0]} {dice[1]}")
            [answer] = engine.handle("go chequer")
            play = expert.best_play(position, dice, CubeContext())
            assert answer == f"bestmove {ubgi_move(play)}"
            kinds.update(w.split("/")[i] for w in answer.split()[1:] if "/" in w for i in (0, 1))
            if answer == "bestmove pass":
                kinds.add("pass")
            position = play.result if play is not None else position.flip()
    assert {"bar", "off", "pass"} <= kinds


def test_match_ids_and_xgids_give_the_cube_and_score() -> None:
    calls: list[tuple[CubeContext, tuple[int, int] | None]] = []

    class Spy:
        seed = 0

        def best_play(self, position: Position, dice: tuple[int, int], ctx: CubeContext) -> None:
            calls.append((ctx, dice))

        def cube_action(self, position: Position, ctx: CubeContext) -> object:
            calls.append((ctx, None))
            return type("D", (), {"double": True})()

    engine = UbgiEngine(lambda level: Spy())
    engine.handle("position gnubgid 4HPwATDgc/ABMA:QYkqASAAIAAA")  # 9-point, 4-2, cube 2
    assert engine.handle("go cube") == ["bestcube nodouble"]  # the cube is the opponent's
    engine.handle("position xgid XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10")
    assert engine.handle("go") == ["bestmove pass"]  # the spy plays nothing
    ctx, dice = calls[-1]
    assert dice == (5, 2) and ctx.is_money
    engine.handle("position xgid -b----E-C---eE---c-e----B-:0:0:1:00:2:1:0:5:10")
    assert engine.handle("go cube") == ["bestcube double"]
    ctx, _ = calls[-1]
    assert (ctx.match_length, ctx.score) == (5, (2, 1))
    engine.handle("position xgid -b----E-C---eE---c-e----B-:0:0:1:00:0:0:3:0:10")
    assert engine.handle("go cube") == ["bestcube double"]
    ctx, _ = calls[-1]
    assert ctx.is_money and ctx.jacoby and ctx.beavers  # an XGID's money rules count


def test_options_and_the_ply_convention() -> None:
    made: list[object] = []

    def make(level: str) -> Engine:
        engine = Engine(level, time_limit=None)
        made.append(engine)
        return engine

    engine = UbgiEngine(make)
    assert engine.handle("get engine.ply") == ["value engine.ply -1"]
    engine.handle("set engine.plyconvention xg")
    engine.handle("set engine.ply 1")  # XG's 1-ply is gnubg's 0-ply
    assert engine.engine().settings.plies == 0
    engine.handle("set engine.ply 3")
    assert engine.engine().settings.plies == 2
    engine.handle("set engine.plyconvention gnubg")
    assert engine.handle("go") == ["error bad_state missing position"]
    assert engine.handle("set engine.ply 3") == []
    engine.handle("position gnubgid 4HPwATDgc/ABMA")
    engine.handle("dice 6 5")
    assert engine.handle("go")[0].startswith("error unsupported engine.ply 3")
    assert engine.handle("setoption name engine.level value beginner") == []
    assert engine.handle("get engine.level") == ["value engine.level beginner"]


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        ("dance", "error bad_command unknown command dance"),
        ("set engine.level grandmaster", "error bad_value engine.level must_be"),
        ("set engine.ply two", "error bad_value engine.ply must_be -1..3"),
        ("set engine.hash 64", "error unsupported unknown key engine.hash"),
        ("get", "error bad_command expected: get <key>"),
        ("dice 7 1", "error bad_value"),
        ("dice 6", "error bad_command expected: dice <d1> <d2>"),
        ("position gnubgid NOTANID", "error bad_value"),
        ("position fen x", "error bad_command"),
        ("go", "error bad_state missing position"),
        ("go sideways", "error bad_state missing position"),
    ],
)
def test_errors_name_the_problem_and_the_session_goes_on(line: str, answer: str) -> None:
    engine = UbgiEngine(lambda level: None)
    [got] = engine.handle(line)
    assert got.startswith(answer), got
    assert engine.handle("keys")[0].startswith("key engine.level")
    engine.handle("position gnubgid 4HPwATDgc/ABMA")
    assert engine.handle("go") == ["error bad_state missing dice"]
