"""The web application: FastAPI routes and the WebSocket of live tables.

Routes only check who is asking, apply the abuse limits, validate, call
:class:`TableService` and serialize. Every refusal has one shape,
``{"error": {"code", "message"}}`` with a 4xx status (a 409 about a table's
state also carries the table as it now is, ``"table"``).

Sign-in is a random token in an HttpOnly, SameSite=Lax cookie (only its
SHA-256 is stored), replaced by a new one at every sign-in and registration.
Requests that change anything must carry the session's CSRF token in
``X-CSRF-Token`` (given by ``GET /api/me``), and any request with an
``Origin`` header from another site is refused, WebSockets included. A
WebSocket is bound to the session it was opened with and closed when that
session ends.

Every answer carries a request id (``X-Request-ID``), the security headers
(a Content-Security-Policy without inline scripts, ``nosniff``, no framing,
``Referrer-Policy``) and is counted in the metrics.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import re
import secrets
import time
from collections import Counter as Tally
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

import fastapi_offline
import orjson
from argon2 import PasswordHasher
from fastapi import Depends, FastAPI, Query, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocketState

from nard.match.clock import PRESETS, TimeControl, TimeControlError
from nard.notation.json_record import write_json
from nard.server.abuse import (
    LoginThrottle,
    RateLimited,
    RateLimits,
    address_key,
    policies_from_text,
    verify_password_async,
)
from nard.server.chouette import ChouetteTable
from nard.server.jobs import AnalysisQueue, queue_for, result_json
from nard.server.logs import request_id
from nard.server.metrics import VERSION, Metrics
from nard.server.models import PlayerRow
from nard.server.schemas import (
    ActionRequest,
    AnalysisRequest,
    ChallengeRequest,
    ChatRequest,
    ConflictBody,
    ContributionRequest,
    CredentialsRequest,
    EngineCubeRequest,
    EngineEvalRequest,
    EngineMoveRequest,
    ErrorBody,
    GuestRequest,
    Health,
    JoinRequest,
    LeaderboardEntry,
    Me,
    NewTableRequest,
    PasswordRequest,
    Profile,
    RatedMatch,
    RegistrationRequest,
    ReportRequest,
    RolloutRequest,
    SeatView,
    SeekRequest,
    TableSummary,
    TableView,
    TimeControlSpec,
    has_control_characters,
)
from nard.server.service import (
    AnyTable,
    NewTable,
    ServiceError,
    TableService,
    Watcher,
    sanction_text,
)
from nard.server.settings import Settings
from nard.server.storage import (
    SESSION_LIFETIME,
    Storage,
    StoredTable,
    UsernameTakenError,
    aware,
    schema_revisions,
)
from nard.server.tables import TableRules
from nard.server.usernames import InvalidUsernameError, canonical_username, check_username

__all__ = ["create_app"]

log = logging.getLogger("nard.server")

COOKIE = "nard_session"
RULE_FIELDS = {
    "match_length",
    "cube",
    "crawford",
    "holland",
    "jacoby",
    "beavers",
    "raccoons",
    "automatic_doubles",
    "backgammon",
}
"""The fields of a new table's request that are its rules."""
MAX_BODY = 16 * 1024
"""The largest request body accepted (a new table's settings are under 1 KB)."""
MAX_WS_MESSAGE = 4 * 1024

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
"""The page's Content-Security-Policy: its own scripts and styles only, none inline."""
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; worker-src blob:; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
"""The API documentation pages (Swagger UI and ReDoc, served from this server's own
copies) start their scripts inline: only those two pages allow it."""
DOCS_ASSETS = Path(fastapi_offline.__file__).parent / "static"
"""Swagger UI's and ReDoc's scripts and styles, as the ``fastapi-offline`` package
ships them: the documentation works with no network but this server's."""
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"permissions-policy", b"camera=(), microphone=(), geolocation=(), payment=()"),
]
_REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")

_hasher = PasswordHasher()

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "malformed request"},
    401: {"model": ErrorBody, "description": "not signed in"},
    403: {"model": ErrorBody, "description": "forbidden: CSRF token, origin, seat or invite"},
    404: {"model": ErrorBody, "description": "no such table"},
    409: {"model": ConflictBody, "description": "the table's state refuses it (with the table)"},
    413: {"model": ErrorBody, "description": "request body too large"},
    422: {"model": ErrorBody, "description": "invalid input"},
    429: {"model": ErrorBody, "description": "rate limited (Retry-After says when to retry)"},
    503: {"model": ErrorBody, "description": "the engine is busy at that level: ask again soon"},
}
"""Every error answer, for the OpenAPI document."""


def _allowed_methods(app: FastAPI, scope: Scope) -> str:
    """The methods the request's path takes, for a 405's ``Allow`` (RFC 9110 requires
    it): of every route of the path. Starlette's own named only the first route's, and
    a path served by one route for GET and another for POST was said to take one."""
    methods: set[str] = set()
    for route in app.router.routes:
        if isinstance(route, Route) and route.methods:
            match, _ = route.matches(scope)
            if match is not Match.NONE:
                methods |= route.methods
    return ", ".join(sorted(methods))


def _errors(*codes: int) -> dict[int | str, dict[str, Any]]:
    return {code: ERRORS[code] for code in codes}


def _error(status: int, code: str, message: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}, **extra}, status_code=status)


def _client_address(scope: Scope, trust_proxy: bool) -> str:
    """The client's address: the peer, or the first X-Forwarded-For hop behind a proxy."""
    if trust_proxy:
        for name, value in scope.get("headers", []):
            if name == b"x-forwarded-for":
                first = str(value.decode("latin-1")).split(",")[0].strip()
                if first:
                    return first[:64]
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


class _Frontdoor:
    """The outermost layer of every HTTP request: its request id, the security
    headers, the body limit (413 before the route reads it), the access log line
    and the metrics."""

    def __init__(self, app: ASGIApp, metrics: Metrics, trust_proxy: bool) -> None:
        self.app = app
        self.metrics = metrics
        self.trust_proxy = trust_proxy
        # Request ids: this process's prefix and a counter (unique, and cheap).
        self.prefix = secrets.token_hex(4)
        self.counter = itertools.count(1)
        # The metrics' children by (route template, method, status): labels() looks
        # them up by their text each time. Templates are the app's own, so few.
        self._counters: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    @staticmethod
    async def _too_large(scope: Scope, receive: Receive, send: Send) -> None:
        response = _error(413, "too_large", f"request bodies are at most {MAX_BODY} bytes")
        await response(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        incoming = next((v for k, v in scope.get("headers", []) if k == b"x-request-id"), b"")
        text = incoming.decode("latin-1")
        rid = text if _REQUEST_ID.fullmatch(text) else f"{self.prefix}-{next(self.counter)}"
        token = request_id.set(rid)
        started = time.perf_counter()
        status = 500
        path = scope.get("path", "")
        csp = DOCS_CSP if path in ("/docs", "/redoc") else CSP

        started_response = False

        async def send_with_headers(message: Message) -> None:
            nonlocal status, started_response
            if message["type"] == "http.response.start":
                started_response = True
                status = message["status"]
                headers = list(message.get("headers", []))
                headers += SECURITY_HEADERS
                headers.append((b"content-security-policy", csp.encode()))
                headers.append((b"x-request-id", rid.encode()))
                message = {**message, "headers": headers}
            await send(message)

        try:
            for name, value in scope.get("headers", []):
                if name == b"content-length" and (not value.isdigit() or int(value) > MAX_BODY):
                    await self._too_large(scope, receive, send_with_headers)
                    return
            # The body is read here, up to the limit, so that an oversized one sent
            # without a length is refused the same way (413) before any route sees it.
            body = b""
            more = True
            while more:
                message = await receive()
                if message["type"] != "http.request":
                    break  # the client went away
                body += message.get("body", b"")
                more = bool(message.get("more_body"))
                if len(body) > MAX_BODY:
                    await self._too_large(scope, receive, send_with_headers)
                    return
            replayed = False

            async def replay() -> Message:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await self.app(scope, replay, send_with_headers)
        except Exception:
            # A fault in the server: logged with its request id, answered 500 with
            # the same headers as any other answer (never the traceback).
            log.exception("unexpected error in %s %s", scope.get("method"), path)
            if started_response:
                raise
            status = 500
            response = _error(500, "server_error", f"unexpected server error (request {rid})")
            await response(scope, receive, send_with_headers)
        finally:
            elapsed = time.perf_counter() - started
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "")
            key = (template, method, status)
            counted = self._counters.get(key)
            if counted is None:
                counted = self._counters[key] = (
                    self.metrics.requests.labels(template, method, str(status)),
                    self.metrics.request_seconds.labels(template),
                )
            counted[0].inc()
            counted[1].observe(elapsed)
            if log.isEnabledFor(logging.INFO):
                log.info(
                    "%s %s %s",
                    method,
                    path,
                    status,
                    extra={
                        "method": method,
                        "path": path,
                        "status": status,
                        "ms": round(elapsed * 1000, 2),
                        "client": _client_address(scope, self.trust_proxy),
                    },
                )
            request_id.reset(token)


class _Auth:
    """The player behind a request (None for a visitor), their CSRF token, their
    cookie token and the client's address."""

    def __init__(
        self, player: PlayerRow | None, csrf: str | None, token: str | None, address: str
    ) -> None:
        self.player = player
        self.csrf = csrf
        self.token = token
        self.address = address


def _same_origin(request: Request) -> None:
    origin = request.headers.get("origin")
    if origin and urlsplit(origin).netloc != request.headers.get("host"):
        raise ServiceError(403, "cross_origin", f"requests from {origin!r} are refused")


class _SessionCache:
    """Sign-in sessions looked up recently: a request need not read the database to
    know who sends it. An entry lasts ``ttl`` seconds, and goes at once when its
    session ends, in this process or (through Redis) in another."""

    def __init__(
        self,
        store: Storage,
        ttl: float = 10.0,
        size: int = 10_000,
        trusted: Callable[[], bool] = lambda: True,
    ) -> None:
        self.store = store
        self.ttl = ttl
        self.size = size
        self.trusted = trusted
        """Whether the cache may be used: not while the news of sessions ended in other
        processes cannot arrive (Redis configured but down)."""
        self._entries: dict[str, tuple[float, tuple[PlayerRow, str] | None]] = {}

    def get(self, token: str | None) -> tuple[PlayerRow, str] | None:
        """The player and CSRF token of a cookie's token (None: no cookie, or one no
        session has)."""
        if not token or len(token) >= 200:
            return None
        key = Storage.token_hash(token)
        now = time.monotonic()
        cached = self._entries.get(key)
        if cached is not None and now - cached[0] < self.ttl and self.trusted():
            return cached[1]
        found = self.store.auth_session(token)
        if len(self._entries) >= self.size:
            self._entries.clear()
        self._entries[key] = (now, found)
        return found

    def forget(self, session: str) -> None:
        self._entries.pop(session, None)

    def clear(self) -> None:
        self._entries.clear()


async def _auth(request: Request) -> _Auth:
    app_state = request.app.state
    token = request.cookies.get(COOKIE)
    found = app_state.sessions.get(token)
    address = address_key(_client_address(request.scope, app_state.settings.trust_proxy))
    who = (
        _Auth(None, None, None, address)
        if found is None
        else _Auth(found[0], found[1], token, address)
    )
    request.state.player = who.player
    return who


Auth = Annotated[_Auth, Depends(_auth)]


async def _changing(request: Request, who: Auth) -> _Auth:
    """For requests that change something: same origin and the CSRF token."""
    _same_origin(request)
    if who.player is None:
        raise ServiceError(401, "not_signed_in", "play as a guest or sign in first")
    sent = request.headers.get("x-csrf-token", "")
    assert who.csrf is not None
    if not secrets.compare_digest(sent.encode(), who.csrf.encode()):
        raise ServiceError(403, "csrf", "missing or wrong X-CSRF-Token header")
    return who


Changing = Annotated[_Auth, Depends(_changing)]
Seq = Annotated[
    int | None,
    Query(
        ge=0,
        description="the table's sequence number the caller saw: refused with 409 "
        "`stale` (and the fresh table) if it has moved on",
    ),
]


def _telemetry() -> dict[str, Any]:
    """FastAPI's own OpenTelemetry (its ``telemetry`` option, where it has one): off
    unless an operator turns on its automatic configuration
    (``FASTAPI_OTEL_AUTO_CONFIGURE=true``). Without providers it records nothing,
    but its check of the providers on every request was 2.5% of the serving loop's
    time; nard's metrics are Prometheus's (``/metrics``)."""
    if os.environ.get("FASTAPI_OTEL_AUTO_CONFIGURE", "").lower() == "true":
        return {}
    return {"telemetry": {"tracing": False, "metrics": False, "logs": False}}


def create_app(
    settings: Settings | None = None,
    storage: Storage | None = None,
    *,
    server_seeds: Callable[[], bytes] | None = None,
    service_options: dict[str, Any] | None = None,
) -> FastAPI:
    """The application, on ``storage`` (default: the database of ``settings``).

    ``server_seeds`` makes the tables' secret dice seeds and ``service_options``
    are further keywords of :class:`TableService` (a clock, say), for tests.
    """
    settings = settings or Settings.from_env()
    owns_storage = storage is None
    store = storage or Storage(settings.database_url)
    store.migrate()
    metrics = Metrics()
    service = TableService(
        store,
        engine_workers=settings.engine_workers,
        engine_processes=settings.engine_processes,
        server_seeds=server_seeds,
        redis_url=settings.redis_url,
        contribution_timeout=settings.contribution_timeout,
        away_grace=settings.away_grace,
        computer_lease=settings.computer_lease,
        cache_size=settings.table_cache,
        idle_eviction=settings.table_idle,
        metrics=metrics,
        **(service_options or {}),
    )
    analysis_queue = AnalysisQueue(queue_for(settings))
    limits = RateLimits(settings.redis_url, policies_from_text(settings.limits))
    sessions = _SessionCache(store, trusted=lambda: settings.redis_url is None or service.redis_ok)
    service.session_listeners.append(sessions.forget)
    throttle = LoginThrottle(settings.redis_url)
    sockets_by_client: Tally[str] = Tally()

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await service.start()
        yield
        await service.stop()
        service.close()
        await limits.close()
        await throttle.close()
        if owns_storage:
            store.close()

    app = FastAPI(
        title="nard",
        summary="Backgammon against the computer and online, with provably fair dice.",
        version="0.2.0",
        lifespan=lifespan,
        responses=_errors(400, 413, 422),
        docs_url=None,  # served below from local files, not from a CDN
        redoc_url=None,
        **_telemetry(),
    )
    app.mount("/static/api-docs", StaticFiles(directory=DOCS_ASSETS), name="api-docs")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title="nard API",
            swagger_js_url="/static/api-docs/swagger-ui-bundle.js",
            swagger_css_url="/static/api-docs/swagger-ui.css",
            swagger_favicon_url="/static/favicon.svg",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url="/openapi.json",
            title="nard API",
            redoc_js_url="/static/api-docs/redoc.standalone.js",
            redoc_favicon_url="/static/favicon.svg",
            with_google_fonts=False,
        )

    app.state.service = service
    app.state.storage = store
    app.state.settings = settings
    app.state.limits = limits
    app.state.sessions = sessions
    app.state.metrics = metrics
    app.state.analysis_queue = analysis_queue
    app.add_middleware(_Frontdoor, metrics=metrics, trust_proxy=settings.trust_proxy)

    # -- errors ------------------------------------------------------------------
    @app.exception_handler(ServiceError)
    async def service_error(request: Request, exc: ServiceError) -> JSONResponse:
        extra: dict[str, Any] = {}
        if exc.table is not None:
            extra["table"] = service.render(exc.table, getattr(request.state, "player", None))
        response = _error(exc.status, exc.code, exc.message, **extra)
        if exc.retry_after is not None:
            response.headers["Retry-After"] = str(exc.retry_after)
        return response

    @app.exception_handler(RateLimited)
    async def rate_limited(_request: Request, exc: RateLimited) -> JSONResponse:
        metrics.rate_limited.labels(exc.policy).inc()
        response = _error(429, "rate_limited", str(exc))
        response.headers["Retry-After"] = str(exc.retry_after_seconds)
        return response

    @app.exception_handler(RequestValidationError)
    async def validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            message = str(err.get("msg", "invalid"))
            if err.get("type") == "extra_forbidden" and where == "client_seed":
                message = (
                    "the client seed is no longer chosen here: after the table is created, "
                    "send your contribution to the dice with POST /api/tables/{id}/seed"
                )
            parts.append(f"{where or 'body'}: {message}")
        return _error(422, "invalid_request", "; ".join(parts) or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        response = _error(exc.status_code, code, str(exc.detail))
        response.headers.update(exc.headers or {})
        if exc.status_code == 405:
            response.headers["Allow"] = _allowed_methods(app, request.scope)
        return response

    def start_session(response: Response, player: PlayerRow) -> Me:
        token, csrf = store.new_auth_session(player.id)
        response.set_cookie(
            COOKIE,
            token,
            httponly=True,
            samesite="lax",
            secure=settings.secure_cookies,
            max_age=int(SESSION_LIFETIME.total_seconds()),
        )
        return Me(
            id=player.id,
            name=player.display_name,
            guest=player.username is None,
            csrf_token=csrf,
            username=player.username,
        )

    async def end_session(token: str | None) -> None:
        """Sign out ``token``'s session (the session id changes at every sign-in) and
        close its sockets."""
        if token:
            await service.end_session(store.end_auth_session(token))

    # -- operations ------------------------------------------------------------------
    @app.get("/healthz", response_model=Health, tags=["operations"])
    async def healthz() -> Health:
        """Liveness: the process answers (and says which version it runs)."""
        return Health(status="ok", version=VERSION)

    @app.get("/api/health", response_model=Health, include_in_schema=False)
    async def health() -> Health:
        return Health(status="ok", version=VERSION)

    @app.get(
        "/readyz",
        response_model=Health,
        tags=["operations"],
        responses={503: {"model": Health, "description": "not ready"}},
    )
    async def readyz() -> Response:
        """Readiness: the database answers and the computer's engine is warm (``starting``,
        503, while its kernels load or compile); with Redis, whether its subscription is
        up (while it is down the process still serves correct state, polling the
        database: ``degraded``); and whether the database's schema is this code's
        (``degraded`` where newer code has migrated it, as in a rolling upgrade: the
        process still serves, and says it is due to be replaced)."""
        migration: str | None = None
        try:
            revision = await asyncio.to_thread(store.ping)
            database = "ok"
            head, known = schema_revisions()
            if revision == head:
                migration = "current"
            elif revision is None or revision in known:
                migration = f"behind this server: {revision or 'never migrated'}"
            else:
                migration = f"ahead of this server: {revision}"
        except Exception as exc:  # any driver error: report it, never raise
            database = f"unreachable: {str(exc).splitlines()[0][:200]}"
        redis = None if settings.redis_url is None else ("up" if service.redis_ok else "down")
        engine = "warm" if service.engine_warm else "warming"
        if database != "ok" or service.stopping:
            status = "unavailable"
        elif engine == "warming":
            status = "starting"
        elif redis == "down" or migration != "current":
            status = "degraded"
        else:
            status = "ready"
        body = Health(
            status=status,  # type: ignore[arg-type]
            version=VERSION,
            database=database,
            migration=migration,
            redis=redis,
            engine=engine,  # type: ignore[arg-type]
        )
        code = 503 if status in ("unavailable", "starting") else 200
        return JSONResponse(body.model_dump(), status_code=code)

    if settings.metrics:

        @app.get("/metrics", include_in_schema=False)
        async def prometheus() -> Response:
            return Response(metrics.exposition(), media_type="text/plain; version=0.0.4")

    # -- players -------------------------------------------------------------------
    @app.get("/api/me", response_model=Me | None)
    async def me(who: Auth) -> Me | None:
        if who.player is None or who.csrf is None:
            return None
        p = who.player
        return Me(
            id=p.id,
            name=p.display_name,
            guest=p.username is None,
            csrf_token=who.csrf,
            username=p.username,
        )

    @app.post("/api/guest", response_model=Me, responses=_errors(403, 429))
    async def guest(body: GuestRequest, request: Request, response: Response, who: Auth) -> Me:
        _same_origin(request)
        await limits.hit("guest", f"address:{who.address}")
        name = body.name or f"Guest {secrets.randbelow(9000) + 1000}"
        await end_session(who.token)
        return start_session(response, store.create_player(name))

    @app.post("/api/register", response_model=Me, responses=_errors(403, 409, 429))
    async def register(
        body: RegistrationRequest, request: Request, response: Response, who: Auth
    ) -> Me:
        """An account (a guest who registers keeps their games); the session id changes."""
        _same_origin(request)
        try:
            username = check_username(body.username)
        except InvalidUsernameError as exc:
            raise ServiceError(422, "invalid_username", str(exc)) from None
        await limits.hit("register", f"address:{who.address}")
        key = canonical_username(username)
        hashed = await asyncio.to_thread(_hasher.hash, body.password)
        try:
            if who.player is not None and who.player.username is None:
                player = store.upgrade_guest(who.player.id, username, hashed, username_key=key)
            else:
                player = store.create_player(username, username, hashed, username_key=key)
        except UsernameTakenError:
            raise ServiceError(
                409, "username_taken", f"the username {username!r} (or one like it) is taken"
            ) from None
        await end_session(who.token)
        return start_session(response, player)

    @app.post("/api/login", response_model=Me, responses=_errors(401, 403, 429))
    async def login(
        body: CredentialsRequest, request: Request, response: Response, who: Auth
    ) -> Me:
        """Sign in. Wrong passwords back off per account and client address and per
        address; unknown and known names take the same work. The session id changes.
        A guest who signs in keeps their tables: their seats pass to the account."""
        _same_origin(request)
        await limits.hit("login", f"address:{who.address}")
        await throttle.check(body.username, who.address)
        player = store.player_by_username(body.username)
        ok = await verify_password_async(player.password_hash if player else None, body.password)
        if not ok or player is None:
            await throttle.failed(body.username, who.address)
            raise ServiceError(401, "bad_credentials", "wrong username or password")
        await throttle.succeeded(body.username, who.address)
        suspended = store.sanction_in_force(player.id, "suspend", service.clock())
        if suspended is not None:
            raise ServiceError(
                403, "suspended", sanction_text("this account may not sign in", suspended)
            )
        if who.player is not None and who.player.username is None and who.player.id != player.id:
            # A guest signing in keeps their games: they pass to the account.
            await service.claim_tables(who.player, player)
        await end_session(who.token)
        return start_session(response, player)

    @app.post("/api/password", status_code=204, responses=_errors(401, 403))
    async def change_password(body: PasswordRequest, who: Changing) -> Response:
        """A new password (the current one first); every other session is signed out."""
        assert who.player is not None and who.token is not None
        player = store.player(who.player.id)  # as stored now, not as cached
        assert player is not None
        if not await verify_password_async(player.password_hash, body.current):
            raise ServiceError(403, "bad_credentials", "the current password is wrong")
        store.set_password(player.id, await asyncio.to_thread(_hasher.hash, body.new))
        for ended in store.end_other_sessions(player.id, who.token):
            await service.end_session(ended)
        return Response(status_code=204)

    @app.post("/api/logout", status_code=204, responses=_errors(401, 403))
    async def logout(who: Changing) -> Response:
        """Sign out: the session ends and its WebSockets close."""
        await end_session(who.token)
        response = Response(status_code=204)
        response.delete_cookie(COOKIE)
        return response

    # -- tables --------------------------------------------------------------------
    def table_response(table: AnyTable, player: PlayerRow | None, status: int = 200) -> Response:
        return Response(
            orjson.dumps(service.render(table, player)),
            status_code=status,
            media_type="application/json",
        )

    def summary(stored: StoredTable) -> TableSummary:
        row = stored.row
        return TableSummary(
            id=row.id,
            status=row.status,
            seats=[
                SeatView(
                    name=s.name,
                    kind="computer" if s.level else "person" if s.player_id else "open",
                    level=s.level,
                )
                for s in stored.seats
            ],
            match_length=int(row.settings.get("match_length", 0)),
            created_at=row.created_at.isoformat(),
            rated=bool(row.rated),
            time_control=row.settings.get("time_control"),
            seek=row.settings.get("seek"),
            rematch_of=row.rematch_of,
        )

    async def acting(who: _Auth, policy: str = "action") -> PlayerRow:
        """The player, counted against ``policy``: per player, and for table creation
        also per address (actions and hints are a player's own pace)."""
        assert who.player is not None
        keys = [f"player:{who.player.id}"]
        if policy == "table":
            keys.append(f"address:{who.address}")
        await limits.hit(policy, *keys)
        return who.player

    @app.post(
        "/api/tables",
        response_model=TableView,
        status_code=201,
        responses=_errors(401, 403, 429),
    )
    async def new_table(body: NewTableRequest, who: Changing) -> Response:
        """A new table, committed to its dice: each seated person then sends their
        contribution (``/seed``); the first roll follows the last one."""
        player = await acting(who, "table")
        table = await service.create(player, table_spec(body))
        return table_response(table, player, 201)

    def table_spec(body: NewTableRequest) -> NewTable:
        try:
            rules = TableRules(**body.model_dump(include=RULE_FIELDS))
        except ValueError as exc:
            raise ServiceError(422, "invalid_rules", str(exc)) from None
        chouette = body.opponent == "chouette"
        return NewTable(
            rules=rules,
            level=body.level if body.opponent == "computer" or chouette else None,
            seat=body.seat,
            public=body.public,
            chouette=body.players if chouette else 0,
            computers=body.computers if chouette else 0,
            rated=body.rated,
            time_control=_time_control(body.time_control),
        )

    @app.get("/api/tables", response_model=list[TableSummary])
    async def lobby() -> list[TableSummary]:
        """The lobby: open tables and seeks, each with its host's rating."""
        return with_ratings(store.open_tables(service.clock()))

    def with_ratings(tables: list[StoredTable]) -> list[TableSummary]:
        ratings = store.ratings_of([t.row.creator_id for t in tables])
        return [
            summary(t).model_copy(update={"host_rating": ratings.get(t.row.creator_id)})
            for t in tables
        ]

    @app.get("/api/live", response_model=list[TableSummary])
    async def live_tables() -> list[TableSummary]:
        """Tables in play that anyone may watch: lobby tables and rated matches."""
        return with_ratings(store.live_tables())

    # -- matchmaking --------------------------------------------------------------------
    @app.post(
        "/api/seeks",
        response_model=TableView,
        status_code=201,
        responses=_errors(401, 403, 422, 429),
    )
    async def seek(body: SeekRequest, who: Changing) -> Response:
        """Find an opponent: the oldest open seek this one fits is joined at once (the
        table is then in play), or this seek waits in the lobby (docs/server.md)."""
        player = await acting(who, "table")
        low, high = body.min_rating, body.max_rating
        if low is not None and high is not None and low > high:
            raise ServiceError(422, "invalid_seek", "min_rating is above max_rating")
        table = await service.seek(
            player,
            TableRules(match_length=body.match_length),
            rated=body.rated,
            time_control=_time_control(body.time_control),
            min_rating=body.min_rating,
            max_rating=body.max_rating,
        )
        return table_response(table, player, 201)

    @app.post(
        "/api/challenges",
        response_model=TableView,
        status_code=201,
        responses=_errors(401, 403, 404, 422, 429),
    )
    async def challenge(body: ChallengeRequest, who: Changing) -> Response:
        """Challenge an account by name to a private table; they see it among their
        challenges (``GET /api/challenges``) and join it or decline."""
        player = await acting(who, "table")
        if body.opponent != "person":
            raise ServiceError(422, "invalid_challenge", "a challenge is to a person")
        spec = table_spec(body)
        table = await service.challenge(player, body.username, spec)
        return table_response(table, player, 201)

    @app.get("/api/challenges", response_model=list[TableSummary])
    async def challenges(who: Auth) -> list[TableSummary]:
        """The tables that challenge the caller (rematches included), newest first."""
        if who.player is None:
            return []
        return with_ratings(service.challenges(who.player))

    @app.post(
        "/api/tables/{table_id}/decline",
        response_model=TableView,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def decline(table_id: str, who: Changing) -> Response:
        """Say no to a challenge: the table ends unplayed."""
        player = await acting(who)
        return table_response(await service.decline(_check_id(table_id), player), player)

    @app.post(
        "/api/tables/{table_id}/rematch",
        response_model=TableView,
        status_code=201,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def rematch(table_id: str, who: Changing) -> Response:
        """The same match again: against the computer a new table; against a person,
        the rematch they offered is joined, or one is offered to them."""
        player = await acting(who, "table")
        table = await service.rematch(_check_id(table_id), player)
        return table_response(table, player, 201)

    @app.get("/api/my-tables", response_model=list[TableSummary])
    async def my_tables(who: Auth) -> list[TableSummary]:
        if who.player is None:
            return []
        tables = store.tables_of(who.player.id)
        analysed = store.analysed_tables([t.row.id for t in tables])
        return [summary(t).model_copy(update={"analysed": analysed.get(t.row.id)}) for t in tables]

    # -- players: profiles and ratings ------------------------------------------------
    def _player_called(username: str) -> PlayerRow:
        """The account named ``username`` in a path, else 404. A name with a control
        character is no username (registration refuses them) and is not looked up:
        PostgreSQL refuses a NUL in text with an error."""
        found = (
            store.player_by_username(username[:64])
            if username and not has_control_characters(username)
            else None
        )
        if found is None:
            raise ServiceError(404, "no_such_player", f"no player is called {username[:64]!r}")
        return found

    @app.get("/api/players/{username}", response_model=Profile, responses=_errors(404))
    async def profile(username: str) -> Profile:
        """An account's profile: rating and its history, results, analyses' average."""
        found = _player_called(username)
        history = store.rating_history(found.id)
        tables = store.tables_of(found.id, limit=20)
        rates = store.error_rates_of(found.id)
        return Profile(
            name=found.display_name,
            username=found.username,
            rating=round(float(found.rating), 2),
            experience=int(found.experience),
            rated_matches=int(found.rated_matches),
            rated_wins=sum(1 for h in history if h.won),
            rank=store.rank_of(found.id),
            matches_finished=store.count_finished(found.id),
            average_error_rate=round(sum(rates) / len(rates), 2) if rates else None,
            analysed_matches=len(rates),
            history=[
                RatedMatch(
                    table_id=h.table_id,
                    at=_iso(h.created_at),
                    won=h.won,
                    match_length=h.match_length,
                    opponent=h.opponent_name,
                    opponent_rating=round(h.opponent_rating, 2),
                    rating_before=round(h.rating_before, 2),
                    rating_after=round(h.rating_after, 2),
                )
                for h in history
            ],
            recent=[summary(t) for t in tables],
            since=_iso(found.created_at),
        )

    @app.get("/api/leaderboard", response_model=list[LeaderboardEntry])
    async def leaderboard(
        offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
        limit: Annotated[int, Query(ge=1, le=100)] = 50,
    ) -> list[LeaderboardEntry]:
        """Accounts with a rated match, best rating first."""
        return [
            LeaderboardEntry(
                rank=offset + n + 1,
                name=p.display_name,
                username=p.username or "",
                rating=round(float(p.rating), 2),
                experience=int(p.experience),
                rated_matches=int(p.rated_matches),
            )
            for n, p in enumerate(store.leaderboard(limit, offset))
        ]

    # -- analyses ---------------------------------------------------------------------
    @app.post(
        "/api/tables/{table_id}/analyses",
        status_code=202,
        responses={
            200: {"description": "an analysis as deep or deeper, made or on its way"},
            **_errors(401, 403, 404, 409, 429),
        },
    )
    async def request_analysis(
        table_id: str, body: AnalysisRequest, who: Changing, response: Response
    ) -> dict[str, Any]:
        """Queue an analysis of the finished match at ``plies`` (docs/analysis.md); a
        worker process makes it. An analysis as deep or deeper already made or on its
        way is answered instead (200)."""
        if who.player is None:
            raise ServiceError(401, "not_signed_in", "play as a guest or sign in first")
        table = await service.get(_check_id(table_id))
        if table.status != "finished":
            raise ServiceError(409, "not_finished", "a match is analysed once it is finished")
        if isinstance(table, ChouetteTable):
            raise ServiceError(409, "no_chouette_analysis", "a chouette is not analysed")
        for row in store.analyses_of(table.id):
            if row.status in ("queued", "running", "done") and row.plies >= body.plies:
                response.status_code = 200
                return result_json(row)
        player = await acting(who, "analysis")
        match = table.record()
        if not any(game.actions for game in match.games):
            raise ServiceError(
                409, "nothing_to_analyse", "the match ended before any move: nothing to analyse"
            )
        record = write_json(match)
        row = store.queue_analysis(table.id, body.plies, player.id, record)
        analysis_queue.enqueue(row.id, record, body.plies)
        return result_json(row)

    @app.post(
        "/api/tables/{table_id}/rollouts",
        status_code=202,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def request_rollout(table_id: str, body: RolloutRequest, who: Changing) -> dict[str, Any]:
        """Queue a rollout of the caller's decision (the plays of its roll, or the cube
        before it rolls) at a table against the computer; a worker makes it."""
        if who.player is None:
            raise ServiceError(401, "not_signed_in", "play as a guest or sign in first")
        player = await acting(who, "analysis")
        table_id = _check_id(table_id)
        payload = await service.rollout_request(
            table_id,
            player,
            trials=body.trials,
            truncate=body.truncate,
            cubeful=body.cubeful,
            seed=body.seed,
        )
        row = store.queue_analysis(table_id, 0, player.id, payload, kind="rollout")
        analysis_queue.enqueue(row.id, payload, 0, "rollout")
        return result_json(row)

    @app.get("/api/tables/{table_id}/rollouts", responses=_errors(404))
    async def rollouts(table_id: str, who: Auth) -> dict[str, Any]:
        """The caller's rollouts at this table, newest first."""
        table = await service.get(_check_id(table_id))
        if who.player is None:
            return {"rollouts": []}
        rows = store.analyses_of(table.id, "rollout", who.player.id)
        return {
            "rollouts": [
                result_json(row) | {"request": json.loads(row.record or "null")} for row in rows
            ]
        }

    @app.get("/api/tables/{table_id}/analyses", responses=_errors(404))
    async def analyses(table_id: str) -> dict[str, Any]:
        """The match's analyses, newest first: status, progress, and once done the
        analysis with each decision's board and better play."""
        table = await service.get(_check_id(table_id))
        return {"analyses": [result_json(row) for row in store.analyses_of(table.id)]}

    @app.get("/api/tables/{table_id}", response_model=TableView, responses=_errors(404))
    async def get_table(table_id: str, who: Auth) -> Response:
        """The table as the caller sees it (if the computer is to act, after it has)."""
        return table_response(await service.get(_check_id(table_id)), who.player)

    @app.post(
        "/api/tables/{table_id}/join",
        response_model=TableView,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def join(table_id: str, body: JoinRequest, who: Changing, seq: Seq = None) -> Response:
        """Sit in the open seat (``invite`` unless public), with one's contribution to the
        dice if given at once."""
        player = await acting(who)
        table = await service.join(_check_id(table_id), player, body.invite, body.contribution, seq)
        return table_response(table, player)

    @app.post(
        "/api/tables/{table_id}/leave",
        response_model=TableView,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def leave(table_id: str, who: Changing, seq: Seq = None) -> Response:
        """Give up one's seat before the first roll."""
        player = await acting(who)
        return table_response(await service.leave(_check_id(table_id), player, seq), player)

    @app.post(
        "/api/tables/{table_id}/seed",
        response_model=TableView,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def seed(
        table_id: str, body: ContributionRequest, who: Changing, seq: Seq = None
    ) -> Response:
        """The caller's contribution to the table's dice, after seeing its commitment."""
        player = await acting(who)
        table = await service.contribute(_check_id(table_id), player, body.contribution, seq)
        return table_response(table, player)

    @app.post(
        "/api/tables/{table_id}/start",
        response_model=TableView,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def start(table_id: str, who: Changing, seq: Seq = None) -> Response:
        """Start without the contributions that did not come before the deadline (they
        are recorded as timed out)."""
        player = await acting(who)
        return table_response(await service.start_table(_check_id(table_id), player, seq), player)

    @app.post(
        "/api/tables/{table_id}/actions",
        response_model=TableView,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def act(table_id: str, body: ActionRequest, who: Changing) -> Response:
        """One action in the caller's seat; the computer's answer follows in the reply."""
        player = await acting(who)
        data = body.model_dump(exclude={"seq"}, exclude_none=True)
        table = await service.act(_check_id(table_id), player, data, body.seq)
        return table_response(table, player)

    async def act_lean(request: Request) -> Response:
        """:func:`act` as served: the same checks in the same order (session, origin,
        CSRF, then the body against :class:`ActionRequest`) and the same errors,
        without FastAPI's per-request work (solving the dependencies, reading the
        body twice over), which was a third of an action's time on the event loop.
        ``act`` stays the route the OpenAPI document describes."""
        request.scope["route"] = lean  # named in the metrics and logs by its template
        who = await _changing(request, await _auth(request))
        try:
            body = ActionRequest.model_validate_json(await request.body() or b"null")
        except ValidationError as exc:
            raise RequestValidationError(
                [{**error, "loc": ("body", *error["loc"])} for error in exc.errors()]
            ) from None
        return await act(request.path_params["table_id"], body, who)

    lean = Route("/api/tables/{table_id}/actions", act_lean, methods=["POST"])
    app.router.routes.insert(0, lean)

    @app.post(
        "/api/tables/{table_id}/next-game",
        response_model=TableView,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def next_game(table_id: str, who: Changing, seq: Seq = None) -> Response:
        player = await acting(who)
        return table_response(await service.next_game(_check_id(table_id), player, seq), player)

    @app.post(
        "/api/tables/{table_id}/end",
        response_model=TableView,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def end(table_id: str, who: Changing, seq: Seq = None) -> Response:
        """Stop a money session between games, or close a table that has not started."""
        player = await acting(who)
        return table_response(await service.end(_check_id(table_id), player, seq), player)

    @app.post(
        "/api/tables/{table_id}/abandon",
        response_model=TableView,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def abandon(table_id: str, who: Changing, seq: Seq = None) -> Response:
        """End a match (or session) against the computer unfinished, at any point: it
        stays in the records as abandoned, with no winner, its dice seed revealed."""
        player = await acting(who)
        return table_response(await service.abandon(_check_id(table_id), player, seq), player)

    @app.post(
        "/api/tables/{table_id}/flag",
        response_model=TableView,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def flag(table_id: str, who: Changing) -> Response:
        """Check the clocks (a page whose opponent's time is up asks): a player out of
        time loses now; otherwise nothing changes (docs/clocks.md)."""
        player = await acting(who)
        return table_response(await service.flag(_check_id(table_id), player), player)

    # -- the engine for programs (docs/engine-protocols.md) ---------------------------
    @app.post("/api/engine/move", responses=_errors(422, 429, 503), tags=["engine"])
    async def engine_move(body: EngineMoveRequest, who: Auth) -> dict[str, Any]:
        """The plays of a roll, best first, as the level ranks them: cubeful and
        match-aware at the ID's cube and score (EMG in match play), with the plies."""
        await limits.hit("engine", f"address:{who.address}")
        dice = (body.dice[0], body.dice[1]) if body.dice is not None else None
        return await service.engine_move(body.position, dice, body.level)

    @app.post("/api/engine/cube", responses=_errors(422, 429, 503), tags=["engine"])
    async def engine_cube(body: EngineCubeRequest, who: Auth) -> dict[str, Any]:
        """The cube decision of the side on roll before it rolls: no double, double/take,
        double/pass (normalised; match winning chances too in match play), the verdict."""
        await limits.hit("engine", f"address:{who.address}")
        return await service.engine_cube(body.position, body.level)

    @app.post("/api/engine/eval", responses=_errors(422, 429, 503), tags=["engine"])
    async def engine_eval(body: EngineEvalRequest, who: Auth) -> dict[str, Any]:
        """The position's five probabilities and its cubeless and cubeful equity."""
        await limits.hit("engine", f"address:{who.address}")
        return await service.engine_eval(body.position, body.plies)

    # -- chat, blocks, reports ------------------------------------------------------
    @app.get("/api/tables/{table_id}/chat", responses=_errors(404))
    async def chat(table_id: str, who: Auth) -> dict[str, Any]:
        """The caller's channel at the table (players', or spectators'), its last 100
        messages, without those of players the caller blocks."""
        table = await service.get(_check_id(table_id))
        return {"messages": service.chat_for(table, who.player)}

    @app.post(
        "/api/tables/{table_id}/chat",
        status_code=201,
        responses=_errors(401, 403, 404, 422, 429),
    )
    async def say(table_id: str, body: ChatRequest, who: Changing) -> dict[str, Any]:
        """Say something at the table: the seated players' channel, or the spectators'."""
        if who.player is None:
            raise ServiceError(401, "not_signed_in", "play as a guest or sign in first")
        player = await acting(who, "chat")
        return await service.post_chat(_check_id(table_id), player, body.text)

    def _other(username: str, me: PlayerRow) -> PlayerRow:
        found = _player_called(username)
        if found.id == me.id:
            raise ServiceError(422, "yourself", "that is you")
        return found

    @app.post("/api/players/{username}/block", status_code=204, responses=_errors(401, 403, 404))
    async def block(username: str, who: Changing) -> Response:
        """Block a player: no chat from them, no challenges, no seat at your tables."""
        if who.player is None:
            raise ServiceError(401, "not_signed_in", "play as a guest or sign in first")
        other = _other(username, who.player)
        store.block(who.player.id, other.id, service.clock())
        return Response(status_code=204)

    @app.delete("/api/players/{username}/block", status_code=204, responses=_errors(401, 403, 404))
    async def unblock(username: str, who: Changing) -> Response:
        if who.player is None:
            raise ServiceError(401, "not_signed_in", "play as a guest or sign in first")
        store.unblock(who.player.id, _other(username, who.player).id)
        return Response(status_code=204)

    @app.get("/api/blocks")
    async def blocks(who: Auth) -> dict[str, Any]:
        """The players the caller blocks."""
        if who.player is None:
            return {"blocked": []}
        ids = store.blocked_by(who.player.id)
        found = [store.player(i) for i in sorted(ids)]
        return {
            "blocked": [
                {"id": p.id, "username": p.username, "name": p.display_name}
                for p in found
                if p is not None
            ]
        }

    @app.post("/api/reports", status_code=201, responses=_errors(401, 403, 404, 422, 429))
    async def report(body: ReportRequest, who: Changing) -> dict[str, Any]:
        """Report a player to the moderators (a chat message is kept as it was)."""
        if who.player is None:
            raise ServiceError(401, "not_signed_in", "play as a guest or sign in first")
        player = await acting(who, "chat")
        message = store.chat_message(body.message_id) if body.message_id is not None else None
        if body.message_id is not None and message is None:
            raise ServiceError(404, "no_such_message", f"no chat message {body.message_id}")
        if message is not None:
            author = store.player(message.player_id)
            assert author is not None
            named = store.player_by_username(body.username) if body.username else None
            if body.username is not None and (named is None or named.id != author.id):
                raise ServiceError(404, "no_such_message", "no such message of that player")
            if author.id == player.id:
                raise ServiceError(422, "yourself", "that is you")
            other = author
        elif body.username is not None:
            other = _other(body.username, player)
        else:
            raise ServiceError(422, "nobody_reported", "name the player, or the message")
        row = store.report(
            player.id,
            other.id,
            body.reason,
            service.clock(),
            table_id=message.table_id if message else body.table_id,
            message=message,
        )
        return {"id": row.id}

    @app.get("/api/tables/{table_id}/presence", responses=_errors(404))
    async def presence(table_id: str) -> dict[str, Any]:
        """Whether each person seated is connected, or since when they are away and when
        the opponent may claim the match (docs/server.md, "Abandonment")."""
        return service.presence(await service.get(_check_id(table_id)))

    @app.post(
        "/api/tables/{table_id}/claim",
        response_model=TableView,
        responses=_errors(401, 403, 404, 409, 429),
    )
    async def claim(table_id: str, who: Changing) -> Response:
        """Win the match whose opponent has been away longer than the grace period."""
        player = await acting(who)
        return table_response(await service.claim(_check_id(table_id), player), player)

    @app.get("/api/tables/{table_id}/hint", responses=_errors(401, 403, 404, 409, 429))
    async def hint(table_id: str, who: Auth) -> dict[str, Any]:
        if who.player is None:
            raise ServiceError(401, "not_signed_in", "play as a guest or sign in first")
        player = await acting(who, "hint")
        return await service.hint(_check_id(table_id), player)

    @app.get("/api/tables/{table_id}/replay", responses=_errors(404))
    async def replay(table_id: str) -> dict[str, Any]:
        """Every step of the table's games, for the replay viewer."""
        table = await service.get(_check_id(table_id))
        return {"steps": table.steps}

    @app.get(
        "/api/tables/{table_id}/record.{fmt}",
        response_class=Response,
        responses={
            200: {
                "description": "the match record: fmt is mat, sgf or json",
                "content": {
                    "text/plain": {"schema": {"type": "string"}},
                    "application/x-go-sgf": {"schema": {"type": "string"}},
                    "application/json": {"schema": {"type": "object"}},
                },
            },
            **_errors(404),
        },
    )
    async def record(table_id: str, fmt: str) -> Response:
        table = await service.get(_check_id(table_id))
        text, media = service.export(table, fmt)
        name = f"nard-{table.id}.{fmt}"
        return Response(
            text,
            media_type=media,
            headers={"Content-Disposition": f'attachment; filename="{name}"'},
        )

    # -- live tables -----------------------------------------------------------------
    @app.websocket("/ws/tables/{table_id}")
    async def live(socket: WebSocket, table_id: str) -> None:
        """The table after every committed change; takes the same action objects as
        ``/actions`` and ``{"type": "ping"}`` (answered ``{"type": "pong"}``)."""
        origin = socket.headers.get("origin")
        if origin and urlsplit(origin).netloc != socket.headers.get("host"):
            await socket.close(code=4403, reason="cross-origin")
            return
        address = address_key(_client_address(socket.scope, settings.trust_proxy))
        token = socket.cookies.get(COOKIE)
        found = sessions.get(token)
        player = found[0] if found else None
        session = store.token_hash(token) if found and token else None
        try:
            table = await service.get(_check_id(table_id))
        except ServiceError as exc:
            await socket.close(code=4404, reason=exc.message[:100])
            return
        if service.watchers(table.id) >= settings.sockets_per_table:
            await socket.close(code=4429, reason="too many watchers at this table")
            return
        if sockets_by_client[address] >= settings.sockets_per_client:
            await socket.close(code=4429, reason="too many sockets from this address")
            return
        sockets_by_client[address] += 1
        try:
            await socket.accept()
            watcher = Watcher(player, session, limit=service.watch_queue)
            service.watch(table.id, watcher)
            sender = asyncio.get_running_loop().create_task(_pump(socket, watcher))
            try:
                watcher.offer(service.state_text(table, player))
                while not sender.done():
                    try:
                        message = await asyncio.wait_for(
                            socket.receive(), timeout=settings.socket_idle
                        )
                    except TimeoutError:
                        watcher.drop("idle: nothing received")
                        break
                    if message["type"] == "websocket.disconnect" or sender.done():
                        break
                    await _ws_message(socket, message, table.id, player, token, address)
            except (WebSocketDisconnect, RuntimeError):
                pass  # the client went, or the socket was closed under the loop above
            finally:
                service.unwatch(table.id, watcher)
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    if not sender.done():
                        watcher.drop("closed")
                    await asyncio.wait_for(sender, timeout=1)
                if not sender.done():
                    sender.cancel()
        finally:
            sockets_by_client[address] -= 1
            if sockets_by_client[address] <= 0:
                del sockets_by_client[address]

    async def _ws_message(
        socket: WebSocket,
        message: Message,
        table_id: str,
        player: PlayerRow | None,
        token: str | None,
        address: str,
    ) -> None:
        async def send(data: dict[str, Any]) -> None:
            # A socket closing under us (signed out, dropped, the server stopping)
            # takes no more messages: what crossed the close is dropped quietly.
            if socket.application_state is WebSocketState.CONNECTED:
                with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                    await socket.send_text(json.dumps(data))

        async def refuse(code: str, text: str, table: AnyTable | None = None) -> None:
            await send({"type": "error", "error": {"code": code, "message": text}})
            if table is not None:
                await send({"type": "table", "table": service.render(table, player)})

        text = message.get("text")
        if text is None:
            await refuse("invalid_request", "binary frames are not accepted: send JSON text")
            return
        if len(text) > MAX_WS_MESSAGE:
            await refuse("too_large", f"messages are at most {MAX_WS_MESSAGE} characters")
            return
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            await refuse("invalid_request", f"not JSON: {str(exc)[:100]}")
            return
        if isinstance(data, dict) and data.get("type") == "ping" and len(data) == 1:
            await send({"type": "pong"})
            return
        try:
            body = ActionRequest.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0] if exc.errors() else {"msg": "invalid"}
            where = ".".join(str(p) for p in first.get("loc", ()))
            await refuse("invalid_request", f"not an action: {where or 'message'}: {first['msg']}")
            return
        if player is None or token is None:
            await refuse("not_signed_in", "spectators cannot act")
            return
        if sessions.get(token) is None:  # signed out since the socket opened
            await refuse("not_signed_in", "this session has ended: sign in again")
            if socket.application_state is WebSocketState.CONNECTED:
                with contextlib.suppress(WebSocketDisconnect, RuntimeError):
                    await socket.close(code=4401, reason="signed out")
            return
        try:
            await limits.hit("action", f"player:{player.id}")
            data = body.model_dump(exclude={"seq"}, exclude_none=True)
            await service.act(table_id, player, data, body.seq)
        except ServiceError as exc:
            await refuse(exc.code, exc.message, exc.table)
        except RateLimited as exc:
            metrics.rate_limited.labels(exc.policy).inc()
            await refuse("rate_limited", str(exc))

    # -- the page -----------------------------------------------------------------------
    static = resources.files("nard.server") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    async def page() -> HTMLResponse:
        return HTMLResponse((static / "index.html").read_text(encoding="utf-8"))

    for path in (
        "/",
        "/play/{table_id}",
        "/verify",
        "/archive",
        "/rules",
        "/ratings",
        "/players/{username}",
    ):
        app.add_api_route(path, _page_route(page), include_in_schema=False)
    return app


async def _pump(socket: WebSocket, watcher: Watcher) -> None:
    """Send the watcher's queued messages until it is dropped; then close the socket."""
    while True:
        text = await watcher.queue.get()
        if text is None:
            reason = watcher.closed_because or "closed"
            code = {
                "signed out": 4401,
                "the server is restarting": 1012,
                "closed": 1000,
            }.get(reason, 4008)
            with contextlib.suppress(Exception):
                await socket.close(code=code, reason=reason[:100])
            return
        await socket.send_text(text)


def _page_route(page: Callable[[], Awaitable[HTMLResponse]]) -> Callable[..., Any]:
    async def route(request: Request) -> HTMLResponse:
        return await page()

    return route


def _check_id(table_id: str) -> str:
    if not (1 <= len(table_id) <= 16) or not all(c.isalnum() or c in "-_" for c in table_id):
        raise ServiceError(404, "no_such_table", f"no table {table_id[:40]!r}")
    return table_id


def _iso(moment: Any) -> str:
    """A stored time as ISO 8601 in UTC ("" for none)."""
    found = aware(moment)
    return found.isoformat() if found is not None else ""


def _time_control(spec: str | TimeControlSpec) -> TimeControl | None:
    """The table's time control from the request's preset name or custom values."""
    if isinstance(spec, str):
        return PRESETS.get(spec)
    try:
        return TimeControl(spec.delay, spec.reserve, spec.per_point)
    except TimeControlError as exc:
        raise ServiceError(422, "invalid_time_control", str(exc)) from None
