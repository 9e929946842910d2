"""The computer's thinking in worker processes, off the web server's event loop.

A decision is sent to a worker as a :class:`~nard.computer.DecisionSnapshot`
(the position, the dice to play, the cube and what may be done: a few
hundred bytes; never the table's dice source) with the level, the match
length and the score, and comes back as a command's JSON. Each worker keeps
one engine per level, sharing one network, loaded once. With the engine in
another process the server's own process spends its time serving, and a
second core thinks (2 ms a decision at expert, up to 0.2 s at world class).

If a worker dies, the pool is made anew and the decision sent again once.

>>> from nard.match import FixedDice, Game
>>> game = Game(dice=FixedDice([(3, 1)]))
>>> game.opening_roll()
>>> decide("expert", DecisionSnapshot.of(game), 0, (0, 0))
{'action': 'play', 'play': '8/5 6/5'}
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from nard.computer import DecisionSnapshot, computer_command
from nard.engine import Engine, Level

__all__ = ["ThinkerPool", "decide"]

log = logging.getLogger("nard.server")

_ENGINES: dict[Level, Engine] = {}
"""A worker's engines, one per level, sharing the first one's network."""


def decide(
    level: str, snapshot: DecisionSnapshot, match_length: int, score: tuple[int, int]
) -> dict[str, Any]:
    """The command (its JSON) the computer at ``level`` gives for ``snapshot``."""
    which = Level(level)
    engine = _ENGINES.get(which)
    if engine is None:
        shared = next(iter(_ENGINES.values()), None)
        engine = _ENGINES[which] = Engine(which, evaluator=shared.evaluator if shared else None)
    return computer_command(engine, snapshot, match_length, score).to_json()


def _bind_to_parent(parent: int) -> None:
    """Make a worker die with the server that started it: a server killed outright
    (SIGKILL, a crash) would otherwise leave its workers behind for good, each
    holding an engine's memory, since nothing closes the pipe they wait on.

    On Linux the kernel sends the worker SIGKILL when its parent dies
    (``prctl(PR_SET_PDEATHSIG)``); a thread also checks the parent once a second,
    for the moment before that took effect and for other systems.
    """
    import os
    import signal
    import sys
    import threading
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


def _warm_up() -> bool:
    """Load the network and compile the engine's kernels in a fresh worker."""
    from nard.match import FixedDice, Game

    game = Game(dice=FixedDice([(3, 1)]))
    game.opening_roll()
    decide(Level.EXPERT.value, DecisionSnapshot.of(game), 0, (0, 0))
    return True


class ThinkerPool:
    """``processes`` worker processes that think for the computer seats."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            self._pool = ProcessPoolExecutor(
                self.processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_bind_to_parent,
                initargs=(os.getpid(),),
            )
        return self._pool

    async def warm_up(self) -> None:
        """Start the workers and let each load the engine, before the first player
        waits for it (the first decision of a fresh process takes seconds)."""
        loop = asyncio.get_running_loop()
        pool = self._executor()
        try:
            await asyncio.gather(
                *(loop.run_in_executor(pool, _warm_up) for _ in range(self.processes))
            )
        except Exception:
            log.warning("the engine's workers could not warm up", exc_info=True)

    async def decide(
        self, level: Level, snapshot: DecisionSnapshot, match_length: int, score: tuple[int, int]
    ) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        for attempt in (1, 2):
            pool = self._executor()
            try:
                return await loop.run_in_executor(
                    pool, decide, level.value, snapshot, match_length, score
                )
            except BrokenProcessPool:
                log.warning("an engine worker died (attempt %d): starting new ones", attempt)
                self._pool = None
                pool.shutdown(wait=False, cancel_futures=True)
        raise RuntimeError("the engine's workers keep dying")

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
