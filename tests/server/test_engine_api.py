"""The engine for programs over HTTP (docs/engine-protocols.md): ``/api/engine/move``,
``/cube`` and ``/eval`` for a Position ID, gnubg's ``POSITION_ID:MATCH_ID`` or an XGID,
cubeful and match-aware, the answers those of the engine itself; bad input named;
a rate limit per address."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from nard.core.position import Position
from nard.engine import Engine
from nard.engine.cube import CubeContext, match_context
from nard.notation.positions import read_position
from nard.server import create_app
from nard.server.storage import Storage
from tests.server.conftest import app_on, make_settings, seeded
from tests.server.test_ratings import error_of

MATCH = "4HPwATDgc/ABMA:MAEgATAAKAAE"  # a 9-point match at 3-5, the opening position


def test_the_plays_are_the_engines_own_ranking(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    engine = Engine("expert", time_limit=None)
    with TestClient(app) as client:
        for text, dice in (("4HPwATDgc/ABMA", [4, 3]), (MATCH, [6, 2])):
            answer = client.post("/api/engine/move", json={"position": text, "dice": dice})
            assert answer.status_code == 200, answer.text
            body = answer.json()
            position, match = read_position(text)
            ctx = match_context(match) if match is not None else CubeContext()
            ranked = engine.rank_plays(position, tuple(dice), ctx)
            assert body["plays"][0]["play"] == position.format_play(ranked[0].play)
            assert body["plays"][0]["cubeful_equity"] == round(ranked[0].cubeful or 0, 5)
            assert body["plies"] == 0 and body["level"] == "expert"
        assert body["context"]["match_length"] == 9
        # the XGID's own dice
        xgid = "XGID=-b----E-C---eE---c-e----B-:0:0:1:52:0:0:0:0:10"
        moved = client.post("/api/engine/move", json={"position": xgid}).json()
        assert moved["dice"] == [5, 2] and moved["plays"]
    storage.close()


def test_the_cube_and_the_evaluation(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    engine = Engine("expert", time_limit=None)
    with TestClient(app) as client:
        cube = client.post("/api/engine/cube", json={"position": MATCH}).json()
        position, match = read_position(MATCH)
        assert match is not None
        expected = engine.cube_action(position, match_context(match))
        assert (cube["action"], cube["no_double"]) == (
            expected.action,
            round(expected.no_double, 5),
        )
        assert cube["mwc"] is not None and cube["plies"] == 1
        money = client.post("/api/engine/cube", json={"position": "4HPwATDgc/ABMA"}).json()
        assert money["mwc"] is None
        # An XGID's beaver rule counts (it was dropped): doubled at the start, beaver.
        beavers = "XGID=-b----E-C---eE---c-e----B-:0:0:1:00:0:0:2:0:10"
        answer = client.post("/api/engine/cube", json={"position": beavers}).json()
        assert answer["context"]["beavers"] is True and answer["action"] == "No double, beaver"
        assert money["context"]["beavers"] is False
        evaluated = client.post("/api/engine/eval", json={"position": "4HPwATDgc/ABMA"}).json()
        probs, equity = engine.evaluate(Position(), 0)
        assert evaluated["probabilities"] == [round(p, 5) for p in probs]
        assert evaluated["cubeless_equity"] == round(equity, 5)
        assert evaluated["cubeful_unit"] == "points per cube"
    storage.close()


def test_bad_input_is_named(sqlite_url: str, tmp_path: Path) -> None:
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as client:
        for body, code in (
            ({"position": "NOTANID!", "dice": [3, 1]}, "invalid_position"),
            ({"position": "4HPwATDgc/ABMA"}, "no_dice"),
            ({"position": "4HPwATDgc/ABMA", "dice": [7, 1]}, None),
            ({"position": "4HPwATDgc/ABMA", "dice": [3, 1], "level": "grandmaster"}, None),
            ({"position": "4HPwATDgc/ABMA", "dice": "31"}, None),
            ({"position": "A" * 500, "dice": [3, 1]}, None),
        ):
            response = client.post("/api/engine/move", json=body)
            assert response.status_code == 422, (body, response.text)
            if code:
                assert error_of(response) == (422, code)
        over = client.post("/api/engine/eval", json={"position": "AAAAAAAAAAAAAA", "plies": 0})
        assert over.status_code == 422
        deep = client.post("/api/engine/eval", json={"position": "4HPwATDgc/ABMA", "plies": 3})
        assert deep.status_code == 422
    storage.close()


def test_the_engine_has_a_rate_limit(sqlite_url: str, tmp_path: Path) -> None:
    storage = Storage(sqlite_url)
    app = create_app(
        make_settings(sqlite_url, tmp_path, limits="engine=3/minute"),
        storage,
        server_seeds=seeded(1),
    )
    with TestClient(app) as client:
        body = {"position": "4HPwATDgc/ABMA", "plies": 0}
        codes = [client.post("/api/engine/eval", json=body).status_code for _ in range(5)]
        assert codes == [200, 200, 200, 429, 429]
    storage.close()


def test_the_engine_answers_in_its_worker_processes_beside_a_roller(
    sqlite_url: str, tmp_path: Path
) -> None:
    """With engine worker processes (the default) the engine API and the hints think
    there, not in the server's threads: a program asking for the roller's ranking (up
    to 4 s) held up every other answer of the engine behind it (one thread here, two
    by default), and its rollouts fought the serving loop for Python's lock. The
    answers are those of the server without workers."""
    import asyncio

    import httpx2

    storage = Storage(sqlite_url)
    app = create_app(
        make_settings(sqlite_url, tmp_path, engine_processes=1), storage, server_seeds=seeded(1)
    )
    plain, plain_storage = app_on(f"sqlite:///{tmp_path / 'plain.db'}", tmp_path / "plain")
    asks = (
        ("/api/engine/move", {"position": "4HPwATDgc/ABMA", "dice": [4, 3]}),
        ("/api/engine/move", {"position": MATCH, "dice": [6, 2], "level": "world-class"}),
        ("/api/engine/cube", {"position": MATCH}),
        ("/api/engine/eval", {"position": "4HPwATDgc/ABMA", "plies": 0}),
        ("/api/engine/eval", {"position": "4HPwATDgc/ABMA", "plies": 2}),
    )

    async def scenario() -> None:
        async with (
            httpx2.AsyncClient(
                transport=httpx2.ASGITransport(app=app), base_url="http://test"
            ) as client,
            httpx2.AsyncClient(
                transport=httpx2.ASGITransport(app=plain), base_url="http://test"
            ) as reference,
        ):
            for path, body in asks:
                answer = await asyncio.wait_for(client.post(path, json=body), timeout=120)
                assert answer.status_code == 200, answer.text
                expected = (await reference.post(path, json=body)).json()
                assert answer.json() == expected, path
            # 6-4 at the opening: three close plays, which the roller rolls out for
            # seconds. The expert's answers meanwhile come at once.
            roller = asyncio.ensure_future(
                client.post(
                    "/api/engine/move",
                    json={"position": "4HPwATDgc/ABMA", "dice": [6, 4], "level": "roller"},
                )
            )
            await asyncio.sleep(0.2)
            for dice in ([3, 1], [5, 2]):
                quick = await asyncio.wait_for(
                    client.post("/api/engine/move", json={"position": MATCH, "dice": dice}),
                    timeout=60,
                )
                assert quick.status_code == 200, quick.text
                assert not roller.done(), "the expert's answer waited for the roller's"
            rolled = await asyncio.wait_for(roller, timeout=60)
            assert rolled.status_code == 200 and rolled.json()["level"] == "roller"

    try:
        asyncio.run(scenario())
    finally:
        app.state.service.close()
        plain.state.service.close()
        storage.close()
        plain_storage.close()


def test_a_busy_deep_level_refuses_more_requests(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ENGINE_API_BACKLOG requests thinking at a deep level, the next is refused
    at once (503 engine_busy, Retry-After) rather than queued behind them: a program
    asking for the roller 60 times a minute (4 s each) queued hours of thinking. The
    other levels still answer, and a place is free again once its answer is given."""
    import asyncio

    import httpx2

    from nard.engine import Level
    from nard.server import service as service_module

    monkeypatch.setitem(service_module.ENGINE_API_BACKLOG, Level.ROLLER, 1)
    app, storage = app_on(sqlite_url, tmp_path)
    rolled_out = {"position": "4HPwATDgc/ABMA", "dice": [6, 4], "level": "roller"}

    async def scenario() -> None:
        transport = httpx2.ASGITransport(app=app)
        async with httpx2.AsyncClient(transport=transport, base_url="http://test") as client:
            first = asyncio.ensure_future(client.post("/api/engine/move", json=rolled_out))
            await asyncio.sleep(0.2)
            refused = await client.post("/api/engine/move", json=rolled_out)
            assert error_of(refused) == (503, "engine_busy"), refused.text
            assert refused.headers["Retry-After"] == "5"
            cube = await client.post(
                "/api/engine/cube", json={"position": MATCH, "level": "roller"}
            )
            assert error_of(cube) == (503, "engine_busy")
            expert = await client.post("/api/engine/eval", json={"position": MATCH})
            assert expert.status_code == 200, expert.text
            answered = await asyncio.wait_for(first, timeout=60)
            assert answered.status_code == 200, answered.text
            again = {**rolled_out, "dice": [3, 1]}
            assert (await client.post("/api/engine/move", json=again)).status_code == 200

    try:
        asyncio.run(scenario())
    finally:
        app.state.service.close()
        storage.close()
