"""The server's services: tables created, joined, played and watched.

One authority per table
    Every change to a table (a seat taken or left, a dice contribution, an
    action, the next game, the end) goes through :meth:`TableService._change`:
    the change is checked against the table's state, and its log entries are
    committed with a compare-and-set on the sequence number the check saw
    (:meth:`~nard.server.storage.Storage.commit`). Two processes that race
    from the same state cannot both commit: the loser reloads and checks its
    change again against the winner's state, which refuses it (409 and the
    fresh state) or takes it; a refusal is only given on a state read from the
    database. Watchers are told only what was committed, and the dice seed is
    revealed only by a committed change that ends the table.

The computer's turns
    When a table waits for a computer seat, one process thinks for it: the
    one holding the table's lease in the database (taken with the commit that
    gave the computer the turn, or by :meth:`Storage.acquire_lease`). Loading
    a table whose computer is to act starts its turn, so a table whose
    process died while thinking continues once the lease has expired. The
    engine thinks in worker processes (:mod:`nard.server.thinking`), or without
    them on the event loop for the 0-ply levels and in a thread pool for world
    class.

Several processes
    With ``redis_url`` each commit (and chat message) is announced on the
    table's own Redis channel (:func:`table_channel`), to which a process
    subscribes while it has WebSockets on the table: those processes bring
    their copy up to date and push it to their sockets, and the others hear
    nothing (on a shared channel every process read every commit of every
    table). A process that subscribes to a table's channel says so on
    :data:`CHANNEL` (``follow``; ``unfollow`` when it leaves, ``gone`` when it
    stops), and a process announces a table's commits only while another
    follows it: a table played and watched in one process costs Redis
    nothing. On hearing ``follow`` a process announces the table once at once
    if it has it in hand, for a commit it made before hearing; a process
    that (re)subscribes asks everyone what they follow (``who``), and tables
    whose channels have no subscribers left (a process killed outright) are
    forgotten by a check every ``follower_check`` seconds, when each process
    also reminds the others of what it follows (``following``).
    Sign-outs go to every process on :data:`CHANNEL`. The listener
    reconnects with back-off and, on every (re)subscription, resynchronises
    the tables it covers from the database; while Redis is down, watched
    tables are polled from the database instead. Reads never trust the cache:
    each checks the table's sequence number in the database first.

Routes call these methods and nothing else; every refusal is a
:class:`ServiceError` with an HTTP status and a code, so the web layer has
one error shape.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import orjson
from redis import Redis as SyncRedis
from redis.asyncio import Redis
from redis.asyncio.client import PubSub

from nard.computer import DecisionSnapshot, computer_command, cube_context, forced_command
from nard.core import NardError, Position
from nard.engine import Engine, Level
from nard.engine.cube import CubeContext, cube_efficiency, cubeful_equity, written_context
from nard.match.clock import TimeControl
from nard.match.commands import Command, InvalidCommandError
from nard.match.dice import (
    SEED_BYTES,
    InvalidFairDiceError,
    check_contribution,
    seed_commitment,
)
from nard.match.game import Decision, Game, GameAction, MatchStateError
from nard.match.rating import INITIAL_RATING
from nard.notation.json_record import write_json
from nard.notation.mat import write_mat
from nard.notation.positions import read_written_position
from nard.notation.sgf import write_sgf
from nard.server.announcer import Announcer
from nard.server.chouette import ChouetteTable, parse_command
from nard.server.metrics import Metrics
from nard.server.models import PlayerRow, SanctionRow
from nard.server.ratings import rated_result
from nard.server.storage import KEEP, ConflictError, Lease, Storage, StoredTable, aware
from nard.server.tables import (
    TABLE_SEAT,
    ContributionClosedError,
    GameOverError,
    LiveTable,
    NotYourTurnError,
    SeatInfo,
    TableClosedError,
    TableRules,
)
from nard.server.thinking import ThinkerPool, engine_for

__all__ = [
    "CHANNEL",
    "TABLE_CHANNEL",
    "AnyTable",
    "NewTable",
    "ServiceError",
    "TableService",
    "Watcher",
    "sanction_text",
    "session_news",
    "table_channel",
]

log = logging.getLogger("nard.server")

AnyTable = LiveTable | ChouetteTable
"""A two-player match or money session, or a chouette."""

ENGINE_API_BACKLOG = {Level.WORLD_CLASS: 8, Level.ROLLER: 2}
"""The engine API's requests at a deep level that one server process takes at once
(thinking or waiting to); more are refused (503 ``engine_busy``), so that programs
asking for the roller (up to 4 s an answer, 60 requests a minute per address) cannot
queue hours of thinking in front of the hints and of whatever else they ask."""

INLINE_LEVELS = frozenset({Level.BEGINNER, Level.INTERMEDIATE, Level.EXPERT})
"""The levels that decide at 0 ply (about a millisecond a decision in match play, the
cube's at 1 ply included): without worker processes they think on the event loop,
where handing the decision to a thread and back would cost more than the decision
(and the threads' turns at Python's lock delay every request). World class searches
2 ply (up to 0.2 s) and thinks in the thread pool."""

CHANNEL = "nard:tables"
"""The Redis channel every server process listens on: sign-outs (whose sockets
close wherever they are) and who follows which table."""
TABLE_CHANNEL = "nard:table:"
"""The prefix of a table's own Redis channel (:func:`table_channel`)."""


def table_channel(table_id: str) -> str:
    """The Redis channel of a table's commits and chat: the processes with sockets on
    the table listen to it.

    >>> table_channel("abc")
    'nard:table:abc'
    """
    return TABLE_CHANNEL + table_id


T = TypeVar("T")
Entries = list[tuple[int, dict[str, Any]]]


def _utcnow() -> datetime:
    return datetime.now(UTC)


class ServiceError(NardError):
    """A request the service refuses: ``status`` (HTTP) and ``code`` say why; ``table``
    is the table as it now is, where the refusal is about its state."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        table: AnyTable | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.table = table
        self.retry_after = retry_after
        """Seconds after which the request may be made again (``Retry-After``)."""


@dataclass(frozen=True)
class NewTable:
    """A table to set up: against the computer at ``level`` or a person
    (``level`` None), the creator in ``seat`` (0 or 1)."""

    rules: TableRules
    level: Level | None
    seat: int = 0
    public: bool = False
    """Listed in the lobby (otherwise joined by its invite link only)."""
    chouette: int = 0
    """Players at a chouette table (3-8; 0 for a two-player table)."""
    computers: int = 0
    """Seats of a chouette the computer takes at ``level`` (the rest are open)."""
    rated: bool = False
    """A rated match (docs/ratings.md): accounts only, match play, two seats."""
    time_control: TimeControl | None = None
    """The clocks (docs/clocks.md); None: untimed."""
    challenged: PlayerRow | None = None
    """The one player invited to the open seat (a challenge by name, a rematch)."""
    rematch_of: str | None = None
    seek: dict[str, Any] | None = None
    """A lobby seek: the rating range of acceptable opponents (docs/server.md)."""


@dataclass
class Change:
    """What an operation on a table did: its log entries and what else the table's
    row must say after it."""

    entries: Entries
    seats: dict[int, dict[str, Any]] = field(default_factory=dict)
    seed_deadline: datetime | None = KEEP
    """A new deadline for the contributions (None clears it; :data:`KEEP`: unchanged)."""
    preempted: bool = False
    """The caller's operation was not run: a player's time had run out, and these
    entries end the table instead."""


class Watcher:
    """One WebSocket watching a table: the player behind it (None: a spectator), the
    sign-in session it is bound to, and a bounded queue of messages to send.

    A watcher whose queue is full (a client that does not read) is dropped, not
    waited for: its queue then holds only ``None``, the sign to close.
    """

    def __init__(self, player: PlayerRow | None, session: str | None, *, limit: int = 64) -> None:
        self.player = player
        self.session = session
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(limit)
        self.closed_because: str | None = None
        self.on_overflow: Callable[[], None] | None = None
        """Called once if the watcher is dropped for not reading (the metrics count it)."""

    def offer(self, text: str | None) -> None:
        """Queue ``text`` for sending (from any thread); None closes the socket."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self._put(text)
        else:
            self.loop.call_soon_threadsafe(self._put, text)

    def drop(self, reason: str) -> None:
        """Close this watcher's socket (``reason`` goes in the close frame)."""
        if self.closed_because is None:
            self.closed_because = reason
        self.offer(None)

    def _put(self, text: str | None) -> None:
        if text is None or self.closed_because is not None:
            self._close_now()
            return
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.closed_because = "too slow: messages were not read"
            self._close_now()
            if self.on_overflow is not None:
                self.on_overflow()

    def _close_now(self) -> None:
        while not self.queue.empty():
            self.queue.get_nowait()
        self.queue.put_nowait(None)


class TableService:
    """Tables in play, backed by ``storage``.

    ``server_seeds`` makes each table's secret dice seed (32 bytes; default
    :func:`secrets.token_bytes`); tests give a seeded one. ``clock`` is the
    time source (UTC datetimes) of the contributions' deadline and the
    computer's lease.
    """

    def __init__(
        self,
        storage: Storage,
        *,
        engine_workers: int = 2,
        engine_processes: int = 0,
        server_seeds: Callable[[], bytes] | None = None,
        redis_url: str | None = None,
        clock: Callable[[], datetime] = _utcnow,
        contribution_timeout: float = 120.0,
        computer_lease: float = 15.0,
        away_grace: float = 60.0,
        presence_interval: float = 10.0,
        cache_size: int = 2000,
        idle_eviction: float = 600.0,
        watch_queue: int = 64,
        spectator_interval: float = 0.2,
        poll_interval: float = 1.0,
        redis_backoff: tuple[float, float] = (0.1, 5.0),
        follower_check: float = 60.0,
        metrics: Metrics | None = None,
    ) -> None:
        self.storage = storage
        self.redis_url = redis_url
        self.clock = clock
        self.contribution_timeout = timedelta(seconds=contribution_timeout)
        self.computer_lease = timedelta(seconds=computer_lease)
        self.away_grace = timedelta(seconds=away_grace)
        """How long a player may be away from a match against a person before the
        opponent may claim it."""
        self.presence_interval = presence_interval
        self.cache_size = cache_size
        self.idle_eviction = idle_eviction
        self.watch_queue = watch_queue
        self.poll_interval = poll_interval
        self.redis_backoff = redis_backoff
        self.metrics = metrics or Metrics()
        self.origin = secrets.token_hex(8)  # this process, in leases and Redis messages
        self.redis_ok = False
        """Whether the Redis subscription is up (always False without ``redis_url``)."""
        self.stopping = False
        self._redis: Redis | None = None
        self._announcer: Announcer | None = None
        self._pubsub: PubSub | None = None  # the listener's subscription, while it is up
        self._subscribed: set[str] = set()  # its table channels
        self._following: asyncio.Task[None] | None = None
        self._following_for: PubSub | None = None  # the subscription it follows for
        self._followers: dict[str, set[str]] = {}
        """The other processes following each table (heard on :data:`CHANNEL`): a
        table's commits are announced only while some process follows it."""
        self._follow_marks: dict[str, int] = {}  # table -> when a follow was last heard
        self._last_chat: dict[str, int] = {}  # table -> the last message posted here
        self._follow_count = 0
        self.follower_check = follower_check
        self._starts = 0  # start() calls not yet stopped (one per test client on this app)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._server_seeds = server_seeds or (lambda: secrets.token_bytes(SEED_BYTES))
        self._pool = ThreadPoolExecutor(engine_workers, thread_name_prefix="nard-engine")
        self._thinkers = ThinkerPool(engine_processes) if engine_processes > 0 else None
        self._engine_warmed = threading.Event()
        self._queued = 0  # decisions waiting for or in the pool (changed on the event loop)
        self._live: dict[str, AnyTable] = {}
        self._used: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._watchers: dict[str, set[Watcher]] = {}
        self._thinking: dict[str, asyncio.Task[None]] = {}
        self._thinking_waiters: dict[str, list[asyncio.Future[None]]] = {}
        """The requests waiting for the computer's turns at a table to end."""
        self._held: dict[str, int] = {}  # table -> the sequence number this process leases
        self._prepared: dict[str, tuple[Any, asyncio.Future[dict[str, Any]]]] = {}
        """A computer's play asked for with its cube decision (:meth:`_ask_engine`): what
        it was asked for, and the answer to come."""
        self._engine_api_backlog: collections.Counter[Level] = collections.Counter()
        """The engine API's requests thinking at each level (:data:`ENGINE_API_BACKLOG`)."""
        self.spectator_interval = spectator_interval
        # The latest state the spectators of a table are due, and who they were.
        self._spectator_text: dict[str, tuple[str, list[Watcher]]] = {}
        self._spectator_due: set[str] = set()
        self._spectators_sent: dict[str, float] = {}
        self.session_listeners: list[Callable[[str], None]] = []
        """Called with a sign-in session's hash when it ends (here or in another process)."""
        self.metrics.bind(self)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
        if self._thinkers is not None:
            self._thinkers.close()

    async def start(self) -> None:
        """Start the background work: the Redis listener (with ``redis_url``) and the
        eviction of idle tables. Several starts (several test clients on one app)
        start it once; the last :meth:`stop` stops it."""
        self._starts += 1
        if self._starts > 1:
            return
        self.stopping = False
        self._spawn(self._evict_forever())
        self._spawn(self._rate_unrated_once())
        self._spawn(self._clocks_forever())
        self._spawn(self._presence_forever())
        if self._thinkers is not None:
            self._spawn(self._thinkers.warm_up())
        elif not self._engine_warmed.is_set():
            self._pool.submit(self._warm_engine)
        if self.redis_url is None:
            return
        self._announcer = Announcer(
            SyncRedis.from_url(self.redis_url, socket_connect_timeout=1, socket_timeout=1)
        )
        self._redis = Redis.from_url(
            self.redis_url,
            client_name=f"nard-{self.origin}",
            health_check_interval=15,
            socket_connect_timeout=2,
            socket_timeout=5,
        )
        self._spawn(self._listen_forever())
        self._spawn(self._poll_while_redis_down())
        self._spawn(self._check_followers_forever())

    async def stop(self) -> None:
        """Stop gracefully: close every socket (clients reconnect elsewhere), finish the
        thinking under way, give up this process's leases."""
        self.stopping = True
        for watchers in list(self._watchers.values()):
            for watcher in list(watchers):
                watcher.drop("the server is restarting")
        thinking = [t for t in self._thinking.values() if not t.done()]
        if thinking:
            await asyncio.wait(thinking, timeout=10)
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        with contextlib.suppress(Exception):
            self.storage.release_leases(self.origin)
        if self._redis is not None:
            with contextlib.suppress(Exception):
                await self._redis.aclose()
        if self._announcer is not None:
            if self.redis_ok:  # the others stop announcing for this process
                self._announcer.announce(CHANNEL, f"gone {self.origin}")
            self._announcer.close()
            self._announcer = None
        self.redis_ok = False

    async def _rate_unrated_once(self) -> None:
        try:
            done = await self.rate_unrated()
        except Exception:
            log.exception("could not rate the matches left unrated")
            return
        if done:
            log.info("rated %d matches left unrated", done)

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # -- engines -------------------------------------------------------------
    def engine(self, level: Level) -> Engine:
        """One engine per level, sharing one network (loaded on first use)."""
        return engine_for(level)

    async def _think(self, function: Callable[..., T], *args: Any, inline: bool = False) -> T:
        """``function(*args)`` in the engine's thread pool, counted in the queue size;
        ``inline``: on the event loop itself (a decision of well under a millisecond,
        which a trip to a thread and back would cost more than)."""
        if inline:
            return function(*args)
        self._queued += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, function, *args)
        finally:
            self._queued -= 1

    @contextlib.contextmanager
    def _engine_api_slot(self, level: Level) -> Iterator[None]:
        """A place for one engine API request at ``level`` for as long as it thinks;
        503 ``engine_busy`` where :data:`ENGINE_API_BACKLOG` are already taken."""
        limit = ENGINE_API_BACKLOG.get(level)
        if limit is not None and self._engine_api_backlog[level] >= limit:
            raise ServiceError(
                503,
                "engine_busy",
                f"the engine is thinking about {limit} requests at {level.value} already:"
                " ask again in a few seconds",
                retry_after=5,
            )
        self._engine_api_backlog[level] += 1
        try:
            yield
        finally:
            self._engine_api_backlog[level] -= 1

    async def _engine_call(
        self, level: Level, task: str, *arguments: Any, lane: Level | None = None
    ) -> Any:
        """What the engine at ``level`` returns for ``task`` (``rank_plays``,
        ``cube_analysis`` or ``evaluate``): in the engine workers where there are
        some (in the thread of ``lane``, by default the level's: a roller's seconds
        hold up neither the hints nor the computer's decisions), else in this
        process's threads."""
        if self._thinkers is None:
            return await self._think(getattr(self.engine(level), task), *arguments)
        self._queued += 1
        try:
            return await self._thinkers.call(level, task, *arguments, lane=lane)
        finally:
            self._queued -= 1

    @property
    def engine_warm(self) -> bool:
        """Whether the computer can answer at once: its worker processes are warm, or
        (without workers) this process's engine is loaded and compiled."""
        if self._thinkers is not None:
            return self._thinkers.warm
        return self._engine_warmed.is_set()

    def _warm_engine(self) -> None:
        """Load and compile this process's engine (without workers): in a thread at
        start-up, so that no request waits for it."""
        from nard.server.thinking import warm_up

        warm_up()
        self._engine_warmed.set()

    @property
    def queued_decisions(self) -> int:
        """Decisions waiting for or in the engine's threads."""
        return self._queued

    # -- tables ----------------------------------------------------------------
    async def create(self, creator: PlayerRow, spec: NewTable) -> AnyTable:
        """A new table, committed to its secret dice seed; nothing is rolled until the
        seated people have given their contributions."""
        server_seed = self._server_seeds()
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
                table = ChouetteTable(table_id, spec.rules, [me, *others], server_seed)
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
            table = LiveTable(table_id, spec.rules, seats, server_seed)
            settings = spec.rules.to_json()
        settings["fair_dice"] = "contributions"
        if spec.rated:
            if spec.chouette or not spec.rules.match_length:
                raise ServiceError(
                    422, "unrated_kind", "only a match between two players can be rated"
                )
            if creator.username is None:
                raise ServiceError(
                    403, "account_required", "rated matches are for accounts: register first"
                )
            table.rated = True
        if spec.challenged is not None:
            if spec.challenged.id == creator.id:
                raise ServiceError(422, "invalid_challenge", "you cannot challenge yourself")
            if spec.chouette or spec.level is not None or spec.public:
                raise ServiceError(
                    422, "invalid_challenge", "a challenge is a private table for two people"
                )
            table.challenged = spec.challenged.id
        table.rematch_of = spec.rematch_of
        if spec.seek is not None:
            table.seek = dict(spec.seek)
            settings["seek"] = table.seek
        if spec.time_control is not None:
            if spec.chouette:
                raise ServiceError(422, "invalid_time_control", "a chouette has no clocks")
            table.set_time_control(spec.time_control)
            settings["time_control"] = spec.time_control.to_json()
        for seat in table.seats:
            if seat.level is not None:
                self.engine(seat.level)  # a missing network fails here, before anything is stored
        deadline = None if table.status == "waiting" else self.clock() + self.contribution_timeout
        table.seed_deadline = deadline
        table.invite_token = secrets.token_urlsafe(12)
        table.public = spec.public and any(s.is_open for s in table.seats)
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
            commitment=seed_commitment(server_seed),
            invite_token=table.invite_token,
            creator_id=creator.id,
            public=table.public,
            seed_deadline=deadline,
            rated=table.rated,
            challenged_id=table.challenged,
            rematch_of=table.rematch_of,
        )
        self._cache(table)
        self.metrics.tables_created.inc()
        self._present(table, {creator.id})
        return table

    def _present(self, table: AnyTable, player_ids: set[int]) -> None:
        """The seated players among ``player_ids`` are at ``table`` now (presence)."""
        seats = [n for n, s in enumerate(table.seats) if s.player_id in player_ids]
        if not seats:
            return
        try:
            self.storage.seen(table.id, seats, self.clock())
        except Exception:
            log.warning("could not record presence at table %s", table.id, exc_info=True)

    async def get(self, table_id: str) -> AnyTable:
        """The table as the database has it now (a change in flight in this process is
        waited for); when the computer is to act and no process thinks for it, its
        turn is taken first."""
        async with self._lock(table_id):
            table = await self._current(table_id)
        if self._computer_waits(table) and not self.stopping:
            after = await self._computer_turns(table_id)
            if after is not None:
                return after
        return table

    def seat_of(self, table: AnyTable, player: PlayerRow | None) -> int | None:
        if player is None:
            return None
        for number, seat in enumerate(table.seats):
            if seat.player_id == player.id:
                return number
        return None

    async def join(
        self,
        table_id: str,
        player: PlayerRow,
        invite: str | None,
        contribution: str | None = None,
        expect_seq: int | None = None,
    ) -> AnyTable:
        """Sit ``player`` in the table's open seat: a lobby table, or with its invite;
        ``contribution`` is their share of the dice, if they give it at once."""

        def sit(table: AnyTable, seat: int | None) -> Change:
            if seat is not None:
                if contribution is None or seat not in table.missing_contributions():
                    return Change([])
                return Change(table.contribute(seat, contribution))
            if table.finished:
                raise ServiceError(409, "table_closed", f"table {table_id} is finished")
            if table.rated and player.username is None:
                raise ServiceError(
                    403, "account_required", "rated matches are for accounts: register first"
                )
            if table.challenged is not None and table.challenged != player.id:
                raise ServiceError(
                    403, "challenge_for_another", "this table waits for the player it challenged"
                )
            if table.seek is not None:
                self._check_seek_range(table, player)
            seated = {s.player_id for s in table.seats if s.player_id is not None}
            if seated and seated & self.storage.blockers_of(player.id):
                raise ServiceError(403, "blocked", "a player at this table has blocked you")
            if seated and self.storage.suspended_among(seated, self.clock()):
                raise ServiceError(
                    403, "host_suspended", "a moderator has suspended a player at this table"
                )
            if (
                table.challenged != player.id
                and not table.public
                and not (
                    invite and secrets.compare_digest(invite.encode(), table.invite_token.encode())
                )
            ):
                raise ServiceError(403, "invite_required", "this table is joined by invitation")
            open_seats = [i for i, s in enumerate(table.seats) if s.is_open]
            if not open_seats:
                raise ServiceError(409, "table_full", f"table {table_id} has no open seat")
            if contribution is not None:
                _check_contribution(contribution)
            number = open_seats[0]
            entries = table.sit(number, SeatInfo(player.display_name, player_id=player.id))
            change = Change(
                entries, seats={number: {"player_id": player.id, "name": player.display_name}}
            )
            if table.status != "waiting":  # the last seat: the contributions are due
                table.seed_deadline = self.clock() + self.contribution_timeout
                change.seed_deadline = table.seed_deadline
            if contribution is not None:
                change.entries += table.contribute(number, contribution)
            return change

        table = await self._change(table_id, player, sit, seated=False, expect_seq=expect_seq)
        self._present(table, {player.id})
        return table

    async def claim_tables(self, guest: PlayerRow, account: PlayerRow) -> list[str]:
        """A guest signed in to ``account``: every table the guest sits at passes to
        the account (a ``claim`` in its log, its seat row), unless the account sits
        there too. Returns the tables claimed."""
        claimed: list[str] = []

        def claim(table: AnyTable, seat: int | None) -> Change:
            assert seat is not None
            if any(s.player_id == account.id for s in table.seats):
                return Change([])  # the account plays here already: the guest's seat stays
            info = SeatInfo(account.display_name, player_id=account.id)
            return Change(
                table.claim(seat, info),
                seats={seat: {"player_id": account.id, "name": account.display_name}},
            )

        for stored in self.storage.tables_of(guest.id, limit=1000):
            if not any(s.player_id == guest.id for s in stored.seats):
                continue
            table = await self._change(stored.row.id, guest, claim)
            if self.seat_of(table, account) is not None:
                claimed.append(table.id)
        return claimed

    def _check_seek_range(self, table: AnyTable, player: PlayerRow) -> None:
        """A seek's rating range: the joining player's rating must be inside it."""
        assert table.seek is not None
        found = self.storage.player(player.id)
        rating = float(found.rating) if found is not None else INITIAL_RATING
        low, high = table.seek.get("min_rating"), table.seek.get("max_rating")
        if (low is not None and rating < low) or (high is not None and rating > high):
            raise ServiceError(
                403,
                "rating_out_of_range",
                f"this seek is for ratings {low or '-'} to {high or '-'}, yours is {rating:.0f}",
            )

    async def seek(
        self,
        player: PlayerRow,
        rules: TableRules,
        *,
        rated: bool,
        time_control: TimeControl | None,
        min_rating: float | None,
        max_rating: float | None,
    ) -> AnyTable:
        """Find an opponent: the oldest open seek this one fits (same match length,
        time control and rating, each player's rating inside the other's range) is
        joined at once; with none, this seek waits in the lobby (docs/server.md)."""
        control = time_control.to_json() if time_control else None
        for stored in reversed(self.storage.open_tables(self.clock(), limit=200)):
            row = stored.row
            seek = row.settings.get("seek")
            if seek is None or row.creator_id == player.id or bool(row.rated) != rated:
                continue
            if row.settings.get("match_length") != rules.match_length:
                continue
            if row.settings.get("time_control") != control:
                continue
            host = self.storage.player(row.creator_id)
            theirs = float(host.rating) if host is not None else INITIAL_RATING
            if (min_rating is not None and theirs < min_rating) or (
                max_rating is not None and theirs > max_rating
            ):
                continue
            try:
                return await self.join(row.id, player, None)
            except ServiceError:
                continue  # taken meanwhile, or this player does not fit its range
        spec = NewTable(
            rules=rules,
            level=None,
            public=True,
            rated=rated,
            time_control=time_control,
            seek={"min_rating": min_rating, "max_rating": max_rating},
        )
        return await self.create(player, spec)

    async def challenge(self, player: PlayerRow, username: str, spec: NewTable) -> AnyTable:
        """A private table for ``player`` and the account ``username``, who finds it
        among their challenges and joins it (or declines)."""
        target = self.storage.player_by_username(username)
        if target is None or target.username is None:
            raise ServiceError(404, "no_such_player", f"no player is called {username!r}")
        if player.id in self.storage.blocked_by(target.id):
            raise ServiceError(
                403, "blocked", f"{target.display_name} does not take your challenges"
            )
        return await self.create(player, replace(spec, challenged=target, public=False))

    def challenges(self, player: PlayerRow) -> list[StoredTable]:
        """The tables that challenge ``player`` and wait for an answer."""
        return self.storage.challenges_for(player.id, self.clock())

    async def decline(self, table_id: str, player: PlayerRow) -> AnyTable:
        """The challenged player says no: the table ends unplayed."""

        def decline(table: AnyTable, _seat: int | None) -> Change:
            if table.challenged != player.id:
                raise ServiceError(403, "not_challenged", "this challenge is not for you")
            if table.status != "waiting":
                raise ServiceError(409, "table_closed", "the challenge is no longer open")
            return Change(table.end(TABLE_SEAT))

        return await self._change(table_id, player, decline, seated=False)

    async def rematch(self, table_id: str, player: PlayerRow) -> AnyTable:
        """The same match again: against the computer a new table at once; against a
        person the rematch the opponent offered is joined, or one is offered to them
        (a challenge they see on their page)."""
        old = await self._current(table_id)
        seat = self.seat_of(old, player)
        if seat is None or not isinstance(old, LiveTable):
            raise ServiceError(403, "not_seated", "a rematch is for the match's players")
        if not old.finished:
            raise ServiceError(409, "not_finished", "the match is still going", table=old)
        other = old.seats[1 - seat]
        control = old.clocks.control if old.clocks is not None else None
        if other.level is None and other.player_id is not None:
            offer = self.storage.rematch_offer(table_id, other.player_id)
            if offer is not None:
                return await self.join(offer.row.id, player, None)
        opponent = (
            self.storage.player(other.player_id)
            if other.level is None and other.player_id is not None
            else None
        )
        spec = NewTable(
            rules=old.rules,
            level=other.level,
            seat=seat,
            rated=old.rated,
            time_control=control,
            challenged=opponent,
            rematch_of=table_id if opponent is not None else None,
        )
        return await self.create(player, spec)

    async def leave(
        self, table_id: str, player: PlayerRow, expect_seq: int | None = None
    ) -> AnyTable:
        """Give up one's seat before the first roll (the table's creator ends it instead)."""

        def leave(table: AnyTable, seat: int | None) -> Change:
            assert seat is not None
            entries = table.leave(seat)
            table.seed_deadline = None
            return Change(
                entries,
                seats={seat: {"player_id": None, "name": "open seat"}},
                seed_deadline=None,
            )

        return await self._change(table_id, player, leave, expect_seq=expect_seq)

    async def contribute(
        self, table_id: str, player: PlayerRow, contribution: str, expect_seq: int | None = None
    ) -> AnyTable:
        """``player``'s contribution to the table's dice; the last one starts the game."""
        _check_contribution(contribution)

        def give(table: AnyTable, seat: int | None) -> Change:
            assert seat is not None
            return Change(table.contribute(seat, contribution))

        return await self._change(table_id, player, give, expect_seq=expect_seq)

    async def start_table(
        self, table_id: str, player: PlayerRow, expect_seq: int | None = None
    ) -> AnyTable:
        """Start a table whose contributions are overdue: the missing ones are logged as
        empty (``timeout``), then the first roll."""

        def start(table: AnyTable, seat: int | None) -> Change:
            if table.started:
                raise ServiceError(409, "started", f"table {table_id} has started", table=table)
            if table.status == "waiting":
                raise ServiceError(
                    409, "table_waiting", "the table waits for a player to sit", table=table
                )
            deadline = table.seed_deadline
            if deadline is not None and self.clock() < deadline:
                raise ServiceError(
                    409,
                    "contributions_pending",
                    f"the contributions are due until {deadline.isoformat()}: "
                    "the table starts when they are all in or then",
                    table=table,
                )
            return Change(table.time_out_contributions())

        return await self._change(table_id, player, start, expect_seq=expect_seq)

    async def act(
        self,
        table_id: str,
        player: PlayerRow,
        data: dict[str, Any],
        expect_seq: int | None = None,
    ) -> AnyTable:
        """``player`` gives the command ``data`` (its JSON object) in their own seat;
        the computer answers."""

        def act(table: AnyTable, seat: int | None) -> Change:
            assert seat is not None
            if isinstance(table, ChouetteTable):
                return Change(table.act(seat, _checked(parse_command, data)))
            return Change(table.act(seat, _checked(Command.from_json, data)))

        table = await self._change(table_id, player, act, expect_seq=expect_seq)
        self.metrics.actions.inc()
        return table

    async def next_game(
        self, table_id: str, player: PlayerRow, expect_seq: int | None = None
    ) -> AnyTable:
        """Start the next game of a money session."""

        def next_game(table: AnyTable, _seat: int | None) -> Change:
            if table.finished:
                raise ServiceError(409, "table_closed", f"table {table_id} is finished")
            try:
                return Change(table.next_game())
            except TableClosedError as exc:
                raise ServiceError(409, "game_in_progress", str(exc), table=table) from None

        return await self._change(table_id, player, next_game, expect_seq=expect_seq)

    async def end(
        self, table_id: str, player: PlayerRow, expect_seq: int | None = None
    ) -> AnyTable:
        """Stop a money session between games, or close a table that has not started.

        A match ends when it is won: a player who wants out resigns its games.
        """

        def end(table: AnyTable, seat: int | None) -> Change:
            assert seat is not None
            game = table.game
            if table.status == "playing":
                if table.match_length:
                    raise ServiceError(
                        409,
                        "match_in_progress",
                        "a match ends when it is won: resign its games",
                        table=table,
                    )
                if game is not None and not game.is_over:
                    raise ServiceError(
                        409, "game_in_progress", "finish or resign this game first", table=table
                    )
            if table.finished:
                return Change([])
            return Change(table.end(seat))

        return await self._change(table_id, player, end, expect_seq=expect_seq)

    async def abandon(
        self, table_id: str, player: PlayerRow, expect_seq: int | None = None
    ) -> AnyTable:
        """End a match or money session against the computer unfinished, at any point:
        it stays in the player's records as abandoned (no winner), its dice seed
        revealed. Against people a player resigns instead."""

        def abandon(table: AnyTable, seat: int | None) -> Change:
            assert seat is not None
            if table.finished:
                return Change([])
            people = [n for n, s in enumerate(table.seats) if s.level is None and n != seat]
            if people and isinstance(table, LiveTable) and table.status == "playing":
                return Change(table.time_out(seat, "left"))  # leaving a match loses it
            if people:
                raise ServiceError(
                    409,
                    "not_against_computer",
                    "a table that has not started is closed with end, not abandoned",
                    table=table,
                )
            return Change(table.end(seat, abandoned=True))

        return await self._change(table_id, player, abandon, expect_seq=expect_seq)

    async def _hinted(self, table_id: str, player: PlayerRow) -> tuple[Level, Game, CubeContext]:
        """The computer's level, the game and its cube and score for the seat to act, where
        hints (and rollouts) are given: tables against the computer, the caller's turn."""
        async with self._lock(table_id):  # the position, dice and score, as committed
            table = await self._current(table_id)
        seat = self.seat_of(table, player)
        computer = next((s.level for s in table.seats if s.level is not None), None)
        if computer is None or isinstance(table, ChouetteTable):
            raise ServiceError(403, "no_hints", "hints are for games against the computer")
        game = table.game
        if seat is None or table.to_act != seat or game is None:
            raise ServiceError(409, "not_your_turn", "a hint is for the seat to act")
        context = cube_context(game, game.on_roll, table.match_length, table.games.score)
        return Level(computer), game, context

    async def rollout_request(
        self,
        table_id: str,
        player: PlayerRow,
        *,
        trials: int,
        truncate: int = 11,
        cubeful: bool = False,
        seed: int = 1,
    ) -> str:
        """The payload of a rollout of the seat to act's decision (its roll's plays, or
        the cube before it rolls), at tables against the computer as hints are."""
        from nard.server.jobs import rollout_request

        _, game, context = await self._hinted(table_id, player)
        if game.decision in (Decision.PLAY, Decision.ROLL):
            dice = game.dice if game.decision is Decision.PLAY else None
            return rollout_request(
                game.position, dice, context, trials, truncate, cubeful=cubeful, seed=seed
            )
        raise ServiceError(409, "nothing_to_roll_out", "a rollout is of a roll or a cube decision")

    # -- the engine as a service (docs/engine-protocols.md) ----------------------
    def _engine_input(self, text: str) -> tuple[Position, CubeContext, Any]:
        try:
            written = read_written_position(text)
        except (NardError, ValueError) as exc:
            raise ServiceError(422, "invalid_position", str(exc)) from None
        position, match = written.position, written.match
        if position.is_game_over():
            raise ServiceError(422, "game_over", f"the game of {text!r} is over")
        context = written_context(written)
        return position, context, match

    async def engine_move(
        self, text: str, dice: tuple[int, int] | None, level: Level
    ) -> dict[str, Any]:
        """The plays of a roll ranked as ``level`` ranks them, by cubeful equity at the
        cube and score of ``text`` (Position ID, POSITION_ID:MATCH_ID or XGID)."""
        position, context, match = self._engine_input(text)
        roll = dice or (match.dice if match is not None else None)
        if roll is None:
            raise ServiceError(422, "no_dice", "give the dice, or an ID that has them")
        engine = self.engine(level)
        with self._engine_api_slot(level):
            ranked = await self._engine_call(level, "rank_plays", position, roll, context)
        best = ranked[0].ply if ranked else engine.plies
        return {
            "position_id": position.position_id(),
            "dice": list(roll),
            "level": level.value,
            "plies": engine.plies,
            "context": _context_json(context),
            "plays": [
                {
                    "play": position.format_play(r.play),
                    "moves": [[m[0], m[1]] for m in r.play.moves],
                    "equity": round(r.equity, 5),
                    "cubeful_equity": None if r.cubeful is None else round(r.cubeful, 5),
                    "probabilities": [round(p, 5) for p in r.probabilities],
                    "ply": r.ply,
                }
                for r in ranked[:20]
                if r.ply == best
            ],
        }

    async def engine_cube(self, text: str, level: Level) -> dict[str, Any]:
        """The cube decision of the side on roll, before it rolls, at ``level``."""
        position, context, _ = self._engine_input(text)
        engine = self.engine(level)
        with self._engine_api_slot(level):
            probabilities, cubeless, d = await self._engine_call(
                level, "cube_analysis", position, context
            )
        return {
            "position_id": position.position_id(),
            "level": level.value,
            "plies": engine.settings.cube_plies,
            "context": _context_json(context),
            "action": d.action,
            "double": d.double,
            "take": d.take,
            "beaver": d.beaver,
            "no_double": round(d.no_double, 5),
            "double_take": round(d.double_take, 5),
            "double_pass": round(d.double_pass, 5),
            "mwc": None
            if d.mwc_no_double is None
            else {
                "no_double": round(d.mwc_no_double, 5),
                "double_take": round(d.mwc_double_take or 0.0, 5),
                "double_pass": round(d.mwc_double_pass or 0.0, 5),
            },
            "cubeless_equity": round(cubeless, 5),
            "probabilities": [round(p, 5) for p in probabilities],
        }

    async def engine_eval(self, text: str, plies: int) -> dict[str, Any]:
        """The position's probabilities and equities at ``plies`` (0-2): cubeless, and
        cubeful at its cube and score (side on roll, before it rolls)."""
        position, context, _ = self._engine_input(text)
        # A 2-ply evaluation (up to a few tens of milliseconds) in world class's lane.
        lane = Level.WORLD_CLASS if plies >= 2 else Level.EXPERT
        with self._engine_api_slot(lane):
            probabilities, cubeless = await self._engine_call(
                Level.EXPERT, "evaluate", position, plies, lane=lane
            )
        cubeful = cubeful_equity(probabilities, context, cube_efficiency(position))
        return {
            "position_id": position.position_id(),
            "plies": plies,
            "context": _context_json(context),
            "probabilities": [round(p, 5) for p in probabilities],
            "cubeless_equity": round(cubeless, 5),
            "cubeful_equity": round(cubeful, 5),
            "cubeful_unit": "points per cube" if context.is_money else "match winning chances",
        }

    async def hint(self, table_id: str, player: PlayerRow) -> dict[str, Any]:
        """The engine's ranked plays or cube analysis for the seat to act, at tables
        against the computer."""
        computer, game, context = await self._hinted(table_id, player)
        # World class's hint at the tables of the two strongest levels (the roller's
        # rollouts are for its own decisions), the expert's at the others.
        strong = computer in (Level.WORLD_CLASS, Level.ROLLER)
        level = Level.WORLD_CLASS if strong else Level.EXPERT
        if game.decision is Decision.PLAY:
            dice = game.dice
            assert dice is not None
            # Ranked by cubeful equity at the table's cube and score, as the computer plays.
            ranked = await self._engine_call(level, "rank_plays", game.position, dice, context)
            return {
                "kind": "plays",
                "plays": [
                    {
                        "play": game.position.format_play(r.play),
                        "equity": round(r.equity, 4),
                        "cubeful_equity": None if r.cubeful is None else round(r.cubeful, 4),
                        "probabilities": [round(p, 4) for p in r.probabilities],
                        "ply": r.ply,
                    }
                    for r in ranked[:10]
                ],
            }
        analysis = await self._engine_call(level, "cube_analysis", game.position, context)
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

    # -- the one path of every change ---------------------------------------------
    def _lock(self, table_id: str) -> asyncio.Lock:
        lock = self._locks.get(table_id)
        if lock is None:
            lock = self._locks[table_id] = asyncio.Lock()
        return lock

    async def _change(
        self,
        table_id: str,
        player: PlayerRow,
        operation: Callable[[AnyTable, int | None], Change],
        *,
        expect_seq: int | None = None,
        seated: bool = True,
        flagging: bool = False,
    ) -> AnyTable:
        """Run ``operation`` on the table and commit what it did (see the module's
        docstring); then let the computer answer. A player whose time has run out
        loses first (the table ends; ``out_of_time`` for the caller unless
        ``flagging``, a request that only checks the clocks).

        The operation first runs on this process's copy: if that copy is behind the
        database the commit's compare-and-set fails, and the table is reloaded and
        the operation run again. Whatever does not end in a commit (a refusal, or
        nothing to do) is decided only on a copy checked against the database.
        """
        for _attempt in range(5):
            async with self._lock(table_id):
                table = self._live.get(table_id)
                checked = table is None
                if table is None:
                    table = await self._current(table_id)
                while True:
                    try:
                        before = table.seq
                        change = self._attempt(table, player, operation, expect_seq, seated)
                    except ServiceError:
                        if checked:
                            raise
                    else:
                        if change.entries or checked:
                            break
                    table = await self._current(table_id)  # was this copy behind?
                    checked = True
                if not change.entries:
                    return table
                lease = self._next_lease(table)
                try:
                    await self._commit(
                        table_id,
                        before,
                        change.entries,
                        status=table.status,
                        seats=change.seats,
                        client_seed=_new_client_seed(change.entries, table),
                        seed_deadline=change.seed_deadline,
                        lease=lease,
                    )
                except ConflictError:
                    self._drop(table_id)  # another process moved it: check again
                    self.metrics.conflicts.inc()
                    continue
                self._held_lease(table_id, table, lease)
                self._notify(table)
                self._rate(table)
            if change.preempted and not flagging:
                raise ServiceError(
                    409,
                    "out_of_time",
                    f"seat {table.timed_out}'s time ran out: the table has ended",
                    table=table,
                )
            if self._computer_waits(table):
                after = await self._computer_turns(table_id)
                return after if after is not None else table
            return table
        table = await self._current(table_id)
        raise ServiceError(
            409, "busy", "the table changed under this request: try again", table=table
        )

    def _attempt(
        self,
        table: AnyTable,
        player: PlayerRow,
        operation: Callable[[AnyTable, int | None], Change],
        expect_seq: int | None,
        seated: bool,
    ) -> Change:
        """``operation`` on ``table`` for ``player``, its refusals as :class:`ServiceError`
        (and nothing changed then)."""
        seat = self.seat_of(table, player)
        if seated and seat is None:
            raise ServiceError(403, "not_seated", f"you have no seat at table {table.id}")
        now = self.now_ms()
        late = None if table.clocks is None or table.finished else table.clocks.expired(now)
        if late is not None:  # whatever was asked, the table first ends on time
            change = Change(table.time_out(late), preempted=True)
            self._stamp(table, change.entries, now)
            return change
        change = self._run(table, seat, operation, expect_seq)
        self._stamp(table, change.entries, now)
        return change

    def now_ms(self) -> int:
        """The service's clock in whole milliseconds (the clocks' unit)."""
        return int(self.clock().timestamp() * 1000)

    @staticmethod
    def _stamp(table: AnyTable, entries: Entries, at: int) -> None:
        """At a table with clocks, each entry keeps the time it was committed at, and
        the clocks move on (:meth:`~nard.server.tables.TableBase.clock_after`)."""
        if table.clocks is None or not entries:
            return
        for _, entry in entries:
            entry["at"] = at
        table.clock_after(entries, at)

    def _run(
        self,
        table: AnyTable,
        seat: int | None,
        operation: Callable[[AnyTable, int | None], Change],
        expect_seq: int | None,
    ) -> Change:
        if expect_seq is not None and expect_seq != table.seq:
            raise ServiceError(
                409,
                "stale",
                f"the table moved on: action {table.seq} is next, not {expect_seq}",
                table=table,
            )
        try:
            return operation(table, seat)
        except ServiceError as exc:
            exc.table = exc.table or (table if exc.status == 409 else None)
            raise
        except NotYourTurnError as exc:
            raise ServiceError(409, "not_your_turn", str(exc), table=table) from None
        except GameOverError as exc:
            raise ServiceError(409, "between_games", str(exc), table=table) from None
        except ContributionClosedError as exc:
            raise ServiceError(409, "contribution_closed", str(exc), table=table) from None
        except TableClosedError as exc:
            raise ServiceError(409, "table_closed", str(exc), table=table) from None
        except InvalidFairDiceError as exc:
            raise ServiceError(422, "invalid_contribution", str(exc)) from None
        except (MatchStateError, InvalidCommandError, NardError) as exc:
            raise ServiceError(422, "illegal_action", str(exc)) from None

    def _next_lease(self, table: AnyTable) -> Lease | None:
        """The lease to commit with a change after which the computer acts: this process
        thinks for it next."""
        if not self._computer_waits(table) or self.stopping:
            return None
        return Lease(self.origin, self.clock() + self.computer_lease)

    def _held_lease(self, table_id: str, table: AnyTable, lease: Lease | None) -> None:
        if lease is None:
            self._held.pop(table_id, None)
        else:
            self._held[table_id] = table.seq

    @staticmethod
    def _computer_waits(table: AnyTable) -> bool:
        if table.status != "playing" or table.game is None:
            return False
        return any(table.seats[w].is_computer for w in table.waiting_for())

    def _rate(self, table: AnyTable) -> bool:
        """Rate the match if it is a finished rated one not rated yet
        (:mod:`nard.server.ratings`); whether this call rated it. A failure here is not
        the player's: the match stays finished and the catch-up at the next start
        (:meth:`rate_unrated`) rates it."""
        if not table.finished or not table.rated:
            return False
        result = rated_result(table)
        if result is None:
            return False
        try:
            changes = self.storage.rate_match(table.id, *result)
        except Exception:
            log.exception("could not rate the match at table %s", table.id)
            return False
        if changes:
            self.metrics.rated_matches.inc()
        return bool(changes)

    async def flag(self, table_id: str, player: PlayerRow) -> AnyTable:
        """Check the table's clocks (a player's page asks when the other's time is up):
        a player out of time loses now; otherwise nothing changes."""
        return await self._change(
            table_id, player, lambda _t, _s: Change([]), seated=False, flagging=True
        )

    async def enforce_clocks(self) -> list[str]:
        """End every table in this process whose running clock is out of time (another
        process may get there first: one of them commits). The tables ended."""
        now = self.now_ms()
        due = [
            table.id
            for table in list(self._live.values())
            if table.clocks is not None
            and not table.finished
            and table.clocks.expired(now) is not None
        ]
        ended = []
        for table_id in due:
            try:
                table = await self._change(
                    table_id, _NOBODY, lambda _t, _s: Change([]), seated=False, flagging=True
                )
            except ServiceError:
                continue
            if table.timed_out is not None:
                ended.append(table_id)
        return ended

    async def _clocks_forever(self, every: float = 0.5) -> None:
        """Run :meth:`enforce_clocks` every ``every`` seconds."""
        while not self.stopping:
            try:
                await self.enforce_clocks()
            except Exception:
                log.exception("could not enforce the clocks")
            await asyncio.sleep(every)

    async def rate_unrated(self) -> int:
        """Rate the finished rated matches that were not (their process died between
        the last action and the rating); the number rated."""
        rated = 0
        for table_id in self.storage.unrated_tables():
            with contextlib.suppress(ServiceError):
                if self._rate(await self._current(table_id)):
                    rated += 1
        return rated

    async def _commit(self, table_id: str, first_seq: int, entries: Entries, **kw: Any) -> None:
        """``Storage.commit_async``. The caller holds the table's lock, so nothing reads
        the table before the commit is decided; a commit cut short (the task
        cancelled) may or may not have landed, so the table is reloaded when next
        wanted."""
        try:
            await self.storage.commit_async(table_id, first_seq, entries, **kw)
        except ConflictError:
            raise
        except BaseException:
            self._drop(table_id)
            raise

    async def _computer_turns(self, table_id: str) -> AnyTable | None:
        """Let computer seats act while the table waits for one of them, in this process
        if it holds (or can take) the table's lease; the table after, or None when
        another process has the turn.

        The first caller thinks in its own task (:meth:`_think_in`); the callers that
        find the computer thinking at the table wait for that thinking."""
        loop = asyncio.get_running_loop()
        running = self._thinking.get(table_id)
        if running is not None and running.get_loop() is not loop:
            return self._live.get(table_id)
        if running is None:
            caller = asyncio.current_task()
            if caller is not None:
                return await self._think_in(table_id, caller)
            running = self._start_thinking(table_id)
        # Each caller waits on a future of its own, which the thinking settles as it
        # ends: a caller cancelled cancels only its own (the thinking goes on), and it
        # resumes one turn of the event loop sooner than by shielding the task (whose
        # end reaches a shield's waiter through two callbacks, each a turn of a loop
        # that serves every other request in between).
        waiter: asyncio.Future[None] = loop.create_future()
        self._thinking_waiters.setdefault(table_id, []).append(waiter)
        await waiter
        return self._live.get(table_id)

    async def _think_in(self, table_id: str, caller: asyncio.Task[Any]) -> AnyTable | None:
        """:meth:`_think_for` in the caller's own task, then its end to the callers that
        came to wait meanwhile. A task of its own would start a turn of the event loop
        later, and its end reach the caller another turn later: under load each turn
        serves every other request first, and these two turns were a third of the time
        a play's answer took (measured 2026-12-07: 6.6 and 7.4 ms of a median 32).

        If the caller is cancelled (its client or the server going away), what was
        thought is not committed: the table is reloaded when next wanted, and the
        computer's turn goes on in a task of its own, which the other callers then
        wait for."""
        self._thinking[table_id] = caller
        try:
            await self._think_for(table_id)
        except asyncio.CancelledError:
            if self._thinking.get(table_id) is caller:
                del self._thinking[table_id]
                self._drop(table_id)
                self._start_thinking(table_id)
            raise
        except BaseException as exc:
            self._thought(table_id, caller, exc)
            raise
        self._thought(table_id, caller, None)
        return self._live.get(table_id)

    def _start_thinking(self, table_id: str) -> asyncio.Task[None]:
        """The computer's turns at the table in a task of its own."""
        running = asyncio.get_running_loop().create_task(self._think_and_tell(table_id))
        self._thinking[table_id] = running
        running.add_done_callback(functools.partial(self._thinking_ended, table_id))
        return running

    async def _think_and_tell(self, table_id: str) -> None:
        """:meth:`_think_for`, then its end (or its error) to every caller waiting."""
        error: BaseException | None = None
        try:
            await self._think_for(table_id)
        except BaseException as exc:
            error = exc
            raise
        finally:
            self._thought(table_id, asyncio.current_task(), error)

    def _thinking_ended(self, table_id: str, task: asyncio.Task[None]) -> None:
        """The thinking task's end: its error counts as seen (its waiters were given
        it), and a task cancelled before it started, which never ran its
        ``finally``, tells its waiters here."""
        error = asyncio.CancelledError() if task.cancelled() else task.exception()
        self._thought(table_id, task, error)

    def _thought(
        self, table_id: str, task: asyncio.Task[Any] | None, error: BaseException | None
    ) -> None:
        """The computer's turns at the table ended (``error``: how they failed): the
        callers waiting are told, once."""
        if task is None or self._thinking.get(table_id) is not task:
            return
        del self._thinking[table_id]
        for waiter in self._thinking_waiters.pop(table_id, []):
            if waiter.done():
                continue
            if error is None:
                waiter.set_result(None)
            elif isinstance(error, asyncio.CancelledError):
                waiter.cancel()
            else:
                waiter.set_exception(error)

    async def _think_for(self, table_id: str) -> None:
        """The computer's turns at the table: every step it takes until the table waits
        for someone else is thought out, then committed in one transaction."""
        while not self.stopping:
            async with self._lock(table_id):
                table = self._live.get(table_id)
                if table is None or self._held.get(table_id) != table.seq:
                    table = await self._current(table_id)
                if not self._computer_waits(table):
                    self._held.pop(table_id, None)
                    return
                now = self.clock()
                if self._held.get(table_id) != table.seq and not self.storage.acquire_lease(
                    table_id, table.seq, Lease(self.origin, now + self.computer_lease), now
                ):
                    return  # another process thinks for it
                self._held[table_id] = before = table.seq
                entries: Entries = []
                try:
                    while self._computer_waits(table):
                        entries += await self._computer_step(table)
                except Exception:
                    self._forget_prepared(table_id)
                    log.exception("the computer failed to decide at table %s", table_id)
                    self.metrics.computer_failures.inc()
                    self._drop(table_id)  # it may have taken some steps: reload
                    self.storage.release_lease(table_id, self.origin)
                    return
                self._forget_prepared(table_id)  # the computer doubled: its play waits
                self._stamp(table, entries, self.now_ms())
                try:
                    await self._commit(table_id, before, entries, status=table.status)
                except ConflictError:
                    self._drop(table_id)
                    self.metrics.conflicts.inc()
                    continue
                self._held.pop(table_id, None)
                self._notify(table)
                self._rate(table)
                return

    async def _computer_step(self, table: AnyTable) -> Entries:
        """One decision of the computer seat the table waits for, taken at the table."""
        seat = next(w for w in table.waiting_for() if table.seats[w].is_computer)
        level = table.seats[seat].level
        assert level is not None
        started = time.perf_counter()
        inline = level in INLINE_LEVELS
        if isinstance(table, ChouetteTable):
            answer = await self._think(
                chouette_computer, self.engine(level), table, seat, inline=inline
            )
            self.metrics.think_seconds.observe(time.perf_counter() - started)
            return table.act(seat, answer)
        game = table.game
        assert game is not None
        forced = forced_command(game)
        if forced is not None:  # no choice to think about: no trip to the engine
            return table.act(seat, forced)
        if self._thinkers is not None:
            self._queued += 1
            try:
                data = await self._ask_engine(table, game, level)
            finally:
                self._queued -= 1
            command = Command.from_json(data)
        else:
            command = await self._think(
                computer_command,
                self.engine(level),
                game,
                table.match_length,
                table.games.score,
                inline=inline,
            )
        self.metrics.think_seconds.observe(time.perf_counter() - started)
        return table.act(seat, command)

    async def _ask_engine(self, table: LiveTable, game: Game, level: Level) -> dict[str, Any]:
        """The engine workers' answer to the computer's decision in ``game``.

        Where the computer decides whether to double before it rolls, its play after
        the roll is asked for in the same write, as a second decision the worker takes
        after the first, from a snapshot of its own with the dice the table's seed
        gives next; the cube decision's snapshot has no dice, as always. If the
        computer rolls, its play is then ready (or on its way) when the table asks for
        it, a trip to the worker sooner: a computer's turn with a cube decision took
        two trips, each a wait for the worker's queue and for turns of the event loop.
        If it doubles, or the table is not at that play when it asks (a take changed
        the cube), the prepared answer is dropped."""
        assert self._thinkers is not None
        await self._thinkers.warm_up()
        snapshot = DecisionSnapshot.of(game)
        context = (level, snapshot, table.match_length, table.games.score)
        prepared = self._prepared.pop(table.id, None)
        if prepared is not None:
            if prepared[0] == context:
                return await prepared[1]
            prepared[1].cancel()
        questions = [context]
        after = self._play_after_roll(table, snapshot)
        if after is not None:
            questions.append((level, after, table.match_length, table.games.score))
        futures = self._thinkers.ask(questions)
        if after is not None:
            self._prepared[table.id] = (questions[1], futures[1])
        return await futures[0]

    @staticmethod
    def _play_after_roll(table: LiveTable, snapshot: DecisionSnapshot) -> DecisionSnapshot | None:
        """The snapshot of the computer's play if it rolls now, where that play is a
        choice (not forced) and the table's fair dice say what it rolls; else None."""
        fair = table.fair_dice
        if (
            snapshot.decision is not Decision.ROLL
            or fair is None
            or fair.is_revealed
            or table.dice.source is not fair
        ):
            return None
        after = replace(
            snapshot,
            decision=Decision.PLAY,
            legal=frozenset({GameAction.PLAY, GameAction.RESIGN}),
            dice=fair.upcoming_roll(),
        )
        return None if forced_command(after) is not None else after

    # -- the cache -----------------------------------------------------------------
    async def _current(self, table_id: str) -> AnyTable:
        """The table brought up to the database's sequence number; when that moved it on,
        this process's watchers are told (whoever noticed: a request, Redis, polling)."""
        state = self.storage.table_state(table_id)
        if state is None:
            self._drop(table_id)
            raise ServiceError(404, "no_such_table", f"no table {table_id!r}")
        seq, status = state
        table = self._live.get(table_id)
        known = table.seq if table is not None else None
        if table is not None and table.seq < seq:
            try:
                newer = self.storage.actions_since(table_id, table.seq)
                table.replay([(a.seat, a.command) for a in newer])
                if table.status == "waiting" or table.status == "seeding":
                    row = self.storage.table_row(table_id)
                    table.seed_deadline = aware(row.seed_deadline) if row else None
            except Exception:  # a copy that cannot follow is rebuilt from scratch
                log.warning("table %s rebuilt after a failed catch-up", table_id, exc_info=True)
                table = None
        if table is None or table.seq != seq:
            stored = self.storage.load_table(table_id)
            if stored is None:
                raise ServiceError(404, "no_such_table", f"no table {table_id!r}")
            table = _rebuild(stored)
            self.metrics.tables_loaded.inc()
        if status == "finished" and not table.finished:
            table.finish()  # ended before the log said so (tables from before end actions)
        self._cache(table)
        if table.seq != known and self._watchers.get(table_id):
            self._tell_watchers(table)
        return table

    def _cache(self, table: AnyTable) -> None:
        table.time_ms = self.now_ms
        self._live[table.id] = table
        self._used[table.id] = time.monotonic()
        if len(self._live) > self.cache_size:
            self._evict(keep=self.cache_size)

    def _forget_prepared(self, table_id: str) -> None:
        prepared = self._prepared.pop(table_id, None)
        if prepared is not None:
            prepared[1].cancel()  # the worker's answer, when it comes, is dropped

    def _drop(self, table_id: str) -> None:
        self._forget_prepared(table_id)
        self._live.pop(table_id, None)
        self._last_chat.pop(table_id, None)
        self._used.pop(table_id, None)
        self._held.pop(table_id, None)

    def _evict(self, *, keep: int | None = None, idle: float | None = None) -> int:
        """Forget tables nobody watches: the least recently used beyond ``keep``, or those
        unused for ``idle`` seconds. They are rebuilt from the database on demand."""
        now = time.monotonic()
        candidates = sorted(
            (
                (used, table_id)
                for table_id, used in self._used.items()
                if not self._watchers.get(table_id)
                and table_id not in self._thinking
                and not (table_id in self._locks and self._locks[table_id].locked())
            ),
        )
        evicted = 0
        excess = len(self._live) - keep if keep is not None else 0
        for used, table_id in candidates:
            if (keep is not None and evicted < excess) or (idle is not None and now - used > idle):
                self._drop(table_id)
                self._locks.pop(table_id, None)
                evicted += 1
        return evicted

    async def _evict_forever(self) -> None:
        while True:
            await asyncio.sleep(max(1.0, self.idle_eviction / 10))
            self._evict(idle=self.idle_eviction)

    @property
    def cached_tables(self) -> int:
        return len(self._live)

    # -- watching ----------------------------------------------------------------
    def watch(self, table_id: str, watcher: Watcher) -> None:
        self._watchers.setdefault(table_id, set()).add(watcher)
        self._seen(table_id, [watcher])
        self._follow_watched()

    def _seen(self, table_id: str, watchers: Sequence[Watcher]) -> None:
        """The seated players among ``watchers`` are connected now (presence)."""
        table = self._live.get(table_id)
        if table is not None:
            self._present(table, {w.player.id for w in watchers if w.player is not None})

    async def _presence_forever(self) -> None:
        """Every :attr:`presence_interval` seconds, the players connected here are
        recorded as present (other processes read it from the database)."""
        while not self.stopping:
            await asyncio.sleep(self.presence_interval)
            self.mark_present()

    def mark_present(self) -> None:
        """Record every seated player connected to this process as present now."""
        for table_id, watchers in list(self._watchers.items()):
            self._seen(table_id, list(watchers))

    def _connected(self, last_seen: datetime | None, now: datetime) -> bool:
        """Whether a player last seen at ``last_seen`` is still connected: within two
        and a half heartbeats."""
        window = timedelta(seconds=self.presence_interval * 2.5)
        return last_seen is not None and now - last_seen <= window

    def presence(self, table: AnyTable) -> dict[str, Any]:
        """Each person's seat: connected, or away since when and when the opponent may
        claim the match (docs/server.md, "Abandonment")."""
        seen = self.storage.last_seen(table.id)
        now = self.clock()
        seats = []
        for n, s in enumerate(table.seats):
            if s.level is not None or s.player_id is None:
                continue
            last = seen.get(n)
            connected = self._connected(last, now)
            seats.append(
                {
                    "seat": n,
                    "connected": connected,
                    "last_seen": last.isoformat() if last else None,
                    "claimable_at": None
                    if connected or last is None
                    else (last + self.away_grace).isoformat(),
                }
            )
        return {"now": now.isoformat(), "grace_s": self.away_grace.total_seconds(), "seats": seats}

    # -- chat ----------------------------------------------------------------------
    def _channel(self, table: AnyTable, player: PlayerRow | None) -> str:
        """``players`` for the seated, ``spectators`` for everyone else."""
        return (
            "players"
            if player is not None and self.seat_of(table, player) is not None
            else ("spectators")
        )

    async def post_chat(self, table_id: str, player: PlayerRow, text: str) -> dict[str, Any]:
        """A chat message at the table, in the sender's channel: stored, then sent to
        the channel's sockets here and, through Redis, in the other processes (a
        recipient who blocks the sender does not get it)."""
        text = text.strip()
        if not text:
            raise ServiceError(422, "empty_message", "a chat message needs some text")
        if len(text) > CHAT_LENGTH:
            raise ServiceError(
                422, "message_too_long", f"a chat message has at most {CHAT_LENGTH} characters"
            )
        muted = self.storage.sanction_in_force(player.id, "mute", self.clock())
        if muted is not None:
            raise ServiceError(403, "muted", sanction_text("you may not chat", muted))
        table = await self.get(table_id)
        channel = self._channel(table, player)
        row = self.storage.add_chat(
            table.id, player.id, player.display_name, channel, text, self.clock()
        )
        message = chat_json(row, player.username)
        self._deliver(table, message)
        self._last_chat[table.id] = row.id
        self._announce(table.id, self._chat_news(table.id, row.id))
        return message

    def _deliver(self, table: AnyTable, message: dict[str, Any]) -> None:
        watchers = [
            w
            for w in self._watchers.get(table.id, ())
            if self._channel(table, w.player) == message["channel"]
        ]
        if not watchers:
            return
        blockers = self.storage.blockers_of(int(message["player"]))
        text = orjson.dumps({"type": "chat", "message": message}).decode()
        for watcher in watchers:
            if watcher.player is None or watcher.player.id not in blockers:
                self._offer(watcher, text)

    async def _chat_from_elsewhere(self, table_id: str, message_id: str) -> None:
        """A message another process stored: to this process's sockets at the table."""
        table = self._live.get(table_id)
        if table is None or not self._watchers.get(table_id) or not message_id.isdigit():
            return
        row = self.storage.chat_message(int(message_id))
        if row is not None and row.table_id == table_id and row.removed_at is None:
            author = self.storage.player(row.player_id)
            self._deliver(table, chat_json(row, author.username if author else None))

    def chat_removed(self, table_id: str, message_ids: Sequence[int]) -> None:
        """Messages a moderator removed (``nard moderate remove``, heard on Redis): the
        pages at the table take them away (``{"type": "chat_removed", "ids"}``)."""
        if not message_ids:
            return
        text = orjson.dumps({"type": "chat_removed", "ids": list(message_ids)}).decode()
        for watcher in list(self._watchers.get(table_id, ())):
            self._offer(watcher, text)

    def chat_for(self, table: AnyTable, player: PlayerRow | None) -> list[dict[str, Any]]:
        """The caller's channel's last messages, without those of players it blocks."""
        hidden = self.storage.blocked_by(player.id) if player is not None else set()
        rows = self.storage.chat(table.id, self._channel(table, player), hidden)
        usernames = self.storage.usernames_of({r.player_id for r in rows})
        return [chat_json(r, usernames.get(r.player_id)) for r in rows]

    async def claim(self, table_id: str, player: PlayerRow) -> AnyTable:
        """The match is won by the caller: the opponent (a person) has been away longer
        than the grace period."""

        def claim(table: AnyTable, seat: int | None) -> Change:
            assert seat is not None
            if not isinstance(table, LiveTable) or table.status != "playing":
                raise ServiceError(409, "table_closed", "the match is not in play", table=table)
            other = table.seats[1 - seat]
            if other.level is not None:
                raise ServiceError(409, "not_away", "the computer never leaves", table=table)
            last = self.storage.last_seen(table.id).get(1 - seat)
            now = self.clock()
            if last is None or self._connected(last, now) or now - last < self.away_grace:
                raise ServiceError(
                    409,
                    "not_away",
                    f"{other.name} is connected, or has been away less than "
                    f"{self.away_grace.total_seconds():.0f} s",
                    table=table,
                )
            return Change(table.time_out(1 - seat, "disconnected"))

        return await self._change(table_id, player, claim)

    def unwatch(self, table_id: str, watcher: Watcher) -> None:
        self._seen(table_id, [watcher])  # last seen as the socket closes
        watchers = self._watchers.get(table_id)
        if watchers is not None:
            watchers.discard(watcher)
            if not watchers:
                del self._watchers[table_id]
                self._spectators_sent.pop(table_id, None)
                self._follow_watched()

    def watchers(self, table_id: str) -> int:
        return len(self._watchers.get(table_id, ()))

    @property
    def sockets(self) -> int:
        return sum(len(w) for w in self._watchers.values())

    def render(self, table: AnyTable, player: PlayerRow | None) -> dict[str, Any]:
        """The table as ``player`` (None: a spectator) sees it."""
        seat = self.seat_of(table, player)
        view = table.view(seat)
        if seat is not None and table.status == "waiting":
            view["invite"] = table.invite_token
        return view

    def _notify(self, table: AnyTable) -> None:
        """Tell this process's watchers, and the other processes through Redis."""
        self._tell_watchers(table)
        self._announce(table.id, self._table_news(table.id, table.seq))

    def _table_news(self, table_id: str, seq: int) -> str:
        """The announcement that the table is at ``seq`` (its channel's ``table``)."""
        return f"table {self.origin} {table_id} {seq}"

    def _chat_news(self, table_id: str, message_id: int) -> str:
        """The announcement of a chat message stored here (its channel's ``chat``)."""
        return f"chat {self.origin} {table_id} {message_id}"

    def _announce(self, table_id: str, message: str) -> None:
        """Announce ``message`` on the table's channel if another process follows the
        table; a table nobody else watches costs Redis nothing."""
        if self._followers.get(table_id):
            self._publish(table_channel(table_id), message)

    def _publish(self, channel: str, message: str) -> None:
        """Announce ``message`` to the other processes on ``channel``: queued for the
        announcer's thread (:mod:`nard.server.announcer`), which publishes it on Redis,
        so that no event loop waits for the round trip. While this process's
        subscription is down it says nothing: the others poll meanwhile."""
        if self._announcer is None or not self.redis_ok:
            return
        self._announcer.announce(channel, message)
        self.metrics.redis_published.inc()

    def _tell_watchers(self, table: AnyTable) -> None:
        """Queue the table's new state on every watcher, one serialisation per distinct
        viewer seat. The seated players' sockets get every state at once; spectators
        get the latest state at most every :attr:`spectator_interval` seconds (at once
        after a quiet spell), so that a crowd watching a fast table costs a few
        messages a second, not one per spectator per step."""
        texts: dict[int | None, str] = {}
        spectators = []
        for watcher in list(self._watchers.get(table.id, ())):
            seat = self.seat_of(table, watcher.player)
            if seat is None:
                spectators.append(watcher)
                continue
            text = texts.get(seat)
            if text is None:
                text = texts[seat] = self.state_text(table, watcher.player)
            self._offer(watcher, text)
        if spectators:
            self._spectator_text[table.id] = (self.state_text(table, None), spectators)
            self._schedule_spectators(table.id)

    def state_text(self, table: AnyTable, player: PlayerRow | None) -> str:
        """The table as a socket message to ``player`` (``None``: a spectator)."""
        return orjson.dumps({"type": "table", "table": self.render(table, player)}).decode()

    def _offer(self, watcher: Watcher, text: str) -> None:
        if watcher.on_overflow is None:
            watcher.on_overflow = self.metrics.dropped_sockets.inc
        watcher.offer(text)

    def _schedule_spectators(self, table_id: str) -> None:
        if table_id in self._spectator_due:
            return  # a send is already due: it takes the latest state
        wait = self._spectators_sent.get(table_id, -1e9) + self.spectator_interval
        delay = max(0.0, wait - time.monotonic())
        if delay == 0.0:
            self._flush_spectators(table_id)
        else:
            self._spectator_due.add(table_id)
            asyncio.get_running_loop().call_later(delay, self._flush_spectators, table_id)

    def _flush_spectators(self, table_id: str) -> None:
        self._spectator_due.discard(table_id)
        due = self._spectator_text.pop(table_id, None)
        if due is None:
            return
        self._spectators_sent[table_id] = time.monotonic()
        text, spectators = due
        watching = self._watchers.get(table_id, set())
        for watcher in spectators:
            if watcher in watching:
                self._offer(watcher, text)

    async def end_session(self, session: str) -> None:
        """Close every socket bound to the sign-in session ``session`` (a token's hash),
        here and, through Redis, in the other processes."""
        self._close_session(session)
        self._publish(CHANNEL, session_news(self.origin, session))

    def _close_session(self, session: str) -> None:
        for listener in self.session_listeners:
            listener(session)
        for watchers in list(self._watchers.values()):
            for watcher in list(watchers):
                if watcher.session == session:
                    watcher.drop("signed out")

    # -- other processes -------------------------------------------------------------
    async def _listen_forever(self) -> None:
        """Listen on :data:`CHANNEL` and the watched tables' channels; reconnect with
        back-off; resynchronise on every (re)subscription."""
        assert self._redis is not None
        delay = self.redis_backoff[0]
        while not self.stopping:
            pubsub = self._redis.pubsub()
            self._pubsub, self._subscribed = pubsub, set()
            try:
                await pubsub.subscribe(CHANNEL)
                self._follow_watched()
                while not self.stopping:
                    message = await pubsub.get_message(timeout=1.0)
                    if message is None:
                        continue
                    if message.get("type") == "subscribe":
                        # A first subscription, or redis-py's silent reconnection:
                        # anything published meanwhile was lost, so read the database.
                        channel = _text(message.get("channel"))
                        if channel.startswith(TABLE_CHANNEL):
                            # Subscribed: the others announce the table from now on
                            # (and any commit they made before hearing so).
                            table_id = channel.removeprefix(TABLE_CHANNEL)
                            self._publish(CHANNEL, f"follow {self.origin} {table_id}")
                            await self._refresh(table_id)
                            continue
                        if not self.redis_ok:
                            log.info("Redis subscription up: resynchronising watched tables")
                        self.redis_ok = True
                        delay = self.redis_backoff[0]
                        # Whatever was said about following while this process was not
                        # listening: each process answers with the tables it follows.
                        self._publish(CHANNEL, f"who {self.origin}")
                        await self._resync()
                    elif message.get("type") == "message":
                        self.metrics.redis_messages.inc()
                        await self._on_message(message.get("data"))
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # RedisError, OSError, a dead socket...
                if self.redis_ok:
                    log.warning("Redis subscription lost (%s): polling the database", exc)
                    self.metrics.redis_reconnects.inc()
                self.redis_ok = False
            finally:
                self._pubsub = None
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
            if not self.stopping:
                await asyncio.sleep(delay)
                delay = min(delay * 2, self.redis_backoff[1])

    def _follow_watched(self) -> None:
        """Bring the subscription's table channels in line with the tables watched here,
        soon: one task per subscription at a time, which also takes the changes made
        while it runs (a task of a lost subscription ends by itself)."""
        pubsub = self._pubsub
        if pubsub is None:
            return
        task = self._following
        if task is not None and not task.done() and self._following_for is pubsub:
            return
        self._following_for = pubsub
        self._following = self._spawn(self._follow(pubsub))

    async def _follow(self, pubsub: PubSub) -> None:
        try:
            while self._pubsub is pubsub:
                wanted = {table_channel(t) for t in self._watchers}
                new, old = wanted - self._subscribed, self._subscribed - wanted
                if not new and not old:
                    return
                if new:  # each confirmation resynchronises its table (the listener)
                    await pubsub.subscribe(*sorted(new))
                    if self._pubsub is not pubsub:
                        return  # lost meanwhile: the next subscription starts afresh
                    self._subscribed |= new
                if old:
                    await pubsub.unsubscribe(*sorted(old))
                    if self._pubsub is not pubsub:
                        return
                    self._subscribed -= old
                    self._say_following("unfollow", old)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the listener notices too, and subscribes afresh
            log.warning("could not follow the watched tables on Redis (%s)", exc)

    async def _on_message(self, data: Any) -> None:
        try:
            kind, origin, *rest = _text(data).split(" ")
        except ValueError:
            return
        if origin == self.origin:
            return
        if kind == "who":
            # A process (re)subscribed and asks who follows what: news to it, a
            # reminder to the others.
            self.remind_followed()
        elif kind == "gone":
            self._unfollowed(origin, list(self._followers))
        elif not rest:
            return
        elif kind == "follow":
            self._heard_follow(origin, rest)
        elif kind == "following":  # a reminder: news only where it was not known
            self._heard_follow(origin, rest, reminder=True)
        elif kind == "unfollow":
            self._unfollowed(origin, rest)
        elif kind == "session":
            self._close_session(rest[0])
        elif kind == "unchat" and len(rest) > 1:
            numbers = rest[1].split(",")
            ids = [int(i) for i in numbers if i.isascii() and i.isdigit() and len(i) < 19]
            self.chat_removed(rest[0], ids)
        elif kind == "chat" and len(rest) > 1:
            await self._chat_from_elsewhere(rest[0], rest[1])
        elif kind == "table":
            await self._refresh(rest[0])

    def _heard_follow(self, origin: str, tables: Sequence[str], reminder: bool = False) -> None:
        """``origin`` follows ``tables`` now: announce their commits from now on, and
        once at once for each table this process has in hand (it may have committed
        a change, or stored a chat message, before hearing this, after the follower
        read the database). A ``reminder`` of a follow already known changes nothing."""
        for table_id in tables:
            followers = self._followers.setdefault(table_id, set())
            known = origin in followers
            followers.add(origin)
            self._follow_count += 1
            self._follow_marks[table_id] = self._follow_count
            table = self._live.get(table_id)
            if table is not None and not (reminder and known):
                channel = table_channel(table_id)
                self._publish(channel, self._table_news(table_id, table.seq))
                chat = self._last_chat.get(table_id)
                if chat is not None:  # the page keeps one copy of a message
                    self._publish(channel, self._chat_news(table_id, chat))

    def _unfollowed(self, origin: str, tables: Sequence[str]) -> None:
        for table_id in tables:
            followers = self._followers.get(table_id)
            if followers is not None:
                followers.discard(origin)
                if not followers:
                    del self._followers[table_id]
                    self._follow_marks.pop(table_id, None)

    async def _check_followers_forever(self) -> None:
        while True:
            await asyncio.sleep(self.follower_check)
            if self.redis_ok:
                self.remind_followed()
                try:
                    await self.check_followers()
                except Exception as exc:
                    log.warning("could not check the tables' followers on Redis (%s)", exc)

    def remind_followed(self) -> None:
        """Say again which tables this process follows (``following``): a ``follow``
        lost on its way (Redis failed to take it while the subscription stayed up)
        would otherwise leave this process's sockets at those tables unannounced
        for good; now for at most :attr:`follower_check` seconds."""
        self._say_following("following", self._subscribed)

    def _say_following(self, kind: str, channels: set[str]) -> None:
        """Tell the others on :data:`CHANNEL` ``kind`` (``unfollow``, ``following``)
        for the tables of ``channels``, a message per :func:`_chunks` run."""
        tables = sorted(c.removeprefix(TABLE_CHANNEL) for c in channels)
        for chunk in _chunks(tables):
            self._publish(CHANNEL, f"{kind} {self.origin} {' '.join(chunk)}")

    async def check_followers(self) -> int:
        """Forget the followers of tables whose channels nobody subscribes to any more
        (a process killed outright never said it stopped following); the number of
        tables forgotten. A follow heard while Redis was asked is kept."""
        assert self._redis is not None
        marks = {t: self._follow_marks.get(t, 0) for t in self._followers}
        forgotten = 0
        for chunk in _chunks(sorted(marks)):
            counts = await self._redis.pubsub_numsub(*(table_channel(t) for t in chunk))
            for channel, count in counts:
                table_id = _text(channel).removeprefix(TABLE_CHANNEL)
                if count == 0 and self._follow_marks.get(table_id, 0) == marks[table_id]:
                    if self._followers.pop(table_id, None) is not None:
                        forgotten += 1
                    self._follow_marks.pop(table_id, None)
        return forgotten

    async def _refresh(self, table_id: str) -> None:
        """Bring a table another process changed up to date (its watchers are told)."""
        if not self._watchers.get(table_id):
            self._drop(table_id)  # nobody here watches: reload when asked
            return
        with contextlib.suppress(ServiceError):
            async with self._lock(table_id):
                await self._current(table_id)

    async def _resync(self) -> None:
        """Compare every watched table with the database; push those that moved."""
        watched = list(self._watchers)
        states = self.storage.table_states(watched)
        for table_id in watched:
            cached = self._live.get(table_id)
            if cached is None or states.get(table_id) != cached.seq:
                await self._refresh(table_id)

    async def _poll_while_redis_down(self) -> None:
        while True:
            await asyncio.sleep(self.poll_interval)
            if not self.redis_ok and self._watchers:
                try:
                    await self._resync()
                except Exception:
                    log.warning("polling the database failed", exc_info=True)


def _chunks(items: Sequence[str], size: int = 100) -> list[Sequence[str]]:
    """``items`` in runs of at most ``size`` (one Redis message each)."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def _text(data: Any) -> str:
    """A Redis message's field as text."""
    return data.decode() if isinstance(data, bytes) else str(data)


def session_news(origin: str, session: str) -> str:
    """The announcement on :data:`CHANNEL` that sign-in session ``session`` (a token's
    hash) has ended: every process closes its sockets bound to it at once."""
    return f"session {origin} {session}"


def chat_removal_news(origin: str, table_id: str, message_ids: Sequence[int]) -> str:
    """The announcement on :data:`CHANNEL` that a moderator removed ``message_ids`` at
    the table: every process takes them from the pages it serves there."""
    return f"unchat {origin} {table_id} {','.join(str(i) for i in message_ids)}"


def sanction_text(what: str, sanction: SanctionRow) -> str:
    """What a sanction in force means for the player, with until when and why: "a
    moderator says you may not chat until 2026-12-14 18:00 UTC (spam)"."""
    until = aware(sanction.until)
    when = (
        "until a moderator lifts it"
        if until is None
        else f"until {until.astimezone(UTC).strftime('%Y-%m-%d %H:%M')} UTC"
    )
    return f"a moderator says {what} {when} ({sanction.reason})"


def _new_client_seed(entries: Entries, table: AnyTable) -> str | None:
    """The client seed, when ``entries`` completed the table's contributions."""
    if table.fair_dice is None or not any(e[1].get("action") == "seed" for e in entries):
        return None
    return table.fair_dice.client_seed


def _check_contribution(text: str) -> None:
    try:
        check_contribution(text)
    except InvalidFairDiceError as exc:
        raise ServiceError(422, "invalid_contribution", str(exc)) from None


def chouette_computer(engine: Engine, table: ChouetteTable, seat: int) -> dict[str, Any]:
    """What the computer in ``seat`` of a chouette answers now."""
    game = table.game
    assert game is not None
    legal = table.legal_for(seat)
    if "agree" in legal:  # the captain proposes a team double
        doubles = engine.doubles(game.position, cube_context(game, game.on_roll, 0, (0, 0)))
        return {"action": "agree" if doubles else "refuse"}
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


def _context_json(ctx: CubeContext) -> dict[str, Any]:
    return {
        "match_length": ctx.match_length,
        "score": list(ctx.score),
        "cube": ctx.cube,
        "owner": ctx.owner.value,
        "crawford": ctx.crawford,
        "jacoby": ctx.jacoby,
        "beavers": ctx.beavers,
    }


CHAT_LENGTH = 300
"""The longest chat message, in characters."""


def chat_json(row: Any, username: str | None) -> dict[str, Any]:
    """A chat message as the API and the sockets give it (the page shows ``text`` as
    text, never as markup); ``username``: the author's account (None: a guest)."""
    at = aware(row.created_at)
    return {
        "id": row.id,
        "player": row.player_id,
        "username": username,
        "name": row.name,
        "channel": row.channel,
        "text": row.text,
        "at": at.isoformat() if at else None,
    }


_NOBODY = PlayerRow(id=0, display_name="the server's clock")
"""Who checks the clocks in the background: seated nowhere."""


def _rebuild(stored: StoredTable) -> AnyTable:
    row = stored.row
    seats = [
        SeatInfo(s.name, player_id=s.player_id, level=Level(s.level) if s.level else None)
        for s in stored.seats
    ]
    settings = dict(row.settings)
    kind = settings.pop("kind", None)
    control = settings.pop("time_control", None)
    seek = settings.pop("seek", None)
    contributions = settings.pop("fair_dice", None) == "contributions"
    rules = TableRules.from_json(settings)
    server_seed = bytes.fromhex(row.server_seed)
    # Tables from before contributions had their one client seed from the start.
    client_seed = None if contributions else row.client_seed
    # The seats as they were at creation: the log's sit and leave actions redo the rest.
    initial = _initial_seats(seats, stored)
    table: AnyTable
    if kind == "chouette":
        table = ChouetteTable(row.id, rules, initial, server_seed, client_seed=client_seed)
    else:
        table = LiveTable(row.id, rules, initial, server_seed, client_seed=client_seed)
    table.invite_token = row.invite_token
    table.public = bool(row.public)
    table.rated = bool(row.rated)
    table.challenged = row.challenged_id
    table.rematch_of = row.rematch_of
    table.seek = seek
    if control is not None:
        table.set_time_control(TimeControl.from_json(control))
    table.seed_deadline = aware(row.seed_deadline)
    table.replay([(a.seat, a.command) for a in stored.actions])
    if not contributions:
        table.seats = seats  # seats taken before the log held them
    if row.status == "finished":
        table.finish()
    return table


def _initial_seats(seats: Sequence[SeatInfo], stored: StoredTable) -> list[SeatInfo]:
    """The seats before the log's ``sit`` actions: those seats open."""
    out = list(seats)
    for action in stored.actions:
        if action.command.get("action") in ("sit", "leave"):
            out[action.seat] = SeatInfo("open seat")
    return out
