"""``nard moderate``: the moderators' sanctions, beside a running server.

``mute`` stops a player's chat messages; ``suspend`` ends every session of the
player and refuses their sign-in; each lasts ``--for`` a while (``30m``, ``12h``,
``7d``, ``2w``) or until ``lift``. ``list`` shows the sanctions in force (``--all``:
every one). ``remove`` takes chat messages away from their tables (by number, or
every message ``--from`` a player): kept, with when, by whom and why, and no longer
listed or sent. A player is named by username, or as ``#ID`` (the number ``nard
reports`` gives a guest). The command works on the server's own database, as
``nard reports`` does, and never creates one.

A running server sees a sanction at once where it reads the database: a muted
player's next message, a suspended player's next sign-in. A suspended player's
sessions end in the database at once; the servers' caches forget them within
their lifetime (10 s), and with ``--redis-url`` (or ``NARD_REDIS_URL``) every
process closes their sockets at once.
"""

from __future__ import annotations

import argparse
import json
import os
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from nard.cli.serve import named
from nard.core import NardError

if TYPE_CHECKING:
    from nard.server.models import PlayerRow, SanctionRow
    from nard.server.storage import Storage

__all__ = ["add_moderate_options", "cmd_moderate", "parse_duration"]

_DURATION = re.compile(r"([1-9][0-9]{0,5})([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_LONGEST = timedelta(days=36_500)
_REASON_LENGTH = 500


def parse_duration(text: str) -> timedelta:
    """``30m``, ``12h``, ``7d`` or ``2w`` as a :class:`timedelta`; :class:`NardError`
    naming the text otherwise.

    >>> parse_duration("36h")
    datetime.timedelta(days=1, seconds=43200)
    """
    found = _DURATION.fullmatch(text.strip())
    if found is None:
        raise NardError(f"--for {text!r}: give a whole number and m, h, d or w (30m, 12h, 7d, 2w)")
    length = timedelta(**{_UNITS[found.group(2)]: int(found.group(1))})
    if length > _LONGEST:
        raise NardError(f"--for {text!r}: at most 100 years (leave --for out: until lifted)")
    return length


def add_moderate_options(parser: argparse.ArgumentParser) -> None:
    """``nard moderate mute|suspend|lift|list`` and their options."""
    from nard.cli.serve import add_setting_options, stored_int

    actions = parser.add_subparsers(dest="moderation", metavar="ACTION", required=True)
    for kind, text in (
        ("mute", "stop a player's chat messages"),
        ("suspend", "end a player's sessions and refuse their sign-in"),
    ):
        action = actions.add_parser(kind, help=text)
        action.add_argument("player", metavar="PLAYER", help="a username, or #ID")
        action.add_argument("--reason", required=True, help="why (the player is told)")
        action.add_argument(
            "--for",
            dest="length",
            default=None,
            metavar="DURATION",
            help="how long: 30m, 12h, 7d, 2w (default: until lifted)",
        )
        action.add_argument(
            "--report", type=stored_int, default=None, metavar="N", help="the report it answers"
        )
        action.add_argument(
            "--by", default="moderator", metavar="NAME", help="who decides (default moderator)"
        )
        add_setting_options(action, "database_url", "data_dir", "redis_url")
    remove = actions.add_parser(
        "remove", help="take chat messages away from the tables (kept for the record)"
    )
    remove.add_argument(
        "messages",
        nargs="*",
        type=stored_int,
        metavar="MESSAGE",
        help="message numbers (nard reports shows a reported message's)",
    )
    remove.add_argument(
        "--from", dest="author", default=None, metavar="PLAYER", help="every message of PLAYER"
    )
    remove.add_argument("--reason", required=True, help="why (kept with the messages)")
    remove.add_argument(
        "--by", default="moderator", metavar="NAME", help="who decides (default moderator)"
    )
    add_setting_options(remove, "database_url", "data_dir", "redis_url")
    lift = actions.add_parser("lift", help="end a sanction now")
    lift.add_argument(
        "sanction", type=stored_int, metavar="SANCTION", help="its number (nard moderate list)"
    )
    add_setting_options(lift, "database_url", "data_dir")
    listing = actions.add_parser("list", help="the sanctions in force, newest first")
    listing.add_argument("--all", action="store_true", help="every sanction, over or not")
    listing.add_argument(
        "--limit", type=stored_int, default=50, metavar="N", help="the N newest (default 50)"
    )
    listing.add_argument("--json", action="store_true", help="one JSON document")
    add_setting_options(listing, "database_url", "data_dir")


def cmd_moderate(args: argparse.Namespace) -> int:
    """Run ``nard moderate ACTION`` on the server's database."""
    from sqlalchemy.exc import SQLAlchemyError

    from nard.cli.serve import open_server_database, server_settings

    names = ("database_url", "data_dir", "redis_url")
    settings = server_settings({k: getattr(args, k, None) for k in names})
    now = datetime.now(UTC)
    if args.moderation in ("mute", "suspend", "remove"):
        from nard.server.schemas import check_shown_text

        reason = " ".join(args.reason.split())
        if not reason or len(reason) > _REASON_LENGTH:
            raise NardError(f"--reason: give one, of at most {_REASON_LENGTH} characters")
        try:
            check_shown_text(reason)  # the player is shown it
        except ValueError as exc:
            raise NardError(f"--reason: {exc}") from None
        if args.moderation == "remove":
            if bool(args.messages) == bool(args.author):
                raise NardError("remove: give message numbers, or --from PLAYER (not both)")
        else:
            until = None if args.length is None else now + parse_duration(args.length)
    elif args.moderation == "list" and args.limit < 1:
        raise NardError(f"--limit {args.limit}: give 1 or more")
    storage, shown = open_server_database(settings)
    try:
        if args.moderation == "list":
            return _list(storage, shown, now, args.all, args.limit, args.json)
        if args.moderation == "lift":
            return _lift(storage, args.sanction, now)
        if args.moderation == "remove":
            return _remove(storage, args, reason, now, settings.redis_url)
        player = _player(storage, args.player)
        if args.report is not None:
            _check_report(storage, args.report, player)
        sanction = storage.sanction(
            player.id,
            args.moderation,
            reason,
            args.by[:64],
            now,
            until=until,
            report_id=args.report,
        )
        ended = storage.end_sessions(player.id) if args.moderation == "suspend" else []
        told = _tell_servers(settings.redis_url, ended)
        done = "muted" if args.moderation == "mute" else "suspended"
        print(f"{done} {named(player)} {_lasting(sanction)}: {reason} (sanction #{sanction.id})")
        if args.moderation == "suspend":
            print(f"{len(ended)} session(s) ended; {told}")
        return 0
    except SQLAlchemyError as exc:  # not nard's database, or one no server has opened yet
        first = str(exc).splitlines()[0]
        raise NardError(f"cannot moderate in {shown!r}: {first}") from None
    finally:
        storage.close()


def _player(storage: Storage, name: str) -> PlayerRow:
    """The player a moderator names: ``#ID``, or a username as the server compares them."""
    text = name.strip()
    player = None
    if re.fullmatch(r"#[0-9]{1,12}", text):
        player = storage.player(int(text[1:]))
    elif text:
        player = storage.player_by_username(text)
    if player is None:
        raise NardError(f"no player {name!r} (a username, or #ID as nard reports shows a guest)")
    return player


def _check_report(storage: Storage, report_id: int, player: PlayerRow) -> None:
    report = storage.report_row(report_id)
    if report is None:
        raise NardError(f"--report {report_id}: no such report (nard reports lists them)")
    if report.reported_id != player.id:
        other = storage.player(report.reported_id)
        about = named(other) if other else f"#{report.reported_id}"
        raise NardError(f"report #{report_id} is about {about}, not {named(player)}")


def _lasting(sanction: SanctionRow) -> str:
    from nard.server.storage import aware

    until = aware(sanction.until)
    if until is None:
        return "until lifted"
    return f"until {until.strftime('%Y-%m-%d %H:%M')} UTC"


def _tell_servers(redis_url: str | None, sessions: list[str]) -> str:
    """Announce the sessions ended to every server process through Redis (each closes
    their sockets at once); what the moderator is told about it."""
    from nard.server.service import session_news

    if not sessions:
        return "no server needs telling"
    origin = f"moderate-{os.getpid()}"
    return _publish(
        redis_url,
        [session_news(origin, session) for session in sessions],
        told="the servers were told through Redis",
        untold="servers forget them within 10 s",
    )


def _publish(redis_url: str | None, messages: list[str], *, told: str, untold: str) -> str:
    """``messages`` on the servers' Redis channel: ``told``, or why not and ``untold``
    (what happens without them)."""
    if not redis_url:
        return f"{untold} (with --redis-url, at once)"
    from redis import Redis
    from redis.exceptions import RedisError

    from nard.server.service import CHANNEL

    try:
        client = Redis.from_url(redis_url, socket_timeout=5)
        try:
            for message in messages:
                client.publish(CHANNEL, message)
        finally:
            client.close()
    except RedisError as exc:
        return f"Redis could not be told ({exc}): {untold}"
    return told


def _remove(
    storage: Storage, args: argparse.Namespace, reason: str, now: datetime, redis_url: str | None
) -> int:
    """Remove the messages named (or every message of ``--from``) and tell the servers."""
    author = None if args.author is None else _player(storage, args.author)
    numbers = sorted(set(args.messages))
    if author is None:
        missing = [i for i in numbers if storage.chat_message(i) is None]
        if missing:
            named_ = ", ".join(f"#{i}" for i in missing)
            raise NardError(f"no chat message {named_} (nard reports shows message numbers)")
    removed = storage.remove_chat(
        reason,
        args.by[:64],
        now,
        message_ids=numbers,
        player_id=None if author is None else author.id,
    )
    tables: dict[str, list[int]] = {}
    for row in removed:
        tables.setdefault(row.table_id, []).append(row.id)
    before = len(numbers) - len(removed) if author is None else 0
    already = f" ({before} removed before)" if before else ""
    whose = f" of {named(author)}" if author is not None else ""
    print(
        f"removed {len(removed)} message(s){whose} at {len(tables)} table(s){already}: "
        f"{reason}; {_tell_tables(redis_url, tables)}"
    )
    return 0


def _tell_tables(redis_url: str | None, tables: dict[str, list[int]]) -> str:
    """Announce the messages removed at each table through Redis (every process takes
    them from the pages it serves there); what the moderator is told about it."""
    from nard.server.service import chat_removal_news

    if not tables:
        return "nothing to tell the servers"
    origin = f"moderate-{os.getpid()}"
    return _publish(
        redis_url,
        [chat_removal_news(origin, table_id, ids) for table_id, ids in tables.items()],
        told="the pages open at those tables were told through Redis",
        untold="pages open now show them until reloaded",
    )


def _lift(storage: Storage, sanction_id: int, now: datetime) -> int:
    from nard.server.storage import aware

    sanction = storage.lift_sanction(sanction_id, now)
    if sanction is None:
        raise NardError(f"no sanction #{sanction_id} (nard moderate list --all lists them)")
    player = storage.player(sanction.player_id)
    whose = f"{sanction.kind} of {named(player) if player else f'#{sanction.player_id}'}"
    lifted = aware(sanction.lifted_at)
    if lifted == now:
        print(f"lifted sanction #{sanction_id} ({whose})")
    elif lifted is not None:
        print(f"sanction #{sanction_id} ({whose}) was lifted already, {lifted:%Y-%m-%d %H:%M} UTC")
    else:
        print(f"sanction #{sanction_id} ({whose}) was over already")
    return 0


def _list(
    storage: Storage, shown: str, now: datetime, every: bool, limit: int, as_json: bool
) -> int:
    from nard.server.storage import aware, sanction_lasts

    rows: list[dict[str, Any]] = []
    for sanction in storage.sanctions(in_force_at=None if every else now, limit=limit):
        player = storage.player(sanction.player_id)
        until, lifted = aware(sanction.until), aware(sanction.lifted_at)
        rows.append(
            {
                "id": sanction.id,
                "player": named(player) if player else f"#{sanction.player_id}",
                "player_id": sanction.player_id,
                "kind": sanction.kind,
                "reason": sanction.reason,
                "by": sanction.issued_by,
                "report": sanction.report_id,
                "at": (aware(sanction.created_at) or now).isoformat(timespec="seconds"),
                "until": until.isoformat(timespec="seconds") if until else None,
                "lifted": lifted.isoformat(timespec="seconds") if lifted else None,
                "in_force": sanction_lasts(sanction, now),
            }
        )
    if as_json:
        print(json.dumps({"database": shown, "sanctions": rows}, ensure_ascii=False, indent=2))
        return 0
    if not rows:
        print(f"no sanctions {'' if every else 'in force '}in {shown}")
    for row in rows:
        if row["lifted"]:
            state = f"lifted {row['lifted']}"
        elif row["until"] is None:
            state = "until lifted"
        else:
            state = f"{'until' if row['in_force'] else 'over'} {row['until']}"
        answers = f", report #{row['report']}" if row["report"] else ""
        print(
            f"#{row['id']} {row['at']} {row['kind']} {row['player']} {state} by {row['by']}"
            f"{answers}: {json.dumps(row['reason'], ensure_ascii=False)}"
        )
    return 0
