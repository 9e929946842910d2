"""Analyses of finished matches: queued by the API, made by a worker, kept with the match."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from nard.server.jobs import AnalysisQueue, QueueSettings, queue_for, run_job, worker_command
from tests.server.conftest import app_on, make_settings
from tests.server.helpers import guest, new_table, play_until
from tests.server.test_ratings import error_of, register


def _finished(client: TestClient, headers: dict[str, str]) -> dict[str, Any]:
    table = play_until(client, new_table(client, headers, match_length=1), headers)
    assert table["status"] == "finished"
    return table


def _queue(client: TestClient) -> AnalysisQueue:
    queue: AnalysisQueue = client.app.state.analysis_queue  # type: ignore[attr-defined]
    return queue


def test_an_analysis_is_queued_made_by_a_worker_and_kept(client: TestClient) -> None:
    headers = guest(client)
    table = _finished(client, headers)
    url = f"/api/tables/{table['id']}/analyses"
    assert client.get(url).json() == {"analyses": []}
    response = client.post(url, json={"plies": 0}, headers=headers)
    assert response.status_code == 202, response.text
    queued = response.json()
    assert queued["status"] == "queued" and queued["plies"] == 0 and queued["result"] is None
    # the web process made nothing: the job waits for a worker
    assert _queue(client).pending() == 1
    assert client.get(url).json()["analyses"][0]["status"] == "queued"
    assert _queue(client).run_one()
    done = client.get(url).json()["analyses"][0]
    assert done["status"] == "done" and done["done"] == done["total"] > 0
    result = done["result"]
    names = [p["name"] for p in result["players"]]
    assert names == [s["name"] for s in table["seats"]]
    checker = [d for d in result["decisions"] if d["kind"] == "checker"]
    assert checker and all(len(d["board"]) == 26 for d in checker)
    assert all(d["best_moves"] for d in checker)
    # asking again at that depth or shallower answers the same analysis
    again = client.post(url, json={"plies": 0}, headers=headers)
    assert again.status_code == 200 and again.json()["id"] == queued["id"]
    # deeper is a new job
    deeper = client.post(url, json={"plies": 1}, headers=headers)
    assert deeper.status_code == 202 and deeper.json()["id"] != queued["id"]
    mine = client.get("/api/my-tables").json()
    assert next(t for t in mine if t["id"] == table["id"])["analysed"] == 0


def test_a_decision_board_is_a_replay_step(client: TestClient) -> None:
    """Each checker decision's board (player 0's side) and dice are those of a replay
    step of its game: the page steps the board to it."""
    headers = guest(client)
    table = _finished(client, headers)
    url = f"/api/tables/{table['id']}/analyses"
    client.post(url, json={"plies": 0}, headers=headers)
    _queue(client).run_one()
    result = client.get(url).json()["analyses"][0]["result"]
    steps = client.get(f"/api/tables/{table['id']}/replay").json()["steps"]
    for d in result["decisions"]:
        if d["kind"] != "checker":
            continue
        found = [
            s
            for s in steps
            if s["game"] == d["game"]
            and s["board"] == d["board"]
            and s["dice"]
            and sorted(s["dice"]) == sorted(d["dice"])
        ]
        assert found, d


def test_only_a_finished_match_is_analysed(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, match_length=3)
    url = f"/api/tables/{table['id']}/analyses"
    response = client.post(url, json={"plies": 0}, headers=headers)
    assert response.status_code == 409 and response.json()["error"]["code"] == "not_finished"
    assert client.post(url, json={"plies": 3}, headers=headers).status_code == 422
    assert client.post(url, json={"plies": 0, "x": 1}, headers=headers).status_code == 422
    assert client.post("/api/tables/nope/analyses", json={}, headers=headers).status_code == 404
    anonymous = TestClient(client.app)
    assert anonymous.post(url, json={"plies": 0}).status_code in (401, 403)


def test_a_match_ended_before_any_move_is_not_analysed_nor_averaged(client: TestClient) -> None:
    """Analysing a match ended while the dice waited for contributions made an analysis
    of nothing whose error rate of 0 went into the player's average: each such match
    made the profile's average look better. Now the API refuses it (409), and an
    analysis in which the player had no decision counts for nothing."""
    headers = register(client, "ann")
    empty = new_table(client, headers, match_length=3, contribution=None)
    assert client.post(f"/api/tables/{empty['id']}/end", headers=headers).status_code == 200
    url = f"/api/tables/{empty['id']}/analyses"
    assert error_of(client.post(url, json={"plies": 0}, headers=headers)) == (
        409,
        "nothing_to_analyse",
    )
    assert _queue(client).pending() == 0
    # One made before the API refused them (by the storage, as the API did), done:
    storage = client.app.state.storage  # type: ignore[attr-defined]
    record = client.get(f"/api/tables/{empty['id']}/record.json").text
    row = storage.queue_analysis(empty["id"], 0, None, record)
    _queue(client).enqueue(row.id, record, 0)
    assert _queue(client).run_one()
    assert client.get(url).json()["analyses"][0]["status"] == "done"
    profile = client.get("/api/players/ann").json()
    assert (profile["average_error_rate"], profile["analysed_matches"]) == (None, 0)
    # A match played and analysed counts.
    played = _finished(client, headers)
    client.post(f"/api/tables/{played['id']}/analyses", json={"plies": 0}, headers=headers)
    assert _queue(client).run_one()
    profile = client.get("/api/players/ann").json()
    assert profile["analysed_matches"] == 1 and profile["average_error_rate"] is not None


def test_a_failed_job_says_why(client: TestClient) -> None:
    headers = guest(client)
    table = _finished(client, headers)
    storage = client.app.state.storage  # type: ignore[attr-defined]
    row = storage.queue_analysis(table["id"], 0, None)
    settings = client.app.state.settings  # type: ignore[attr-defined]
    run_job(settings.database_url, row.id, '{"not": "a record"}', 0)
    failed = storage.analysis(row.id)
    assert failed.status == "failed" and failed.error and failed.result is None


def _worker(where: QueueSettings, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.Popen(worker_command(where, *extra), env=env, start_new_session=True)


def _wait_for(client: TestClient, url: str, wanted: set[str], limit: float = 180) -> dict[str, Any]:
    deadline = time.monotonic() + limit
    row: dict[str, Any] = {}
    while time.monotonic() < deadline:
        row = client.get(url).json()["analyses"][0]
        if row["status"] in wanted:
            return row
        time.sleep(0.1)
    raise AssertionError(f"the analysis stayed {row.get('status')!r}")


def test_a_job_lost_with_a_killed_worker_is_made_by_the_next(
    sqlite_url: str, tmp_path: Path
) -> None:
    """``nard worker`` as its own process: the job queued while no worker runs is
    taken once one starts; that worker killed mid-analysis (SIGKILL, nothing cleaned
    up), the next worker reclaims the job and makes it."""
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as client:
        headers = guest(client)
        table = play_until(client, new_table(client, headers, match_length=3), headers)
        url = f"/api/tables/{table['id']}/analyses"
        assert client.post(url, json={"plies": 2}, headers=headers).status_code == 202
        where = queue_for(make_settings(sqlite_url, tmp_path))
        first = _worker(where)
        try:
            running = _wait_for(client, url, {"running", "done"})
            assert running["status"] == "running"
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=30)
        assert client.get(url).json()["analyses"][0]["status"] == "running"  # left behind
        second = _worker(where, "--stale-after", "2")
        try:
            done = _wait_for(client, url, {"done", "failed"})
            assert done["status"] == "done", done["error"]
            assert done["result"]["plies"] == 2
        finally:
            os.killpg(second.pid, signal.SIGTERM)
            second.wait(timeout=30)
    storage.close()


@pytest.mark.parametrize("plies", [0])
def test_the_queue_survives_the_web_process(sqlite_url: str, tmp_path: Path, plies: int) -> None:
    """The queue is durable: a job queued by one app is there for a worker after the
    app has gone."""
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as client:
        headers = guest(client)
        table = _finished(client, headers)
        client.post(f"/api/tables/{table['id']}/analyses", json={"plies": plies}, headers=headers)
    storage.close()
    queue = AnalysisQueue(queue_for(make_settings(sqlite_url, tmp_path)))
    assert queue.pending() == 1 and queue.run_one()
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as client:
        rows = client.get(f"/api/tables/{table['id']}/analyses").json()["analyses"]
        assert rows[0]["status"] == "done"
    storage.close()


def test_nard_serve_runs_a_worker_of_its_own_and_takes_it_down(tmp_path: Path) -> None:
    """With the embedded defaults (SQLite, no Redis) ``nard serve`` runs one analysis
    worker itself: an analysis asked of the page is made with nothing else running;
    the server killed, its worker goes too."""
    import httpx2 as httpx

    from tests.server.servers import ServerProcess

    env = {"NARD_DATA_DIR": str(tmp_path), "NARD_ENGINE_PROCESSES": "0", "NARD_LIMITS": ""}
    with ServerProcess(env, tmp_path / "server.log") as server:
        server.start()
        with httpx.Client(base_url=server.url, timeout=30) as http:
            answer = http.post("/api/guest", json={"name": "ann"})
            headers = {"X-CSRF-Token": answer.json()["csrf_token"]}
            body = {"opponent": "computer", "level": "expert", "match_length": 1}
            table = http.post("/api/tables", json=body, headers=headers).json()
            table = http.post(
                f"/api/tables/{table['id']}/seed", json={"contribution": "x"}, headers=headers
            ).json()
            while table["status"] == "playing" and table["to_act"] == table["you"]:
                from tests.server.helpers import simple_command

                table = http.post(
                    f"/api/tables/{table['id']}/actions",
                    json=simple_command(table),
                    headers=headers,
                ).json()
            url = f"/api/tables/{table['id']}/analyses"
            assert http.post(url, json={"plies": 0}, headers=headers).status_code == 202
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                row = http.get(url).json()["analyses"][0]
                if row["status"] in ("done", "failed"):
                    break
                time.sleep(0.2)
            assert row["status"] == "done", server.log_tail()
        assert server.kill() == []  # no worker left behind


def test_with_redis_the_jobs_wait_in_redis(redis_url: str, sqlite_url: str, tmp_path: Path) -> None:
    """Several server processes share Redis: their analysis jobs wait there, for any
    worker that reaches it."""
    settings = make_settings(sqlite_url, tmp_path, redis_url=redis_url)
    where = queue_for(settings)
    producer = AnalysisQueue(where)
    producer.huey.flush()
    app, storage = app_on(sqlite_url, tmp_path)
    with TestClient(app) as client:
        headers = guest(client)
        table = _finished(client, headers)
    row = storage.queue_analysis(table["id"], 0, None, '{"bad": 1}')
    producer.enqueue(row.id, '{"bad": 1}', 0)
    assert producer.pending() == 1
    assert AnalysisQueue(where).run_one()  # another process's queue on the same Redis
    made = storage.analysis(row.id)
    assert made is not None and made.status == "failed"  # made, and its fault kept
    storage.close()


def test_a_rollout_of_the_decision_at_hand_is_a_job_too(client: TestClient) -> None:
    """The hint's "Roll out": the seat to act's roll (or cube) rolled out by a worker;
    the web process only queues it."""
    headers = guest(client)
    table = new_table(client, headers, match_length=3)
    table = play_until(client, table, headers, actions=0)
    while table["game"]["decision"] != "play":  # roll, or the computer's turn
        from tests.server.helpers import act, simple_command

        table = act(client, table["id"], headers, simple_command(table))
    url = f"/api/tables/{table['id']}/rollouts"
    response = client.post(url, json={"trials": 36}, headers=headers)
    assert response.status_code == 202, response.text
    assert _queue(client).pending() == 1
    assert client.get(url).json()["rollouts"][0]["status"] == "queued"
    assert _queue(client).run_one()
    row = client.get(url).json()["rollouts"][0]
    assert row["status"] == "done", row["error"]
    assert sorted(row["request"]["dice"]) == sorted(table["game"]["dice"])
    result = row["result"]
    assert result["kind"] == "plays" and result["trials"] == 36
    legal = {p["play"] for p in table["game"]["legal_plays"]}
    assert {c["name"] for c in result["candidates"]} <= legal
    # not a match analysis: the analysis list stays empty
    assert client.get(f"/api/tables/{table['id']}/analyses").json() == {"analyses": []}
    assert result["cubeful_trials"] is False and (result["truncate"], result["seed"]) == (11, 1)
    assert client.post(url, json={"trials": 10}, headers=headers).status_code == 422
    for bad in (
        {"trials": "36"},
        {"truncate": 0},
        {"truncate": 26},
        {"cubeful": "yes"},
        {"seed": -1},
        {"plies": 2},
    ):
        assert client.post(url, json=bad, headers=headers).status_code == 422, bad
    # the player's settings: cubeful trials, their length and seed (the page's options)
    asked = {"trials": 36, "truncate": 3, "cubeful": True, "seed": 7}
    assert client.post(url, json=asked, headers=headers).status_code == 202
    assert _queue(client).run_one()
    row = client.get(url).json()["rollouts"][0]
    assert row["status"] == "done", row["error"]
    made = row["result"]
    assert made["cubeful_trials"] is True and (made["truncate"], made["seed"]) == (3, 7)
    assert all(c["probabilities"] is None for c in made["candidates"])
    other = TestClient(client.app)
    guest(other, "bob")
    assert other.get(url).json() == {"rollouts": []}  # one's own rollouts only


def test_on_postgresql_the_jobs_wait_in_the_database(postgres_url: str, tmp_path: Path) -> None:
    """A PostgreSQL deployment without Redis queues its jobs in its own database (Huey's
    SQL storage in the schema ``nard_queue``), not in an SQLite file of one machine: a
    worker given nothing but the database URL takes them. The queue's connection
    dropped by the server (as a restart does), the web process still queues and the
    worker still takes jobs."""
    from sqlalchemy import create_engine, text

    settings = make_settings(postgres_url, tmp_path)
    where = queue_for(settings)
    assert where.queue_path is None and where.place.startswith("the database")
    app, storage = app_on(postgres_url, tmp_path)
    admin = create_engine(postgres_url, isolation_level="AUTOCOMMIT")
    worker = _worker(where)
    assert "--queue-path" not in worker_command(where)
    try:
        with TestClient(app) as client:
            headers = guest(client)
            table = _finished(client, headers)
            url = f"/api/tables/{table['id']}/analyses"
            assert client.post(url, json={"plies": 0}, headers=headers).status_code == 202
            assert _wait_for(client, url, {"done", "failed"})["status"] == "done"
            with admin.connect() as conn:
                tables = conn.execute(
                    text(
                        "SELECT table_name FROM information_schema.tables "
                        "WHERE table_schema = 'nard_queue'"
                    )
                ).scalars()
                assert {"task", "kv", "schedule", "counter"} <= set(tables)
                dropped = (
                    conn.execute(
                        text(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                        )
                    )
                    .scalars()
                    .all()
                )
            assert dropped  # the web process's and the worker's connections
            assert client.post(url, json={"plies": 1}, headers=headers).status_code == 202
            row = _wait_for(client, url, {"done", "failed"})
            assert row["status"] == "done" and row["plies"] == 1, row["error"]
        assert not (tmp_path / "queue.db").exists()
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)
        admin.dispose()
        storage.close()
