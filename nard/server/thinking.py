"""The computer's thinking in worker processes, off the web server's event loop.

A decision is sent to a worker as a :class:`~nard.computer.DecisionSnapshot`
(the position, the dice to play, the cube and what may be done: a few
hundred bytes; never the table's dice source) with the level, the match
length and the score, and comes back as a command's JSON. Each worker keeps
one engine per level, sharing one network, loaded once. With the engine in
another process the server's own process spends its time serving, and a
second core thinks (about 1 ms a decision at expert, up to 0.2 s at world
class). The hints and the engine API ask the workers too, for what an engine
method returns (:data:`ENGINE_CALLS`, :meth:`ThinkerPool.call`).

Each worker is a process with pipes of its own: the server writes a request
on its standard input and the event loop is woken when the answer is on its
standard output (``add_reader``), with no thread between them (a process
pool's feeder and manager threads cost more, fighting the event loop for
Python's lock, than the decisions). A worker thinks for every table: the
decisions of the deep levels (world class, the roller) are taken in a thread of
their own, beside the quick ones, so that a roller's seconds hold up no table at
expert.
A worker dies with the server that started it; a worker that dies is started
again and its decisions sent again.

>>> from nard.match import FixedDice, Game
>>> game = Game(dice=FixedDice([(3, 1)]))
>>> game.opening_roll()
>>> decide("expert", DecisionSnapshot.of(game), 0, (0, 0))
{'action': 'play', 'play': '8/5 6/5'}
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import logging
import os
import pickle
import queue
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nard.computer import DecisionSnapshot, computer_command
from nard.engine import Engine, Level

__all__ = ["ThinkerPool", "decide", "engine_for"]

log = logging.getLogger("nard.server")

_ENGINES: dict[Level, Engine] = {}
"""This process's engines, one per level, sharing the first one's network."""
_ENGINES_LOCK = threading.Lock()


def engine_for(level: Level) -> Engine:
    """This process's engine at ``level`` (the network loaded on first use, once, and
    shared by the levels), for a worker and for the server's own thinking and hints."""
    with _ENGINES_LOCK:
        engine = _ENGINES.get(level)
        if engine is None:
            shared = next(iter(_ENGINES.values()), None)
            engine = _ENGINES[level] = Engine(level, evaluator=shared.evaluator if shared else None)
        return engine


Request = tuple[int, str, str, str, tuple[Any, ...]]
"""What a worker is asked: (number, lane, level, task, arguments). The task is
``"decide"`` (the arguments those of :func:`decide` after the level) or one of
:data:`ENGINE_CALLS`, called on the level's engine; the lane is the level whose
thread takes it (:data:`DEEP_LEVELS`), or another level for the worker's own."""

ENGINE_CALLS = frozenset({"rank_plays", "cube_analysis", "evaluate"})
"""The :class:`~nard.engine.Engine` methods a worker calls for the server (its hints
and the engine API), answering with what they return."""


def _perform(level: str, task: str, arguments: tuple[Any, ...]) -> Any:
    """What a worker answers to a request."""
    if task == "decide":
        return decide(level, *arguments)
    if task not in ENGINE_CALLS:
        raise ValueError(f"no engine task {task!r}")
    return getattr(engine_for(Level(level)), task)(*arguments)


def decide(
    level: str, snapshot: DecisionSnapshot, match_length: int, score: tuple[int, int]
) -> dict[str, Any]:
    """The command (its JSON) the computer at ``level`` gives for ``snapshot``."""
    return computer_command(engine_for(Level(level)), snapshot, match_length, score).to_json()


def _bind_to_parent(parent: int) -> None:
    """Make a worker die with the server that started it: a server killed outright
    (SIGKILL, a crash) would otherwise leave its workers behind for good, each
    holding an engine's memory.

    On Linux the kernel sends the worker SIGKILL when its parent dies
    (``prctl(PR_SET_PDEATHSIG)``); a thread also checks the parent once a second,
    for the moment before that took effect and for other systems.
    """
    import signal
    import time

    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL("libc.so.6", use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except OSError:
            pass

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(0)
            time.sleep(1.0)

    if os.getppid() != parent:
        os._exit(0)
    threading.Thread(target=watch, name="nard-parent-watch", daemon=True).start()


YOUNG_COLLECTION = 20_000
"""New objects (less those freed) after which a server process collects its youngest
generation (see :func:`settle_memory`)."""


def settle_memory() -> None:
    """Put what start-up loaded out of the garbage collector's sight.

    The modules, the network and the compiled kernels are hundreds of thousands
    of objects that live as long as the process; a full collection walked them
    all, a pause of about 100 ms every few hundred actions under load (the p95
    of bench/server_load.py). Frozen, they are never walked again.

    The youngest generation is then collected after 20,000 new objects rather
    than CPython's 700: a request makes thousands of short-lived ones, which at
    700 were walked (and the survivors promoted) several times a request; most
    now die before any collection sees them. Under load (bench/server_load.py,
    20 guests, alternating runs) that gave 1.11x and 1.19x the actions a second
    and a p95 5-10 ms lower. Memory waits longer only for garbage in cycles.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION, 10, 10)


def warm_up() -> None:
    """Load the network and compile the engine's kernels (or load them from numba's
    cache) in this process: a worker before its first request, a server without
    workers at start-up."""
    from nard.match import FixedDice, Game

    game = Game(dice=FixedDice([(3, 1)]))
    game.opening_roll()
    decide(Level.EXPERT.value, DecisionSnapshot.of(game), 0, (0, 0))


READY = 0
"""The number of the message a worker sends once warm (requests are numbered from 1)."""


DEEP_LEVELS = frozenset({Level.WORLD_CLASS.value, Level.ROLLER.value})
"""The levels whose decisions take long (world class up to about 0.5 s, the roller up
to its 4 s): a worker takes each one's in a thread of its own, beside the others."""

SWITCH_INTERVAL = 0.001
"""How long (s) a worker's thread holds Python's lock while another wants it: a
quick decision waits about this long for a deep lane to let go (CPython's 5 ms
default would cost an expert decision of a millisecond several times that)."""


def _serve(parent: int) -> None:
    """A worker's life (``python -m nard.server.thinking``): answer each request read
    on standard input on standard output, until the input closes. A request and an
    answer are each a pickle after its length (4 bytes, big-endian).

    Requests at the quick levels are answered in turn as they are read; those at
    each deep level (:data:`DEEP_LEVELS`) go to a thread of the level's own, which
    answers them in turn, the computer's decisions first (:func:`_lane`). So a
    table at the roller does not hold up the computer at the other tables (a worker
    thinks for all of them): each level's decisions keep the order of their
    requests, and the lanes take Python's lock in turns of :data:`SWITCH_INTERVAL`
    (the networks' compiled kernels run without it)."""
    _bind_to_parent(parent)
    warm_up()
    settle_memory()
    sys.setswitchinterval(SWITCH_INTERVAL)
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    writing = threading.Lock()

    def send(message: tuple[Any, ...]) -> None:
        with writing:
            try:
                sink.write(_frame(message))
                sink.flush()
            except OSError:  # the server closed the pipe: there is no one to answer
                os._exit(0)

    def answer(request: Request) -> None:
        number, _, level, task, arguments = request
        try:
            pickled = pickle.dumps(_perform(level, task, arguments))
        except Exception as exc:  # sent back, raised in the server
            send((number, False, f"{type(exc).__name__}: {exc}"))
        else:
            send((number, True, pickled))

    lanes = {level: queue.PriorityQueue[tuple[int, int, Request]]() for level in DEEP_LEVELS}
    for level, requests in lanes.items():
        threading.Thread(
            target=_lane, args=(requests, answer), name=f"nard-{level}", daemon=True
        ).start()
    send((READY, True, None))  # warm: the server may count on this worker
    while True:
        head = source.read(4)
        if len(head) < 4:
            return  # the server closed the pipe: what is left unanswered goes with it
        request: Request = pickle.loads(source.read(int.from_bytes(head, "big")))
        lane = lanes.get(request[1])
        if lane is not None:
            # The computer's decisions first, then the rest (hints, the engine API),
            # each kind in the order asked.
            lane.put((0 if request[3] == "decide" else 1, request[0], request))
        else:
            answer(request)


def _lane(
    requests: queue.PriorityQueue[tuple[int, int, Request]], answer: Callable[[Request], None]
) -> None:
    """A worker's thread for one deep level: its requests answered in turn, the
    computer's decisions ahead of what else waits (a table at the roller is not kept
    waiting behind programs asking the engine API for the roller's rankings)."""
    while True:
        answer(requests.get()[2])


def _frame(message: tuple[Any, ...]) -> bytes:
    """A message on the pipes: its pickle after its length (4 bytes, big-endian)."""
    data = pickle.dumps(message)
    return len(data).to_bytes(4, "big") + data


class ThinkingFailedError(RuntimeError):
    """The engine raised while deciding (the worker goes on)."""


@dataclass
class _Worker:
    process: subprocess.Popen[bytes]
    loop: asyncio.AbstractEventLoop
    waiting: dict[int, tuple[asyncio.Future[Any], Request]] = field(default_factory=dict)
    received: bytearray = field(default_factory=bytearray)
    warm: bool = False
    """Whether the worker said it has loaded the engine and compiled its kernels."""

    def send(self, *requests: Request) -> None:
        """The requests, in one write: the worker answers those of a lane (the quick
        levels, the deep ones) in this order."""
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(b"".join(_frame(r) for r in requests))
        stdin.flush()


class ThinkerPool:
    """``processes`` worker processes that think for the computer seats.

    Each is ``python -m nard.server.thinking``, a process of its own started
    with the server's interpreter (not a fork, and importing nothing of the
    program that started the server), talking on its standard input and output.
    """

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._workers: list[_Worker] = []
        self._numbers = itertools.count(1)
        self._closed = False

    def _start(self) -> _Worker:
        process = subprocess.Popen(
            [sys.executable, "-m", "nard.server.thinking", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        )
        assert process.stdout is not None
        os.set_blocking(process.stdout.fileno(), False)
        loop = asyncio.get_running_loop()
        worker = _Worker(process, loop)
        loop.add_reader(process.stdout.fileno(), self._answered, worker)
        return worker

    async def warm_up(self) -> None:
        """Start the workers (each loads the engine before its first request, so the
        first player is not kept waiting for that)."""
        while len(self._workers) < self.processes and not self._closed:
            self._workers.append(self._start())

    @property
    def warm(self) -> bool:
        """Whether every worker is started and warm (a decision is then answered in
        milliseconds, not after the engine's kernels are compiled)."""
        return len(self._workers) == self.processes and all(w.warm for w in self._workers)

    async def decide(
        self, level: Level, snapshot: DecisionSnapshot, match_length: int, score: tuple[int, int]
    ) -> dict[str, Any]:
        """The command's JSON, from the least busy worker."""
        await self.warm_up()
        return await self.ask([(level, snapshot, match_length, score)])[0]

    def ask(
        self, questions: Sequence[tuple[Level, DecisionSnapshot, int, tuple[int, int]]]
    ) -> list[asyncio.Future[dict[str, Any]]]:
        """Each decision's command (its JSON) to come, from the least busy worker,
        which takes them in one write and answers those of one level in this order
        (a deep level's beside the quick ones: :func:`_serve`), each decided from its
        own snapshot alone. The workers must be started (:meth:`warm_up`)."""
        if not self._workers:
            raise ThinkingFailedError("the engine workers are not started")
        worker = min(self._workers, key=lambda w: len(w.waiting))
        loop = asyncio.get_running_loop()
        requests: list[Request] = []
        futures: list[asyncio.Future[dict[str, Any]]] = []
        for level, snapshot, match_length, score in questions:
            request: Request = (
                next(self._numbers),
                level.value,
                level.value,
                "decide",
                (snapshot, match_length, score),
            )
            future: asyncio.Future[dict[str, Any]] = loop.create_future()
            worker.waiting[request[0]] = (future, request)
            requests.append(request)
            futures.append(future)
        self._send(worker, requests)
        return futures

    async def call(
        self, level: Level, task: str, *arguments: Any, lane: Level | None = None
    ) -> Any:
        """What the engine at ``level`` returns for ``task`` (one of
        :data:`ENGINE_CALLS`) with ``arguments``, from the least busy worker, in the
        thread of ``lane`` (by default the level's own: :data:`DEEP_LEVELS`)."""
        if task not in ENGINE_CALLS:
            raise ValueError(f"no engine task {task!r}")
        await self.warm_up()
        if not self._workers:
            raise ThinkingFailedError("the engine workers are not started")
        worker = min(self._workers, key=lambda w: len(w.waiting))
        request: Request = (
            next(self._numbers),
            (lane or level).value,
            level.value,
            task,
            arguments,
        )
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        worker.waiting[request[0]] = (future, request)
        self._send(worker, [request])
        return await future

    def _send(self, worker: _Worker, requests: Sequence[Request]) -> None:
        try:
            worker.send(*requests)
        except OSError:
            self._restart(worker)

    def _answered(self, worker: _Worker) -> None:
        stdout = worker.process.stdout
        assert stdout is not None
        try:
            chunk = os.read(stdout.fileno(), 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:  # the worker died
            self._restart(worker)
            return
        worker.received += chunk
        while len(worker.received) >= 4:
            size = int.from_bytes(worker.received[:4], "big")
            if len(worker.received) < 4 + size:
                break
            number, ok, value = pickle.loads(bytes(worker.received[4 : 4 + size]))
            del worker.received[: 4 + size]
            if number == READY:
                worker.warm = True
                continue
            found = worker.waiting.pop(number, None)
            if found is None:
                continue
            if ok:  # the answer, pickled apart: one that cannot be read fails alone
                try:
                    value = pickle.loads(value)
                except Exception as exc:
                    ok, value = False, f"an answer that cannot be read: {exc!r}"
            future = found[0]
            if future.get_loop() is worker.loop:
                _settle(future, ok, value)
            else:
                future.get_loop().call_soon_threadsafe(_settle, future, ok, value)

    def _restart(self, worker: _Worker) -> None:
        """A worker died: start another and send it what the dead one had."""
        if worker not in self._workers:
            return
        self._forget(worker)
        if self._closed:
            for future, _ in worker.waiting.values():
                if not future.done():
                    future.set_exception(ThinkingFailedError("the server is stopping"))
            return
        log.warning("an engine worker died (exit %s): starting a new one", worker.process.poll())
        fresh = self._start()
        self._workers.append(fresh)
        for number, (future, request) in worker.waiting.items():
            fresh.waiting[number] = (future, request)
        fresh.send(*(request for _, request in worker.waiting.values()))

    def _forget(self, worker: _Worker) -> None:
        self._workers.remove(worker)
        with _quietly():
            assert worker.process.stdout is not None
            worker.loop.remove_reader(worker.process.stdout.fileno())
        with _quietly():
            assert worker.process.stdin is not None
            worker.process.stdin.close()

    def close(self) -> None:
        self._closed = True
        for worker in list(self._workers):
            self._forget(worker)
            try:
                worker.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
            with _quietly():
                assert worker.process.stdout is not None
                worker.process.stdout.close()
        self._workers.clear()


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if future.done():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(ThinkingFailedError(value))


def _quietly() -> contextlib.suppress:
    """Ignore what a closing pipe or loop raises."""
    return contextlib.suppress(OSError, ValueError, RuntimeError)


if __name__ == "__main__":
    _serve(int(sys.argv[1]))
