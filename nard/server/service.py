"""The server's services: tables created, joined, played and watched.

:class:`TableService` keeps the tables in play in memory (each rebuilt from
storage the first time it is asked for, so a restarted server continues every
game), stores each action before anyone is told of it, lets the computer seats
think in a thread pool (a thinking engine never holds up the event loop) and
hands every change to the table's watchers (the WebSocket connections).

Routes call these methods and nothing else; every refusal is a
:class:`ServiceError` with an HTTP status and a code, so the web layer has
one error shape.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from nard.computer import computer_command, cube_context
from nard.core import NardError
from nard.engine import Engine, Level
from nard.match.commands import Command, InvalidCommandError
from nard.match.dice import SEED_BYTES, FairDice
from nard.match.game import Decision, MatchStateError
from nard.notation.json_record import write_json
from nard.notation.mat import write_mat
from nard.notation.sgf import write_sgf
from nard.server.chouette import ChouetteTable, parse_command
from nard.server.models import PlayerRow, TableRow
from nard.server.storage import ConflictError, Storage, StoredTable
from nard.server.tables import (
    LiveTable,
    NotYourTurnError,
    SeatInfo,
    TableClosedError,
    TableRules,
)

__all__ = ["AnyTable", "NewTable", "ServiceError", "TableService"]

AnyTable = LiveTable | ChouetteTable
"""A two-player match or money session, or a chouette."""

Watcher = Callable[[AnyTable], None]

CHANNEL = "nard:tables"
"""The Redis channel on which server processes announce changed tables."""
T = TypeVar("T")


class ServiceError(NardError):
    """A request the service refuses: ``status`` (HTTP) and ``code`` say why."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True)
class NewTable:
    """A table to set up: against the computer at ``level`` or a person
    (``level`` None), the creator in ``seat`` (0 or 1)."""

    rules: TableRules
    level: Level | None
    seat: int = 0
    client_seed: str | None = None
    public: bool = False
    """Listed in the lobby (otherwise joined by its invite link only)."""
    chouette: int = 0
    """Players at a chouette table (3-8; 0 for a two-player table)."""
    computers: int = 0
    """Seats of a chouette the computer takes at ``level`` (the rest are open)."""


class TableService:
    """Tables in play, backed by ``storage``.

    ``server_seeds`` makes each table's secret dice seed (32 bytes; default
    :func:`secrets.token_bytes`); tests give a seeded one.

    With ``redis_url`` several server processes can serve the same tables:
    each change is published on the Redis channel :data:`CHANNEL`, and every
    other process drops its copy of the table (the next request rebuilds it
    from the database) and pushes the new state to its own WebSockets. The
    database's sequence numbers keep two processes from both writing the same
    action.
    """

    def __init__(
        self,
        storage: Storage,
        *,
        engine_workers: int = 2,
        server_seeds: Callable[[], bytes] | None = None,
        redis_url: str | None = None,
    ) -> None:
        self.storage = storage
        self.redis_url = redis_url
        self._redis: Redis | None = None
        self._listener: asyncio.Task[None] | None = None
        self._origin = secrets.token_hex(8)  # this process, in the messages it publishes
        self._pending: set[asyncio.Task[None]] = set()
        self._server_seeds = server_seeds or (lambda: secrets.token_bytes(SEED_BYTES))
        self._pool = ThreadPoolExecutor(engine_workers, thread_name_prefix="nard-engine")
        self._engines: dict[Level, Engine] = {}
        self._live: dict[str, AnyTable] = {}
        self._locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self._watchers: dict[str, set[Watcher]] = defaultdict(set)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    async def start(self) -> None:
        """Connect to Redis and listen to the other processes (with ``redis_url``)."""
        if self.redis_url is None:
            return
        self._redis = Redis.from_url(self.redis_url)
        pubsub = self._redis.pubsub()
        await pubsub.subscribe(CHANNEL)
        self._listener = asyncio.create_task(self._listen(pubsub))

    async def stop(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
        if self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        if self._redis is not None:
            await self._redis.aclose()

    async def _listen(self, pubsub: PubSub) -> None:
        async for message in pubsub.listen():
            if message.get("type") != "message":
                continue
            try:
                origin, table_id = message["data"].decode().split(" ", 1)
            except (ValueError, AttributeError):
                continue
            if origin == self._origin:
                continue
            self._live.pop(table_id, None)
            if self._watchers.get(table_id):
                try:
                    table = await self.get(table_id)
                except ServiceError:
                    continue
                self._tell_watchers(table)

    # -- engines -------------------------------------------------------------
    def engine(self, level: Level) -> Engine:
        """One engine per level, sharing one network (loaded on first use)."""
        if level not in self._engines:
            shared = next(iter(self._engines.values()), None)
            evaluator = shared.evaluator if shared else None
            self._engines[level] = Engine(level, evaluator=evaluator)
        return self._engines[level]

    # -- tables ----------------------------------------------------------------
    async def create(self, creator: PlayerRow, spec: NewTable) -> AnyTable:
        client_seed = spec.client_seed or secrets.token_hex(8)
        server_seed = self._server_seeds()
        try:
            dice = FairDice(server_seed, client_seed)
        except ValueError as exc:
            raise ServiceError(422, "invalid_client_seed", str(exc)) from None
        me = SeatInfo(creator.display_name, player_id=creator.id)
        table_id = secrets.token_urlsafe(9)
        table: AnyTable
        if spec.chouette:
            if not 3 <= spec.chouette <= 8 or not 0 <= spec.computers < spec.chouette:
                raise ServiceError(
                    422,
                    "invalid_chouette",
                    f"a chouette seats 3-8 players with fewer computers than seats, "
                    f"not {spec.chouette} with {spec.computers}",
                )
            if spec.computers and spec.level is None:
                raise ServiceError(422, "invalid_chouette", "the computer players need a level")
            level = spec.level or Level.EXPERT
            others = [
                SeatInfo(f"nard {n + 1} ({level.value})", level=level)
                for n in range(spec.computers)
            ]
            others += [SeatInfo("open seat")] * (spec.chouette - 1 - spec.computers)
            try:
                table = ChouetteTable(table_id, spec.rules, [me, *others], dice)
            except ValueError as exc:
                raise ServiceError(422, "invalid_chouette", str(exc)) from None
            settings = {**spec.rules.to_json(), "kind": "chouette"}
        else:
            if spec.seat not in (0, 1):
                raise ServiceError(422, "invalid_seat", f"seat must be 0 or 1, not {spec.seat!r}")
            other = (
                SeatInfo(f"nard ({spec.level.value})", level=spec.level)
                if spec.level is not None
                else SeatInfo("open seat")
            )
            seats = (me, other) if spec.seat == 0 else (other, me)
            table = LiveTable(table_id, spec.rules, seats, dice)
            settings = spec.rules.to_json()
        for seat in table.seats:
            if seat.level is not None:
                self.engine(seat.level)  # a missing network fails here, before anything is stored
        self.storage.create_table(
            table_id,
            status=table.status,
            settings=settings,
            seats=[
                {
                    "player_id": s.player_id,
                    "level": s.level.value if s.level else None,
                    "name": s.name,
                }
                for s in table.seats
            ],
            server_seed=server_seed.hex(),
            client_seed=client_seed,
            commitment=dice.commitment,
            invite_token=secrets.token_urlsafe(12),
            creator_id=creator.id,
            public=spec.public and any(s.is_open for s in table.seats),
        )
        self._live[table_id] = table
        async with self._locks[table_id]:
            self._store(table, table.start())
            await self._computer_turns(table)
        return table

    async def get(self, table_id: str) -> AnyTable:
        """The table, rebuilt from storage when not in memory."""
        table = self._live.get(table_id)
        if table is not None:
            return table
        stored = self.storage.load_table(table_id)
        if stored is None:
            raise ServiceError(404, "no_such_table", f"no table {table_id!r}")
        table = _rebuild(stored)
        self._live[table_id] = table
        return table

    def invite_token(self, table_id: str) -> str:
        return self._stored_row(table_id).invite_token

    def _stored_row(self, table_id: str) -> TableRow:
        row = self.storage.table_row(table_id)
        if row is None:
            raise ServiceError(404, "no_such_table", f"no table {table_id!r}")
        return row

    def seat_of(self, table: AnyTable, player: PlayerRow | None) -> int | None:
        if player is None:
            return None
        for number, seat in enumerate(table.seats):
            if seat.player_id == player.id:
                return number
        return None

    async def join(self, table_id: str, player: PlayerRow, invite: str | None) -> AnyTable:
        """Sit ``player`` in the table's open seat: a lobby table, or with its invite."""
        table = await self.get(table_id)
        async with self._locks[table_id]:
            if self.seat_of(table, player) is not None:
                return table
            row = self._stored_row(table_id)
            if not row.public and not (
                invite and secrets.compare_digest(invite.encode(), row.invite_token.encode())
            ):
                raise ServiceError(403, "invite_required", "this table is joined by invitation")
            open_seats = [i for i, s in enumerate(table.seats) if s.is_open]
            if not open_seats:
                raise ServiceError(409, "table_full", f"table {table_id} has no open seat")
            seat = open_seats[0]
            if not self.storage.take_seat(table_id, seat, player.id, player.display_name):
                self._live.pop(table_id, None)
                raise ServiceError(409, "table_full", f"table {table_id} has no open seat")
            table.sit(seat, SeatInfo(player.display_name, player_id=player.id))
            self._store(table, table.start())
            self._notify(table)
            await self._computer_turns(table)
        return table

    async def act(
        self,
        table_id: str,
        player: PlayerRow,
        data: dict[str, Any],
        expect_seq: int | None = None,
    ) -> AnyTable:
        """``player`` gives the command ``data`` (its JSON object) in their own seat;
        the computer answers."""
        table = await self.get(table_id)
        async with self._locks[table_id]:
            seat = self.seat_of(table, player)
            if seat is None:
                raise ServiceError(403, "not_seated", f"you have no seat at table {table_id}")
            if expect_seq is not None and expect_seq != len(table.log):
                raise ServiceError(
                    409,
                    "stale",
                    f"the table moved on: action {len(table.log)} is next, not {expect_seq}",
                )
            before = len(table.log)
            try:
                steps: list[tuple[int, Any]]
                if isinstance(table, ChouetteTable):
                    steps = table.act(seat, _checked(parse_command, data))
                else:
                    steps = table.act(seat, _checked(Command.from_json, data))
            except ServiceError:
                raise
            except NotYourTurnError as exc:
                raise ServiceError(409, "not_your_turn", str(exc)) from None
            except TableClosedError as exc:
                raise ServiceError(409, "table_closed", str(exc)) from None
            except (MatchStateError, InvalidCommandError, NardError) as exc:
                raise ServiceError(422, "illegal_action", str(exc)) from None
            try:
                self._store(table, steps, first_seq=before)
            except ConflictError:
                self._live.pop(table_id, None)  # another process moved it: reload next time
                raise ServiceError(409, "stale", "the table moved on: reload it") from None
            self._notify(table)
            await self._computer_turns(table)
        return table

    async def next_game(self, table_id: str, player: PlayerRow) -> AnyTable:
        """Start the next game of a money session."""
        table = await self.get(table_id)
        async with self._locks[table_id]:
            if self.seat_of(table, player) is None:
                raise ServiceError(403, "not_seated", f"you have no seat at table {table_id}")
            before = len(table.log)
            try:
                steps = table.next_game()
            except TableClosedError as exc:
                raise ServiceError(409, "game_in_progress", str(exc)) from None
            self._store(table, steps, first_seq=before)
            self._notify(table)
            await self._computer_turns(table)
        return table

    async def end(self, table_id: str, player: PlayerRow) -> AnyTable:
        """Stop a money session between games, or close a table nobody has joined.

        A match ends when it is won: a player who wants out resigns its games.
        """
        table = await self.get(table_id)
        async with self._locks[table_id]:
            if self.seat_of(table, player) is None:
                raise ServiceError(403, "not_seated", f"you have no seat at table {table_id}")
            game = table.game
            if table.status == "playing":
                if table.match_length:
                    raise ServiceError(
                        409, "match_in_progress", "a match ends when it is won: resign its games"
                    )
                if game is not None and not game.is_over:
                    raise ServiceError(409, "game_in_progress", "finish or resign this game first")
            table.finish()
            self.storage.set_status(table_id, "finished")
        self._notify(table)
        return table

    async def hint(self, table_id: str, player: PlayerRow) -> dict[str, Any]:
        """The engine's ranked plays or cube analysis for the seat to act, at tables
        against the computer."""
        table = await self.get(table_id)
        seat = self.seat_of(table, player)
        computer = next((s.level for s in table.seats if s.level is not None), None)
        if computer is None or isinstance(table, ChouetteTable):
            raise ServiceError(403, "no_hints", "hints are for games against the computer")
        game = table.game
        if seat is None or table.to_act != seat or game is None:
            raise ServiceError(409, "not_your_turn", "a hint is for the seat to act")
        engine = self.engine(Level.WORLD_CLASS if computer is Level.WORLD_CLASS else Level.EXPERT)
        context = cube_context(game, game.on_roll, table.match_length, table.games.score)
        loop = asyncio.get_running_loop()
        if game.decision is Decision.PLAY:
            dice = game.dice
            assert dice is not None
            ranked = await loop.run_in_executor(self._pool, engine.rank_plays, game.position, dice)
            return {
                "kind": "plays",
                "plays": [
                    {
                        "play": game.position.format_play(r.play),
                        "equity": round(r.equity, 4),
                        "probabilities": [round(p, 4) for p in r.probabilities],
                        "ply": r.ply,
                    }
                    for r in ranked[:10]
                ],
            }
        analysis = await loop.run_in_executor(
            self._pool, engine.cube_analysis, game.position, context
        )
        probabilities, cubeless, decision = analysis
        return {
            "kind": "cube",
            "action": decision.action,
            "double": decision.double,
            "take": decision.take,
            "beaver": decision.beaver,
            "no_double": round(decision.no_double, 4),
            "double_take": round(decision.double_take, 4),
            "double_pass": round(decision.double_pass, 4),
            "cubeless_equity": round(cubeless, 4),
            "probabilities": [round(p, 4) for p in probabilities],
        }

    def export(self, table: AnyTable, fmt: str) -> tuple[str, str]:
        """The table's record as ``mat``, ``sgf`` or ``json``: (text, media type)."""
        if isinstance(table, ChouetteTable) and fmt != "json":
            raise ServiceError(404, "no_such_format", "a chouette's record is in JSON only")
        record = table.record()
        if fmt == "mat":
            return write_mat(record), "text/plain; charset=utf-8"
        if fmt == "sgf":
            return write_sgf(record), "application/x-go-sgf; charset=utf-8"
        if fmt == "json":
            return write_json(record, table.dice_commitment()), "application/json"
        raise ServiceError(404, "no_such_format", f"no record format {fmt!r}: mat, sgf or json")

    # -- watching ----------------------------------------------------------------
    def watch(self, table_id: str, watcher: Watcher) -> None:
        self._watchers[table_id].add(watcher)

    def unwatch(self, table_id: str, watcher: Watcher) -> None:
        self._watchers[table_id].discard(watcher)

    def _notify(self, table: AnyTable) -> None:
        """Tell this process's watchers, and the other processes through Redis."""
        self._tell_watchers(table)
        if self._redis is not None:
            task = asyncio.get_running_loop().create_task(self._publish(table.id))
            self._pending.add(task)
            task.add_done_callback(self._pending.discard)

    async def _publish(self, table_id: str) -> None:
        assert self._redis is not None
        await self._redis.publish(CHANNEL, f"{self._origin} {table_id}")

    def _tell_watchers(self, table: AnyTable) -> None:
        for watcher in list(self._watchers.get(table.id, ())):
            watcher(table)

    # -- internals -------------------------------------------------------------
    def _store(
        self, table: AnyTable, steps: Sequence[tuple[int, Any]], first_seq: int | None = None
    ) -> None:
        if not steps and first_seq is None:
            if table.finished:
                self.storage.set_status(table.id, "finished")
            return
        start = len(table.log) - len(steps) if first_seq is None else first_seq
        self.storage.append_actions(
            table.id,
            start,
            [(seat, cmd.to_json() if isinstance(cmd, Command) else cmd) for seat, cmd in steps],
            status=table.status,
        )

    async def _computer_turns(self, table: AnyTable) -> None:
        """Let computer seats act while the table waits for one of them."""
        loop = asyncio.get_running_loop()
        while True:
            seat = next((w for w in table.waiting_for() if table.seats[w].is_computer), None)
            if seat is None or table.game is None:
                return
            level = table.seats[seat].level
            assert level is not None
            engine = self.engine(level)
            before = len(table.log)
            steps: list[tuple[int, Any]]
            if isinstance(table, ChouetteTable):
                data = await loop.run_in_executor(
                    self._pool, chouette_computer, engine, table, seat
                )
                steps = table.act(seat, data)
            else:
                command = await loop.run_in_executor(
                    self._pool,
                    computer_command,
                    engine,
                    table.game,
                    table.match_length,
                    table.games.score,
                )
                steps = table.act(seat, command)
            self._store(table, steps, first_seq=before)
            self._notify(table)


def chouette_computer(engine: Engine, table: ChouetteTable, seat: int) -> dict[str, Any]:
    """What the computer in ``seat`` of a chouette answers now."""
    game = table.game
    assert game is not None
    legal = table.legal_for(seat)
    if "agree" in legal:  # the captain proposes a team double
        verdict = engine.cube_action(game.position, cube_context(game, game.on_roll, 0, (0, 0)))
        return {"action": "agree" if verdict.double else "refuse"}
    if "take" in legal and game.on_roll == 0:
        # The box doubled: a member answers alone (the box is never asked then).
        verdict = engine.cube_action(game.position, cube_context(game, game.on_roll, 0, (0, 0)))
        return {"action": "take" if verdict.take else "pass"}
    command = computer_command(engine, game, 0, (0, 0)).to_json()
    if command["action"] == "double" and "double" not in legal:
        return {"action": "roll"}  # the team refused this turn's double
    return command


def _checked(parse: Callable[[dict[str, Any]], T], data: dict[str, Any]) -> T:
    """``parse(data)``, a malformed command refused with 422 ``invalid_action``."""
    try:
        return parse(data)
    except InvalidCommandError as exc:
        raise ServiceError(422, "invalid_action", str(exc)) from None


def _rebuild(stored: StoredTable) -> AnyTable:
    row = stored.row
    seats = [
        SeatInfo(s.name, player_id=s.player_id, level=Level(s.level) if s.level else None)
        for s in stored.seats
    ]
    dice = FairDice(bytes.fromhex(row.server_seed), row.client_seed)
    settings = dict(row.settings)
    kind = settings.pop("kind", None)
    rules = TableRules.from_json(settings)
    table: AnyTable
    if kind == "chouette":
        table = ChouetteTable(row.id, rules, seats, dice)
        table.replay([(a.seat, a.command) for a in stored.actions])
    else:
        table = LiveTable(row.id, rules, seats, dice)
        table.replay([(a.seat, Command.from_json(a.command)) for a in stored.actions])
    if row.status == "finished":
        table.finish()
    return table
