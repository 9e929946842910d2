"""The web application: FastAPI routes and the WebSocket of live tables.

Routes only check who is asking, validate, call :class:`TableService` and
serialize. Every refusal has one shape, ``{"error": {"code", "message"}}``,
with a 4xx status (:class:`~nard.server.schemas.ErrorBody`).

Sign-in is a random token in an HttpOnly, SameSite=Lax cookie (only its
SHA-256 is stored). Requests that change anything must carry the session's
CSRF token in ``X-CSRF-Token`` (given by ``GET /api/me``), and any request
with an ``Origin`` header from another site is refused, WebSockets included.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from importlib import resources
from typing import Annotated, Any
from urllib.parse import urlsplit

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from fastapi import Depends, FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from nard.server.models import PlayerRow
from nard.server.schemas import (
    ActionRequest,
    CredentialsRequest,
    ErrorBody,
    GuestRequest,
    JoinRequest,
    Me,
    NewTableRequest,
    PasswordRequest,
    SeatView,
    TableSummary,
    TableView,
)
from nard.server.service import AnyTable, NewTable, ServiceError, TableService
from nard.server.settings import Settings
from nard.server.storage import SESSION_LIFETIME, Storage, StoredTable, UsernameTakenError
from nard.server.tables import TableRules

__all__ = ["create_app"]

COOKIE = "nard_session"
RULE_FIELDS = {f.name for f in dataclasses.fields(TableRules)}
"""The fields of a new table's request that are its rules."""
MAX_BODY = 16 * 1024
"""The largest request body accepted (a new table's settings are under 1 KB)."""
MAX_WS_MESSAGE = 4 * 1024

_hasher = PasswordHasher()


async def _password_ok(stored_hash: str | None, password: str) -> bool:
    """Whether ``password`` matches the stored argon2 hash (a guest has none);
    hashing runs in a thread, off the event loop."""
    if not stored_hash:
        return False
    try:
        return bool(await asyncio.to_thread(_hasher.verify, stored_hash, password))
    except (VerificationError, InvalidHashError):
        return False


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


class _BodyLimit:
    """Refuses request bodies over :data:`MAX_BODY` with 413, before the route reads them."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and (not value.isdigit() or int(value) > MAX_BODY):
                await _error(413, "too_large", f"request bodies are at most {MAX_BODY} bytes")(
                    scope, receive, send
                )
                return
        seen = 0

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > MAX_BODY:
                    raise ServiceError(413, "too_large", f"bodies are at most {MAX_BODY} bytes")
            return message

        await self.app(scope, limited, send)


class LoginThrottle:
    """Wrong passwords per username: after ``limit`` within ``window`` seconds, sign-in
    under that name is refused (429) until the oldest of them is ``window`` old.
    Kept per process (several processes each count their own)."""

    def __init__(
        self,
        limit: int = 10,
        window: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, name: str) -> deque[float]:
        times = self._failures.setdefault(name, deque())
        while times and self.clock() - times[0] > self.window:
            times.popleft()
        return times

    def blocked(self, name: str) -> bool:
        return len(self._recent(name)) >= self.limit

    def failed(self, name: str) -> None:
        if len(self._failures) > 100_000:  # bound the memory a flood of names can take
            self._failures.clear()
        self._recent(name).append(self.clock())

    def clear(self, name: str) -> None:
        self._failures.pop(name, None)


class _Auth:
    """The player behind a request (None for a visitor) and their CSRF token."""

    def __init__(self, player: PlayerRow | None, csrf: str | None, token: str | None) -> None:
        self.player = player
        self.csrf = csrf
        self.token = token


def _same_origin(request: Request) -> None:
    origin = request.headers.get("origin")
    if origin and urlsplit(origin).netloc != request.headers.get("host"):
        raise ServiceError(403, "cross_origin", f"requests from {origin!r} are refused")


async def _auth(request: Request) -> _Auth:
    store: Storage = request.app.state.storage
    token = request.cookies.get(COOKIE)
    found = store.auth_session(token) if token else None
    if found is None:
        return _Auth(None, None, None)
    return _Auth(found[0], found[1], token)


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


def create_app(
    settings: Settings | None = None,
    storage: Storage | None = None,
    *,
    server_seeds: Callable[[], bytes] | None = None,
) -> FastAPI:
    """The application, on ``storage`` (default: the database of ``settings``).

    ``server_seeds`` makes the tables' secret dice seeds (see :class:`TableService`).
    """
    settings = settings or Settings.from_env()
    owns_storage = storage is None
    store = storage or Storage(settings.database_url)
    store.migrate()
    service = TableService(
        store,
        engine_workers=settings.engine_workers,
        server_seeds=server_seeds,
        redis_url=settings.redis_url,
    )

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await service.start()
        yield
        await service.stop()
        service.close()
        if owns_storage:
            store.close()

    app = FastAPI(
        title="nard",
        summary="Backgammon against the computer and online, with provably fair dice.",
        version="0.1.0",
        lifespan=lifespan,
        responses={400: {"model": ErrorBody}},
    )
    app.state.service = service
    app.state.storage = store
    throttle = LoginThrottle()
    app.add_middleware(_BodyLimit)

    # -- errors ------------------------------------------------------------------
    @app.exception_handler(ServiceError)
    async def service_error(_request: Request, exc: ServiceError) -> JSONResponse:
        return _error(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        parts = []
        for err in exc.errors()[:5]:
            where = ".".join(str(p) for p in err.get("loc", ()) if p != "body")
            parts.append(f"{where or 'body'}: {err.get('msg', 'invalid')}")
        return _error(422, "invalid_request", "; ".join(parts) or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed"}.get(exc.status_code, "http_error")
        return _error(exc.status_code, code, str(exc.detail))

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
            id=player.id, name=player.display_name, guest=player.username is None, csrf_token=csrf
        )

    # -- players -------------------------------------------------------------------
    @app.get("/api/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/api/me", response_model=Me | None)
    async def me(who: Auth) -> Me | None:
        if who.player is None or who.csrf is None:
            return None
        p = who.player
        return Me(id=p.id, name=p.display_name, guest=p.username is None, csrf_token=who.csrf)

    @app.post("/api/guest", response_model=Me)
    async def guest(body: GuestRequest, request: Request, response: Response) -> Me:
        _same_origin(request)
        name = body.name or f"Guest {secrets.randbelow(9000) + 1000}"
        return start_session(response, store.create_player(name))

    @app.post("/api/register", response_model=Me)
    async def register(
        body: CredentialsRequest, request: Request, response: Response, who: Auth
    ) -> Me:
        _same_origin(request)
        hashed = await asyncio.to_thread(_hasher.hash, body.password)
        try:
            if who.player is not None and who.player.username is None:
                player = store.upgrade_guest(who.player.id, body.username, hashed)
            else:
                player = store.create_player(body.username, body.username, hashed)
        except UsernameTakenError as exc:
            raise ServiceError(409, "username_taken", str(exc)) from None
        return start_session(response, player)

    @app.post("/api/login", response_model=Me)
    async def login(body: CredentialsRequest, request: Request, response: Response) -> Me:
        _same_origin(request)
        name = body.username.lower()
        if throttle.blocked(name):
            raise ServiceError(
                429, "too_many_attempts", "too many wrong passwords: try again in a few minutes"
            )
        player = store.player_by_username(body.username)
        ok = player is not None and await _password_ok(player.password_hash, body.password)
        if not ok or player is None:
            throttle.failed(name)
            raise ServiceError(401, "bad_credentials", "wrong username or password")
        throttle.clear(name)
        return start_session(response, player)

    @app.post("/api/password", status_code=204)
    async def change_password(body: PasswordRequest, who: Changing) -> Response:
        """A new password (the current one first); every other session is signed out."""
        player = who.player
        assert player is not None and who.token is not None
        if not await _password_ok(player.password_hash, body.current):
            raise ServiceError(403, "bad_credentials", "the current password is wrong")
        store.set_password(player.id, await asyncio.to_thread(_hasher.hash, body.new))
        store.end_other_sessions(player.id, who.token)
        return Response(status_code=204)

    @app.post("/api/logout", status_code=204)
    async def logout(who: Changing) -> Response:
        assert who.token is not None
        store.end_auth_session(who.token)
        response = Response(status_code=204)
        response.delete_cookie(COOKIE)
        return response

    # -- tables --------------------------------------------------------------------
    def view(table: AnyTable, player: PlayerRow | None) -> TableView:
        seat = service.seat_of(table, player)
        out = TableView.model_validate(table.view(seat))
        if seat is not None and table.status == "waiting":
            out.invite = service.invite_token(table.id)
        return out

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
        )

    @app.post("/api/tables", response_model=TableView, status_code=201)
    async def new_table(body: NewTableRequest, who: Changing) -> TableView:
        assert who.player is not None
        try:
            rules = TableRules(**body.model_dump(include=RULE_FIELDS))
        except ValueError as exc:
            raise ServiceError(422, "invalid_rules", str(exc)) from None
        chouette = body.opponent == "chouette"
        spec = NewTable(
            rules=rules,
            level=body.level if body.opponent == "computer" or chouette else None,
            seat=body.seat,
            client_seed=body.client_seed,
            public=body.public,
            chouette=body.players if chouette else 0,
            computers=body.computers if chouette else 0,
        )
        table = await service.create(who.player, spec)
        return view(table, who.player)

    @app.get("/api/tables", response_model=list[TableSummary])
    async def lobby() -> list[TableSummary]:
        return [summary(t) for t in store.open_tables()]

    @app.get("/api/my-tables", response_model=list[TableSummary])
    async def my_tables(who: Auth) -> list[TableSummary]:
        if who.player is None:
            return []
        return [summary(t) for t in store.tables_of(who.player.id)]

    @app.get("/api/tables/{table_id}", response_model=TableView)
    async def get_table(table_id: str, who: Auth) -> TableView:
        return view(await service.get(_check_id(table_id)), who.player)

    @app.post("/api/tables/{table_id}/join", response_model=TableView)
    async def join(table_id: str, body: JoinRequest, who: Changing) -> TableView:
        assert who.player is not None
        table = await service.join(_check_id(table_id), who.player, body.invite)
        return view(table, who.player)

    @app.post("/api/tables/{table_id}/actions", response_model=TableView)
    async def act(table_id: str, body: ActionRequest, who: Changing) -> TableView:
        assert who.player is not None
        data = body.model_dump(exclude={"seq"}, exclude_none=True)
        table = await service.act(_check_id(table_id), who.player, data, body.seq)
        return view(table, who.player)

    @app.post("/api/tables/{table_id}/next-game", response_model=TableView)
    async def next_game(table_id: str, who: Changing) -> TableView:
        assert who.player is not None
        return view(await service.next_game(_check_id(table_id), who.player), who.player)

    @app.post("/api/tables/{table_id}/end", response_model=TableView)
    async def end(table_id: str, who: Changing) -> TableView:
        assert who.player is not None
        return view(await service.end(_check_id(table_id), who.player), who.player)

    @app.get("/api/tables/{table_id}/hint")
    async def hint(table_id: str, who: Auth) -> dict[str, Any]:
        if who.player is None:
            raise ServiceError(401, "not_signed_in", "play as a guest or sign in first")
        return await service.hint(_check_id(table_id), who.player)

    @app.get("/api/tables/{table_id}/replay")
    async def replay(table_id: str) -> dict[str, Any]:
        """Every step of the table's games, for the replay viewer."""
        table = await service.get(_check_id(table_id))
        return {"steps": table.steps}

    @app.get("/api/tables/{table_id}/record.{fmt}")
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
        origin = socket.headers.get("origin")
        if origin and urlsplit(origin).netloc != socket.headers.get("host"):
            await socket.close(code=4403, reason="cross-origin")
            return
        token = socket.cookies.get(COOKIE)
        found = store.auth_session(token) if token else None
        player = found[0] if found else None
        try:
            table = await service.get(_check_id(table_id))
        except ServiceError as exc:
            await socket.close(code=4404, reason=exc.message[:100])
            return
        await socket.accept()
        # Each change is turned into this client's view when it happens, so the
        # client sees every step (the computer's roll, then its play).
        updates: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def snapshot(changed: AnyTable) -> None:
            # Called from whichever loop made the change (one per test client;
            # the Redis listener's): hand the view over to this socket's loop.
            loop.call_soon_threadsafe(updates.put_nowait, view(changed, player).model_dump())

        service.watch(table.id, snapshot)

        async def pump() -> None:
            while True:
                await socket.send_json({"type": "table", "table": await updates.get()})

        sender = asyncio.create_task(pump())
        try:
            await socket.send_json({"type": "table", "table": view(table, player).model_dump()})
            while True:
                text = await socket.receive_text()
                await _ws_message(socket, text, table.id, player)
        except WebSocketDisconnect:
            pass
        finally:
            service.unwatch(table.id, snapshot)
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender

    async def _ws_message(
        socket: WebSocket, text: str, table_id: str, player: PlayerRow | None
    ) -> None:
        async def refuse(code: str, message: str) -> None:
            await socket.send_json({"type": "error", "error": {"code": code, "message": message}})

        if len(text) > MAX_WS_MESSAGE:
            await refuse("too_large", f"messages are at most {MAX_WS_MESSAGE} characters")
            return
        try:
            message = json.loads(text)
            body = ActionRequest.model_validate(message)
        except (ValueError, ValidationError) as exc:
            await refuse("invalid_request", f"not an action: {str(exc).splitlines()[0]}")
            return
        if player is None:
            await refuse("not_signed_in", "spectators cannot act")
            return
        try:
            data = body.model_dump(exclude={"seq"}, exclude_none=True)
            await service.act(table_id, player, data, body.seq)
        except ServiceError as exc:
            await refuse(exc.code, exc.message)

    # -- the page -----------------------------------------------------------------------
    static = resources.files("nard.server") / "static"
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    async def page() -> HTMLResponse:
        return HTMLResponse((static / "index.html").read_text(encoding="utf-8"))

    for path in ("/", "/play/{table_id}", "/verify", "/archive", "/rules"):
        app.add_api_route(path, _page_route(page), include_in_schema=False)
    return app


def _page_route(page: Callable[[], Awaitable[HTMLResponse]]) -> Callable[..., Any]:
    async def route(request: Request) -> HTMLResponse:
        return await page()

    return route


def _check_id(table_id: str) -> str:
    if not (1 <= len(table_id) <= 16) or not all(c.isalnum() or c in "-_" for c in table_id):
        raise ServiceError(404, "no_such_table", f"no table {table_id[:40]!r}")
    return table_id
