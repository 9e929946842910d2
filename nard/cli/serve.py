"""``nard serve``: the web app on uvicorn, at the address it prints.

Every setting of :class:`nard.server.Settings` is an option here and an
environment variable (the option wins); ``nard serve --help`` lists them all.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
from typing import TYPE_CHECKING, Any

from nard.core import NardError

if TYPE_CHECKING:
    from nard.server.models import PlayerRow
    from nard.server.settings import Settings
    from nard.server.storage import Storage

__all__ = [
    "add_reports_options",
    "add_serve_options",
    "add_setting_options",
    "add_worker_options",
    "cmd_reports",
    "cmd_serve",
    "cmd_worker",
    "named",
    "open_server_database",
    "server_settings",
    "stored_int",
]


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    """One option per setting, named after it (``--database-url``, ``--redis-url``...)."""
    from nard.server.settings import SETTINGS, Settings

    defaults = {f.name: f.default for f in dataclasses.fields(Settings)}
    for spec in SETTINGS:
        default = defaults[spec.name]
        shown = "" if default in ("", None) or spec.name == "data_dir" else f"; default {default}"
        _option(parser, spec, shown)


def _option(parser: argparse.ArgumentParser, spec: Any, shown: str = "") -> None:
    parser.add_argument(
        "--" + spec.name.replace("_", "-"),
        dest=spec.name,
        default=None,
        metavar=spec.env,
        help=f"{spec.help} [{spec.env}{shown}]",
    )


def add_worker_options(parser: argparse.ArgumentParser) -> None:
    """``nard worker``: where the jobs wait and the results go (as ``nard serve``)."""
    add_setting_options(parser, "database_url", "data_dir", "redis_url", "queue_path")
    parser.add_argument(
        "--workers", type=int, default=1, metavar="N", help="analyses made at once (default 1)"
    )
    parser.add_argument("--parent", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--stale-after",
        type=float,
        default=None,
        metavar="SECONDS",
        help="queue again an analysis whose worker wrote no progress for this long (default 60)",
    )


def cmd_worker(
    options: dict[str, Any], workers: int, parent: int | None, stale_after: float | None = None
) -> int:
    """Make queued analyses until interrupted (docs/analysis.md, "In the page")."""
    from nard.server.jobs import STALE_AFTER, queue_for, run_worker

    if workers < 1:
        raise NardError(f"--workers {workers}: give 1 or more")
    settings = server_settings(options)
    where = queue_for(settings)
    print(
        f"nard: analysis worker on {where.place} (database {_shown(settings.database_url)})",
        flush=True,
    )
    if stale_after is not None and stale_after <= 0:
        raise NardError(f"--stale-after {stale_after}: give a number of seconds above 0")
    run_worker(where, workers, parent, stale_after or STALE_AFTER)
    return 0


def stored_int(text: str) -> int:
    """An argparse type: a whole number a database column holds (SQLite's and
    PostgreSQL's 64-bit integers), where a larger one failed in the driver."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if abs(value) >= 1 << 63:
        raise argparse.ArgumentTypeError(f"{text} is out of range")
    return value


def add_setting_options(parser: argparse.ArgumentParser, *names: str) -> None:
    """The options of the server's settings ``names`` (``database_url``...), as
    ``nard serve`` has them, for a command that works beside the server."""
    from nard.server.settings import SETTINGS

    for spec in SETTINGS:
        if spec.name in names:
            _option(parser, spec)


def add_reports_options(parser: argparse.ArgumentParser) -> None:
    """``nard reports``: the server's database (as ``nard serve``), how many, the format."""
    add_setting_options(parser, "database_url", "data_dir")
    parser.add_argument(
        "--limit", type=stored_int, default=50, metavar="N", help="the N newest (default 50)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON document")


def named(player: PlayerRow) -> str:
    """A player as the moderators' commands show them: the username, or a guest's name
    and the number ``nard moderate`` takes (``#ID``)."""
    return player.username or f"{player.display_name} (guest #{player.id})"


def cmd_reports(options: dict[str, Any], limit: int, as_json: bool) -> int:
    """The reports players made to the moderators, newest first: who reported whom,
    when, why, at which table, and the chat message as it was when reported (with its
    number, which ``nard moderate remove`` takes)."""
    import json

    from sqlalchemy.exc import SQLAlchemyError

    from nard.server.storage import aware

    if limit < 1:
        raise NardError(f"--limit {limit}: give 1 or more")
    storage, shown = open_server_database(server_settings(options))
    try:
        rows = []
        names: dict[int, str] = {}

        def name(player_id: int) -> str:
            if player_id not in names:
                player = storage.player(player_id)
                names[player_id] = f"player {player_id}" if player is None else named(player)
            return names[player_id]

        try:
            reports = storage.reports(limit)
        except SQLAlchemyError as exc:  # not nard's database, or one no server has opened yet
            first = str(exc).splitlines()[0]
            raise NardError(f"cannot read the reports in {shown!r}: {first}") from None
        for report in reports:
            rows.append(
                {
                    "id": report.id,
                    "reporter_id": report.reporter_id,
                    "reported_id": report.reported_id,
                    "at": (aware(report.created_at) or report.created_at).isoformat(
                        timespec="seconds"
                    ),
                    "reporter": name(report.reporter_id),
                    "reported": name(report.reported_id),
                    "reason": report.reason,
                    "table_id": report.table_id,
                    "message_id": report.message_id,
                    "message": report.message_text,
                }
            )
    finally:
        storage.close()
    if as_json:
        print(json.dumps({"database": shown, "reports": rows}, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print(f"no reports in {shown}")
    for row in rows:
        where = f" at table {row['table_id']}" if row["table_id"] else ""
        said = (
            f": message #{row['message_id']} {json.dumps(row['message'], ensure_ascii=False)}"
            if row["message"]
            else ""
        )
        print(
            f"#{row['id']} {row['at']} {row['reporter']} reported {row['reported']}{where}"
            f" ({json.dumps(row['reason'], ensure_ascii=False)}){said}"
        )
    return 0


def open_server_database(settings: Settings) -> tuple[Storage, str]:
    """The server's database for a command that reads or amends it beside the server
    (``nard reports``, ``nard moderate``), and its URL as shown (no password). It is
    never created: a SQLite file that is not there is a :class:`NardError`."""
    from pathlib import Path

    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import SQLAlchemyError

    from nard.server.storage import Storage

    url = make_url(settings.database_url)
    shown = _shown(settings.database_url)
    file = url.database if url.get_backend_name() == "sqlite" else None
    if file and file != ":memory:" and not Path(file).is_file():  # reading must not create it
        raise NardError(f"no database at {file} (is that the server's data directory?)")
    try:
        return Storage(settings.database_url), shown
    except SQLAlchemyError as exc:
        first = str(exc).splitlines()[0]
        raise NardError(f"cannot open the database {shown!r}: {first}") from None


def cmd_serve(options: dict[str, Any]) -> int:
    """Serve the app until interrupted (SIGTERM or Ctrl-C: requests in flight finish,
    WebSockets are closed so that clients reconnect, leases are given back)."""
    import uvicorn
    from sqlalchemy.exc import SQLAlchemyError

    from nard.server import create_app
    from nard.server.logs import configure_logging
    from nard.server.thinking import settle_memory

    settings = server_settings(options)
    configure_logging(settings.log_format, settings.log_level)
    try:
        app = create_app(settings)
    except SQLAlchemyError as exc:
        first = str(exc).splitlines()[0]
        shown = _shown(settings.database_url)
        raise NardError(f"cannot open the database {shown!r}: {first}") from None
    except ValueError as exc:
        raise NardError(str(exc)) from None
    where = _shown(settings.database_url)
    print(f"nard: serving at http://{settings.host}:{settings.port} (database {where})", flush=True)
    worker = None
    if settings.analysis_workers:
        from nard.server.jobs import start_worker_process

        worker = start_worker_process(settings)
    _load_engine()
    settle_memory()  # after start-up: what is loaded now lives as long as the process
    try:
        _run(uvicorn, app, settings)
    finally:
        if worker is not None:
            worker.terminate()
            try:
                worker.wait(timeout=10)
            except Exception:
                worker.kill()
    return 0


def _load_engine() -> None:
    """Load and compile this process's own engine (a new table's check of the network
    and hints use it) before serving. Loaded at the first table against the computer
    instead, it held the event loop for a second, and its tens of thousands of
    objects came after :func:`settle_memory`, for every full collection to walk
    (a third of each pause under load). Without a network the server still starts
    (players can play each other); a table against the computer then says why not."""
    from nard.engine import WeightsError
    from nard.server.thinking import warm_up

    try:
        warm_up()
    except WeightsError as exc:
        logging.getLogger("nard.server").warning("the computer cannot play: %s", exc)


def _run(uvicorn: Any, app: Any, settings: Any) -> None:
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        # The app logs each request itself (with its request id); uvicorn's access
        # logger is disabled, but uvicorn formatted its arguments for every response.
        access_log=False,
        # WebSocket frames are small JSON actions: refuse anything over 64 KB outright.
        ws_max_size=65536,
        # Half-open connections: a socket that does not answer a ping is closed.
        ws_ping_interval=settings.ping_interval,
        ws_ping_timeout=settings.ping_interval,
        timeout_keep_alive=5,
        timeout_graceful_shutdown=int(settings.shutdown_grace),
        proxy_headers=settings.trust_proxy,
        server_header=False,  # no product and version for scanners to match
    )


def server_settings(options: dict[str, Any]) -> Settings:
    """The server's settings from the options given (None: not given) and the
    environment; a bad value is a :class:`NardError` that names it."""
    from nard.server import Settings

    try:
        return Settings.from_env(**{k: v for k, v in options.items() if v is not None})
    except ValueError as exc:
        raise NardError(str(exc)) from None


def _shown(url: str) -> str:
    """The database URL without its password."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)
