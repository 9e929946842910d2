"""Analysis jobs: queued by the web processes, made by worker processes (``nard worker``).

The web processes never analyse: ``POST /api/tables/{id}/analyses`` stores an
``analyses`` row (``queued``) and puts a job on a durable queue built on Huey
(a maintained task queue): on Redis when ``NARD_REDIS_URL`` is set, else in an
SQLite file when ``NARD_QUEUE_PATH`` names one, else in the database itself when it
is PostgreSQL (Huey's SQL storage, tables in the schema ``nard_queue``; workers on
other machines take jobs with ``SELECT ... FOR UPDATE SKIP LOCKED``), else in an
SQLite file beside the database (``queue.db`` in the data directory). A worker
takes each job, replays the match record it carries, judges it with
:func:`nard.analysis.analyse` (writing its progress to the row as it goes) and
stores the result, or the reason it failed. A job that dies with its worker
(killed mid-analysis) is picked up again by a worker started later: Huey keeps
it until a worker acknowledges it.

``nard serve`` runs one worker process itself while ``NARD_ANALYSIS_WORKERS``
is 1 (the default), so that ``make run`` needs nothing else; set it to 0 and
run ``nard worker`` processes where the machines are.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from huey import Huey, RedisHuey, SqliteHuey

from nard.core.position import Position

__all__ = [
    "AnalysisQueue",
    "annotate",
    "queue_for",
    "run_worker",
    "start_worker_process",
    "worker_command",
]

PROGRESS_EVERY = 1.0
"""Seconds between two progress writes (heartbeats) of one job."""

STALE_AFTER = 60.0
"""Seconds without a heartbeat after which a running analysis is taken for lost."""


@dataclass(frozen=True)
class QueueSettings:
    """Where the jobs wait, and the database the results go to."""

    database_url: str
    redis_url: str | None
    queue_path: Path | None
    """The SQLite file of the queue; None: in the (PostgreSQL) database."""

    @property
    def place(self) -> str:
        """Where the jobs wait, in words (for the logs; no password)."""
        if self.redis_url:
            return "Redis"
        if self.queue_path is None:
            return "the database (schema nard_queue)"
        return str(self.queue_path)


def queue_for(settings: Any) -> QueueSettings:
    """The queue of a server's :class:`~nard.server.settings.Settings` (the module
    doc says where)."""
    path: Path | None
    if settings.queue_path:
        path = Path(settings.queue_path)
    elif _is_postgres(settings.database_url):
        path = None
    else:
        path = settings.data_dir / "queue.db"
    return QueueSettings(settings.database_url, settings.redis_url, path)


QUEUE_SCHEMA = "nard_queue"
"""The PostgreSQL schema of the queue's tables (Huey's ``kv``, ``schedule``, ``task``
and ``counter``), apart from nard's own."""


def _is_postgres(database_url: str) -> bool:
    from sqlalchemy.engine import make_url

    return make_url(database_url).get_backend_name() == "postgresql"


def _huey(where: QueueSettings) -> Huey:
    if where.redis_url:
        return RedisHuey("nard-analysis", url=where.redis_url, results=False)
    if where.queue_path is None:
        return _postgres_huey(where.database_url)
    where.queue_path.parent.mkdir(parents=True, exist_ok=True)
    return SqliteHuey("nard-analysis", filename=str(where.queue_path), results=False)


def _postgres_huey(database_url: str) -> Huey:
    """Huey's SQL storage on the PostgreSQL database of ``database_url`` (peewee on
    psycopg 3), its tables in :data:`QUEUE_SCHEMA`, made once under an advisory lock
    so that processes starting together do not race to create them."""
    from huey.contrib.sql_huey import SqlHuey
    from peewee import InterfaceError, OperationalError, PostgresqlDatabase
    from playhouse.shortcuts import ReconnectMixin
    from sqlalchemy.engine import make_url

    class Database(ReconnectMixin, PostgresqlDatabase):  # type: ignore[misc]
        """A connection the server dropped (restarted, or an idle one killed) is made
        again on the next statement outside a transaction, as psycopg 3 words it."""

        reconnect_errors = (
            (OperationalError, "terminating connection"),
            (OperationalError, "the connection is closed"),
            (OperationalError, "server closed the connection"),
            (OperationalError, "connection is lost"),
            (InterfaceError, "the connection is closed"),
            (InterfaceError, "connection already closed"),
        )

    url = make_url(database_url)
    extra: dict[str, Any] = {k: v for k, v in url.query.items() if isinstance(v, str)}
    database: Any = Database(
        url.database,
        user=url.username,
        password=url.password,
        host=url.host,
        port=url.port,
        options=f"-c search_path={QUEUE_SCHEMA}",
        **extra,
    )
    huey = SqlHuey("nard-analysis", database=database, results=False, create_tables=False)
    storage = huey.storage
    database.execute_sql("SELECT pg_advisory_lock(%s)", (_QUEUE_LOCK,))
    try:
        database.execute_sql(f"CREATE SCHEMA IF NOT EXISTS {QUEUE_SCHEMA}")
        database.create_tables([storage.KV, storage.Schedule, storage.Task, storage.Counter])
    finally:
        database.execute_sql("SELECT pg_advisory_unlock(%s)", (_QUEUE_LOCK,))
    return huey


_QUEUE_LOCK = 0x6E617264  # "nard": the advisory lock the queue's tables are made under


def annotate(result: dict[str, Any]) -> dict[str, Any]:
    """Each decision of an analysis with what the page draws: ``board`` (player 0's
    side, as the replay's steps give boards) and ``best_moves`` (the better play's
    single moves in the mover's numbering: 25 the bar, 0 off), for checker plays."""
    for d in result["decisions"]:
        position = Position.from_position_id(d["position_id"])
        # the Position ID is the decider's view, the doubler's for a take
        viewer = 1 - d["seat"] if d["kind"] == "take" else d["seat"]
        d["board"] = list(position if viewer == 0 else position.flip())
        d["best_moves"] = None
        if d["kind"] == "checker" and d["best"] and d["dice"]:
            play = position.parse_play(d["best"], d["dice"])
            d["best_moves"] = [[m.from_point, m.to_point] for m in play.moves]
    return result


class AnalysisQueue:
    """The queue of analysis jobs and the job itself (the producer's and the worker's
    side of one Huey instance)."""

    def __init__(self, where: QueueSettings) -> None:
        self.where = where
        self.huey = _huey(where)
        self._analyse = self.huey.task(name="analyse")(self._job)

    def reclaim(self, storage: Any, stale_after: float = STALE_AFTER) -> int:
        """Queue again the analyses whose worker died (see the module doc)."""
        before = datetime.now(UTC) - timedelta(seconds=stale_after)
        rows = storage.reclaim_stale_analyses(before)
        for row in rows:
            if row.record:
                self.enqueue(row.id, row.record, row.plies, row.kind)
        return len(rows)

    def enqueue(self, analysis_id: int, payload: str, plies: int, kind: str = "match") -> None:
        """Queue the job ``analysis_id``: the analysis of the record ``payload`` (nard's
        JSON), or with ``kind`` ``rollout`` the rollout ``payload`` asks for."""
        self._analyse(analysis_id, payload, plies, kind)

    def pending(self) -> int:
        return int(self.huey.pending_count())

    def run_one(self) -> bool:
        """Take one job and make it here (tests; workers use :func:`run_worker`)."""
        task = self.huey.dequeue()
        if task is None:
            return False
        self.huey.execute(task)
        return True

    def _job(self, analysis_id: int, payload: str, plies: int, kind: str = "match") -> None:
        run_job(self.where.database_url, analysis_id, payload, plies, kind)


_ANALYSTS: dict[int, Any] = {}


def run_job(
    database_url: str, analysis_id: int, payload: str, plies: int, kind: str = "match"
) -> None:
    """Make one analysis (or rollout) and store it, or why it failed, in its row."""
    from nard.analysis import Analyst, analyse
    from nard.notation.json_record import read_json
    from nard.server.storage import Storage

    storage = Storage(database_url)
    try:
        if storage.analysis(analysis_id) is None:
            return  # the table was deleted since
        now = datetime.now(UTC)
        storage.update_analysis(analysis_id, status="running", started_at=now, heartbeat=now)
        last = [0.0]

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_EVERY or done == total:
                last[0] = now
                storage.update_analysis(
                    analysis_id, done=done, total=total, heartbeat=datetime.now(UTC)
                )

        try:
            if kind == "rollout":
                result = run_rollout(json.loads(payload), progress)
            else:
                record, _ = read_json(payload)
                analyst = _ANALYSTS.get(plies)
                if analyst is None:
                    analyst = _ANALYSTS[plies] = Analyst(plies)
                made = analyse(record, plies, analyst=analyst, progress=progress)
                result = annotate(made.to_json())
            storage.update_analysis(
                analysis_id, status="done", result=result, finished_at=datetime.now(UTC)
            )
        except Exception as exc:  # a job never takes its worker down
            storage.update_analysis(
                analysis_id,
                status="failed",
                error=f"{type(exc).__name__}: {exc}",
                finished_at=datetime.now(UTC),
            )
    finally:
        storage.close()


def rollout_request(
    position: Position,
    dice: tuple[int, int] | None,
    context: Any,
    trials: int,
    truncate: int = 11,
    cubeful: bool = False,
    seed: int = 1,
) -> str:
    """The payload of a rollout job: the position (side on roll), the roll (None: the
    cube), the cube and score (a :class:`~nard.engine.cube.CubeContext`) and the
    rollout's settings (:class:`~nard.analysis.rollout.RolloutSettings`)."""
    return json.dumps(
        {
            "position_id": position.position_id(),
            "dice": list(dice) if dice else None,
            "cube": context.cube,
            "owner": context.owner.value,
            "match_length": context.match_length,
            "score": list(context.score),
            "crawford": context.crawford,
            "jacoby": context.jacoby,
            "beavers": context.beavers,
            "trials": trials,
            "truncate": truncate,
            "cubeful": cubeful,
            "seed": seed,
        }
    )


def run_rollout(request: dict[str, Any], progress: Callable[[int, int], None]) -> dict[str, Any]:
    """The rollout a :func:`rollout_request` asks for, in this process."""
    from nard.analysis.rollout import RolloutSettings, rollout_cube, rollout_plays
    from nard.engine.cube import CubeContext, CubeOwner

    position = Position.from_position_id(request["position_id"])
    context = CubeContext(
        cube=int(request["cube"]),
        owner=CubeOwner(request["owner"]),
        match_length=int(request["match_length"]),
        score=(int(request["score"][0]), int(request["score"][1])),
        crawford=bool(request["crawford"]),
        jacoby=bool(request["jacoby"]),
        beavers=bool(request["beavers"]),
    )
    settings = RolloutSettings(
        trials=int(request["trials"]),
        truncate=int(request["truncate"]),
        cubeful=bool(request.get("cubeful", False)),  # rows queued before the option: cubeless
        seed=int(request.get("seed", 1)),
    )
    dice = request.get("dice")
    if dice:
        made = rollout_plays(position, (dice[0], dice[1]), context, settings, progress=progress)
        return made.to_json()
    return rollout_cube(position, context, settings, progress=progress).to_json()


def run_worker(
    where: QueueSettings,
    workers: int = 1,
    parent: int | None = None,
    stale_after: float = STALE_AFTER,
) -> None:  # pragma: no cover - runs as its own process (tests start it so)
    """Take jobs until interrupted (SIGTERM, SIGINT) or, with ``parent``, until that
    process is gone (the worker ``nard serve`` started for itself).

    Beside the consumer a small process (spawned, so that no thread of this one is
    ever forked with the consumer's workers) queues again the analyses lost with a
    dead worker and watches ``parent``."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    queue = AnalysisQueue(where)
    consumer = queue.huey.create_consumer(
        workers=workers, worker_type="process", check_worker_health=True
    )
    reaper = multiprocessing.get_context("spawn").Process(
        target=_reap_forever,
        args=(where, stale_after, os.getpid(), parent),
        daemon=True,
        name="nard-analysis-reaper",
    )
    reaper.start()
    consumer.run()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - someone else's process
        return True
    return True


def _reap_forever(
    where: QueueSettings, stale_after: float, consumer: int, parent: int | None
) -> None:  # pragma: no cover - runs in its own process
    from nard.server.storage import Storage

    queue = AnalysisQueue(where)
    storage = Storage(where.database_url)
    every = min(15.0, stale_after)
    last = -every
    while _alive(consumer):
        if parent is not None and not _alive(parent):
            os.kill(consumer, signal.SIGTERM)
            return
        if time.monotonic() - last >= every:
            last = time.monotonic()
            try:
                queue.reclaim(storage, stale_after)
            except Exception as exc:  # the database may be down a while
                print(f"nard worker: cannot reclaim lost analyses: {exc}", file=sys.stderr)
        time.sleep(0.5)


def worker_command(where: QueueSettings, *extra: str) -> list[str]:
    """The command line of a ``nard worker`` on ``where``'s queue and database."""
    command = [
        sys.executable,
        "-m",
        "nard.cli.main",
        "worker",
        "--database-url",
        where.database_url,
    ]
    if where.queue_path is not None:
        command += ["--queue-path", str(where.queue_path)]
    if where.redis_url:
        command += ["--redis-url", where.redis_url]
    return [*command, *extra]


def start_worker_process(
    settings: Any, log: Callable[[str], None] | None = None
) -> subprocess.Popen[bytes]:
    """``nard worker`` as a child of this process, with this process's settings."""
    command = worker_command(queue_for(settings), "--parent", str(os.getpid()))
    if log:
        log(f"nard: analysis worker started ({' '.join(command[3:5])})")
    return subprocess.Popen(command)


def result_json(row: Any) -> dict[str, Any]:
    """An ``analyses`` row as the API gives it."""
    return {
        "id": row.id,
        "plies": row.plies,
        "status": row.status,
        "done": row.done,
        "total": row.total,
        "error": row.error,
        "created_at": row.created_at.isoformat() if row.created_at else None,
        "finished_at": row.finished_at.isoformat() if row.finished_at else None,
        "result": row.result,
    }
