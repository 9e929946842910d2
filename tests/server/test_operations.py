"""Running the server: security headers on every answer, the API document's errors,
liveness and readiness, request ids and the access log, metrics, and ``nard serve``'s
settings. The review found pages without a Content-Security-Policy (or one allowing
inline scripts), no readiness probe that noticed a lost database, logs that could not
be tied to a request, settings that ``nard serve --help`` did not show, and a bad
setting answered with a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import OperationalError

import nard.server.logs
from nard import __version__
from nard.cli.main import main
from nard.server import create_app
from nard.server.logs import JsonFormatter
from nard.server.settings import SETTINGS, Settings
from nard.server.storage import Storage, schema_revisions
from tests.server.conftest import POSTGRES, app_on, make_settings, seeded
from tests.server.helpers import eventually, guest, new_table, play_until

REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def policy(header: str) -> dict[str, list[str]]:
    """A Content-Security-Policy's directives and their sources."""
    directives: dict[str, list[str]] = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            directives[words[0].lower()] = words[1:]
    return directives


def check_security_headers(response: Any, *, inline_scripts: bool = False) -> None:
    where = f"{response.request.method} {response.request.url.path} ({response.status_code})"
    headers = response.headers
    assert "content-security-policy" in headers, where
    csp = policy(headers["content-security-policy"])
    scripts = csp.get("script-src", csp.get("default-src"))
    assert scripts is not None, where
    if not inline_scripts:
        assert "'unsafe-inline'" not in scripts, where
    assert csp.get("object-src") == ["'none'"] or "object-src" not in csp, where
    assert headers.get("x-content-type-options") == "nosniff", where
    framing = headers.get("x-frame-options", "").upper() == "DENY"
    assert framing or csp.get("frame-ancestors") == ["'none'"], where
    assert headers.get("referrer-policy"), where
    assert REQUEST_ID.fullmatch(headers.get("x-request-id", "")), where


# -- security headers and the API document --------------------------------------------


def test_every_answer_carries_the_security_headers(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, contribution=None)
    answers = [
        client.get("/"),
        client.get("/play/x"),
        client.get(f"/play/{table['id']}"),
        client.get("/verify"),
        client.get("/archive"),
        client.get("/api/me"),
        client.get(f"/api/tables/{table['id']}"),
        client.get("/static/app.js"),
        client.get("/api/tables/nosuchtable"),  # 404 from the API
        client.get("/no/such/page"),  # 404 from the router
        client.get("/static/nosuch.js"),  # 404 from the static files
        client.delete("/api/me"),  # 405
        client.post("/api/tables", json={"match_length": True}, headers=headers),  # 422
        client.post("/api/tables", content=b"x" * 20_000, headers=headers),  # 413
        client.post("/api/tables", json={}),  # 403
        client.get("/openapi.json"),
        client.get("/healthz"),
        client.get("/readyz"),
        client.get("/metrics"),
    ]
    assert {r.status_code for r in answers} >= {200, 403, 404, 405, 413, 422}
    for response in answers:
        check_security_headers(response)
    for page in ("/docs", "/redoc"):  # the documentation starts its scripts inline
        response = client.get(page)
        assert response.status_code == 200
        check_security_headers(response, inline_scripts=True)
        # ... and loads them from this server only (no CDN: it works offline).
        csp = policy(response.headers["content-security-policy"])
        assert not [s for v in csp.values() for s in v if s.startswith(("http:", "https:"))]
        sources = re.findall(r'(?:src|href)="([^"]+)"', response.text)
        assert sources and all(s.startswith("/") for s in sources), sources
        for source in sources:
            assert client.get(source).status_code == 200, source


def test_a_server_error_carries_the_headers_and_its_request_id(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unexpected exception is answered 500 by Starlette's outermost error layer:
    that answer too must carry the security headers and the request id that the log
    line about it names."""
    app, storage = app_on(sqlite_url, tmp_path)

    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("the review's injected failure")

    monkeypatch.setattr(storage, "open_tables", broken)
    with TestClient(app, raise_server_exceptions=False) as client:
        response = client.get("/api/tables", headers={"X-Request-ID": "boom-1"})
        assert response.status_code == 500
        assert "the review's injected failure" not in response.text
        assert response.headers.get("x-request-id") == "boom-1"
        check_security_headers(response)
    storage.close()


TABLE_ROUTES = [
    "/api/tables/{table_id}/actions",
    "/api/tables/{table_id}/join",
    "/api/tables/{table_id}/seed",
    "/api/tables/{table_id}/end",
    "/api/tables/{table_id}/next-game",
    "/api/tables/{table_id}/leave",
    "/api/tables/{table_id}/start",
]


def test_the_api_document_lists_every_error_answer(client: TestClient) -> None:
    """The review's generated client could not handle the refusals: the document did
    not list them. Every table-changing route lists its 4xx answers with the one error
    body (409s with the table beside it). Creating a table cannot meet a missing table
    or a table's state, so it has no 404 or 409."""
    doc = client.get("/openapi.json").json()
    schemas = doc["components"]["schemas"]
    assert set(schemas["ErrorBody"]["properties"]) == {"error"}
    assert "table" in schemas["ConflictBody"]["properties"]

    def check(path: str, codes: set[int]) -> None:
        responses = doc["paths"][path]["post"]["responses"]
        assert {int(c) for c in responses if c.startswith("4")} >= codes, path
        for code in codes:
            schema = responses[str(code)]["content"]["application/json"]["schema"]
            body = "ConflictBody" if code == 409 else "ErrorBody"
            assert schema == {"$ref": f"#/components/schemas/{body}"}, (path, code)

    for path in TABLE_ROUTES:
        check(path, {401, 403, 404, 409, 422, 429})
    check("/api/tables", {401, 403, 422, 429})
    # The request bodies are described too, and with them the 413.
    assert "413" in doc["paths"]["/api/tables/{table_id}/actions"]["post"]["responses"]


# -- liveness and readiness --------------------------------------------------------------


def test_liveness_and_readiness(client: TestClient) -> None:
    assert client.get("/healthz").status_code == 200
    assert client.get("/healthz").json()["status"] == "ok"
    eventually(lambda: client.get("/readyz").json()["engine"] == "warm")
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {
        "status": "ready",
        "version": __version__,
        "database": "ok",
        "migration": "current",
        "redis": None,
        "engine": "warm",
    }
    assert client.get("/healthz").json()["version"] == __version__


def test_not_ready_while_the_engine_warms_up(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 28: the first game after installing waited 18.8 s for the engine's kernels
    to compile, on the request. The server warms the engine at start-up and says it is
    not ready (503, ``starting``) until then, so no player is routed to it before."""
    from nard.server.service import TableService

    monkeypatch.setattr(TableService, "engine_warm", property(lambda self: False))
    answer = client.get("/readyz")
    assert answer.status_code == 503
    assert answer.json() == {
        "status": "starting",
        "version": __version__,
        "database": "ok",
        "migration": "current",
        "redis": None,
        "engine": "warming",
    }
    assert client.get("/healthz").status_code == 200  # alive, just not ready yet


def test_readiness_says_when_newer_code_has_migrated_the_database(
    database_url: str, tmp_path: Path
) -> None:
    """In a rolling upgrade the first new process migrates the database while the old
    ones still serve: each process says which version it runs (``/healthz``,
    ``/readyz``, ``nard_build_info``), and an old one that finds the schema at a
    revision it does not know says so and reports ``degraded`` (it still serves; it is
    due to be replaced), not ``ready``."""
    app, storage = app_on(database_url, tmp_path)
    head, _ = schema_revisions()
    with TestClient(app) as client:
        eventually(lambda: client.get("/readyz").json()["engine"] == "warm")
        assert client.get("/readyz").json()["migration"] == "current"
        metrics = client.get("/metrics").text
        assert f'nard_build_info{{schema="{head}",version="{__version__}"}} 1.0' in metrics
        with storage.engine.begin() as connection:
            connection.execute(text("UPDATE alembic_version SET version_num = '0099_future'"))
        answer = client.get("/readyz")
        assert answer.status_code == 200
        assert answer.json()["status"] == "degraded"
        assert answer.json()["migration"] == "ahead of this server: 0099_future"
        with storage.engine.begin() as connection:
            connection.execute(text(f"UPDATE alembic_version SET version_num = '{head}'"))
        assert client.get("/readyz").json()["status"] == "ready"
    storage.close()


def test_readiness_with_redis(sqlite_url: str, redis_url: str, tmp_path: Path) -> None:
    storage = Storage(sqlite_url)
    settings = replace(make_settings(sqlite_url, tmp_path), redis_url=redis_url)
    app = create_app(settings, storage, server_seeds=seeded(1))
    with TestClient(app) as client:
        eventually(lambda: client.get("/readyz").json()["redis"] == "up")
        eventually(lambda: client.get("/readyz").json()["engine"] == "warm")
        ready = client.get("/readyz")
        assert ready.status_code == 200
        assert ready.json() == {
            "status": "ready",
            "version": __version__,
            "database": "ok",
            "migration": "current",
            "redis": "up",
            "engine": "warm",
        }
    storage.close()


def test_readiness_fails_when_the_database_is_gone(
    postgres_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The review dropped the database under a running server: it stayed "ready"."""
    app, storage = app_on(postgres_url, tmp_path)
    with TestClient(app) as client:
        eventually(lambda: client.get("/readyz").status_code == 200)
        admin = create_engine(POSTGRES, isolation_level="AUTOCOMMIT")
        name = make_url(postgres_url).database
        with admin.connect() as connection:
            connection.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()
        answer = client.get("/readyz")
        assert answer.status_code == 503
        body = answer.json()
        assert body["status"] == "unavailable"
        assert body["database"].startswith("unreachable")
        assert client.get("/healthz").status_code == 200  # alive, just not ready
    storage.close()


def test_readiness_fails_when_the_database_does_not_answer(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def down(_self: Storage) -> None:
        raise OperationalError("SELECT 1", {}, ConnectionRefusedError("connection refused"))

    monkeypatch.setattr(Storage, "ping", down)
    answer = client.get("/readyz")
    assert answer.status_code == 503
    assert answer.json()["status"] == "unavailable"
    assert "connection refused" in answer.json()["database"]


# -- request ids and the access log ------------------------------------------------------


def test_request_ids_are_echoed_or_made(client: TestClient) -> None:
    given = "edge-7f3a.b_9"
    assert client.get("/api/me", headers={"X-Request-ID": given}).headers["x-request-id"] == given
    made = set()
    for bad in ("has spaces", "x" * 65, "<script>", "a/b", "", "a;b=c"):
        response = client.get("/api/me", headers={"X-Request-ID": bad})
        rid = response.headers["x-request-id"]
        assert rid != bad and REQUEST_ID.fullmatch(rid), (bad, rid)
        made.add(rid)
    assert len(made) == 6  # one of its own for each request
    assert client.get("/nowhere").headers["x-request-id"]


def test_one_structured_log_line_per_request(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="nard")
    caplog.handler.setFormatter(JsonFormatter())
    headers = guest(client)
    table = new_table(client, headers, contribution=None)
    caplog.clear()
    path = f"/api/tables/{table['id']}"
    assert client.get(path, headers={"X-Request-ID": "req-42"}).status_code == 200
    assert client.get("/nowhere", headers={"X-Request-ID": "req-43"}).status_code == 404
    lines = [json.loads(line) for line in caplog.text.splitlines() if line.strip()]
    mine = [line for line in lines if line.get("request_id") == "req-42" and "status" in line]
    assert len(mine) == 1, lines
    line = mine[0]
    assert line["method"] == "GET" and line["path"] == path and line["status"] == 200
    assert isinstance(line["ms"], int | float) and line["ms"] >= 0
    assert line["level"] == "info" and line["logger"].startswith("nard")
    missing = [line for line in lines if line.get("request_id") == "req-43" and "status" in line]
    assert len(missing) == 1 and missing[0]["status"] == 404


# -- metrics -------------------------------------------------------------------------------


def samples(exposition: str) -> dict[str, float]:
    """Prometheus text format: each sample (with its labels) and its value."""
    out = {}
    for line in exposition.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def test_metrics_after_a_few_actions(client: TestClient) -> None:
    headers = guest(client)
    table = new_table(client, headers, match_length=5)
    table = play_until(client, table, headers, actions=4)
    client.get("/no/such/page")
    with client.websocket_connect(f"/ws/tables/{table['id']}") as socket:
        assert socket.receive_json()["type"] == "table"
        text_ = client.get("/metrics").text
    found = samples(text_)
    actions = sum(
        v
        for k, v in found.items()
        if k.startswith("nard_http_requests_total{")
        and 'route="/api/tables/{table_id}/actions"' in k
        and 'method="POST"' in k
    )
    assert actions >= 1
    assert found["nard_actions_total"] == actions
    assert found["nard_computer_think_seconds_count"] >= 1
    assert found["nard_websockets"] == 1
    assert found["nard_engine_queue"] == 0
    assert found["nard_tables_cached"] >= 1
    # Routes are counted by their template: no table id and no made-up path as a label.
    assert table["id"] not in text_ and "/no/such/page" not in text_


# -- nard serve ------------------------------------------------------------------------------


def test_serve_help_lists_every_setting(capsys: pytest.CaptureFixture[str]) -> None:
    assert {s.name for s in SETTINGS} == {f.name for f in dataclasses.fields(Settings)}
    with pytest.raises(SystemExit) as done:
        main(["serve", "--help"])
    assert done.value.code == 0
    shown = capsys.readouterr().out
    for setting in SETTINGS:
        option = "--" + setting.name.replace("_", "-")
        assert re.search(rf"{re.escape(option)}\b", shown), option
        assert setting.env in shown, setting.env


@pytest.mark.parametrize(
    ("env", "options", "named"),
    [
        ({"NARD_PORT": "eighty"}, [], "NARD_PORT"),
        ({"NARD_LOG_FORMAT": "xml"}, [], "NARD_LOG_FORMAT"),
        ({"NARD_PORT": "0"}, [], "NARD_PORT"),
        ({"NARD_SECURE_COOKIES": "maybe"}, [], "NARD_SECURE_COOKIES"),
        ({"NARD_TABLE_CACHE": "-5"}, [], "NARD_TABLE_CACHE"),
        ({"NARD_LOG_LEVEL": "loud"}, [], "NARD_LOG_LEVEL"),
        ({}, ["--port", "eighty"], "NARD_PORT"),
        ({"NARD_LIMITS": "table=lots"}, [], "table"),
        ({"NARD_DATABASE_URL": "nosuchdb://x/y"}, [], "nosuchdb"),
        ({"NARD_DATABASE_URL": "postgresql+psycopg://nobody:secret@127.0.0.1:1/x"}, [], "x"),
    ],
)
def test_a_bad_setting_is_one_line_and_status_2(
    env: dict[str, str],
    options: list[str],
    named: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name in list(os.environ):
        if name.startswith("NARD_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("NARD_DATA_DIR", str(tmp_path))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    # Never serve, never reconfigure this process's logging.
    monkeypatch.setattr(nard.server.logs, "configure_logging", lambda *_args: None)

    def no_server(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("the server started despite a bad setting")

    monkeypatch.setattr("uvicorn.run", no_server)
    status = main(["serve", *options])
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nard: error: "), err
    assert named in lines[0] and "Traceback" not in err
    assert "secret" not in err  # a database password is never shown


def test_nard_serve_with_a_bad_setting_exits_2(tmp_path: Path) -> None:
    """The real command, in a process of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NARD_")}
    env.update(NARD_DATA_DIR=str(tmp_path), NARD_PORT="eighty")
    command = [sys.executable, "-c", "from nard.cli.main import entry_point; entry_point()"]
    done = subprocess.run(
        [*command, "serve"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "nard: error: NARD_PORT: 'eighty' is not a whole number"
    ]


def test_serve_loads_its_engine_before_serving_and_starts_without_a_network(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """``nard serve`` loads its own engine at start-up, before it freezes what start-up
    loaded (the first table against the computer used to load it on the event loop);
    without a network it still starts, saying why the computer cannot play."""
    import nard.engine.engine as engine_module
    import nard.server.thinking as thinking
    from nard.cli.serve import _load_engine
    from nard.engine import Level

    monkeypatch.setattr(thinking, "_ENGINES", {})
    _load_engine()
    assert Level.EXPERT in thinking._ENGINES

    monkeypatch.setattr(thinking, "_ENGINES", {})
    monkeypatch.setattr(engine_module, "DEFAULT_WEIGHTS", tmp_path / "missing.npz")
    with caplog.at_level(logging.WARNING, logger="nard.server"):
        _load_engine()
    assert not thinking._ENGINES
    assert any("the computer cannot play" in r.getMessage() for r in caplog.records)
