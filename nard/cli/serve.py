"""``nard serve``: the web app on uvicorn, at the address it prints."""

from __future__ import annotations

import dataclasses

from nard.core import NardError

__all__ = ["cmd_serve"]


def cmd_serve(host: str | None, port: int | None) -> int:
    """Serve the app until interrupted; the settings come from the environment."""
    import uvicorn
    from sqlalchemy.exc import SQLAlchemyError

    from nard.server import Settings, create_app

    try:
        settings = Settings.from_env()
    except ValueError as exc:
        raise NardError(str(exc)) from None
    if host is not None:
        settings = dataclasses.replace(settings, host=host)
    if port is not None:
        if not 0 < port < 65536:
            raise NardError(f"invalid port {port}: 1-65535")
        settings = dataclasses.replace(settings, port=port)
    try:
        app = create_app(settings)
    except SQLAlchemyError as exc:
        first = str(exc).splitlines()[0]
        shown = _shown(settings.database_url)
        raise NardError(f"cannot open the database {shown!r}: {first}") from None
    where = _shown(settings.database_url)
    print(f"nard: serving at http://{settings.host}:{settings.port} (database {where})", flush=True)
    # WebSocket frames are small JSON actions: refuse anything over 64 KB outright.
    uvicorn.run(app, host=settings.host, port=settings.port, log_level="warning", ws_max_size=65536)
    return 0


def _shown(url: str) -> str:
    """The database URL without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
